/*
 * Authentication of the mpirun <-> raild connections: HMAC-SHA-256 (FIPS
 * 180-4, RFC 2104) over fresh nonces, keyed with a per-job random secret that
 * reaches raild on its stdin (base/sha256.c; no crypto library is required).
 */
#include "runtime/launch.h"
#include "base/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

void launch_hmac(const uint8_t key[32], const void *a, size_t na, const void *b, size_t nb,
                 const void *c, size_t nc, uint8_t mac[32])
{
    rail_hmac_t h;
    rail_hmac_init(&h, key, 32);
    rail_hmac_update(&h, a, na);
    rail_hmac_update(&h, b, nb);
    rail_hmac_update(&h, c, nc);
    rail_hmac_final(&h, mac);
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
