/*
 * base/cma.h against a forked child, whose memory sits at the parent's
 * addresses (the parent rewrites its own copy after the fork, so that what
 * it reads can only have come from the child):
 *   - reads and writes of thousands of pieces on both sides (more than
 *     IOV_MAX), split differently on each side, empty pieces among them,
 *     gaps around them that must stay untouched; every system call within
 *     RAIL_CMA_IOV_BATCH pieces;
 *   - the same with the kernel moving at most 1000 bytes per call (partial
 *     transfers, stopping inside pieces) and EINTR every third call;
 *   - failures: a reaped child (ESRCH), an address outside the child
 *     (EFAULT), a child that is not dumpable while we lack CAP_SYS_PTRACE
 *     (EPERM): the class, errno and rail_cma_error()'s sentence; one
 *     warning per process, none for RAIL_CMA_QUIET;
 *   - the probes and the kernel-copy ratio;
 *   - the shared copy: the child helping while the parent reads (each
 *     byte copied once, by one of them, counted at the system calls;
 *     byte-exact result), the child taking every chunk, a helper whose
 *     write fails (and one that pretends so, RAIL_CMA_SHARE_REFUSE): the
 *     parent copies those chunks itself; a late helper, one of another
 *     generation and a cancelled transfer claim nothing.
 * The test defines process_vm_readv/writev itself (they count, cut and
 * fail the calls as told, then make the system call), which the service
 * linked into it calls instead of libc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/cma.h"
#include "base/atomic.h"
#include "test/ptrace_cap.h"
#include "test/check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SRC_LEN ((size_t)(1 << 20) + 12345)
#define MAGIC 0x54534554414d4331ULL

/* ------------------------------------------------ the shaped system calls */

typedef struct calls {
    size_t cap;                    /* most bytes a call moves (0: all) */
    int eintr_every;               /* every nth call fails with EINTR */
    int fail_errno;                /* writes fail with this (0: none) */
    int delay_us;                  /* before each write */
    unsigned long calls, max_pieces;
    uint64_t bytes;                /* moved, reads and writes */
} calls_t;

typedef struct shared {
    calls_t proc[2];               /* the parent's, the child's */
    uint64_t claim, done RAIL_ALIGNED(64);
    rail_cma_share_desc_t desc RAIL_ALIGNED(64);
    /* the child's orders and answers */
    int op;
    uint32_t gen, max;
    unsigned flags;
    int stop_after;                /* chunks the child claims at most (0: all it can) */
    int helper_chunks, helper_failed;
} shared_t;

static shared_t *sh;
static int me_idx;                 /* 0 parent, 1 child */
static uint64_t magic_word = MAGIC;

