/*
 * Checked collectives (parameter coll_check; see coll_api.h).
 *
 * Before a blocking collective (or in the initialization of a persistent
 * one, nonlocal), each process describes what it sends to and expects
 * from every peer (mpi_coll_chk_t: the front end fills it).
 *
 * On an intracommunicator most operations reduce that to one descriptor
 * every process must give alike (chk_plan): the operation, root and
 * reduction operation, and the one signature of the operation (a bcast's
 * data, an allgather's block) or its counts (allgatherv's and
 * reduce_scatter's recvcounts).  Process 0's goes down a binomial tree,
 * each process compares its own and what it sends itself, and a
 * dissemination exchange agrees on the first disagreement found: 2
 * ceil(log2 n) rounds of one small message.  Operations whose counts differ
 * per pair (gatherv and scatterv: the root with each; alltoallv and
 * alltoallw: all pairs; neighbourhood collectives: neighbours) then
 * exchange one record per pair and agree again, once all agree on the
 * operation.  On an intercommunicator each process exchanges records with
 * the whole remote group, then two verdict rounds with it.  Every process
 * then returns the same error, before any data moves, or all go on.
 *
 * A type signature is summarised as its size in bytes and a hash of its
 * runs of predefined kinds (adjacent runs of one kind merged, so a
 * contiguous type of four doubles matches four doubles).  Signatures that
 * contain raw bytes (MPI_BYTE, MPI_PACKED, MPI_CHAR) are compared by size
 * only.  A signature longer than CHK_RUNS runs is hashed over its first
 * CHK_RUNS runs.
 */
#include "mpi/coll_api.h"
#include "coll/coll_util.h"
#include "base/dt.h"
#include "base/typekind.h"
#include "base/op.h"
#include "obj/group.h"
#include "obj/topo.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define CHK_RUNS 1024

/* What one process says to another. */
typedef struct chk_rec {
    int32_t kind, root, op, pad;
    mpi_coll_sig_t to, from;
} chk_rec_t;

/* The first disagreement a process found (cls MPI_SUCCESS: none): the
 * reporter's rank in its group, which group that is (the job rank of its
 * first member), the peer's rank (in the reporter's remote group on an
 * intercommunicator). */
typedef struct chk_verdict {
    int32_t cls, reporter, peer, what;
    int64_t mine, theirs;
    int32_t group, pad;
} chk_verdict_t;

enum { WHAT_KIND = 1, WHAT_ROOT, WHAT_OP, WHAT_SIG, WHAT_LOCAL, WHAT_USIG, WHAT_VEC };

/* On an intracommunicator, what every process compares with process 0's
 * (broadcast down a binomial tree): the operation, root and reduction
 * operation, the one signature every process gives alike where the
 * operation has one (u), and counts that must be alike everywhere
 * (allgatherv's and reduce_scatter's: their bytes in all, a hash of their
 * sizes in order, and one of their signatures in order, 0 where some are
 * raw bytes). */
typedef struct chk_desc {
    int32_t kind, root, op, pad;
    mpi_coll_sig_t u;
    uint64_t vec_bytes, vec_sizes, vec_sigs;
} chk_desc_t;

/* Which way a uniform operation's data go, for the error class: every
 * process to every other, from the root, to the root. */
enum { DIR_ALL, DIR_FROM_ROOT, DIR_TO_ROOT };
/* Which peers exchange records after the agreement on the descriptors:
 * none (the descriptors say it all), every other process, the root and
 * every other, the neighbours of a topology. */
enum { PEERS_NONE, PEERS_ALL, PEERS_ROOT, PEERS_TOPO };

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

