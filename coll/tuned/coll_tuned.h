/*
 * coll tuned: topology-unaware algorithms (trees, rings, recursive
 * doubling and halving, Bruck, pipelines) for the blocking collectives of
 * intracommunicators, chosen per call by communicator size and message size.
 *
 * ONE TABLE.  Every algorithm is registered once in coll_tuned_table[]
 * (tuned_table.c): its operation, name, restrictions and parameter.  From
 * that table come the parameters that force an algorithm
 * (coll_tuned_<op>_algorithm, e.g. RAIL_COLL_TUNED_ALLREDUCE_ALGORITHM=ring),
 * the algorithm parameters (coll_tuned_bcast_chain_segsize, ...), the names
 * a rules file may use, the fit check of every call and the info tool's
 * listing (coll_tuned_algorithms).
 *
 * DECISIONS.  For each call: the forced algorithm if it fits the call, else
 * the first matching rule of the rules file (coll_tuned_rules_file) if it
 * fits, else the built-in decision (tuned_decide.c).  An algorithm that
 * does not fit (commutative-only with a user operation that is not,
 * power-of-two-only on 6 processes, ...) is never run: the call falls back
 * to the next source and, with coll_tuned_verbose >= 1, says so once.
 * coll/tuned/README.md describes the rules-file format.
 *
 * Everything a decision looks at is the same on every process of the
 * communicator (operation, commutativity, communicator size, message size,
 * count, MPI_IN_PLACE where the standard requires it everywhere), so all
 * processes choose the same algorithm.  Hence no algorithm is restricted
 * to host memory: one process may pass device memory where another passes
 * host memory, so every algorithm accepts device buffers (pml transfers,
 * coll_copy, accel_reduce into device temporaries).
 */
#ifndef COLL_TUNED_COLL_TUNED_H
#define COLL_TUNED_COLL_TUNED_H

#include "coll/coll.h"

#include <stddef.h>

/* Restrictions (coll_tuned_alg_t.flags). */
enum {
    COLL_TUNED_COMMUTATIVE = 1 << 0,   /* reductions: commutative operations only */
    COLL_TUNED_POW2 = 1 << 1,          /* communicator size a power of two */
    COLL_TUNED_EVEN = 1 << 2,          /* even communicator size */
    COLL_TUNED_NO_INPLACE = 1 << 3,    /* MPI_IN_PLACE not supported */
};

/* What the parameter of an algorithm means. */
typedef enum coll_tuned_param_kind {
    COLL_TUNED_PARAM_NONE = 0,
    COLL_TUNED_PARAM_SEGSIZE,          /* bytes per segment (0: no segmentation) */
    COLL_TUNED_PARAM_WINDOW,           /* peers in flight at a time (0: all) */
} coll_tuned_param_kind_t;

struct coll_tuned_call;
typedef int (*coll_tuned_fn_t)(const struct coll_tuned_call *c);

typedef struct coll_tuned_alg {
    int op;                            /* COLL_OP_<name>, blocking form */
    const char *name;                  /* "ring", ... */
    unsigned flags;                    /* COLL_TUNED_* restrictions */
    MPI_Count min_count, max_count;    /* element count limits (max_count 0: none) */
    coll_tuned_param_kind_t param_kind;
    size_t param_default;              /* default of coll_tuned_<op>_<name>_<segsize|window> */
    const char *help;                  /* one line: what it does */
    coll_tuned_fn_t fn;
} coll_tuned_alg_t;

/* The i-th algorithm (0, 1, ...) of operation op (COLL_OP_<name>), or NULL
 * past the last one and for operations tuned does not serve.  For the info
 * tool: for each op with coll_tuned_algorithms(op, 0) != NULL, list the
 * algorithms with coll_tuned_alg_describe. */
const coll_tuned_alg_t *coll_tuned_algorithms(int op, int i);

/* "commutative only, power-of-two sizes; segsize 64K (coll_tuned_bcast_chain_segsize)"
 * style summary of restrictions and parameter (current value); "" when none. */
void coll_tuned_alg_describe(const coll_tuned_alg_t *a, char *buf, size_t len);

/* Name of the parameter of algorithm a ("coll_tuned_bcast_chain_segsize"),
 * or NULL when it has none; and its current value. */
const char *coll_tuned_alg_param_name(const coll_tuned_alg_t *a);
size_t coll_tuned_alg_param_value(const coll_tuned_alg_t *a);

#endif
