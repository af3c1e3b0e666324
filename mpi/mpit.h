/*
 * The MPI tool information interface (MPI-4.1 chapter 15), MPI_T_*.
 *
 *   control variables   = the parameter registry (base/param.h), one cvar per
 *                         parameter, same index; writes go through
 *                         rail_param_set (origin "MPI_T").  mpit_cvar.c
 *   performance vars    the performance-variable registry (base/pvar.h),
 *                         one pvar per variable, same index; each component
 *                         registers its own.  mpit_pvar.c
 *   categories          one per framework prefix of the names ("btl",
 *                         "coll", "mpi", ...), a subcategory per component
 *                         ("btl_sm", "coll_tuned"), derived from the names
 *                         as parameters appear.  mpit_category.c
 *   enums               a boolean enum, and one per string parameter with
 *                         fixed choices ("a|b|c").  mpit_enum.c
 *   events              none (legal); one source, the process clock.
 *                         mpit_event.c
 *
 * Every MPI_T function returns MPI_SUCCESS or an MPI_T_ERR_* class and never
 * calls an errhandler.  All state is behind one mutex, so the interface is
 * thread safe (MPI_T_init_thread provides what is asked).  Handles are small
 * integers with a generation (mpit_table_t), so a stale or foreign handle is
 * reported as MPI_T_ERR_INVALID_HANDLE instead of being dereferenced.
 */
#ifndef MPI_MPIT_H
#define MPI_MPIT_H

#include "base/rail.h"
#include <stdint.h>

/* ------------------------------------------------------------ state */

/* Take the interface lock; MPI_T_ERR_NOT_INITIALIZED (lock not held) when
 * MPI_T_init_thread has not been called. */
int mpit_enter(void);
void mpit_exit(void);

/* Body of an MPI_T function: run expr under the lock, return its code. */
#define MPIT_LOCKED(expr)                                                                          \
    do {                                                                                           \
        int mpit_rc_ = mpit_enter();                                                               \
        if (mpit_rc_ == MPI_SUCCESS) {                                                             \
            mpit_rc_ = (expr);                                                                     \
            mpit_exit();                                                                           \
        }                                                                                          \
        return mpit_rc_;                                                                           \
    } while (0)

/* MPI-4.1 15.3.3: copy at most *len - 1 characters of s and a NUL into buf
 * (nothing when buf is NULL or *len <= 0); *len becomes strlen(s) + 1.
 * Nothing at all when len is NULL. */
void mpit_copy_string(const char *s, char *buf, int *len);

/* Parameter level 1..9 -> MPI_T_VERBOSITY_{USER,TUNER,MPIDEV}_{BASIC,DETAIL,ALL}. */
int mpit_verbosity(int level);

/* ------------------------------------------------------------ handle tables */

/* Objects behind integer handles: handle = generation << 20 | (slot + 1),
 * never 0 (the null handles) nor 1 (MPI_T_PVAR_ALL_HANDLES). */
typedef struct mpit_table {
    void **obj;        /* NULL: free slot */
    uint16_t *gen;
    int n, cap;
} mpit_table_t;

/* 0 when out of memory or slots. */
uintptr_t mpit_table_add(mpit_table_t *t, void *obj);
/* A zeroed object of size bytes in t: its handle in *handle and the object
 * returned, or NULL with *rc = MPI_T_ERR_MEMORY or full_rc (no free slot). */
void *mpit_table_new(mpit_table_t *t, size_t size, int full_rc, uintptr_t *handle, int *rc);
/* The object of a live handle, else NULL. */
void *mpit_table_get(const mpit_table_t *t, uintptr_t h);
void mpit_table_remove(mpit_table_t *t, uintptr_t h);
/* Handle of slot i when occupied, else 0 (to iterate). */
uintptr_t mpit_table_handle_at(const mpit_table_t *t, int i);

/* ------------------------------------------------------------ enums */

/* Enum of a parameter's values: the boolean enum, one of its choices, or
 * MPI_T_ENUM_NULL. */
MPI_T_enum mpit_enum_of_param(int param_index);
/* Number of choices in "a|b|c"; the k-th as (start, length). */
int mpit_choice_count(const char *choices);
bool mpit_choice_at(const char *choices, int k, const char **start, int *len);
/* Index of value among choices, or -1. */
int mpit_choice_find(const char *choices, const char *value);

/* ------------------------------------------------------------ variables */

/* Last MPI_T_finalize: free every handle and session. */
void mpit_cvar_release_all(void);
void mpit_pvar_release_all(void);

#endif