static ssize_t shaped(long nr, pid_t pid, const struct iovec *l, unsigned long nl,
                      const struct iovec *r, unsigned long nrv, unsigned long flags)
{
    static struct iovec cut[IOV_MAX];
    calls_t *c = &sh->proc[me_idx];
    c->calls++;
    c->max_pieces = RAIL_MAX(c->max_pieces, RAIL_MAX(nl, nrv));
    if (c->eintr_every && c->calls % (unsigned long)c->eintr_every == 0) {
        errno = EINTR;
        return -1;
    }
    if (nr == SYS_process_vm_writev && c->delay_us)
        usleep((useconds_t)c->delay_us);
    if (nr == SYS_process_vm_writev && c->fail_errno) {
        errno = c->fail_errno;
        return -1;
    }
    if (c->cap && nl <= IOV_MAX) {   /* the local side cut to cap bytes */
        size_t left = c->cap;
        unsigned long k = 0;
        for (; k < nl && left; k++) {
            cut[k] = l[k];
            cut[k].iov_len = RAIL_MIN(cut[k].iov_len, left);
            left -= cut[k].iov_len;
        }
        l = cut;
        nl = k;
    }
    long got = syscall(nr, pid, l, nl, r, nrv, flags);
    if (got > 0)
        c->bytes += (uint64_t)got;
    return got;
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl,
                         const struct iovec *r, unsigned long nr, unsigned long flags)
{
    return shaped(SYS_process_vm_readv, pid, l, nl, r, nr, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long nl,
                          const struct iovec *r, unsigned long nr, unsigned long flags)
{
    return shaped(SYS_process_vm_writev, pid, l, nl, r, nr, flags);
}

static void calls_reset(int idx)
{
    sh->proc[idx] = (calls_t){0};
}

/* --------------------------------------------------------------- helpers */

static uint8_t byte_a(size_t off)   /* the child's source */
{
    return (uint8_t)(off * 7 + (off >> 11) + 1);
}

static uint32_t lcg(uint32_t *s)
{
    return *s = *s * 1103515245u + 12345u;
}

/* n pieces of base, `bytes` in all, with gaps of `gap` bytes between them
 * and some empty pieces; returns the span. */
static size_t split(struct iovec *iov, int n, uint8_t *base, size_t bytes, size_t gap,
                    uint32_t seed)
{
    size_t off = 0, left = bytes;
    for (int i = 0; i < n; i++) {
        size_t len = lcg(&seed) % 7 == 0 ? 0 : 1 + lcg(&seed) % (2 * bytes / (size_t)n + 1);
        len = i == n - 1 ? left : RAIL_MIN(len, left);
        iov[i] = (struct iovec){base + off, len};
        off += len + gap;
        left -= len;
    }
    return off;
}

/* Run the child's order and wait for its answer. */
static int to_child, from_child;

static void child_do(int op)
{
    char b = 0;
    sh->op = op;
    EXPECT(write(to_child, &b, 1) == 1, "order to the child");
}

static void child_wait(void)
{
    char b;
    EXPECT(read(from_child, &b, 1) == 1, "answer from the child");
}

static rail_cma_share_ctl_t ctl_of(void)
{
    return (rail_cma_share_ctl_t){&sh->claim, &sh->done, &sh->desc};
}

/* ----------------------------------------------------------------- child */

enum { OP_EXIT, OP_HELP, OP_NODUMP };

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Help the parent's transfer of generation sh->gen until nothing is left,
 * a write failed, it claimed sh->stop_after chunks, or (never published)
 * 5 s passed. */
static void child_help(pid_t parent)
{
    rail_cma_share_ctl_t ctl = ctl_of();
    int total = 0;
    bool seen = false, failed = false;
    for (uint64_t t0 = now_ms(); now_ms() - t0 < 5000;) {
        int n = rail_cma_share_help(&ctl, sh->gen, parent, sh->max, sh->flags, &failed);
        if (n > 0) {
            total += n;
            seen = true;
        }
        if (failed || n == 0 || (n < 0 && seen) || (sh->stop_after && total >= sh->stop_after))
            break;
    }
    sh->helper_chunks = total;
    sh->helper_failed = failed;
}

static void child_main(int in, int out, pid_t parent)
{
    me_idx = 1;
    for (char b; read(in, &b, 1) == 1;) {
        if (sh->op == OP_EXIT)
            break;
        if (sh->op == OP_HELP)
            child_help(parent);
        else if (sh->op == OP_NODUMP)
            prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        if (write(out, &b, 1) != 1)
            break;
    }
    _exit(0);
}

/* ------------------------------------------------------- plain transfers */

#define NL 3000
#define NR 2500

/* Read SRC_LEN - 7000 bytes of the child's src in NR pieces into NL local
 * pieces with gaps; every byte and gap checked. */
static void read_pieces(pid_t child, const uint8_t *src, const char *what)
{
    static struct iovec l[NL], r[NR];
    size_t bytes = SRC_LEN - 7000, span = bytes + 3 * NL;
    uint8_t *dst = malloc(span), *exp = malloc(bytes);
    EXPECT(dst && exp, "out of memory");
    memset(dst, 0xee, span);
    split(r, NR, (uint8_t *)src, bytes, 2, 7);
    split(l, NL, dst, bytes, 3, 11);
    size_t k = 0;
    for (int i = 0; i < NR; i++)
        for (size_t j = 0; j < r[i].iov_len; j++)
            exp[k++] = byte_a((size_t)((uint8_t *)r[i].iov_base - src) + j);
    int rc = rail_cma_xfer(child, l, NL, r, NR, 0);
    EXPECT(rc == MPI_SUCCESS, "%s: rail_cma_xfer %d (%s)", what, rc, rail_cma_error());
    size_t bad = 0, gaps = 0;
    k = 0;
    uint8_t *prev = dst;
    for (int i = 0; i < NL; i++) {
        for (uint8_t *g = prev; g < (uint8_t *)l[i].iov_base; g++)
            gaps += *g != 0xee;
        for (size_t j = 0; j < l[i].iov_len; j++, k++)
            bad += ((uint8_t *)l[i].iov_base)[j] != exp[k];
        prev = (uint8_t *)l[i].iov_base + l[i].iov_len;
    }
    EXPECT(bad == 0 && gaps == 0, "%s: %zu bytes wrong, %zu gap bytes written", what, bad, gaps);
    EXPECT(sh->proc[0].max_pieces <= RAIL_CMA_IOV_BATCH, "%s: %lu pieces in one call", what,
           sh->proc[0].max_pieces);
    EXPECT(sh->proc[0].bytes == bytes, "%s: %llu bytes moved, not %zu", what,
           (unsigned long long)sh->proc[0].bytes, bytes);
    free(dst);
    free(exp);
}

/* Write NL pieces into the child's dst (zeros) in NR pieces with gaps, read
 * the whole span back: the pieces hold the data, the gaps stay 0. */
static void write_pieces(pid_t child, uint8_t *dst_there)
{
    static struct iovec l[NL], r[NR];
    size_t bytes = 200000, span = bytes + 4 * NR;
    uint8_t *src = malloc(bytes), *back = malloc(span);
    EXPECT(src && back, "out of memory");
    for (size_t i = 0; i < bytes; i++)
        src[i] = (uint8_t)(i * 13 + 5);
    split(l, NL, src, bytes, 0, 3);
    split(r, NR, dst_there, bytes, 4, 5);
    int rc = rail_cma_xfer(child, l, NL, r, NR, RAIL_CMA_WRITE);
    EXPECT(rc == MPI_SUCCESS, "write: rail_cma_xfer %d (%s)", rc, rail_cma_error());
    EXPECT(rail_cma_read(child, back, (uint64_t)(uintptr_t)dst_there, span, 0) == MPI_SUCCESS,
           "read back");
    size_t bad = 0, k = 0;
    for (int i = 0; i < NR; i++) {
        size_t at = (size_t)((uint8_t *)r[i].iov_base - dst_there);
        for (size_t j = 0; j < r[i].iov_len; j++, k++)
            bad += back[at + j] != src[k];
        for (size_t g = 0; i < NR - 1 && g < 4; g++)
            bad += back[at + r[i].iov_len + g] != 0;
    }
    EXPECT(bad == 0, "write: %zu bytes wrong", bad);
    free(src);
    free(back);
}

static void transfers(pid_t child, const uint8_t *src, uint8_t *dst_there)
{
    calls_reset(0);
    read_pieces(child, src, "read");
    EXPECT(sh->proc[0].calls >= NL / RAIL_CMA_IOV_BATCH, "read in %lu calls", sh->proc[0].calls);
    calls_reset(0);
    sh->proc[0].cap = 1000;
    sh->proc[0].eintr_every = 3;
    read_pieces(child, src, "read, 1000 bytes a call, EINTR");
    EXPECT(sh->proc[0].calls > (SRC_LEN - 7000) / 1000, "partial reads: %lu calls",
           sh->proc[0].calls);
    calls_reset(0);
    write_pieces(child, dst_there);
    calls_reset(0);
    sh->proc[0].cap = 777;
    sh->proc[0].eintr_every = 2;
    write_pieces(child, dst_there);
    calls_reset(0);
    uint8_t one = 0;
    EXPECT(rail_cma_read(child, &one, (uint64_t)(uintptr_t)src, 0, 0) == MPI_SUCCESS &&
           sh->proc[0].calls == 0, "an empty transfer made a call");
}

/* ---------------------------------------------------------------- errors */

static int saved_stderr = -1, capture_fd = -1;

static void capture_begin(void)
{
    char path[] = "/tmp/rail_cma_test_XXXXXX";
    fflush(stderr);
    capture_fd = mkstemp(path);
    EXPECT(capture_fd >= 0, "mkstemp");
    unlink(path);
    saved_stderr = dup(2);
    dup2(capture_fd, 2);
}

/* What went to stderr since capture_begin, in buf. */
static void capture_end(char *buf, size_t size)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    ssize_t n = pread(capture_fd, buf, size - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    close(capture_fd);
}

static pid_t reaped_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

static void errors(pid_t child)
{
    char out[4096], pid_s[32];
    uint8_t b[64];
    pid_t gone = reaped_pid();
    snprintf(pid_s, sizeof(pid_s), "process %d", (int)gone);
    capture_begin();
    int rc = rail_cma_read(gone, b, (uint64_t)(uintptr_t)&magic_word, 8, RAIL_CMA_QUIET);
    int err = errno;
    capture_end(out, sizeof(out));
    EXPECT(rc == MPI_ERR_OTHER && err == ESRCH, "exited process, quiet: %d, errno %d", rc, err);
    EXPECT(strstr(rail_cma_error(), "process_vm_readv of 8 bytes") &&
           strstr(rail_cma_error(), pid_s) && strstr(rail_cma_error(), strerror(ESRCH)),
           "message: %s", rail_cma_error());
    EXPECT(out[0] == '\0', "a quiet failure printed: %s", out);

    capture_begin();
    rc = rail_cma_read(gone, b, (uint64_t)(uintptr_t)&magic_word, 8, 0);
    int rc2 = rail_cma_write(child, 16, b, sizeof(b), 0);   /* not mapped there */
    err = errno;
    capture_end(out, sizeof(out));
    EXPECT(rc == MPI_ERR_OTHER, "exited process: %d", rc);
    EXPECT(rc2 == MPI_ERR_ARG && err == EFAULT, "bad address: %d, errno %d", rc2, err);
    EXPECT(strstr(rail_cma_error(), "process_vm_writev of 64 bytes to"), "message: %s",
           rail_cma_error());
    const char *first = strstr(out, "process_vm_");
    EXPECT(first && strstr(out, pid_s) && strstr(out, "exited"), "warning: %s", out);
    EXPECT(first && !strstr(first + 1, "process_vm_"), "warned more than once: %s", out);
    EXPECT(rail_cma_probe_peer(gone, (uint64_t)(uintptr_t)&magic_word, MAGIC) == ESRCH,
           "probe of an exited process");
}

/* Last: the kernel refuses (EPERM) once the child is not dumpable and we
 * lack CAP_SYS_PTRACE. */
static void refused(pid_t child)
{
    EXPECT(test_drop_cap_sys_ptrace() == 0, "capset: %s", strerror(errno));
    child_do(OP_NODUMP);
    child_wait();
    uint64_t v = 0;
    int rc = rail_cma_read(child, &v, (uint64_t)(uintptr_t)&magic_word, 8, RAIL_CMA_QUIET);
    int err = errno;
    EXPECT(rc == MPI_ERR_OTHER && err == EPERM, "not dumpable: %d, errno %d", rc, err);
    EXPECT(strstr(rail_cma_error(), strerror(EPERM)) && strstr(rail_cma_error(), "not allowed"),
           "message: %s", rail_cma_error());
    EXPECT(rail_cma_probe_peer(child, (uint64_t)(uintptr_t)&magic_word, MAGIC) == EPERM,
           "probe of a process that is not dumpable");
}

static void probes(pid_t child)
{
    uint64_t at = (uint64_t)(uintptr_t)&magic_word;
    EXPECT(rail_cma_probe_self() == 0, "probe of ourselves");
    EXPECT(rail_cma_probe_peer(child, at, MAGIC) == 0, "probe of the child");
    EXPECT(rail_cma_probe_peer(child, at, MAGIC + 1) == EIO, "probe expecting another value");
    double r = rail_cma_kernel_ratio();
    EXPECT(r > 0 && r < 1e9, "kernel ratio %g", r);
    EXPECT(rail_cma_kernel_ratio() == r, "kernel ratio measured again");
}

/* ------------------------------------------------------------ shared copy */

static uint32_t next_gen = 100;

/* Start the child helping transfer gen (max chunks a call, flags); the
 * parent then publishes. */
static void help_start(uint32_t gen, uint32_t max, unsigned flags, int stop_after)
{
    sh->gen = gen;
    sh->stop_after = stop_after;
    sh->max = max;
    sh->flags = flags;
    sh->helper_chunks = 0;
    sh->helper_failed = 0;
    child_do(OP_HELP);
}

static bool wait_claimed(uint32_t n)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < 5000;)
        if (((rail_atomic_load_acquire(&sh->claim) >> 16) & 0xffff) >= n)
            return true;
    return false;
}

