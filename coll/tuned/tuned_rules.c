/*
 * coll tuned: the rules file (format in coll/tuned/README.md):
 *
 *   { "_comment": "...",
 *     "allreduce": [
 *       { "comm_size": [2, 2], "msg_size": [0, "64K"], "algorithm": "recursive_doubling" },
 *       { "comm_size": [3, null], "msg_size": ["1M", null], "algorithm": "ring",
 *         "segment_size": "1M" } ],
 *     "bcast": [ ... ] }
 *
 * Ranges are inclusive; null as an upper bound means no bound; sizes are
 * numbers of bytes or strings with a K/M/G suffix.  Rules of an operation
 * are tried in order, the first match wins.  Anything unknown (an
 * operation, an algorithm, a member of a rule) is an error, so typos do
 * not go unnoticed.
 */
#include "coll/tuned/tuned_impl.h"
#include "coll/tuned/tuned_json.h"
#include "base/param.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rules_ctx {
    char *err;
    size_t errlen;
} rules_ctx_t;

static int bad(rules_ctx_t *x, const tj_value_t *v, const char *fmt, ...)
{
    int n = snprintf(x->err, x->errlen, "line %d, column %d: ", v->line, v->col);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < x->errlen)
        vsnprintf(x->err + n, x->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return MPI_ERR_ARG;
}

/* A size: a non-negative integer number, or a string such as "64K". */
static int get_size(rules_ctx_t *x, const tj_value_t *v, const char *what, size_t *out)
{
    if (v->type == TJ_NUMBER && v->num >= 0 && v->num == floor(v->num) && v->num < 0x1p63) {
        *out = (size_t)v->num;
        return MPI_SUCCESS;
    }
    if (v->type == TJ_STRING && rail_param_parse_size(v->str, out))
        return MPI_SUCCESS;
    return bad(x, v, "%s: a non-negative integer or a size such as \"64K\" expected", what);
}

/* [lo, hi] with hi null for "no bound". */
static int get_range(rules_ctx_t *x, const tj_value_t *v, const char *what, size_t *lo,
                     size_t *hi)
{
    if (v->type != TJ_ARRAY || v->n != 2)
        return bad(x, v, "%s: a range [min, max] expected", what);
    int rc = get_size(x, &v->items[0], what, lo);
    if (rc != MPI_SUCCESS)
        return rc;
    if (v->items[1].type == TJ_NULL)
        *hi = SIZE_MAX;
    else if ((rc = get_size(x, &v->items[1], what, hi)) != MPI_SUCCESS)
        return rc;
    if (*hi < *lo)
        return bad(x, v, "%s: empty range (max < min)", what);
    return MPI_SUCCESS;
}

static int parse_rule(rules_ctx_t *x, int op, const tj_value_t *v, tuned_rule_t *r)
{
    static const char *const known[] = { "comm_size", "msg_size", "algorithm", "segment_size" };
    if (v->type != TJ_OBJECT)
        return bad(x, v, "a rule must be an object");
    for (int i = 0; i < v->n; i++) {
        bool ok = v->keys[i][0] == '_';
        for (size_t k = 0; k < RAIL_ARRAY_SIZE(known) && !ok; k++)
            ok = strcmp(v->keys[i], known[k]) == 0;
        if (!ok)
            return bad(x, &v->items[i], "unknown member \"%s\" in a rule (known: comm_size, "
                       "msg_size, algorithm, segment_size)", v->keys[i]);
    }
    size_t slo = 0, shi = SIZE_MAX;
    int rc = MPI_SUCCESS;
    *r = (tuned_rule_t){ .op = op, .min_size = 0, .max_size = -1, .min_bytes = 0,
                         .max_bytes = SIZE_MAX };
    const tj_value_t *m;
    if ((m = tj_get(v, "comm_size")) && (rc = get_range(x, m, "comm_size", &slo, &shi)))
        return rc;
    r->min_size = (int)RAIL_MIN(slo, (size_t)INT32_MAX);
    r->max_size = shi >= (size_t)INT32_MAX ? -1 : (int)shi;
    if ((m = tj_get(v, "msg_size")) &&
        (rc = get_range(x, m, "msg_size", &r->min_bytes, &r->max_bytes)))
        return rc;
    if ((m = tj_get(v, "segment_size"))) {
        if ((rc = get_size(x, m, "segment_size", &r->param)))
            return rc;
        r->has_param = true;
    }
    m = tj_get(v, "algorithm");
    if (!m || m->type != TJ_STRING)
        return bad(x, m ? m : v, "a rule needs \"algorithm\": \"<name>\"");
    r->alg = tuned_alg_find(op, m->str, strlen(m->str));
    if (r->alg < 0) {
        char names[512];
        size_t n = 0;
        names[0] = '\0';
        for (int i = 0; coll_tuned_algorithms(op, i) && n < sizeof(names); i++)
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
                                  coll_tuned_algorithms(op, i)->name);
        return bad(x, m, "%s has no algorithm \"%s\" (known: %s)", coll_op_name(op), m->str,
                   names);
    }
    return MPI_SUCCESS;
}

