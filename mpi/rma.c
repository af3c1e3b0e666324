/* MPI_Put, MPI_Get, MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op,
 * MPI_Compare_and_swap and the request forms: checks that need the window
 * (target rank, epoch, range, datatype signatures, operation), then the
 * window's one-sided component (osc/). */
#include "mpi/mpi_err.h"
#include "obj/request.h"
#include "osc/osc.h"
#include "mpi/binding/gen/mpi_impl.h"

#define RMA_SKIP 1   /* target MPI_PROC_NULL: nothing to do */

static int rma_target(osc_win_t *w, int target, bool request, const char *what)
{
    if (target == MPI_PROC_NULL)
        return RMA_SKIP;
    if (target < 0 || target >= w->size)
        return obj_errf(MPI_ERR_RANK, "invalid target rank %d (window of %d ranks)", target,
                        w->size);
    if (request && w->epoch != OSC_EPOCH_LOCK_ALL && !w->locked[target])
        return obj_errf(MPI_ERR_RMA_SYNC, "request-based operations need a passive-target "
                        "epoch (lock or lock_all) on rank %d", target);
    return osc_check_access(w, target, what);
}

static int rma_same_bytes(MPI_Count oc, obj_datatype_t *odt, MPI_Count tc, obj_datatype_t *tdt,
                          const char *what)
{
    if (oc * odt->size != tc * tdt->size)
        return obj_errf(MPI_ERR_TYPE, "origin (%lld bytes) and target (%lld bytes) type "
                        "signatures differ", (long long)(oc * odt->size),
                        (long long)(tc * tdt->size));
    return MPI_SUCCESS;
}

static int rma_acc_types(obj_op_t *op, obj_datatype_t *odt, obj_datatype_t *tdt,
                         const char *what)
{
    int rc = obj_op_check_accumulate(op, tdt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!tdt->basic)
        return obj_errf(MPI_ERR_TYPE, "the target datatype must be made of one predefined "
                        "type");
    if (odt && obj_op_handle(op) != MPI_NO_OP && odt->basic != tdt->basic && odt->size > 0)
        return obj_errf(MPI_ERR_TYPE, "origin and target datatypes are made of different "
                        "predefined types");
    return MPI_SUCCESS;
}

/* An operation with nothing to move: its request (if any) is complete. */
static int rma_done(MPI_Request *request)
{
    obj_request_t *req;
    obj_req_status_t st;
    if (!request)
        return MPI_SUCCESS;
    obj_req_status_empty(&st);
    int rc = obj_request_new_complete(&st, false, &req);
    if (rc == MPI_SUCCESS)
        *request = (MPI_Request)req->obj.handle;
    return rc;
}

/* Put and get share everything but the direction. */
static int rma_putget(bool put, void *obuf, MPI_Count oc, obj_datatype_t *odt, int target,
                      MPI_Aint disp, MPI_Count tc, obj_datatype_t *tdt, obj_win_t *win,
                      MPI_Request *request, const char *what)
{
    osc_win_t *w = win->osc;
    obj_request_t *req = NULL;
    int rc = rma_target(w, target, request != NULL, what);
    if (rc == RMA_SKIP)
        goto skip;
    RAIL_CHECK(rc);
    RAIL_CHECK(rma_same_bytes(oc, odt, tc, tdt, what));
    RAIL_CHECK(osc_check_range(w, target, disp, tc, tdt, what));
    rc = put ? w->ops->put(w, obuf, oc, odt, target, disp, tc, tdt, request ? &req : NULL)
             : w->ops->get(w, obuf, oc, odt, target, disp, tc, tdt, request ? &req : NULL);
    if (rc == MPI_SUCCESS && request)
        *request = (MPI_Request)req->obj.handle;
    return rc;
skip:
    return rma_done(request);
fail:
    return rc;
}

int mpii_put(const void *origin_addr, MPI_Count origin_count, obj_datatype_t *origin_datatype,
             int target_rank, MPI_Aint target_disp, MPI_Count target_count,
             obj_datatype_t *target_datatype, obj_win_t *win)
{
    return rma_putget(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win, NULL, "MPI_Put");
}

int mpii_rput(const void *origin_addr, MPI_Count origin_count, obj_datatype_t *origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              obj_datatype_t *target_datatype, obj_win_t *win, MPI_Request *request)
{
    return rma_putget(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win, request, "MPI_Rput");
}

int mpii_get(void *origin_addr, MPI_Count origin_count, obj_datatype_t *origin_datatype,
             int target_rank, MPI_Aint target_disp, MPI_Count target_count,
             obj_datatype_t *target_datatype, obj_win_t *win)
{
    return rma_putget(false, origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win, NULL, "MPI_Get");
}

int mpii_rget(void *origin_addr, MPI_Count origin_count, obj_datatype_t *origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              obj_datatype_t *target_datatype, obj_win_t *win, MPI_Request *request)
{
    return rma_putget(false, origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win, request, "MPI_Rget");
}

