/* Cartesian topologies: MPI_Cart_create, _shift, _sub, _map.  Ranks are
 * row-major in the coordinates (the last dimension varies fastest);
 * reorder is ignored (the identity). */
#include "obj/comm_int.h"
#include "obj/topo.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

void obj_topo_cart_coords(const obj_topo_t *t, int rank, int coords[])
{
    for (int d = t->u.cart.ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->u.cart.dims[d];
        rank /= t->u.cart.dims[d];
    }
}

int obj_topo_cart_rank(const obj_topo_t *t, const int coords[], int *rank)
{
    int r = 0;
    for (int d = 0; d < t->u.cart.ndims; d++) {
        int n = t->u.cart.dims[d], c = coords[d];
        if (t->u.cart.periods[d])
            c = ((c % n) + n) % n;
        else if (c < 0 || c >= n)
            return obj_errf(MPI_ERR_RANK, "coordinate %d out of range 0..%d in non-periodic "
                            "dimension %d", coords[d], n - 1, d);
        r = r * n + c;
    }
    *rank = r;
    return MPI_SUCCESS;
}

/* Rank at displacement disp along dimension d from coords (PROC_NULL off a
 * non-periodic edge). */
static int cart_neighbor(const obj_topo_t *t, const int *coords, int d, int disp)
{
    int save = coords[d], n = t->u.cart.dims[d], r;
    int c = save + disp;
    if (!t->u.cart.periods[d] && (c < 0 || c >= n))
        return MPI_PROC_NULL;
    int *cc = (int *)coords;
    cc[d] = c;
    obj_topo_cart_rank(t, cc, &r);
    cc[d] = save;
    return r;
}

/* Validate dims / periods; *total the number of processes of the grid. */
static int cart_check(int ndims, const int dims[], const int periods[], int size, int *total)
{
    if (ndims < 0)
        return obj_errf(MPI_ERR_DIMS, "invalid ndims %d", ndims);
    if (ndims > 0 && (!dims || !periods))
        return obj_errf(MPI_ERR_ARG, "dims and periods must not be NULL");
    long long p = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return obj_errf(MPI_ERR_DIMS, "dims[%d] = %d (must be positive)", d, dims[d]);
        if ((p *= dims[d]) > size)
            return obj_errf(MPI_ERR_ARG, "a grid of more than %d processes does not fit in a "
                            "communicator of %d", size, size);
    }
    *total = (int)p;
    return MPI_SUCCESS;
}

static int cart_fill(obj_topo_t *t, int rank)
{
    int n = t->u.cart.ndims;
    t->in = malloc((size_t)RAIL_MAX(2 * n, 1) * sizeof(int));
    t->u.cart.coords = malloc((size_t)RAIL_MAX(n, 1) * sizeof(int));
    if (!t->in || !t->u.cart.coords)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_topo_cart_coords(t, rank, t->u.cart.coords);
    for (int d = 0; d < n; d++) {
        t->in[2 * d] = cart_neighbor(t, t->u.cart.coords, d, -1);
        t->in[2 * d + 1] = cart_neighbor(t, t->u.cart.coords, d, 1);
    }
    t->out = t->in;
    t->in_shared = true;
    t->indegree = t->outdegree = 2 * n;
    return MPI_SUCCESS;
}

int topo_cart_attach(obj_comm_t *c, int ndims, const int dims[], const int periods[])
{
    obj_topo_t *t = calloc(1, sizeof(*t));
    if (!t)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    t->kind = MPI_CART;
    t->u.cart.ndims = ndims;
    bool ok = true;
    t->u.cart.dims = topo_dup_ints(dims, ndims, &ok);
    t->u.cart.periods = calloc((size_t)RAIL_MAX(ndims, 1), sizeof(int));
    for (int d = 0; t->u.cart.periods && d < ndims; d++)
        t->u.cart.periods[d] = periods[d] ? 1 : 0;
    int rc = ok && t->u.cart.periods ? cart_fill(t, c->rank)
                                     : obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc != MPI_SUCCESS) {
        obj_topo_free(t);
        return rc;
    }
    obj_topo_free(c->topo);
    c->topo = t;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ the front end's calls */

int obj_topo_cart_create(obj_comm_t *comm_old, int ndims, const int dims[], const int periods[],
                         obj_comm_t **out)
{
    if (comm_old->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Cart_create needs an intracommunicator");
    int total;
    int rc = cart_check(ndims, dims, periods, comm_old->size, &total);
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS)
        rc = topo_comm_first(comm_old, total, &c);
    if (rc == MPI_SUCCESS && c && (rc = topo_cart_attach(c, ndims, dims, periods)))
        obj_comm_release(c);
    *out = rc == MPI_SUCCESS ? c : NULL;
    return rc;
}

void obj_topo_cart_shift(const obj_topo_t *t, int direction, int disp, int *rank_source,
                         int *rank_dest)
{
    /* Large displacements: reduce first so that coords + disp cannot overflow. */
    int n = t->u.cart.dims[direction];
    long long dd = disp;
    if (t->u.cart.periods[direction])
        dd %= n;
    else if (dd > n || dd < -n)
        dd = dd > 0 ? n : -n;
    *rank_source = cart_neighbor(t, t->u.cart.coords, direction, (int)-dd);
    *rank_dest = cart_neighbor(t, t->u.cart.coords, direction, (int)dd);
}

/* Color (coordinates in the dropped dimensions) and key (in the kept ones). */
static void sub_color_key(const obj_topo_t *t, const int remain[], int *color, int *key)
{
    *color = 0;
    *key = 0;
    for (int d = 0; d < t->u.cart.ndims; d++) {
        int *v = remain[d] ? key : color;
        *v = *v * t->u.cart.dims[d] + t->u.cart.coords[d];
    }
}

int obj_topo_cart_sub(obj_comm_t *comm, const int remain_dims[], obj_comm_t **out)
{
    const obj_topo_t *t;
    int rc = obj_topo_of(comm, MPI_CART, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    int n = t->u.cart.ndims, k = 0, color, key;
    if (n > 0 && !remain_dims)
        return obj_errf(MPI_ERR_ARG, "argument 'remain_dims' must not be NULL");
    int *dims = malloc((size_t)RAIL_MAX(n, 1) * sizeof(int));
    int *periods = malloc((size_t)RAIL_MAX(n, 1) * sizeof(int));
    if (!dims || !periods) {
        free(dims);
        free(periods);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    for (int d = 0; d < n; d++) {
        if (remain_dims[d]) {
            dims[k] = t->u.cart.dims[d];
            periods[k++] = t->u.cart.periods[d];
        }
    }
    sub_color_key(t, remain_dims, &color, &key);
    obj_comm_t *c = NULL;
    rc = obj_comm_split(comm, color, key, &c);
    if (rc == MPI_SUCCESS && (rc = topo_cart_attach(c, k, dims, periods)) != MPI_SUCCESS)
        obj_comm_release(c);
    free(dims);
    free(periods);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

int obj_topo_cart_map(const obj_comm_t *comm, int ndims, const int dims[], const int periods[],
                      int *newrank)
{
    int total;
    int rc = cart_check(ndims, dims, periods, comm->size, &total);
    if (rc == MPI_SUCCESS)
        *newrank = comm->rank < total ? comm->rank : MPI_UNDEFINED;
    return rc;
}
