/*
 * btl ofi over tcp;ofi_rxm between forked processes on loopback
 * (FI_TCP_IFACE=lo: the tcp provider never binds the real interface).
 * Uses the btl tcp tests' harness and fake rte (test/btl/tcp/tcp_test.h).
 *
 *   sizes    every rank sends every other messages of 0 B to max_send_size,
 *            headers of 0..64 bytes, some payloads by pack callback; order
 *            and every byte checked; FI_MULTI_RECV and posted buffers,
 *            with and without btl_ofi_mr_strict.
 *   again    4 send buffers, a peer that does not progress for 300 ms:
 *            send says RAIL_AGAIN, and everything arrives in order after.
 *   rma      get of a registered 4 MiB buffer, get and put with iovecs of
 *            40 pieces (more than the provider takes in one operation), a
 *            put followed by a message: the target sees the bytes when the
 *            message arrives (FI_DELIVERY_COMPLETE).
 *   sleep    after fi_trywait says so, a process blocks on wait_fd and a
 *            message wakes it.
 *   badname  an unknown name in btl_ofi_provider: init fails with
 *            MPI_ERR_ARG and the message names the parameter.
 */
#include "test/btl/tcp/tcp_test.h"
#include "btl/ofi/ofi.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <poll.h>
#include <string.h>
#include <unistd.h>

#define ENV "FI_TCP_IFACE=lo RAIL_BTL_OFI_PROVIDER=tcp;ofi_rxm RAIL_BTL_OFI_LOCAL_PEERS=1 "
#define TAG_MSG 3
#define TAG_CTL 4

bool btl_base_selected(const char *name) { return true; }

static btl_module_t *ofi_init(btl_endpoint_t ***eps_out)
{
    return tcp_test_init_component(&btl_ofi_component, eps_out);
}

/* ------------------------------------------------------------ messages */

typedef struct msg_hdr {
    uint32_t src, seq, len, hdr_len;
} msg_hdr_t;

static uint32_t *next_seq;      /* per sender */
static volatile long received;

static uint8_t pattern(uint32_t src, uint32_t seq, size_t i)
{
    return (uint8_t)(src * 31 + seq * 7 + i * 13 + (i >> 8));
}

static void msg_cb(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                   const void *payload, size_t len)
{
    msg_hdr_t h;
    CHECK(hdr_len >= sizeof(h) && ((uintptr_t)hdr & 7) == 0 && ((uintptr_t)payload & 7) == 0,
          "header %zu bytes at %p, payload at %p", hdr_len, hdr, payload);
    memcpy(&h, hdr, sizeof(h));
    CHECK(ep && ep->rank == (int)h.src, "message of rank %u on the endpoint of %d", h.src,
          ep ? ep->rank : -1);
    CHECK(h.seq == next_seq[h.src], "from %u: message %u, expected %u", h.src, h.seq,
          next_seq[h.src]);
    CHECK(h.len == len && h.hdr_len == hdr_len, "payload %zu (want %u), header %zu (want %u)",
          len, h.len, hdr_len, h.hdr_len);
    for (size_t i = sizeof(h); i < hdr_len; i++)
        CHECK(((const uint8_t *)hdr)[i] == (uint8_t)i, "header byte %zu", i);
    const uint8_t *p = payload;
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == pattern(h.src, h.seq, i), "message %u: byte %zu of %zu", h.seq, i, len);
    next_seq[h.src]++;
    received++;
}

static int pack_cb(void *ctx, void *dst, size_t len)
{
    const msg_hdr_t *h = ctx;
    for (size_t i = 0; i < len; i++)
        ((uint8_t *)dst)[i] = pattern(h->src, h->seq, i);
    return MPI_SUCCESS;
}

static uint32_t seq_out[TCP_TEST_MAX_PROCS];

