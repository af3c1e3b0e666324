/*
 * Datatypes over device memory in few device round trips.
 *
 * A noncontiguous type on device memory reaches the datatype engine's
 * pieces one copy at a time (rail_dt_cursor_set_copy); with a synchronous
 * copy per piece, a vector of 1000 blocks costs 1000 waits for the device.
 * These helpers queue the pieces as device-to-device copies on one stream,
 * through a device staging buffer (accel_alloc_device, kept for reuse), and
 * wait once: packing gathers the pieces into the staging buffer and moves
 * it to dst in one copy; unpacking moves src into the staging buffer in one
 * copy and scatters from there.  Only the type's own bytes are written.
 * Without staging memory they fall back to the cursor's own copy function.
 */
#ifndef ACCEL_ACCEL_DT_H
#define ACCEL_ACCEL_DT_H

#include "base/dt.h"

/* Like rail_dt_pack / rail_dt_unpack on a cursor over device memory (like:
 * any device address of the user buffer, for the staging buffer's device).
 * A failure is left in the cursor's status, as with a copy callback. */
size_t accel_dt_pack(struct rail_dt_cursor *cur, void *dst, size_t max_bytes, const void *like);
size_t accel_dt_unpack(struct rail_dt_cursor *cur, const void *src, size_t bytes,
                       const void *like);

/* Copies through the returned callback (for rail_dt_copy_cb and the like)
 * are queued on one stream; accel_dt_batch_end waits for them and returns
 * the first failure.  Calls between begin and end are serialised with
 * other batches. */
void accel_dt_batch_begin(rail_dt_copy_fn *copy, void **ctx);
int accel_dt_batch_end(void);

/* Release the stream (accel_finalize). */
void accel_dt_fini(void);

#endif
