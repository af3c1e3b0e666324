/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for authenticating
 * connections (the launcher's daemons, the tcp btl's handshake).  Small and
 * dependency-free; not meant for bulk hashing.
 */
#ifndef BASE_SHA256_H
#define BASE_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAIL_SHA256_LEN 32
#define RAIL_SHA256_BLOCK 64

typedef struct rail_sha256 {
    uint32_t h[8];
    uint64_t len;                  /* bytes hashed so far */
    uint8_t buf[RAIL_SHA256_BLOCK];
    size_t n;                      /* bytes waiting in buf */
} rail_sha256_t;

void rail_sha256_init(rail_sha256_t *c);
void rail_sha256_update(rail_sha256_t *c, const void *data, size_t len);
void rail_sha256_final(rail_sha256_t *c, uint8_t out[RAIL_SHA256_LEN]);
void rail_sha256(const void *data, size_t len, uint8_t out[RAIL_SHA256_LEN]);

typedef struct rail_hmac {
    rail_sha256_t inner, outer;
} rail_hmac_t;

void rail_hmac_init(rail_hmac_t *h, const void *key, size_t key_len);
void rail_hmac_update(rail_hmac_t *h, const void *data, size_t len);
void rail_hmac_final(rail_hmac_t *h, uint8_t out[RAIL_SHA256_LEN]);

/* Equality of two MACs in time independent of where they differ. */
bool rail_mac_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
