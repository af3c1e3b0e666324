/* Process topologies: Dims_create table, Cartesian, graph and distributed
 * graph constructors and queries against hand-computed answers, topology
 * copied by dup, neighbourhood allgather on each kind, error classes. */
#include "comm_test.h"

static int rank, size;

/* MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY through a variable: gcc's
 * -Wstringop-overread takes the constant addresses for arrays to read. */
static int *volatile unweighted_v = MPI_UNWEIGHTED, *volatile weights_empty_v = MPI_WEIGHTS_EMPTY;
#define UNWEIGHTED ((int *)unweighted_v)
#define WEIGHTS_EMPTY ((int *)weights_empty_v)

/* ------------------------------------------------------------ Dims_create */

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, (size_t)ndims * sizeof(int));
    MPI_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims,
              i, d[i], want[i]);
}

static void test_dims(void)
{
    static const struct {
        int nnodes, ndims, in[4], want[4];
    } cases[] = {
        {6, 2, {0, 0}, {3, 2}},          {7, 2, {0, 0}, {7, 1}},
        {12, 3, {0, 0, 0}, {3, 2, 2}},   {16, 4, {0, 0, 0, 0}, {2, 2, 2, 2}},
        {72, 2, {0, 0}, {9, 8}},         {1, 3, {0, 0, 0}, {1, 1, 1}},
        {24, 3, {0, 3, 0}, {4, 3, 2}},   {8, 3, {2, 0, 0}, {2, 2, 2}},
        {30, 3, {0, 0, 0}, {5, 3, 2}},   {32, 3, {0, 0, 0}, {4, 4, 2}},
        {100, 2, {0, 0}, {10, 10}},      {6, 2, {3, 2}, {3, 2}},
        {36, 3, {0, 0, 0}, {4, 3, 3}},   {1000, 3, {0, 0, 0}, {10, 10, 10}},
        {60, 4, {0, 0, 0, 0}, {5, 3, 2, 2}}, {9, 2, {0, 3}, {3, 3}},
        /* the smallest spread, then the largest smallest factor (the
         * factors MPICH chooses; 45 x 45 x 17 and 20 x 18 x 14 before) */
        {34425, 3, {0, 0, 0}, {51, 27, 25}}, {5040, 3, {0, 0, 0}, {21, 16, 15}},
        {19152, 4, {0, 0, 0, 0}, {19, 14, 9, 8}}, {2147483647, 2, {0, 0}, {2147483647, 1}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        dims_case(cases[i].nnodes, cases[i].ndims, cases[i].in, cases[i].want);
    MPI_OK(MPI_Dims_create(1, 0, NULL));
    int d[2];
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    d[0] = 4, d[1] = 0;
    MPI_FAILS(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
    d[0] = -1, d[1] = 0;
    MPI_FAILS(MPI_Dims_create(5, 2, d), MPI_ERR_DIMS);
    d[0] = 3, d[1] = 3;
    MPI_FAILS(MPI_Dims_create(6, 2, d), MPI_ERR_DIMS);
    MPI_FAILS(MPI_Dims_create(13, 0, d), MPI_ERR_DIMS);
    MPI_FAILS(MPI_Dims_create(6, -1, d), MPI_ERR_DIMS);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

/* ------------------------------------------------------------ Cartesian */

/* Neighbour allgather: block k holds what in-neighbour k sent (its rank). */
static void check_neighbor_allgather(MPI_Comm c, int n, const int *want)
{
    int r, buf[16];
    MPI_OK(MPI_Comm_rank(c, &r));
    for (int i = 0; i < n; i++)
        buf[i] = -7;
    MPI_OK(MPI_Neighbor_allgather(&r, 1, MPI_INT, buf, 1, MPI_INT, c));
    for (int i = 0; i < n; i++)
        CHECK(buf[i] == (want[i] == MPI_PROC_NULL ? -7 : want[i]),
              "neighbor_allgather block %d = %d, expected %d", i, buf[i], want[i]);
}

static void check_cart_2d(MPI_Comm c, const int *dims, const int *periods)
{
    int nd, d[2], p[2], co[2], r, src, dst, status;
    MPI_OK(MPI_Topo_test(c, &status));
    CHECK(status == MPI_CART, "Topo_test = %d", status);
    MPI_OK(MPI_Cartdim_get(c, &nd));
    CHECK(nd == 2, "Cartdim_get = %d", nd);
    MPI_OK(MPI_Cart_get(c, 2, d, p, co));
    CHECK(d[0] == dims[0] && d[1] == dims[1] && p[0] == 1 && p[1] == 0,
          "Cart_get dims %dx%d periods %d,%d", d[0], d[1], p[0], p[1]);
    CHECK(co[0] == rank / dims[1] && co[1] == rank % dims[1], "coords (%d,%d)", co[0], co[1]);
    MPI_OK(MPI_Cart_rank(c, co, &r));
    CHECK(r == rank, "Cart_rank of my coords = %d", r);
    int wrapped[2] = {co[0] + 3 * dims[0], co[1]};
    MPI_OK(MPI_Cart_rank(c, wrapped, &r));
    CHECK(r == rank, "Cart_rank with wrapped periodic coordinate = %d", r);
    for (int q = 0; q < dims[0] * dims[1]; q++) {
        MPI_OK(MPI_Cart_coords(c, q, 2, co));
        CHECK(co[0] == q / dims[1] && co[1] == q % dims[1], "Cart_coords(%d)", q);
    }
    int c0 = rank / dims[1], c1 = rank % dims[1];
    MPI_OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
    CHECK(src == ((c0 + dims[0] - 1) % dims[0]) * dims[1] + c1 &&
          dst == ((c0 + 1) % dims[0]) * dims[1] + c1, "shift dim 0: %d %d", src, dst);
    MPI_OK(MPI_Cart_shift(c, 1, 1, &src, &dst));
    CHECK(src == (c1 > 0 ? rank - 1 : MPI_PROC_NULL) &&
          dst == (c1 < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL), "shift dim 1: %d %d", src, dst);
    MPI_OK(MPI_Cart_shift(c, 1, -2 * dims[1], &src, &dst));
    CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "long shift: %d %d", src, dst);
    MPI_OK(MPI_Cart_shift(c, 0, 0, &src, &dst));
    CHECK(src == rank && dst == rank, "shift by 0");
    int nb[4];
    MPI_OK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
    MPI_OK(MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]));
    check_neighbor_allgather(c, 4, nb);
    (void)periods;
}

static void test_cart(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0}, r, s;
    MPI_OK(MPI_Dims_create(size, 2, dims));
    MPI_Comm c, d, sub;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c));
    check_cart_2d(c, dims, periods);
    MPI_OK(MPI_Comm_dup(c, &d));   /* the topology comes along */
    check_cart_2d(d, dims, periods);
    MPI_OK(MPI_Comm_free(&d));
    int keep_cols[2] = {0, 1};
    MPI_OK(MPI_Cart_sub(c, keep_cols, &sub));
    MPI_OK(MPI_Comm_rank(sub, &r));
    MPI_OK(MPI_Comm_size(sub, &s));
    CHECK(s == dims[1] && r == rank % dims[1], "Cart_sub: rank %d size %d", r, s);
    int d1, p1, c1, nd;
    MPI_OK(MPI_Cart_get(sub, 1, &d1, &p1, &c1));
    CHECK(d1 == dims[1] && p1 == 0 && c1 == r, "Cart_sub topology %d %d %d", d1, p1, c1);
    ring_check(sub);
    MPI_OK(MPI_Comm_free(&sub));
    int none[2] = {0, 0};
    MPI_OK(MPI_Cart_sub(c, none, &sub));
    MPI_OK(MPI_Comm_size(sub, &s));
    MPI_OK(MPI_Cartdim_get(sub, &nd));
    CHECK(s == 1 && nd == 0, "Cart_sub without dimensions: size %d ndims %d", s, nd);
    MPI_OK(MPI_Cart_rank(sub, NULL, &r));
    CHECK(r == 0, "rank in a 0-dimensional grid %d", r);
    MPI_OK(MPI_Comm_free(&sub));
    MPI_OK(MPI_Comm_free(&c));
    /* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
    int small = (size + 1) / 2, newrank;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &small, periods, 0, &c));
    CHECK((rank < small) == (c != MPI_COMM_NULL), "1-d grid of %d", small);
    MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &small, periods, &newrank));
    CHECK(newrank == (rank < small ? rank : MPI_UNDEFINED), "Cart_map = %d", newrank);
    if (c != MPI_COMM_NULL) {
        int nb[2];
        MPI_OK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
        check_neighbor_allgather(c, 2, nb);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c));
    CHECK((rank == 0) == (c != MPI_COMM_NULL), "0-dimensional grid");
    if (c != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&c));
}

/* ------------------------------------------------------------ graphs */

