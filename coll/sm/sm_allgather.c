/*
 * coll sm: allgather and alltoall (gather, which shares their rounds, is in
 * sm_gather.c).  Every process writes its own data into its own area; the
 * readers copy them out.
 *
 *   gather:    a sender posts step k + 1 when round k (one buffer of its
 *              block) is in buffer coll_sm_bidx(k); the root waits for
 *              everyone's step k + 1, copies round k out and posts step
 *              k + 1.  A sender writes round k >= nbuf only after the
 *              root's step k - nbuf + 1 (round k - nbuf consumed).
 *              Where a device component is active in the communicator
 *              the root gives a verdict on device buffers as its step 1
 *              (GATHER_STAGE below; its "round k read" is then step
 *              k + 2).
 *   allgather: round k of every block: write mine, post k + 1, wait for
 *              everyone's k - L + 1, copy their round k - L out (L rounds
 *              written ahead: sm_lag, coll_sm_round_lag).  Writing round
 *              k + nbuf into the same buffer is safe without another wait
 *              when nbuf >= 2 L + 2: every process posted k + L + 2 only
 *              after it finished reading round k.
 *   alltoall:  the same with the buffer cut into n - 1 pieces, piece i for
 *              process me + 1 + i (MPI_IN_PLACE works: round k of every
 *              outgoing block is written out before round k of any
 *              incoming block lands on it).
 * Each writer's meta word is its bytes per block; readers copy at most
 * that and their own size (MPI_ERR_TRUNCATE when the writer's is larger).
 *
 * ALLGATHER BY SINGLE COPY (from coll_sm_adapt_blocks_min bytes in all, not
 * oversubscribed; base/adapt.c): step 1 announces, per process, its block's
 * size (meta), address (addr) and in raddr whether that block is
 * contiguous host memory (bit 0) and, from rank 0, the path it wants
 * (bits 1-2, COLL_SM_PATH_*, chosen by time; an alltoall's may be the
 * segment written with streaming stores).  If rank 0 wants single copy and
 * every block can be read directly, everyone reads the others' blocks with
 * process_vm_readv and waits for everyone's FINAL before returning (its
 * block is read until then); otherwise the rounds follow, from step 2.
 * ALLTOALL BY SINGLE COPY (the same rules): step 1 also carries the stride
 * between the blocks of the send buffer (raddr >> 3); a process reads block
 * `me` of every other's send buffer.  Not in place (the owner overwrites
 * its blocks as others read them) and not from device memory.  On an
 * oversubscribed node, where nothing is timed (rank 0's timings there chose
 * the slower path: np 4, 32-64 KiB blocks 34-67 us against the segment's
 * 25-41), alltoalls of coll_sm_oversub_alltoall_cma_min bytes in all take
 * single copy where a probe finds the kernel's copy less than 4 times as
 * slow as memcpy (np 4 on 2 cores, 64 KiB blocks: 31 us against the
 * segment's 54 with memcpy at 13.7 GB/s; 27-30 against 45-47 where the
 * kernel's copy took 2.2 times memcpy's; the segment 38-41 against 58-63
 * where it took 7.6 times), and blocks of coll_sm_alltoall_max go to the next component
 * (tuned's linear exchange by single copy: at np 8 it beat ours from 1
 * MiB blocks).
 * Own blocks are copied locally, not through the segment (in place an
 * alltoall leaves its own block where it is).
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

/* After step 1 of an allgather or alltoall: whether every process said it
 * has device buffers (those alone published a record for
 * coll_sm_dev_ready). */
static bool all_device(coll_sm_module_t *m, uint64_t s)
{
    int set = coll_sm_set(m, s);
    for (int j = 0; j < m->n; j++)
        if (!sm_meta_device(m, j, set))
            return false;
    return true;
}
enum { ANNOUNCE_SEGMENT = 0, ANNOUNCE_DIRECT = 1, ANNOUNCE_HANDOFF = 2 };
static int direct_announce(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *d,
                           bool direct, uint64_t stride, int want, bool device, size_t total);


