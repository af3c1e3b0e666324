/*
 * coll tuned: what the component's files share (see coll_tuned.h).
 *
 * CALLS.  Each entry point (tuned_component.c) takes the call's tag, turns
 * its arguments into a coll_tuned_call_t, handles what needs no algorithm
 * (a communicator of one process, no data), and runs the algorithm the
 * decision picked (tuned_decide.c).  Algorithms may therefore assume at
 * least two processes and at least one byte of data (except barrier), and
 * use c->tag for all their messages; a process that sends a peer several
 * messages in one call has the peer receive them in that order.
 *
 * DATA.  Algorithms that split a message or send ranges of blocks
 * (pipelines, scatter+allgather, Bruck) work on bytes: contiguous user data
 * in place, anything else packed into a contiguous temporary (tuned_flat_t),
 * because processes may describe the same data with different datatypes.
 * Reductions split by user elements (count and datatype are the same
 * everywhere) and compute in coll_red_t temporaries (coll/coll_util.h),
 * which lie on the device of a device buffer; accel_reduce runs there.
 */
#ifndef COLL_TUNED_TUNED_IMPL_H
#define COLL_TUNED_TUNED_IMPL_H

#include "coll/tuned/coll_tuned.h"
#include "coll/coll_util.h"
#include "pml/pml.h"
#include "runtime/rte.h"

/* ------------------------------------------------------------ a call */

typedef struct coll_tuned_call {
    int op;                    /* COLL_OP_<name> */
    const void *sbuf;          /* MPI_IN_PLACE passed as is */
    void *rbuf;                /* bcast: the buffer */
    MPI_Count scount;          /* send side (allgather, alltoall, gather, scatter) */
    obj_datatype_t *sdt;
    MPI_Count count;           /* bcast, reductions: the count; otherwise the receive count */
    obj_datatype_t *dt;        /* ... and its datatype */
    const MPI_Count *counts;   /* reduce_scatter: receive counts (NULL: count each) */
    obj_op_t *mop;
    int root;
    obj_comm_t *comm;
    int tag;
    int rank, size;
    size_t bytes;              /* message size of the decision (README.md) */
    size_t param;              /* the algorithm's segment size / window for this call */
    bool inplace;              /* MPI_IN_PLACE here */
    bool inplace_all;          /* MPI_IN_PLACE, which the operation requires everywhere */
} coll_tuned_call_t;

/* ------------------------------------------------------------ table, decisions */

/*
 * THE TABLE: X(op, fnop, name, restrictions, parameter kind, default, help)
 * for every algorithm; op's entries run coll_tuned_<fnop>_<name>.  It
 * makes coll_tuned_table[] (tuned_table.c) and the indices
 * TUNED_A_<op>_<name> the built-in decisions use.  The first entry of each
 * operation has no restriction: it is the last resort of every decision.
 */
