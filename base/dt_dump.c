/*
 * Datatype engine: human-readable dump of a description and its program.
 */
#include "base/dt_impl.h"
#include <inttypes.h>

static const char *const dt_combiner_name[] = {
    "predefined", "contiguous", "hvector", "hindexed", "hindexed_block", "struct", "resized",
};
static const char *const dt_op_name[] = {"block", "strided", "blks", "vec", "seq"};

#define DT_DUMP_MAX 8 /* entries shown per node */

static void dt_dump_desc(const struct rail_dt *dt, FILE *out, int indent)
{
    fprintf(out, "%*s%s", indent, "", dt_combiner_name[dt->combiner]);
    if (dt->tk != RAIL_TK_NONE)
        fprintf(out, " %s", rail_typekind_name(dt->tk));
    fprintf(out, " count=%" PRId64 " size=%" PRId64 " lb=%" PRId64 " extent=%" PRId64
                 " true_lb=%" PRId64 " true_extent=%" PRId64 " nelem=%" PRId64 "%s\n",
            dt->count, dt->size, dt->lb, dt->extent, dt->true_lb, dt->true_extent, dt->nelem,
            (dt->flags & RAIL_DT_F_MARKERS) ? " markers" : "");
    if (dt->combiner == RAIL_DT_PREDEFINED)
        return;
    if (dt->combiner != RAIL_DT_STRUCT) {
        dt_dump_desc(dt->old, out, indent + 2);
        return;
    }
    for (int64_t i = 0; i < dt->count && i < DT_DUMP_MAX; i++) {
        fprintf(out, "%*s[%" PRId64 "] blocklen=%" PRId64 " disp=%" PRId64 "\n", indent + 2, "", i,
                dt->blocklens[i], dt->displs[i]);
        dt_dump_desc(dt->types[i], out, indent + 4);
    }
}

static void dt_dump_node(const struct rail_dt_node *n, FILE *out, int indent)
{
    fprintf(out, "%*s%s disp=%" PRId64 " size=%" PRId64 " count=%" PRId64, indent, "",
            dt_op_name[n->op], n->disp, n->size, n->count);
    if (n->op == RAIL_DT_OP_BLOCK || n->op == RAIL_DT_OP_STRIDED)
        fprintf(out, " len=%" PRId64, n->len);
    if (n->op == RAIL_DT_OP_STRIDED || n->op == RAIL_DT_OP_VEC)
        fprintf(out, " stride=%" PRId64, n->stride);
    fprintf(out, "\n");
    for (int64_t i = 0; i < n->count && i < DT_DUMP_MAX; i++) {
        if (n->op == RAIL_DT_OP_BLKS)
            fprintf(out, "%*s(%" PRId64 ", %" PRId64 ")\n", indent + 2, "", n->blk[i].disp,
                    n->blk[i].len);
        else if (n->op == RAIL_DT_OP_SEQ)
            fprintf(out, "%*s@%" PRId64 ":\n", indent + 2, "", n->sub[i].disp);
        if (n->op == RAIL_DT_OP_SEQ)
            dt_dump_node(n->sub[i].child, out, indent + 4);
    }
    if ((n->op == RAIL_DT_OP_BLKS || n->op == RAIL_DT_OP_SEQ) && n->count > DT_DUMP_MAX)
        fprintf(out, "%*s... %" PRId64 " more\n", indent + 2, "", n->count - DT_DUMP_MAX);
    if (n->op == RAIL_DT_OP_VEC)
        dt_dump_node(n->child, out, indent + 2);
}

void rail_dt_dump(const struct rail_dt *dt, FILE *out)
{
    dt_dump_desc(dt, out, 0);
    if (!(dt->flags & RAIL_DT_F_COMMITTED)) {
        fprintf(out, "program: (not committed)\n");
        return;
    }
    fprintf(out, "program:%s%s\n", (dt->flags & RAIL_DT_F_CONTIG) ? " contig" : "",
            dt->root ? "" : " empty");
    if (dt->root)
        dt_dump_node(dt->root, out, 2);
}
