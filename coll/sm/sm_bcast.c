/*
 * coll sm: rooted distribution, bcast and scatter.
 *
 * The root writes round k (at most one buffer of packed bytes per
 * destination) into buffer coll_sm_bidx(k) and posts step k + 1; a receiver
 * waits for the root's step k + 1, copies the round out and posts step
 * k + 1.  Before writing round k >= nbuf into a buffer the root waits until
 * every receiver posted step k - nbuf + 1 (it has copied round k - nbuf out
 * of that buffer), so the root runs at most nbuf rounds ahead.  Receivers skip the post of their
 * last round: FINAL covers it.
 *
 *   bcast:    the rounds go in the root's own area; every receiver reads
 *             them (all from the same lines).
 *   scatter:  the root writes receiver j's rounds into j's area.
 *
 * SINGLE COPY OF A SCATTER (blocks of coll_sm_scatter_single_copy_min
 * from a contiguous host send buffer, where the kernel's copy costs less
 * than RAIL_CMA_KERNEL_RATIO_MAX memcpys, or single copy forced): the
 * root publishes its buffer as a bcast's root does and waits for
 * everyone's FINAL; receiver j reads block j, the root writing part of it
 * where a bcast's root would (np 2, 1 MiB blocks: 95-106 us against the
 * segment's 141-151, where the root copied every block alone).
 *
 * SINGLE COPY (bcast from a contiguous host buffer, when every process
 * could read rank 0's memory with process_vm_readv at setup; from
 * coll_sm_single_copy_min bytes always, from coll_sm_adapt_min bytes when
 * it has been faster, base/adapt.c): the root publishes its buffer's address
 * with the size (COLL_SM_META_CMA) and waits until every receiver has
 * posted FINAL; each receiver reads the root's buffer directly, from
 * coll_sm_share_bcast_min bytes with the root writing part of it (SHARED
 * SINGLE COPY, sm_share.c).
 *
 * The root's meta word carries the bytes per destination, so a receiver
 * whose arguments hold fewer bytes (mismatched type signatures, erroneous)
 * still follows every round and reports MPI_ERR_TRUNCATE instead of
 * hanging; one whose arguments expect more reports MPI_ERR_COUNT
 * (coll_check_length).
 */
#include "coll/sm/coll_sm.h"
#include "coll/sm/sm_decide.h"
#include "coll/sm/sm_device.h"
#include "coll/sm/sm_slots.h"
#include "base/copy.h"
#include "obj/err.h"

#include <stdlib.h>

static size_t rounds_of(size_t bytes, size_t per)
{
    return (bytes + per - 1) / per;
}

int coll_sm_cma_read_data(coll_sm_module_t *m, int owner, uint64_t addr, size_t total,
                          const coll_sm_data_t *d)
{
    int32_t pid = coll_sm_ctl(m, owner)->pid;
    size_t want = RAIL_MIN(total, d->bytes);
    if (d->contig && !d->device)
        return coll_sm_cma_read(pid, addr, d->contig, want);
    int rc = MPI_SUCCESS;
    for (size_t off = 0; off < want && rc == MPI_SUCCESS; off += m->chunk) {
        size_t len = RAIL_MIN(m->chunk, want - off);
        rc = coll_sm_cma_read(pid, addr + off, m->scratch, len);
        if (rc == MPI_SUCCESS)
            rc = coll_sm_unpack(d, off, m->scratch, len);
    }
    return rc;
}

/* Receiver: follow the root's rounds of `total` bytes from buffer `src` of
 * area (owner, set), unpacking what fits into d. */
static int sm_receive(coll_sm_module_t *m, uint64_t s, int root, int owner,
                      const coll_sm_data_t *d)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    coll_sm_wait(m, root, COLL_SM_V(s, 1));
    uint64_t meta = coll_sm_ctl(m, root)->meta[set];
    size_t total = (size_t)(meta & ~COLL_SM_META_CMA), C = m->chunk;
    size_t K = meta & COLL_SM_META_CMA ? 0 : rounds_of(total, C);
    if (meta & COLL_SM_META_CMA) {
        /* the root's buffer (a bcast), or block `owner` of its contiguous
         * blocks (a scatter); the root writes part of it where it would
         * only wait (SHARED SINGLE COPY) */
        uint64_t at = coll_sm_ctl(m, root)->addr[set] +
                      (owner == root ? 0 : (uint64_t)owner * total);
        if (owner != root)
            rail_atomic_add_fetch(&coll_sm_count_scatter_cma, 1);
        if (coll_sm_share_on(m, total, coll_sm_params.share_bcast_min) && d->contig &&
            !d->device && d->bytes == total)
            rc = coll_sm_share_read(m, s, root, at, d->contig, total,
                                    &coll_sm_count_bcast_chunks_in);
        else
            rc = coll_sm_cma_read_data(m, root, at, total, d);
    }
    for (size_t k = 0; k < K; k++) {
        if (k > 0)
            coll_sm_wait(m, root, COLL_SM_V(s, k + 1));
        size_t off = k * C, len = RAIL_MIN(C, total - off);
        if (off < d->bytes) {
            int r = coll_sm_unpack(d, off, coll_sm_round_buf(m, owner, set, s, k, total),
                                   RAIL_MIN(len, d->bytes - off));
            rc = rc != MPI_SUCCESS ? rc : r;
        }
        if (k + 1 < K)
            coll_sm_post(m, COLL_SM_V(s, k + 1));
    }
    if (rc == MPI_SUCCESS)
        rc = coll_check_length(-1, total, d->bytes);
    return rc;
}