static void test_graph(void)
{
    int index[64], edges[128], n = size;
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + 1) % n;
        edges[2 * i + 1] = (i + n - 1) % n;
    }
    MPI_Comm g, d;
    int nn, ne, st, cnt, nb[2], idx2[64], e2[128], newrank;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    MPI_OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "Topo_test = %d", st);
    MPI_OK(MPI_Comm_dup(g, &d));
    MPI_OK(MPI_Graphdims_get(d, &nn, &ne));
    CHECK(nn == n && ne == 2 * n, "Graphdims_get %d %d", nn, ne);
    MPI_OK(MPI_Graph_get(d, n, 2 * n, idx2, e2));
    CHECK(memcmp(idx2, index, (size_t)n * sizeof(int)) == 0 &&
          memcmp(e2, edges, (size_t)(2 * n) * sizeof(int)) == 0, "Graph_get");
    for (int q = 0; q < n; q++) {
        MPI_OK(MPI_Graph_neighbors_count(g, q, &cnt));
        MPI_OK(MPI_Graph_neighbors(g, q, 2, nb));
        CHECK(cnt == 2 && nb[0] == (q + 1) % n && nb[1] == (q + n - 1) % n,
              "neighbors of %d: %d (%d %d)", q, cnt, nb[0], nb[1]);
    }
    MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &newrank));
    CHECK(newrank == rank, "Graph_map = %d", newrank);
    int want[2] = {(rank + 1) % n, (rank + n - 1) % n};
    check_neighbor_allgather(g, 2, want);
    MPI_OK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Graph_neighbors_count(g, n, &cnt), MPI_ERR_RANK);
    MPI_FAILS(MPI_Cartdim_get(g, &cnt), MPI_ERR_TOPOLOGY);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&g));
}

