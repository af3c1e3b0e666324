/* Topology objects (obj/topo.h): copy, free, common helpers, and the
 * factors of MPI_Dims_create. */
#include "obj/comm_int.h"
#include "obj/topo.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ objects */

int *topo_dup_ints(const int *src, int n, bool *ok)
{
    if (!src || n <= 0)
        return NULL;
    int *d = malloc((size_t)n * sizeof(int));
    if (!d)
        *ok = false;
    else
        memcpy(d, src, (size_t)n * sizeof(int));
    return d;
}

void obj_topo_free(obj_topo_t *t)
{
    if (!t)
        return;
    free(t->in);
    if (!t->in_shared)
        free(t->out);
    free(t->in_weights);
    free(t->out_weights);
    if (t->kind == MPI_CART) {
        free(t->u.cart.dims);
        free(t->u.cart.periods);
        free(t->u.cart.coords);
    } else if (t->kind == MPI_GRAPH) {
        free(t->u.graph.index);
        free(t->u.graph.edges);
    }
    free(t);
}

int obj_topo_copy(const obj_topo_t *src, obj_topo_t **out)
{
    *out = NULL;
    if (!src)
        return MPI_SUCCESS;
    obj_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory copying a topology");
    bool ok = true;
    *t = *src;
    t->in = topo_dup_ints(src->in, src->indegree, &ok);
    t->out = src->in_shared ? t->in : topo_dup_ints(src->out, src->outdegree, &ok);
    t->in_weights = topo_dup_ints(src->in_weights, src->indegree, &ok);
    t->out_weights = topo_dup_ints(src->out_weights, src->outdegree, &ok);
    if (src->kind == MPI_CART) {
        int n = src->u.cart.ndims;
        t->u.cart.dims = topo_dup_ints(src->u.cart.dims, n, &ok);
        t->u.cart.periods = topo_dup_ints(src->u.cart.periods, n, &ok);
        t->u.cart.coords = topo_dup_ints(src->u.cart.coords, n, &ok);
    } else if (src->kind == MPI_GRAPH) {
        int n = src->u.graph.nnodes;
        t->u.graph.index = topo_dup_ints(src->u.graph.index, n, &ok);
        t->u.graph.edges = topo_dup_ints(src->u.graph.edges, n ? src->u.graph.index[n - 1] : 0,
                                         &ok);
    }
    if (!ok) {
        obj_topo_free(t);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory copying a topology");
    }
    *out = t;
    return MPI_SUCCESS;
}

int obj_topo_of(const obj_comm_t *comm, int kind, const obj_topo_t **t)
{
    static const char *names[] = {"a Cartesian", "a graph", "a distributed graph"};
    *t = comm->topo;
    if (*t && (*t)->kind == kind)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_TOPOLOGY, "the communicator does not have %s topology",
                    names[kind - MPI_CART]);
}

/* A communicator of the first n processes of comm_old (n <= its size);
 * *out NULL at the others. */
int topo_comm_first(obj_comm_t *comm_old, int n, obj_comm_t **out)
{
    int *w = malloc((size_t)RAIL_MAX(n, 1) * sizeof(int));
    if (!w)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < n; i++)
        w[i] = obj_group_world_rank(comm_old->group, i);
    obj_group_t *g;
    int rc = obj_group_make(n, w, comm_old->session, &g);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = comm_create_intra(comm_old, g, out);
    obj_group_release(g);
    return rc;
}

/* ------------------------------------------------------------ Dims_create */

/* d^k >= m, without overflow. */
static bool pow_reaches(long long d, int k, long long m)
{
    long long p = 1;
    for (int i = 0; i < k && p < m; i++)
        p *= d;
    return p >= m;
}

/* MPI_Dims_create's factors "as close to each other as possible": of the
 * non-increasing factorizations of m into k factors, the one with the
 * smallest spread (largest - smallest factor), then the largest smallest
 * factor, then the largest factors from the end (the choice MPICH makes
 * too, so a program decomposes the same way under either).  A depth-first
 * search over the divisors of m, pruned by the best spread found. */
typedef struct dims_search {
    const int *divs;   /* divisors of m, ascending */
    int ndivs, k;
    int root;          /* largest r with r^k <= m */
    int *cur, *best;
    bool found;
} dims_search_t;

