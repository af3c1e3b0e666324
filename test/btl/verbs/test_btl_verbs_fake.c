/*
 * The emulated HCA of btl verbs, between two forked processes: sends into
 * a shared receive queue arrive whole and in order, the completion
 * channel's fd wakes a process blocked in poll(), RDMA write and read move
 * the bytes, and a wrong rkey, an access out of bounds, a region without
 * remote write access and a stale registration (memory unmapped and mapped
 * anew at the same address) each complete with IBV_WC_REM_ACCESS_ERR and
 * move the QP to the error state (later requests flush); a send to a peer
 * that is gone completes with IBV_WC_RETRY_EXC_ERR; no file of the HCA is
 * left in /dev/shm after close, nor after a process exits without closing.
 */
static int vt_rank;
#define CHECK_RANK vt_rank
#include "test/check.h"
#include "btl/verbs/verbs_ops.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NRECV 16
#define SLOT 4096
#define RBUF (4 * 4096)

static const btl_verbs_ops_t *V = &btl_verbs_ops_fake;
static char jobid[64];
static int to_peer, from_peer;

typedef struct {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    struct ibv_cq *cq;
    struct ibv_srq *srq;
    struct ibv_qp *qp;
    struct ibv_mr *rmr, *bmr;
    char *rbufs, *buf;
} hca_t;

typedef struct {
    uint32_t qpn, rkey;
    uint64_t addr;
    union ibv_gid gid;
} card_t;

static void xfer(void *out, void *in, size_t len)
{
    if (out)
        CHECK(write(to_peer, out, len) == (ssize_t)len);
    if (in)
        CHECK(read(from_peer, in, len) == (ssize_t)len);
}

static void sync_peer(void)
{
    char b = 0, c;
    xfer(&b, &c, 1);
}

static void post_recvs(hca_t *h, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        struct ibv_sge sge = {(uintptr_t)(h->rbufs + i * SLOT), SLOT, h->rmr->lkey};
        struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad;
        CHECK_OK(V->post_srq_recv(h->srq, &wr, &bad));
    }
}

static void hca_open(hca_t *h)
{
    int n = 0;
    struct ibv_device **l = V->get_device_list(&n);
    CHECK(l && n == 1);
    CHECK((h->ctx = V->open_device(l[0])) != NULL);
    V->free_device_list(l);
    CHECK((h->pd = V->alloc_pd(h->ctx)) != NULL);
    CHECK((h->ch = V->create_comp_channel(h->ctx)) != NULL);
    CHECK((h->cq = V->create_cq(h->ctx, 256, h, h->ch, 0)) != NULL);
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 64, .max_sge = 1}};
    CHECK((h->srq = V->create_srq(h->pd, &sa)) != NULL);
    h->rbufs = aligned_alloc(4096, NRECV * SLOT);
    h->buf = aligned_alloc(4096, RBUF);
    memset(h->buf, 0, RBUF);
    int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
    CHECK((h->rmr = V->reg_mr(h->pd, h->rbufs, NRECV * SLOT, IBV_ACCESS_LOCAL_WRITE)) != NULL);
    CHECK((h->bmr = V->reg_mr(h->pd, h->buf, RBUF, acc)) != NULL);
    post_recvs(h, 0, NRECV);
}

/* A fresh RC pair with the peer; the cards carry mr's rkey and address. */
static card_t connect_pair(hca_t *h, struct ibv_mr *mr)
{
    if (h->qp) {
        sync_peer();               /* the peer is done with the old pair */
        V->destroy_qp(h->qp);
    }
    struct ibv_qp_init_attr qa = {.send_cq = h->cq, .recv_cq = h->cq, .srq = h->srq,
                                  .cap = {.max_send_wr = 64, .max_send_sge = 2,
                                          .max_inline_data = 64},
                                  .qp_type = IBV_QPT_RC};
    CHECK((h->qp = V->create_qp(h->pd, &qa)) != NULL);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
                            .qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
    CHECK_OK(V->modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX |
                                         IBV_QP_ACCESS_FLAGS));
    struct ibv_gid_entry g;
    CHECK_OK(V->query_gid_ex(h->ctx, 1, 1, &g));
    CHECK(g.gid_type == IBV_GID_TYPE_ROCE_V2);
    card_t mine = {h->qp->qp_num, mr->rkey, (uintptr_t)mr->addr, g.gid}, peer;
    xfer(&mine, &peer, sizeof(peer));
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_4096;
    a.dest_qp_num = peer.qpn;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer.gid;
    a.ah_attr.port_num = 1;
    CHECK_OK(V->modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                         IBV_QP_DEST_QPN | IBV_QP_RQ_PSN));
    a.qp_state = IBV_QPS_RTS;
    CHECK_OK(V->modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
                                         IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY));
    sync_peer();                   /* both in RTS before anyone sends */
    return peer;
}

