/* coll tuned: helpers shared by the algorithms (see tuned_impl.h). */
#include "coll/tuned/tuned_impl.h"
#include "accel/accel.h"
#include "base/dt.h"
#include "pml/pml.h"

#include <stdlib.h>
#include <string.h>

/* exact: a shorter message is MPI_ERR_COUNT */
static int sendrecv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, int dst, void *rbuf,
                    MPI_Count rcount, obj_datatype_t *rdt, int src, int tag, obj_comm_t *comm,
                    bool exact)
{
    obj_request_t *rq[2];
    int rc = pml_irecv(rbuf, rcount, rdt, src, tag, comm, PML_COLL, &rq[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = pml_isend(sbuf, scount, sdt, dst, tag, PML_SEND_STANDARD, comm, PML_COLL, &rq[1]);
    obj_req_status_t st = { 0 };
    int wrc = coll_recv_error(pml_wait(rq[0], &st));   /* nothing left behind */
    if (rc == MPI_SUCCESS)
        rc = pml_wait(rq[1], NULL);
    if (exact && wrc == MPI_SUCCESS)
        wrc = coll_check_length(src, (size_t)st.count, (size_t)(rcount * rdt->size));
    return tuned_first_error(rc, wrc);
}

int tuned_sendrecv(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, int dst, void *rbuf,
                   MPI_Count rcount, obj_datatype_t *rdt, int src, int tag, obj_comm_t *comm)
{
    return sendrecv(sbuf, scount, sdt, dst, rbuf, rcount, rdt, src, tag, comm, false);
}

int tuned_sendrecv_all(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, int dst,
                       void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, int src, int tag,
                       obj_comm_t *comm)
{
    return sendrecv(sbuf, scount, sdt, dst, rbuf, rcount, rdt, src, tag, comm, true);
}

int tuned_memcpy(void *dst, const void *src, size_t n)
{
    if (n == 0 || dst == src)
        return MPI_SUCCESS;
    int rc = accel_copy(dst, src, n, NULL);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "copy of %zu bytes failed", n);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ scratch */

/* Host temporaries come from the framework's cache (coll_scratch_get), so
 * that large ones do not fault in on every call. */
size_t coll_tuned_alltoall_single_copy_min = (size_t)128 << 10;

void *tuned_bytes_alloc(size_t n, bool device, const void *like, void **mem)
{
    *mem = device ? accel_alloc_device(n ? n : 1, like) : coll_scratch_get(n);
    return *mem;
}

void tuned_bytes_free(void *mem, bool device)
{
    if (!mem)
        return;
    if (device)
        accel_free_device(mem);
    else
        coll_scratch_put(mem);
}

/* ------------------------------------------------------------ flat views */

int tuned_flat_begin(tuned_flat_t *f, const void *buf, MPI_Count count, obj_datatype_t *dt,
                     bool load)
{
    *f = (tuned_flat_t){ 0 };
    f->len = (size_t)(count * dt->size);
    char *p = rail_dt_contig_ptr(dt->layout, count, buf);
    if (p) {
        f->p = p;
        return MPI_SUCCESS;
    }
    f->device = coll_is_device(buf, count, dt);
    f->p = tuned_bytes_alloc(f->len, f->device, (const char *)buf + dt->true_lb, &f->mem);
    if (!f->p)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory packing %zu bytes", f->len);
    if (!load)
        return MPI_SUCCESS;
    return coll_copy(buf, count, dt, f->p, (MPI_Count)f->len, coll_byte_type());
}

int tuned_flat_end(tuned_flat_t *f, void *buf, MPI_Count count, obj_datatype_t *dt, bool store)
{
    int rc = MPI_SUCCESS;
    if (f->mem && store)
        rc = coll_copy(f->p, (MPI_Count)f->len, coll_byte_type(), buf, count, dt);
    tuned_bytes_free(f->mem, f->device);
    f->mem = NULL;
    return rc;
}

/* ------------------------------------------------------------ copies */

int tuned_copy(const void *src, void *dst, MPI_Count n, obj_datatype_t *dt)
{
    if (src == dst || n == 0)
        return MPI_SUCCESS;
    if (rail_dt_is_contig(dt->layout, n) && !coll_is_device(src, n, dt) &&
        !coll_is_device(dst, n, dt)) {
        memcpy((char *)dst + dt->true_lb, (const char *)src + dt->true_lb, (size_t)(n * dt->size));
        return MPI_SUCCESS;
    }
    return coll_copy(src, n, dt, dst, n, dt);
}

/* ------------------------------------------------------------ reductions */

/* A user buffer of the reduction as a buffer in the temporaries' layout
 * (same memory kind as the temporaries), or NULL. */
static void *as_temp_layout(const coll_red_t *r, const void *buf)
{
    if (!buf || buf == MPI_IN_PLACE || coll_is_device(buf, r->count, r->udt) != r->device)
        return NULL;
    if (r->rop == RAIL_OP_NONE || r->udt == r->rdt)
        return (void *)buf;   /* temporaries in the user type's own layout */
    if (rail_dt_is_contig(r->rdt->layout, r->count * r->factor))
        return rail_dt_contig_ptr(r->udt->layout, r->count, buf);
    return NULL;
}

/* A temporary of n user elements (n * factor elements of rdt, spanning
 * true_extent + (m-1) * extent, whole extents included: the kernels read
 * MINLOC/MAXLOC pairs as C structs): the address to use with rdt. */
static void *red_alloc(tuned_red_t *t, MPI_Count n, void **mem)
{
    const obj_datatype_t *d = t->r.rdt;
    MPI_Count m = n * t->r.factor, lo = 0, hi = 0;
    if (m > 0) {
        MPI_Count last = (m - 1) * d->extent;
        lo = RAIL_MIN(d->true_lb, d->lb) + RAIL_MIN(last, 0);
        hi = RAIL_MAX(d->true_lb + d->true_extent, d->lb + d->extent) + RAIL_MAX(last, 0);
    }
    char *p = tuned_bytes_alloc((size_t)(hi - lo), t->r.device, t->r.like, mem);
    return p ? p - lo : NULL;
}

/* The receive temporary: on the stack when small and on the host. */
static void *red_tmp(tuned_red_t *t, MPI_Count n)
{
    const obj_datatype_t *d = t->r.rdt;
    if (t->host_kernel && d->lb == 0 && d->true_lb == 0 &&
        (size_t)(n * t->r.factor * d->extent) <= sizeof(t->small))
        return t->small;
    return red_alloc(t, n, &t->tmp_mem);
}

int tuned_red_begin(tuned_red_t *t, obj_op_t *op, obj_datatype_t *dt, MPI_Count count,
                    const void *own, void *res, MPI_Count tmp_count, bool defer)
{
    t->acc = t->tmp = t->acc_mem = t->tmp_mem = t->user_acc = NULL;
    t->src = NULL;
    int rc = coll_red_init(&t->r, op, dt, count, own, res);
    if (rc != MPI_SUCCESS)
        return rc;
    t->host_kernel = !t->r.device && t->r.rop != RAIL_OP_NONE && t->r.rdt->kind != RAIL_TK_NONE;
    t->user_acc = as_temp_layout(&t->r, res);
    if (defer && t->host_kernel && own != res)
        t->src = as_temp_layout(&t->r, own);
    if (t->user_acc) {
        t->acc = t->user_acc;
        if (own && own != res && !t->src)
            rc = tuned_copy(own, res, count, dt);
    } else {
        t->acc = red_alloc(t, count, &t->acc_mem);
        if (!t->acc)
            return obj_errf(MPI_ERR_NO_MEM, "out of memory for a reduction temporary of %lld "
                            "elements", (long long)count);
        if (own && !t->src)
            rc = coll_red_load(&t->r, t->acc, own, count);
    }
    if (rc == MPI_SUCCESS && tmp_count > 0) {
        t->tmp = red_tmp(t, tmp_count);
        if (!t->tmp)
            rc = obj_errf(MPI_ERR_NO_MEM, "out of memory for a reduction temporary of %lld "
                          "elements", (long long)tmp_count);
    }
    if (rc != MPI_SUCCESS)
        tuned_red_end(t, NULL, 0, 0, rc);
    return rc;
}

int tuned_red_end(tuned_red_t *t, void *res, MPI_Count first, MPI_Count n, int rc)
{
    if (rc == MPI_SUCCESS && res && n > 0 && t->acc != t->user_acc)
        rc = coll_red_store(&t->r, res, tuned_red_at(t, t->acc, first), n);
    tuned_bytes_free(t->acc_mem, t->r.device);
    tuned_bytes_free(t->tmp_mem, t->r.device);
    t->acc_mem = t->tmp_mem = NULL;
    return rc;
}

int tuned_red_apply(tuned_red_t *t, const void *in, void *inout, MPI_Count n)
{
    if (t->host_kernel && n > 0)
        return rail_op_reduce(t->r.rop, (rail_typekind_t)t->r.rdt->kind, in, inout,
                              (size_t)(n * t->r.factor));
    return coll_red_apply(&t->r, in, inout, n);
}

int tuned_red_combine(tuned_red_t *t, void *tmp_part, void *acc_part, MPI_Count n, bool lower)
{
    if (lower || t->r.op->commute)
        return tuned_red_apply(t, tmp_part, acc_part, n);
    /* acc = acc op tmp: computed in tmp, copied back (element-wise, so
     * holes of a user buffer serving as acc stay untouched) */
    int rc = tuned_red_apply(t, acc_part, tmp_part, n);
    if (rc == MPI_SUCCESS)
        rc = coll_copy(tmp_part, tuned_red_n(&t->r, n), t->r.rdt, acc_part, tuned_red_n(&t->r, n),
                       t->r.rdt);
    return rc;
}

int tuned_red_first(tuned_red_t *t, void *tmp_part, MPI_Count first, MPI_Count n, bool lower)
{
    void *a = tuned_red_at(t, t->acc, first);
    if (!t->src)
        return tuned_red_combine(t, tmp_part, a, n, lower);
    if (n == 0)
        return MPI_SUCCESS;
    /* predefined operations commute: acc = tmp op own */
    return rail_op_reduce3(t->r.rop, (rail_typekind_t)t->r.rdt->kind, tmp_part,
                           tuned_red_at(t, t->src, first), a, (size_t)(n * t->r.factor));
}

int tuned_red_last(tuned_red_t *t, void *tmp_part, MPI_Count first, MPI_Count n, void *res,
                   bool *stored)
{
    const coll_red_t *r = &t->r;
    void *out = NULL;
    *stored = false;
    if (t->host_kernel && n > 0 && !coll_is_device(res, n, r->udt)) {
        if (r->udt == r->rdt)
            out = res;
        else if (rail_dt_is_contig(r->rdt->layout, n * r->factor))
            out = rail_dt_contig_ptr(r->udt->layout, n, res);
    }
    if (!out)
        return tuned_red_first(t, tmp_part, first, n, true);
    *stored = true;   /* res = tmp op (own data or acc): no copy afterwards */
    return rail_op_reduce3(r->rop, (rail_typekind_t)r->rdt->kind, tmp_part, tuned_red_data(t, first),
                           out, (size_t)(n * r->factor));
}

int tuned_red_xchg(tuned_red_t *t, MPI_Count sfirst, MPI_Count sn, int dst, MPI_Count rn, int src,
                   int tag, obj_comm_t *comm)
{
    const coll_red_t *r = &t->r;
    return tuned_sendrecv_all(tuned_red_data(t, sfirst), tuned_red_n(r, sn), r->rdt, dst, t->tmp,
                              tuned_red_n(r, rn), r->rdt, src, tag, comm);
}
