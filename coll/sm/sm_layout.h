/*
 * coll sm: the layout of a communicator's segment (sm_layout.c), for
 * sm_segment.c, which makes the segment and writes the layout into its
 * header.
 */
#ifndef COLL_SM_SM_LAYOUT_H
#define COLL_SM_SM_LAYOUT_H

#include "coll/sm/coll_sm.h"

/* A segment's layout for n processes (coll_sm.h, SEGMENT: offsets from
 * the base). */
typedef struct coll_sm_layout {
    size_t size;                   /* bytes in all */
    size_t chunk;                  /* bytes of one buffer */
    size_t ctl_off, slot_off, bulk_off, data_off;
    size_t slot_size, bulk_size;   /* data bytes of a slot, of a bulk slot (0: none) */
    int sets, nbuf;                /* buffer sets, buffers per area */
    int slots, slots_start;        /* slots per process, in use at first (GROWTH) */
    int bulk_slots;                /* bulk slots per process */
    bool nofence;                  /* coll_sm_membarrier asks for no fence (WAITING) */
} coll_sm_layout_t;

/* The layout of a segment the creator makes now for n processes, from the
 * parameters, the node's oversubscription and the room in /dev/shm. */
void coll_sm_layout_plan(int n, coll_sm_layout_t *l);
/* Bytes from one slot of slot_size data bytes to the next. */
size_t coll_sm_slot_stride(size_t slot_size);
/* Bytes from one bulk slot of bulk_size data bytes to the next. */
size_t coll_sm_bulk_stride(size_t bulk_size);
/* Where the first `slots` slots of each of n processes end. */
size_t coll_sm_slots_end(size_t slot_off, int n, int slots, size_t slot_size);

#endif
