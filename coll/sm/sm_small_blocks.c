/*
 * coll sm: small allgathers, alltoalls and the v forms (allgatherv,
 * scatterv, gatherv) through the slots (the protocol is described in
 * sm_small.c).
 */
#include "coll/sm/sm_small.h"
#include "coll/sm/sm_device.h"
#include "accel/accel.h"
#include "obj/err.h"

/* Small allgathers and alltoalls with device buffers (contiguous or not)
 * where coll sm may move them device to device (coll_sm_device_ipc,
 * coll_sm_device_blocks_min): the process says so in its slot instead of
 * staging its data, and if any slot says so everyone hands the call on to
 * the flag-based path (sm_allgather.c), which copies device to device in one
 * launch where everyone has device buffers (on an H200 under MPS, np 2
 * 13-16 against 16-19 us for the two staged copies here; np 8 23 against
 * 30-32) and stages where some have host buffers.  A process that set
 * the flag knows the verdict; one that did not looks at each other slot's
 * flags as it copies from it (a line it has loaded anyway: a separate pass
 * over the flags cost np 2 0.025 us of 0.15 with host buffers), writing
 * nothing the flag path would not write again (its buffers are host
 * memory).  Where no process has a device component (m->host_only) no
 * slot's flags are ever set. */
static bool small_dev_want(coll_sm_module_t *m, bool device, size_t total)
{
    return device && coll_sm_dev_blocks_eligible(m, total);
}

/* Every slot of the set but `skip`'s (-1: none) holds exactly `bytes`
 * (matching signatures: an erroneous program's blocks take the careful
 * way, which reports or tolerates them block by block). */
static bool small_lens(coll_sm_module_t *m, int set, int skip, size_t bytes)
{
    for (int j = 0; j < m->n; j++)
        if (j != skip && coll_sm_slot(m, j, set)->len != bytes)
            return false;
    return true;
}

/* The pieces of coll_sm_small_allgather, each called once and inlined. */

/* Whether an allgather of blocks of b bytes goes through the slots (false
 * with *rc set where the segment could not be set up).  The same verdict
 * everywhere: the receive signature is.  All blocks together at most
 * small_max bytes, or all (or the others', what a process reads) at most
 * small_bulk_max with blocks in bulk slots where they do not fit a slot
 * (BULK; larger slots cost the small operations TLB misses,
 * coll/sm/README.md): np 2, 1 / 2 / 4 KiB blocks 0.67 / 0.88 / 1.23 ->
 * 0.54 / 0.76 / 0.94 us, 8 KiB 1.83-1.90 -> 1.30-1.36 */
SM_HOT bool small_ag_takes(coll_sm_module_t *m, obj_comm_t *comm, size_t b, int *rc)
{
    size_t total = b * (size_t)m->n, others = total - b;
    if (b == 0 || others > coll_sm_small_limit())
        return false;
    if (!small_ready(m, comm, rc))
        return false;
    return coll_sm_small_fits(m, b, total) ||
           (coll_sm_params.small_bulk_max > 0 && coll_sm_small_fits(m, b, others));
}

/* My own block from my send buffer into the receive buffer. */
SM_HOT int small_ag_own(coll_sm_module_t *m, const void *sbuf, MPI_Count scount,
                        obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                        bool device)
{
    return coll_copy_as(sbuf, scount, sdt, coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt,
                        device);
}

/* Every block (b bytes, mine from my slot) gathered in host scratch and
 * copied to the contiguous device result `all` at once. */
SM_HOT void small_ag_take_device(coll_sm_module_t *m, int set, size_t b, char *all, int *rc)
{
    for (int j = 0; j < m->n; j++)
        memcpy((char *)m->scratch + (size_t)j * b, small_data(m, j, set, b), b);
    *rc = SM_KEEP(*rc, accel_copy(all, m->scratch, b * (size_t)m->n, NULL));
}

/* Every other process's block from its slot into r0 (rcount elements a
 * block); false where one has device buffers: the flag path, as
 * everyone. */