/* Send one checked message of len bytes; the RAIL_AGAINs it took. */
static long msg_send(btl_module_t *m, btl_endpoint_t *ep, int dst, size_t len)
{
    static uint8_t buf[1 << 20];
    uint8_t hb[64];
    uint32_t seq = seq_out[dst]++;
    size_t hdr_len = sizeof(msg_hdr_t) + (seq % 13) * 4;
    msg_hdr_t h = {(uint32_t)rte_info.rank, seq, (uint32_t)len, (uint32_t)hdr_len};
    for (size_t i = 0; i < hdr_len; i++)
        hb[i] = (uint8_t)i;
    memcpy(hb, &h, sizeof(h));
    btl_payload_t p = {.data = buf, .len = len};
    if (seq % 3 == 1)
        p = (btl_payload_t){.len = len, .pack = pack_cb, .ctx = &h};
    else
        for (size_t i = 0; i < len; i++)
            buf[i] = pattern(h.src, seq, i);
    long again = tcp_test_send(m, ep, TAG_MSG, hb, hdr_len, &p);
    memset(buf, 0xa5, len);      /* the caller may reuse its buffer at once */
    return again;
}

static void msg_init(void)
{
    next_seq = calloc(TCP_TEST_MAX_PROCS, sizeof(*next_seq));
    CHECK(next_seq, "out of memory");
    received = 0;
    btl_register_recv(TAG_MSG, msg_cb);
}

/* Progress until every send completed (tcp;ofi_rxm serves a large
 * message's rendezvous only while the sender progresses), then fence. */
static void fence(btl_module_t *m)
{
    double start = tcp_test_now();
    while (m->pending(m) > 0) {
        tcp_test_progress(m, 1);
        CHECK(tcp_test_now() - start < 30, "%zu bytes still in flight after 30 s", m->pending(m));
    }
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
}

static void fini(btl_module_t *m, btl_endpoint_t **eps)
{
    int size = rte_info.size;
    btl_proc_t *procs = calloc((size_t)size, sizeof(*procs));
    CHECK(procs, "out of memory");
    for (int i = 0; i < size; i++)
        procs[i] = (btl_proc_t){.rank = i};
    fence(m);
    CHECK(m->del_procs(m, size, procs, eps) == MPI_SUCCESS, "del_procs");
    CHECK(m->finalize(m) == MPI_SUCCESS, "finalize");
    free(procs);
    free(eps);
}

static int t_sizes(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = ofi_init(&eps);
    const size_t max = m->max_send_size - 64;
    const size_t sizes[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4000, 4095, 4096, 4097, 16384,
                            65536, 100000, max - 1, max};
    const int n_sizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    msg_init();
    long sent = 0;
    for (int rep = 0; rep < 3; rep++)
        for (int i = 0; i < n_sizes; i++)
            for (int k = 1; k < size && sizes[i] <= max; k++, sent++)
                msg_send(m, eps[(rank + k) % size], (rank + k) % size, sizes[i]);
    tcp_test_progress_until(m, &received, sent, 60);
    fini(m, eps);
    return 0;
}

static int t_again(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = ofi_init(&eps);
    long again = 0;
    msg_init();
    fence(m);
    if (rank == 1)
        usleep(300 * 1000);
    for (int i = 0; i < 64; i++)
        again += msg_send(m, eps[rank ^ 1], rank ^ 1, 60000 + (size_t)i);
    tcp_test_progress_until(m, &received, 64, 60);
    if (rank == 0)
        CHECK(again > 0, "send never said RAIL_AGAIN with 4 buffers and a sleeping peer");
    fini(m, eps);
    return 0;
}

/* ------------------------------------------------------------ rma */

#define RMA_LEN (4u << 20)
#define PIECES 40

typedef struct rma_desc {
    btl_reg_t reg;
    uint64_t src, dst;            /* rank 1's buffers */
} rma_desc_t;

static rma_desc_t desc;
static volatile long ctl_count;
static volatile long done_count;
static int done_status;

static void ctl_cb(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                   const void *payload, size_t len)
{
    if (len == sizeof(desc))
        memcpy(&desc, payload, sizeof(desc));
    ctl_count++;
}

