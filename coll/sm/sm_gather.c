/*
 * coll sm: gather through the segment or by single copy.  A sender posts
 * step k + 1 when round k (one buffer of its block) is in buffer
 * coll_sm_bidx(k); the root waits for everyone's step k + 1, copies round
 * k out and posts step k + 1.  A sender writes round k >= nbuf only after
 * the root's step k - nbuf + 1 (round k - nbuf consumed).  Where a device
 * component is active in the communicator the root gives a verdict on
 * device buffers as its step 1 (GATHER_STAGE below; its "round k read" is
 * then step k + 2).  The meta word is described in sm_allgather.c and
 * sm_meta.h.
 */
#include "coll/sm/sm_meta.h"
#include "coll/sm/sm_decide.h"
#include "coll/sm/sm_device.h"
#include "coll/sm/sm_slots.h"
#include "base/copy.h"
#include "base/log.h"
#include "obj/err.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ gather */

/* A gather's device check (coll_sm_device_check_blocks): a sender with
 * host buffers writes its meta (no META_DEVICE) and its rounds as without the
 * check (it waits for nobody); one with device buffers announces them in
 * step 1 (META_DEVICE, its IPC record published) and waits for the
 * root's step 1.  The root waits for everyone's step 1, sees who has
 * device buffers and posts its verdict as its step 1 (meta): GATHER_STAGE
 * where some sender has host buffers (who wrote without waiting: device
 * senders then write their rounds through the segment too, from step 2);
 * else GATHER_DEV (device to device, sm_device.c) where the buffers can
 * be opened by IPC, else GATHER_HANDOFF (the next component).  The root's
 * step k + 2 then says round k was read.  Before, everyone waited for
 * everyone in a step 1 first: a host gather on a GPU node took 1.3 against
 * 0.5 us at np 2 (512 B), 13 against 3.4 at np 4 on 2 cores. */
enum { GATHER_STAGE = 0, GATHER_DEV = 1, GATHER_HANDOFF = 2, GATHER_CMA = 3 };

/* Rounds k0 on: mine posted from step own0 + 1, the root's "round k read" is
 * its step root0 + k + 1 (own0 = root0 = 0 without the device check; with
 * it root0 = 1, own0 = 1 for a device sender, which announced in step 1). */
static int gather_send(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d,
                       uint32_t own0, uint32_t root0, size_t k0)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    size_t C = m->chunk, K = rounds_of(d->bytes, C);
    for (size_t k = k0; k < K; k++) {
        if (k >= (size_t)m->nbuf)
            coll_sm_wait(m, root, COLL_SM_V(s, root0 + k - (size_t)m->nbuf + 1));
        size_t off = k * C;
        int r = coll_sm_pack(d, off, coll_sm_round_buf(m, m->me, set, s, k, d->bytes),
                             RAIL_MIN(C, d->bytes - off));
        rc = SM_KEEP(rc, r);
        if (k + 1 < K)
            coll_sm_post(m, COLL_SM_V(s, own0 + k + 1));
    }
    return rc;
}

/* dev_late: with the device check, the device senders, whose round k is
 * their step k + 2 (the others' k + 1). */
static int gather_root(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *d0,
                       uint32_t root0, uint32_t send0, bool dev_late)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    size_t C = m->chunk, K = rounds_of(d0->bytes, C);
    for (size_t k = 0; k < K; k++) {
        coll_sm_wait_all(m, COLL_SM_V(s, send0 + k + 1));
        for (int j = 0; dev_late && j < m->n; j++)
            if (j != m->me && sm_meta_device(m, j, set))
                coll_sm_wait(m, j, COLL_SM_V(s, k + 2));
        for (int j = 0; j < m->n; j++) {
            if (j == m->me)
                continue;
            coll_sm_data_t dj = coll_sm_data_at(d0, j * d0->count);
            int r = sm_take(m, set, j, &dj, k * C, C,
                            coll_sm_round_buf(m, j, set, s, k, sm_meta(m, j, set)));
            rc = SM_KEEP(rc, r);
        }
        if (k + 1 < K)
            coll_sm_post(m, COLL_SM_V(s, root0 + k + 1));
    }
    return SM_KEEP(rc, sm_truncated(m, set, d0->bytes));
}