SM_HOT bool small_ag_take(coll_sm_module_t *m, int set, const coll_sm_data_t *r0,
                          MPI_Count rcount, size_t cap, int *rc)
{
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
        if (RAIL_UNLIKELY(sj->flags & COLL_SM_SLOT_DEVICE)) {
            *rc = MPI_SUCCESS;   /* the flag path, as everyone */
            return false;
        }
        size_t len = sj->len;
        if (len > r0->bytes) {
            if (*rc == MPI_SUCCESS)
                *rc = obj_errf(MPI_ERR_TRUNCATE, "allgather: process %d sent %zu bytes, this "
                               "process's arguments hold %zu (type signatures differ)", j, len,
                               r0->bytes);
            len = r0->bytes;
        }
        coll_sm_data_t dj = coll_sm_data_at(r0, j * rcount);
        int r2 = coll_sm_unpack(&dj, 0, small_data(m, j, set, r0->bytes), RAIL_MIN(len, cap));
        if (*rc == MPI_SUCCESS)
            *rc = r2;
    }
    return true;
}

bool coll_sm_small_allgather(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                             MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                             obj_datatype_t *rdt, int *rc)
{
    coll_sm_data_t r0, mine;
    *rc = MPI_SUCCESS;
    coll_sm_data_init(&r0, rbuf, rcount, rdt);
    if (!small_ag_takes(m, comm, r0.bytes, rc))
        return *rc != MPI_SUCCESS;
    size_t total = r0.bytes * (size_t)m->n, cap = coll_sm_small_cap(m, r0.bytes);
    bool bulk = total > coll_sm_params.small_max;
    bool inplace = sbuf == MPI_IN_PLACE;
    if (inplace)
        mine = coll_sm_data_at(&r0, m->me * rcount);
    else
        coll_sm_data_init(&mine, sbuf, scount, sdt);
    /* a contiguous device result: every block (mine from my slot) gathered
     * in host scratch and copied over at once, not one copy per block */
    char *all = NULL;
    if (r0.device && total <= 2 * m->chunk)
        all = rail_dt_contig_ptr(rdt->layout, rcount * m->n, rbuf);
    bool dev = small_dev_want(m, mine.device || r0.device, total);
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = dev ? COLL_SM_SLOT_DEVICE : 0;   /* (never COLL_SM_SLOT_ROOTED) */
    my->len = (uint32_t)RAIL_MIN(mine.bytes, (size_t)UINT32_MAX);
    if (!dev)
        *rc = coll_sm_pack(&mine, 0, small_data_mine(m, set, t, r0.bytes),
                           RAIL_MIN(mine.bytes, cap));
    coll_sm_slot_post(m, set, t);
    /* its own block while the others' are on their way (a result copied
     * over at once takes it from my slot) */
    if (!inplace && all == NULL && !dev)
        *rc = SM_KEEP(*rc, small_ag_own(m, sbuf, scount, sdt, rbuf, rcount, rdt,
                                        mine.device || r0.device));
    coll_sm_slot_wait_all_data(m, set, t, r0.bytes);
    small_seen_all(m, t);
    if (dev) {
        /* everyone sees my flag: the flag path (which meets any error of
         * mine here again) */
        *rc = MPI_SUCCESS;
        return false;
    }
    if (all != NULL && small_lens(m, set, -1, r0.bytes)) {
        small_ag_take_device(m, set, r0.bytes, all, rc);
    } else {
        if (!inplace && all != NULL)   /* blocks of other lengths: one by one */
            *rc = SM_KEEP(*rc, small_ag_own(m, sbuf, scount, sdt, rbuf, rcount, rdt,
                                            mine.device || r0.device));
        if (!small_ag_take(m, set, &r0, rcount, cap, rc))
            return false;
    }
    if (bulk)
        rail_atomic_add_fetch(&coll_sm_count_small_bulk, 1);
    return true;
}

/* The pieces of coll_sm_small_alltoall, each called once and inlined. */

/* My blocks for the others into my slot's data `mine` (cap bytes):
 * position i holds the block for process me + 1 + i, so at two processes
 * the other's block starts in the sequence word's line; from the host
 * copy hs of my send buffer where there is one (sall). */
