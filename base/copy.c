/* rail_copy's vector loop (see copy.h). */
#include "base/copy.h"
#include "base/rail.h"
#include "base/param.h"

#include <hwloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void (*rail_copy_vec)(void *dst, const void *src, size_t len);
void (*rail_copy2_vec)(void *dst, void *dst2, const void *src, size_t len);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

int rail_copy_stream_mode;       /* RAIL_COPY_STREAM_* (copy_stream) */

__attribute__((target("avx2"))) static void copy_stream_avx2(void *dst, const void *src,
                                                             size_t len);

/* Stores aligned to 32 bytes of d (the head by one unaligned 32-byte move
 * that may overlap the loop's first store), loads unaligned, four vectors
 * per step, the tail by one unaligned 32-byte move ending at the last
 * byte; the same stores, unaligned, into e when there is one (rail_copy2:
 * each source line read once).  Inlined into each caller with e constant. */
__attribute__((target("avx2"), always_inline)) static inline void
copy_loop(char *d, char *e, const char *s, size_t len)
{
    __m256i first = _mm256_loadu_si256((const __m256i *)s);
    _mm256_storeu_si256((__m256i *)d, first);
    if (e)
        _mm256_storeu_si256((__m256i *)e, first);
    size_t head = 32 - ((uintptr_t)d & 31);
    d += head;
    e = e ? e + head : NULL;
    s += head;
    len -= head;
    __m256i last = _mm256_loadu_si256((const __m256i *)(s + len - 32));
    char *d_last = d + len - 32, *e_last = e ? e + len - 32 : NULL;
    while (len >= 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i f = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_store_si256((__m256i *)d, a);
        _mm256_store_si256((__m256i *)(d + 32), b);
        _mm256_store_si256((__m256i *)(d + 64), c);
        _mm256_store_si256((__m256i *)(d + 96), f);
        if (e) {
            _mm256_storeu_si256((__m256i *)e, a);
            _mm256_storeu_si256((__m256i *)(e + 32), b);
            _mm256_storeu_si256((__m256i *)(e + 64), c);
            _mm256_storeu_si256((__m256i *)(e + 96), f);
        }
        s += 128;
        d += 128;
        e = e ? e + 128 : NULL;
        len -= 128;
    }
    while (len >= 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)s);
        _mm256_store_si256((__m256i *)d, v);
        if (e)
            _mm256_storeu_si256((__m256i *)e, v);
        s += 32;
        d += 32;
        e = e ? e + 32 : NULL;
        len -= 32;
    }
    _mm256_storeu_si256((__m256i *)d_last, last);
    if (e_last)
        _mm256_storeu_si256((__m256i *)e_last, last);
}

/* From rail_copy_stream_min bytes, non-temporal stores (copy.h). */
__attribute__((target("avx2"))) static void copy_avx2(void *dst, const void *src, size_t len)
{
    if (len >= rail_copy_stream_min && rail_copy_stream_mode != RAIL_COPY_STREAM_NEVER) {
        copy_stream_avx2(dst, src, len);
        return;
    }
    copy_loop(dst, NULL, src, len);
}

/* The same with non-temporal stores from the first 64-byte boundary of
 * dst: each line is written whole, past the caches, and any copy another
 * core holds is dropped without being read first (see copy.h). */
__attribute__((target("avx2"))) static void copy_stream_avx2(void *dst, const void *src,
                                                             size_t len)
{
    char *d = dst;
    const char *s = src;
    if (len < 128) {
        memcpy(d, s, len);
        return;
    }
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (head) {
        _mm256_storeu_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
        _mm256_storeu_si256((__m256i *)(d + 32), _mm256_loadu_si256((const __m256i *)(s + 32)));
        d += head;
        s += head;
        len -= head;
    }
    while (len >= 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_stream_si256((__m256i *)d, a);
        _mm256_stream_si256((__m256i *)(d + 32), b);
        _mm256_stream_si256((__m256i *)(d + 64), c);
        _mm256_stream_si256((__m256i *)(d + 96), e);
        s += 128;
        d += 128;
        len -= 128;
    }
    _mm_sfence();
    if (len)
        memcpy(d, s, len);
}

