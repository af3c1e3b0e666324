/*
 * Single copy: every rank registers a source buffer and an inbox, sends the
 * registrations to all peers, and then gets from / puts to each peer with
 * noncontiguous iovecs on both sides (different splits, gaps that must stay
 * untouched, and more pieces than one system call takes), checks errors
 * (foreign cookie, range, length mismatch).  With btl_sm_single_copy=none:
 * get/put flags are off, get fails, and the same bytes go through sends in
 * max_send_size pieces (the pml's copy-in/copy-out path).  Last, CMA refused
 * by the kernel towards one peer (rank 1 not dumpable, nobody holding
 * CAP_SYS_PTRACE: EPERM): the ranks that cannot read rank 1 clear their
 * get/put flags in add_procs; rank 1, which can read the others, keeps them.
 * Shared gets (from btl_sm_get_share_min): rank 0 gets 1 MiB from rank 1
 * while rank 1 progresses (until rank 1 has written part of one), and while
 * rank 1 is away in a fence: rank 0 then copies alone, and that request,
 * which rank 1 finds while rank 0's next gets run, must take no part in them.
 * With CMA refused towards rank 1, rank 0 cannot help rank 1's gets: the
 * data still arrive and rank 1 stops asking.
 */
#include "test/btl/sm/sm_test.h"
#include "btl/sm/sm.h"
#include "runtime/rte.h"
#include "test/ptrace_cap.h"

#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define SRC_LEN ((1 << 20) + 4099)
#define CHUNK (64 * 1024 + 123)
#define CARD_TAG 5
#define COPY_TAG 6
#define SENTINEL 0xEE

enum { MODE_CMA, MODE_NONE, MODE_REFUSED };

typedef struct cma_card {
    btl_reg_t src, inbox;
    uint64_t src_addr, inbox_addr;
} cma_card_t;

static cma_card_t cards[SM_TEST_MAX_PROCS];
static volatile long cards_received, copied_bytes;
static uint8_t *copy_in[SM_TEST_MAX_PROCS];
static int done_calls;

static uint8_t src_byte(int rank, size_t off)
{
    return (uint8_t)(rank * 101 + off * 7 + (off >> 9));
}

static uint8_t put_byte(int from, int to, size_t k)
{
    return (uint8_t)(from * 13 + to * 17 + k * 3 + 1);
}

static void card_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                      const void *payload, size_t len)
{
    CHECK(len == sizeof(cma_card_t), "card of %zu bytes", len);
    memcpy(&cards[ep->rank], payload, len);
    cards_received++;
}

static void copy_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                      const void *payload, size_t len)
{
    uint64_t off;
    memcpy(&off, hdr, sizeof(off));
    CHECK(off + len <= SRC_LEN, "copy piece out of range");
    memcpy(copy_in[ep->rank] + off, payload, len);
    copied_bytes += (long)len;
}

static void on_done(void *cbdata, int status)
{
    CHECK(status == MPI_SUCCESS, "done status %d", status);
    done_calls++;
}

static uint32_t lcg(uint32_t *s) { return *s = *s * 1103515245u + 12345u; }

/* n pieces covering `bytes` bytes, gap bytes apart from base; returns the span. */
static size_t split(struct iovec *iov, int n, uint8_t *base, size_t bytes, size_t gap,
                    uint32_t seed)
{
    size_t off = 0, left = bytes;
    for (int i = 0; i < n; i++) {
        size_t rnd = 1 + lcg(&seed) % (2 * bytes / (size_t)n + 1);
        size_t len = i == n - 1 ? left : RAIL_MIN(left - (size_t)(n - 1 - i), rnd);
        iov[i] = (struct iovec){base + off, len};
        off += len + gap;
        left -= len;
    }
    return off;
}