SM_HOT void small_a2a_put(coll_sm_module_t *m, const coll_sm_data_t *s0, uint8_t *mine,
                          const char *sall, const char *hs, size_t cap, int *rc)
{
    int n = m->n;
    size_t sb = s0->bytes;
    for (int i = 0; i < n - 1; i++) {
        int j = (m->me + 1 + i) % n;
        size_t at = (size_t)i * sb;
        if (at >= cap)
            break;
        if (sall != NULL) {
            memcpy(mine + at, hs + (size_t)j * sb, RAIL_MIN(sb, cap - at));
            continue;
        }
        coll_sm_data_t dj = coll_sm_data_at(s0, j * s0->count);
        *rc = SM_KEEP(*rc, coll_sm_pack(&dj, 0, mine + at, RAIL_MIN(sb, cap - at)));
    }
}

/* Every block (rb bytes) into host scratch, then to the contiguous device
 * receive buffer rall in one copy (own_host: my own block from the host
 * copy hs of my send buffer, sb bytes a block), or two around my own
 * block, which is in place already. */
SM_HOT void small_a2a_take_device(coll_sm_module_t *m, int set, size_t others, size_t rb,
                                  const char *hs, size_t sb, char *rall, bool own_host, int *rc)
{
    int n = m->n;
    char *h = m->scratch;
    for (int p = 0; p < n; p++)
        if (p != m->me)
            memcpy(h + (size_t)p * rb,
                   small_data(m, p, set, others) + (size_t)((m->me - p - 1 + n) % n) * rb, rb);
    if (own_host) {
        memcpy(h + (size_t)m->me * rb, hs + (size_t)m->me * sb, rb);
        *rc = SM_KEEP(*rc, accel_copy(rall, h, (size_t)n * rb, NULL));
    } else {
        size_t lo = (size_t)m->me * rb, hi = lo + rb;
        if (lo > 0)
            *rc = SM_KEEP(*rc, accel_copy(rall, h, lo, NULL));
        if (hi < (size_t)n * rb)
            *rc = SM_KEEP(*rc, accel_copy(rall + hi, h + hi, (size_t)n * rb - hi, NULL));
    }
}

/* Every other process's block for me from its slot into r0 (rcount
 * elements a block); false where one has device buffers: the flag path,
 * as everyone. */
SM_HOT bool small_a2a_take(coll_sm_module_t *m, int set, const coll_sm_data_t *r0,
                           MPI_Count rcount, size_t others, size_t cap, int *rc)
{
    int n = m->n;
    for (int p = 0; p < n; p++) {
        if (p == m->me)
            continue;
        const coll_sm_slot_t *sp = coll_sm_slot(m, p, set);
        if (RAIL_UNLIKELY(sp->flags & COLL_SM_SLOT_DEVICE)) {
            *rc = MPI_SUCCESS;
            return false;
        }
        size_t len = sp->len, at = (size_t)((m->me - p - 1 + n) % n) * len;
        if (len > r0->bytes) {
            if (*rc == MPI_SUCCESS)
                *rc = obj_errf(MPI_ERR_TRUNCATE, "alltoall: process %d sent %zu bytes, this "
                               "process's arguments hold %zu (type signatures differ)", p, len,
                               r0->bytes);
            len = r0->bytes;
        }
        if (at >= cap)
            continue;
        coll_sm_data_t dp = coll_sm_data_at(r0, p * rcount);
        *rc = SM_KEEP(*rc, coll_sm_unpack(&dp, 0, small_data(m, p, set, others) + at,
                                          RAIL_MIN(len, cap - at)));
    }
    return true;
}

/* Whether an alltoall whose blocks for the others take `others` bytes
 * goes through the slots (false with *rc set where the segment could not
 * be set up).  The same verdict everywhere: the receive signature is.  The
 * blocks for the others together at most small_max bytes in the slot, or
 * small_bulk_max in the bulk slot (BULK): np 2, 2 / 4 / 8 KiB blocks 1.34
 * / 1.11 / 1.71 -> 1.05 / 1.04 / 1.24 us (an AMD host; np 4 and 8 on 2
 * cores the same either way) */
SM_HOT bool small_a2a_takes(coll_sm_module_t *m, obj_comm_t *comm, size_t b, size_t others,
                            int *rc)
{
    if (b == 0 || others > coll_sm_small_limit())
        return false;
    if (!small_ready(m, comm, rc))
        return false;
    return coll_sm_small_fits(m, others, others);
}

/* My own block from my send buffer into the receive buffer. */
SM_HOT int small_a2a_own(coll_sm_module_t *m, const void *sbuf, MPI_Count scount,
                         obj_datatype_t *sdt, void *rbuf, MPI_Count rcount, obj_datatype_t *rdt,
                         bool device)
{
    return coll_copy_as(coll_elem(sbuf, sdt, m->me * scount), scount, sdt,
                        coll_elem(rbuf, rdt, m->me * rcount), rcount, rdt, device);
}

