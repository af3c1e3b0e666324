/*
 * rail_copy: memcpy for the bulk copies of the transfer paths (pml pack and
 * unpack of contiguous buffers, btl sm fragments, coll sm slots), or an
 * AVX2 loop where memcpy is unsound.
 *
 * Why not always memcpy: glibc 2.36 copies blocks from a few KiB up with
 * `rep movsb`, which on some AMD hosts we ran on dropped to 2 GB/s (from 40)
 * when the destination was 8 or 16 bytes off the source's alignment within
 * a cache line.  Our fragments and slots sit at fixed offsets, so the
 * user's buffer alignment could pick that case (measured alone there: 1 MiB
 * bcast on two processes 52-198 us with the loop, 374-464 us with memcpy).
 * The loop aligns the stores and moves 128 bytes per step with AVX2 loads
 * and stores, whatever the two alignments are.  Why not always the loop:
 * on hosts without that flaw memcpy moves data another core wrote faster
 * (2-core EPYC VM, 2026-11-27, np 2: bcast of 4-64 KiB 0.57-2.9 us against
 * 0.93-6.0, allgather of 8-32 KiB 1.7-3.9 against 2.8-6.1, allreduce and
 * allgather of 256 KiB-16 MiB 10-30% less).  So copy_isa=auto
 * (rail_copy_select) times memcpy at those offsets once at start-up (well
 * under a millisecond: 24 copies of 32 KiB) and takes the
 * loop only where they are over 3x slower than aligned.  Below
 * RAIL_COPY_MIN it is memcpy either way, except up to 32 bytes: inline
 * loads and stores.
 */
#ifndef BASE_COPY_H
#define BASE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RAIL_COPY_MIN 2048

/* The copy from RAIL_COPY_MIN bytes: the AVX2 loop, or memcpy that streams
 * from rail_copy_stream_min; NULL for plain memcpy (no AVX2, copy_isa=libc). */
extern void (*rail_copy_vec)(void *dst, const void *src, size_t len);
/* What rail_copy_select chose: "avx2", "libc+stream" or "libc". */
extern const char *rail_copy_selected;

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

/*
 * rail_copy_stream: a bulk copy with non-temporal stores (whole lines
 * written past the caches), for data another core reads next; NULL without
 * AVX2 or with copy_isa=libc.  On the 2-core VMs it was measured on, writing
 * lines the other core has cached costs the writer a cross-core
 * invalidation per line, cheap in the VM's fast minutes and 5-10x dearer
 * in its slow ones: a two-process pipeline of 128 KiB fragments moved 31
 * GB/s with rail_copy and 18 with streaming stores in the fast mode, 4.6
 * and 26 GB/s in the slow one.  The writer's own copy time does not tell
 * which is better (a streamed fragment is read from memory, a cached one
 * from the other core), so the pml's receiver chooses by the whole
 * transfer's time (pml_rndv.c, BTL_PAYLOAD_STREAM).
 *
 * rail_copy itself streams from rail_copy_stream_min bytes: copies that do
 * not fit the caches anyway go faster without reading the destination's
 * lines first.  Measured on a VM with 2 MiB L2 per core and a 32 MiB L3:
 * 16 MiB 18 GB/s cached, 27 streamed (two processes at once: 15 and 28);
 * 8 MiB 37 and 29, 12 MiB 26 and 28, so the cross-over sat at 3/8 of the
 * L3, where a copy's source and destination fill 3/4 of it.
 */
#define RAIL_COPY_STREAM_SHARED_MIN 16384
/* Principle: stream once source and destination together would fill 3/4 of
 * the last-level cache (3/8 of it per copy), from hwloc's size of the
 * cache above this process's CPUs; this when hwloc reports none (a 32 MiB
 * L3's 3/8). */
#define RAIL_COPY_STREAM_MIN_FALLBACK ((size_t)12 << 20)
extern size_t rail_copy_stream_min;  /* the copy_stream_min parameter, or derived */
/* The threshold for a last-level cache of llc bytes (0: unknown). */
size_t rail_copy_stream_min_for(size_t llc);
/* The outermost data cache above this process's first CPU, in bytes, as
 * hwloc reports it (HWLOC_SYNTHETIC and HWLOC_XMLFILE fake it); 0 when it
 * reports none. */
size_t rail_copy_llc_size(void);
enum { RAIL_COPY_STREAM_AUTO, RAIL_COPY_STREAM_NEVER, RAIL_COPY_STREAM_ALWAYS };
extern void (*rail_copy_stream)(void *dst, const void *src, size_t len);
extern int rail_copy_stream_mode;    /* the copy_stream parameter */
/* May a transfer path choose streaming stores (by time)? */
static inline int rail_copy_stream_offered(void)
{
    return rail_copy_stream && rail_copy_stream_mode == RAIL_COPY_STREAM_AUTO;
}
/* A bulk copy into shared memory that another process reads next: with
 * streaming stores when the caller chose them (stream) or copy_stream=always
 * says so, from RAIL_COPY_STREAM_SHARED_MIN bytes, where the CPU can; else
 * rail_copy.  Returns whether it streamed. */
static inline int rail_copy_shared(void *dst, const void *src, size_t len, int stream)
{
    if ((stream || rail_copy_stream_mode == RAIL_COPY_STREAM_ALWAYS) &&
        len >= RAIL_COPY_STREAM_SHARED_MIN && rail_copy_stream) {
        rail_copy_stream(dst, src, len);
        return 1;
    }
    rail_copy(dst, src, len);
    return 0;
}

/* The vector two-destination copy (NULL as rail_copy_vec). */
extern void (*rail_copy2_vec)(void *dst, void *dst2, const void *src, size_t len);
/* src into dst and dst2 in one pass: each source line is read once (an
 * allgather's own block goes into the shared segment and the receive
 * buffer: np 2, 1 MiB, 10-12% less time in a two-process probe than two
 * copies). */
static inline void rail_copy2(void *dst, void *dst2, const void *src, size_t len)
{
    if (len >= RAIL_COPY_MIN && rail_copy2_vec) {
        rail_copy2_vec(dst, dst2, src, len);
    } else {
        rail_copy(dst, src, len);
        rail_copy(dst2, src, len);
    }
}
/* Pick the implementation (the copy_isa parameter): "auto" (memcpy unless
 * the probe finds it flawed, above), "avx2" (the loop where the CPU has
 * AVX2), "libc" (memcpy, no streaming stores) or, for tests,
 * "libc+stream" (what auto picks on a sound memcpy).  Until it is called,
 * rail_copy is memcpy. */
void rail_copy_select(const char *isa);
/* Registers the copy_isa parameter and applies it (mpi/params.c). */
int rail_copy_register_params(void);

#endif
