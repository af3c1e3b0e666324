/*
 * accel host component: ordinary host memory.  The base copies and reduces
 * host-only operands itself (memcpy, base/op kernels) without dispatching;
 * these entries exist so the table is complete and the info tool can list
 * the component.
 */
#include "accel/accel_internal.h"

#include <string.h>

static int host_query(int self_index, const char **why)
{
    return MPI_SUCCESS;
}

static int host_copy(void *dst, const accel_range_t *dr, const void *src, const accel_range_t *sr,
                     size_t len, void *stream)
{
    memcpy(dst, src, len);
    return MPI_SUCCESS;
}

static int host_reduce(rail_op_t op, rail_typekind_t tk, const void *in, const accel_range_t *ir,
                       void *inout, const accel_range_t *or_, size_t count, void *stream)
{
    return rail_op_reduce(op, tk, in, inout, count);
}

/* Host work is synchronous: a stream is a placeholder, events are done. */
static char host_queue;

static int host_stream_create(void **s)
{
    *s = &host_queue;
    return MPI_SUCCESS;
}

static int host_nothing(void *s)
{
    return MPI_SUCCESS;
}

static int host_event_record(void **ev, void *s)
{
    *ev = &host_queue;
    return MPI_SUCCESS;
}

const accel_component_t accel_host_component = {
    .name = "host",
    .tag = { 'H', 'O', 'S', 'T' },
    .priority = 0,
    .is_device = false,
    .query = host_query,
    .copy = host_copy,
    .reduce = host_reduce,
    .stream_create = host_stream_create,
    .stream_destroy = host_nothing,
    .stream_sync = host_nothing,
    .event_record = host_event_record,
    .event_query = host_nothing,
    .event_destroy = host_nothing,
};