/* The root's verdict (see GATHER_STAGE), after everyone's step 1. */
static int gather_verdict(coll_sm_module_t *m, uint64_t s, int root, size_t total, bool *dev_late)
{
    int set = coll_sm_set(m, s);
    bool host = false, dev = false;
    for (int j = 0; j < m->n; j++) {
        if (j == root)
            continue;
        if (sm_meta_device(m, j, set))
            dev = true;
        else
            host = true;
    }
    *dev_late = dev;
    if (host || !dev)   /* (!dev: no senders, a communicator of one) */
        return GATHER_STAGE;
    return coll_sm_dev_blocks_eligible(m, total) ? GATHER_DEV : GATHER_HANDOFF;
}

/* GATHER BY SINGLE COPY (host buffers, no device component in the
 * communicator; all blocks together from coll_sm_adapt_agree_min bytes,
 * not oversubscribed, or from coll_sm_single_copy_min always): every
 * sender announces its block in step 1 (meta: its bytes; addr; raddr bit
 * 0: contiguous host memory the root can read) and waits for the root's
 * step 1, whose meta carries the verdict: GATHER_CMA where every block can
 * be read directly and the root's choice by measured time (base/adapt.c)
 * says so: the root reads every block with process_vm_readv while the
 * senders wait for its FINAL (their buffers are read until then); else
 * GATHER_STAGE: the rounds follow, the senders' round k as their step
 * k + 1 (round 0, written before the verdict, with the announcement),
 * the root's "round k read" as its step k + 2.  Without it a large
 * gather moved every block twice (in and out of the segment), each line
 * from the sender's cache: np 2, 1 MiB blocks, 46 us in the VM's fast
 * minutes (Open MPI's single copy 104) but 220-365 in the slow ones
 * (Open MPI still 104-110).  Whether a gather takes it:
 * coll_sm_gather_timed (sm_decide.h). */