/* The operation named key (one tuned serves), or -1. */
static int op_of(const char *key)
{
    for (int op = 0; op < COLL_OP_COUNT; op += 2)
        if (strcmp(coll_op_name(op), key) == 0 && coll_tuned_algorithms(op, 0))
            return op;
    return -1;
}

int tuned_rules_parse(const char *text, size_t len, tuned_rules_t *out, char *err, size_t errlen)
{
    rules_ctx_t x = { err, errlen };
    tj_value_t root;
    *out = (tuned_rules_t){ 0 };
    if (tj_parse(text, len, &root, err, errlen) != 0)
        return MPI_ERR_ARG;
    int rc = MPI_SUCCESS, total = 0;
    if (root.type != TJ_OBJECT)
        rc = bad(&x, &root, "the rules must be an object {\"<operation>\": [rules], ...}");
    for (int i = 0; rc == MPI_SUCCESS && i < root.n; i++) {
        const tj_value_t *list = &root.items[i];
        if (root.keys[i][0] == '_')
            continue;   /* comments, metadata */
        if (op_of(root.keys[i]) < 0)
            rc = bad(&x, list, "unknown operation \"%s\"", root.keys[i]);
        else if (list->type != TJ_ARRAY)
            rc = bad(&x, list, "the rules of %s must be an array", root.keys[i]);
        else
            total += list->n;
    }
    if (rc == MPI_SUCCESS && total > 0 && !(out->v = calloc((size_t)total, sizeof(*out->v))))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory for %d rules", total);
    for (int i = 0; rc == MPI_SUCCESS && i < root.n; i++) {
        if (root.keys[i][0] == '_')
            continue;
        int op = op_of(root.keys[i]);
        for (int k = 0; rc == MPI_SUCCESS && k < root.items[i].n; k++)
            rc = parse_rule(&x, op, &root.items[i].items[k], &out->v[out->n++]);
    }
    tj_free(&root);
    if (rc != MPI_SUCCESS)
        tuned_rules_free(out);
    return rc;
}

int tuned_rules_load(const char *path, tuned_rules_t *out, char *err, size_t errlen)
{
    *out = (tuned_rules_t){ 0 };
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return MPI_ERR_FILE;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    while (text) {
        len += fread(text + len, 1, cap - len, f);
        if (len < cap)
            break;
        char *t = realloc(text, cap * 2);
        if (!t) {
            free(text);
            text = NULL;
            break;
        }
        text = t;
        cap *= 2;
    }
    bool failed = ferror(f);
    fclose(f);
    if (!text || failed) {
        free(text);
        snprintf(err, errlen, "%s", failed ? "read error" : "out of memory");
        return failed ? MPI_ERR_FILE : MPI_ERR_NO_MEM;
    }
    int rc = tuned_rules_parse(text, len, out, err, errlen);
    free(text);
    return rc;
}

void tuned_rules_free(tuned_rules_t *r)
{
    free(r->v);
    *r = (tuned_rules_t){ 0 };
}

const tuned_rule_t *tuned_rules_match(const tuned_rules_t *r, int op, int size, size_t bytes)
{
    for (int i = 0; i < r->n; i++) {
        const tuned_rule_t *u = &r->v[i];
        if (u->op == op && size >= u->min_size && (u->max_size < 0 || size <= u->max_size) &&
            bytes >= u->min_bytes && bytes <= u->max_bytes)
            return u;
    }
    return NULL;
}