/* Two destinations (past rail_copy_stream_min two plain copies: each may
 * stream). */
__attribute__((target("avx2"))) static void copy2_avx2(void *dst, void *dst2, const void *src,
                                                       size_t len)
{
    if (len >= rail_copy_stream_min) {
        copy_avx2(dst, src, len);
        copy_avx2(dst2, src, len);
        return;
    }
    copy_loop(dst, dst2, src, len);
}

static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}
#else
#define copy_avx2 NULL
#define copy2_avx2 NULL
#define copy_stream_avx2 NULL
static int cpu_has_avx2(void)
{
    return 0;
}
#endif

void (*rail_copy_stream)(void *dst, const void *src, size_t len);
const char *rail_copy_selected = "libc";
size_t rail_copy_stream_min = RAIL_COPY_STREAM_MIN_FALLBACK;

size_t rail_copy_stream_min_for(size_t llc)
{
    return llc ? llc / 8 * 3 : RAIL_COPY_STREAM_MIN_FALLBACK;
}

/* The outermost data cache above the first PU of cpus (copy.h). */
static size_t copy_llc_above(hwloc_topology_t topo, hwloc_const_cpuset_t cpus)
{
    size_t size = 0;
    hwloc_obj_t o = hwloc_get_obj_inside_cpuset_by_type(topo, cpus, HWLOC_OBJ_PU, 0);
    for (; o; o = o->parent)
        if (hwloc_obj_type_is_dcache(o->type) && o->attr && o->attr->cache.size)
            size = (size_t)o->attr->cache.size;
    return size;
}

size_t rail_copy_llc_size(void)
{
    hwloc_topology_t topo;
    size_t size = 0;
    if (hwloc_topology_init(&topo) != 0)
        return 0;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine && hwloc_topology_load(topo) == 0) {
        /* a synthetic or XML topology is not this system's: its first PU */
        if (!hwloc_topology_is_thissystem(topo) ||
            hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) != 0 ||
            !hwloc_bitmap_intersects(mine, hwloc_topology_get_topology_cpuset(topo)))
            hwloc_bitmap_copy(mine, hwloc_topology_get_topology_cpuset(topo));
        size = copy_llc_above(topo, mine);
    }
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topo);
    return size;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* copy_isa=auto where memcpy is sound: memcpy, streaming from
 * rail_copy_stream_min as copy_avx2 does. */
static void copy_libc_stream(void *dst, const void *src, size_t len)
{
    if (len >= rail_copy_stream_min && rail_copy_stream_mode != RAIL_COPY_STREAM_NEVER)
        copy_stream_avx2(dst, src, len);
    else
        memcpy(dst, src, len);
}

static double probe_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of a few hot-cache memcpys of PROBE_LEN bytes into dst + off. */
#define PROBE_LEN ((size_t)32 << 10)
static double probe_memcpy(char *dst, const char *src, size_t off)
{
    double best = 1e9;
    for (int i = 0; i < 6; i++) {
        double t = probe_now();
        memcpy(dst + off, src, PROBE_LEN);
        __asm__ volatile("" : : "r"(dst) : "memory");
        t = probe_now() - t;
        if (t < best)
            best = t;
    }
    return best;
}

/* Whether memcpy slows down badly when the destination is 8 or 16 bytes
 * off the source's alignment within a cache line (copy.h): more than 3x
 * the aligned copy's time.  Where it does, rep movsb took 20x; where it
 * does not, the two differ by a third at most, so the noise of a VM cannot
 * flip the verdict. */
static int memcpy_misalign_slow(void)
{
    char *src = aligned_alloc(64, PROBE_LEN + 64), *dst = aligned_alloc(64, PROBE_LEN + 128);
    int slow = 1;   /* unknown: the loop is right everywhere */
    if (src && dst) {
        memset(src, 0x5a, PROBE_LEN + 64);
        memset(dst, 0, PROBE_LEN + 128);
        double aligned = probe_memcpy(dst, src, 0);
        double off8 = probe_memcpy(dst, src, 8), off16 = probe_memcpy(dst, src, 16);
        aligned = RAIL_MIN(aligned, probe_memcpy(dst, src, 0));
        slow = RAIL_MAX(off8, off16) > 3 * aligned;
    }
    free(src);
    free(dst);
    return slow;
}
#else
#define copy_libc_stream NULL
static int memcpy_misalign_slow(void)
{
    return 1;
}
#endif