mpi_coll_sig_t mpi_coll_sig(MPI_Count count, const obj_datatype_t *dt)
{
    mpi_coll_sig_t s = {(uint64_t)(count * dt->size), 0};
    if (s.bytes == 0)
        return s;
    struct rail_dt_sig_iter it;
    if (rail_dt_sig_init(&it, dt->layout, count) != MPI_SUCCESS)
        return s;   /* compared by size */
    const struct rail_dt *leaf;
    int64_t n, run_n = 0;
    int run_tk = -1, runs = 0;
    uint64_t h = 0xcbf29ce484222325ull;
    bool untyped = false;
    while (runs < CHK_RUNS && rail_dt_sig_next(&it, &leaf, &n)) {
        if ((int)leaf->tk == RAIL_TK_BYTE) {
            untyped = true;
            break;
        }
        if ((int)leaf->tk == run_tk) {
            run_n += n;
            continue;
        }
        if (run_tk >= 0) {
            h = fnv(fnv(h, (uint64_t)run_tk), (uint64_t)run_n);
            runs++;
        }
        run_tk = (int)leaf->tk;
        run_n = n;
    }
    rail_dt_sig_fini(&it);
    if (untyped)
        return s;
    if (run_tk >= 0 && runs < CHK_RUNS)
        h = fnv(fnv(h, (uint64_t)run_tk), (uint64_t)run_n);
    s.hash = h | 1;
    return s;
}

static bool sig_match(mpi_coll_sig_t a, mpi_coll_sig_t b)
{
    return a.bytes == b.bytes && (a.bytes == 0 || !a.hash || !b.hash || a.hash == b.hash);
}

mpi_coll_chk_t *mpi_coll_chk_new(const obj_comm_t *comm, int kind, int root, const obj_op_t *op)
{
    size_t n = (size_t)comm->remote_size;
    mpi_coll_chk_t *c = calloc(1, sizeof(*c) + 2 * n * sizeof(mpi_coll_sig_t));
    if (!c) {
        obj_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
        return NULL;
    }
    c->n = (int)n;
    c->kind = kind;
    c->root = root;
    c->op = !op ? -1 : op->op == RAIL_OP_NONE ? INT_MAX : (int)op->op;
    c->to = (mpi_coll_sig_t *)(c + 1);
    c->from = c->to + n;
    return c;
}

void mpi_coll_chk_fill(mpi_coll_sig_t *s, int n, MPI_Count count, const obj_datatype_t *dt)
{
    mpi_coll_sig_t v = mpi_coll_sig(count, dt);
    for (int q = 0; q < n; q++)
        s[q] = v;
}

void mpi_coll_chk_rooted(mpi_coll_chk_t *c, const obj_comm_t *comm, int root, bool to_root,
                         MPI_Count rcount, const obj_datatype_t *rdt, MPI_Count ocount,
                         const obj_datatype_t *odt)
{
    int rp = mpi_coll_root_peer(comm, root);
    if (mpi_coll_is_root(comm, root))
        mpi_coll_chk_fill(to_root ? c->from : c->to, c->n, rcount, rdt);
    if (rp >= 0)
        (to_root ? c->to : c->from)[rp] = mpi_coll_sig(ocount, odt);
}

void mpi_coll_sig_add(mpi_coll_sig_t *s, MPI_Count count, const obj_datatype_t *dt)
{
    mpi_coll_sig_t v = mpi_coll_sig(count, dt);
    if (v.bytes == 0)
        return;
    if (s->bytes == 0)
        s->hash = v.hash;
    else if (!s->hash || !v.hash)
        s->hash = 0;
    else
        s->hash = (s->hash + v.hash) | 1;   /* in any order */
    s->bytes += v.bytes;
}

static const char *api_name(int kind, char *buf, size_t len)
{
    const char *s = coll_op_name(kind & ~MPI_COLL_CHK_INIT);
    snprintf(buf, len, "MPI_%s%s", s ? s : "?", kind & MPI_COLL_CHK_INIT ? "_init" : "");
    if (buf[4])
        buf[4] = (char)toupper((unsigned char)buf[4]);
    return buf;
}

/* The verdict ordered first: a disagreement before none, a process that
 * found its own arguments wrong before the others (what it sent may be
 * incomplete), then the lowest reporter. */
static int verdict_key(const chk_verdict_t *v)
{
    return v->cls == MPI_SUCCESS ? 2 : v->what != WHAT_LOCAL;
}

static void verdict_fold(chk_verdict_t *acc, const chk_verdict_t *v)
{
    int kv = verdict_key(v), ka = verdict_key(acc);
    if (kv < ka || (kv == ka && (v->group < acc->group ||
                                 (v->group == acc->group && v->reporter < acc->reporter))))
        *acc = *v;
}

