/*
 * rail_copy: memcpy for the bulk copies of the transfer paths (pml pack and
 * unpack of contiguous buffers, btl sm fragments, coll sm slots).
 *
 * Why not memcpy: glibc 2.36 copies blocks from a few KiB up with `rep
 * movsb`, which on the AMD hosts we run on drops to 2 GB/s (from 40) when the
 * destination is 8 or 16 bytes off the source's alignment within a cache
 * line.  Our fragments and slots sit at fixed offsets, so the user's buffer
 * alignment could pick that case (measured alone: 1 MiB bcast on two
 * processes 52-198 us with rail_copy, 374-464 us with memcpy).  rail_copy
 * aligns the stores and moves 128 bytes per step with AVX2 loads and
 * stores, whatever the two alignments are; below RAIL_COPY_MIN, or without
 * AVX2, it is memcpy, except up to 32 bytes: inline loads and stores.
 */
#ifndef BASE_COPY_H
#define BASE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RAIL_COPY_MIN 2048

/* The vector copy, or NULL when the CPU cannot run it (or copy_isa=libc). */
extern void (*rail_copy_vec)(void *dst, const void *src, size_t len);

/* Up to 32 bytes inline, in at most four loads and stores that never
 * touch a byte outside either range (headers, small payloads: a libc call
 * costs more than such a copy). */
static inline void rail_copy_small(void *dst, const void *src, size_t len)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    uint64_t a, b, c, e;
    uint32_t x, y;
    if (len >= 16) {
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + len - 16, 8);
        memcpy(&e, s + len - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + 8, &b, 8);
        memcpy(d + len - 16, &c, 8);
        memcpy(d + len - 8, &e, 8);
    } else if (len >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + len - 8, &b, 8);
    } else if (len >= 4) {
        memcpy(&x, s, 4);
        memcpy(&y, s + len - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + len - 4, &y, 4);
    } else {
        for (size_t i = 0; i < len; i++)
            d[i] = s[i];
    }
}

static inline void rail_copy(void *dst, const void *src, size_t len)
{
    if (len <= 32)
        rail_copy_small(dst, src, len);
    else if (len >= RAIL_COPY_MIN && rail_copy_vec)
        rail_copy_vec(dst, src, len);
    else
        memcpy(dst, src, len);
}

/* Pick the implementation: "auto" (vector when the CPU has AVX2) or
 * "libc" (always memcpy).  Until it is called, rail_copy is memcpy. */
void rail_copy_select(const char *isa);
/* Registers the copy_isa parameter and applies it (mpi/params.c). */
int rail_copy_register_params(void);

#endif
