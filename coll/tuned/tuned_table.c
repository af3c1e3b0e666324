/* coll tuned: the table of algorithms (TUNED_ALGS in tuned_impl.h), its
 * parameters and the fit check of a call. */
#include "coll/tuned/tuned_impl.h"
#include "base/param.h"

#include <stdio.h>
#include <string.h>

const coll_tuned_alg_t coll_tuned_table[] = {
#define TUNED_X_ENTRY(op, fnop, name, flags, kind, def, help)                                      \
    { COLL_OP_##op, #name, flags, 0, 0, COLL_TUNED_PARAM_##kind, def, help,                        \
      coll_tuned_##fnop##_##name },
    TUNED_ALGS(TUNED_X_ENTRY)
#undef TUNED_X_ENTRY
};
const int coll_tuned_table_size = TUNED_NALGS;

size_t coll_tuned_params[TUNED_NALGS];
static char param_names[TUNED_NALGS][96];

const coll_tuned_alg_t *coll_tuned_algorithms(int op, int i)
{
    for (int k = 0; k < TUNED_NALGS; k++)
        if (coll_tuned_table[k].op == op && i-- == 0)
            return &coll_tuned_table[k];
    return NULL;
}

int tuned_alg_find(int op, const char *name, size_t len)
{
    for (int k = 0; k < TUNED_NALGS; k++)
        if (coll_tuned_table[k].op == op && strlen(coll_tuned_table[k].name) == len &&
            strncmp(coll_tuned_table[k].name, name, len) == 0)
            return k;
    return -1;
}

const char *coll_tuned_alg_param_name(const coll_tuned_alg_t *a)
{
    int k = (int)(a - coll_tuned_table);
    if (k < 0 || k >= TUNED_NALGS || a->param_kind == COLL_TUNED_PARAM_NONE)
        return NULL;
    if (!param_names[k][0])
        snprintf(param_names[k], sizeof(param_names[k]), "coll_tuned_%s_%s_%s",
                 coll_op_name(a->op), a->name,
                 a->param_kind == COLL_TUNED_PARAM_SEGSIZE ? "segsize" : "window");
    return param_names[k];
}

size_t coll_tuned_alg_param_value(const coll_tuned_alg_t *a)
{
    int k = (int)(a - coll_tuned_table);
    return k >= 0 && k < TUNED_NALGS ? coll_tuned_params[k] : 0;
}

void coll_tuned_alg_describe(const coll_tuned_alg_t *a, char *buf, size_t len)
{
    static const struct {
        unsigned flag;
        const char *text;
    } words[] = {
        { COLL_TUNED_COMMUTATIVE, "commutative operations only" },
        { COLL_TUNED_POW2, "power-of-two sizes only" },
        { COLL_TUNED_EVEN, "even sizes only" },
        { COLL_TUNED_NO_INPLACE, "no MPI_IN_PLACE" },
    };
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(words) && n < len; i++)
        if (a->flags & words[i].flag)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", words[i].text);
    const char *pn = coll_tuned_alg_param_name(a);
    if (pn && n < len)
        snprintf(buf + n, len - n, "%s%s %zu (%s)", n ? "; " : "",
                 a->param_kind == COLL_TUNED_PARAM_SEGSIZE ? "segment bytes" : "window",
                 coll_tuned_alg_param_value(a), pn);
}

/* Register coll_tuned_<op>_<name>_<segsize|window> of every algorithm
 * that has one. */
int tuned_table_register_params(void)
{
    for (int k = 0; k < TUNED_NALGS; k++) {
        const coll_tuned_alg_t *a = &coll_tuned_table[k];
        const char *pn = coll_tuned_alg_param_name(a);
        coll_tuned_params[k] = a->param_default;
        if (!pn)
            continue;
        static char help[TUNED_NALGS][160];
        snprintf(help[k], sizeof(help[k]),
                 a->param_kind == COLL_TUNED_PARAM_SEGSIZE
                     ? "Segment size in bytes of the %s algorithm of %s (0: no segmentation)"
                     : "Peers in flight at a time in the %s algorithm of %s (0: all)",
                 a->name, coll_op_name(a->op));
        int rc = rail_param_register_size(pn, a->param_default, help[k], RAIL_PARAM_LEVEL_TUNER,
                                          &coll_tuned_params[k]);
        if (rc == MPI_SUCCESS)
            rc = rail_param_set_flags(pn, RAIL_PARAM_F_DYNAMIC);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

bool tuned_alg_fits(const coll_tuned_alg_t *a, const coll_tuned_call_t *c, const char **why)
{
    if ((a->flags & COLL_TUNED_COMMUTATIVE) && c->mop && !c->mop->commute)
        *why = "the operation is not commutative";
    else if ((a->flags & COLL_TUNED_POW2) && !tuned_is_pow2(c->size))
        *why = "the communicator size is not a power of two";
    else if ((a->flags & COLL_TUNED_EVEN) && (c->size & 1))
        *why = "the communicator size is odd";
    else if ((a->flags & COLL_TUNED_NO_INPLACE) && c->inplace_all)
        *why = "MPI_IN_PLACE is not supported";
    else if (c->count < a->min_count || (a->max_count && c->count > a->max_count))
        *why = "the count is out of its range";
    else
        return true;
    return false;
}
