/*
 * MPI objects behind handles.
 *
 * mpi.h declares every handle as a pointer to an incomplete struct
 * (typedef struct MPI_ABI_Comm *MPI_Comm), as the MPI-5 standard ABI does.
 * Inside the library that struct is the object itself, so a handle made by
 * the library is the object's address.  Predefined handles are small
 * constants (the ABI numbering, all below OBJ_PREDEF_MAX); they index
 * obj_predef_table, which holds the address of the predefined object or NULL
 * for the *_NULL handles.
 *
 * Every object starts with obj_t; its kind tag is checked on every
 * lookup, so a freed or foreign handle gives the right MPI_ERR_* class with a
 * message instead of undefined behaviour (as far as reading the tag is safe).
 */
#ifndef OBJ_OBJ_H
#define OBJ_OBJ_H

#include <stdint.h>
#include <mpi.h>
#include "base/rail.h"

#define OBJ_PREDEF_MAX 0x1000

typedef enum {
    OBJ_FREED = 0,
    OBJ_COMM = 0x636f6d6d,       /* 'comm' */
    OBJ_DATATYPE = 0x74797065,   /* 'type' */
    OBJ_GROUP = 0x67727570,      /* 'grup' */
    OBJ_OP = 0x6f702020,         /* 'op  ' */
    OBJ_INFO = 0x696e666f,       /* 'info' */
    OBJ_ERRHANDLER = 0x65727268, /* 'errh' */
    OBJ_REQUEST = 0x72657173,    /* 'reqs' */
    OBJ_MESSAGE = 0x6d657367,    /* 'mesg' */
    OBJ_WIN = 0x77696e20,        /* 'win ' */
    OBJ_FILE = 0x66696c65,       /* 'file' */
    OBJ_SESSION = 0x73657373,    /* 'sess' */
} obj_kind_t;

typedef struct obj {
    uint32_t kind;       /* obj_kind_t; OBJ_FREED once released */
    int32_t refcount;    /* atomic; predefined objects never drop to 0 */
    void *handle;        /* what the user sees: the constant, or the address */
} obj_t;

/* Object types: the struct behind each handle. */
typedef struct MPI_ABI_Comm obj_comm_t;
typedef struct MPI_ABI_Datatype obj_datatype_t;
typedef struct MPI_ABI_Group obj_group_t;
typedef struct MPI_ABI_Op obj_op_t;
typedef struct MPI_ABI_Info obj_info_t;
typedef struct MPI_ABI_Errhandler obj_errhandler_t;
typedef struct MPI_ABI_Request obj_request_t;
typedef struct MPI_ABI_Message obj_message_t;
typedef struct MPI_ABI_Win obj_win_t;
typedef struct MPI_ABI_File obj_file_t;
typedef struct MPI_ABI_Session obj_session_t;

extern obj_t *obj_predef_table[OBJ_PREDEF_MAX];

static inline obj_t *obj_of_handle(const void *h)
{
    uintptr_t v = (uintptr_t)h;
    if (v < OBJ_PREDEF_MAX)
        return obj_predef_table[v];
    return (obj_t *)(uintptr_t)h;
}

/* Set up a new object's header (refcount 1, handle = its address) and count
 * it as live; obj_fini marks it freed (later lookups report a freed
 * handle) and uncounts it.  Every object made with obj_init must go
 * through obj_fini before its memory is released. */
void obj_init(obj_t *obj, obj_kind_t kind);
void obj_fini(obj_t *obj);
/* Fortran values of handles (obj/handle_f2c.c): a library-made handle gets
 * OBJ_PREDEF_MAX + an index at its first conversion; f2c of a value that
 * names nothing of the kind gives the kind's null handle.  obj_fini drops
 * an object's index (obj_handle_forget). */
