/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for the btl tcp
 * handshake.  Small and dependency-free; not meant for bulk hashing.
 */
#ifndef BTL_TCP_TCP_SHA256_H
#define BTL_TCP_TCP_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BTL_TCP_SHA256_LEN 32
#define BTL_TCP_SHA256_BLOCK 64

typedef struct btl_tcp_sha256 {
    uint32_t h[8];
    uint64_t len;                  /* bytes hashed so far */
    uint8_t buf[BTL_TCP_SHA256_BLOCK];
    size_t n;                      /* bytes waiting in buf */
} btl_tcp_sha256_t;

void btl_tcp_sha256_init(btl_tcp_sha256_t *c);
void btl_tcp_sha256_update(btl_tcp_sha256_t *c, const void *data, size_t len);
void btl_tcp_sha256_final(btl_tcp_sha256_t *c, uint8_t out[BTL_TCP_SHA256_LEN]);
void btl_tcp_sha256(const void *data, size_t len, uint8_t out[BTL_TCP_SHA256_LEN]);

typedef struct btl_tcp_hmac {
    btl_tcp_sha256_t inner, outer;
} btl_tcp_hmac_t;

void btl_tcp_hmac_init(btl_tcp_hmac_t *h, const void *key, size_t key_len);
void btl_tcp_hmac_update(btl_tcp_hmac_t *h, const void *data, size_t len);
void btl_tcp_hmac_final(btl_tcp_hmac_t *h, uint8_t out[BTL_TCP_SHA256_LEN]);

/* Equality of two MACs in time independent of where they differ. */
bool btl_tcp_mac_equal(const uint8_t *a, const uint8_t *b, size_t len);

#endif
