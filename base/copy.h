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
 * AVX2, it is memcpy.
 */
#ifndef BASE_COPY_H
#define BASE_COPY_H

#include <stddef.h>
#include <string.h>

#define RAIL_COPY_MIN 2048

/* The vector copy, or NULL when the CPU cannot run it (or copy_isa=libc). */
extern void (*rail_copy_vec)(void *dst, const void *src, size_t len);

static inline void rail_copy(void *dst, const void *src, size_t len)
{
    if (len >= RAIL_COPY_MIN && rail_copy_vec)
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
