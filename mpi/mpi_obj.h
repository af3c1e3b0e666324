/*
 * MPI objects behind handles.
 *
 * mpi.h declares every handle as a pointer to an incomplete struct
 * (typedef struct MPI_ABI_Comm *MPI_Comm), as the MPI-5 standard ABI does.
 * Inside the library that struct is the object itself, so a handle made by
 * the library is the object's address.  Predefined handles are small
 * constants (the ABI numbering, all below MPI_PREDEF_MAX); they index
 * mpi_predef_table, which holds the address of the predefined object or NULL
 * for the *_NULL handles.
 *
 * Every object starts with mpi_obj_t; its kind tag is checked on every
 * lookup, so a freed or foreign handle gives the right MPI_ERR_* class with a
 * message instead of undefined behaviour (as far as reading the tag is safe).
 */
#ifndef MPI_MPI_OBJ_H
#define MPI_MPI_OBJ_H

#include <stdint.h>
#include <mpi.h>
#include "base/rail.h"

#define MPI_PREDEF_MAX 0x1000

typedef enum {
    MPI_OBJ_FREED = 0,
    MPI_OBJ_COMM = 0x636f6d6d,       /* 'comm' */
    MPI_OBJ_DATATYPE = 0x74797065,   /* 'type' */
    MPI_OBJ_GROUP = 0x67727570,      /* 'grup' */
    MPI_OBJ_OP = 0x6f702020,         /* 'op  ' */
    MPI_OBJ_INFO = 0x696e666f,       /* 'info' */
    MPI_OBJ_ERRHANDLER = 0x65727268, /* 'errh' */
    MPI_OBJ_REQUEST = 0x72657173,    /* 'reqs' */
    MPI_OBJ_MESSAGE = 0x6d657367,    /* 'mesg' */
    MPI_OBJ_WIN = 0x77696e20,        /* 'win ' */
    MPI_OBJ_FILE = 0x66696c65,       /* 'file' */
    MPI_OBJ_SESSION = 0x73657373,    /* 'sess' */
} mpi_obj_kind_t;

typedef struct mpi_obj {
    uint32_t kind;       /* mpi_obj_kind_t; MPI_OBJ_FREED once released */
    int32_t refcount;    /* atomic; predefined objects never drop to 0 */
    void *handle;        /* what the user sees: the constant, or the address */
} mpi_obj_t;

/* Object types: the struct behind each handle. */
typedef struct MPI_ABI_Comm mpi_comm_t;
typedef struct MPI_ABI_Datatype mpi_datatype_t;
typedef struct MPI_ABI_Group mpi_group_t;
typedef struct MPI_ABI_Op mpi_op_t;
typedef struct MPI_ABI_Info mpi_info_t;
typedef struct MPI_ABI_Errhandler mpi_errhandler_t;
typedef struct MPI_ABI_Request mpi_request_t;
typedef struct MPI_ABI_Message mpi_message_t;
typedef struct MPI_ABI_Win mpi_win_t;
typedef struct MPI_ABI_File mpi_file_t;
typedef struct MPI_ABI_Session mpi_session_t;

extern mpi_obj_t *mpi_predef_table[MPI_PREDEF_MAX];

static inline mpi_obj_t *mpi_obj_of_handle(const void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < MPI_PREDEF_MAX)
        return mpi_predef_table[v];
    return (mpi_obj_t *)(uintptr_t)h;
}

/* Set up a new object's header (refcount 1, handle = its address) and count
 * it as live; mpi_obj_fini marks it freed (later lookups report a freed
 * handle) and uncounts it.  Every object made with mpi_obj_init must go
 * through mpi_obj_fini before its memory is released. */
void mpi_obj_init(mpi_obj_t *obj, mpi_obj_kind_t kind);
void mpi_obj_fini(mpi_obj_t *obj);
/* Drop an object's Fortran handle index, if it has one (mpi/handle_f2c.c). */
void mpi_handle_forget(mpi_obj_t *obj);
/* Live objects of a kind (MPIX_Live_objects). */
int mpi_obj_live(mpi_obj_kind_t kind);
/* Register the live-object counts as MPI_T performance variables
 * (mpi_live_<kind>). */