MPI_Fint obj_handle_c2f(obj_kind_t kind, const void *handle);
void *obj_handle_f2c(obj_kind_t kind, MPI_Fint f);
void obj_handle_forget(obj_t *obj);
/* Live objects of a kind (MPIX_Live_objects). */
int obj_live(obj_kind_t kind);
/* Register the live-object counts as MPI_T performance variables
 * (mpi_live_<kind>). */
int obj_register_pvars(void);
/* Register a predefined object under its constant handle. */
void obj_init_predef(obj_t *obj, obj_kind_t kind, const void *handle);

/* Report a failed lookup: sets the detail message, returns the kind's class. */
int obj_lookup_error(obj_kind_t kind, const void *h, int allow_null);

/*
 * mpi_<kind>_lookup(handle, &obj): the object behind a valid, non-null
 * handle, else the kind's error class (MPI_ERR_COMM, MPI_ERR_TYPE, ...) with
 * a detail message set.  mpi_<kind>_lookup_null also accepts the null handle
 * and yields obj == NULL for it.
 */
#define OBJ_LOOKUP_FNS(name, Handle, type, KIND, NULLH)                            \
    static inline int obj_##name##_lookup(Handle h, type **out)                   \
    {                                                                             \
        obj_t *o = obj_of_handle((const void *)h);                        \
        if (RAIL_UNLIKELY(o == NULL || o->kind != (KIND))) {                       \
            *out = NULL;                                                          \
            return obj_lookup_error((KIND), (const void *)h, 0);              \
        }                                                                         \
        *out = (type *)o;                                                         \
        return MPI_SUCCESS;                                                       \
    }                                                                             \
    static inline int obj_##name##_lookup_null(Handle h, type **out)              \
    {                                                                             \
        obj_t *o = obj_of_handle((const void *)h);                        \
        if (h == (NULLH)) {                                                       \
            *out = NULL;                                                          \
            return MPI_SUCCESS;                                                   \
        }                                                                         \
        if (RAIL_UNLIKELY(o == NULL || o->kind != (KIND))) {                       \
            *out = NULL;                                                          \
            return obj_lookup_error((KIND), (const void *)h, 1);              \
        }                                                                         \
        *out = (type *)o;                                                         \
        return MPI_SUCCESS;                                                       \
    }                                                                             \
    static inline Handle obj_##name##_handle(const type *obj)                     \
    {                                                                             \
        return obj ? (Handle)((const obj_t *)obj)->handle : (NULLH);          \
    }

OBJ_LOOKUP_FNS(comm, MPI_Comm, obj_comm_t, OBJ_COMM, MPI_COMM_NULL)
OBJ_LOOKUP_FNS(datatype, MPI_Datatype, obj_datatype_t, OBJ_DATATYPE, MPI_DATATYPE_NULL)
OBJ_LOOKUP_FNS(group, MPI_Group, obj_group_t, OBJ_GROUP, MPI_GROUP_NULL)
OBJ_LOOKUP_FNS(op, MPI_Op, obj_op_t, OBJ_OP, MPI_OP_NULL)
OBJ_LOOKUP_FNS(info, MPI_Info, obj_info_t, OBJ_INFO, MPI_INFO_NULL)
OBJ_LOOKUP_FNS(errhandler, MPI_Errhandler, obj_errhandler_t, OBJ_ERRHANDLER, MPI_ERRHANDLER_NULL)
OBJ_LOOKUP_FNS(request, MPI_Request, obj_request_t, OBJ_REQUEST, MPI_REQUEST_NULL)
OBJ_LOOKUP_FNS(message, MPI_Message, obj_message_t, OBJ_MESSAGE, MPI_MESSAGE_NULL)
OBJ_LOOKUP_FNS(win, MPI_Win, obj_win_t, OBJ_WIN, MPI_WIN_NULL)
OBJ_LOOKUP_FNS(file, MPI_File, obj_file_t, OBJ_FILE, MPI_FILE_NULL)
OBJ_LOOKUP_FNS(session, MPI_Session, obj_session_t, OBJ_SESSION, MPI_SESSION_NULL)

#endif
