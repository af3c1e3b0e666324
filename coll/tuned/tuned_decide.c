/*
 * coll tuned: which algorithm serves a call.  In order: the algorithm
 * forced by coll_tuned_<op>_algorithm, the first matching rule of the rules
 * file, the built-in decision; each only when it fits the call (restrictions
 * of the table), else the next.  See coll_tuned.h and README.md.
 */
#include "coll/tuned/tuned_impl.h"
#include "base/log.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <string.h>

int coll_tuned_verbose;
static const char *rules_file;
static const char *forced_str[COLL_OP_COUNT];
static int forced[COLL_OP_COUNT];   /* table index + 1 of the forced algorithm, 0: none */
/* The value forced[] was resolved from: MPI_T may write the parameter while
 * MPI runs (a new string each time), and the next decision sees it. */
static const char *forced_seen[COLL_OP_COUNT];
static char choices[COLL_OP_COUNT][512];
static char names[COLL_OP_COUNT][64];
static char helps[COLL_OP_COUNT][700];
static tuned_rules_t rules;
static bool rules_loaded;
static unsigned char said[TUNED_NALGS];   /* fallback messages given (1: forced, 2: rule) */

/* Resolve the forced algorithm of op from its parameter's value. */
static void resolve_forced(int op)
{
    const char *v = forced_str[op];
    forced_seen[op] = v;
    forced[op] = 0;
    if (!v || !*v || strcmp(v, "auto") == 0)
        return;
    forced[op] = tuned_alg_find(op, v, strlen(v)) + 1;
    if (forced[op] == 0)   /* the registry keeps values within the choices; be safe */
        rail_warn("coll tuned: %s has no algorithm \"%s\"; using the decision rules",
                  coll_op_name(op), v);
}

/* The bench/ program that times op (reduce_scatter_block: reduce_scatter's). */
static const char *tuned_bench_of(int op)
{
    return op == COLL_OP_reduce_scatter_block ? "reduce_scatter" : coll_op_name(op);
}

static int register_forcing(int op)
{
    size_t n = (size_t)snprintf(choices[op], sizeof(choices[op]), "auto");
    for (int i = 0; coll_tuned_algorithms(op, i) && n < sizeof(choices[op]); i++)
        n += (size_t)snprintf(choices[op] + n, sizeof(choices[op]) - n, "|%s",
                              coll_tuned_algorithms(op, i)->name);
    snprintf(names[op], sizeof(names[op]), "coll_tuned_%s_algorithm", coll_op_name(op));
    snprintf(helps[op], sizeof(helps[op]),
             "Algorithm of %s in the tuned component: auto (the rules file, then the built-in "
             "decisions) or one of %s; one that does not fit a call (see railinfo) falls back "
             "to auto.  The built-in decisions were measured on one machine: bench %s at np "
             "2,4,8 (bench/coll_tune.py writes rules from this machine's)",
             coll_op_name(op), strchr(choices[op], '|') + 1, tuned_bench_of(op));
    int rc = rail_param_register_string(names[op], "auto", choices[op], helps[op],
                                        RAIL_PARAM_LEVEL_USER, &forced_str[op]);
    resolve_forced(op);
    if (rc == MPI_SUCCESS)
        rc = rail_param_set_flags(names[op], RAIL_PARAM_F_MEASURED | RAIL_PARAM_F_DYNAMIC);
    return rc;
}

int tuned_decide_register_params(void)
{
    int rc = rail_param_register_int("coll_tuned_verbose", 0,
                                     "Verbosity of the tuned collective component (0: quiet; 1: "
                                     "forced or ruled algorithms that do not fit a call, once "
                                     "each; 2: the algorithm of every call)",
                                     RAIL_PARAM_LEVEL_USER, &coll_tuned_verbose);
    if (rc == MPI_SUCCESS)
        rc = rail_param_set_flags("coll_tuned_verbose", RAIL_PARAM_F_DYNAMIC);
    if (rc == MPI_SUCCESS)
        rc = rail_param_register_string("coll_tuned_rules_file", "", NULL,
                                        "JSON file of decision rules for the tuned component "
                                        "(coll/tuned/README.md; bench/coll_tune.py writes one); "
                                        "empty: built-in decisions only",
                                        RAIL_PARAM_LEVEL_TUNER, &rules_file);
    for (int op = 0; rc == MPI_SUCCESS && op < COLL_OP_COUNT; op += 2)
        if (coll_tuned_algorithms(op, 0))
            rc = register_forcing(op);
    rules_loaded = false;
    return rc;
}

/* Load the rules file once (the first communicator). */
static void load_rules(void)
{
    if (rules_loaded)
        return;
    rules_loaded = true;
    tuned_rules_free(&rules);
    for (int op = 0; op < COLL_OP_COUNT; op += 2)
        resolve_forced(op);
    if (!rules_file || !*rules_file)
        return;
    char err[512];
    if (tuned_rules_load(rules_file, &rules, err, sizeof(err)) != MPI_SUCCESS)
        rail_warn("coll tuned: ignoring the rules file %s (coll_tuned_rules_file): %s",
                  rules_file, err);
    else
        RAIL_VERBOSE(coll_tuned_verbose, 1, "coll tuned: %d rules from %s", rules.n, rules_file);
}

void tuned_decide_init(void)
{
    load_rules();
}

/* ------------------------------------------------------------ built-in decisions */