static void check_dist(MPI_Comm c, int nin, const int *src, const int *sw, int nout,
                       const int *dst, const int *dw, int weighted)
{
    int i, o, w, s[8], swg[8], d[8], dwg[8];
    MPI_OK(MPI_Dist_graph_neighbors_count(c, &i, &o, &w));
    CHECK(i == nin && o == nout && w == weighted, "neighbors_count %d %d %d", i, o, w);
    MPI_OK(MPI_Dist_graph_neighbors(c, 8, s, swg, 8, d, dwg));
    for (int k = 0; k < nin; k++)
        CHECK(s[k] == src[k] && (!weighted || swg[k] == sw[k]), "source %d: %d (weight %d)", k,
              s[k], swg[k]);
    for (int k = 0; k < nout; k++)
        CHECK(d[k] == dst[k] && (!weighted || dwg[k] == dw[k]), "destination %d: %d (weight %d)",
              k, d[k], dwg[k]);
    int st;
    MPI_OK(MPI_Topo_test(c, &st));
    CHECK(st == MPI_DIST_GRAPH, "Topo_test = %d", st);
    check_neighbor_allgather(c, nin, src);
}

static void test_dist_graph(void)
{
    int n = size, prev = (rank + n - 1) % n, next = (rank + 1) % n;
    int sw = prev, dw = rank;   /* edge i -> i+1 has weight i */
    MPI_Comm c;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &sw, 1, &next, &dw,
                                          MPI_INFO_NULL, 0, &c));
    check_dist(c, 1, &prev, &sw, 1, &next, &dw, 1);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, UNWEIGHTED, 1, &next,
                                          UNWEIGHTED, MPI_INFO_NULL, 0, &c));
    check_dist(c, 1, &prev, NULL, 1, &next, NULL, 0);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, WEIGHTS_EMPTY, 0, NULL,
                                          WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c));
    check_dist(c, 0, NULL, NULL, 0, NULL, NULL, 1);
    MPI_OK(MPI_Comm_free(&c));
    /* Rank 0 names every edge i -> i+1 (weight i). */
    int srcs[64], degs[64], dsts[64], wts[64];
    for (int i = 0; i < n; i++) {
        srcs[i] = i;
        degs[i] = 1;
        dsts[i] = (i + 1) % n;
        wts[i] = i;
    }
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? n : 0, srcs, degs, dsts,
                                 rank == 0 ? wts : WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c));
    check_dist(c, 1, &prev, &sw, 1, &next, &dw, 1);
    MPI_OK(MPI_Comm_free(&c));
    /* Each process names its own out-edge, unweighted. */
    int one = 1;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &next, UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &c));
    check_dist(c, 1, &prev, NULL, 1, &next, NULL, 0);
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int x;
    MPI_FAILS(MPI_Graphdims_get(c, &x, &x), MPI_ERR_TOPOLOGY);
    MPI_OK(MPI_Comm_free(&c));
}