/* Whether peer q's root argument fits this process's.  On an
 * intercommunicator the root's group gives MPI_ROOT (the root) and
 * MPI_PROC_NULL (the others), the other group the root's rank. */
static bool root_fits(const mpi_coll_chk_t *c, const obj_comm_t *comm, int q, int theirs)
{
    if (!comm->is_inter || c->root == MPI_COLL_NO_ROOT)
        return theirs == c->root;
    if (c->root == MPI_ROOT)
        return theirs == comm->rank;
    if (c->root == MPI_PROC_NULL)
        return theirs >= 0 && theirs != comm->rank;
    return theirs == (q == c->root ? MPI_ROOT : MPI_PROC_NULL);
}

/* The class of a disagreement; sizes: what the sender sends against what
 * the receiver takes (counts that differ and add up alike: MPI_ERR_COUNT). */
static int what_class(int what, int64_t snd, int64_t rcv)
{
    switch (what) {
    case WHAT_KIND:
        return MPI_ERR_OTHER;
    case WHAT_ROOT:
        return MPI_ERR_ROOT;
    case WHAT_OP:
        return MPI_ERR_OP;
    default:
        return snd > rcv ? MPI_ERR_TRUNCATE
               : snd < rcv || what == WHAT_VEC ? MPI_ERR_COUNT
                                               : MPI_ERR_TYPE;
    }
}

/* This process's records against those its peers sent (in[q] for each q
 * of peers[0..np-1]). */
static void verdict_local(chk_verdict_t *v, const mpi_coll_chk_t *c, const chk_rec_t *in,
                          const obj_comm_t *comm, const int *peers, int np)
{
    int me = comm->rank;
    for (int i = 0; i < np; i++) {
        int q = peers[i];
        const chk_rec_t *r = &in[q];
        int what = 0;
        int64_t mine = 0, theirs = 0;
        if (r->kind != c->kind) {
            what = WHAT_KIND;
            mine = c->kind;
            theirs = r->kind;
        } else if (!root_fits(c, comm, q, r->root)) {
            what = WHAT_ROOT;
            mine = c->root;
            theirs = r->root;
        } else if (r->op != c->op && !(comm->is_inter && (c->root == MPI_PROC_NULL ||
                                                          r->root == MPI_PROC_NULL))) {
            /* (an intercommunicator's MPI_PROC_NULL processes give no
             * significant operation) */
            what = WHAT_OP;
            mine = c->op;
            theirs = r->op;
        } else if (!sig_match(c->from[q], r->to)) {
            what = WHAT_SIG;
            mine = (int64_t)c->from[q].bytes;
            theirs = (int64_t)r->to.bytes;
        }
        if (!what)
            continue;
        *v = (chk_verdict_t){what_class(what, theirs, mine), me, q, what, mine, theirs,
                             v->group, 0};
        return;
    }
}

static const char *op_desc(int64_t op)
{
    static const char *const names[RAIL_OP_COUNT] = {
        [RAIL_OP_SUM] = "MPI_SUM",     [RAIL_OP_PROD] = "MPI_PROD",
        [RAIL_OP_MAX] = "MPI_MAX",     [RAIL_OP_MIN] = "MPI_MIN",
        [RAIL_OP_LAND] = "MPI_LAND",   [RAIL_OP_LOR] = "MPI_LOR",
        [RAIL_OP_LXOR] = "MPI_LXOR",   [RAIL_OP_BAND] = "MPI_BAND",
        [RAIL_OP_BOR] = "MPI_BOR",     [RAIL_OP_BXOR] = "MPI_BXOR",
        [RAIL_OP_MAXLOC] = "MPI_MAXLOC", [RAIL_OP_MINLOC] = "MPI_MINLOC",
        [RAIL_OP_REPLACE] = "MPI_REPLACE", [RAIL_OP_NO_OP] = "MPI_NO_OP",
    };
    if (op == INT_MAX)
        return "a user-defined operation";
    if (op < 0)
        return "no operation";
    return op < RAIL_OP_COUNT && names[op] ? names[op] : "another operation";
}

static const char *root_desc(int64_t root, char *buf, size_t len)
{
    if (root == MPI_ROOT)
        return "MPI_ROOT";
    if (root == MPI_PROC_NULL)
        return "MPI_PROC_NULL";
    snprintf(buf, len, "%lld", (long long)root);
    return buf;
}

