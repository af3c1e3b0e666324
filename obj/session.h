/*
 * Sessions (MPI-4 chapter 11).  A session holds a reference on the library
 * core (taken by the front end), so sessions and the World model coexist;
 * the process sets it offers are "mpi://WORLD" and "mpi://SELF".
 */
#ifndef OBJ_SESSION_H
#define OBJ_SESSION_H

#include "obj/obj.h"

struct MPI_ABI_Session {
    obj_t obj;
    obj_errhandler_t *errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    obj_info_t *info;         /* the hints given to MPI_Session_init (NULL: none) */
    int thread_level;         /* provided thread support */
};

static inline obj_errhandler_t *obj_session_errhandler(obj_session_t *o) { return o->errhandler; }

/* The thread level the "thread_level" hint asks for (MPI_THREAD_SINGLE
 * without it; MPI_ERR_INFO_VALUE for another value). */
int obj_session_level(const obj_info_t *info, int *level);
/* A session with a copy of the hints, eh (retained) and the thread level
 * the library can provide for level. */
int obj_session_new(const obj_info_t *info, obj_errhandler_t *eh, int level,
                    obj_session_t **out);
void obj_session_free(obj_session_t *s);
/* The session's hints, with the thread level provided. */
int obj_session_info(const obj_session_t *session, obj_info_t **out);

/* Process sets: their number, the name of the n-th (NULL: none), the index
 * of a name (MPI_ERR_ARG for an unknown one), its size, its group. */
#define OBJ_SESSION_PSETS 2
const char *obj_session_pset_name(int n);
int obj_session_pset(const char *name, int *index);
int obj_session_pset_size(int index);
int obj_session_pset_group(obj_session_t *session, int index, obj_group_t **out);

/* MPI_Comm_create_from_group: collective over group's members, on the
 * bootstrap communicator (MPI_ERR_OTHER when MPI is not up). */
int obj_comm_create_from_group(obj_group_t *group, const char *stringtag,
                               const obj_info_t *info, obj_errhandler_t *errhandler,
                               obj_comm_t **out);

#endif
