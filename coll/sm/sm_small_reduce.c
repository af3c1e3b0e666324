/*
 * coll sm: small reductions through the slots (allreduce, reduce; the
 * protocol, BULK and MISMATCHED SIZES are described in sm_small.c).
 */
#include "coll/sm/sm_small.h"
#include "accel/accel.h"
#include "obj/err.h"

/* A reduce's root, SMALL_MIXED: inputs in rank order into temporaries
 * where its own buffers are (device memory: the fold runs on the device),
 * from its buffer, the host slots, and the device non-roots' messages. */
static int small_reduce_mixed(coll_sm_module_t *m, obj_comm_t *comm, int set, const void *mine,
                              void *rbuf, MPI_Count count, obj_datatype_t *dt, obj_op_t *op,
                              int tag, int rc)
{
    coll_red_t r;
    void *amem = NULL, *xmem = NULL;
    char *acc = NULL, *x = NULL;
    /* (the pair was checked before: the slots took it) */
    rc = SM_KEEP(rc, coll_red_init(&r, op, dt, count, mine, rbuf));
    if (rc == MPI_SUCCESS) {
        acc = coll_red_tmp(&r, count, &amem);
        x = coll_red_tmp(&r, count, &xmem);
        if (acc == NULL || x == NULL)
            rc = obj_errf(MPI_ERR_NO_MEM, "coll sm: no memory for a reduce's temporaries");
    }
    MPI_Count N = rc == MPI_SUCCESS ? count * r.factor : 0;
    /* x0 op (x1 op (... op x(n-1))), as everywhere; every device sender's
     * message is received, even after an error */
    for (int p = m->n - 1; p >= 0; p--) {
        const coll_sm_slot_t *s = coll_sm_slot(m, p, set);
        char *to = p == m->n - 1 ? acc : x;
        int r2 = MPI_SUCCESS;
        if (p != m->me && (s->flags & COLL_SM_SLOT_DEVICE))
            r2 = rc == MPI_SUCCESS ? coll_recv(to, N, r.rdt, p, tag, comm)
                                   : coll_recv(NULL, 0, dt, p, tag, comm);
        else if (rc != MPI_SUCCESS)
            continue;
        else if (p == m->me)
            r2 = coll_red_load(&r, to, mine, count);
        else
            r2 = coll_copy(small_data(m, p, set, s->len), N, r.rdt, to, N, r.rdt);
        if (r2 == MPI_SUCCESS && rc == MPI_SUCCESS && p != m->n - 1)
            r2 = coll_red_apply(&r, x, acc, count);
        rc = SM_KEEP(rc, r2);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_red_store(&r, rbuf, acc, count);
    if (acc)
        coll_red_tmp_free(&r, amem);
    if (x)
        coll_red_tmp_free(&r, xmem);
    return rc;
}

/* ((x0 op x1) op x2) ... op x(k-1), the order of basic's scan chain (each
 * step the prefix op the next input), into a and b in turn (a kernel's
 * output may not be its first input); the result, x0 itself for k = 1. */
static const char *small_fold_left(rail_op_t rop, rail_typekind_t kind, int k,
                                   const char *const *x, size_t len, char *a, char *b, int *rc)
{
    const char *acc = x[0];
    for (int i = 1; i < k && *rc == MPI_SUCCESS; i++) {
        char *out = acc == a ? b : a;
        *rc = rail_op_reduce3(rop, kind, acc, x[i], out, len);
        if (*rc != MPI_SUCCESS)
            *rc = obj_errf(*rc, "coll sm: reduction kernel failed");
        acc = out;
    }
    return acc;
}

/* MISMATCHED SIZES of allreduces and reduce_scatters (erroneous: counts
 * that differ between processes).  Processes whose inputs fit the slots
 * take them, the others the flag rounds (sm_reduce.c, sm_rscatter.c),
 * and each side waits for everyone: a process on the slots waits for each
 * other's slot or its first step of the next flag-based operation, and
 * tells from the slot's tag (the flag-based operations its writer had
 * begun, as MISMATCHED SIZES below) which path it took.  Finding any on
 * the flag rounds, it joins their operation and ends it at once (its
 * meta word saying it has begun one more small operation, and how many
 * bytes its input has) and reports the mismatch.  Those on the flag
 * rounds, once everyone's first step is in, find that word and stop
 * (coll_sm_red_first): they publish this small operation without data
 * (flags without the tag: nobody mistakes it for an input) and post
 * their FINAL.  Every process then has begun one more of each kind, so
 * later operations stay in step.  Reduces (whose non-roots on the slots
 * leave at once) and scans (whose larger calls go to the next component)
 * are not covered. */

/* The first other process found on the flag rounds instead of the slots
 * (its slot does not carry this call's tag), or -1; everyone's slot read
 * (reads: as coll_sm_slot_wait_all_data). */
static int small_red_late(coll_sm_module_t *m, int set, uint64_t t, size_t reads)
{
    coll_sm_slot_or_flag_wait_all(m, set, t, reads, COLL_SM_V(m->seq + 1, 1));
    uint32_t tag = COLL_SM_SLOT_ROOTED_AT(m->seq);
    for (int p = 0; p < m->n; p++) {
        const coll_sm_slot_t *sp = coll_sm_slot(m, p, set);
        if (p != m->me && (!COLL_SM_REACHED(rail_atomic_load_acquire(&sp->seq), t) ||
                           (sp->flags & ~COLL_SM_SLOT_DEVICE) != tag))
            return p;
    }
    return -1;
}

/* A process on the slots that found process `late` on the flag rounds:
 * their operation joined and ended; the mismatch reported. */
static int small_red_join(coll_sm_module_t *m, obj_comm_t *comm, int late, uint64_t bytes)
{
    uint64_t s;
    int rc = coll_sm_begin(m, comm, &s);
    if (rc != MPI_SUCCESS)   /* (cannot be: the segment is there) */
        return rc;
    int set = coll_sm_set(m, s);
    uint64_t theirs = coll_sm_red_meta_bytes(coll_sm_ctl(m, late)->meta[set]);
    coll_sm_claim_set(m, s);
    coll_sm_ctl(m, m->me)->meta[set] = coll_sm_red_meta(m, bytes);
    coll_sm_post(m, COLL_SM_V(s, COLL_SM_FINAL));
    return coll_check_length(late, (size_t)theirs, (size_t)(bytes & COLL_SM_RED_BYTES_MASK));
}

/* The pieces of coll_sm_small_reduce, in its order: each is called once
 * and inlined (SM_HOT), so the compiled fast path stays one function, its
 * branches in the same order. */

/* Where process p's slot starts in the reduction's input: a reduce_scatter's
 * block p + 1 (starts: m->small_starts), else 0.  (No divisions: a 64-bit
 * one costs tens of cycles, more than the whole fold of a few elements.) */
SM_HOT MPI_Count small_red_rot(const coll_sm_module_t *m, const coll_sm_blocks_t *blocks, int p,
                               MPI_Count count)
{
    return blocks ? small_rot(m->small_starts, p + 1 == m->n ? 0 : p + 1, count) : 0;
}

/* The verdict before any slot is touched, the same on every process
 * (count, datatype, op and the parameters are the same): true where the
 * call goes through the slots; *rc set where it fails. */
SM_HOT bool small_red_takes(coll_sm_module_t *m, obj_comm_t *comm, coll_red_t *r,
                            rail_typekind_t *kind, size_t *need, MPI_Count count,
                            obj_datatype_t *dt, obj_op_t *op, int root, int *rc)
{
    if (count <= 0 || (size_t)(count * dt->size) > coll_sm_small_limit())
        return false;
    if (coll_sm_red_prepare(m, r, kind, op, dt, count, rc) || *rc != MPI_SUCCESS)
        return false;
    *need = (size_t)(count * r->factor * r->rdt->extent);
    if (!small_ready(m, comm, rc))
        return false;
    /* (a scan: two halves of the chunk) */
    return coll_sm_small_red_fits(m, *need) && *need <= 2 * m->chunk &&
           !(root <= COLL_SM_SMALL_SCAN && (*need > m->chunk || !m->host_only));
}

/* My input into my slot (dev: it stays where it is), and where it is
 * in the layout a slot would hold it (NULL: not so).  reduce_scatter:
 * process p's slot starts with the block of p + 1 (its input rotated), so
 * at two processes each reader's block starts in the sequence word's line. */
SM_HOT char *small_red_put(coll_sm_module_t *m, const coll_red_t *r, const void *mine,
                           MPI_Count count, MPI_Count cnt, obj_datatype_t *dt,
                           const coll_sm_blocks_t *blocks, int set, uint64_t t, size_t need,
                           bool dev, int *rc)
{
    MPI_Count *starts = m->small_starts;
    if (blocks) {
        MPI_Count at = 0;
        for (int j = 0; j < m->n; j++) {
            starts[j] = at;
            at += blocks->counts ? blocks->counts[j] : blocks->count;
        }
    }
    char *src = NULL;
    if (!dev && r->rdt->size == r->rdt->extent)
        src = rail_dt_contig_ptr(dt->layout, count, (void *)(uintptr_t)mine);
    if (!dev) {
        /* rotated: position i holds element rot + i (mod count); of a
         * reduce_scatter, my own block (last) is read by nobody else */
        MPI_Count rot = small_red_rot(m, blocks, m->me, count);
        MPI_Count nw = blocks && src ? count - cnt : count;
        MPI_Count a = RAIL_MIN(nw, count - rot);
        uint8_t *to = small_data_mine(m, set, t, need);
        *rc = coll_copy_as(coll_elem(mine, dt, rot), a, r->udt, to, a * r->factor, r->rdt, false);
        if (nw > a)
            *rc = SM_KEEP(*rc, coll_copy_as(mine, nw - a, r->udt, coll_red_at(r, to, a),
                                            (nw - a) * r->factor, r->rdt, false));
    }
    return src;
}

/* A reduce, my slot written: true where the call ends here.  A non-root
 * with host buffers leaves at once; a device component somewhere
 * (!host_only) costs one tag, taken by all. */
SM_HOT bool small_red_rooted(coll_sm_module_t *m, obj_comm_t *comm, int set, uint64_t t,
                             size_t need, const void *mine, void *rbuf, MPI_Count count,
                             obj_datatype_t *dt, obj_op_t *op, int root, bool want, bool dev,
                             bool *handoff, bool *all_device, int *rc)
{
    int tag = m->host_only ? 0 : coll_tag_next(comm);
    if (!want) {
        coll_sm_slot_post(m, set, t);
        if (!dev)
            small_count_bulk(m, need);
        if (dev && small_sender_verdict(m, set, t, root, all_device))
            *handoff = true;
        else if (dev)
            *rc = coll_send(mine, count, dt, root, tag, comm);
        return true;
    }
    coll_sm_slot_wait_all_data(m, set, t, need);
    small_seen_all(m, t);
    int v = m->host_only ? SMALL_ALONE : small_root_verdict(m, set, t, dev, false);
    if (v == SMALL_HANDOFF) {
        *handoff = true;
        if (all_device)
            *all_device = dev;
        return true;
    }
    if (v == SMALL_MIXED) {
        *rc = small_reduce_mixed(m, comm, set, mine, rbuf, count, dt, op, tag, *rc);
        return true;
    }
    return false;
}

/* An allreduce or a reduce_scatter, my slot written: wait for every slot;
 * true where the call ends here (MISMATCHED SIZES, or device buffers
 * somewhere: handed on).  reads: what I read from each slot, all of it,
 * or (reduce_scatter) my block, first at two processes. */
SM_HOT bool small_red_wait_all(coll_sm_module_t *m, obj_comm_t *comm, int set, uint64_t t,
                               size_t reads, uint64_t bytes, bool *handoff, bool *all_device,
                               int *rc)
{
    coll_sm_slot_post(m, set, t);
    int late = small_red_late(m, set, t, reads);
    if (RAIL_UNLIKELY(late >= 0)) {
        *rc = small_red_join(m, comm, late, bytes);
        return true;
    }
    small_seen_all(m, t);
    for (int i = 0; i < m->n; i++) {
        if (coll_sm_slot(m, i, set)->flags & COLL_SM_SLOT_DEVICE) {
            /* the same verdict everywhere: everyone read the same slots */
            bool all = true;
            for (int j = 0; j < m->n && all; j++)
                all = coll_sm_slot(m, j, set)->flags & COLL_SM_SLOT_DEVICE;
            if (all_device)
                *all_device = all;
            *handoff = true;
            return true;
        }
    }
    return false;
}

/* Every input read (procs: the processes whose count, of a scan the
 * prefix): the lengths checked, then m->small_x[p] pointed at process p's
 * elements lo.. of the reduction type.  Counts that differ between
 * processes (erroneous, and never more than a bulk slot here: larger ones
 * took another path): each slot says how many bytes its process put in;
 * reported, nothing folded (the line holding the length was read with the
 * sequence word).  Its own input from the user's buffer when that holds
 * the same bytes as the slot (src): reading back its own slot after the
 * others read it costs about a transfer per line (see the allgather). */
SM_HOT void small_red_inputs(coll_sm_module_t *m, const coll_red_t *r, int set, size_t need,
                             const coll_sm_blocks_t *blocks, char *src, MPI_Count count,
                             MPI_Count lo, MPI_Count cnt, int root, bool want, int *rc)
{
    for (int p = 0; want && *rc == MPI_SUCCESS &&
                    p < (root <= COLL_SM_SMALL_SCAN ? m->me : m->n); p++) {
        size_t len = coll_sm_slot(m, p, set)->len;
        if (p != m->me && len != need)
            *rc = coll_check_length(p, len, need);
    }
    want = want && cnt > 0;
    for (int p = 0; want && *rc == MPI_SUCCESS &&
                    p < (root <= COLL_SM_SMALL_SCAN ? m->me + 1 : m->n); p++) {
        MPI_Count at = lo - small_red_rot(m, blocks, p, count);
        if (at < 0)
            at += count;
        m->small_x[p] = p == m->me && src ? coll_red_at(r, src, lo)
                                          : coll_red_at(r, small_data(m, p, set, need), at);
    }
}

/* The fold of the inputs (m->small_x) into rbuf: of every process, or of
 * a scan's prefix 0 .. me (exscan: .. me - 1; process 0 has none and
 * leaves its receive buffer alone). */
SM_HOT void small_red_fold(coll_sm_module_t *m, const coll_red_t *r, rail_typekind_t kind,
                           void *rbuf, MPI_Count cnt, int root, bool want, int *rc)
{
    const char *res = m->scratch;
    if (root <= COLL_SM_SMALL_SCAN) {
        int k = m->me + (root == COLL_SM_SMALL_SCAN);
        want = want && k > 0;
        if (want && *rc == MPI_SUCCESS)
            res = small_fold_left(r->rop, kind, k, m->small_x, (size_t)(cnt * r->factor),
                                  m->scratch, (char *)m->scratch + m->chunk, rc);
    } else if (want && *rc == MPI_SUCCESS) {
        *rc = coll_sm_fold_ptrs(r->rop, kind, m->n, m->small_x, (size_t)(cnt * r->factor),
                                m->scratch);
    }
    if (want && *rc == MPI_SUCCESS)   /* (host memory both: dev would have handed off) */
        *rc = coll_copy_as(res, cnt * r->factor, r->rdt, rbuf, cnt, r->udt, false);
}

bool coll_sm_small_reduce(coll_sm_module_t *m, obj_comm_t *comm, const void *sbuf, void *rbuf,
                          MPI_Count count, obj_datatype_t *dt, obj_op_t *op, int root,
                          MPI_Count lo, MPI_Count cnt, const coll_sm_blocks_t *blocks,
                          bool *handoff, bool *all_device, int *rc)
{
    *handoff = false;
    if (all_device)
        *all_device = false;
    *rc = MPI_SUCCESS;
    coll_red_t r;
    rail_typekind_t kind;
    size_t need;
    if (!small_red_takes(m, comm, &r, &kind, &need, count, dt, op, root, rc))
        return *rc != MPI_SUCCESS;

    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool want = root < 0 || m->me == root;
    bool dev = coll_is_device(mine, count, dt) || (want && coll_is_device(rbuf, cnt, dt));
    int set;
    uint64_t t = small_begin(m, &set);
    coll_sm_slot_t *my = coll_sm_slot(m, m->me, set);
    my->flags = (dev ? COLL_SM_SLOT_DEVICE : 0) | COLL_SM_SLOT_ROOTED_AT(m->seq);
    my->len = (uint32_t)need;
    char *src = small_red_put(m, &r, mine, count, cnt, dt, blocks, set, t, need, dev, rc);
    if (root >= 0) {
        if (small_red_rooted(m, comm, set, t, need, mine, rbuf, count, dt, op, root, want, dev,
                             handoff, all_device, rc))
            return true;
    } else if (root <= COLL_SM_SMALL_SCAN) {
        /* a scan (nobody can have device buffers, see small_red_takes):
         * only the prefix's slots (process 0 waits for nobody) */
        coll_sm_slot_post(m, set, t);
        coll_sm_slot_wait_range(m, 0, m->me, set, t);
        for (int p = 0; p < m->me; p++)
            m->small_seen[p] = RAIL_MAX(m->small_seen[p], t);
    } else {
        size_t reads = !blocks ? need : m->n == 2 ? (size_t)(cnt * r.factor * r.rdt->extent) : 0;
        if (small_red_wait_all(m, comm, set, t, reads, (uint64_t)(count * dt->size), handoff,
                               all_device, rc))
            return true;
    }
    small_red_inputs(m, &r, set, need, blocks, src, count, lo, cnt, root, want, rc);
    small_red_fold(m, &r, kind, rbuf, cnt, root, want && cnt > 0, rc);
    small_count_bulk(m, need);   /* (not before: a locked add waits for the data's stores) */
    /* a reduce's root publishes once it has read: nobody writes a slot of
     * this set again before every process published t + 1 */
    if (root >= 0)
        coll_sm_slot_post(m, set, t);
    return true;
}