/* Accumulate (rbuf NULL) and get_accumulate. */
static int rma_acc(const void *obuf, MPI_Count oc, obj_datatype_t *odt, void *rbuf,
                   MPI_Count rc_, obj_datatype_t *rdt, int target, MPI_Aint disp, MPI_Count tc,
                   obj_datatype_t *tdt, obj_op_t *op, obj_win_t *win, MPI_Request *request,
                   const char *what)
{
    osc_win_t *w = win->osc;
    obj_request_t *req = NULL;
    bool noop = obj_op_handle(op) == MPI_NO_OP;
    int rc = rma_target(w, target, request != NULL, what);
    /* nothing to move (MPI_PROC_NULL, or zero bytes): done at once */
    if (rc == RMA_SKIP || (rc == MPI_SUCCESS && tc * tdt->size == 0 &&
                           (noop || oc * odt->size == 0)))
        return rma_done(request);
    RAIL_CHECK(rc);
    RAIL_CHECK(rma_acc_types(op, noop ? NULL : odt, tdt, what));
    if (!noop || !rbuf)
        RAIL_CHECK(rma_same_bytes(oc, odt, tc, tdt, what));
    if (rbuf)
        RAIL_CHECK(rma_same_bytes(rc_, rdt, tc, tdt, what));
    RAIL_CHECK(osc_check_range(w, target, disp, tc, tdt, what));
    if (rbuf)
        rc = w->ops->get_accumulate(w, obuf, oc, odt, rbuf, rc_, rdt, target, disp, tc, tdt, op,
                                    request ? &req : NULL);
    else
        rc = w->ops->accumulate(w, obuf, oc, odt, target, disp, tc, tdt, op,
                                request ? &req : NULL);
    if (rc == MPI_SUCCESS && request)
        *request = (MPI_Request)req->obj.handle;
fail:
    return rc;
}

int mpii_accumulate(const void *origin_addr, MPI_Count origin_count,
                    obj_datatype_t *origin_datatype, int target_rank, MPI_Aint target_disp,
                    MPI_Count target_count, obj_datatype_t *target_datatype, obj_op_t *op,
                    obj_win_t *win)
{
    return rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank,
                   target_disp, target_count, target_datatype, op, win, NULL, "MPI_Accumulate");
}

int mpii_raccumulate(const void *origin_addr, MPI_Count origin_count,
                     obj_datatype_t *origin_datatype, int target_rank, MPI_Aint target_disp,
                     MPI_Count target_count, obj_datatype_t *target_datatype, obj_op_t *op,
                     obj_win_t *win, MPI_Request *request)
{
    return rma_acc(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank,
                   target_disp, target_count, target_datatype, op, win, request,
                   "MPI_Raccumulate");
}

int mpii_get_accumulate(const void *origin_addr, MPI_Count origin_count,
                        obj_datatype_t *origin_datatype, void *result_addr,
                        MPI_Count result_count, obj_datatype_t *result_datatype, int target_rank,
                        MPI_Aint target_disp, MPI_Count target_count,
                        obj_datatype_t *target_datatype, obj_op_t *op, obj_win_t *win)
{
    return rma_acc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                   result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                   win, NULL, "MPI_Get_accumulate");
}

int mpii_rget_accumulate(const void *origin_addr, MPI_Count origin_count,
                         obj_datatype_t *origin_datatype, void *result_addr,
                         MPI_Count result_count, obj_datatype_t *result_datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                         obj_datatype_t *target_datatype, obj_op_t *op, obj_win_t *win,
                         MPI_Request *request)
{
    return rma_acc(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                   result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                   win, request, "MPI_Rget_accumulate");
}

int mpii_fetch_and_op(const void *origin_addr, void *result_addr, obj_datatype_t *datatype,
                      int target_rank, MPI_Aint target_disp, obj_op_t *op, obj_win_t *win)
{
    if (!datatype->predefined)
        return obj_errf(MPI_ERR_TYPE, "MPI_Fetch_and_op needs a predefined datatype");
    return rma_acc(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp,
                   1, datatype, op, win, NULL, "MPI_Fetch_and_op");
}

int mpii_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          obj_datatype_t *datatype, int target_rank, MPI_Aint target_disp,
                          obj_win_t *win)
{
    osc_win_t *w = win->osc;
    const char *what = "MPI_Compare_and_swap";
    int rc = rma_target(w, target_rank, false, what);
    if (rc == RMA_SKIP)
        return MPI_SUCCESS;
    RAIL_CHECK(rc);
    if (!datatype->predefined || datatype->size == 0 || datatype->size > 16 ||
        !(datatype->opclass & (OPC_C_INT | OPC_F_INT | OPC_LOGICAL | OPC_BYTE | OPC_MULTI)))
        return obj_errf(MPI_ERR_TYPE, "the datatype must be a predefined integer, logical "
                        "or byte type");
    RAIL_CHECK(osc_check_range(w, target_rank, target_disp, 1, datatype, what));
    rc = w->ops->compare_and_swap(w, origin_addr, compare_addr, result_addr, datatype,
                                  target_rank, target_disp);
fail:
    return rc;
}