void rail_copy_select(const char *isa)
{
    int avx2 = cpu_has_avx2();
    rail_copy_stream = avx2 ? copy_stream_avx2 : NULL;
    if (!avx2 || (isa && strcmp(isa, "libc") == 0)) {
        rail_copy_vec = NULL;
        rail_copy2_vec = NULL;
        rail_copy_stream = isa && strcmp(isa, "libc") == 0 ? NULL : rail_copy_stream;
        rail_copy_selected = "libc";
    } else if ((isa && strcmp(isa, "avx2") == 0) ||
               (!(isa && strcmp(isa, "libc+stream") == 0) && memcpy_misalign_slow())) {
        rail_copy_vec = copy_avx2;
        rail_copy2_vec = copy2_avx2;
        rail_copy_selected = "avx2";
    } else {
        rail_copy_vec = copy_libc_stream;
        rail_copy2_vec = NULL;
        rail_copy_selected = "libc+stream";
    }
}

static const char *copy_isa_setting = "auto", *copy_stream_setting = "auto";
static size_t copy_stream_min_setting;

/* rail_copy_stream_min: the parameter, else derived where rail_copy can
 * stream at all (hwloc is not loaded for nothing). */
static void copy_set_stream_min(void)
{
    if (copy_stream_min_setting)
        rail_copy_stream_min = copy_stream_min_setting;
    else if (rail_copy_vec && rail_copy_stream && rail_copy_stream_mode != RAIL_COPY_STREAM_NEVER)
        rail_copy_stream_min = rail_copy_stream_min_for(rail_copy_llc_size());
    else
        rail_copy_stream_min = RAIL_COPY_STREAM_MIN_FALLBACK;
}

int rail_copy_register_params(void)
{
    int rc = rail_param_register_string(
        "copy_isa", "auto", "auto|avx2|libc",
        "Bulk copies of the transfer paths (pml, btl sm, coll sm): avx2 (a loop with aligned "
        "stores, where the CPU has AVX2), libc (memcpy; no streaming stores either) or auto "
        "(memcpy, unless a probe at start-up finds it 3x slower for a destination 8 or 16 "
        "bytes off the source's alignment: then avx2)",
        RAIL_PARAM_LEVEL_DEV, &copy_isa_setting);
    if (rc == MPI_SUCCESS)
        rc = rail_param_register_string(
            "copy_stream", "auto", "auto|never|always",
            "Non-temporal stores for data written into shared memory from 16 KiB: btl sm "
            "pipelined fragments (auto: when the pml's receiver, timing each way, chooses "
            "it) and coll sm segment writes (auto: bcasts by time, and always when "
            "oversubscribed); and for copies from copy_stream_min bytes (auto: always).  "
            "auto, never, or always (needs AVX2; copy_isa=libc means never)",
            RAIL_PARAM_LEVEL_DEV, &copy_stream_setting);
    if (rc == MPI_SUCCESS)
        rc = rail_param_register_size(
            "copy_stream_min", 0,
            "Copies from this many bytes use non-temporal stores (copy_stream=auto).  0: 3/8 "
            "of the last-level cache hwloc reports above this process's CPUs (source and "
            "destination then fill 3/4 of it: caching them only evicts what others "
            "reuse), or 12 MiB when hwloc reports none; railinfo shows the result",
            RAIL_PARAM_LEVEL_TUNER, &copy_stream_min_setting);
    if (rc == MPI_SUCCESS) {
        rail_copy_select(copy_isa_setting);
        rail_copy_stream_mode = strcmp(copy_stream_setting, "never") == 0 ? RAIL_COPY_STREAM_NEVER
                                : strcmp(copy_stream_setting, "always") == 0
                                    ? RAIL_COPY_STREAM_ALWAYS
                                    : RAIL_COPY_STREAM_AUTO;
        copy_set_stream_min();
    }
    return rc;
}
