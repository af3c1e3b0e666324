/*
 * osc: one-sided communication (MPI-4.1 chapter 12).
 *
 * WINDOWS.  The front end (mpi/win.c, mpi/rma.c) checks the arguments and
 * calls osc_win_create, then the operations below.  osc_win_create
 * duplicates the communicator (the window's collectives and messages stay
 * apart from the user's), exchanges every rank's size, displacement unit
 * and base (an allgather), records the window under the duplicate's
 * context id (the same at every rank: messages name their window by it),
 * and picks the component with the highest priority that accepts the
 * window (osc_components[]).  The component fills w->ops and w->mod.
 *
 * EPOCHS.  osc_base checks the synchronisation state the standard
 * requires before calling a component (MPI_ERR_RMA_SYNC with a message
 * naming the call), and the target range where the origin knows the
 * target's size (MPI_ERR_RMA_RANGE): a component sees only valid calls.
 *
 * COMPONENTS.  am (osc/am/): active messages over the btls, every flavor and
 * transport; see docs/architecture.md "One-sided communication".
 */
#ifndef OSC_OSC_H
#define OSC_OSC_H

#include <stdbool.h>
#include <stdint.h>
#include "obj/comm.h"
#include "obj/datatype.h"
#include "obj/group.h"
#include "obj/op.h"
#include "obj/request.h"
#include "obj/win.h"

typedef struct osc_win osc_win_t;

/* One component's operations on a window.  Every target is a rank of the
 * window's communicator (never MPI_PROC_NULL: the front end drops those);
 * req is NULL for the plain forms, else receives a request completed at
 * local completion (MPI_Rput ...). */
typedef struct osc_ops {
    int (*free)(osc_win_t *w);
    int (*put)(osc_win_t *w, const void *obuf, MPI_Count ocount, obj_datatype_t *odt, int target,
               MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt, obj_request_t **req);
    int (*get)(osc_win_t *w, void *obuf, MPI_Count ocount, obj_datatype_t *odt, int target,
               MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt, obj_request_t **req);
    int (*accumulate)(osc_win_t *w, const void *obuf, MPI_Count ocount, obj_datatype_t *odt,
                      int target, MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt,
                      obj_op_t *op, obj_request_t **req);
    /* result may be NULL-count (rcount 0) only with MPI_NO_OP semantics
     * decided by the caller; compare is non-NULL for compare_and_swap. */
    int (*get_accumulate)(osc_win_t *w, const void *obuf, MPI_Count ocount, obj_datatype_t *odt,
                          void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, int target,
                          MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt, obj_op_t *op,
                          obj_request_t **req);
    int (*compare_and_swap)(osc_win_t *w, const void *obuf, const void *cbuf, void *rbuf,
                            obj_datatype_t *dt, int target, MPI_Aint disp);
    int (*fence)(osc_win_t *w, int assert);
    int (*post)(osc_win_t *w, const int *ranks, int n, int assert);
    int (*start)(osc_win_t *w, const int *ranks, int n, int assert);
    int (*complete)(osc_win_t *w);
    int (*wait)(osc_win_t *w, bool block, int *flag);
    int (*lock)(osc_win_t *w, int type, int target, int assert);
    int (*unlock)(osc_win_t *w, int target);
    int (*lock_all)(osc_win_t *w, int assert);
    int (*unlock_all)(osc_win_t *w);
    int (*flush)(osc_win_t *w, int target);      /* target -1: all */
    int (*flush_local)(osc_win_t *w, int target);
    int (*sync)(osc_win_t *w);
} osc_ops_t;

typedef struct osc_component {
    const char *name;
    /* Priority for this window (after the exchange), or -1 to decline. */
    int (*query)(osc_win_t *w);
    /* Set w->ops and w->mod. */
    int (*attach)(osc_win_t *w);
} osc_component_t;

/* Attached memory of a dynamic window. */
typedef struct osc_region {
    uintptr_t base;
    size_t len;
} osc_region_t;

/* Access epoch of the origin side (osc_base checks these). */
enum { OSC_EPOCH_NONE, OSC_EPOCH_FENCE, OSC_EPOCH_LOCK_ALL };

struct osc_win {
    obj_win_t *win;
    obj_comm_t *comm;         /* private duplicate */
    int rank, size;
    int *world;               /* world rank of each window rank */
    MPI_Aint *sizes;          /* every rank's window size */
    MPI_Aint *units;          /* every rank's displacement unit */
    uintptr_t *bases;         /* every rank's base (its own address space) */
    bool all_local;           /* every rank on this node */
    /* Hints (info). */
    bool no_locks;
    bool same_size, same_disp_unit;
    unsigned acc_ordering;    /* OSC_ORDER_* bits */
    /* Synchronisation state (osc_base). */
    int epoch;                /* OSC_EPOCH_* */
    bool fence_ops;           /* operations issued since the last fence */
    uint8_t *locked;          /* per target: 0, MPI_LOCK_SHARED/EXCLUSIVE-300 */
    int n_locked;
    uint8_t *started;         /* per target: in the access group of MPI_Win_start */
    int n_started;
    bool posted;              /* an exposure epoch (MPI_Win_post) is open */
    /* Dynamic windows: attached regions. */
    osc_region_t *regions;
    int n_regions, cap_regions;
    /* Shared windows: the segment. */
    void *shm_base;
    size_t shm_len;
    char shm_name[64];
    const osc_ops_t *ops;
    const osc_component_t *component;
    void *mod;
};

enum { OSC_ORDER_RAR = 1, OSC_ORDER_RAW = 2, OSC_ORDER_WAR = 4, OSC_ORDER_WAW = 8 };

/* Parameters, MPI_Init (after coll_init: the btl tags), MPI_Finalize. */
int osc_register_params(void);
int osc_init(void);
int osc_finalize(void);

/* The window of a context id (NULL: none here). */
osc_win_t *osc_win_lookup(uint32_t id);

/* Build the one-sided state of win over comm: base/size/disp_unit are the
 * local ones (base NULL for dynamic; allocate/allocate_shared allocate it
 * and set win->base).  Collective. */
int osc_win_create(obj_win_t *win, obj_comm_t *comm, obj_info_t *info);
/* Take it down (collective: a barrier first). */
int osc_win_free(obj_win_t *win);

/* Synchronisation-checked entry points (osc_base.c, osc_sync.c). */
int osc_check_access(osc_win_t *w, int target, const char *what);
int osc_check_range(osc_win_t *w, int target, MPI_Aint disp, MPI_Count count,
                    obj_datatype_t *dt, const char *what);

int osc_fence(osc_win_t *w, int assert);
int osc_post(osc_win_t *w, obj_group_t *g, int assert);
int osc_start(osc_win_t *w, obj_group_t *g, int assert);
int osc_complete(osc_win_t *w);
int osc_wait(osc_win_t *w, bool block, int *flag);
int osc_lock(osc_win_t *w, int type, int target, int assert);
int osc_unlock(osc_win_t *w, int target);
int osc_lock_all(osc_win_t *w, int assert);
int osc_unlock_all(osc_win_t *w);
int osc_flush(osc_win_t *w, int target, bool local);
int osc_attach(osc_win_t *w, void *base, MPI_Aint size);
int osc_detach(osc_win_t *w, const void *base);
/* Address of [addr, addr+len) at this (target) process of a dynamic
 * window, or false when no attached region holds it. */
bool osc_region_holds(osc_win_t *w, uintptr_t addr, size_t len);

/* Hints: read from info at creation, and by MPI_Win_set_info. */
int osc_info_apply(osc_win_t *w, const obj_info_t *info);

extern int osc_verbose;

#endif