bool coll_sm_small_alltoall(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                            MPI_Count scount, obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, int *rc)
{
    coll_sm_data_t r0, s0;
    *rc = MPI_SUCCESS;
    coll_sm_data_init(&r0, rbuf, rcount, rdt);
    size_t others = r0.bytes * (size_t)(m->n - 1);
    if (!small_a2a_takes(m, comm, r0.bytes, others, rc))
        return *rc != MPI_SUCCESS;
    size_t cap = coll_sm_small_cap(m, others);
    bool inplace = sbuf == MPI_IN_PLACE;
    if (inplace)
        s0 = r0;
    else
        coll_sm_data_init(&s0, sbuf, scount, sdt);
    size_t sb = s0.bytes, rb = r0.bytes;
    int set, n = m->n;
    /* contiguous device buffers move through host scratch in one copy each
     * way (the received blocks at its start, a copy of the send buffer
     * after them), not one copy per block */
    bool fit = (size_t)n * (rb + sb) <= 2 * m->chunk;
    char *hs = (char *)m->scratch + (size_t)n * rb;
    const char *sall = NULL;
    char *rall = NULL;
    /* in place the flag path would hand a device alltoall on (the blocks
     * the others read are overwritten): it stays here */
    bool dev = !inplace && small_dev_want(m, s0.device || r0.device, r0.bytes * (size_t)n);
    if (fit && r0.device)
        rall = rail_dt_contig_ptr(rdt->layout, rcount * n, rbuf);
    if (fit && s0.device && !dev)
        sall = inplace ? rall : rail_dt_contig_ptr(sdt->layout, scount * n, sbuf);
    if (sall != NULL && accel_copy(hs, sall, (size_t)n * sb, NULL) != MPI_SUCCESS)
        sall = NULL;   /* (reported by the copies below, one by one) */
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = dev ? COLL_SM_SLOT_DEVICE : 0;   /* (never COLL_SM_SLOT_ROOTED) */
    my->len = (uint32_t)RAIL_MIN(sb, (size_t)UINT32_MAX);
    /* position i holds the block for process me + 1 + i: at two processes
     * the other's block starts in the sequence word's line */
    uint8_t *mine = small_data_mine(m, set, t, others);
    if (!dev)
        small_a2a_put(m, &s0, mine, sall, hs, cap, rc);
    coll_sm_slot_post(m, set, t);
    /* my own block: from the host copy of my send buffer where the result
     * goes over in one copy, else copied here */
    bool own_host = rall != NULL && sall != NULL && sb == rb;
    if (!inplace && !own_host && !dev)
        *rc = SM_KEEP(*rc, small_a2a_own(m, sbuf, scount, sdt, rbuf, rcount, rdt,
                                            s0.device || r0.device));
    /* (my block at position 0 at two processes) */
    coll_sm_slot_wait_all_data(m, set, t, n == 2 ? rb : 0);
    small_seen_all(m, t);
    if (dev) {
        /* everyone sees my flag: the flag path (which meets any error of
         * mine here again) */
        *rc = MPI_SUCCESS;
        return false;
    }
    if (rall != NULL && small_lens(m, set, m->me, rb)) {
        small_a2a_take_device(m, set, others, rb, hs, sb, rall, own_host, rc);
        small_count_bulk(m, others);
        return true;
    }
    if (!inplace && own_host)
        *rc = SM_KEEP(*rc, small_a2a_own(m, sbuf, scount, sdt, rbuf, rcount, rdt,
                                        s0.device || r0.device));
    if (!small_a2a_take(m, set, &r0, rcount, others, cap, rc))
        return false;
    small_count_bulk(m, others);
    return true;
}

/* ------------------------------------------------------------ v forms */