/* How many rounds a process writes ahead of the round it reads (allgather,
 * alltoall): with a lag each read finds its round long written instead of
 * waiting for the slower writer of the same round (np 2, 1 MiB, lag 2:
 * about 10% less time in a two-process probe).  Round i is posted as step
 * i + 1 after round i - L - 1 was read, so before round i is written into
 * the buffer of round i - nbuf, everyone's step >= i - L (seen in the
 * previous wait) must say round i - nbuf was read: nbuf >= 2 L + 2. */
static size_t sm_lag(const coll_sm_module_t *m, size_t rounds)
{
    int lag = coll_sm_params.round_lag > 0 ? coll_sm_params.round_lag : 0;
    size_t L = RAIL_MIN((size_t)lag, (size_t)(m->nbuf - 2) / 2);
    return rounds > 1 ? RAIL_MIN(L, rounds - 1) : 0;
}

/* The device check carried in round 0 (allgather and alltoall where a
 * device component is active and step 1 would only ask who has device
 * buffers): a process with host buffers writes its meta (no META_DEVICE)
 * and posts its first round as step 1; one with device
 * buffers announces them in step 1 instead (direct_announce).  Whoever
 * runs the rounds looks at everyone's device bit once everyone's step 1 is
 * in, before it writes anything into its receive buffer but its own block
 * (in place, the blocks still to send live there): with one set, it stops
 * and hands the call on as the device processes do.  What it wrote into
 * the segment by then is never read.  A host-only call so saves the wait
 * for everyone that an announcement step costs (np 4 on 2 cores, 512 B-8
 * KiB allgathers: 18-22 us with it, 10-13 without). */
static void rounds_claim(coll_sm_module_t *m, uint64_t s, size_t bytes)
{
    coll_sm_claim_set(m, s);
    coll_sm_ctl(m, m->me)->meta[coll_sm_set(m, s)] = bytes;   /* no META_DEVICE */
}

static bool rounds_see_device(coll_sm_module_t *m, uint64_t s)
{
    int set = coll_sm_set(m, s);
    for (int j = 0; j < m->n; j++)
        if (sm_meta_device(m, j, set))
            return true;
    return false;
}

/* ------------------------------------------------------------ allgather */

/* The rounds, from step step0 + 1 (step 1 may have been the announcement,
 * which claimed the set and wrote meta).  own: where my block goes in the
 * receive buffer, when both it and mine are contiguous host memory (each
 * round then goes into the segment and there in one pass, rail_copy2);
 * NULL when the caller copies it.  check (step0 0 only): the device check
 * rides on round 0 (rounds_claim); *handoff is set when some process has
 * device buffers (nothing read yet: the caller hands the call on). */
static int allgather_rounds(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *mine,
                            const coll_sm_data_t *r0, uint32_t step0, char *own, bool check,
                            bool *handoff)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    size_t C = m->chunk, K = rounds_of(r0->bytes, C);
    if (step0 == 0)
        rounds_claim(m, s, mine->bytes);
    size_t L = sm_lag(m, K);
    for (size_t i = 0; i < K + L; i++) {
        if (i < K && i * C < mine->bytes) {
            char *buf = coll_sm_round_buf(m, m->me, set, s, i, mine->bytes);
            size_t len = RAIL_MIN(C, mine->bytes - i * C);
            if (own)
                rail_copy2(buf, own + i * C, mine->contig + i * C, len);
            else
                rc = SM_KEEP(rc, coll_sm_pack(mine, i * C, buf, len));
        }
        coll_sm_post(m, COLL_SM_V(s, step0 + i + 1));
        if (i < L)
            continue;
        size_t k = i - L, off = k * C;   /* read round k */
        coll_sm_wait_all(m, COLL_SM_V(s, step0 + k + 1));
        if (k == 0 && check && rounds_see_device(m, s)) {
            *handoff = true;
            return MPI_SUCCESS;
        }
        for (int j = 0; j < m->n; j++) {
            if (j == m->me)
                continue;
            coll_sm_data_t dj = coll_sm_data_at(r0, j * r0->count);
            const char *in = coll_sm_round_buf(m, j, set, s, k, sm_meta(m, j, set));
            rc = SM_KEEP(rc, sm_take(m, set, j, &dj, off, C, in));
        }
    }
    return SM_KEEP(rc, sm_truncated(m, set, r0->bytes));
}

