/*
 * rail_copy against memcpy: every source and destination alignment within a
 * cache line, every length of the inline small copy's cases (0-33),
 * lengths around the vector threshold and the loop's steps, and
 * guard bytes on both sides (a vector head or tail that wrote outside the
 * range would show).  Both implementations: auto and libc.  Also a copy of
 * 1 MiB at each of the 8-byte misalignments (the case glibc's `rep movsb`
 * handles at 2 GB/s on AMD hosts), checked for content only.  The same
 * sweep for rail_copy_stream (non-temporal stores from the first 64-byte
 * boundary) where the CPU has it, and a copy beyond rail_copy_stream_min
 * (where rail_copy streams), whose derivation from the last-level cache is
 * checked too (copy_llc.sh: from hwloc's).  rail_copy2 (one source, two destinations)
 * the same way: every source and first-destination alignment, the second
 * destination at another, guards around both.
 */
#include "base/copy.h"
#include "test/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sweeps stop after this many failures (each would print a line). */
#define MAX_FAILURES 10

static void (*copy_fn)(void *, const void *, size_t);

static void check_one(size_t len, size_t so, size_t dof)
{
    if (check_failures >= MAX_FAILURES)
        return;
    static uint8_t src[8192 + 128], dst[8192 + 256], ref[8192 + 256];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)(i * 131 + len);
    memset(dst, 0xee, sizeof(dst));
    memset(ref, 0xee, sizeof(ref));
    copy_fn(dst + 64 + dof, src + so, len);
    memcpy(ref + 64 + dof, src + so, len);
    if (memcmp(dst, ref, sizeof(dst)) != 0) {
        size_t at = 0;
        while (dst[at] == ref[at])
            at++;
        FAIL("len %zu src+%zu dst+%zu: first difference at byte %zd", len, so, dof,
             (ssize_t)at - 64 - (ssize_t)dof);
    }
}

static void check_two(size_t len, size_t so, size_t dof, size_t dof2)
{
    if (check_failures >= MAX_FAILURES)
        return;
    static uint8_t src[8192 + 128], d1[8192 + 256], d2[8192 + 256], ref[8192 + 256];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)(i * 37 + len + so);
    memset(d1, 0xee, sizeof(d1));
    memset(d2, 0xee, sizeof(d2));
    rail_copy2(d1 + 64 + dof, d2 + 64 + dof2, src + so, len);
    for (int k = 0; k < 2; k++) {
        size_t off = k ? dof2 : dof;
        memset(ref, 0xee, sizeof(ref));
        memcpy(ref + 64 + off, src + so, len);
        EXPECT(memcmp(k ? d2 : d1, ref, sizeof(ref)) == 0,
               "rail_copy2 len %zu src+%zu dst+%zu dst2+%zu: destination %d", len, so, dof, dof2,
               k + 1);
    }
}

static void copy_default(void *d, const void *s, size_t len)
{
    rail_copy(d, s, len);
}

static void sweep(const char *isa)
{
    rail_copy_select(isa);
    copy_fn = copy_default;
    const size_t lens[] = { 0,    1,    2,    3,    4,    5,    7,    8,    9,    15,   16,
                            17,   24,   31,   32,   33,   2047, 2048, 2049, 2080, 2111, 2175,
                            2176, 2177, 4096, 4099, 5000, 8191, 8192 };
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
        for (size_t so = 0; so < 64; so++)
            for (size_t dof = 0; dof < 64; dof++)
                check_one(lens[l], so, dof);
}

