/*
 * Datatype engine: whole-buffer pack, unpack and type-to-type copy.
 */
#include "base/dt_impl.h"
#include <string.h>

#define DT_COPY_IOV 32

static int dt_cursor_open(struct rail_dt_cursor *c, const struct rail_dt *dt, int64_t count,
                          const void *buf, rail_dt_copy_fn copy, void *ctx)
{
    int rc = rail_dt_cursor_init(c, dt, count, buf);
    if (rc == MPI_SUCCESS)
        rail_dt_cursor_set_copy(c, copy, ctx);
    return rc;
}

int rail_dt_pack_all_cb(const struct rail_dt *dt, int64_t count, const void *buf, void *dst,
                        size_t dst_size, size_t *done, rail_dt_copy_fn copy, void *ctx)
{
    struct rail_dt_cursor c;
    int rc = dt_cursor_open(&c, dt, count, buf, copy, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t n = rail_dt_pack(&c, dst, dst_size);
    if (done)
        *done = n;
    if (c.status != MPI_SUCCESS)
        return c.status;
    return n < c.total ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

int rail_dt_unpack_all_cb(const struct rail_dt *dt, int64_t count, void *buf, const void *src,
                          size_t src_size, size_t *done, rail_dt_copy_fn copy, void *ctx)
{
    struct rail_dt_cursor c;
    int rc = dt_cursor_open(&c, dt, count, buf, copy, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t n = rail_dt_unpack(&c, src, src_size);
    if (done)
        *done = n;
    if (c.status != MPI_SUCCESS)
        return c.status;
    return src_size > c.total ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

int rail_dt_pack_all(const struct rail_dt *dt, int64_t count, const void *buf, void *dst,
                     size_t dst_size, size_t *done)
{
    return rail_dt_pack_all_cb(dt, count, buf, dst, dst_size, done, NULL, NULL);
}

int rail_dt_unpack_all(const struct rail_dt *dt, int64_t count, void *buf, const void *src,
                       size_t src_size, size_t *done)
{
    return rail_dt_unpack_all_cb(dt, count, buf, src, src_size, done, NULL, NULL);
}

/* n bytes from cursor s to cursor d: pieces of s unpacked into d. */
static int dt_copy_pieces(struct rail_dt_cursor *d, struct rail_dt_cursor *s, size_t n)
{
    struct iovec iov[DT_COPY_IOV];
    int k;
    for (size_t done = 0; done < n;) {
        done += rail_dt_cursor_iov(s, iov, DT_COPY_IOV, n - done, &k);
        for (int j = 0; j < k; j++) {
            rail_dt_unpack(d, iov[j].iov_base, iov[j].iov_len);
            if (d->status != MPI_SUCCESS)
                return d->status;
        }
    }
    return MPI_SUCCESS;
}

static int dt_copy_flat(void *dst, const void *src, size_t n, rail_dt_copy_fn copy, void *ctx)
{
    if (copy)
        return n ? copy(dst, src, n, ctx) : MPI_SUCCESS;
    memmove(dst, src, n);
    return MPI_SUCCESS;
}

int rail_dt_copy_cb(const struct rail_dt *dst_dt, int64_t dst_count, void *dst_buf,
                    const struct rail_dt *src_dt, int64_t src_count, const void *src_buf,
                    rail_dt_copy_fn copy, void *ctx)
{
    struct rail_dt_cursor d, s;
    int rc = dt_cursor_open(&d, dst_dt, dst_count, dst_buf, copy, ctx);
    if (rc == MPI_SUCCESS)
        rc = dt_cursor_open(&s, src_dt, src_count, src_buf, copy, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t n = RAIL_MIN(d.total, s.total);
    void *dp = rail_dt_contig_ptr(dst_dt, dst_count, dst_buf);
    const void *sp = rail_dt_contig_ptr(src_dt, src_count, src_buf);
    if (dp && sp)
        rc = dt_copy_flat(dp, sp, n, copy, ctx);
    else if (sp)
        rc = rail_dt_unpack(&d, sp, n) == n ? MPI_SUCCESS : d.status;
    else if (dp)
        rc = rail_dt_pack(&s, dp, n) == n ? MPI_SUCCESS : s.status;
    else
        rc = dt_copy_pieces(&d, &s, n);
    if (rc == MPI_SUCCESS && s.total > d.total)
        rc = MPI_ERR_TRUNCATE;
    return rc;
}

int rail_dt_copy(const struct rail_dt *dst_dt, int64_t dst_count, void *dst_buf,
                 const struct rail_dt *src_dt, int64_t src_count, const void *src_buf)
{
    return rail_dt_copy_cb(dst_dt, dst_count, dst_buf, src_dt, src_count, src_buf, NULL, NULL);
}