static void check_dst(const uint8_t *dst, size_t len, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        bad += dst[i] != byte_a(i);
    EXPECT(bad == 0, "%s: %zu bytes wrong", what, bad);
}

/* One shared transfer of SRC_LEN bytes; the child writing slowly (delay)
 * or failing (fail_errno), claiming one chunk only (wait_all false: we
 * copy the others, whatever the timing) or every chunk before we start. */
static rail_cma_share_t share_once(pid_t child, const uint8_t *src, uint8_t *dst, uint32_t max,
                                   unsigned flags, int delay_us, int fail_errno, bool wait_all,
                                   const char *what)
{
    rail_cma_share_ctl_t ctl = ctl_of();
    rail_cma_share_t t;
    uint32_t gen = next_gen++;
    calls_reset(0);
    calls_reset(1);
    sh->proc[1].delay_us = delay_us;
    sh->proc[1].fail_errno = fail_errno;
    memset(dst, 0xee, SRC_LEN);
    help_start(gen, max, flags, wait_all ? 0 : 1);
    rail_cma_share_publish(&t, &ctl, gen, child, dst, (uint64_t)(uintptr_t)src, SRC_LEN, 0);
    if (wait_all)
        child_wait();
    EXPECT(wait_claimed(1), "%s: the child claimed nothing", what);
    int rc = rail_cma_share_read(&t);
    if (!wait_all)
        child_wait();
    EXPECT(rc == MPI_SUCCESS, "%s: %d (%s)", what, rc, rail_cma_error());
    check_dst(dst, SRC_LEN, what);
    EXPECT(t.mine + t.helped == t.nch && (int)t.helped == sh->helper_chunks,
           "%s: %u + %u chunks of %u, the child counted %d", what, t.mine, t.helped, t.nch,
           sh->helper_chunks);
    EXPECT(t.chunk == rail_cma_share_chunk(SRC_LEN) && t.nch == 2, "%s: %u chunks of %zu", what,
           t.nch, t.chunk);
    /* a late helper, or one of another generation, claims nothing */
    bool failed = false;
    EXPECT(rail_cma_share_help(&ctl, gen, getpid(), 9, 0, &failed) == -1 &&
           rail_cma_share_help(&ctl, gen + 7, getpid(), 9, 0, &failed) == -1 && !failed,
           "%s: claimed after the end", what);
    return t;
}