#define TUNED_ALGS(X)                                                                              \
    X(barrier, barrier, dissemination, 0, NONE, 0,                                                 \
      "ceil(log2 p) rounds: signal rank+2^k, wait for rank-2^k")                                   \
    X(barrier, barrier, recursive_doubling, 0, NONE, 0,                                            \
      "exchanges with rank^2^k; extra processes fold into the largest power of two")               \
    X(bcast, bcast, binomial, 0, NONE, 0, "binomial tree, whole messages, log2(p) rounds")         \
    X(bcast, bcast, linear, 0, NONE, 0, "the root sends to every process at once")                 \
    X(bcast, bcast, chain, 0, SEGSIZE, 64 << 10,                                                   \
      "pipelined chain root -> root+1 -> ..., in segments")                                        \
    X(bcast, bcast, scatter_allgather, 0, NONE, 0,                                                 \
      "van de Geijn: binomial scatter of p pieces, then ring allgather")                           \
    X(reduce, reduce, binomial, 0, NONE, 0,                                                        \
      "binomial tree (in rank order for non-commutative operations)")                              \
    X(reduce, reduce, chain, 0, SEGSIZE, 64 << 10,                                                 \
      "pipelined chain towards the root, in segments (rank order when non-commutative)")           \
    X(reduce, reduce, rabenseifner, COLL_TUNED_COMMUTATIVE, NONE, 0,                               \
      "reduce-scatter by recursive halving, then binomial gather to the root")                     \
    X(allreduce, allreduce, recursive_doubling, 0, NONE, 0,                                        \
      "log2(p) exchanges of the whole vector; keeps operand order")                                \
    X(allreduce, allreduce, reduce_bcast, 0, NONE, 0,                                              \
      "binomial reduce to rank 0 in rank order, then binomial broadcast")                          \
    X(allreduce, allreduce, rabenseifner, COLL_TUNED_COMMUTATIVE, NONE, 0,                         \
      "reduce-scatter by recursive halving + allgather by recursive doubling")                     \
    X(allreduce, allreduce, ring, COLL_TUNED_COMMUTATIVE, SEGSIZE, 0,                              \
      "ring reduce-scatter + ring allgather, in passes of p segments")                             \
    X(allgather, allgather, ring, 0, NONE, 0, "p-1 steps passing blocks around a ring")            \
    X(allgather, allgather, linear, 0, NONE, 0, "every block to every process at once")            \
    X(allgather, allgather, recursive_doubling, COLL_TUNED_POW2, NONE, 0,                          \
      "log2(p) exchanges with rank^2^k, doubling the blocks")                                      \
    X(allgather, allgather, bruck, 0, NONE, 0, "Bruck: ceil(log2 p) steps on a rotated copy")      \
    X(allgather, allgather, neighbor_exchange, COLL_TUNED_EVEN, NONE, 0,                           \
      "p/2 steps of two blocks with alternating neighbours")                                       \
    X(alltoall, alltoall, pairwise, 0, NONE, 0,                                                    \
      "p-1 exchanges with one peer each (rank^k on powers of two)")                                \
    X(alltoall, alltoall, linear, COLL_TUNED_NO_INPLACE, WINDOW, 0,                                \
      "sends and receives posted for a window of peers at a time (0: all)")                        \
    X(alltoall, alltoall, bruck, 0, NONE, 0,                                                       \
      "Bruck: ceil(log2 p) steps moving half the blocks each, for small blocks")                   \
    X(reduce_scatter, reduce_scatter, reduce_scatterv, 0, NONE, 0,                                 \
      "binomial reduce to rank 0 in rank order, then each block sent to its process")              \
    X(reduce_scatter, reduce_scatter, recursive_halving, COLL_TUNED_COMMUTATIVE, NONE, 0,          \
      "recursive halving over the largest power of two (fold for the rest)")                       \
    X(reduce_scatter, reduce_scatter, ring, COLL_TUNED_COMMUTATIVE, NONE, 0,                       \
      "p-1 ring steps passing partial blocks")                                                     \
    X(reduce_scatter_block, reduce_scatter, reduce_scatterv, 0, NONE, 0,                           \
      "binomial reduce to rank 0 in rank order, then each block sent to its process")              \
    X(reduce_scatter_block, reduce_scatter, recursive_halving, COLL_TUNED_COMMUTATIVE, NONE, 0,    \
      "recursive halving over the largest power of two (fold for the rest)")                       \
    X(reduce_scatter_block, reduce_scatter, ring, COLL_TUNED_COMMUTATIVE, NONE, 0,                 \
      "p-1 ring steps passing partial blocks")                                                     \
    X(gather, gather, binomial, 0, NONE, 0, "binomial tree; subtrees' blocks travel packed")       \
    X(gather, gather, linear, 0, NONE, 0, "every process sends its block to the root")            \
    X(scatter, scatter, binomial, 0, NONE, 0, "binomial tree; subtrees' blocks travel packed")     \
    X(scatter, scatter, linear, 0, NONE, 0, "the root sends every process its block")

enum tuned_alg_index {
#define TUNED_X_ENUM(op, fnop, name, flags, kind, def, help) TUNED_A_##op##_##name,
    TUNED_ALGS(TUNED_X_ENUM)
#undef TUNED_X_ENUM
    TUNED_NALGS
};

extern const coll_tuned_alg_t coll_tuned_table[];
extern const int coll_tuned_table_size;
extern size_t coll_tuned_params[];      /* current parameter value of each table entry */
extern int coll_tuned_verbose;

/* Index of algorithm `name` of op in the table, or -1. */
int tuned_alg_find(int op, const char *name, size_t len);
/* Whether table entry a can serve call c; *why gets the reason when not. */
bool tuned_alg_fits(const coll_tuned_alg_t *a, const coll_tuned_call_t *c, const char **why);

/* Parameters of the algorithms (segment sizes, windows). */
int tuned_table_register_params(void);
/* Parameters of the decisions (forcing, rules file). */
int tuned_decide_register_params(void);
/* Load the rules file (once; at the first communicator). */
void tuned_decide_init(void);
/* The algorithm for c (c->param set). */
const coll_tuned_alg_t *tuned_decide(coll_tuned_call_t *c);
/* The built-in choice (table index) for c, before the fit check. */
int tuned_builtin(const coll_tuned_call_t *c);

/* Rules file (tuned_rules.c). */
typedef struct tuned_rule {
    int op;
    int min_size, max_size;            /* communicator size, inclusive (-1: none) */
    size_t min_bytes, max_bytes;       /* message size, inclusive (SIZE_MAX: none) */
    int alg;                           /* table index */
    size_t param;                      /* segment size / window; 0: the parameter's */
    bool has_param;
} tuned_rule_t;