/* ------------------------------------------------------------ errors */

static void test_errors(void)
{
    int dims[2] = {size, 0}, periods[2] = {0, 0}, x, y;
    MPI_Comm c;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c), MPI_ERR_DIMS);
    dims[1] = 2;
    MPI_FAILS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c), MPI_ERR_ARG);
    MPI_FAILS(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &c), MPI_ERR_DIMS);
    MPI_FAILS(MPI_Cartdim_get(MPI_COMM_WORLD, &x), MPI_ERR_TOPOLOGY);
    MPI_FAILS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &x, &y), MPI_ERR_TOPOLOGY);
    MPI_FAILS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x, &y, &x), MPI_ERR_TOPOLOGY);
    int index[1] = {1}, edges[1] = {5};
    MPI_FAILS(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &c), MPI_ERR_ARG);
    dims[0] = size;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Cart_shift(c, 1, 1, &x, &y), MPI_ERR_ARG);
    int far = size;
    MPI_FAILS(MPI_Cart_rank(c, &far, &x), MPI_ERR_RANK);
    MPI_FAILS(MPI_Cart_coords(c, size, 1, &x), MPI_ERR_RANK);
    MPI_FAILS(MPI_Graph_neighbors_count(c, 0, &x), MPI_ERR_TOPOLOGY);
    MPI_OK(MPI_Comm_free(&c));
    int bad = size;
    MPI_FAILS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, UNWEIGHTED, 0, NULL,
                                             UNWEIGHTED, MPI_INFO_NULL, 0, &c), MPI_ERR_RANK);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "test written for at most 64 processes");
    int comms = live("comm");
    test_dims();
    test_cart();
    test_graph();
    test_dist_graph();
    test_errors();
    int now = live_settled("comm", comms);
    CHECK(now == comms, "%d communicators left (were %d)", now, comms);
    MPI_Finalize();
    return 0;
}