int main(void)
{
    sweep("libc");
    EXPECT(rail_copy_vec == NULL, "copy_isa=libc left a vector copy selected");
    EXPECT(rail_copy_stream == NULL, "copy_isa=libc left a streaming copy selected");
    sweep("libc+stream");
    EXPECT(rail_copy2_vec == NULL, "memcpy with streaming left the vector two-destination copy");
    sweep("auto");
    printf("copy_isa=auto chose: %s\n", rail_copy_selected);
    sweep("avx2");
    if (rail_copy_vec)
        printf("vector copy: AVX2\n");
    else
        check_skip_part("vector copy: this CPU has no AVX2 (memcpy checked instead)");
    if (rail_copy_stream) {
        copy_fn = rail_copy_stream;
        const size_t lens[] = { 0,   1,   63,  64,  65,   127,  128,  129,  191,  192,
                                193, 255, 256, 257, 2047, 2048, 4095, 4099, 8191, 8192 };
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
            for (size_t so = 0; so < 64; so++)
                for (size_t dof = 0; dof < 64; dof++)
                    check_one(lens[l], so, dof);
    }
    if (rail_copy_stream)
        printf("streaming copy: AVX2, checked\n");
    else
        check_skip_part("streaming copy: this CPU has none");
    {
        const size_t lens[] = { 0, 1, 33, 2047, 2048, 2049, 2111, 2175, 2176, 4099, 8191, 8192 };
        for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
            for (size_t so = 0; so < 64; so++)
                for (size_t dof = 0; dof < 64; dof++)
                    check_two(lens[l], so, dof, (dof * 7 + so) % 64);
    }
    printf("two-destination copy: %s, checked\n", rail_copy2_vec ? "vector" : "two copies");

    size_t big = (size_t)1 << 20;
    uint8_t *a = malloc(big + 64), *b = malloc(big + 64);
    CHECK(a && b, "out of memory");
    for (size_t i = 0; i < big + 64; i++)
        a[i] = (uint8_t)(i ^ (i >> 9));
    for (size_t off = 0; off < 64; off += 8) {
        for (int stream = 0; stream < 2; stream++) {
            if (stream && !rail_copy_stream)
                break;
            memset(b, 0, big + 64);
            (stream ? rail_copy_stream : copy_default)(b + off, a + off / 2, big);
            EXPECT(memcmp(b + off, a + off / 2, big) == 0 && (off == 0 || b[off - 1] == 0) &&
                       b[off + big] == 0,
                   "1 MiB %s copy to offset %zu", stream ? "streaming" : "", off);
        }
    }
    free(a);
    free(b);

    /* the streaming threshold: 3/8 of the last-level cache, or the fallback */
    EXPECT(rail_copy_stream_min_for(32u << 20) == (12u << 20) &&
               rail_copy_stream_min_for(0) == RAIL_COPY_STREAM_MIN_FALLBACK &&
               rail_copy_stream_min_for((size_t)256 << 20) == (96u << 20),
           "rail_copy_stream_min_for: 32 MiB -> %zu, 0 -> %zu, 256 MiB -> %zu",
           rail_copy_stream_min_for(32u << 20), rail_copy_stream_min_for(0),
           rail_copy_stream_min_for((size_t)256 << 20));
    /* rail_copy from rail_copy_stream_min bytes streams: content and guards */
    size_t huge = rail_copy_stream_min + 4099;
    a = malloc(huge + 64);
    b = malloc(huge + 64);
    CHECK(a && b, "out of memory");
    for (size_t i = 0; i < huge + 64; i++)
        a[i] = (uint8_t)(i * 7 ^ (i >> 11));
    /* the loop's streaming tail (avx2), then memcpy's (libc+stream) */
    const char *big_isas[] = { "avx2", "libc+stream" };
    for (int k = 0; k < 2; k++) {
        rail_copy_select(big_isas[k]);
        for (size_t off = 1; off < 64; off += 31) {
            memset(b, 0, huge + 64);
            rail_copy(b + off, a + 3, huge);
            EXPECT(memcmp(b + off, a + 3, huge) == 0 && b[off - 1] == 0 && b[off + huge] == 0,
                   "%zu-byte copy to offset %zu (%s)", huge, off, rail_copy_selected);
        }
    }
    free(a);
    free(b);
    return check_report("copy_test");
}