/* Root: n_dst buffers of packed data, dst[i] into area (owner[i], set). */
static int sm_send_rounds(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *src,
                          const int *owner, int n_dst, size_t bytes)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    size_t C = m->chunk, K = rounds_of(bytes, C);
    coll_sm_claim_set(m, s);
    coll_sm_ctl(m, m->me)->meta[set] = bytes;
    for (size_t k = 0; k < K; k++) {
        if (k >= (size_t)m->nbuf)
            coll_sm_wait_all(m, COLL_SM_V(s, k - (size_t)m->nbuf + 1));
        size_t off = k * C, len = RAIL_MIN(C, bytes - off);
        for (int i = 0; i < n_dst; i++) {
            int r = coll_sm_pack(&src[i], off, coll_sm_round_buf(m, owner[i], set, s, k, bytes),
                                 len);
            rc = rc != MPI_SUCCESS ? rc : r;
        }
        coll_sm_post(m, COLL_SM_V(s, k + 1));
    }
    return rc;
}

/* ------------------------------------------------------------ bcast */

/* Root of a single-copy bcast or scatter: publish the buffer (a scatter's
 * contiguous blocks of `bytes` each), help the readers, wait until
 * everyone has read it. */
static void root_cma(coll_sm_module_t *m, uint64_t s, const void *buf, size_t bytes)
{
    int set = coll_sm_set(m, s);
    coll_sm_claim_set(m, s);
    coll_sm_ctl(m, m->me)->addr[set] = (uint64_t)(uintptr_t)buf;
    coll_sm_ctl(m, m->me)->meta[set] = bytes | COLL_SM_META_CMA;
    coll_sm_post(m, COLL_SM_V(s, 1));
    if (coll_sm_share_on(m, bytes, coll_sm_params.share_bcast_min))
        coll_sm_share_help(m, s, -1);
    coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
}

/* A root whose device buffer makes everyone hand the call to the next
 * component (bcast, scatter): it says so in step 1's meta word.  A root
 * that offers its buffer by IPC (sm_device.c: dev; a scatter's whole send
 * buffer, in blocks of `bytes`) says so too. */
static void root_hands_on(coll_sm_module_t *m, uint64_t s, size_t bytes, const void *dev)
{
    int set = coll_sm_set(m, s);
    coll_sm_claim_set(m, s);
    if (dev != NULL)
        coll_sm_dev_publish(m, s, dev, bytes, NULL, 0);
    coll_sm_ctl(m, m->me)->meta[set] =
        bytes | COLL_SM_META_HANDOFF | (dev != NULL ? COLL_SM_META_DEVICE_IPC : 0);
    coll_sm_post(m, COLL_SM_V(s, 1));
}

/* A receiver: wait for the root's step 1; true when it hands the call on
 * (*ipc, where asked: or may take it device to device, as
 * coll_sm_dev_ready says). */
static bool root_handed_on(coll_sm_module_t *m, uint64_t s, int root, bool *ipc)
{
    coll_sm_wait(m, root, COLL_SM_V(s, 1));
    uint64_t meta = coll_sm_ctl(m, root)->meta[coll_sm_set(m, s)];
    if (ipc != NULL)
        *ipc = meta & COLL_SM_META_DEVICE_IPC;
    return meta & COLL_SM_META_HANDOFF;
}