/* "process 3", or on an intercommunicator "process 3 of this group" / "of
 * the remote group", said by this process of group `mine`. */
static const char *who(char *buf, size_t len, int rank, bool inter, bool local)
{
    snprintf(buf, len, "process %d%s", rank,
             !inter ? "" : local ? " of this group" : " of the remote group");
    return buf;
}

/* The agreed verdict as this process's error (the entry point names the
 * operation this process called). */
static int verdict_report(const chk_verdict_t *v, const obj_comm_t *comm, int32_t group)
{
    char a[48], b[48], pr[48], rr[48];
    bool inter = comm->is_inter, here = v->group == group;
    const char *peer = who(pr, sizeof(pr), v->peer, inter, !here);
    const char *rep = who(rr, sizeof(rr), v->reporter, inter, here);
    switch (v->what) {
    case WHAT_KIND:
        return obj_errf(v->cls, "collective check: %s called %s where %s called %s", peer,
                        api_name((int)v->theirs, a, sizeof(a)), rep,
                        api_name((int)v->mine, b, sizeof(b)));
    case WHAT_ROOT:
        return obj_errf(v->cls, "collective check: %s gave root %s where %s gave root %s", peer,
                        root_desc(v->theirs, a, sizeof(a)), rep,
                        root_desc(v->mine, b, sizeof(b)));
    case WHAT_OP:
        return obj_errf(v->cls, "collective check: %s gave %s where %s gave %s", peer,
                        op_desc(v->theirs), rep, op_desc(v->mine));
    case WHAT_SIG:
        if (v->mine == v->theirs)
            return obj_errf(v->cls, "collective check: %s sends %s %lld bytes of other types than "
                            "that one receives (type signatures differ)",
                            peer, rep, (long long)v->theirs);
        return obj_errf(v->cls, "collective check: %s sends %s %lld bytes where that one "
                        "receives %lld (type signatures differ)",
                        peer, rep, (long long)v->theirs, (long long)v->mine);
    case WHAT_USIG:
        if (v->mine == v->theirs)
            return obj_errf(v->cls, "collective check: %s gives %lld bytes of other types than "
                            "%s (type signatures differ)", rep, (long long)v->mine, peer);
        return obj_errf(v->cls, "collective check: %s gives %lld bytes where %s gives %lld (type "
                        "signatures differ)", rep, (long long)v->mine, peer, (long long)v->theirs);
    case WHAT_VEC:
        return obj_errf(v->cls, "collective check: %s gives other counts than %s (%lld bytes in "
                        "all against %lld)", rep, peer, (long long)v->mine, (long long)v->theirs);
    default:
        return obj_errf(v->cls, "collective check: the arguments of %s are wrong (error class %d "
                        "there)", rep, v->cls);
    }
}

/* Every process sends v to every other of the communicator (intra) or of
 * the remote group (inter) and folds what it gets: on an
 * intracommunicator a dissemination (ceil(log2 n) rounds), on an
 * intercommunicator two rounds with the whole remote group (the second
 * brings each process its own group's verdicts). */
static int verdict_agree(chk_verdict_t *v, obj_comm_t *comm, int tag)
{
    obj_datatype_t *byte = obj_datatype_predef(MPI_BYTE);
    int n = comm->remote_size, me = comm->rank, rc = MPI_SUCCESS;
    coll_reqs_t reqs;
    coll_reqs_init(&reqs);
    if (!comm->is_inter) {
        for (int k = 1; k < n && rc == MPI_SUCCESS; k <<= 1) {
            chk_verdict_t got;
            rc = coll_reqs_irecv_all(&reqs, &got, sizeof(got), byte, (me - k + n) % n, tag, comm);
            if (rc == MPI_SUCCESS)
                rc = coll_reqs_isend(&reqs, v, sizeof(*v), byte, (me + k) % n, tag, comm);
            rc = coll_reqs_wait(&reqs, rc);
            if (rc == MPI_SUCCESS)
                verdict_fold(v, &got);
        }
        return rc;
    }
    chk_verdict_t *got = malloc((size_t)n * sizeof(*got));
    if (!got)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
    for (int round = 0; round < 2 && rc == MPI_SUCCESS; round++) {
        chk_verdict_t mine = *v;
        for (int q = 0; q < n && rc == MPI_SUCCESS; q++) {
            rc = coll_reqs_irecv_all(&reqs, &got[q], sizeof(*got), byte, q, tag, comm);
            if (rc == MPI_SUCCESS)
                rc = coll_reqs_isend(&reqs, &mine, sizeof(mine), byte, q, tag, comm);
        }
        rc = coll_reqs_wait(&reqs, rc);
        for (int q = 0; q < n && rc == MPI_SUCCESS; q++)
            verdict_fold(v, &got[q]);
    }
    free(got);
    return rc;
}