/*
 * Measured on one machine, a 2-core VM (bench/coll_tune.py; docs in
 * README.md), so coll_tuned_<op>_algorithm is marked RAIL_PARAM_F_MEASURED:
 * with so few cores, and 4 or 8 processes sharing them, every extra round
 * costs a scheduling hand-off, so the decisions favour few rounds and whole
 * messages; the bandwidth-optimal splits pay only for large messages.  On
 * another node, bench/coll_tune.py writes a rules file that replaces them.
 */
/* More than two processes of the job per CPU on this node: the same
 * answer on every process of a node, not necessarily across nodes, so it
 * only picks between algorithms that exchange the same messages (alltoall
 * linear and pairwise: one message per pair, the call's tag). */
static bool crowded(void)
{
    return rte_info.node_cpus > 0 && rte_info.local_size > 2 * rte_info.node_cpus;
}

int tuned_builtin(const coll_tuned_call_t *c)
{
    int p = c->size;
    size_t s = c->bytes;
    bool commute = !c->mop || c->mop->commute;
    switch (c->op) {
    case COLL_OP_barrier:
        return TUNED_A_barrier_dissemination;
    case COLL_OP_bcast:
        if (p <= 2 || s < (256 << 10))
            return TUNED_A_bcast_binomial;
        return TUNED_A_bcast_scatter_allgather;
    case COLL_OP_reduce:
        if (commute && s >= (128 << 10) && c->count >= p)
            return TUNED_A_reduce_rabenseifner;
        return TUNED_A_reduce_binomial;
    case COLL_OP_allreduce:
        if (!commute || s < (16 << 10) || c->count < p)
            return TUNED_A_allreduce_recursive_doubling;
        return TUNED_A_allreduce_rabenseifner;
    case COLL_OP_allgather:
        if (tuned_is_pow2(p))
            return TUNED_A_allgather_recursive_doubling;
        if (s * (size_t)p < (64 << 10))
            return TUNED_A_allgather_bruck;
        return TUNED_A_allgather_ring;
    case COLL_OP_alltoall:
        if (p > 2 && s <= 256 && !c->inplace_all)
            return TUNED_A_alltoall_bruck;
        /* more than two processes per CPU: every exchange at once, so a
         * process does whatever has arrived whenever it runs instead of
         * waiting, step by step, for its partner to be scheduled (np 8 on
         * 2 cores: 15-25% faster from 512 KiB blocks) */
        if (crowded() && s >= (64 << 10) && !c->inplace_all)
            return TUNED_A_alltoall_linear;
        /* fewer processes per CPU: linear pays from larger blocks, when the
         * receivers also copy by themselves (tuned_alltoall.c) */
        if (tuned_alltoall_single_copy(s) && !c->inplace_all)
            return TUNED_A_alltoall_linear;
        return TUNED_A_alltoall_pairwise;
    case COLL_OP_reduce_scatter:
        if (!commute)
            return TUNED_A_reduce_scatter_reduce_scatterv;
        return TUNED_A_reduce_scatter_recursive_halving;
    case COLL_OP_reduce_scatter_block:
        if (!commute)
            return TUNED_A_reduce_scatter_block_reduce_scatterv;
        return TUNED_A_reduce_scatter_block_recursive_halving;
    case COLL_OP_gather:
        return TUNED_A_gather_binomial;
    case COLL_OP_scatter:
        return TUNED_A_scatter_binomial;
    }
    return -1;
}

/* ------------------------------------------------------------ the decision */

static void say_fallback(int k, unsigned src, const coll_tuned_call_t *c, const char *why)
{
    if (coll_tuned_verbose < 1 || (said[k] & src))
        return;
    said[k] |= (unsigned char)src;
    rail_info("coll tuned: %s algorithm %s (%s) cannot serve this call: %s; using the %s",
              coll_op_name(c->op), coll_tuned_table[k].name,
              src == 1 ? "forced by coll_tuned_*_algorithm" : "from the rules file", why,
              src == 1 ? "rules / built-in decision" : "built-in decision");
}

/* The first algorithm of the operation: no restrictions. */
static int last_resort(int op)
{
    for (int k = 0; k < TUNED_NALGS; k++)
        if (coll_tuned_table[k].op == op)
            return k;
    return -1;
}

const coll_tuned_alg_t *tuned_decide(coll_tuned_call_t *c)
{
    const char *why = NULL;
    if (RAIL_UNLIKELY(forced_str[c->op] != forced_seen[c->op]))
        resolve_forced(c->op);
    int k = forced[c->op] - 1;
    if (k >= 0) {
        if (tuned_alg_fits(&coll_tuned_table[k], c, &why)) {
            c->param = coll_tuned_params[k];
            goto chosen;
        }
        say_fallback(k, 1, c, why);
    }
    if (rules.n) {
        const tuned_rule_t *u = tuned_rules_match(&rules, c->op, c->size, c->bytes);
        if (u && tuned_alg_fits(&coll_tuned_table[u->alg], c, &why)) {
            k = u->alg;
            c->param = u->has_param ? u->param : coll_tuned_params[k];
            goto chosen;
        }
        if (u)
            say_fallback(u->alg, 2, c, why);
    }
    k = tuned_builtin(c);
    if (k < 0 || !tuned_alg_fits(&coll_tuned_table[k], c, &why))
        k = last_resort(c->op);
    c->param = coll_tuned_params[k];
chosen:
    if (RAIL_UNLIKELY(coll_tuned_verbose >= 2))
        rail_info("coll tuned: %s of %zu bytes on %d processes: %s (parameter %zu)",
                  coll_op_name(c->op), c->bytes, c->size, coll_tuned_table[k].name, c->param);
    return &coll_tuned_table[k];
}