static int bcast_next(void *buf, MPI_Count count, obj_datatype_t *dt, int root,
                      obj_comm_t *comm, coll_module_t *module)
{
    coll_module_t *next = coll_sm_next(comm, COLL_OP_bcast, module, "device buffer");
    return next ? next->fns.bcast(buf, count, dt, root, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}

/* The root handed the call on (a device buffer of `bytes`; ipc: offered
 * by IPC, sm_device.c): device to device from the root's buffer, by one
 * process or by each, or everyone follows to the next component. */
static int bcast_handed_on(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d,
                           size_t bytes, bool ipc, void *buf, MPI_Count count,
                           obj_datatype_t *dt, obj_comm_t *comm, coll_module_t *module)
{
    int rc;
    if (ipc && coll_sm_dev_bcast_by_one(m, bytes) &&
        coll_sm_dev_bcast_one(m, s, 2, root, d, bytes, &rc))
        return rc;
    if (ipc && coll_sm_dev_ready(m, s, 4, root))
        return coll_sm_dev_bcast(m, s, root, d);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return bcast_next(buf, count, dt, root, comm, module);
}

/* A receiver of operation s: the slots' late path, the root's hand-on,
 * or the root's rounds. */
SM_HOT int bcast_receiver(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *d, void *buf,
                          MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                          coll_module_t *module)
{
    int rc;
    bool ipc;
    if (coll_sm_small_bcast_late(m, s, root, d, &rc))
        return rc;
    if (root_handed_on(m, s, root, &ipc)) {
        /* (the root's size, in its meta word, decides: the same everywhere) */
        size_t rb = (size_t)(coll_sm_ctl(m, root)->meta[coll_sm_set(m, s)] &
                             COLL_SM_META_BYTES);
        return bcast_handed_on(m, s, root, d, rb, ipc, buf, count, dt, comm, module);
    }
    rc = sm_receive(m, s, root, root, d);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return rc;
}

/* The root of operation s on the path coll_sm_bcast_path chooses, timed
 * where it says. */
SM_HOT int bcast_root(coll_sm_module_t *m, uint64_t s, coll_sm_data_t *d)
{
    rail_adapt_t *a;
    int rc = MPI_SUCCESS, path = coll_sm_bcast_path(m, d, &a);
    /* A timed call starts when everyone has finished the previous
     * operation: a root that ran ahead through the segment would otherwise
     * count the receivers' backlog against this call's path (64 KiB: 6-15
     * us measured for 1.6 us calls).  Not on an oversubscribed node, where
     * each wait for everyone costs process switches: there the root times
     * its own part (its writes, and its waits for buffers to come free,
     * are what streamed or plain changes). */
    bool whole = a && !m->oversub;
    if (whole)
        coll_sm_wait_all(m, COLL_SM_V(s - 1, COLL_SM_FINAL));
    uint64_t t0 = a ? rail_now_ns() : 0;
    d->stream = path == COLL_SM_PATH_STREAM;
    if (path == COLL_SM_PATH_CMA)
        root_cma(m, s, d->contig, d->bytes);
    else
        rc = sm_send_rounds(m, s, d, &m->me, 1, d->bytes);
    if (a && !whole)   /* (COLL_SM_ADAPT_BCAST_OVERSUB: 1 is streamed) */
        rail_adapt_record(a, d->stream, d->bytes, rail_now_ns() - t0);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (whole) {
        /* timed whole: until every receiver has its data */
        coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
        rail_adapt_record(a, path, d->bytes, rail_now_ns() - t0);
    }
    return rc;
}

int coll_sm_bcast(void *buf, MPI_Count count, obj_datatype_t *dt, int root, obj_comm_t *comm,
                  coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    coll_sm_data_t d;
    coll_sm_data_init(&d, buf, count, dt);
    if (d.bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (coll_sm_small_bcast(m, comm, buf, count, dt, root, &rc))
        return rc;
    uint64_t s;
    rc = coll_sm_begin(m, comm, &s);
    if (rc == COLL_SM_HANDOFF) {
        coll_module_t *next = coll_sm_next(comm, COLL_OP_bcast, module, "no segment");
        return next ? next->fns.bcast(buf, count, dt, root, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (m->me != root)
        return bcast_receiver(m, s, &d, buf, count, dt, root, comm, module);
    if (d.device && coll_sm_params.device_handoff_min > 0 &&
        d.bytes >= coll_sm_params.device_handoff_min) {
        /* a device buffer: the receivers copy it device to device from
         * here (sm_device.c), or everyone follows to the next component,
         * whose messages go device to device by IPC (pml_rndv_device_ipc) */
        bool ipc = d.contig && coll_sm_dev_eligible(m, d.bytes);
        root_hands_on(m, s, d.bytes, ipc ? d.contig : NULL);
        return bcast_handed_on(m, s, root, &d, d.bytes, ipc, buf, count, dt, comm, module);
    }
    return bcast_root(m, s, &d);
}

/* ------------------------------------------------------------ scatter */

static int scatter_root(coll_sm_module_t *m, uint64_t s, const void *sbuf, MPI_Count scount,
                        obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt)
{
    int n = m->n, me = m->me, rc = MPI_SUCCESS;
    if (rbuf != MPI_IN_PLACE)
        rc = coll_copy(coll_elem(sbuf, sdt, me * scount), scount, sdt, rbuf, rcount, rdt);
    size_t bytes = (size_t)(scount * sdt->size);
    /* single copy: every receiver reads its block from here */
    const void *all = m->cma ? rail_dt_contig_ptr(sdt->layout, scount * n, sbuf) : NULL;
    if (all && !coll_is_device(sbuf, scount * n, sdt) &&
        (coll_sm_forced_cma(m, bytes) ||
         (coll_sm_params.scatter_cma_min > 0 && bytes >= coll_sm_params.scatter_cma_min &&
          rail_cma_kernel_ratio() < RAIL_CMA_KERNEL_RATIO_MAX))) {
        root_cma(m, s, all, bytes);
        return rc;
    }
    coll_sm_data_t *src = malloc((size_t)n * sizeof(*src));
    int *owner = malloc((size_t)n * sizeof(int));
    if (!src || !owner) {
        free(src);
        free(owner);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    int k = 0;
    for (int j = 0; j < n; j++) {
        if (j == me)
            continue;
        coll_sm_data_init(&src[k], coll_elem(sbuf, sdt, j * scount), scount, sdt);
        owner[k++] = j;
    }
    int r = sm_send_rounds(m, s, src, owner, k, bytes);
    free(src);
    free(owner);
    return rc != MPI_SUCCESS ? rc : r;
}

int coll_sm_scatter(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                    MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                    coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    bool am_root = m->me == root;
    size_t bytes = am_root ? (size_t)(scount * sdt->size) : (size_t)(rcount * rdt->size);
    if (bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (coll_sm_small_scatter(m, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, &rc))
        return rc;
    uint64_t s;
    rc = coll_sm_begin(m, comm, &s);
    if (rc == COLL_SM_HANDOFF) {
        coll_module_t *next = coll_sm_next(comm, COLL_OP_scatter, module, "no segment");
        return next ? next->fns.scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    /* a root's device send buffer of coll_sm_device_handoff_min bytes per
     * process: the receivers copy their blocks device to device from it
     * (sm_device.c), or everyone follows to the next component (as for
     * bcast) */
    bool hand_on, ipc = false;
    coll_sm_data_t d = {0};
    if (!am_root)
        coll_sm_data_init(&d, rbuf, rcount, rdt);
    if (am_root) {
        hand_on = coll_sm_params.device_handoff_min > 0 &&
                  bytes >= coll_sm_params.device_handoff_min &&
                  coll_is_device(sbuf, scount * m->n, sdt);
        const void *all = hand_on && coll_sm_dev_eligible(m, bytes)
                              ? rail_dt_contig_ptr(sdt->layout, scount * m->n, sbuf) : NULL;
        ipc = all != NULL;
        if (hand_on)
            root_hands_on(m, s, bytes, all);
        else
            rc = scatter_root(m, s, sbuf, scount, sdt, rbuf, rcount, rdt);
    } else {
        if (coll_sm_small_scatter_late(m, s, root, rbuf, rcount, rdt, &rc))
            return rc;
        hand_on = root_handed_on(m, s, root, &ipc);
        if (!hand_on)
            rc = sm_receive(m, s, root, m->me, &d);
    }
    if (hand_on && ipc && coll_sm_dev_ready(m, s, 2, root)) {
        if (am_root && rbuf != MPI_IN_PLACE)
            rc = coll_copy(coll_elem(sbuf, sdt, m->me * scount), scount, sdt, rbuf, rcount, rdt);
        int r = coll_sm_dev_scatter(m, s, root, &d);   /* always: it ends the operation */
        return SM_KEEP(rc, r);
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (hand_on) {
        coll_module_t *next = coll_sm_next(comm, COLL_OP_scatter, module, "device buffer");
        return next ? next->fns.scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    return rc;
}

/* ------------------------------------------------------------ scatterv */

/* Through the slots where the root's blocks fit (sm_small.c: the root
 * decides, everyone follows); the rest to the next component. */
int coll_sm_scatterv(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                     obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                     int root, obj_comm_t *comm, coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    int rc;
    bool handoff;
    if (coll_sm_small_scatterv(m, comm, sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root,
                               &handoff, &rc) && !handoff)
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_scatterv, module,
                                       handoff ? "blocks above the slots" : "no slots");
    return next ? next->fns.scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
                                     next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}
