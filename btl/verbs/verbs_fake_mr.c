/*
 * btl verbs, emulated HCA: memory registration with teeth.  A real HCA
 * pins the pages at reg_mr and goes on using those pages, whatever the
 * process maps at the addresses later; a registration whose memory was
 * given back and replaced moves stale bytes.  The fake records which pages
 * a region had when registered, and every access through a key checks
 * that the pages it touches are still those: where /proc/<pid>/pagemap
 * shows frame numbers (CAP_SYS_ADMIN), page by page (the frames live in the
 * segment, fake_seg_t.pfn); elsewhere the mappings of /proc/<pid>/maps
 * covering the region (start, end, offset, device, inode), hashed.  A
 * region that no longer maps what was registered fails the check, which
 * completes the request with a protection error.
 */
#include "btl/verbs/verbs_fake.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define PFN_MASK ((UINT64_C(1) << 55) - 1)
#define PFN_PRESENT (UINT64_C(1) << 63)
#define PFN_BATCH 512

/* Free extents of the frame pool (the owner's own bookkeeping). */
typedef struct { uint64_t off, n; } fake_ext_t;
static fake_ext_t *pool_free;
static int n_pool_free, cap_pool_free;
static bool pool_ready;

static uint64_t page_size(void)
{
    static uint64_t ps;
    if (!ps)
        ps = (uint64_t)sysconf(_SC_PAGESIZE);
    return ps;
}

static bool pool_alloc(uint64_t n, uint64_t *off)
{
    if (!pool_ready) {
        pool_free = malloc(sizeof(*pool_free) * 16);
        if (!pool_free)
            return false;
        cap_pool_free = 16;
        pool_free[0] = (fake_ext_t){0, FAKE_PFN_POOL};
        n_pool_free = 1;
        pool_ready = true;
    }
    for (int i = 0; i < n_pool_free; i++) {
        if (pool_free[i].n >= n) {
            *off = pool_free[i].off;
            pool_free[i].off += n;
            pool_free[i].n -= n;
            return true;
        }
    }
    return false;
}

static int ext_cmp(const void *a, const void *b)
{
    const fake_ext_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static void pool_release(uint64_t off, uint64_t n)
{
    if (n_pool_free == cap_pool_free) {
        fake_ext_t *p = realloc(pool_free, sizeof(*p) * (size_t)cap_pool_free * 2);
        if (!p)
            return;                /* the frames are lost to the pool, nothing worse */
        pool_free = p;
        cap_pool_free *= 2;
    }
    pool_free[n_pool_free++] = (fake_ext_t){off, n};
    qsort(pool_free, (size_t)n_pool_free, sizeof(*pool_free), ext_cmp);
    int k = 0;
    for (int i = 1; i < n_pool_free; i++) {
        if (pool_free[k].off + pool_free[k].n == pool_free[i].off)
            pool_free[k].n += pool_free[i].n;
        else
            pool_free[++k] = pool_free[i];
    }
    n_pool_free = k + 1;
}

/* Frame words of pages [first, first + n) of process pid (0: self) into out. */
static int read_pagemap(pid_t pid, uint64_t first, uint64_t n, uint64_t *out)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/pagemap", pid ? (int)pid : (int)getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t want = (size_t)n * 8;
    ssize_t got = pread(fd, out, want, (off_t)(first / page_size() * 8));
    close(fd);
    return got == (ssize_t)want ? 0 : -1;
}

/* Hash of the mappings of process pid that cover [lo, hi). */
static uint64_t maps_hash(pid_t pid, uint64_t lo, uint64_t hi)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    uint64_t h = 1469598103934665603ull;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        uint64_t s, e, off, ino;
        unsigned maj, min;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64, &s, &e, &off,
                   &maj, &min, &ino) != 6 || e <= lo || s >= hi)
            continue;
        uint64_t v[5] = {s, e, off, (uint64_t)maj << 32 | min, ino};
        for (int i = 0; i < 5; i++)
            h = (h ^ v[i]) * 1099511628211ull;
    }
    fclose(f);
    return h;
}

