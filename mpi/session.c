/*
 * MPI_Session_*, MPI_Group_from_session_pset, MPI_Comm_create_from_group on
 * the sessions of obj/session.c.
 *
 * A session takes a reference on the library core (mpi_env_core_up), so
 * sessions and the World model may be open at once, in any order.
 */
#include "mpi/mpi_err.h"
#include "mpi/mpi_env.h"
#include "obj/comm.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "obj/session.h"
#include "mpi/binding/gen/mpi_impl.h"
#include "base/atomic.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ init / finalize */

int mpii_session_init(obj_info_t *info, obj_errhandler_t *errhandler, MPI_Session *session)
{
    int level;
    int rc = obj_session_level(info, &level);
    if (rc != MPI_SUCCESS)
        return rc;
    if (errhandler->for_kind != OBJ_EH_FOR_ANY && errhandler->for_kind != OBJ_EH_FOR_SESSION)
        return obj_errf(MPI_ERR_ARG, "the errhandler was not created for sessions");
    if ((rc = mpi_env_core_up(level)) != MPI_SUCCESS)
        return obj_errf(rc, "the run-time environment could not be set up");
    obj_session_t *s = NULL;
    if ((rc = obj_session_new(info, errhandler, level, &s)) != MPI_SUCCESS) {
        mpi_env_core_down();
        return rc;
    }
    rail_atomic_add_fetch(&mpi_env.sessions, 1);
    mpi_env_update_ready();
    *session = obj_session_handle(s);
    return MPI_SUCCESS;
}

int mpii_session_finalize(MPI_Session *session)
{
    obj_session_t *s = NULL;
    int rc = obj_session_lookup(*session, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_session_free(s);
    *session = MPI_SESSION_NULL;
    rail_atomic_sub_fetch(&mpi_env.sessions, 1);
    rc = mpi_env_core_down();
    mpi_env_update_ready();
    return rc;
}

int mpii_session_get_info(obj_session_t *session, MPI_Info *info_used)
{
    obj_info_t *i;
    int rc = obj_session_info(session, &i);
    if (rc == MPI_SUCCESS)
        *info_used = obj_info_handle(i);
    return rc;
}

/* ------------------------------------------------------------ process sets */

int mpii_session_get_num_psets(obj_session_t *session, obj_info_t *info, int *npset_names)
{
    *npset_names = OBJ_SESSION_PSETS;
    return MPI_SUCCESS;
}

int mpii_session_get_nth_pset(obj_session_t *session, obj_info_t *info, int n, int *pset_len,
                              char *pset_name)
{
    const char *name = obj_session_pset_name(n);
    if (!name)
        return obj_errf(MPI_ERR_ARG, "invalid process set index %d (there are %d)", n,
                        OBJ_SESSION_PSETS);
    int len = (int)strlen(name) + 1;
    /* pset_len 0 asks for the length only (pset_name may be NULL). */
    if (*pset_len > 0 && !pset_name)
        return obj_errf(MPI_ERR_ARG, "pset_name is NULL with pset_len %d", *pset_len);
    if (*pset_len > 0)
        snprintf(pset_name, (size_t)*pset_len, "%s", name);
    else if (*pset_len < 0)
        return obj_errf(MPI_ERR_ARG, "negative pset_len %d", *pset_len);
    *pset_len = len;
    return MPI_SUCCESS;
}

int mpii_session_get_pset_info(obj_session_t *session, const char *pset_name, MPI_Info *info)
{
    int i;
    int rc = obj_session_pset(pset_name, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    obj_info_t *inf = obj_info_new();
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", obj_session_pset_size(i));
    if (!inf || obj_info_set_value(inf, "mpi_size", buf) != MPI_SUCCESS) {
        obj_info_release(inf);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    *info = obj_info_handle(inf);
    return MPI_SUCCESS;
}

int mpii_group_from_session_pset(obj_session_t *session, const char *pset_name,
                                 MPI_Group *newgroup)
{
    int i;
    obj_group_t *g;
    int rc = obj_session_pset(pset_name, &i);
    if (rc == MPI_SUCCESS)
        rc = obj_session_pset_group(session, i, &g);
    if (rc == MPI_SUCCESS)
        *newgroup = obj_group_handle(g);
    return rc;
}

/* ------------------------------------------------------------ communicators */

int mpii_comm_create_from_group(obj_group_t *group, const char *stringtag, obj_info_t *info,
                                obj_errhandler_t *errhandler, MPI_Comm *newcomm)
{
    if (!stringtag)
        return obj_errf(MPI_ERR_ARG, "stringtag must not be NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return obj_errf(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1 (%d)",
                        MPI_MAX_STRINGTAG_LEN - 1);
    obj_comm_t *c = NULL;
    int rc = obj_comm_create_from_group(group, stringtag, info, errhandler, &c);
    if (rc == MPI_SUCCESS)
        *newcomm = obj_comm_handle(c);
    return rc;
}