/* How an intracommunicator checks operation c: its descriptor (u and the
 * counts; the rest is filled by the caller), the direction, the peers. */
static void chk_plan(const mpi_coll_chk_t *c, const obj_comm_t *comm, chk_desc_t *d, int *dir,
                     int *peers)
{
    int me = comm->rank, root = c->root;
    bool counts = false;
    const mpi_coll_sig_t *vec = NULL;
    *dir = DIR_ALL;
    *peers = PEERS_NONE;
    switch (c->kind & ~MPI_COLL_CHK_INIT) {
    case COLL_OP_bcast:
        *dir = DIR_FROM_ROOT;
        d->u = c->from[root];
        break;
    case COLL_OP_scatter:
        *dir = DIR_FROM_ROOT;
        d->u = me == root ? c->to[root] : c->from[root];
        break;
    case COLL_OP_gather:
        *dir = DIR_TO_ROOT;
        d->u = me == root ? c->from[root] : c->to[root];
        break;
    case COLL_OP_reduce:
        *dir = DIR_TO_ROOT;
        d->u = c->to[me];
        break;
    case COLL_OP_allgatherv:
        vec = c->from;   /* the recvcounts */
        counts = true;
        break;
    case COLL_OP_reduce_scatter:
        vec = c->to;     /* the recvcounts */
        counts = true;
        break;
    case COLL_OP_gatherv:
    case COLL_OP_scatterv:
        *peers = PEERS_ROOT;
        break;
    case COLL_OP_alltoallv:
    case COLL_OP_alltoallw:
        *peers = PEERS_ALL;
        break;
    case COLL_OP_neighbor_allgather:
    case COLL_OP_neighbor_allgatherv:
    case COLL_OP_neighbor_alltoall:
    case COLL_OP_neighbor_alltoallv:
    case COLL_OP_neighbor_alltoallw:
        *peers = PEERS_TOPO;
        break;
    default:   /* the same block to and from everyone (or nothing: barrier) */
        d->u = c->to[me];
        break;
    }
    if (counts) {
        uint64_t hs = 0xcbf29ce484222325ull, hg = hs;
        bool typed = true;
        for (int q = 0; q < c->n; q++) {
            d->vec_bytes += vec[q].bytes;
            hs = fnv(hs, vec[q].bytes);
            hg = fnv(hg, vec[q].hash);
            typed = typed && (vec[q].bytes == 0 || vec[q].hash);
        }
        d->vec_sizes = hs;
        d->vec_sigs = typed ? hg | 1 : 0;
    }
}

/* The peers of the record exchange (every process lists those that list
 * it); *np their number. */
static int *chk_peers(int kind, const mpi_coll_chk_t *c, const obj_comm_t *comm, int *np)
{
    int n = c->n, me = comm->rank, *p = malloc((size_t)n * sizeof(int) + 1);
    *np = 0;
    if (!p)
        return NULL;
    if (kind == PEERS_ROOT && me != c->root) {
        p[(*np)++] = c->root;
    } else if (kind == PEERS_ROOT || kind == PEERS_ALL) {
        for (int q = 0; q < n; q++)
            if (q != me)
                p[(*np)++] = q;
    } else if (kind == PEERS_TOPO && comm->topo) {
        const obj_topo_t *t = comm->topo;
        bool *seen = calloc((size_t)n, sizeof(bool));
        if (!seen) {
            free(p);
            return NULL;
        }
        for (int pass = 0; pass < 2; pass++) {
            const int *l = pass ? t->out : t->in;
            for (int k = 0, deg = pass ? t->outdegree : t->indegree; k < deg; k++)
                if (l[k] != MPI_PROC_NULL && l[k] != me && !seen[l[k]]) {
                    seen[l[k]] = true;
                    p[(*np)++] = l[k];
                }
        }
        free(seen);
    }
    return p;
}

