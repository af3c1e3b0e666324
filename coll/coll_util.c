/* Helpers shared by the collective components (see coll_util.h). */
#include "coll/coll_util.h"
#include "accel/accel.h"
#include "accel/accel_dt.h"
#include "base/copy.h"
#include "base/dt.h"
#include "obj/err.h"
#include "pml/pml.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ datatypes */

obj_datatype_t *coll_byte_type(void)
{
    return obj_datatype_predef(MPI_BYTE);
}

/* ------------------------------------------------------------ buffers */

bool coll_is_device_any(const void *buf, MPI_Count count, const obj_datatype_t *dt)
{
    if (count == 0 || buf == MPI_IN_PLACE || dt == NULL || dt->size == 0)
        return false;
    return accel_is_device((const char *)buf + dt->true_lb);
}

int coll_copy(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
              MPI_Count rcount, obj_datatype_t *rdt)
{
    if (scount == 0 || sdt->size == 0)
        return MPI_SUCCESS;
    bool dev = coll_is_device(sbuf, scount, sdt) || coll_is_device(rbuf, rcount, rdt);
    return coll_copy_as(sbuf, scount, sdt, rbuf, rcount, rdt, dev);
}

int coll_copy_as(const void *sbuf, MPI_Count scount, obj_datatype_t *sdt, void *rbuf,
                 MPI_Count rcount, obj_datatype_t *rdt, bool dev)
{
    int rc;
    if (scount == 0 || sdt->size == 0)
        return MPI_SUCCESS;
    /* both contiguous host buffers (the common case, and every temporary
     * of a reduction): one copy, no datatype cursor */
    const void *sp = dev ? NULL : rail_dt_contig_ptr(sdt->layout, scount, sbuf);
    void *rp = sp ? rail_dt_contig_ptr(rdt->layout, rcount, rbuf) : NULL;
    if (rp && scount * sdt->size <= rcount * rdt->size) {
        rail_copy(rp, sp, (size_t)(scount * sdt->size));
        return MPI_SUCCESS;
    }
    if (dev) {
        /* the pieces queued on one stream, one wait */
        rail_dt_copy_fn cb;
        void *ctx;
        accel_dt_batch_begin(&cb, &ctx);
        rc = rail_dt_copy_cb(rdt->layout, rcount, rbuf, sdt->layout, scount, sbuf, cb, ctx);
        int wrc = accel_dt_batch_end();
        if (rc == MPI_SUCCESS)
            rc = wrc;
    }
    else
        rc = rail_dt_copy(rdt->layout, rcount, rbuf, sdt->layout, scount, sbuf);
    if (rc == MPI_ERR_TRUNCATE)
        return obj_errf(MPI_ERR_TRUNCATE,
                        "local copy of %lld bytes into a buffer of %lld bytes: the send and "
                        "receive type signatures do not match",
                        (long long)(scount * sdt->size), (long long)(rcount * rdt->size));
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "local copy of %lld bytes failed", (long long)(scount * sdt->size));
    return MPI_SUCCESS;
}

void *coll_tmp_alloc(obj_datatype_t *dt, MPI_Count count, bool device, const void *like,
                     void **mem)
{
    MPI_Count lo = 0, hi = 0;
    if (count > 0) {
        MPI_Count last = (count - 1) * dt->extent;
        lo = dt->true_lb + RAIL_MIN(last, 0);
        hi = dt->true_lb + dt->true_extent + RAIL_MAX(last, 0);
        /* whole extents too: reduction kernels read MINLOC/MAXLOC pairs as
         * C structs, padding included */
        lo = RAIL_MIN(lo, dt->lb + RAIL_MIN(last, 0));
        hi = RAIL_MAX(hi, dt->lb + dt->extent + RAIL_MAX(last, 0));
    }
    size_t len = (size_t)(hi - lo) + 1;   /* never 0: a valid address even when empty */
    *mem = device ? accel_alloc_device(len, like) : coll_scratch_get(len);
    if (!*mem)
        return NULL;
    return (char *)*mem - lo;
}

void coll_tmp_free(void *mem, bool device)
{
    if (!mem)
        return;
    if (device)
        accel_free_device(mem);
    else
        coll_scratch_put(mem);
}

/* ------------------------------------------------------------ blocks */