/* Get `bytes` from peer p in n_r remote pieces into n_l local pieces; check. */
static void get_pieces(btl_module_t *m, btl_endpoint_t *ep, int p, int n_l, int n_r,
                       size_t bytes, uint32_t seed)
{
    struct iovec *l = calloc((size_t)n_l, sizeof(*l)), *r = calloc((size_t)n_r, sizeof(*r));
    size_t gap_l = 5, span = bytes + (size_t)n_l * gap_l;
    uint8_t *dst = malloc(span), *exp = malloc(bytes);
    CHECK(l && r && dst && exp, "out of memory");
    memset(dst, SENTINEL, span);
    uint8_t *rbase = (uint8_t *)(uintptr_t)cards[p].src_addr;
    CHECK(split(r, n_r, rbase, bytes, 3, seed) <= SRC_LEN + 3 * (size_t)n_r, "span");
    split(l, n_l, dst, bytes, gap_l, seed * 7 + 1);
    size_t k = 0;
    for (int i = 0; i < n_r; i++)
        for (size_t j = 0; j < r[i].iov_len; j++)
            exp[k++] = src_byte(p, (size_t)((uint8_t *)r[i].iov_base - rbase) + j);
    int before = done_calls;
    int rc = m->get(m, ep, l, n_l, &cards[p].src, r, n_r, 0, on_done, NULL);
    CHECK(rc == MPI_SUCCESS && done_calls == before + 1, "get: %d", rc);
    k = 0;
    uint8_t *prev_end = dst;
    for (int i = 0; i < n_l; i++) {
        for (uint8_t *g = prev_end; g < (uint8_t *)l[i].iov_base; g++)
            CHECK(*g == SENTINEL, "gap byte written");
        for (size_t j = 0; j < l[i].iov_len; j++, k++)
            CHECK(((uint8_t *)l[i].iov_base)[j] == exp[k], "from %d: byte %zu", p, k);
        prev_end = (uint8_t *)l[i].iov_base + l[i].iov_len;
    }
    free(l), free(r), free(dst), free(exp);
}

/* Put into our region of p's inbox in 9 remote pieces (gaps stay 0). */
static void put_pieces(btl_module_t *m, btl_endpoint_t *ep, int p, int rank)
{
    enum { NL = 4, NR = 9, GAP = 16 };
    struct iovec l[NL], r[NR];
    size_t bytes = CHUNK - NR * GAP;
    uint8_t *src = malloc(bytes);
    CHECK(src, "out of memory");
    for (size_t k = 0; k < bytes; k++)
        src[k] = put_byte(rank, p, k);
    split(l, NL, src, bytes, 0, 11);
    split(r, NR, (uint8_t *)(uintptr_t)cards[p].inbox_addr + (size_t)rank * CHUNK, bytes, GAP, 5);
    int before = done_calls;
    int rc = m->put(m, ep, l, NL, &cards[p].inbox, r, NR, on_done, NULL);
    CHECK(rc == MPI_SUCCESS && done_calls == before + 1, "put: %d", rc);
    free(src);
}

static void check_inbox(const uint8_t *inbox, int rank, int size)
{
    enum { NR = 9, GAP = 16 };
    struct iovec r[NR];
    size_t bytes = CHUNK - NR * GAP;
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        const uint8_t *region = inbox + (size_t)p * CHUNK;
        split(r, NR, (uint8_t *)region, bytes, GAP, 5);
        size_t k = 0;
        for (int i = 0; i < NR; i++) {
            for (size_t j = 0; j < r[i].iov_len; j++, k++)
                CHECK(((uint8_t *)r[i].iov_base)[j] == put_byte(p, rank, k), "inbox from %d", p);
            for (size_t g = 0; i < NR - 1 && g < GAP; g++)
                CHECK(((uint8_t *)r[i].iov_base)[r[i].iov_len + g] == 0, "inbox gap written");
        }
    }
}