/* Small MPI_Allgatherv, MPI_Gatherv and MPI_Scatterv through the slots
 * (each went to the next component's messages: np 2 scatterv of 8 bytes
 * 0.20 us against Open MPI's 0.11, np 4 allgatherv 3.9).  Device buffers
 * are staged through the slots by accel copies, as small bcasts are.
 *
 *   allgatherv (all blocks together at most small_max bytes: every process
 *     knows the counts, so the same answer everywhere): as allgather, each
 *     block copied out to its displacement.
 *   scatterv: only the root knows the blocks, so every scatterv takes a
 *     slot operation and the root decides: it writes the others' block
 *     lengths (4 bytes each; none where all are of one length,
 *     COLL_SM_SLOT_UNIFORM) and then their blocks at a stride of the
 *     largest, or, where they do not fit, says COLL_SM_SLOT_HANDOFF and
 *     everyone hands the call on.
 *   gatherv: each sender decides for its own block: one that fits its slot
 *     writes it there and leaves; a larger one (or a device one, whose
 *     staging would cost the sender a copy while the root waits) says
 *     COLL_SM_SLOT_VIA_MESSAGE and sends it to the root by a message with
 *     the call's tag (every process takes one).  The root waits for every
 *     slot and copies out or receives. */

static bool small_v_ok(coll_sm_module_t *m, obj_comm_t *comm, int *rc)
{
    *rc = MPI_SUCCESS;
    return coll_sm_params.small_max > 0 && small_ready(m, comm, rc);
}

bool coll_sm_small_allgatherv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                              MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                              const MPI_Count rcounts[], const MPI_Aint displs[],
                              obj_datatype_t *rdt, int *rc)
{
    size_t total = 0, most = 0;
    for (int j = 0; j < m->n; j++) {
        size_t b = (size_t)(rcounts[j] * rdt->size);
        total += b;
        most = RAIL_MAX(most, b);
    }
    *rc = MPI_SUCCESS;
    if (total == 0 || total > coll_sm_params.small_max)
        return false;
    if (!small_v_ok(m, comm, rc))
        return *rc != MPI_SUCCESS;
    if (most > m->slot_size)
        return false;
    coll_sm_data_t mine;
    void *own = coll_elem(rbuf, rdt, displs[m->me]);
    if (sbuf == MPI_IN_PLACE)
        coll_sm_data_init(&mine, own, rcounts[m->me], rdt);
    else
        coll_sm_data_init(&mine, sbuf, scount, sdt);
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = 0;
    my->len = (uint32_t)RAIL_MIN(mine.bytes, m->slot_size);
    *rc = coll_sm_pack(&mine, 0, my->data, RAIL_MIN(mine.bytes, m->slot_size));
    coll_sm_slot_post(m, set, t);
    if (sbuf != MPI_IN_PLACE)
        *rc = SM_KEEP(*rc, coll_copy(sbuf, scount, sdt, own, rcounts[m->me], rdt));
    coll_sm_slot_wait_all(m, set, t);
    small_seen_all(m, t);
    for (int j = 0; j < m->n; j++) {
        if (j == m->me)
            continue;
        *rc = SM_KEEP(*rc, small_take_block(coll_sm_slot(m, j, set), j,
                                            coll_elem(rbuf, rdt, displs[j]), rcounts[j], rdt));
    }
    rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
    return true;
}

/* The scatterv root's slot: the lengths of the others' blocks (4 bytes
 * each, in the order of their positions), then the blocks, `stride` bytes
 * apart. */
static size_t small_scatterv_head(int n)
{
    return ((size_t)(n - 1) * sizeof(uint32_t) + 7) & ~(size_t)7;
}