int coll_blocks_make(coll_blocks_t *b, const void *buf, int n, MPI_Count count,
                     const MPI_Count *counts, const MPI_Aint *displs, MPI_Aint stride,
                     obj_datatype_t *dt)
{
    size_t m = (size_t)n + 1;
    char *mem = malloc(m * (sizeof(MPI_Count) + sizeof(MPI_Aint) + sizeof(obj_datatype_t *)));
    *b = (coll_blocks_t){ buf, NULL, NULL, NULL, mem };
    if (!mem)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %d block descriptions", n);
    MPI_Count *c = (MPI_Count *)mem;
    MPI_Aint *d = (MPI_Aint *)(mem + m * sizeof(MPI_Count));
    obj_datatype_t **t = (obj_datatype_t **)(mem + m * (sizeof(MPI_Count) + sizeof(MPI_Aint)));
    for (int i = 0; i < n; i++) {
        c[i] = counts ? counts[i] : count;
        d[i] = (displs ? displs[i] : (MPI_Aint)i * stride) * dt->extent;
        t[i] = dt;
    }
    b->counts = c;
    b->displs = d;
    b->dts = t;
    return MPI_SUCCESS;
}

void coll_blocks_free(coll_blocks_t *b)
{
    free(b->mem);
    *b = (coll_blocks_t){ 0 };
}

/* ------------------------------------------------------------ neighbourhoods */