/* Process 0's descriptor to everyone, down a binomial tree. */
static int desc_bcast(chk_desc_t *d, obj_comm_t *comm, int tag)
{
    obj_datatype_t *byte = obj_datatype_predef(MPI_BYTE);
    int n = comm->size, me = comm->rank, mask = 1, rc = MPI_SUCCESS;
    for (; mask < n; mask <<= 1)
        if (me & mask) {
            rc = coll_recv_all(d, sizeof(*d), byte, me - mask, tag, comm);
            break;
        }
    coll_reqs_t reqs;
    coll_reqs_init(&reqs);
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1)
        if (me + mask < n)
            rc = coll_reqs_isend(&reqs, d, sizeof(*d), byte, me + mask, tag, comm);
    return coll_reqs_wait(&reqs, rc);
}

/* This process's descriptor against process 0's. */
static void verdict_desc(chk_verdict_t *v, const mpi_coll_chk_t *c, const chk_desc_t *d,
                         const chk_desc_t *ref, int dir, const obj_comm_t *comm)
{
    int me = comm->rank, what = 0, cls;
    int64_t mine = 0, theirs = 0;
    if (d->kind != ref->kind) {
        what = WHAT_KIND;
        mine = d->kind;
        theirs = ref->kind;
    } else if (d->root != ref->root) {
        what = WHAT_ROOT;
        mine = d->root;
        theirs = ref->root;
    } else if (d->op != ref->op) {
        what = WHAT_OP;
        mine = d->op;
        theirs = ref->op;
    } else if (!sig_match(d->u, ref->u)) {
        what = WHAT_USIG;
        mine = (int64_t)d->u.bytes;
        theirs = (int64_t)ref->u.bytes;
    } else if (d->vec_sizes != ref->vec_sizes ||
               (d->vec_sigs && ref->vec_sigs && d->vec_sigs != ref->vec_sigs)) {
        what = WHAT_VEC;
        mine = (int64_t)d->vec_bytes;
        theirs = (int64_t)ref->vec_bytes;
    } else if (!sig_match(c->from[me], c->to[me])) {
        /* what this process sends itself against what it receives */
        what = WHAT_SIG;
        mine = (int64_t)c->from[me].bytes;
        theirs = (int64_t)c->to[me].bytes;
    }
    if (!what)
        return;
    if (what == WHAT_USIG || what == WHAT_VEC) {
        /* sender's size against receiver's, this process standing for
         * the sender unless the data come from a root that it is not */
        bool sends = dir == DIR_ALL || (dir == DIR_FROM_ROOT) == (me == c->root);
        int64_t snd = sends ? mine : theirs, rcv = sends ? theirs : mine;
        cls = what_class(what, snd, rcv);
    } else {
        cls = what_class(what, theirs, mine);
    }
    *v = (chk_verdict_t){cls, me, what == WHAT_SIG ? me : 0, what, mine, theirs, v->group, 0};
}

/* Records with the peers of the exchange; the verdict on them. */
static int chk_pairs(chk_verdict_t *v, const mpi_coll_chk_t *c, obj_comm_t *comm, const int *peers,
                     int np, int tag)
{
    obj_datatype_t *byte = obj_datatype_predef(MPI_BYTE);
    chk_rec_t *out = calloc(2 * (size_t)c->n, sizeof(*out)), *in;
    if (!out)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
    in = out + c->n;
    coll_reqs_t reqs;
    coll_reqs_init(&reqs);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < np && rc == MPI_SUCCESS; i++) {
        int q = peers[i];
        out[q] = (chk_rec_t){c->kind, c->root, c->op, 0, c->to[q], c->from[q]};
        rc = coll_reqs_irecv_all(&reqs, &in[q], sizeof(*in), byte, q, tag, comm);
        if (rc == MPI_SUCCESS)
            rc = coll_reqs_isend(&reqs, &out[q], sizeof(*out), byte, q, tag, comm);
    }
    rc = coll_reqs_wait(&reqs, rc);
    if (rc == MPI_SUCCESS && v->cls == MPI_SUCCESS)
        verdict_local(v, c, in, comm, peers, np);
    free(out);
    return rc;
}