/* The path rank 0 asked for in step 1 (bits 1-2 of its raddr word). */
static int announced_want(coll_sm_module_t *m, uint64_t s)
{
    return (int)((coll_sm_ctl(m, 0)->raddr[coll_sm_set(m, s)] >> 1) & 3);
}

/* Step 1 of a time-chosen allgather or alltoall (see ALLGATHER BY SINGLE
 * COPY): announces d (this process's block or send buffer), whether it can
 * be read directly, the stride between blocks to read (0: one block) and
 * whether this process's buffers are device memory (device).  Returns
 * ANNOUNCE_HANDOFF when some process has device buffers and the operation
 * moves at least coll_sm_device_blocks_min bytes in all (total): everyone
 * goes device to device (sm_device.c) or hands it to the next component,
 * whose messages move device data device to device by IPC; else
 * ANNOUNCE_DIRECT when everyone reads from the others directly, else 0
 * (the segment). */
static int direct_announce(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *d,
                           bool direct, uint64_t stride, int want, bool device, size_t total)
{
    int set = coll_sm_set(m, s);
    coll_sm_ctl_t *my = coll_sm_ctl(m, m->me);
    direct = direct && d->contig && !d->device && stride < ((uint64_t)1 << 60);
    coll_sm_claim_set(m, s);
    my->meta[set] = d->bytes | (device ? META_DEVICE : 0);
    my->addr[set] = (uint64_t)(uintptr_t)d->contig;
    my->raddr[set] = (direct ? 1u : 0u) | (uint64_t)want << 1 | (direct ? stride << 3 : 0);
    coll_sm_post(m, COLL_SM_V(s, 1));
    coll_sm_wait_all(m, COLL_SM_V(s, 1));
    if (coll_sm_params.device_blocks_min > 0 && total >= coll_sm_params.device_blocks_min)
        for (int j = 0; j < m->n; j++)
            if (sm_meta_device(m, j, set))
                return ANNOUNCE_HANDOFF;
    bool all = announced_want(m, s) == COLL_SM_PATH_CMA;
    for (int j = 0; j < m->n && all; j++)
        all = coll_sm_ctl(m, j)->raddr[set] & 1;
    return all ? ANNOUNCE_DIRECT : ANNOUNCE_SEGMENT;
}

/* ANNOUNCE_HANDOFF (or large alltoall blocks): this operation (allgather
 * or alltoall, same arguments) ends here for sm; the next component runs
 * it. */
static int hand_on(coll_sm_module_t *m, uint64_t s, int op, const char *why, const void *sbuf,
                   MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                   obj_datatype_t *rdt, obj_comm_t *comm, coll_module_t *module)
{
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    coll_module_t *next = coll_sm_next(comm, op, module, why);
    if (next == NULL)
        return MPI_ERR_UNSUPPORTED_OPERATION;
    return op == COLL_OP_allgather
               ? next->fns.allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, next)
               : next->fns.alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, next);
}

/* Then: block j of r0 from process j (at its address + me * its stride). */
static int direct_read(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *r0)
{
    int set = coll_sm_set(m, s), rc = MPI_SUCCESS;
    for (int k = 1; k < m->n && rc == MPI_SUCCESS; k++) {
        int j = (m->me + k) % m->n;   /* not everyone at the same process first */
        const coll_sm_ctl_t *cj = coll_sm_ctl(m, j);
        uint64_t at = cj->addr[set] + (uint64_t)m->me * (cj->raddr[set] >> 3);
        coll_sm_data_t dj = coll_sm_data_at(r0, j * r0->count);
        rc = coll_sm_cma_read_data(m, j, at, sm_meta(m, j, set), &dj);
    }
    return SM_KEEP(rc, sm_truncated(m, set, r0->bytes));
}

