/*
 * Checked collectives (parameter coll_check; see coll_api.h).
 *
 * Before a blocking collective of an intracommunicator (or in the
 * initialization of a persistent one, nonlocal), every process
 * tells every other, in one message each, which operation it is calling,
 * its root and reduction operation, and the type signature it will send
 * to and expects from that process.  Each process compares what it
 * expects from every process (and from itself) with what that process
 * says it sends; then all agree on the first disagreement found (a
 * dissemination exchange of verdicts, ceil(log2 n) rounds).  Every process
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

/* The first disagreement a process found (cls MPI_SUCCESS: none). */
typedef struct chk_verdict {
    int32_t cls, reporter, peer, what;
    int64_t mine, theirs;
} chk_verdict_t;

enum { WHAT_KIND = 1, WHAT_ROOT, WHAT_OP, WHAT_SIG, WHAT_LOCAL };

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

mpi_coll_sig_t mpi_coll_sig(MPI_Count count, const mpi_datatype_t *dt)
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

int mpi_coll_chk_init(mpi_coll_chk_t *c, const mpi_comm_t *comm, int kind, int root,
                      const mpi_op_t *op)
{
    c->n = comm->size;
    c->kind = kind;
    c->root = root;
    c->op = !op ? -1 : op->op == RAIL_OP_NONE ? INT_MAX : (int)op->op;
    c->to = calloc(2 * (size_t)c->n, sizeof(*c->to));
    c->from = c->to ? c->to + c->n : NULL;
    return c->to ? MPI_SUCCESS : mpi_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
}

void mpi_coll_chk_fill(mpi_coll_sig_t *s, int n, MPI_Count count, const mpi_datatype_t *dt)
{
    mpi_coll_sig_t v = mpi_coll_sig(count, dt);
    for (int q = 0; q < n; q++)
        s[q] = v;
}

void mpi_coll_sig_add(mpi_coll_sig_t *s, MPI_Count count, const mpi_datatype_t *dt)
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
    if (kv < ka || (kv == ka && v->reporter < acc->reporter))
        *acc = *v;
}

static void verdict_local(chk_verdict_t *v, const mpi_coll_chk_t *c, const chk_rec_t *in, int me)
{
    for (int q = 0; q < c->n; q++) {
        const chk_rec_t *r = &in[q];
        int what = 0;
        int64_t mine = 0, theirs = 0;
        if (r->kind != c->kind) {
            what = WHAT_KIND;
            mine = c->kind;
            theirs = r->kind;
        } else if (r->root != c->root) {
            what = WHAT_ROOT;
            mine = c->root;
            theirs = r->root;
        } else if (r->op != c->op) {
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
        int cls = what == WHAT_KIND  ? MPI_ERR_OTHER
                  : what == WHAT_ROOT ? MPI_ERR_ROOT
                  : what == WHAT_OP   ? MPI_ERR_OP
                  : theirs > mine     ? MPI_ERR_TRUNCATE
                  : theirs < mine     ? MPI_ERR_COUNT
                                      : MPI_ERR_TYPE;
        *v = (chk_verdict_t){cls, me, q, what, mine, theirs};
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
    return op > 0 && op < RAIL_OP_COUNT && names[op] ? names[op] : "another operation";
}

/* The agreed verdict as this process's error (the entry point names the
 * operation this process called). */
static int verdict_report(const chk_verdict_t *v)
{
    char a[48], b[48];
    switch (v->what) {
    case WHAT_KIND:
        return mpi_errf(v->cls, "collective check: process %d called %s where process %d called %s",
                        v->peer, api_name((int)v->theirs, a, sizeof(a)), v->reporter,
                        api_name((int)v->mine, b, sizeof(b)));
    case WHAT_ROOT:
        return mpi_errf(v->cls, "collective check: process %d gave root %lld where process %d gave "
                        "root %lld", v->peer, (long long)v->theirs, v->reporter,
                        (long long)v->mine);
    case WHAT_OP:
        return mpi_errf(v->cls, "collective check: process %d gave %s where process %d gave %s",
                        v->peer, op_desc(v->theirs), v->reporter, op_desc(v->mine));
    case WHAT_SIG:
        if (v->mine == v->theirs)
            return mpi_errf(v->cls, "collective check: process %d sends process %d %lld bytes of "
                            "other types than that one receives (type signatures differ)",
                            v->peer, v->reporter, (long long)v->theirs);
        return mpi_errf(v->cls, "collective check: process %d sends process %d %lld bytes where "
                        "that one receives %lld (type signatures differ)",
                        v->peer, v->reporter, (long long)v->theirs, (long long)v->mine);
    default:
        return mpi_errf(v->cls, "collective check: the arguments of process %d are wrong (error "
                        "class %d there)", v->reporter, v->cls);
    }
}

int mpi_coll_chk_run(mpi_coll_chk_t *c, mpi_comm_t *comm, int rc)
{
    int n = comm->size, me = comm->rank, tag = coll_tag_next(comm);
    mpi_datatype_t *byte = mpi_datatype_predef(MPI_BYTE);
    chk_rec_t *out = calloc(2 * (size_t)n, sizeof(*out)), *in;
    if (!out) {
        free(c->to);
        c->to = NULL;
        return rc != MPI_SUCCESS ? rc
                                 : mpi_errf(MPI_ERR_NO_MEM, "no memory for the collective check");
    }
    in = out + n;
    for (int q = 0; q < n; q++)
        out[q] = (chk_rec_t){c->kind, c->root, c->op, 0, c->to[q], c->from[q]};
    in[me] = out[me];

    coll_reqs_t reqs;
    coll_reqs_init(&reqs);
    int xrc = MPI_SUCCESS;
    for (int k = 1; k < n && xrc == MPI_SUCCESS; k++) {
        int src = (me - k + n) % n, dst = (me + k) % n;
        xrc = coll_reqs_irecv_all(&reqs, &in[src], sizeof(*in), byte, src, tag, comm);
        if (xrc == MPI_SUCCESS)
            xrc = coll_reqs_isend(&reqs, &out[dst], sizeof(*out), byte, dst, tag, comm);
    }
    xrc = coll_reqs_wait(&reqs, xrc);

    chk_verdict_t v = {MPI_SUCCESS, INT_MAX, 0, 0, 0, 0};
    if (rc != MPI_SUCCESS)
        v = (chk_verdict_t){rc, me, me, WHAT_LOCAL, 0, 0};
    else if (xrc == MPI_SUCCESS)
        verdict_local(&v, c, in, me);
    for (int k = 1; k < n && xrc == MPI_SUCCESS; k <<= 1) {
        chk_verdict_t got;
        xrc = coll_reqs_irecv_all(&reqs, &got, sizeof(got), byte, (me - k + n) % n, tag, comm);
        if (xrc == MPI_SUCCESS)
            xrc = coll_reqs_isend(&reqs, &v, sizeof(v), byte, (me + k) % n, tag, comm);
        xrc = coll_reqs_wait(&reqs, xrc);
        if (xrc == MPI_SUCCESS)
            verdict_fold(&v, &got);
    }
    free(out);
    free(c->to);
    c->to = c->from = NULL;
    if (rc != MPI_SUCCESS)
        return rc;   /* its own message stands */
    if (xrc != MPI_SUCCESS)
        return xrc;
    return v.cls == MPI_SUCCESS ? MPI_SUCCESS : verdict_report(&v);
}