static struct ibv_wc wait_wc(hca_t *h)
{
    struct ibv_wc wc;
    for (int i = 0; i < 5000000; i++) {
        int n = V->poll_cq(h->cq, 1, &wc);
        CHECK(n >= 0);
        if (n == 1)
            return wc;
        if (i > 1000)
            usleep(100);
    }
    CHECK(0, "no completion");
    return wc;
}

static int post(hca_t *h, enum ibv_wr_opcode op, void *addr, uint32_t len, uint32_t lkey,
                uint64_t raddr, uint32_t rkey, unsigned flags)
{
    struct ibv_sge sge = {(uintptr_t)addr, len, lkey};
    struct ibv_send_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED | flags}, *bad;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return V->post_send(h->qp, &wr, &bad);
}

/* Requester side of an access that must fail: REM_ACCESS_ERR, QP in error, flush. */
static bool expect_access_error(hca_t *h, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
                                uint32_t len)
{
    CHECK_OK(post(h, op, h->buf, len, h->bmr->lkey, raddr, rkey, 0));
    struct ibv_wc wc = wait_wc(h);
    bool ok = EXPECT(wc.status == IBV_WC_REM_ACCESS_ERR, "status %d", wc.status);
    ok &= EXPECT(btl_verbs_fake_qp_state(h->qp) == IBV_QPS_ERR);
    CHECK_OK(post(h, IBV_WR_SEND, h->buf, 8, h->bmr->lkey, 0, 0, 0));
    wc = wait_wc(h);
    ok &= EXPECT(wc.status == IBV_WC_WR_FLUSH_ERR, "status %d", wc.status);
    return ok;
}

static void parent_sends(hca_t *h, const card_t *peer)
{
    bool ok = true;
    for (int i = 0; i < 6; i++) {      /* inline and from registered memory, in turns */
        memset(h->buf, 'a' + i, 100 + i);
        CHECK_OK(post(h, IBV_WR_SEND, h->buf, 100 + (uint32_t)i, h->bmr->lkey, 0, 0,
                      i % 2 ? IBV_SEND_INLINE : 0));
        struct ibv_wc wc = wait_wc(h);
        ok &= EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
    }
    check_case("send into the SRQ (requester)", ok);
    sync_peer();
    usleep(200000);                    /* the peer blocks on its channel meanwhile */
    CHECK_OK(post(h, IBV_WR_SEND, h->buf, 8, h->bmr->lkey, 0, 0, 0));
    wait_wc(h);
    sync_peer();
    for (int i = 0; i < 8192; i++)
        h->buf[i] = (char)(i * 7);
    CHECK_OK(post(h, IBV_WR_RDMA_WRITE, h->buf, 8192, h->bmr->lkey, peer->addr + 4096,
                  peer->rkey, 0));
    ok = EXPECT(wait_wc(h).status == IBV_WC_SUCCESS);
    memset(h->buf, 0, 8192);
    CHECK_OK(post(h, IBV_WR_RDMA_READ, h->buf, 8192, h->bmr->lkey, peer->addr + 4096,
                  peer->rkey, 0));
    ok &= EXPECT(wait_wc(h).status == IBV_WC_SUCCESS);
    for (int i = 0; i < 8192 && ok; i++)
        ok = EXPECT(h->buf[i] == (char)(i * 7), "byte %d", i);
    sync_peer();                       /* the peer checks its copy */
    check_case("RDMA write and read", ok);
}

static void parent_errors(hca_t *h)
{
    card_t peer = connect_pair(h, h->bmr);
    check_case("out of bounds", expect_access_error(h, IBV_WR_RDMA_WRITE,
                                                   peer.addr + RBUF - 10, peer.rkey, 100));
    peer = connect_pair(h, h->bmr);
    check_case("wrong rkey", expect_access_error(h, IBV_WR_RDMA_READ, peer.addr,
                                                peer.rkey + 1024, 64));
    peer = connect_pair(h, h->bmr);            /* its card names a read-only region now */
    check_case("no remote write access", expect_access_error(h, IBV_WR_RDMA_WRITE, peer.addr,
                                                            peer.rkey, 64));
    peer = connect_pair(h, h->bmr);            /* a region unmapped and mapped anew by the peer */
    uint8_t stale;
    xfer(NULL, &stale, 1);
    if (stale)
        check_case("stale registration", expect_access_error(h, IBV_WR_RDMA_READ, peer.addr,
                                                            peer.rkey, 64));
    else
        check_skip_part("stale registration: the kernel gave no page identity");
    connect_pair(h, h->bmr);           /* a good pair, for the peer's exit */
}