int coll_topo(const obj_comm_t *comm, const obj_topo_t **t)
{
    *t = comm->topo;
    if (!*t)
        return obj_errf(MPI_ERR_TOPOLOGY, "neighbourhood collectives need a communicator with a "
                        "process topology (MPI_Cart_create, MPI_Graph_create, "
                        "MPI_Dist_graph_create)");
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ requests */

void coll_reqs_init(coll_reqs_t *b)
{
    b->n = 0;
    b->send_flags = 0;
    b->cap = (int)RAIL_ARRAY_SIZE(b->inl);
    b->r = b->inl;
    b->want = b->want_inl;
    b->check = false;
}

static int reqs_grow(coll_reqs_t *b)
{
    if (b->n < b->cap)
        return MPI_SUCCESS;
    int cap = b->cap * 2;
    obj_request_t **r = malloc((size_t)cap * sizeof(*r));
    size_t *want = malloc((size_t)cap * sizeof(*want));
    if (!r || !want) {
        free(r);
        free(want);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for %d requests", cap);
    }
    memcpy(r, b->r, (size_t)b->n * sizeof(*r));
    memcpy(want, b->want, (size_t)b->n * sizeof(*want));
    if (b->r != b->inl) {
        free(b->r);
        free(b->want);
    }
    b->r = r;
    b->want = want;
    b->cap = cap;
    return MPI_SUCCESS;
}

int coll_reqs_isend(coll_reqs_t *b, const void *buf, MPI_Count count, obj_datatype_t *dt, int peer,
                    int tag, obj_comm_t *comm)
{
    int rc = reqs_grow(b);
    if (rc == MPI_SUCCESS)
        rc = pml_isend(buf, count, dt, peer, tag, PML_SEND_STANDARD, comm,
                       PML_COLL | b->send_flags, &b->r[b->n]);
    if (rc == MPI_SUCCESS)
        b->want[b->n++] = SIZE_MAX;
    return rc;
}

int coll_reqs_irecv(coll_reqs_t *b, void *buf, MPI_Count count, obj_datatype_t *dt, int peer,
                    int tag, obj_comm_t *comm)
{
    int rc = reqs_grow(b);
    if (rc == MPI_SUCCESS)
        rc = pml_irecv(buf, count, dt, peer, tag, comm, PML_COLL, &b->r[b->n]);
    if (rc == MPI_SUCCESS)
        b->want[b->n++] = SIZE_MAX;
    return rc;
}

int coll_reqs_irecv_all(coll_reqs_t *b, void *buf, MPI_Count count, obj_datatype_t *dt, int peer,
                        int tag, obj_comm_t *comm)
{
    int rc = coll_reqs_irecv(b, buf, count, dt, peer, tag, comm);
    if (rc == MPI_SUCCESS) {
        b->want[b->n - 1] = (size_t)(count * dt->size);
        b->check = true;
    }
    return rc;
}

/* coll_reqs_wait where some receive wants its whole length. */
static int reqs_wait_checked(coll_reqs_t *b)
{
    int rc = MPI_SUCCESS;
    for (int i = 0; i < b->n; i++) {
        obj_req_status_t st = { 0 };
        int e = pml_wait(b->r[i], &st);
        b->r[i] = NULL;
        if (e == MPI_SUCCESS && b->want[i] != SIZE_MAX)
            e = coll_check_length(st.source, (size_t)st.count, b->want[i]);
        if (rc == MPI_SUCCESS)
            rc = e;
    }
    return rc;
}

int coll_recv_error(int rc)
{
    if (rc == MPI_ERR_TRUNCATE)
        return obj_errf(MPI_ERR_TRUNCATE, "a process sent more data than the receive arguments "
                        "of this process hold (type signatures differ)");
    return rc;
}

int coll_reqs_wait(coll_reqs_t *b, int rc)
{
    int wrc = b->check ? reqs_wait_checked(b) : b->n ? pml_waitall(b->n, b->r) : MPI_SUCCESS;
    if (b->r != b->inl) {
        free(b->r);
        free(b->want);
    }
    unsigned flags = b->send_flags;
    coll_reqs_init(b);
    b->send_flags = flags;
    if (rc != MPI_SUCCESS)
        return rc;
    return coll_recv_error(wrc);
}

int coll_send(const void *buf, MPI_Count count, obj_datatype_t *dt, int peer, int tag,
              obj_comm_t *comm)
{
    return pml_send(buf, count, dt, peer, tag, PML_SEND_STANDARD, comm, PML_COLL);
}

int coll_recv(void *buf, MPI_Count count, obj_datatype_t *dt, int peer, int tag, obj_comm_t *comm)
{
    return coll_recv_error(pml_recv(buf, count, dt, peer, tag, comm, PML_COLL, NULL));
}

int coll_check_length(int peer, size_t got, size_t mine)
{
    char who[32] = "the root";
    if (got == mine)
        return MPI_SUCCESS;
    if (peer >= 0)
        snprintf(who, sizeof(who), "process %d", peer);
    return obj_errf(got > mine ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                    "%s sent %zu bytes, this process's arguments %s %zu (type signatures "
                    "differ)", who, got, got > mine ? "hold" : "expect", mine);
}

int coll_recv_all(void *buf, MPI_Count count, obj_datatype_t *dt, int peer, int tag,
                  obj_comm_t *comm)
{
    obj_req_status_t st = { 0 };
    int rc = coll_recv_error(pml_recv(buf, count, dt, peer, tag, comm, PML_COLL, &st));
    return rc != MPI_SUCCESS ? rc
                             : coll_check_length(peer, (size_t)st.count, (size_t)(count * dt->size));
}

/* ------------------------------------------------------------ reductions */

int coll_red_init(coll_red_t *r, obj_op_t *op, obj_datatype_t *dt, MPI_Count count,
                  const void *b1, const void *b2)
{
    int rc = obj_op_check_datatype(op, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    *r = (coll_red_t){ .op = op, .rop = op->op, .udt = dt, .count = count, .rdt = dt,
                       .factor = 1 };
    if (r->rop == RAIL_OP_NONE)
        return MPI_SUCCESS;   /* user function: host temporaries in dt's layout */
    r->rdt = dt->basic;
    r->factor = dt->size ? dt->size / dt->basic->size : 0;
    if (coll_is_device(b1, count, dt))
        r->like = (const char *)b1 + dt->true_lb;
    else if (coll_is_device(b2, count, dt))
        r->like = (const char *)b2 + dt->true_lb;
    r->device = r->like != NULL;
    return MPI_SUCCESS;
}

void *coll_red_tmp(const coll_red_t *r, MPI_Count n, void **mem)
{
    return coll_tmp_alloc(r->rdt, n * r->factor, r->device, r->like, mem);
}

void coll_red_tmp_free(const coll_red_t *r, void *mem)
{
    coll_tmp_free(mem, r->device);
}

int coll_red_load(const coll_red_t *r, void *tmp, const void *ubuf, MPI_Count n)
{
    return coll_copy(ubuf, n, r->udt, tmp, n * r->factor, r->rdt);
}

int coll_red_store(const coll_red_t *r, void *ubuf, const void *tmp, MPI_Count n)
{
    return coll_copy(tmp, n * r->factor, r->rdt, ubuf, n, r->udt);
}

int coll_red_apply(const coll_red_t *r, const void *in, void *inout, MPI_Count n)
{
    MPI_Count m = n * r->factor;
    if (m == 0)
        return MPI_SUCCESS;
    if (r->rop == RAIL_OP_NONE || r->rdt->kind == RAIL_TK_NONE)
        return obj_op_reduce(r->op, r->rdt, in, inout, m);   /* user function; complex pairs */
    int rc = accel_reduce(r->rop, (rail_typekind_t)r->rdt->kind, in, inout, (size_t)m, NULL);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "reduction %s on %lld elements of %s failed", rail_op_name(r->rop),
                        (long long)m, r->rdt->name);
    return MPI_SUCCESS;
}