static bool dims_better(const dims_search_t *s)
{
    if (!s->found)
        return true;
    int k = s->k;
    int sc = s->cur[0] - s->cur[k - 1], sb = s->best[0] - s->best[k - 1];
    if (sc != sb)
        return sc < sb;
    for (int i = k - 1; i >= 0; i--)
        if (s->cur[i] != s->best[i])
            return s->cur[i] > s->best[i];
    return false;
}

static void dims_dfs(dims_search_t *s, int m, int depth, int cap)
{
    int left = s->k - depth;
    if (left == 1) {
        if (m > cap)
            return;
        s->cur[depth] = m;
        if (dims_better(s)) {
            memcpy(s->best, s->cur, (size_t)s->k * sizeof(int));
            s->found = true;
        }
        return;
    }
    for (int i = 0; i < s->ndivs && s->divs[i] <= cap; i++) {
        int d = s->divs[i];
        if (m % d != 0 || !pow_reaches(d, left, m))
            continue;
        /* Prune by the best spread so far: at the top the smallest factor
         * is at most m's k-th root, below it at most d. */
        if (s->found) {
            int spread = s->best[0] - s->best[s->k - 1];
            if (depth == 0 && d - s->root > spread)
                break;
            if (depth > 0 && s->cur[0] - d > spread)
                continue;
        }
        s->cur[depth] = d;
        dims_dfs(s, m / d, depth + 1, d);
    }
}

/* Fills out[0..k) (non-increasing); false when out of memory. */
static bool balanced(int m, int k, int *out)
{
    /* The divisors up to sqrt(m); those above are m / these. */
    int n = 0, cap = 0, *small = NULL;
    for (long long d = 1; d * d <= m; d++) {
        if (m % d)
            continue;
        if (n == cap) {
            int *a = realloc(small, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(int));
            if (!a) {
                free(small);
                return false;
            }
            small = a;
        }
        small[n++] = (int)d;
    }
    int nd = 2 * n - ((long long)small[n - 1] * small[n - 1] == m);
    int *all = malloc(((size_t)nd + 2 * (size_t)k) * sizeof(int));
    if (!all) {
        free(small);
        return false;
    }
    for (int i = 0; i < nd; i++)
        all[i] = i < n ? small[i] : m / small[nd - 1 - i];
    free(small);
    dims_search_t s = {.divs = all, .ndivs = nd, .k = k, .cur = all + nd,
                       .best = all + nd + k, .root = 1};
    while (k > 1 && !pow_reaches(s.root + 1, k, (long long)m + 1))
        s.root++;
    dims_dfs(&s, m, 0, m);
    memcpy(out, s.best, (size_t)k * sizeof(int));
    free(all);
    return true;
}

static int dims_check(int nnodes, int ndims, const int dims[], int *fixed, int *nfree)
{
    if (nnodes <= 0)
        return obj_errf(MPI_ERR_ARG, "invalid nnodes %d (must be positive)", nnodes);
    if (ndims < 0)
        return obj_errf(MPI_ERR_DIMS, "invalid ndims %d", ndims);
    if (ndims > 0 && !dims)
        return obj_errf(MPI_ERR_ARG, "argument 'dims' must not be NULL");
    long long prod = 1;
    *nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return obj_errf(MPI_ERR_DIMS, "dims[%d] = %d is negative", i, dims[i]);
        if (dims[i] == 0)
            (*nfree)++;
        else if ((prod *= dims[i]) > nnodes)
            break;
    }
    if (prod > nnodes || nnodes % prod != 0 || (*nfree == 0 && prod != nnodes))
        return obj_errf(MPI_ERR_DIMS, "%d processes cannot be arranged with the dimensions "
                        "given (the fixed ones multiply to %lld)", nnodes, prod);
    *fixed = (int)prod;
    return MPI_SUCCESS;
}

int obj_topo_dims_create(int nnodes, int ndims, int dims[])
{
    int fixed = 1, nfree = 0;
    int rc = dims_check(nnodes, ndims, dims, &fixed, &nfree);
    if (rc != MPI_SUCCESS || nfree == 0)
        return rc;
    int *f = malloc((size_t)nfree * sizeof(int));
    if (!f)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (!balanced(nnodes / fixed, nfree, f)) {
        free(f);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}