static void bad_calls(btl_module_t *m, btl_endpoint_t *ep, int p, btl_endpoint_t *other)
{
    uint8_t buf[64];
    struct iovec l = {buf, sizeof(buf)}, r = {(void *)(uintptr_t)cards[p].src_addr, sizeof(buf)};
    struct iovec out = {(void *)(uintptr_t)(cards[p].src_addr + SRC_LEN - 8), sizeof(buf)};
    struct iovec shorter = {buf, 8};
    int before = done_calls;
    btl_reg_t reg = cards[p].src;
    reg.bytes[8] ^= 1; /* the cookie */
    CHECK(m->get(m, ep, &l, 1, &reg, &r, 1, 0, on_done, NULL) == MPI_ERR_ARG, "foreign cookie");
    CHECK(m->get(m, ep, &l, 1, &cards[p].src, &out, 1, 0, on_done, NULL) == MPI_ERR_ARG, "range");
    CHECK(m->get(m, ep, &shorter, 1, &cards[p].src, &r, 1, 0, on_done, NULL) == MPI_ERR_ARG,
          "length mismatch");
    if (other)
        CHECK(m->get(m, other, &l, 1, &cards[p].src, &r, 1, 0, on_done, NULL) == MPI_ERR_ARG,
              "registration of another process");
    CHECK(done_calls == before, "done called on error");
}

static void copy_in_out(btl_module_t *m, btl_endpoint_t **eps, const uint8_t *src, int rank,
                        int size)
{
    size_t piece = m->max_send_size - sizeof(uint64_t);
    for (int p = 0; p < size; p++)
        if (p != rank)
            CHECK((copy_in[p] = malloc(SRC_LEN)) != NULL, "out of memory");
    btl_register_recv(COPY_TAG, copy_recv);
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    for (uint64_t off = 0; off < SRC_LEN; off += piece)
        for (int k = 1; k < size; k++)
            sm_test_send(m, eps[(rank + k) % size], COPY_TAG, &off, sizeof(off), src + off,
                         RAIL_MIN(piece, SRC_LEN - off));
    sm_test_progress_until(m, &copied_bytes, (long)SRC_LEN * (size - 1));
    for (int p = 0; p < size; p++)
        for (size_t i = 0; p != rank && i < SRC_LEN; i++)
            CHECK(copy_in[p][i] == src_byte(p, i), "copied from %d: byte %zu", p, i);
}

/* Make reading rank 1 fail with EPERM, as under ptrace restrictions. */
static void refuse_cma_to_rank1(int rank)
{
    CHECK(test_drop_cap_sys_ptrace() == 0, "capset");
    if (rank == 1)
        CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0, "PR_SET_DUMPABLE");
}

/* Gets of many shapes from p, a put into p's inbox, and wrong calls. */
static void single_copy(btl_module_t *m, btl_endpoint_t **eps, int p, int rank, int size)
{
    int other = (p + 1) % size == rank ? (p + 2) % size : (p + 1) % size;
    get_pieces(m, eps[p], p, 1, 1, SRC_LEN, 1);
    get_pieces(m, eps[p], p, 7, 13, SRC_LEN - 100, 2 + (uint32_t)rank);
    get_pieces(m, eps[p], p, 300, 700, 5600, 3);
    get_pieces(m, eps[p], p, 1, 1, 0, 4);
    put_pieces(m, eps[p], p, rank);
    bad_calls(m, eps[p], p, other != rank && other != p ? eps[other] : NULL);
}

static void get_refused(btl_module_t *m, btl_endpoint_t *ep, int p)
{
    uint8_t b[8];
    struct iovec l = {b, 8}, r = {(void *)(uintptr_t)cards[p].src_addr, 8};
    CHECK(m->get(m, ep, &l, 1, &cards[p].src, &r, 1, 0, on_done, NULL) != MPI_SUCCESS,
          "get worked without single copy");
}

#define SHARE_LEN (1 << 20)
#define SHARE_TRIES 400
#define SHARE_TAG 7
static volatile long share_stop;

static void share_stop_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                            const void *payload, size_t len)
{
    share_stop++;
}

/* Get SHARE_LEN bytes of p's source into dst (poisoned first) and check
 * them; then progress, as an MPI process would between gets (our FIFO
 * buffers come back to us only then, and a request for help that finds
 * none left is not sent). */