typedef struct tuned_rules {
    tuned_rule_t *v;
    int n;
} tuned_rules_t;

/* Parse the text of a rules file; on error, a message in err (line:col)
 * and MPI_ERR_ARG.  Unknown operations or algorithms are errors too. */
int tuned_rules_parse(const char *text, size_t len, tuned_rules_t *out, char *err, size_t errlen);
int tuned_rules_load(const char *path, tuned_rules_t *out, char *err, size_t errlen);
void tuned_rules_free(tuned_rules_t *r);
/* First rule of op matching (size, bytes), or NULL. */
const tuned_rule_t *tuned_rules_match(const tuned_rules_t *r, int op, int size, size_t bytes);

/* ------------------------------------------------------------ helpers (tuned_util.c) */

#define TUNED_CHECK(call)                                                                          \
    do {                                                                                           \
        rc = (call);                                                                               \
        if (rc != MPI_SUCCESS)                                                                     \
            goto out;                                                                              \
    } while (0)

/* The first error of two. */
static inline int tuned_first_error(int rc, int rc2)
{
    return rc != MPI_SUCCESS ? rc : rc2;
}

/* COUNTS THAT DIFFER between processes (erroneous).  A reduction's
 * receive that brings more than its arguments hold is truncated
 * (MPI_ERR_TRUNCATE), one that brings less is reported too (MPI_ERR_COUNT:
 * coll_recv_all, tuned_sendrecv_all, tuned_red_xchg).  After such an error
 * a reduction still makes every send and receive it would have made,
 * combining nothing more, so that no other process waits for ever, and
 * returns the first error (COLL_KEEP).  Where the number of messages
 * depends on the count (reduce's chain in segments, allreduce's ring in
 * passes) or processes choose different algorithms by their own counts,
 * they can still hang. */

static inline bool tuned_is_pow2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}

/* Largest power of two <= n (n >= 1). */
static inline int tuned_pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* Lowest set bit of v (v > 0). */
static inline int tuned_lowbit(int v)
{
    return v & -v;
}

/* Blocking exchange: send to dst and receive from src at once. */
int tuned_sendrecv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, int dst, void *rbuf,
                   MPI_Count rcount, obj_datatype_t *rdt, int src, int tag, obj_comm_t *comm);
/* ... a reduction's (COUNTS THAT DIFFER): a shorter message is
 * MPI_ERR_COUNT. */
int tuned_sendrecv_all(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, int dst,
                       void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, int src, int tag,
                       obj_comm_t *comm);

/* n bytes between two buffers of any memory type. */
int tuned_memcpy(void *dst, const void *src, size_t n);

/* A message seen as bytes: contiguous user data in place, anything else
 * in a contiguous temporary (on the device of a device buffer). */
typedef struct tuned_flat {
    char *p;                   /* the bytes */
    size_t len;
    void *mem;                 /* temporary to free, or NULL */
    bool device;
} tuned_flat_t;

/* View count elements of dt at buf as bytes; load: copy the data in (when
 * a temporary is needed). */
int tuned_flat_begin(tuned_flat_t *f, const void *buf, MPI_Count count, obj_datatype_t *dt,
                     bool load);
/* store: copy the bytes back to buf (when a temporary was used); frees. */
int tuned_flat_end(tuned_flat_t *f, void *buf, MPI_Count count, obj_datatype_t *dt, bool store);

/* A temporary of n bytes: on the device of `like` when device, else from
 * the framework's host cache (coll_scratch_get); *mem gets what to free
 * with tuned_bytes_free. */
void *tuned_bytes_alloc(size_t n, bool device, const void *like, void **mem);
void tuned_bytes_free(void *mem, bool device);
/* Blocks of at least this many bytes on an oversubscribed node: alltoall
 * goes linear, every block by single-copy get (PML_SINGLE_COPY). */
extern size_t coll_tuned_alltoall_single_copy_min;

static inline bool tuned_alltoall_single_copy(size_t block_bytes)
{
    return rte_info.oversubscribed && coll_tuned_alltoall_single_copy_min > 0 &&
           block_bytes >= coll_tuned_alltoall_single_copy_min;
}

/* A range of user elements of a reduction temporary: address and what to
 * pass the pml (count, datatype). */
static inline MPI_Count tuned_red_n(const coll_red_t *r, MPI_Count n)
{
    return n * r->factor;
}

/* Local copy of n elements of dt (memcpy for contiguous host data). */
int tuned_copy(const void *src, void *dst, MPI_Count n, obj_datatype_t *dt);