static void child_receives(hca_t *h)
{
    bool ok = true;
    for (int i = 0; i < 6; i++) {
        struct ibv_wc wc = wait_wc(h);
        ok &= EXPECT(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
                     wc.byte_len == 100u + (unsigned)i, "message %d: status %d len %u", i,
                     wc.status, wc.byte_len);
        const char *p = h->rbufs + wc.wr_id * SLOT;
        for (int k = 0; k < 100 + i && ok; k++)
            ok = EXPECT(p[k] == 'a' + i, "message %d out of order or damaged", i);
    }
    check_case("send into the SRQ, in order", ok);
    post_recvs(h, 0, 6);
    /* block on the channel until the peer's next send */
    CHECK_OK(V->req_notify_cq(h->cq, 0));
    sync_peer();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct pollfd pfd = {.fd = h->ch->fd, .events = POLLIN};
    int n = poll(&pfd, 1, 10000);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    struct ibv_cq *cq = NULL;
    void *cctx = NULL;
    ok = EXPECT(n == 1 && waited > 0.1, "poll %d after %.3f s", n, waited);
    ok &= EXPECT(V->get_cq_event(h->ch, &cq, &cctx) == 0 && cq == h->cq && cctx == h);
    V->ack_cq_events(h->cq, 1);
    ok &= EXPECT(wait_wc(h).opcode == IBV_WC_RECV);
    check_case("completion fd wakes a blocked waiter", ok);
    sync_peer();
    sync_peer();
    ok = true;
    for (int i = 0; i < 8192 && ok; i++)
        ok = EXPECT(h->buf[4096 + i] == (char)(i * 7), "byte %d", i);
    check_case("RDMA write arrived", ok);
}

static bool pfn_readable(void *p)
{
    FILE *f = fopen("/proc/self/pagemap", "r");
    uint64_t e = 0;
    if (f && fseek(f, (long)((uintptr_t)p / 4096 * 8), SEEK_SET) == 0 && fread(&e, 8, 1, f) != 1)
        e = 0;
    if (f)
        fclose(f);
    return (e & ((UINT64_C(1) << 55) - 1)) != 0;
}

static void child_errors(hca_t *h)
{
    connect_pair(h, h->bmr);
    connect_pair(h, h->bmr);
    struct ibv_mr *ro = V->reg_mr(h->pd, h->buf, 4096, IBV_ACCESS_REMOTE_READ);
    CHECK(ro != NULL);
    connect_pair(h, ro);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    memset(m, 'A', 8192);
    struct ibv_mr *sm = V->reg_mr(h->pd, m, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
    CHECK(sm != NULL);
    connect_pair(h, sm);
    uint8_t stale = pfn_readable(m);
    CHECK(munmap(m, 8192) == 0);
    CHECK(mmap(m, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == m);
    memset(m, 'B', 8192);
    xfer(&stale, NULL, 1);
    connect_pair(h, h->bmr);
}

static int count_files(void)
{
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "rail-%s-verbs-", jobid);
    DIR *d = opendir("/dev/shm");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

static void hca_close(hca_t *h)
{
    V->destroy_qp(h->qp);
    V->dereg_mr(h->rmr);
    V->dereg_mr(h->bmr);
    V->destroy_srq(h->srq);
    V->destroy_cq(h->cq);
    V->destroy_comp_channel(h->ch);
    V->dealloc_pd(h->pd);
    V->close_device(h->ctx);
}

/* A peer that is gone: the request completes with a retry error; no files stay. */
static void parent_end(hca_t *h, pid_t child)
{
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status 0x%x", st);
    CHECK_OK(post(h, IBV_WR_SEND, h->buf, 8, h->bmr->lkey, 0, 0, 0));
    struct ibv_wc wc = wait_wc(h);
    check_case("peer gone: retry exceeded", EXPECT(wc.status == IBV_WC_RETRY_EXC_ERR,
                                                   "status %d", wc.status));
    hca_close(h);
    check_case("no files after close", EXPECT(count_files() == 0, "%d left", count_files()));
    pid_t p = fork();
    if (p == 0) {
        hca_t x = {0};
        hca_open(&x);
        exit(count_files() == 3 ? 0 : 1);   /* exits without closing */
    }
    CHECK(waitpid(p, &st, 0) == p);
    check_case("no files after an exit without close",
               EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0 && count_files() == 0,
                      "status 0x%x, %d left", st, count_files()));
}

int main(void)
{
    int a[2], b[2];
    snprintf(jobid, sizeof(jobid), "vtest%d", (int)getpid());
    CHECK_OK(btl_verbs_fake_setup(jobid, "", -1));
    CHECK(btl_verbs_fake_setup(jobid, "qp_error=x", -1) != 0);
    CHECK_OK(btl_verbs_fake_setup(jobid, "", -1));
    CHECK(pipe(a) == 0 && pipe(b) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    vt_rank = child == 0;
    to_peer = child == 0 ? b[1] : a[1];
    from_peer = child == 0 ? a[0] : b[0];
    alarm(60);
    hca_t h = {0};
    hca_open(&h);
    card_t peer = connect_pair(&h, h.bmr);
    if (child == 0) {
        child_receives(&h);
        child_errors(&h);
        hca_close(&h);
        exit(check_report("test_btl_verbs_fake (responder)"));
    }
    parent_sends(&h, &peer);
    parent_errors(&h);
    parent_end(&h, child);
    return check_report("test_btl_verbs_fake");
}
