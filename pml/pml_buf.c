/*
 * User buffers as packed byte streams: contiguous host memory is touched
 * directly; noncontiguous layouts go through the datatype engine's cursor;
 * device memory (checked once per request, only when a device component is
 * active) is reached only through accel_copy.
 */
#include "pml/pml_internal.h"
#include "accel/accel.h"
#include "accel/accel_dt.h"
#include "base/copy.h"

#include <string.h>

static int buf_accel_copy(void *dst, const void *src, size_t len, void *ctx)
{
    return accel_copy(dst, src, len, NULL);
}

int pml_buf_init(pml_buf_t *b, const void *buf, MPI_Count count, obj_datatype_t *dt)
{
    struct rail_dt *layout = dt->layout;
    b->base = (uintptr_t)buf;
    b->count = count;
    b->bytes = (size_t)(dt->size * count);
    b->cursor_ready = 0;
    b->layout = NULL;
    b->contig = b->bytes ? rail_dt_contig_ptr(layout, count, buf) : (char *)(uintptr_t)buf;
    b->device = 0;
    if (RAIL_UNLIKELY(accel_any_device_active) && b->bytes) {
        b->probe = b->contig ? b->contig
                             : (const void *)((uintptr_t)buf + (uintptr_t)dt->true_lb);
        b->device = accel_memory_type(b->probe) != ACCEL_MEM_HOST;
    }
    if (!b->contig)
        b->layout = rail_dt_retain(layout);
    return MPI_SUCCESS;
}

void pml_buf_fini(pml_buf_t *b)
{
    if (b->layout) {
        rail_dt_release(b->layout);
        b->layout = NULL;
    }
    b->cursor_ready = 0;
}

static int buf_cursor_at(pml_buf_t *b, size_t off)
{
    if (!b->cursor_ready) {
        int rc = rail_dt_cursor_init(&b->cur, b->layout, b->count, (const void *)b->base);
        if (rc != MPI_SUCCESS)
            return rc;
        if (b->device)
            rail_dt_cursor_set_copy(&b->cur, buf_accel_copy, NULL);
        b->cursor_ready = 1;
    }
    if (rail_dt_cursor_pos(&b->cur) != off)
        rail_dt_cursor_seek(&b->cur, off);
    return MPI_SUCCESS;
}

int pml_buf_pack(pml_buf_t *b, size_t off, void *dst, size_t len)
{
    if (RAIL_LIKELY(b->contig != NULL)) {
        if (RAIL_LIKELY(!b->device)) {
            rail_copy(dst, b->contig + off, len);
            return MPI_SUCCESS;
        }
        return accel_copy(dst, b->contig + off, len, NULL);
    }
    int rc = buf_cursor_at(b, off);
    if (rc != MPI_SUCCESS)
        return rc;
    /* device pieces gathered on the device, then one copy */
    size_t n = b->device ? accel_dt_pack(&b->cur, dst, len, b->probe)
                         : rail_dt_pack(&b->cur, dst, len);
    if (n != len)
        return rail_dt_cursor_status(&b->cur) ? rail_dt_cursor_status(&b->cur) : MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

int pml_buf_unpack_any(pml_buf_t *b, size_t off, const void *src, size_t len)
{
    if (RAIL_LIKELY(b->contig != NULL)) {
        if (RAIL_LIKELY(!b->device)) {
            rail_copy(b->contig + off, src, len);
            return MPI_SUCCESS;
        }
        return accel_copy(b->contig + off, src, len, NULL);
    }
    int rc = buf_cursor_at(b, off);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t n = b->device ? accel_dt_unpack(&b->cur, src, len, b->probe)
                         : rail_dt_unpack(&b->cur, src, len);
    if (n != len)
        return rail_dt_cursor_status(&b->cur) ? rail_dt_cursor_status(&b->cur) : MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

size_t pml_buf_iov(pml_buf_t *b, size_t off, struct iovec *iov, int max_iov, size_t max_bytes,
                   int *n_iov)
{
    *n_iov = 0;
    if (max_iov < 1 || off >= b->bytes)
        return 0;
    if (b->contig) {
        size_t len = RAIL_MIN(max_bytes, b->bytes - off);
        iov[0].iov_base = b->contig + off;
        iov[0].iov_len = len;
        *n_iov = 1;
        return len;
    }
    if (buf_cursor_at(b, off) != MPI_SUCCESS)
        return 0;
    return rail_dt_cursor_iov(&b->cur, iov, max_iov, max_bytes, n_iov);
}

int pml_buf_pack_cb(void *ctx, void *dst, size_t len)
{
    pml_request_t *r = ctx;
    int rc = pml_buf_pack(&r->buf, r->offset, dst, len);
    if (rc == MPI_SUCCESS)
        r->offset += len;
    return rc;
}