/* The intracommunicator's check: descriptors against process 0's, the
 * verdict agreed; then, where the operation needs it and all agree so
 * far (same operation, so same peers), records with the peers and the
 * verdict agreed again.  Rounds: 2 ceil(log2 n), plus one exchange with
 * the peers and ceil(log2 n) for the v forms and neighbourhoods. */
static int chk_intra(chk_verdict_t *v, const mpi_coll_chk_t *c, obj_comm_t *comm, int rc, int tag)
{
    chk_desc_t d = {c->kind, c->root, c->op, 0, {0, 0}, 0, 0, 0}, ref;
    int dir = DIR_ALL, peers = PEERS_NONE;
    if (rc == MPI_SUCCESS)
        chk_plan(c, comm, &d, &dir, &peers);
    ref = d;
    int xrc = desc_bcast(&ref, comm, tag);
    if (xrc != MPI_SUCCESS)
        return xrc;
    if (rc != MPI_SUCCESS)
        *v = (chk_verdict_t){rc, comm->rank, comm->rank, WHAT_LOCAL, 0, 0, v->group, 0};
    else
        verdict_desc(v, c, &d, &ref, dir, comm);
    xrc = verdict_agree(v, comm, tag);
    if (xrc != MPI_SUCCESS || v->cls != MPI_SUCCESS || peers == PEERS_NONE)
        return xrc;
    int np, *list = chk_peers(peers, c, comm, &np);
    if (!list)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
    xrc = chk_pairs(v, c, comm, list, np, tag);
    free(list);
    return xrc == MPI_SUCCESS ? verdict_agree(v, comm, tag) : xrc;
}

void mpi_coll_check_abandon(obj_comm_t *comm, const char *name, int rc)
{
    if (!coll_check || !comm || rc == MPI_SUCCESS || !comm->coll)
        return;
    size_t len = strlen(name);
    bool init = len > 5 && strcmp(name + len - 5, "_init") == 0;
    for (int k = 0; k < COLL_OP_COUNT; k += 2) {
        const char *op = coll_op_name(k);
        if (strncmp(op, name, init ? len - 5 : len) != 0 || op[init ? len - 5 : len] != '\0')
            continue;
        mpi_coll_chk_t *c =
            mpi_coll_chk_new(comm, k | (init ? MPI_COLL_CHK_INIT : 0), MPI_COLL_NO_ROOT, NULL);
        if (c)
            (void)mpi_coll_chk_run(c, comm, rc);   /* rc and its message stand */
        return;
    }
}

int mpi_coll_chk_run(mpi_coll_chk_t *c, obj_comm_t *comm, int rc)
{
    int n = c->n, me = comm->rank, tag = coll_tag_next(comm), xrc;
    int32_t group = obj_group_world_rank(comm->group, 0);
    chk_verdict_t v = {MPI_SUCCESS, INT_MAX, 0, 0, 0, 0, group, 0};
    if (!comm->is_inter) {
        xrc = chk_intra(&v, c, comm, rc, tag);
    } else {
        /* every process of the remote group; then two verdict rounds */
        int *all = malloc((size_t)n * sizeof(int) + 1);
        if (all) {
            for (int q = 0; q < n; q++)
                all[q] = q;
            if (rc != MPI_SUCCESS)
                v = (chk_verdict_t){rc, me, me, WHAT_LOCAL, 0, 0, group, 0};
            xrc = chk_pairs(&v, c, comm, all, n, tag);
            if (xrc == MPI_SUCCESS)
                xrc = verdict_agree(&v, comm, tag);
            free(all);
        } else {
            xrc = obj_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
        }
    }
    free(c);
    if (rc != MPI_SUCCESS)
        return rc;   /* its own message stands */
    if (xrc != MPI_SUCCESS)
        return xrc;
    return v.cls == MPI_SUCCESS ? MPI_SUCCESS : verdict_report(&v, comm, group);
}