int mpi_obj_register_pvars(void);
/* Register a predefined object under its constant handle. */
void mpi_obj_init_predef(mpi_obj_t *obj, mpi_obj_kind_t kind, const void *handle);

/* Report a failed lookup: sets the detail message, returns the kind's class. */
int mpi_obj_lookup_error(mpi_obj_kind_t kind, const void *h, int allow_null);

/*
 * mpi_<kind>_lookup(handle, &obj): the object behind a valid, non-null
 * handle, else the kind's error class (MPI_ERR_COMM, MPI_ERR_TYPE, ...) with
 * a detail message set.  mpi_<kind>_lookup_null also accepts the null handle
 * and yields obj == NULL for it.
 */
#define MPI_OBJ_LOOKUP_FNS(name, Handle, type, KIND, NULLH)                            \
    static inline int mpi_##name##_lookup(Handle h, type **out)                   \
    {                                                                             \
        mpi_obj_t *o = mpi_obj_of_handle((const void *)h);                        \
        if (RAIL_UNLIKELY(o == NULL || o->kind != (KIND))) {                       \
            *out = NULL;                                                          \
            return mpi_obj_lookup_error((KIND), (const void *)h, 0);              \
        }                                                                         \
        *out = (type *)o;                                                         \
        return MPI_SUCCESS;                                                       \
    }                                                                             \
    static inline int mpi_##name##_lookup_null(Handle h, type **out)              \
    {                                                                             \
        mpi_obj_t *o = mpi_obj_of_handle((const void *)h);                        \
        if (h == (NULLH)) {                                                       \
            *out = NULL;                                                          \
            return MPI_SUCCESS;                                                   \
        }                                                                         \
        if (RAIL_UNLIKELY(o == NULL || o->kind != (KIND))) {                       \
            *out = NULL;                                                          \
            return mpi_obj_lookup_error((KIND), (const void *)h, 1);              \
        }                                                                         \
        *out = (type *)o;                                                         \
        return MPI_SUCCESS;                                                       \
    }                                                                             \
    static inline Handle mpi_##name##_handle(const type *obj)                     \
    {                                                                             \
        return obj ? (Handle)((const mpi_obj_t *)obj)->handle : (NULLH);          \
    }

MPI_OBJ_LOOKUP_FNS(comm, MPI_Comm, mpi_comm_t, MPI_OBJ_COMM, MPI_COMM_NULL)
MPI_OBJ_LOOKUP_FNS(datatype, MPI_Datatype, mpi_datatype_t, MPI_OBJ_DATATYPE, MPI_DATATYPE_NULL)
MPI_OBJ_LOOKUP_FNS(group, MPI_Group, mpi_group_t, MPI_OBJ_GROUP, MPI_GROUP_NULL)
MPI_OBJ_LOOKUP_FNS(op, MPI_Op, mpi_op_t, MPI_OBJ_OP, MPI_OP_NULL)
MPI_OBJ_LOOKUP_FNS(info, MPI_Info, mpi_info_t, MPI_OBJ_INFO, MPI_INFO_NULL)
MPI_OBJ_LOOKUP_FNS(errhandler, MPI_Errhandler, mpi_errhandler_t, MPI_OBJ_ERRHANDLER, MPI_ERRHANDLER_NULL)
MPI_OBJ_LOOKUP_FNS(request, MPI_Request, mpi_request_t, MPI_OBJ_REQUEST, MPI_REQUEST_NULL)
MPI_OBJ_LOOKUP_FNS(message, MPI_Message, mpi_message_t, MPI_OBJ_MESSAGE, MPI_MESSAGE_NULL)
MPI_OBJ_LOOKUP_FNS(win, MPI_Win, mpi_win_t, MPI_OBJ_WIN, MPI_WIN_NULL)
MPI_OBJ_LOOKUP_FNS(file, MPI_File, mpi_file_t, MPI_OBJ_FILE, MPI_FILE_NULL)
MPI_OBJ_LOOKUP_FNS(session, MPI_Session, mpi_session_t, MPI_OBJ_SESSION, MPI_SESSION_NULL)

#endif