/* Fault the pages in, writable where the mapping allows (as pinning does). */
static int populate(uint64_t first, uint64_t len)
{
    if (madvise((void *)(uintptr_t)first, len, MADV_POPULATE_WRITE) == 0)
        return 0;
    if (madvise((void *)(uintptr_t)first, len, MADV_POPULATE_READ) == 0)
        return 0;
    if (errno != EINVAL)
        return -1;                 /* EFAULT/ENOMEM: not mapped */
    for (uint64_t p = first; p < first + len; p += page_size())
        (void)*(volatile char *)(uintptr_t)p;
    return 0;
}

int btl_verbs_fake_mr_record(fake_seg_t *s, fake_mr_t *mr)
{
    uint64_t ps = page_size(), first = mr->addr & ~(ps - 1);
    uint64_t n = (mr->addr + mr->len - first + ps - 1) / ps;
    mr->ident_kind = FAKE_IDENT_NONE;
    if (populate(first, n * ps) != 0)
        return -1;
    if (pool_alloc(n, &mr->pfn_off)) {
        uint64_t *dst = &s->pfn[mr->pfn_off];
        bool frames = read_pagemap(0, first, n, dst) == 0;
        for (uint64_t i = 0; frames && i < n; i++)
            frames = (dst[i] & PFN_PRESENT) && (dst[i] & PFN_MASK);
        if (frames) {
            mr->pfn_n = n;
            mr->ident_kind = FAKE_IDENT_PFN;
            return 0;
        }
        pool_release(mr->pfn_off, n);
    }
    mr->ident = maps_hash(getpid(), first, first + n * ps);
    mr->ident_kind = FAKE_IDENT_MAPS;
    return 0;
}

void btl_verbs_fake_mr_release(fake_seg_t *s, fake_mr_t *mr)
{
    (void)s;
    if (mr->ident_kind == FAKE_IDENT_PFN)
        pool_release(mr->pfn_off, mr->pfn_n);
    mr->ident_kind = FAKE_IDENT_NONE;
}

static bool pages_same(fake_seg_t *s, const fake_mr_t *mr, pid_t pid, uint64_t addr, uint64_t len)
{
    uint64_t ps = page_size(), mfirst = mr->addr & ~(ps - 1), first = addr & ~(ps - 1);
    uint64_t n = (addr + len - first + ps - 1) / ps, i0 = (first - mfirst) / ps;
    uint64_t buf[PFN_BATCH];
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < PFN_BATCH ? n - done : PFN_BATCH;
        if (read_pagemap(pid, first + done * ps, k, buf) != 0)
            return false;
        for (uint64_t i = 0; i < k; i++)
            if ((buf[i] & PFN_MASK) != (s->pfn[mr->pfn_off + i0 + done + i] & PFN_MASK) ||
                !(buf[i] & PFN_PRESENT))
                return false;
        done += k;
    }
    return true;
}

bool btl_verbs_fake_mr_check(fake_seg_t *s, pid_t pid, uint32_t key, uint64_t addr, uint64_t len,
                   int access)
{
    const fake_mr_t *mr = &s->mr[key % FAKE_MAX_MR];
    if (!__atomic_load_n(&mr->used, __ATOMIC_ACQUIRE) || mr->key != key)
        return false;
    if (addr < mr->addr || len > mr->len || addr - mr->addr > mr->len - len)
        return false;
    if ((uint32_t)access & ~mr->access)
        return false;
    if (len == 0)
        return true;
    if (mr->ident_kind == FAKE_IDENT_PFN)
        return pages_same(s, mr, pid, addr, len);
    if (mr->ident_kind == FAKE_IDENT_MAPS) {
        uint64_t ps = page_size(), first = mr->addr & ~(ps - 1);
        uint64_t last = (mr->addr + mr->len + ps - 1) & ~(ps - 1);
        return maps_hash(pid, first, last) == mr->ident;
    }
    return true;
}
