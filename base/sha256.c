/* SHA-256 from FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 6.2) and HMAC from RFC 2104. */
#include "base/sha256.h"

#include <string.h>

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

static inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One 512-bit block (6.2.2). */
static void sha256_block(uint32_t h[8], const uint8_t *blk)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = load_be32(blk + 4 * t);
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha256_k[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

void rail_sha256_init(rail_sha256_t *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof(h0));
    c->len = 0;
    c->n = 0;
}

void rail_sha256_update(rail_sha256_t *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->len += len;
    if (c->n) {
        size_t k = RAIL_SHA256_BLOCK - c->n;
        if (k > len)
            k = len;
        memcpy(c->buf + c->n, p, k);
        c->n += k;
        p += k;
        len -= k;
        if (c->n < RAIL_SHA256_BLOCK)
            return;
        sha256_block(c->h, c->buf);
        c->n = 0;
    }
    for (; len >= RAIL_SHA256_BLOCK; p += RAIL_SHA256_BLOCK, len -= RAIL_SHA256_BLOCK)
        sha256_block(c->h, p);
    memcpy(c->buf, p, len);
    c->n = len;
}

/* Padding (5.1.1): 0x80, zeros, then the length in bits as 64-bit big endian. */
void rail_sha256_final(rail_sha256_t *c, uint8_t out[RAIL_SHA256_LEN])
{
    uint64_t bits = c->len * 8;
    c->buf[c->n++] = 0x80;
    if (c->n > RAIL_SHA256_BLOCK - 8) {
        memset(c->buf + c->n, 0, RAIL_SHA256_BLOCK - c->n);
        sha256_block(c->h, c->buf);
        c->n = 0;
    }
    memset(c->buf + c->n, 0, RAIL_SHA256_BLOCK - 8 - c->n);
    store_be32(c->buf + 56, (uint32_t)(bits >> 32));
    store_be32(c->buf + 60, (uint32_t)bits);
    sha256_block(c->h, c->buf);
    for (int i = 0; i < 8; i++)
        store_be32(out + 4 * i, c->h[i]);
    memset(c, 0, sizeof(*c));
}

void rail_sha256(const void *data, size_t len, uint8_t out[RAIL_SHA256_LEN])
{
    rail_sha256_t c;
    rail_sha256_init(&c);
    rail_sha256_update(&c, data, len);
    rail_sha256_final(&c, out);
}

/* HMAC(K, m) = H((K0 ^ opad) || H((K0 ^ ipad) || m)), K0 = K (or H(K) when
 * longer than a block) padded with zeros to a block. */
void rail_hmac_init(rail_hmac_t *h, const void *key, size_t key_len)
{
    uint8_t k0[RAIL_SHA256_BLOCK] = {0}, pad[RAIL_SHA256_BLOCK];
    if (key_len > RAIL_SHA256_BLOCK)
        rail_sha256(key, key_len, k0);
    else
        memcpy(k0, key, key_len);
    for (int i = 0; i < RAIL_SHA256_BLOCK; i++)
        pad[i] = k0[i] ^ 0x36;
    rail_sha256_init(&h->inner);
    rail_sha256_update(&h->inner, pad, sizeof(pad));
    for (int i = 0; i < RAIL_SHA256_BLOCK; i++)
        pad[i] = k0[i] ^ 0x5c;
    rail_sha256_init(&h->outer);
    rail_sha256_update(&h->outer, pad, sizeof(pad));
    memset(k0, 0, sizeof(k0));
    memset(pad, 0, sizeof(pad));
}

void rail_hmac_update(rail_hmac_t *h, const void *data, size_t len)
{
    rail_sha256_update(&h->inner, data, len);
}

void rail_hmac_final(rail_hmac_t *h, uint8_t out[RAIL_SHA256_LEN])
{
    uint8_t ih[RAIL_SHA256_LEN];
    rail_sha256_final(&h->inner, ih);
    rail_sha256_update(&h->outer, ih, sizeof(ih));
    rail_sha256_final(&h->outer, out);
    memset(ih, 0, sizeof(ih));
}

bool rail_mac_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < len; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}