/* After step 1 handed an allgather or alltoall of `total` bytes on for
 * device buffers: how it goes device to device here, the same everywhere
 * (DEV_ONE: by process 0, where `one` and every result is published;
 * DEV_BLOCKS: everyone copies its own), or DEV_NONE: the next component. */
enum { DEV_NONE, DEV_ONE, DEV_BLOCKS };
static int dev_blocks_way(coll_sm_module_t *m, uint64_t s, bool one, size_t total)
{
    bool ok = coll_sm_dev_blocks_eligible(m, total) && all_device(m, s);
    if (ok && one && coll_sm_dev_results_published(m, s))
        return coll_sm_dev_ready_one(m, s, 2, 0) ? DEV_ONE : DEV_NONE;
    return ok && coll_sm_dev_ready_blocks(m, s, 2) ? DEV_BLOCKS : DEV_NONE;
}

/* My block (mine) and where it goes in my receive buffer: fused with the
 * rounds' writes (*own) where both are contiguous host memory of the same
 * size, with the others' blocks (*own_dev) where both are contiguous
 * device memory and the operation may go device to device (else the next
 * component takes it whole), else copied here first (*rc). */
static void allgather_own(coll_sm_module_t *m, const coll_sm_data_t *r0, coll_sm_data_t *mine,
                          const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                          MPI_Count rcount, obj_datatype_t *rdt, size_t total, char **own,
                          const void **own_dev, int *rc)
{
    coll_sm_data_t ob = coll_sm_data_at(r0, m->me * rcount);
    if (sbuf == MPI_IN_PLACE) {
        *mine = ob;
        return;
    }
    coll_sm_data_init(mine, sbuf, scount, sdt);
    if (mine->contig && !mine->device && ob.contig && !ob.device && ob.bytes == mine->bytes &&
        rail_copy_stream_mode != RAIL_COPY_STREAM_ALWAYS)
        *own = ob.contig;
    else if (mine->contig && mine->device && ob.contig && ob.device &&
             ob.bytes == mine->bytes && coll_sm_device_check_blocks(m, total))
        *own_dev = mine->contig;   /* step 1 hands on (direct_announce) */
    else
        *rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt);
}

/* An allgather that everyone hands on in step 1 for device buffers: true
 * where it ran device to device here (*rc), false where it goes to the
 * next component.  By one where every result is contiguous (the same
 * choice everywhere, before step 2; a failed open there hands on: a
 * second try would reuse the records' `opened`). */
static bool allgather_dev(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *mine,
                          const coll_sm_data_t *r0, bool one, char *rdev, const void *own_dev,
                          size_t total, int *rc)
{
    int way = dev_blocks_way(m, s, one, total);
    if (way == DEV_ONE)
        *rc = SM_KEEP(*rc, coll_sm_dev_allgather_one(m, s, mine->contig, rdev));
    else if (way == DEV_BLOCKS)
        *rc = SM_KEEP(*rc, coll_sm_dev_allgather(m, s, r0, own_dev));
    return way != DEV_NONE;
}

/* An allgather's blocks moved on the path agreed in step 1 (cma: read
 * from the others' buffers, else through the segment), operation s
 * ended; a: the timing to record (NULL: none). */
