/*
 * Datatypes over device memory in few device round trips (accel_dt.h).
 */
#include "accel/accel_dt.h"
#include "accel/accel.h"

#include <pthread.h>

/* One stream for all staged datatype work of the process, created at first
 * use and destroyed at accel_finalize; the lock serialises its users
 * (MPI_THREAD_MULTIPLE). */
static pthread_mutex_t dt_lock = PTHREAD_MUTEX_INITIALIZER;
static accel_stream_t *dt_stream;

static int dt_queue_copy(void *dst, const void *src, size_t len, void *ctx)
{
    return accel_copy(dst, src, len, (accel_stream_t *)ctx);
}

/* Lock; the stream, or NULL when none can be made (copies synchronous). */
static accel_stream_t *dt_enter(void)
{
    pthread_mutex_lock(&dt_lock);
    if (dt_stream == NULL && accel_stream_create(&dt_stream) != MPI_SUCCESS)
        dt_stream = NULL;
    return dt_stream;
}

/* Wait for the queued copies, unlock; the first failure. */
static int dt_leave(int rc)
{
    int src = dt_stream != NULL ? accel_stream_sync(dt_stream) : MPI_SUCCESS;
    pthread_mutex_unlock(&dt_lock);
    return rc != MPI_SUCCESS ? rc : src;
}

void accel_dt_fini(void)
{
    pthread_mutex_lock(&dt_lock);
    if (dt_stream != NULL)
        accel_stream_destroy(dt_stream);
    dt_stream = NULL;
    pthread_mutex_unlock(&dt_lock);
}

static size_t dt_move(struct rail_dt_cursor *cur, void *host, size_t max, const void *like,
                      bool pack)
{
    size_t len = RAIL_MIN(max, rail_dt_cursor_left(cur));
    rail_dt_copy_fn copy = cur->copy;
    void *ctx = cur->copy_ctx;
    void *stage = len > 0 ? accel_alloc_device(len, like) : NULL;
    if (stage == NULL)
        return pack ? rail_dt_pack(cur, host, max) : rail_dt_unpack(cur, host, max);
    int rc = MPI_SUCCESS;
    size_t n = 0;
    accel_stream_t *s = dt_enter();
    rail_dt_cursor_set_copy(cur, dt_queue_copy, s);
    if (pack) {
        n = rail_dt_pack(cur, stage, len);
        if (cur->status == MPI_SUCCESS && n > 0)
            rc = accel_copy(host, stage, n, s);
    } else {
        rc = accel_copy(stage, host, len, s);
        if (rc == MPI_SUCCESS)
            n = rail_dt_unpack(cur, stage, len);
    }
    rc = dt_leave(rc);
    rail_dt_cursor_set_copy(cur, copy, ctx);
    if (rc != MPI_SUCCESS && cur->status == MPI_SUCCESS)
        cur->status = rc;
    accel_free_device(stage);
    return n;
}

size_t accel_dt_pack(struct rail_dt_cursor *cur, void *dst, size_t max_bytes, const void *like)
{
    return dt_move(cur, dst, max_bytes, like, true);
}

size_t accel_dt_unpack(struct rail_dt_cursor *cur, const void *src, size_t bytes, const void *like)
{
    return dt_move(cur, (void *)src, bytes, like, false);
}

void accel_dt_batch_begin(rail_dt_copy_fn *copy, void **ctx)
{
    *copy = dt_queue_copy;
    *ctx = dt_enter();
}

int accel_dt_batch_end(void)
{
    return dt_leave(MPI_SUCCESS);
}