static int gather_send_timed(coll_sm_module_t *m, uint64_t s, int root, const coll_sm_data_t *d)
{
    int set = coll_sm_set(m, s);
    coll_sm_ctl_t *my = coll_sm_ctl(m, m->me);
    coll_sm_claim_set(m, s);
    my->meta[set] = d->bytes;
    my->addr[set] = (uint64_t)(uintptr_t)d->contig;
    my->raddr[set] = d->contig && !d->device ? 1 : 0;
    /* the announcement first, so that a root reading directly starts at
     * once; then round 0 goes into the segment (step 2) before the verdict
     * (unread where the root reads directly): where the segment wins, this
     * call's copy in overlaps the root's copy out of the previous one as
     * without the step (np 2, 32 KiB blocks: 1.5 us; waiting for the
     * verdict first, 2.6-3.0).  Round 0 went with the announcement before:
     * the root's direct read waited for that copy (np 2, 32 KiB blocks by
     * single copy 3.9-4.0 us, Open MPI 2.6-3.0) */
    coll_sm_post(m, COLL_SM_V(s, 1));
    int rc = coll_sm_pack(d, 0, coll_sm_round_buf(m, m->me, set, s, 0, d->bytes),
                          RAIL_MIN(m->chunk, d->bytes));
    coll_sm_post(m, COLL_SM_V(s, 2));
    coll_sm_wait(m, root, COLL_SM_V(s, 1));
    if (META_VERDICT_OF(coll_sm_ctl(m, root)->meta[set]) == GATHER_CMA) {
        /* the root reads my block; I write part of it meanwhile (sm_share.c) */
        if (coll_sm_share_on(m, d->bytes, coll_sm_params.share_min) && d->contig && !d->device)
            coll_sm_share_help(m, s, root);
        coll_sm_wait(m, root, COLL_SM_V(s, COLL_SM_FINAL));   /* my block is read until then */
    } else {
        rc = SM_KEEP(rc, gather_send(m, s, root, d, 1, 1, 1));
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return rc;
}

/* sbuf, scount, sdt: the root's own block, copied into d0 once the senders
 * are free (after its FINAL: it keeps nobody waiting). */
static int gather_root_timed(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *d0,
                             size_t total, const void *sbuf, MPI_Count scount,
                             obj_datatype_t *sdt)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    coll_sm_ctl_t *my = coll_sm_ctl(m, m->me);
    coll_sm_claim_set(m, s);
    coll_sm_wait_all(m, COLL_SM_V(s, 1));
    bool direct = true;
    for (int j = 0; j < m->n && direct; j++)
        direct = j == m->me || (coll_sm_ctl(m, j)->raddr[set] & 1);
    rail_adapt_t *a = NULL;
    int want = COLL_SM_PATH_CMA;
    if (!direct) {
        want = COLL_SM_PATH_SEGMENT;
    } else if (coll_sm_params.adapt_alternate) {
        want = (int)(s & 1);   /* testing: both paths, one after the other */
    } else if (!coll_sm_forced_cma(m, total)) {
        bool measure;
        rail_adapt_t *c = coll_sm_adapt_of(m, COLL_SM_ADAPT_GATHER, total);
        want = rail_adapt_pick(c, &measure);
        a = measure ? c : NULL;
    }
    bool cma = direct && want == COLL_SM_PATH_CMA;
    my->meta[set] = d0->bytes | META_VERDICT(cma ? GATHER_CMA : GATHER_STAGE);
    coll_sm_post(m, COLL_SM_V(s, 1));
    uint64_t t0 = a ? rail_now_ns() : 0;
    if (cma) {
        for (int k = 1; k < m->n && rc == MPI_SUCCESS; k++) {
            int j = (m->me + k) % m->n;
            coll_sm_data_t dj = coll_sm_data_at(d0, j * d0->count);
            size_t len = sm_meta(m, j, set);
            if (coll_sm_share_on(m, len, coll_sm_params.share_min) && dj.contig && !dj.device &&
                dj.bytes == len)
                rc = coll_sm_share_read(m, s, j, coll_sm_ctl(m, j)->addr[set], dj.contig, len,
                                        &coll_sm_count_gather_chunks_in);
            else
                rc = coll_sm_cma_read_data(m, j, coll_sm_ctl(m, j)->addr[set], len, &dj);
        }
        rc = SM_KEEP(rc, sm_truncated(m, set, d0->bytes));
        rail_atomic_add_fetch(&coll_sm_count_gather_cma, 1);
    } else {
        rc = gather_root(m, s, d0, 1, 1, false);   /* (round k: the senders' step k + 2) */
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (sbuf != MPI_IN_PLACE)
        rc = SM_KEEP(rc, coll_copy(sbuf, scount, sdt,
                                   coll_elem(d0->buf, d0->dt, m->me * d0->count), d0->count,
                                   (obj_datatype_t *)d0->dt));
    if (a) {   /* timed whole: until every sender is done */
        coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
        rail_adapt_record(a, cma ? COLL_SM_PATH_CMA : COLL_SM_PATH_SEGMENT, total,
                          rail_now_ns() - t0);
    }
    return rc;
}

/* A root that found senders on both sides of the slot size (MISMATCHED
 * SIZES, sm_small.c) and reported it: it ends the flag operation s that
 * the senders whose blocks did not fit run, reading nothing: its verdict
 * "rounds" (for senders that announced and wait for it) and its FINAL,
 * which every wait of theirs for a step of mine passes.  They return as
 * if the root had read them; later operations are out of step. */
static void gather_end_for_late(coll_sm_module_t *m, uint64_t s)
{
    coll_sm_claim_set(m, s);
    coll_sm_ctl(m, m->me)->meta[coll_sm_set(m, s)] = META_VERDICT(GATHER_STAGE);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
}

/* The next component's gather (post: operation s is ended here first). */
static int gather_next(coll_sm_module_t *m, bool post, uint64_t s, const char *why,
                       const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                       coll_module_t *module)
{
    if (post)
        coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    coll_module_t *next = coll_sm_next(comm, COLL_OP_gather, module, why);
    return next ? next->fns.gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}

/* A sender with device buffers (the device check on): announced, the root
 * may copy my block device to device by IPC; the root's verdict. */
static int gather_sender_verdict(coll_sm_module_t *m, uint64_t s, int root,
                                 const coll_sm_data_t *d, size_t total)
{
    int set = coll_sm_set(m, s);
    if (coll_sm_dev_blocks_eligible(m, total))
        coll_sm_dev_publish(m, s, d->contig, d->bytes, NULL, 0);
    coll_sm_ctl(m, m->me)->meta[set] = d->bytes | META_DEVICE;
    coll_sm_post(m, COLL_SM_V(s, 1));
    coll_sm_wait(m, root, COLL_SM_V(s, 1));
    return META_VERDICT_OF(coll_sm_ctl(m, root)->meta[set]);
}

/* The root, everyone's blocks device memory: gathered device to device.
 * My own block goes with the others' in one launch where both ends are
 * contiguous device memory of the same size (a copy of its own,
 * synchronised, took as long as the rest: np 2 21-26 us against 12-16
 * for an allgather on an H200). */
static int gather_root_dev(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *d,
                           const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                           MPI_Count rcount, obj_datatype_t *rdt, int rc)
{
    const void *own = NULL;
    if (sbuf != MPI_IN_PLACE) {
        coll_sm_data_t mine, ob = coll_sm_data_at(d, m->me * rcount);
        coll_sm_data_init(&mine, sbuf, scount, sdt);
        if (mine.contig && mine.device && ob.contig && ob.device && mine.bytes == ob.bytes)
            own = mine.contig;
        else
            rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt);
    }
    int r = coll_sm_dev_gather(m, s, m->me, d, own);   /* always: it ends the operation */
    return SM_KEEP(rc, r);
}