static int allgather_moved(coll_sm_module_t *m, uint64_t s, coll_sm_data_t *mine,
                           const coll_sm_data_t *r0, char *own, bool cma, rail_adapt_t *a,
                           size_t total, int rc)
{
    uint64_t t0 = a ? rail_now_ns() : 0;
    if (cma) {
        rc = SM_KEEP(rc, direct_read(m, s, r0));
    } else {
        /* the segment, written with streaming stores where rank 0 asks (my
         * own block then copied apart: the fused copy does not stream) */
        mine->stream = announced_want(m, s) == COLL_SM_PATH_STREAM && rail_copy_stream_offered();
        if (mine->stream && own) {
            rail_copy(own, mine->contig, mine->bytes);
            own = NULL;
        }
        rc = SM_KEEP(rc, allgather_rounds(m, s, mine, r0, 1, own, false, NULL));
        if (mine->stream && rc == MPI_SUCCESS)
            rail_atomic_add_fetch(&coll_sm_count_allgather_streamed, 1);
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    /* single copy: my own block while the others finish reading (after my
     * FINAL, which nobody then waits for behind this copy) */
    if (cma && own)
        rail_copy(own, mine->contig, mine->bytes);
    /* single copy: the others read my block until their FINAL; a timed
     * call is timed whole (a single copy that rank 0 timed to its own end
     * looked faster than the segment: np 2 1 MiB chosen at 118 us per
     * call against 99) */
    if (cma || a)
        coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (a)
        rail_adapt_record(a,
                          cma            ? COLL_SM_PATH_CMA
                          : mine->stream ? COLL_SM_PATH_STREAM
                                         : COLL_SM_PATH_SEGMENT,
                          total, rail_now_ns() - t0);
    return rc;
}

int coll_sm_allgather(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                      MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                      coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    coll_sm_data_t r0, mine;
    coll_sm_data_init(&r0, rbuf, rcount, rdt);
    if (r0.bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (coll_sm_small_allgather(m, comm, sbuf, scount, sdt, rbuf, rcount, rdt, &rc))
        return rc;
    uint64_t s;
    rc = coll_sm_begin(m, comm, &s);
    if (rc == COLL_SM_HANDOFF) {
        coll_module_t *next = coll_sm_next(comm, COLL_OP_allgather, module, "no segment");
        return next ? next->fns.allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    /* the total is the same everywhere (matching signatures), parameters too */
    size_t total = r0.bytes * (size_t)m->n;
    char *own = NULL;   /* my block into my receive block (allgather_own) */
    const void *own_dev = NULL;
    allgather_own(m, &r0, &mine, sbuf, scount, sdt, rbuf, rcount, rdt, total, &own, &own_dev,
                  &rc);
    rail_adapt_t *a;
    int want;
    bool check_only, device = r0.device || mine.device;
    bool step1 = coll_sm_step1_want(m, s, COLL_SM_ADAPT_ALLGATHER, total, &want, &a, &check_only);
    if (!step1 || (check_only && !device)) {
        bool handoff = false;
        rc = SM_KEEP(rc, allgather_rounds(m, s, &mine, &r0, 0, own, check_only, &handoff));
        if (handoff)
            return hand_on(m, s, COLL_OP_allgather, "device buffers", sbuf, scount, sdt, rbuf,
                           rcount, rdt, comm, module);
        coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
        return rc;
    }
    /* everyone agrees on rank 0's path (or hands on) in step 1; with device
     * buffers, my block is offered by IPC (sm_device.c) */
    /* (small ones: process 0 moves every block, so my result is offered too) */
    bool one = coll_sm_dev_blocks_by_one(m, total);
    char *rdev = one && r0.device ? rail_dt_contig_ptr(rdt->layout, rcount * m->n, rbuf) : NULL;
    if (device && coll_sm_dev_blocks_eligible(m, total))
        coll_sm_dev_publish(m, s, mine.device ? mine.contig : NULL, mine.bytes, rdev,
                            rdev ? total : 0);
    int ann = direct_announce(m, s, &mine, true, 0, want, device, total);
    if (ann == ANNOUNCE_HANDOFF) {
        if (allgather_dev(m, s, &mine, &r0, one, rdev, own_dev, total, &rc))
            return rc;
        return hand_on(m, s, COLL_OP_allgather, "device buffers", sbuf, scount, sdt, rbuf, rcount,
                       rdt, comm, module);
    }
    return allgather_moved(m, s, &mine, &r0, own, ann == ANNOUNCE_DIRECT, a, total, rc);
}

/* ------------------------------------------------------------ alltoall */

/* Our own block goes straight across (copy_own; in place it is where it
 * belongs), after the first round is posted, while the others pack theirs;
 * the rounds move the others. */
static void alltoall_copy_own(coll_sm_module_t *m, const coll_sm_data_t *s0,
                              const coll_sm_data_t *r0, int *rc)
{
    *rc = SM_KEEP(*rc, coll_copy(coll_elem(s0->buf, s0->dt, m->me * s0->count), s0->count,
                                 (obj_datatype_t *)s0->dt,
                                 coll_elem(r0->buf, r0->dt, m->me * r0->count), r0->count,
                                 (obj_datatype_t *)r0->dt));
}

/* Round k of writer r's pieces (blocks of `bytes`): *piece bytes apart.
 * Blocks of one round are packed tight (64-byte aligned) and placed by
 * coll_sm_round_buf, so small alltoalls pass over the whole area too;
 * larger ones, and all on an oversubscribed node (see coll_sm_round_buf),
 * cut each buffer in n - 1 pieces. */
static size_t alltoall_piece(const coll_sm_module_t *m)
{
    size_t P = m->chunk / (size_t)(m->n - 1);
    return P >= 64 ? P & ~(size_t)63 : P;
}

static char *alltoall_area(coll_sm_module_t *m, int r, int set, uint64_t s, size_t k,
                           size_t bytes, size_t *piece)
{
    size_t P = alltoall_piece(m);
    if (bytes <= P && !m->oversub) {
        *piece = RAIL_MIN(RAIL_ALIGN_UP(bytes, (size_t)64), P);
        return coll_sm_round_buf(m, r, set, s, k, (size_t)(m->n - 1) * *piece);
    }
    *piece = P;
    return coll_sm_buf(m, r, set, coll_sm_bidx(m, s, k));
}

/* The rounds, from step step0 + 1 (step 1 may have been the announcement,
 * which claimed the set and wrote meta). */
static int alltoall_rounds(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *s0,
                           const coll_sm_data_t *r0, bool copy_own, uint32_t step0, bool check,
                           bool *handoff)
{
    int set = coll_sm_set(m, s), n = m->n, rc = MPI_SUCCESS;
    size_t P = alltoall_piece(m);
    size_t K = rounds_of(RAIL_MAX(r0->bytes, s0->bytes), P);
    if (step0 == 0)
        rounds_claim(m, s, s0->bytes);
    size_t L = sm_lag(m, K);
    for (size_t i = 0; i < K + L; i++) {
        size_t Pw;
        char *out = alltoall_area(m, m->me, set, s, i, s0->bytes, &Pw);
        for (int j = 0; j < n && i < K && i * P < s0->bytes; j++) {
            if (j == m->me)
                continue;
            coll_sm_data_t dj = coll_sm_data_at(s0, j * s0->count);
            char *piece = out + (size_t)((j - m->me - 1 + n) % n) * Pw;
            rc = SM_KEEP(rc, coll_sm_pack(&dj, i * P, piece, RAIL_MIN(P, s0->bytes - i * P)));
        }
        coll_sm_post(m, COLL_SM_V(s, step0 + i + 1));
        if (i == 0 && copy_own)
            alltoall_copy_own(m, s0, r0, &rc);
        if (i < L)
            continue;
        size_t k = i - L, off = k * P;   /* read round k */
        coll_sm_wait_all(m, COLL_SM_V(s, step0 + k + 1));
        if (k == 0 && check && rounds_see_device(m, s)) {
            *handoff = true;   /* my own block (not in place) may be copied: harmless */
            return MPI_SUCCESS;
        }
        for (int j = 0; j < n; j++) {
            if (j == m->me)
                continue;
            coll_sm_data_t dj = coll_sm_data_at(r0, j * r0->count);
            size_t Pj;
            const char *in = alltoall_area(m, j, set, s, k, sm_meta(m, j, set),
                                           &Pj);
            in += (size_t)((m->me - j - 1 + n) % n) * Pj;   /* my piece of j's */
            rc = SM_KEEP(rc, sm_take(m, set, j, &dj, off, P, in));
        }
    }
    return SM_KEEP(rc, sm_truncated(m, set, r0->bytes));
}

/* An alltoall that everyone hands on in step 1 for device buffers: true
 * where it ran device to device here (*rc), false where it goes to the
 * next component.  By one (process 0 moves every block) where every
 * result is contiguous (as the allgather's): all and rdev, my send and
 * receive buffers as offered. */
static bool alltoall_dev(coll_sm_module_t *m, uint64_t s, const coll_sm_data_t *s0,
                         const coll_sm_data_t *r0, bool in_place, bool one, const void *all,
                         char *rdev, size_t total, int *rc)
{
    int way = dev_blocks_way(m, s, one, total);
    if (way == DEV_ONE)
        *rc = SM_KEEP(*rc, coll_sm_dev_alltoall_one(m, s, all, rdev));
    if (way != DEV_BLOCKS)
        return way == DEV_ONE;
    /* my own block with the others' where both are contiguous */
    coll_sm_data_t sm = coll_sm_data_at(s0, m->me * s0->count),
                   rm = coll_sm_data_at(r0, m->me * r0->count);
    const void *own_dev = NULL;
    if (!in_place && sm.contig && sm.device && rm.contig && rm.device && sm.bytes == rm.bytes)
        own_dev = sm.contig;
    else
        alltoall_copy_own(m, s0, r0, rc);
    int r = coll_sm_dev_alltoall(m, s, r0, own_dev);   /* always: it ends the operation */
    *rc = SM_KEEP(*rc, r);
    return true;
}

/* An alltoall's blocks moved on the path agreed in step 1 (cma: read
 * from the others' send buffers, else through the segment), operation s
 * ended; a: the timing to record (NULL: none), the call timed whole. */
static int alltoall_moved(coll_sm_module_t *m, uint64_t s, coll_sm_data_t *s0,
                          const coll_sm_data_t *r0, bool in_place, bool cma, rail_adapt_t *a,
                          size_t total, int rc)
{
    uint64_t t0 = a ? rail_now_ns() : 0;
    if (cma) {
        rc = SM_KEEP(rc, direct_read(m, s, r0));
        if (rc == MPI_SUCCESS)
            rail_atomic_add_fetch(&coll_sm_count_alltoall_cma, 1);
    } else {
        /* the segment, written with streaming stores where rank 0 asks
         * (np 2, 16 MiB blocks: 3.5-4.1 ms against 5.7-6.0 plain) */
        s0->stream = announced_want(m, s) == COLL_SM_PATH_STREAM && rail_copy_stream_offered();
        rc = SM_KEEP(rc, alltoall_rounds(m, s, s0, r0, !in_place, 1, false, NULL));
        if (s0->stream && rc == MPI_SUCCESS)
            rail_atomic_add_fetch(&coll_sm_count_alltoall_streamed, 1);
    }
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    /* single copy: my own block while the others finish reading (not in
     * place: nobody reads that block of my send buffer) */
    if (cma)
        alltoall_copy_own(m, s0, r0, &rc);
    /* the others read my send buffer until their FINAL */
    if (cma || a)
        coll_sm_wait_all(m, COLL_SM_V(s, COLL_SM_FINAL));
    if (a)
        rail_adapt_record(a,
                          cma          ? COLL_SM_PATH_CMA
                          : s0->stream ? COLL_SM_PATH_STREAM
                                       : COLL_SM_PATH_SEGMENT,
                          total, rail_now_ns() - t0);
    return rc;
}

int coll_sm_alltoall(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                     MPI_Count rcount, obj_datatype_t *rdt, obj_comm_t *comm,
                     coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    coll_sm_data_t r0, s0;
    coll_sm_data_init(&r0, rbuf, rcount, rdt);
    if (sbuf == MPI_IN_PLACE)
        s0 = r0;
    else
        coll_sm_data_init(&s0, sbuf, scount, sdt);
    if (r0.bytes == 0 && s0.bytes == 0)
        return MPI_SUCCESS;
    int rc;
    if (coll_sm_small_alltoall(m, comm, sbuf, scount, sdt, rbuf, rcount, rdt, &rc))
        return rc;
    uint64_t s;
    /* the block size is the same on every process (matching signatures);
     * large blocks on a crowded node go to the next component, unless a
     * device component somewhere may make this call device to device here
     * (known once the segment is set up: then after step 1) */
    static const char large[] = "large blocks (coll_sm_alltoall_max)";
    size_t total = r0.bytes * (size_t)m->n;
    bool big = m->oversub && coll_sm_params.alltoall_max &&
               r0.bytes >= coll_sm_params.alltoall_max;
    bool big_now = big && m->state == COLL_SM_READY && !coll_sm_dev_blocks_eligible(m, total);
    rc = big_now ? COLL_SM_HANDOFF : coll_sm_begin(m, comm, &s);
    if (rc == COLL_SM_HANDOFF) {
        coll_module_t *next = coll_sm_next(comm, COLL_OP_alltoall, module,
                                           big_now ? large : "no segment");
        return next ? next->fns.alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, next)
                    : MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (big && !coll_sm_dev_blocks_eligible(m, total))
        return hand_on(m, s, COLL_OP_alltoall, large, sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                       module);
    bool in_place = sbuf == MPI_IN_PLACE;
    rail_adapt_t *a;
    int want;
    bool check_only, device = s0.device || r0.device;
    bool step1 = coll_sm_step1_want(m, s, COLL_SM_ADAPT_ALLTOALL, total, &want, &a, &check_only);
    if (!step1 || (check_only && !device && !big)) {
        bool handoff = false;
        rc = alltoall_rounds(m, s, &s0, &r0, !in_place, 0, check_only, &handoff);
        if (handoff)
            return hand_on(m, s, COLL_OP_alltoall, "device buffers", sbuf, scount, sdt, rbuf,
                           rcount, rdt, comm, module);
        coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
        return rc;
    }
    /* everyone agrees on rank 0's path (or hands on) in step 1; with device
     * buffers, my send buffer is offered by IPC (sm_device.c; not in place:
     * the owner overwrites the blocks that the others read) */
    /* (small ones: process 0 moves every block, so my result is offered too) */
    bool one = coll_sm_dev_blocks_by_one(m, total);
    char *rdev = one && r0.device ? rail_dt_contig_ptr(rdt->layout, rcount * m->n, rbuf) : NULL;
    const void *all = NULL;
    if (device && coll_sm_dev_blocks_eligible(m, total)) {
        all = s0.device && !in_place ? rail_dt_contig_ptr(sdt->layout, scount * m->n, sbuf)
                                     : NULL;
        coll_sm_dev_publish(m, s, all, s0.bytes * (size_t)m->n, rdev, rdev ? total : 0);
    }
    int ann = direct_announce(m, s, &s0, !in_place, (uint64_t)(s0.count * s0.dt->extent), want,
                              device, total);
    if (ann == ANNOUNCE_HANDOFF) {
        if (alltoall_dev(m, s, &s0, &r0, in_place, one, all, rdev, total, &rc))
            return rc;
        return hand_on(m, s, COLL_OP_alltoall, "device buffers", sbuf, scount, sdt, rbuf, rcount,
                       rdt, comm, module);
    }
    if (big)
        return hand_on(m, s, COLL_OP_alltoall, large, sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                       module);
    return alltoall_moved(m, s, &s0, &r0, in_place, ann == ANNOUNCE_DIRECT, a, total, rc);
}

/* ------------------------------------------------------------ v forms */

/* Small ones through the slots (sm_small.c); the rest to the next
 * component. */
int coll_sm_allgatherv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                       const MPI_Count rcounts[], const MPI_Aint displs[], obj_datatype_t *rdt,
                       obj_comm_t *comm, coll_module_t *module)
{
    coll_sm_module_t *m = (coll_sm_module_t *)module;
    int rc;
    if (coll_sm_small_allgatherv(m, comm, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, &rc))
        return rc;
    coll_module_t *next = coll_sm_next(comm, COLL_OP_allgatherv, module, "not for the slots");
    return next ? next->fns.allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, next)
                : MPI_ERR_UNSUPPORTED_OPERATION;
}