static void get_flags(btl_module_t *m, btl_endpoint_t *ep, int p, uint8_t *dst, unsigned flags,
                      const char *what, int i)
{
    struct iovec l = {dst, SHARE_LEN}, r = {(void *)(uintptr_t)cards[p].src_addr, SHARE_LEN};
    memset(dst, SENTINEL, SHARE_LEN);
    CHECK(m->get(m, ep, &l, 1, &cards[p].src, &r, 1, flags, on_done, NULL) == MPI_SUCCESS, "%s %d",
          what, i);
    for (size_t k = 0; k < SHARE_LEN; k++)
        CHECK(dst[k] == src_byte(p, k), "%s %d: byte %zu", what, i, k);
    m->progress(m);
}

static void get_whole(btl_module_t *m, btl_endpoint_t *ep, int p, uint8_t *dst, const char *what,
                      int i)
{
    get_flags(m, ep, p, dst, 0, what, i);
}

/* Rank 0 gets from rank 1: first with rank 1 progressing, then away. */
static void shared_gets(btl_module_t *m, btl_endpoint_t **eps, int rank)
{
    btl_register_recv(SHARE_TAG, share_stop_recv);
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    if (rank == 1) {
        sm_test_progress_until(m, &share_stop, 1);
        CHECK(btl_sm_count_share_chunks_out > 0, "rank 1 helped with no get");
    } else if (rank == 0) {
        uint8_t *dst = malloc(SHARE_LEN);
        CHECK(dst, "out of memory");
        const uint64_t gets0 = btl_sm_count_share_gets;
        int i;
        for (i = 0; i < SHARE_TRIES && btl_sm_count_share_chunks_in == 0; i++)
            get_whole(m, eps[1], 1, dst, "shared get", i);
        CHECK(btl_sm_count_share_gets - gets0 == (uint64_t)i && btl_sm_count_share_chunks_in > 0,
              "%d shared gets (counted %llu): rank 1 wrote none", i,
              (unsigned long long)(btl_sm_count_share_gets - gets0));
        /* Marked BTL_GET_ALONE (the pml's messages both ways): rank 1,
         * though it would help, is not asked. */
        const uint64_t asked = btl_sm_count_share_gets, in = btl_sm_count_share_chunks_in;
        for (int k = 0; k < 4; k++)
            get_flags(m, eps[1], 1, dst, BTL_GET_ALONE, "get alone", k);
        CHECK(btl_sm_count_share_gets == asked && btl_sm_count_share_chunks_in == in,
              "gets marked BTL_GET_ALONE asked for help (%llu) or got it (%llu chunks)",
              (unsigned long long)(btl_sm_count_share_gets - asked),
              (unsigned long long)(btl_sm_count_share_chunks_in - in));
        sm_test_send(m, eps[1], SHARE_TAG, NULL, 0, NULL, 0);
        free(dst);
    }
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    /* Rank 1 away in the fence: rank 0 copies everything itself. */
    uint64_t in0 = btl_sm_count_share_chunks_in;
    uint8_t *late = rank == 0 ? malloc(SHARE_LEN) : NULL, *next = rank == 0 ? malloc(SHARE_LEN) : NULL;
    if (rank == 0) {
        CHECK(late && next, "out of memory");
        get_whole(m, eps[1], 1, late, "get without help", 0);
        CHECK(btl_sm_count_share_chunks_in == in0, "rank 1 wrote while in a fence");
        memset(late, SENTINEL, SHARE_LEN);
    }
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    /* The stale request reaches rank 1 while rank 0's next gets run: it
     * must take no chunk of them (it would write them into `late`). */
    if (rank == 1) {
        sm_test_progress_until(m, &share_stop, 2);
    } else if (rank == 0) {
        for (int i = 0; i < 20; i++)
            get_whole(m, eps[1], 1, next, "get after the fence", i);
        sm_test_send(m, eps[1], SHARE_TAG, NULL, 0, NULL, 0);
        for (size_t k = 0; k < SHARE_LEN; k++)
            CHECK(late[k] == SENTINEL, "a stale request wrote byte %zu", k);
        free(late);
        free(next);
    }
}

/* CMA refused towards rank 1 only: rank 1 gets from rank 0, which cannot
 * write into rank 1 when asked to help: every byte still arrives, and rank
 * 1 stops asking rank 0 once it has seen that. */
