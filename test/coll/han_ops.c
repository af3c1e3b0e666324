/*
 * coll han: barrier, bcast, reduce, allreduce and allgather of a
 * communicator spanning several nodes, against values computed here: every
 * root, MPI_IN_PLACE, counts 0, 1, primes and ~1 MiB, a vector type with
 * holes and mixed send / receive types in allgather, reductions SUM, MAX,
 * MINLOC and a non-commutative user operation (handed to the next
 * component); on MPI_COMM_WORLD, on a communicator in reverse rank order,
 * and on duplicates made and freed in a loop (their sub-communicators go
 * with them).
 *
 * Nodes are real ones (test/coll/han_netns.sh) or, on one machine, the
 * parts of coll_han_split_nodes (test/tests.conf).  HANTEST_EXPECT=1: han
 * must serve MPI_COMM_WORLD; the test checks it through the segment of the
 * node-local sm communicator of this process's (virtual) node, which only
 * han makes: its creator is the node's leader.
 */
#include "coll_test.h"
#include "sm_util.h"

#include <stdbool.h>

static MPI_Comm C;
static int me, n;

#define BIG 262147L

static void expect(const tdt_t *t, const char *buf, long c, int src, int it, int holes)
{
    char want[64];
    for (long i = 0; i < c; i++) {
        gen_elem(t, want, src, i, it);
        CHECK_ELEM(t, buf + i * t->ext, want, holes, i);
    }
}

static void test_bcast(int tk, long c, int root)
{
    const tdt_t *t = &t_types[tk];
    tbuf_t b;
    tb_alloc(&b, (size_t)c * t->ext);
    snprintf(t_current, sizeof(t_current), "han bcast %s count %ld root %d", t->name, c, root);
    if (me == root)
        gen_fill(t, b.h, c, root, 1);
    else
        t_poison(b.h, b.len);
    tb_push(&b);
    MPI_OK(MPI_Bcast(b.d, (int)c, t->dt, root, C));
    tb_pull(&b);
    expect(t, b.h, c, root, 1, 1);
    tb_free(&b);
}

static void test_reduce(int tk, MPI_Op op, long c, int root, int inplace)
{
    smhan_reduce(C, me, n, "han", tk, op, c, root, inplace, 2);
}

/* mixed: 2c ints sent, c vectors received. */
static void test_allgather(int tk, int mixed, long c, int inplace)
{
    const tdt_t *st = &t_types[mixed ? T_INT : tk], *rt = &t_types[mixed ? T_VEC : tk];
    long sc = mixed ? 2 * c : c;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)sc * st->ext);
    tb_alloc(&rb, (size_t)(n * c) * rt->ext);
    snprintf(t_current, sizeof(t_current), "han allgather %s%s count %ld%s",
             mixed ? "mixed " : "", rt->name, c, inplace ? " in place" : "");
    gen_fill(st, sb.h, sc, me, 3);
    t_poison(rb.h, rb.len);
    if (inplace)
        gen_fill(rt, rb.h + (size_t)(me * c) * rt->ext, c, me, 3);
    tb_push(&sb);
    tb_push(&rb);
    MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : sb.d, (int)sc, st->dt, rb.d, (int)c, rt->dt,
                         C));
    tb_pull(&rb);
    for (int j = 0; j < n; j++)
        expect(rt, rb.h + (size_t)(j * c) * rt->ext, c, j, 3, 1);
    tb_free(&sb);
    tb_free(&rb);
}

static void all_ops(int full)
{
    const long counts[] = { 0, 1, 17, 1009, BIG };
    int nc = full && !t_quick ? 5 : 4;
    for (int i = 0; i < nc; i++) {
        long c = counts[i], cb = c > 1009 ? c / n + 1 : c;
        MPI_OK(MPI_Barrier(C));
        for (int root = 0; root < n; root++) {
            if (c <= 1009 || root == 0 || root == n - 1) {
                test_bcast(T_INT, c, root);
                test_reduce(T_INT, MPI_SUM, c, root, root % 2);
            }
        }
        test_bcast(T_VEC, c, n / 2);
        test_reduce(T_DBL, MPI_MAX, c, n - 1, 0);
        test_reduce(T_DINT, MPI_MINLOC, c, n / 2, 1);
        for (int ip = 0; ip < 2; ip++) {
            test_reduce(T_INT, MPI_SUM, c, -1, ip);
            test_reduce(T_VEC, MPI_SUM, c, -1, ip);
            test_reduce(T_2INT, MPI_MAXLOC, c, -1, ip);
            test_allgather(T_INT, 0, cb, ip);
            test_allgather(T_VEC, !ip, cb, ip);
        }
        test_reduce(T_MAT, t_op_matmul, c > 1009 ? 1009 : c, -1, 0);
        test_reduce(T_MAT, t_op_matmul, c > 1009 ? 1009 : c, n - 1, 0);
        for (int k = 0; k < 20; k++)
            MPI_OK(MPI_Barrier(C));
    }
}

/* The leader of my (virtual) node: the lowest world rank of the processes
 * of my node whose index on it is mine modulo the split (real nodes: the
 * lowest of the node).  Local group operations only: a collective on the
 * node communicator would give it a segment of its own. */
static int node_leader(int *node_size)
{
    const char *s = getenv("RAIL_COLL_HAN_SPLIT_NODES");
    int k = s ? atoi(s) : 0;
    MPI_Comm node;
    MPI_Group ng, wg;
    int nr, nn;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, t_rank, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_rank(node, &nr));
    MPI_OK(MPI_Comm_size(node, &nn));
    MPI_OK(MPI_Comm_group(node, &ng));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int *idx = malloc(sizeof(int) * (size_t)nn), *world = malloc(sizeof(int) * (size_t)nn);
    for (int i = 0; i < nn; i++)
        idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(ng, nn, idx, wg, world));
    int leader = -1;
    *node_size = 0;
    for (int i = 0; i < nn; i++)
        if (k <= 0 || i % k == nr % k) {
            if (leader < 0)
                leader = world[i];
            (*node_size)++;
        }
    free(idx);
    free(world);
    MPI_OK(MPI_Group_free(&ng));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Comm_free(&node));
    return leader;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_types_init();
    C = MPI_COMM_WORLD;
    me = t_rank;
    n = t_size;
    all_ops(1);
    const char *e = getenv("HANTEST_EXPECT");
    if (e && atoi(e)) {
        int size, leader = node_leader(&size);
        if (leader > 0 && size > 1)
            CHECK(sm_maps(leader).by_creator >= 1, "han did not serve MPI_COMM_WORLD: no "
                  "node-local segment of my node's leader %d (node of %d processes)", leader, size);
        if (t_rank == 0)
            printf("han_ops: han serves MPI_COMM_WORLD (checked at the ranks whose node leader is not 0)\n");
    }
    /* reverse rank order: other leaders, other node numbering */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - t_rank, &C));
    MPI_OK(MPI_Comm_rank(C, &me));
    all_ops(0);
    MPI_OK(MPI_Comm_free(&C));
    /* duplicates: sub-communicators made at the first call, freed with them */
    for (int i = 0; i < 10; i++) {
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &C));
        me = t_rank;
        test_reduce(T_INT, MPI_SUM, 5, -1, 0);
        test_bcast(T_INT, 3, i % n);
        MPI_OK(MPI_Comm_free(&C));
    }
    t_types_fini();
    if (t_rank == 0)
        printf("han_ops: passed at np %d\n", t_size);
    MPI_OK(MPI_Finalize());
    return 0;
}
