/*
 * Neighbourhood collectives (Neighbor_allgather(v), Neighbor_alltoall(v,w);
 * blocking, nonblocking, persistent) on
 *   - a periodic ring (MPI_Cart_create, 1 dimension): at np 1 and 2 the -1
 *     and +1 neighbours are the same process, and what it sends to its +1
 *     neighbour must land in our -1 block;
 *   - a 2-D non-periodic grid: MPI_PROC_NULL neighbours at the edges, whose
 *     receive blocks must stay untouched;
 *   - a 2-D periodic grid;
 *   - a graph (MPI_Graph_create) and a distributed graph
 *     (MPI_Dist_graph_create_adjacent) with different in- and out-lists and,
 *     at small np, repeated edges between the same processes (matched in
 *     order).
 * Skipped (77) when the library has no topology functions.
 */
#include "coll_test.h"

typedef struct topo {
    const char *name;
    MPI_Comm comm;
    int kind;               /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int indeg, outdeg;
    int in[16], out[16];
} topo_t;

/* MPI_UNWEIGHTED is the constant pointer (int *)10 in the standard ABI;
 * passed directly, GCC 12 warns that it reads a region of size 0. */
static int *volatile unweighted;

/* Distributed graph: out-edges of r are r+1 and r-2, so in-edges are r-1
 * and r+2 (mod n). */
static int dg_out(int r, int e)
{
    int n = t_size;
    return e == 0 ? (r + 1) % n : ((r - 2) % n + n) % n;
}

static void dg_in(int r, int *in)
{
    int n = t_size;
    in[0] = (r - 1 + n) % n;
    in[1] = (r + 2) % n;
}

/* Out-list of rank s (for graph and distributed-graph topologies). */
static int out_list(const topo_t *t, int s, int *out)
{
    if (t->kind == MPI_DIST_GRAPH) {
        out[0] = dg_out(s, 0);
        out[1] = dg_out(s, 1);
        return 2;
    }
    int nn;
    MPI_OK(MPI_Graph_neighbors_count(t->comm, s, &nn));
    MPI_OK(MPI_Graph_neighbors(t->comm, s, 16, out));
    return nn;
}

/* Which send block of which sender lands in receive block k: on a
 * Cartesian topology the neighbour at -1 sends its +1 block and vice
 * versa; on graphs the m-th edge from s to us in s's out-list matches the
 * m-th occurrence of s in our in-list. */
static int source_block(const topo_t *t, int k)
{
    if (t->kind == MPI_CART)
        return k ^ 1;
    int s = t->in[k], m = 0, out[16];
    for (int j = 0; j < k; j++)
        m += t->in[j] == s;
    int no = out_list(t, s, out);
    for (int e = 0; e < no; e++)
        if (out[e] == t_rank && m-- == 0)
            return e;
    CHECK(0, "%s: no edge from %d to %d", t->name, s, t_rank);
    return -1;
}

static void topo_query(topo_t *t)
{
    if (t->kind == MPI_CART) {
        int nd;
        MPI_OK(MPI_Cartdim_get(t->comm, &nd));
        t->indeg = t->outdeg = 2 * nd;
        for (int d = 0; d < nd; d++)
            MPI_OK(MPI_Cart_shift(t->comm, d, 1, &t->in[2 * d], &t->in[2 * d + 1]));
        for (int k = 0; k < 2 * nd; k++)
            t->out[k] = t->in[k];
    } else if (t->kind == MPI_GRAPH) {
        MPI_OK(MPI_Graph_neighbors_count(t->comm, t_rank, &t->indeg));
        t->outdeg = t->indeg;
        MPI_OK(MPI_Graph_neighbors(t->comm, t_rank, 16, t->in));
        for (int k = 0; k < t->indeg; k++)
            t->out[k] = t->in[k];
    } else {
        int w;
        MPI_OK(MPI_Dist_graph_neighbors_count(t->comm, &t->indeg, &t->outdeg, &w));
        MPI_OK(MPI_Dist_graph_neighbors(t->comm, 16, t->in, unweighted, 16, t->out,
                                        unweighted));
    }
}

/* Value of send block e of rank s. */
static int bid(int s, int e)
{
    return s * 100 + e;
}