bool coll_sm_small_scatterv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                            const MPI_Count scounts[], const MPI_Aint displs[],
                            obj_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                            obj_datatype_t *rdt, int root, bool *handoff, int *rc)
{
    *handoff = false;
    if (!small_v_ok(m, comm, rc))
        return *rc != MPI_SUCCESS;
    const size_t head = small_scatterv_head(m->n);
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    if (m->me == root) {
        size_t stride = 0, least = SIZE_MAX;
        for (int j = 0; j < m->n; j++)
            if (j != root) {
                size_t b = (size_t)(scounts[j] * sdt->size);
                stride = RAIL_MAX(stride, b);
                least = RAIL_MIN(least, b);
            }
        /* blocks of one length (and at two processes the one block): no
         * lengths before them */
        bool uniform = least == stride || m->n < 2;
        size_t hd = uniform ? 0 : head, need = hd + (size_t)(m->n - 1) * stride;
        if (need > m->slot_size) {
            my->flags = COLL_SM_SLOT_HANDOFF;
            coll_sm_slot_post(m, set, t);
            *handoff = true;
            return true;
        }
        my->flags = uniform ? COLL_SM_SLOT_UNIFORM : 0;
        my->len = (uint32_t)stride;
        uint32_t *lens = (uint32_t *)(void *)my->data;
        *rc = MPI_SUCCESS;
        for (int j = 0, at = 0; j < m->n; j++) {
            if (j == root)
                continue;
            coll_sm_data_t d;
            coll_sm_data_init(&d, coll_elem(sbuf, sdt, displs[j]), scounts[j], sdt);
            if (!uniform)
                lens[at] = (uint32_t)d.bytes;
            *rc = SM_KEEP(*rc, coll_sm_pack(&d, 0, my->data + hd + (size_t)at * stride,
                                            d.bytes));
            at++;
        }
        coll_sm_slot_post(m, set, t);
        if (rbuf != MPI_IN_PLACE)
            *rc = SM_KEEP(*rc, coll_copy(coll_elem(sbuf, sdt, displs[root]), scounts[root], sdt,
                                         rbuf, rcount, rdt));
        rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
        return true;
    }
    const coll_sm_slot_t *rs = small_wait_root(m, root, set, t);
    if (rs->flags & COLL_SM_SLOT_HANDOFF) {
        small_rooted_done(m, set, t);
        *handoff = true;
        return true;
    }
    int at = m->me - (m->me > root);
    bool uniform = rs->flags & COLL_SM_SLOT_UNIFORM;
    size_t hd = uniform ? 0 : head, b = (size_t)(rcount * rdt->size);
    size_t len = uniform ? rs->len : ((const uint32_t *)(const void *)rs->data)[at];
    coll_sm_data_t d;
    coll_sm_data_init(&d, rbuf, rcount, rdt);
    *rc = SM_KEEP(coll_check_length(-1, len, b),
                  coll_sm_unpack(&d, 0, rs->data + hd + (size_t)at * rs->len, RAIL_MIN(len, b)));
    small_rooted_done(m, set, t);
    rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
    return true;
}

bool coll_sm_small_gatherv(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf,
                           MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                           const MPI_Count rcounts[], const MPI_Aint displs[],
                           obj_datatype_t *rdt, int root, int *rc)
{
    if (!small_v_ok(m, comm, rc))
        return *rc != MPI_SUCCESS;
    int set;
    uint64_t t = small_begin(m, &set);
    int tag = coll_tag_next(comm);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    if (m->me != root) {
        coll_sm_data_t d;
        coll_sm_data_init(&d, sbuf, scount, sdt);
        bool msg = d.device || d.bytes > coll_sm_params.small_max || d.bytes > m->slot_size;
        my->flags = msg ? COLL_SM_SLOT_VIA_MESSAGE : 0;
        my->len = (uint32_t)(msg ? 0 : d.bytes);
        *rc = msg ? MPI_SUCCESS : coll_sm_pack(&d, 0, my->data, d.bytes);
        coll_sm_slot_post(m, set, t);
        if (msg)
            *rc = coll_send(sbuf, scount, sdt, root, tag, comm);
        rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
        return true;
    }
    my->flags = 0;
    *rc = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        *rc = coll_copy(sbuf, scount, sdt, coll_elem(rbuf, rdt, displs[root]), rcounts[root], rdt);
    coll_sm_slot_wait_all(m, set, t);
    small_seen_all(m, t);
    coll_reqs_t q;
    coll_reqs_init(&q);
    for (int j = 0; j < m->n; j++) {
        if (j == root)
            continue;
        const coll_sm_slot_t *sj = coll_sm_slot(m, j, set);
        void *blk = coll_elem(rbuf, rdt, displs[j]);
        if (sj->flags & COLL_SM_SLOT_VIA_MESSAGE) {
            *rc = SM_KEEP(*rc, coll_reqs_irecv(&q, blk, rcounts[j], rdt, j, tag, comm));
            continue;
        }
        *rc = SM_KEEP(*rc, small_take_block(sj, j, blk, rcounts[j], rdt));
    }
    *rc = coll_reqs_wait(&q, *rc);
    coll_sm_slot_post(m, set, t);
    rail_atomic_add_fetch(&coll_sm_count_small_v, 1);
    return true;
}