static void rma_done(void *cbdata, int status)
{
    if (status != MPI_SUCCESS)
        done_status = status;
    done_count++;
}

/* n pieces of buf (every other 1000-byte stretch skipped) and the bytes. */
static size_t pieces(uint64_t base, struct iovec *iov, int n)
{
    for (int i = 0; i < n; i++)
        iov[i] = (struct iovec){(void *)(uintptr_t)(base + (uint64_t)i * 2000 + 7), 999 + i};
    size_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += iov[i].iov_len;
    return sum;
}

static void wait_done(btl_module_t *m, long target)
{
    tcp_test_progress_until(m, &done_count, target, 30);
    CHECK(done_status == MPI_SUCCESS, "get/put completed with %d", done_status);
}

static void rma_origin(btl_module_t *m, btl_endpoint_t *peer)
{
    uint8_t *buf = malloc(RMA_LEN), *src = malloc(RMA_LEN);
    struct iovec l[PIECES], r[PIECES];
    CHECK(buf && src, "out of memory");
    tcp_test_progress_until(m, &ctl_count, 1, 30);
    struct iovec whole = {buf, RMA_LEN}, rwhole = {(void *)(uintptr_t)desc.src, RMA_LEN};
    CHECK(m->get(m, peer, &whole, 1, &desc.reg, &rwhole, 1, 0, rma_done, NULL) == MPI_SUCCESS);
    wait_done(m, 1);
    for (size_t i = 0; i < RMA_LEN; i++)
        CHECK(buf[i] == pattern(1, 0, i), "get: byte %zu", i);
    /* iovecs: local contiguous, remote in pieces */
    memset(buf, 0, RMA_LEN);
    size_t bytes = pieces(desc.src, r, PIECES);
    struct iovec lone = {buf, bytes};
    CHECK(m->get(m, peer, &lone, 1, &desc.reg, r, PIECES, 0, rma_done, NULL) == MPI_SUCCESS);
    wait_done(m, 2);
    for (size_t i = 0, k = 0; i < PIECES; i++)
        for (size_t j = 0; j < r[i].iov_len; j++, k++)
            CHECK(buf[k] == pattern(1, 0, (uintptr_t)r[i].iov_base - desc.src + j),
                  "iovec get: piece %zu byte %zu", i, j);
    /* put of pieces to pieces, then a message */
    for (size_t i = 0; i < RMA_LEN; i++)
        src[i] = pattern(0, 5, i);
    pieces((uint64_t)(uintptr_t)src, l, PIECES);
    pieces(desc.dst, r, PIECES);
    CHECK(m->put(m, peer, l, PIECES, &desc.reg, r, PIECES, rma_done, NULL) == MPI_SUCCESS);
    wait_done(m, 3);
    btl_payload_t none = {.data = "", .len = 0};
    tcp_test_send(m, peer, TAG_CTL, NULL, 0, &none);
    free(buf);
    free(src);
}

static void rma_target(btl_module_t *m, btl_endpoint_t *peer)
{
    uint8_t *buf = malloc(2 * RMA_LEN);
    struct iovec r[PIECES];
    CHECK(buf, "out of memory");
    for (size_t i = 0; i < RMA_LEN; i++)
        buf[i] = pattern(1, 0, i);
    memset(buf + RMA_LEN, 0, RMA_LEN);
    rma_desc_t d = {.src = (uintptr_t)buf, .dst = (uintptr_t)buf + RMA_LEN};
    CHECK(m->register_mem(m, buf, 2 * RMA_LEN, &d.reg) == MPI_SUCCESS, "register_mem");
    btl_payload_t p = {.data = &d, .len = sizeof(d)};
    tcp_test_send(m, peer, TAG_CTL, NULL, 0, &p);
    /* progress (tcp;ofi_rxm needs the target to) until the put's message */
    tcp_test_progress_until(m, &ctl_count, 1, 60);
    pieces(d.dst, r, PIECES);
    for (size_t i = 0; i < PIECES; i++)
        for (size_t j = 0; j < r[i].iov_len; j++) {
            size_t off = (size_t)((uintptr_t)r[i].iov_base - d.dst + j);
            CHECK(buf[RMA_LEN + off] == pattern(0, 5, off), "put: piece %zu byte %zu", i, j);
        }
    CHECK(m->deregister_mem(m, &d.reg) == MPI_SUCCESS, "deregister_mem");
    free(buf);
}