static long ecount(long c, int s, int e)
{
    return c ? c + (s + e) % 2 : 0;
}

static void fill_i(int *p, long n, int who, int it)
{
    for (long i = 0; i < n; i++)
        p[i] = gen_int(who, i, it);
}

static void check_block(const int *p, long n, int who, int it, const char *what, int k)
{
    for (long i = 0; i < n; i++)
        CHECK(p[i] == gen_int(who, i, it), "%s [%s] block %d element %ld: got %d, expected %d",
              what, t_mode_names[t_mode], k, i, p[i], gen_int(who, i, it));
}

static void check_untouched(const int *p, long n, const char *what, int k)
{
    for (long i = 0; i < n; i++)
        CHECK((unsigned)p[i] == T_HOLE, "%s [%s]: block %d of an MPI_PROC_NULL neighbour "
              "was written", what, t_mode_names[t_mode], k);
}

static void test_topo(topo_t *t, long c)
{
    MPI_Comm comm = t->comm;
    int ind = t->indeg, outd = t->outdeg, n = (int)c;
    long cap = (c + 2) * 16;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)cap * sizeof(int));
    tb_alloc(&rb, (size_t)cap * sizeof(int));
    int sc[16], sd[16], rc[16], rd[16], sbd[16], rbd[16], src_blk[16];
    MPI_Datatype ty[16];
    for (int k = 0; k < 16; k++)
        ty[k] = MPI_INT;
    for (int k = 0; k < ind; k++)
        src_blk[k] = t->in[k] == MPI_PROC_NULL ? -1 : source_block(t, k);
    char what[128];

    /* allgather: everyone sends its one block to every out-neighbour */
    snprintf(what, sizeof(what), "%s neighbor_allgather count %ld", t->name, c);
    COLL_CASE(
        {
            fill_i((int *)sb.h, c, bid(t_rank, 0), it_);
            t_poison(rb.h, rb.len);
            tb_push(&sb);
            tb_push(&rb);
        },
        MPI_Neighbor_allgather(sb.d, n, MPI_INT, rb.d, n, MPI_INT, comm),
        MPI_Ineighbor_allgather(sb.d, n, MPI_INT, rb.d, n, MPI_INT, comm, &req_),
        MPI_Neighbor_allgather_init(sb.d, n, MPI_INT, rb.d, n, MPI_INT, comm, MPI_INFO_NULL,
                                    &req_),
        {
            tb_pull(&rb);
            for (int k = 0; k < ind; k++) {
                const int *blk = (const int *)rb.h + k * c;
                if (t->in[k] == MPI_PROC_NULL)
                    check_untouched(blk, c, what, k);
                else
                    check_block(blk, c, bid(t->in[k], 0), it_, what, k);
            }
        });

    /* allgatherv: rank s sends c + s % 2 */
    for (int k = 0, off = 0; k < ind; k++) {
        rc[k] = t->in[k] == MPI_PROC_NULL ? 1 : (int)(c ? c + t->in[k] % 2 : 0);
        rd[k] = off;
        off += rc[k] + 1;
    }
    int mine = (int)(c ? c + t_rank % 2 : 0);
    snprintf(what, sizeof(what), "%s neighbor_allgatherv count %ld", t->name, c);
    COLL_CASE(
        {
            fill_i((int *)sb.h, mine, bid(t_rank, 0), it_);
            t_poison(rb.h, rb.len);
            tb_push(&sb);
            tb_push(&rb);
        },
        MPI_Neighbor_allgatherv(sb.d, mine, MPI_INT, rb.d, rc, rd, MPI_INT, comm),
        MPI_Ineighbor_allgatherv(sb.d, mine, MPI_INT, rb.d, rc, rd, MPI_INT, comm, &req_),
        MPI_Neighbor_allgatherv_init(sb.d, mine, MPI_INT, rb.d, rc, rd, MPI_INT, comm,
                                     MPI_INFO_NULL, &req_),
        {
            tb_pull(&rb);
            for (int k = 0; k < ind; k++) {
                const int *blk = (const int *)rb.h + rd[k];
                if (t->in[k] == MPI_PROC_NULL)
                    check_untouched(blk, rc[k], what, k);
                else
                    check_block(blk, rc[k], bid(t->in[k], 0), it_, what, k);
            }
        });

    /* alltoall: send block e to out[e] */
    snprintf(what, sizeof(what), "%s neighbor_alltoall count %ld", t->name, c);
    COLL_CASE(
        {
            for (int e = 0; e < outd; e++)
                fill_i((int *)sb.h + e * c, c, bid(t_rank, e), it_);
            t_poison(rb.h, rb.len);
            tb_push(&sb);
            tb_push(&rb);
        },
        MPI_Neighbor_alltoall(sb.d, n, MPI_INT, rb.d, n, MPI_INT, comm),
        MPI_Ineighbor_alltoall(sb.d, n, MPI_INT, rb.d, n, MPI_INT, comm, &req_),
        MPI_Neighbor_alltoall_init(sb.d, n, MPI_INT, rb.d, n, MPI_INT, comm, MPI_INFO_NULL,
                                   &req_),
        {
            tb_pull(&rb);
            for (int k = 0; k < ind; k++) {
                const int *blk = (const int *)rb.h + k * c;
                if (t->in[k] == MPI_PROC_NULL)
                    check_untouched(blk, c, what, k);
                else
                    check_block(blk, c, bid(t->in[k], src_blk[k]), it_, what, k);
            }
        });

    /* alltoallv / alltoallw: block e has c + (rank + e) % 2 elements, gaps
     * between receive blocks, reversed send blocks */
    for (int e = outd - 1, off = 0; e >= 0; e--) {
        sc[e] = (int)ecount(c, t_rank, e);
        sd[e] = off;
        sbd[e] = off * (int)sizeof(int);
        off += sc[e];
    }
    for (int k = 0, off = 0; k < ind; k++) {
        rc[k] = t->in[k] == MPI_PROC_NULL ? 1 : (int)ecount(c, t->in[k], src_blk[k]);
        rd[k] = off;
        rbd[k] = off * (int)sizeof(int);
        off += rc[k] + 1;
    }
    MPI_Aint sba[16], rba[16];
    for (int k = 0; k < 16; k++) {
        sba[k] = sbd[k];
        rba[k] = rbd[k];
    }
    for (int w = 0; w < 2; w++) {
        snprintf(what, sizeof(what), "%s neighbor_alltoall%s count %ld", t->name, w ? "w" : "v",
                 c);
        COLL_CASE(
            {
                for (int e = 0; e < outd; e++)
                    fill_i((int *)sb.h + sd[e], sc[e], bid(t_rank, e), it_ + w);
                t_poison(rb.h, rb.len);
                tb_push(&sb);
                tb_push(&rb);
            },
            (w ? MPI_Neighbor_alltoallw(sb.d, sc, sba, ty, rb.d, rc, rba, ty, comm)
               : MPI_Neighbor_alltoallv(sb.d, sc, sd, MPI_INT, rb.d, rc, rd, MPI_INT, comm)),
            (w ? MPI_Ineighbor_alltoallw(sb.d, sc, sba, ty, rb.d, rc, rba, ty, comm, &req_)
               : MPI_Ineighbor_alltoallv(sb.d, sc, sd, MPI_INT, rb.d, rc, rd, MPI_INT, comm,
                                         &req_)),
            (w ? MPI_Neighbor_alltoallw_init(sb.d, sc, sba, ty, rb.d, rc, rba, ty, comm,
                                             MPI_INFO_NULL, &req_)
               : MPI_Neighbor_alltoallv_init(sb.d, sc, sd, MPI_INT, rb.d, rc, rd, MPI_INT, comm,
                                             MPI_INFO_NULL, &req_)),
            {
                tb_pull(&rb);
                for (int k = 0; k < ind; k++) {
                    const int *blk = (const int *)rb.h + rd[k];
                    if (t->in[k] == MPI_PROC_NULL)
                        check_untouched(blk, rc[k], what, k);
                    else
                        check_block(blk, rc[k], bid(t->in[k], src_blk[k]), it_ + w, what, k);
                }
            });
    }
    /* the separate big-count procedures, once */
    if (c == 1 && t_mode == MODE_BLOCKING) {
        MPI_Count crc[16], csc[16];
        MPI_Aint crd[16], csd[16];
        for (int k = 0; k < 16; k++) {
            crc[k] = rc[k];
            crd[k] = rd[k];
            csc[k] = sc[k];
            csd[k] = sd[k];
        }
        snprintf(what, sizeof(what), "%s neighbor_alltoallv_c", t->name);
        for (int e = 0; e < outd; e++)
            fill_i((int *)sb.h + sd[e], sc[e], bid(t_rank, e), 9);
        t_poison(rb.h, rb.len);
        tb_push(&sb);
        tb_push(&rb);
        MPI_OK(MPI_Neighbor_alltoallv_c(sb.d, csc, csd, MPI_INT, rb.d, crc, crd, MPI_INT, comm));
        tb_pull(&rb);
        for (int k = 0; k < ind; k++)
            if (t->in[k] != MPI_PROC_NULL)
                check_block((const int *)rb.h + rd[k], rc[k], bid(t->in[k], src_blk[k]), 9, what,
                            k);
        MPI_Request r;
        MPI_OK(MPI_Ineighbor_alltoallw_c(sb.d, csc, sba, ty, rb.d, crc, rba, ty, comm, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        tb_pull(&rb);
        for (int k = 0; k < ind; k++)
            if (t->in[k] != MPI_PROC_NULL)
                check_block((const int *)rb.h + rd[k], rc[k], bid(t->in[k], src_blk[k]), 9, what,
                            k);
    }
    tb_free(&sb);
    tb_free(&rb);
}

static void make_topos(topo_t *t, int *nt)
{
    int n = t_size, k = 0;
    int dims1[1] = { n }, per1[1] = { 1 };
    t[k] = (topo_t){ .name = "periodic ring", .kind = MPI_CART };
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &t[k].comm));
    k++;
    int dims2[2] = { 0, 0 }, per2[2] = { 0, 0 };
    MPI_OK(MPI_Dims_create(n, 2, dims2));
    t[k] = (topo_t){ .name = "2-D grid", .kind = MPI_CART };
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &t[k].comm));
    k++;
    per2[0] = per2[1] = 1;
    t[k] = (topo_t){ .name = "2-D torus", .kind = MPI_CART };
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims2, per2, 0, &t[k].comm));
    k++;
    /* a graph: each node linked to the next and the one after (undirected) */
    int *index = malloc(sizeof(int) * (size_t)n), *edges = malloc(sizeof(int) * 4 * (size_t)n);
    int ne = 0;
    for (int r = 0; r < n; r++) {
        edges[ne++] = (r + 1) % n;
        edges[ne++] = (r - 1 + n) % n;
        edges[ne++] = (r + 2) % n;
        edges[ne++] = (r - 2 + 2 * n) % n;
        index[r] = ne;
    }
    t[k] = (topo_t){ .name = "graph", .kind = MPI_GRAPH };
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t[k].comm));
    k++;
    free(index);
    free(edges);
    int in[2], out[2] = { dg_out(t_rank, 0), dg_out(t_rank, 1) };
    dg_in(t_rank, in);
    t[k] = (topo_t){ .name = "distributed graph", .kind = MPI_DIST_GRAPH };
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, unweighted, 2, out, unweighted,
                                          MPI_INFO_NULL, 0, &t[k].comm));
    k++;
    *nt = k;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    unweighted = MPI_UNWEIGHTED;
    /* topology functions present? */
    int dims[1] = { t_size }, per[1] = { 1 };
    MPI_Comm probe;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &probe);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS)
        check_mpi_skip("no process topologies in this library");
    MPI_OK(MPI_Comm_free(&probe));
    topo_t topos[8];
    int nt;
    make_topos(topos, &nt);
    long counts[] = { 0, 1, 1009, 30000 };
    for (t_mode = 0; t_mode < MODE_COUNT; t_mode++)
        for (int i = 0; i < nt; i++) {
            topo_query(&topos[i]);
            for (int ci = 0; ci < 4; ci++)
                test_topo(&topos[i], counts[ci]);
        }
    for (int i = 0; i < nt; i++)
        MPI_OK(MPI_Comm_free(&topos[i].comm));
    if (t_rank == 0)
        printf("coll_neighbor: passed at np %d%s\n", t_size, t_device ? " (device buffers)" : "");
    tb_pool_drain();
    MPI_OK(MPI_Finalize());
    return 0;
}
