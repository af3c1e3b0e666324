/*
 * Authentication of the mpirun <-> raild connections: HMAC-SHA-256 (FIPS
 * 180-4, RFC 2104) over fresh nonces, keyed with a per-job random secret that
 * reaches raild on its stdin.  Written from the specifications; no crypto
 * library is required.
 */
#include "runtime/launch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

typedef struct sha256 {
    uint32_t h[8];
    uint8_t block[64];
    size_t fill;
    uint64_t total;
} sha256_t;

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror32(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_compress(sha256_t *s, const uint8_t *p)
{
    uint32_t w[64], v[8];

    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, s->h, sizeof(v));
    for (int i = 0; i < 64; i++) {
        uint32_t e = v[4], a = v[0];
        uint32_t t1 = v[7] + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) +
                      ((e & v[5]) ^ (~e & v[6])) + sha256_k[i] + w[i];
        uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) +
                      ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof(uint32_t));
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        s->h[i] += v[i];
}

static void sha256_init(sha256_t *s)
{
    static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(s->h, h0, sizeof(h0));
    s->fill = 0;
    s->total = 0;
}

static void sha256_update(sha256_t *s, const void *data, size_t n)
{
    const uint8_t *p = data;
    s->total += n;
    while (n) {
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill == 64) {
            sha256_compress(s, s->block);
            s->fill = 0;
        }
    }
}

static void sha256_final(sha256_t *s, uint8_t out[32])
{
    uint64_t bits = s->total * 8;
    uint8_t pad = 0x80, zero = 0, len[8];

    sha256_update(s, &pad, 1);
    while (s->fill != 56)
        sha256_update(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void launch_hmac(const uint8_t key[32], const void *a, size_t na, const void *b, size_t nb,
                 const void *c, size_t nc, uint8_t mac[32])
{
    uint8_t pad[64], inner[32];
    sha256_t s;

    /* The key (32 bytes) is shorter than the block: zero-padded. */
    memset(pad, 0x36, sizeof(pad));
    for (int i = 0; i < 32; i++)
        pad[i] ^= key[i];
    sha256_init(&s);
    sha256_update(&s, pad, 64);
    sha256_update(&s, a, na);
    sha256_update(&s, b, nb);
    sha256_update(&s, c, nc);
    sha256_final(&s, inner);
    memset(pad, 0x5c, sizeof(pad));
    for (int i = 0; i < 32; i++)
        pad[i] ^= key[i];
    sha256_init(&s);
    sha256_update(&s, pad, 64);
    sha256_update(&s, inner, 32);
    sha256_final(&s, mac);
}

int launch_random(void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t got = getrandom(p, n, 0);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

void launch_hex(const uint8_t *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

static int launch_hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int launch_unhex(const char *s, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int hi = launch_hexval(s[2 * i]), lo = hi < 0 ? -1 : launch_hexval(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        p[i] = (uint8_t)(hi << 4 | lo);
    }
    return s[2 * n] == '\0' || s[2 * n] == ' ' || s[2 * n] == '\n' ? 0 : -1;
}