static int t_rma(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = ofi_init(&eps);
    CHECK((m->flags & (BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV)) ==
          (BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV), "flags 0x%x", m->flags);
    btl_register_recv(TAG_CTL, ctl_cb);
    if (rank == 0)
        rma_origin(m, eps[1]);
    else
        rma_target(m, eps[0]);
    fini(m, eps);
    return 0;
}

/* ------------------------------------------------------------ sleep */

static int t_sleep(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = ofi_init(&eps);
    btl_payload_t p = {.data = "abc", .len = 3};
    CHECK(m->wait_fd >= 0 && m->sleep_prepare, "tcp;ofi_rxm offers no wait fd");
    btl_register_recv(TAG_CTL, ctl_cb);
    fence(m);
    if (rank == 1) {
        usleep(200 * 1000);
        tcp_test_send(m, eps[0], TAG_CTL, NULL, 0, &p);
    } else {
        double t0 = tcp_test_now();
        while (ctl_count == 0 && tcp_test_now() - t0 < 5) {
            if (m->progress(m) > 0 || !m->sleep_prepare(m))
                continue;
            struct pollfd pf = {.fd = m->wait_fd, .events = POLLIN};
            poll(&pf, 1, 5000);
        }
        double waited = tcp_test_now() - t0;
        CHECK(ctl_count == 1, "no message within 5 s");
        CHECK(waited < 1.5, "woke after %.3f s", waited);
    }
    fini(m, eps);
    return 0;
}

static int t_badname(int rank, int size, void *arg)
{
    btl_module_t *mods[1];
    int n = 1;
    btl_ofi_component.register_params();
    int rc = btl_ofi_component.init(mods, &n);
    CHECK(rc == MPI_ERR_ARG && n == 0, "init returned %d with %d modules", rc, n);
    return 0;
}

int main(int argc, char **argv)
{
    tcp_test_opts_t o = {.timeout_s = 120, .env = ENV};
    tcp_test_run("sizes, FI_MULTI_RECV", 3, t_sizes, NULL, &o);
    o.env = ENV "RAIL_BTL_OFI_MULTI_RECV=0 RAIL_BTL_OFI_RECV_BUFS=4";
    tcp_test_run("sizes, posted buffers", 2, t_sizes, NULL, &o);
    o.env = ENV "RAIL_BTL_OFI_MR_STRICT=1 RAIL_BTL_OFI_MAX_SEND_SIZE=64k";
    tcp_test_run("sizes, strict registration", 3, t_sizes, NULL, &o);
    o.env = ENV "RAIL_BTL_OFI_SEND_BUFS=2";
    tcp_test_run("RAIL_AGAIN with 2 send buffers", 2, t_again, NULL, &o);
    o.env = ENV;
    tcp_test_run("get and put", 2, t_rma, NULL, &o);
    o.env = ENV "RAIL_BTL_OFI_MR_STRICT=1";
    tcp_test_run("get and put, strict registration", 2, t_rma, NULL, &o);
    o.env = ENV;
    tcp_test_run("sleep on wait_fd", 2, t_sleep, NULL, &o);
    o.env = ENV "RAIL_BTL_OFI_PROVIDER=tcp;ofi_rxm,nosuchprov";
    if (tcp_test_run("unknown provider name", 1, t_badname, NULL, &o) == 0) {
        char *log = tcp_test_log(0);
        check_case("unknown provider name: the message names the parameter and the name",
                   strstr(log, "btl_ofi_provider") && strstr(log, "\"nosuchprov\""));
        free(log);
    }
    return tcp_test_summary("test_btl_ofi");
}
