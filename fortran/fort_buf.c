/*
 * Choice buffers of mpi_f08: TYPE(*), DIMENSION(..) arrives as a TS 29113
 * descriptor.  A contiguous one is its base address.  A noncontiguous array
 * section is, as MPI-4.1 19.1.12 requires, treated as if it had been copied
 * to a contiguous buffer:
 *  - in a blocking call, it is: packed before the call (input, and output
 *    too, so elements the message does not cover keep their values) and
 *    unpacked after it (output);
 *  - in a call whose buffer stays in use (nonblocking, persistent,
 *    attached), the call gets a datatype that addresses the section's
 *    elements in place: hindexed_block of the user's datatype, when that
 *    datatype's size and extent are the element size and the buffer has a
 *    count and datatype of its own.  Other cases raise MPI_ERR_BUFFER.
 */
#include "fortran/fort_glue.h"

#include <string.h>

static size_t fort_buf_elements(const CFI_cdesc_t *d)
{
    size_t n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= (size_t)d->dim[i].extent;
    return n;
}

/* Byte offset of element k (array element order) from base_addr. */
static ptrdiff_t fort_buf_offset(const CFI_cdesc_t *d, size_t k)
{
    ptrdiff_t off = 0;
    for (int i = 0; i < d->rank; i++) {
        size_t ext = (size_t)d->dim[i].extent;
        off += (ptrdiff_t)(k % ext) * d->dim[i].sm;
        k /= ext;
    }
    return off;
}

static void fort_buf_copy(const CFI_cdesc_t *d, char *packed, int to_packed)
{
    size_t n = fort_buf_elements(d), len = d->elem_len;
    char *base = d->base_addr;
    for (size_t k = 0; k < n; k++) {
        char *e = base + fort_buf_offset(d, k);
        if (to_packed)
            memcpy(packed + k * len, e, len);
        else
            memcpy(e, packed + k * len, len);
    }
}

/* A datatype for the first `count` elements of the section, in place. */
static int fort_buf_section_type(fort_buf_t *b, const CFI_cdesc_t *d)
{
    MPI_Count size = 0, lb = 0, extent = 0;
    if (b->count < 0 || b->type == MPI_DATATYPE_NULL ||
        PMPI_Type_size_c(b->type, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_c(b->type, &lb, &extent) != MPI_SUCCESS ||
        size != (MPI_Count)d->elem_len || extent != size || lb != 0 ||
        (size_t)b->count > fort_buf_elements(d))
        return MPI_ERR_BUFFER;
    MPI_Count n = b->count;
    MPI_Count *displs = malloc((size_t)(n > 0 ? n : 1) * sizeof(*displs));
    if (!displs)
        return MPI_ERR_NO_MEM;
    for (MPI_Count k = 0; k < n; k++)
        displs[k] = fort_buf_offset(d, (size_t)k);
    int rc = PMPI_Type_create_hindexed_block_c(n, 1, displs, b->type, &b->made);
    free(displs);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&b->made);
    if (rc == MPI_SUCCESS) {
        b->count = 1;
        b->type = b->made;
    }
    return rc;
}

int fort_buf_begin(fort_buf_t *b, CFI_cdesc_t *d, MPI_Count count, MPI_Datatype type, int mode)
{
    memset(b, 0, sizeof(*b));
    b->desc = d;
    b->mode = mode;
    b->count = count;
    b->type = type;
    b->made = MPI_DATATYPE_NULL;
    b->addr = fort_addr(d->base_addr);
    if (b->addr != d->base_addr || d->rank == 0 || CFI_is_contiguous(d))
        return MPI_SUCCESS;
    if (mode & FORT_RETAINED)
        return fort_buf_section_type(b, d);
    b->tmp = malloc(fort_buf_elements(d) * d->elem_len + 1);
    if (!b->tmp)
        return MPI_ERR_NO_MEM;
    fort_buf_copy(d, b->tmp, 1);
    b->addr = b->tmp;
    return MPI_SUCCESS;
}

void fort_buf_end(fort_buf_t *b, int rc)
{
    if (!b->desc)
        return;    /* an earlier argument failed: never begun */
    if (b->tmp) {
        if (rc == MPI_SUCCESS && (b->mode & FORT_OUT))
            fort_buf_copy(b->desc, b->tmp, 0);
        free(b->tmp);
        b->tmp = NULL;
    }
    /* A pending operation keeps its own reference to the datatype. */
    if (b->made != MPI_DATATYPE_NULL)
        PMPI_Type_free(&b->made);
}
