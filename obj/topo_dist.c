/* Distributed graph topologies: MPI_Dist_graph_create(_adjacent) (reorder
 * is ignored: the new communicator has comm_old's group). */
#include "obj/comm_int.h"
#include "obj/topo.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ checks */

static int check_ranks(const int *r, int n, int size, const char *what)
{
    if (n > 0 && !r)
        return obj_errf(MPI_ERR_ARG, "argument '%s' must not be NULL", what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return obj_errf(MPI_ERR_RANK, "invalid rank %d in %s[%d] (communicator of size %d)",
                            r[i], what, i, size);
    return MPI_SUCCESS;
}

static int check_weights(const int *w, int n, const char *what)
{
    if (w == MPI_UNWEIGHTED)
        return MPI_SUCCESS;
    if (n > 0 && (w == MPI_WEIGHTS_EMPTY || !w))
        return obj_errf(MPI_ERR_ARG, "%s: %d weights are needed", what, n);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return obj_errf(MPI_ERR_ARG, "negative weight %d in %s[%d]", w[i], what, i);
    return MPI_SUCCESS;
}

/* A communicator of all of comm_old's processes.  ok: this process's
 * arguments were valid; it takes part either way so that nobody hangs,
 * and drops the communicator when they were not. */
static int dist_comm(obj_comm_t *comm_old, bool ok, obj_comm_t **out)
{
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(comm_old, true, &a);
    *out = NULL;
    int rc = comm_ctxid_agree(&a, ids);
    obj_comm_t *c = rc == MPI_SUCCESS ? comm_new(comm_old) : NULL;
    if (rc == MPI_SUCCESS && !c)
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_intra(c, comm_old->group, ids[0]);
    if (rc == MPI_SUCCESS && !ok)
        obj_comm_release(c);
    else if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

/* A weights argument that points at weights (not the special values). */
static const int *real_weights(const int *w)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? NULL : w;
}

/* The topology from in / out lists (copied; weights NULL when unweighted). */
static int dist_attach(obj_comm_t *c, int indeg, const int *src, const int *sw, int outdeg,
                       const int *dst, const int *dw, bool weighted)
{
    obj_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    bool ok = true;
    t->kind = MPI_DIST_GRAPH;
    t->weighted = weighted;
    t->indegree = indeg;
    t->outdegree = outdeg;
    t->in = topo_dup_ints(src, indeg, &ok);
    t->out = topo_dup_ints(dst, outdeg, &ok);
    if (weighted) {
        t->in_weights = topo_dup_ints(real_weights(sw), indeg, &ok);
        t->out_weights = topo_dup_ints(real_weights(dw), outdeg, &ok);
    }
    if (!ok) {
        obj_topo_free(t);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    c->topo = t;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ adjacent */

int obj_topo_dist_graph_create_adjacent(obj_comm_t *comm_old, int indegree, const int sources[],
                                        const int sourceweights[], int outdegree,
                                        const int destinations[], const int destweights[],
                                        obj_comm_t **out)
{
    if (comm_old->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Dist_graph_create_adjacent needs an intracommunicator");
    int rc = indegree < 0 || outdegree < 0
                 ? obj_errf(MPI_ERR_ARG, "negative degree (indegree %d, outdegree %d)", indegree,
                            outdegree)
                 : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = check_ranks(sources, indegree, comm_old->size, "sources");
    if (rc == MPI_SUCCESS)
        rc = check_ranks(destinations, outdegree, comm_old->size, "destinations");
    if (rc == MPI_SUCCESS)
        rc = check_weights(sourceweights, indegree, "sourceweights");
    if (rc == MPI_SUCCESS)
        rc = check_weights(destweights, outdegree, "destweights");
    obj_comm_t *c;
    int crc = dist_comm(comm_old, rc == MPI_SUCCESS, &c);
    if (rc != MPI_SUCCESS || (rc = crc) != MPI_SUCCESS)
        return rc;
    bool weighted = sourceweights != MPI_UNWEIGHTED;
    rc = dist_attach(c, indegree, sources, sourceweights, outdegree, destinations, destweights,
                     weighted);
    if (rc != MPI_SUCCESS) {
        obj_comm_release(c);
        return rc;
    }
    *out = c;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ general */

/* An edge as sent to one of its ends: which end the receiver is, the
 * other end, the weight. */
typedef struct {
    int dir;       /* 0: the receiver is the destination (an in-edge), 1: the source */
    int peer;
    int weight;
} dist_edge_t;

static int dist_check(const obj_comm_t *comm, int n, const int sources[], const int degrees[],
                      const int destinations[], const int weights[], int *nedges)
{
    int rc = check_ranks(sources, n, comm->size, "sources");
    if (rc != MPI_SUCCESS)
        return rc;
    if (n > 0 && !degrees)
        return obj_errf(MPI_ERR_ARG, "argument 'degrees' must not be NULL");
    long long total = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return obj_errf(MPI_ERR_ARG, "negative degree %d in degrees[%d]", degrees[i], i);
        total += degrees[i];
    }
    if (total > (1 << 28))
        return obj_errf(MPI_ERR_ARG, "too many edges (%lld)", total);
    *nedges = (int)total;
    rc = check_ranks(destinations, *nedges, comm->size, "destinations");
    if (rc == MPI_SUCCESS)
        rc = check_weights(weights, *nedges, "weights");
    return rc;
}

/* Bucket this process's edges by the process each record goes to. */
static int dist_bucket(const obj_comm_t *comm, int n, const int sources[], const int degrees[],
                       const int destinations[], const int weights[], int nedges,
                       dist_edge_t **sbuf, int *scounts, int *sdispls)
{
    int size = comm->size;
    bool w = weights != MPI_UNWEIGHTED && weights != MPI_WEIGHTS_EMPTY;
    memset(scounts, 0, (size_t)size * sizeof(int));
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scounts[sources[i]]++;
            scounts[destinations[e]]++;
        }
    for (int p = 0, off = 0; p < size; p++) {
        sdispls[p] = off;
        off += scounts[p];
    }
    *sbuf = malloc((size_t)RAIL_MAX(2 * nedges, 1) * sizeof(dist_edge_t));
    if (!*sbuf)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int *fill = calloc((size_t)size, sizeof(int));
    if (!fill)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e], wt = w ? weights[e] : 1;
            (*sbuf)[sdispls[s] + fill[s]++] = (dist_edge_t){1, d, wt};
            (*sbuf)[sdispls[d] + fill[d]++] = (dist_edge_t){0, s, wt};
        }
    free(fill);
    return MPI_SUCCESS;
}

/* Split the received records into in- and out-lists, in arrival order. */
static int dist_collect(obj_comm_t *c, const dist_edge_t *r, int nr, bool weighted)
{
    int nin = 0, nout = 0;
    for (int i = 0; i < nr; i++)
        r[i].dir ? nout++ : nin++;
    int *buf = malloc((size_t)RAIL_MAX(2 * (nin + nout), 1) * sizeof(int));
    if (!buf)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int *src = buf, *sw = buf + nin, *dst = buf + 2 * nin, *dw = dst + nout;
    for (int i = 0, a = 0, b = 0; i < nr; i++) {
        if (r[i].dir) {
            dst[b] = r[i].peer;
            dw[b++] = r[i].weight;
        } else {
            src[a] = r[i].peer;
            sw[a++] = r[i].weight;
        }
    }
    int rc = dist_attach(c, nin, src, sw, nout, dst, dw, weighted);
    free(buf);
    return rc;
}

/* Deliver the edges to their ends. */
static int dist_exchange(obj_comm_t *comm, const dist_edge_t *sbuf, const int *scounts,
                         const int *sdispls, dist_edge_t **rbuf, int *nr)
{
    int size = comm->size;
    int *rcounts = malloc((size_t)size * sizeof(int)), *rdispls = malloc((size_t)size * sizeof(int));
    int rc = rcounts && rdispls ? MPI_SUCCESS : obj_errf(MPI_ERR_NO_MEM, "out of memory");
    comm_xchg_t x = comm_xchg_intra(comm);
    if (rc == MPI_SUCCESS)
        rc = comm_xchg_alltoall_counts(&x, scounts, rcounts);
    *nr = 0;
    for (int p = 0; rc == MPI_SUCCESS && p < size; p++) {
        rdispls[p] = *nr;
        *nr += rcounts[p];
    }
    if (rc == MPI_SUCCESS && !(*rbuf = malloc((size_t)RAIL_MAX(*nr, 1) * sizeof(dist_edge_t))))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    x = comm_xchg_intra(comm);
    if (rc == MPI_SUCCESS)
        rc = comm_xchg_alltoallv(&x, sbuf, scounts, sdispls, *rbuf, rcounts, rdispls,
                                 sizeof(dist_edge_t));
    free(rcounts);
    free(rdispls);
    return rc;
}

int obj_topo_dist_graph_create(obj_comm_t *comm_old, int n, const int sources[],
                               const int degrees[], const int destinations[], const int weights[],
                               obj_comm_t **out)
{
    if (comm_old->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Dist_graph_create needs an intracommunicator");
    int size = comm_old->size, nedges = 0, nr = 0;
    int *scounts = calloc((size_t)size, sizeof(int)), *sdispls = calloc((size_t)size, sizeof(int));
    dist_edge_t *sbuf = NULL, *rbuf = NULL;
    int rc = scounts && sdispls ? MPI_SUCCESS : obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = dist_check(comm_old, n, sources, degrees, destinations, weights, &nedges);
    if (rc == MPI_SUCCESS)
        rc = dist_bucket(comm_old, n, sources, degrees, destinations, weights, nedges, &sbuf,
                         scounts, sdispls);
    if (rc != MPI_SUCCESS)   /* still take part, sending nothing */
        memset(scounts, 0, scounts ? (size_t)size * sizeof(int) : 0);
    int xrc = scounts ? dist_exchange(comm_old, sbuf, scounts, sdispls, &rbuf, &nr) : rc;
    obj_comm_t *c = NULL;
    int crc = dist_comm(comm_old, rc == MPI_SUCCESS && xrc == MPI_SUCCESS, &c);
    if (rc == MPI_SUCCESS)
        rc = xrc != MPI_SUCCESS ? xrc : crc;
    if (rc == MPI_SUCCESS && (rc = dist_collect(c, rbuf, nr, weights != MPI_UNWEIGHTED)))
        obj_comm_release(c);
    free(scounts);
    free(sdispls);
    free(sbuf);
    free(rbuf);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}