/* The small paths of a gather: true where the call ended on them (*rc). */
static bool gather_small(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                         MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                         obj_datatype_t *rdt, int root, int *rc)
{
    bool dev_all, mixed;
    if (!coll_sm_small_gather(m, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, &dev_all,
                              &mixed, rc) ||
        dev_all)
        return false;
    if (mixed) {   /* the senders whose blocks did not fit run operation s */
        uint64_t s;
        if (coll_sm_begin(m, comm, &s) == MPI_SUCCESS)
            gather_end_for_late(m, s);
    }
    return true;
}

int coll_sm_gather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                   MPI_Count rcount, obj_datatype_t *rdt, int root, obj_comm_t *comm,
                   coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    bool am_root = m->me == root, mixed;
    coll_sm_data_t d;
    if (am_root)
        coll_sm_data_init(&d, rbuf, rcount, rdt);
    else
        coll_sm_data_init(&d, sbuf, scount, sdt);
    if (d.bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (gather_small(m, comm, sbuf, scount, sdt, rbuf, rcount, rdt, root, &rc))
        return rc;
    uint64_t s;
    rc = coll_sm_begin(m, comm, &s);
    if (rc == COLL_SM_HANDOFF)
        return gather_next(m, false, 0, "no segment", sbuf, scount, sdt, rbuf, rcount, rdt, root,
                           comm, module);
    if (rc != MPI_SUCCESS)
        return rc;
    if (am_root &&
        coll_sm_small_gather_late(m, comm, s, sbuf, scount, sdt, rbuf, rcount, rdt, &mixed,
                                  &rc)) {
        if (mixed)   /* some senders took the slots, some run operation s */
            gather_end_for_late(m, s);
        return rc;   /* the senders' blocks fit the slots, mine did not (erroneous) */
    }
    int set = coll_sm_set(m, s);
    coll_sm_ctl_t *my = coll_sm_ctl(m, m->me);
    size_t total = d.bytes * (size_t)m->n;
    if (coll_sm_gather_timed(m, total)) {
        if (!am_root)
            return gather_send_timed(m, s, root, &d);
        return gather_root_timed(m, s, &d, total, sbuf, scount, sdt);
    }
    bool check = coll_sm_device_check_blocks(m, total);
    /* a root that only reads writes nothing (nor waits to claim the set) */
    if (!am_root || check) {
        coll_sm_claim_set(m, s);
        my->meta[set] = d.bytes;
    }
    int v = GATHER_STAGE;
    bool dev_late = false;
    if (check && !am_root && d.device) {
        v = gather_sender_verdict(m, s, root, &d, total);
    } else if (check && am_root) {
        coll_sm_wait_all(m, COLL_SM_V(s, 1));
        v = gather_verdict(m, s, root, total, &dev_late);
        my->meta[set] = d.bytes | META_VERDICT(v);
        coll_sm_post(m, COLL_SM_V(s, 1));
    }
    if (v == GATHER_DEV && coll_sm_dev_ready_gather(m, s, 2, root))
        return am_root ? gather_root_dev(m, s, &d, sbuf, scount, sdt, rbuf, rcount, rdt, rc)
                       : coll_sm_dev_gather(m, s, root, &d, NULL);   /* it ends the operation */
    if (v != GATHER_STAGE)
        return gather_next(m, true, s, "device buffers", sbuf, scount, sdt, rbuf, rcount, rdt,
                           root, comm, module);
    if (!am_root)
        rc = gather_send(m, s, root, &d, check && d.device ? 1 : 0, check ? 1 : 0, 0);
    else if (sbuf != MPI_IN_PLACE)
        rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt);
    if (am_root)
        rc = SM_KEEP(rc, gather_root(m, s, &d, check ? 1 : 0, 0, dev_late));
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return rc;
}

/* ------------------------------------------------------------ v form */

int coll_sm_gatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                    const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt,
                    int root, obj_comm_t *comm, coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    int rc;
    if (coll_sm_small_gatherv(m, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, &rc))
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_gatherv, module, "no slots");
    return next ? next->fns.gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
                                    next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}
