/* Status queries and updates: Get_count, Get_elements, Status_set_*,
 * Status_get_* (MPI-4.1), Test_cancelled. */
#include "mpi/p2p.h"
#include "base/dt.h"

int mpii_get_count(const MPI_Status *status, obj_datatype_t *datatype, MPI_Count *count)
{
    MPI_Count bytes = obj_status_get_bytes(status);
    if (datatype->size == 0)
        *count = 0;
    else if (bytes % datatype->size != 0)
        *count = MPI_UNDEFINED;
    else
        *count = bytes / datatype->size;
    return MPI_SUCCESS;
}

static int get_elements(const MPI_Status *status, obj_datatype_t *datatype, MPI_Count *count)
{
    MPI_Count bytes = obj_status_get_bytes(status);
    if (datatype->size == 0 || bytes == 0) {
        *count = 0;
        return MPI_SUCCESS;
    }
    bool exact = true;
    int64_t n = rail_dt_get_elements(datatype->layout, (int64_t)bytes, &exact);
    *count = exact ? (MPI_Count)n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int mpii_get_elements(const MPI_Status *status, obj_datatype_t *datatype, MPI_Count *count)
{
    return get_elements(status, datatype, count);
}

int mpii_get_elements_x(const MPI_Status *status, obj_datatype_t *datatype, MPI_Count *count)
{
    return get_elements(status, datatype, count);
}

/* Bytes of the first `count` basic elements of a stream of datatype. */
static int bytes_of_elements(obj_datatype_t *datatype, MPI_Count count, MPI_Count *bytes)
{
    struct rail_dt *dt = datatype->layout;
    int64_t per = rail_dt_nelem(dt);
    if (count < 0)
        return obj_errf(MPI_ERR_COUNT, "invalid element count %lld", (long long)count);
    if (per <= 0 || datatype->size == 0) {
        *bytes = 0;
        return MPI_SUCCESS;
    }
    MPI_Count whole = count / per, rest = count % per;
    *bytes = whole * datatype->size;
    if (rest == 0)
        return MPI_SUCCESS;
    /* Walk the type signature for the remaining basic elements. */
    struct rail_dt_sig_iter it;
    int rc = rail_dt_sig_init(&it, dt, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    const struct rail_dt *leaf;
    int64_t n;
    while (rest > 0 && rail_dt_sig_next(&it, &leaf, &n)) {
        int64_t le = RAIL_MAX(rail_dt_nelem(leaf), (int64_t)1);
        int64_t take = RAIL_MIN(n, rest / le);
        *bytes += take * rail_dt_size(leaf);
        rest -= take * le;
        if (take < n && rest > 0) {
            /* Part of a pair element (MINLOC/MAXLOC kinds): its first member. */
            *bytes += rail_dt_size(leaf) / le * rest;
            rest = 0;
        }
    }
    rail_dt_sig_fini(&it);
    return MPI_SUCCESS;
}

int mpii_status_set_elements(MPI_Status *status, obj_datatype_t *datatype, MPI_Count count)
{
    MPI_Count bytes;
    int rc = bytes_of_elements(datatype, count, &bytes);
    if (rc == MPI_SUCCESS)
        obj_status_set_bytes(status, bytes);
    return rc;
}

int mpii_status_set_elements_x(MPI_Status *status, obj_datatype_t *datatype, MPI_Count count)
{
    return mpii_status_set_elements(status, datatype, count);
}

int mpii_status_set_cancelled(MPI_Status *status, int flag)
{
    obj_status_set_cancelled(status, flag);
    return MPI_SUCCESS;
}

int mpii_test_cancelled(const MPI_Status *status, int *flag)
{
    *flag = obj_status_get_cancelled(status);
    return MPI_SUCCESS;
}

int mpii_status_get_source(MPI_Status *status, int *source)
{
    *source = status->MPI_SOURCE;
    return MPI_SUCCESS;
}

int mpii_status_set_source(MPI_Status *status, int source)
{
    status->MPI_SOURCE = source;
    return MPI_SUCCESS;
}

int mpii_status_get_tag(MPI_Status *status, int *tag)
{
    *tag = status->MPI_TAG;
    return MPI_SUCCESS;
}

int mpii_status_set_tag(MPI_Status *status, int tag)
{
    status->MPI_TAG = tag;
    return MPI_SUCCESS;
}

int mpii_status_get_error(MPI_Status *status, int *error)
{
    *error = status->MPI_ERROR;
    return MPI_SUCCESS;
}

int mpii_status_set_error(MPI_Status *status, int error)
{
    status->MPI_ERROR = error;
    return MPI_SUCCESS;
}