static void shared_get_refused(btl_module_t *m, btl_endpoint_t **eps, int rank)
{
    btl_register_recv(SHARE_TAG, share_stop_recv);
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    if (rank == 0) {
        sm_test_progress_until(m, &share_stop, 1);
        CHECK(btl_sm_count_share_chunks_out > 0, "rank 0 was never asked to help");
    } else if (rank == 1) {
        uint8_t *dst = malloc(SHARE_LEN);
        CHECK(dst, "out of memory");
        for (int i = 0; i < SHARE_TRIES && !eps[0]->no_share; i++)
            get_whole(m, eps[0], 0, dst, "get from rank 0", i);
        CHECK(eps[0]->no_share, "rank 0 never failed to help (%llu shared gets)",
              (unsigned long long)btl_sm_count_share_gets);
        uint64_t asked = btl_sm_count_share_gets;
        get_whole(m, eps[0], 0, dst, "get after the refusal", 0);
        CHECK(btl_sm_count_share_gets == asked, "rank 0 asked again after it could not help");
        sm_test_send(m, eps[0], SHARE_TAG, NULL, 0, NULL, 0);
        free(dst);
    }
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
}

static int cma_main(int rank, int size, void *arg)
{
    int mode = (int)(intptr_t)arg;
    if (mode == MODE_REFUSED)
        refuse_cma_to_rank1(rank);
    bool cma = mode == MODE_CMA || (mode == MODE_REFUSED && rank == 1);
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    uint8_t *src = malloc(SRC_LEN), *inbox = calloc((size_t)size, CHUNK);
    cma_card_t card = {.src_addr = (uintptr_t)src, .inbox_addr = (uintptr_t)inbox};

    CHECK(src && inbox, "out of memory");
    for (size_t i = 0; i < SRC_LEN; i++)
        src[i] = src_byte(rank, i);
    uint32_t want = BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV;
    CHECK((m->flags & want) == (cma ? want : 0), "flags %#x", m->flags);
    CHECK(!(m->flags & BTL_FLAG_DEVICE_MEM) && m->get_limit == 0, "flags");
    CHECK(m->register_mem(m, src, SRC_LEN, &card.src) == MPI_SUCCESS, "register");
    CHECK(m->register_mem(m, inbox, (size_t)size * CHUNK, &card.inbox) == MPI_SUCCESS, "reg");
    btl_register_recv(CARD_TAG, card_recv);
    for (int k = 1; k < size; k++)
        sm_test_send(m, eps[(rank + k) % size], CARD_TAG, NULL, 0, &card, sizeof(card));
    sm_test_progress_until(m, &cards_received, size - 1);

    for (int k = 1; k < size; k++) {
        int p = (rank + k) % size;
        if (mode == MODE_CMA)
            single_copy(m, eps, p, rank, size);
        else if (!cma)
            get_refused(m, eps[p], p);
    }
    if (mode == MODE_CMA) {
        CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
        check_inbox(inbox, rank, size);
        shared_gets(m, eps, rank);
        CHECK(m->deregister_mem(m, &card.src) == MPI_SUCCESS, "deregister");
    } else {
        copy_in_out(m, eps, src, rank, size);
        if (mode == MODE_REFUSED)
            shared_get_refused(m, eps, rank);
    }
    sm_test_fini(m, eps);
    return 0;
}

int main(void)
{
    static const int nprocs[] = {2, 3};
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(nprocs); i++) {
        sm_test_opts_t o = {.kill_rank = -1};
        sm_test_run("cma get/put iovecs", nprocs[i], cma_main, (void *)MODE_CMA, &o);
        o.env = "RAIL_BTL_SM_SINGLE_COPY=none";
        sm_test_run("single copy none: copy in/out", nprocs[i], cma_main, (void *)MODE_NONE, &o);
        o.env = NULL;
        sm_test_run("cma refused by rank 1: flags, copy in/out", nprocs[i], cma_main,
                    (void *)MODE_REFUSED, &o);
    }
    return check_report("test_btl_sm_cma");
}