static void shared(pid_t child, const uint8_t *src)
{
    uint8_t *dst = malloc(SRC_LEN);
    EXPECT(dst != NULL, "out of memory");
    /* both copy: the child one chunk a call, 20 ms a write */
    rail_cma_share_t t = share_once(child, src, dst, 1, 0, 20000, 0, false, "both copy");
    uint64_t theirs = sh->proc[1].bytes, ours = sh->proc[0].bytes;
    EXPECT(t.mine == t.nch - 1 && t.helped == 1 && !t.failed, "both copy: %u and %u chunks", t.mine,
           t.helped);
    EXPECT(ours + theirs == SRC_LEN && ours == (uint64_t)t.mine * t.chunk,
           "both copy: we read %llu bytes, the child wrote %llu, of %zu",
           (unsigned long long)ours, (unsigned long long)theirs, SRC_LEN);
    /* the child takes every chunk before we claim one */
    t = share_once(child, src, dst, UINT32_MAX, 0, 0, 0, true, "child copies all");
    EXPECT(t.mine == 0 && t.helped == t.nch && sh->proc[0].bytes == 0 &&
           sh->proc[1].bytes == SRC_LEN, "child copies all: we copied %u chunks", t.mine);
    /* the child's write fails: it stops, we copy its chunk again */
    t = share_once(child, src, dst, UINT32_MAX, 0, 20000, EPERM, false, "helper refused");
    EXPECT(t.failed && t.helped == 1 && sh->helper_failed && sh->proc[1].bytes == 0 &&
           sh->proc[0].bytes == SRC_LEN, "helper refused: failed %d, %u chunks, read %llu",
           t.failed, t.helped, (unsigned long long)sh->proc[0].bytes);
    EXPECT((sh->done >> 32) == 1, "helper refused: done word %#llx", (unsigned long long)sh->done);
    /* RAIL_CMA_SHARE_REFUSE: no write at all, the same outcome */
    t = share_once(child, src, dst, 1, RAIL_CMA_SHARE_REFUSE, 0, 0, false, "pretended refusal");
    EXPECT(t.failed && sh->proc[1].calls == 0 && sh->proc[0].bytes == SRC_LEN,
           "pretended refusal: failed %d, the child made %lu calls", t.failed, sh->proc[1].calls);
    /* a cancelled transfer: nothing to claim */
    rail_cma_share_ctl_t ctl = ctl_of();
    bool failed = false;
    rail_cma_share_publish(&t, &ctl, next_gen, child, dst, (uint64_t)(uintptr_t)src, SRC_LEN, 0);
    rail_cma_share_cancel(&t);
    EXPECT(rail_cma_share_help(&ctl, next_gen++, getpid(), 9, 0, &failed) == -1,
           "a cancelled transfer was claimed");
    EXPECT(rail_cma_share_chunk(RAIL_CMA_SHARE_MIN) == RAIL_CMA_SHARE_CHUNK_MIN &&
           rail_cma_share_chunk((size_t)8 << 20) == (size_t)4 << 20, "chunk policy");
    free(dst);
}

int main(void)
{
    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    uint8_t *src = malloc(SRC_LEN), *dst_there = calloc(1, 1 << 20);
    int down[2], up[2];
    CHECK(sh != MAP_FAILED && src && dst_there && !pipe(down) && !pipe(up), "setup");
    memset(sh, 0, sizeof(*sh));
    for (size_t i = 0; i < SRC_LEN; i++)
        src[i] = byte_a(i);
    pid_t parent = getpid(), child = fork();
    if (child == 0)
        child_main(down[0], up[1], parent);
    to_child = down[1];
    from_child = up[0];
    memset(src, 0x11, SRC_LEN);    /* ours differs from the child's from now on */
    magic_word = 0;
    transfers(child, src, dst_there);
    probes(child);
    shared(child, src);
    errors(child);
    refused(child);
    child_do(OP_EXIT);
    waitpid(child, NULL, 0);
    return check_report("cma_test");
}