/*
 * Reduction state: an accumulator acc (user elements [0, count), in the
 * temporaries' layout; the result buffer itself when its layout allows)
 * and a receive temporary tmp of tmp_count elements (on the stack when
 * small).  With `defer`, a process's own operand that already has the
 * temporaries' layout (contiguous host data, predefined operation) is not
 * copied into acc: src points at it, the first combination of each range
 * writes acc = tmp op src (a three-buffer kernel) and data still to send
 * from an untouched range come from src (tuned_red_data).  An algorithm
 * asking for defer must combine or receive every range of acc it later
 * uses before reading it from acc, then set src to NULL.
 */
typedef struct tuned_red {
    coll_red_t r;
    void *acc, *tmp;
    void *acc_mem, *tmp_mem;
    void *user_acc;            /* the user buffer serving as acc (NULL: none) */
    const void *src;           /* deferred own operand, or NULL */
    bool host_kernel;          /* host temporaries, predefined kernel: call it directly */
    _Alignas(16) char small[256];
} tuned_red_t;

/* Set up: own = this process's operand (NULL: none, acc left empty), res =
 * where the result goes here (NULL: nowhere; it may serve as acc). */
int tuned_red_begin(tuned_red_t *t, obj_op_t *op, obj_datatype_t *dt, MPI_Count count,
                    const void *own, void *res, MPI_Count tmp_count, bool defer);
/* Store acc elements [first, first+n) into res (n user elements from res;
 * nothing when acc is res itself), then free everything.  res NULL or rc
 * an error: just free.  Returns rc or the store's error. */
int tuned_red_end(tuned_red_t *t, void *res, MPI_Count first, MPI_Count n, int rc);
/* Address of user element i of a temporary (or of acc / a user buffer in
 * the temporaries' layout). */
static inline void *tuned_red_at(const tuned_red_t *t, const void *buf, MPI_Count i)
{
    return coll_red_at(&t->r, (void *)buf, i);
}
/* Where the current data of acc range starting at element i are: src
 * (deferred own operand) or acc. */
static inline const void *tuned_red_data(const tuned_red_t *t, MPI_Count i)
{
    return tuned_red_at(t, t->src ? t->src : t->acc, i);
}
/* inout = in op inout on n elements of temporaries. */
int tuned_red_apply(tuned_red_t *t, const void *in, void *inout, MPI_Count n);
/* Combine n elements received in tmp_part into acc_part: acc = tmp op acc
 * when the received data come from lower ranks (lower), else acc = acc op
 * tmp (through tmp, then copied back); commutative operations: either. */
int tuned_red_combine(tuned_red_t *t, void *tmp_part, void *acc_part, MPI_Count n, bool lower);
/* The first combination of acc elements [first, first+n) with tmp_part:
 * from src when deferred (acc = tmp op src), else tuned_red_combine. */
int tuned_red_first(tuned_red_t *t, void *tmp_part, MPI_Count first, MPI_Count n, bool lower);
/* The last combination of acc elements [first, first+n), whose result is
 * wanted in res (n user elements): written there directly (res = tmp op
 * current data, *stored set) when res has the temporaries' layout and
 * the kernel runs on the host, else tuned_red_first into acc (commutative
 * operations: callers use it for those only). */
int tuned_red_last(tuned_red_t *t, void *tmp_part, MPI_Count first, MPI_Count n, void *res,
                   bool *stored);
/* Exchange with a peer: send elements [sfirst, +sn) of the current data
 * (tuned_red_data) to dst, receive rn elements from src into tmp. */
int tuned_red_xchg(tuned_red_t *t, MPI_Count sfirst, MPI_Count sn, int dst, MPI_Count rn, int src,
                   int tag, obj_comm_t *comm);

/* Split n elements into k nearly equal pieces: start of piece i. */
static inline MPI_Count tuned_piece(MPI_Count n, int k, int i)
{
    return (n / k) * i + (i < n % k ? i : n % k);
}

/* ------------------------------------------------------------ algorithms */

#define TUNED_ALG(op, name) int coll_tuned_##op##_##name(const coll_tuned_call_t *c)
#define TUNED_X_PROTO(op, fnop, name, flags, kind, def, help) TUNED_ALG(fnop, name);
TUNED_ALGS(TUNED_X_PROTO)
#undef TUNED_X_PROTO

/* Pieces shared by several algorithms (same tag, the caller's). */
/* Binomial reduce of count elements in rank order to rank 0 (any
 * operation): on return rank 0's t->acc holds the result; t set up by the
 * caller with its own operand and a temporary of count elements. */
int tuned_reduce_binomial_to0(tuned_red_t *t, const coll_tuned_call_t *c, MPI_Count count);
/* Binomial broadcast of (buf, count, dt) from root. */
int tuned_bcast_binomial_buf(void *buf, MPI_Count count, obj_datatype_t *dt, int root,
                             const coll_tuned_call_t *c);

#endif
