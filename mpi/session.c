/*
 * Sessions (MPI-4.1 chapter 11): MPI_Session_init / _finalize, process sets,
 * MPI_Group_from_session_pset, MPI_Comm_create_from_group.
 *
 * A session takes a reference on the library core (mpi_env_core_up), so
 * sessions and the World model may be open at once, in any order.
 *
 * Process sets: "mpi://WORLD" (every process of the job) and "mpi://SELF".
 *
 * MPI_Comm_create_from_group has no parent communicator to agree on a
 * context id over.  It runs the usual agreement (comm_ctxid.c) among the
 * group's members on the BOOTSTRAP communicator: a hidden communicator
 * over the whole job with its own reserved context id (2), made with
 * MPI_COMM_WORLD at start-up and never used for anything else.  Its
 * messages are addressed by world rank and tagged with a 30-bit hash of
 * the string tag, so concurrent creations with different tags (which MPI
 * requires of concurrent calls) do not mix; the agreement's priority is
 * the tag's 62-bit hash.  Nothing else is needed: the group says who takes
 * part, the members' world ranks say where to send.
 */
#include "obj/comm_int.h"
#include "mpi/mpi_env.h"
#include "obj/errhandler.h"
#include "obj/info.h"
#include "obj/session.h"
#include "mpi/binding/gen/mpi_impl.h"
#include "base/atomic.h"
#include "base/progress.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
#define N_PSETS 2

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};

/* ------------------------------------------------------------ init / finalize */

/* Requested level from the "thread_level" hint (default MPI_THREAD_SINGLE). */
static int requested_level(const obj_info_t *info, int *level)
{
    const char *v = obj_info_value(info, "thread_level");
    *level = MPI_THREAD_SINGLE;
    if (!v)
        return MPI_SUCCESS;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, level_names[i]) == 0) {
            *level = levels[i];
            return MPI_SUCCESS;
        }
    }
    return obj_errf(MPI_ERR_INFO_VALUE, "invalid value \"%s\" for the thread_level hint "
                    "(MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED or _MULTIPLE)", v);
}

static int session_new(obj_info_t *info, obj_errhandler_t *eh, int level, obj_session_t **out)
{
    obj_session_t *s = calloc(1, sizeof(*s));
    if (!s)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (info && obj_info_copy(info, &s->info) != MPI_SUCCESS) {
        free(s);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    obj_init(&s->obj, OBJ_SESSION);
    obj_errhandler_retain(eh);
    s->errhandler = eh;
    /* Locks are set up when the core comes up: a core already up without
     * them cannot give MPI_THREAD_MULTIPLE, one up with them gives it to
     * every session (the provided level may exceed the requested one; a
     * library's session in a multithreaded program is used by threads). */
    s->thread_level = rail_progress_mt                  ? MPI_THREAD_MULTIPLE
                      : level == MPI_THREAD_MULTIPLE ? MPI_THREAD_SERIALIZED
                                                     : level;
    *out = s;
    return MPI_SUCCESS;
}

int mpii_session_init(obj_info_t *info, obj_errhandler_t *errhandler, MPI_Session *session)
{
    int level;
    int rc = requested_level(info, &level);
    if (rc != MPI_SUCCESS)
        return rc;
    if (errhandler->for_kind != OBJ_EH_FOR_ANY && errhandler->for_kind != OBJ_EH_FOR_SESSION)
        return obj_errf(MPI_ERR_ARG, "the errhandler was not created for sessions");
    if ((rc = mpi_env_core_up(level)) != MPI_SUCCESS)
        return obj_errf(rc, "the run-time environment could not be set up");
    obj_session_t *s = NULL;
    if ((rc = session_new(info, errhandler, level, &s)) != MPI_SUCCESS) {
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
    obj_errhandler_release(s->errhandler);
    obj_info_release(s->info);
    obj_fini(&s->obj);
    free(s);
    *session = MPI_SESSION_NULL;
    rail_atomic_sub_fetch(&mpi_env.sessions, 1);
    rc = mpi_env_core_down();
    mpi_env_update_ready();
    return rc;
}

int mpii_session_get_info(obj_session_t *session, MPI_Info *info_used)
{
    obj_info_t *i;
    int rc = obj_info_copy(session->info, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int k = 0; k < 4; k++)
        if (levels[k] == session->thread_level &&
            obj_info_set_value(i, "thread_level", level_names[k]) != MPI_SUCCESS) {
            obj_info_release(i);
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
        }
    *info_used = obj_info_handle(i);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ process sets */

static int pset_index(const char *name)
{
    for (int i = 0; name && i < N_PSETS; i++)
        if (strcasecmp(name, psets[i]) == 0)
            return i;
    return -1;
}

static int unknown_pset(const char *name)
{
    return obj_errf(MPI_ERR_ARG, "unknown process set \"%s\" (this session offers mpi://WORLD "
                    "and mpi://SELF)", name ? name : "(null)");
}

int mpii_session_get_num_psets(obj_session_t *session, obj_info_t *info, int *npset_names)
{
    *npset_names = N_PSETS;
    return MPI_SUCCESS;
}

int mpii_session_get_nth_pset(obj_session_t *session, obj_info_t *info, int n, int *pset_len,
                              char *pset_name)
{
    if (n < 0 || n >= N_PSETS)
        return obj_errf(MPI_ERR_ARG, "invalid process set index %d (there are %d)", n, N_PSETS);
    int len = (int)strlen(psets[n]) + 1;
    /* pset_len 0 asks for the length only (pset_name may be NULL). */
    if (*pset_len > 0 && !pset_name)
        return obj_errf(MPI_ERR_ARG, "pset_name is NULL with pset_len %d", *pset_len);
    if (*pset_len > 0)
        snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    else if (*pset_len < 0)
        return obj_errf(MPI_ERR_ARG, "negative pset_len %d", *pset_len);
    *pset_len = len;
    return MPI_SUCCESS;
}

static int pset_size(int i)
{
    return i == 0 ? rte_info.size : 1;
}

int mpii_session_get_pset_info(obj_session_t *session, const char *pset_name, MPI_Info *info)
{
    int i = pset_index(pset_name);
    if (i < 0)
        return unknown_pset(pset_name);
    obj_info_t *inf = obj_info_new();
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", pset_size(i));
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
    int i = pset_index(pset_name);
    if (i < 0)
        return unknown_pset(pset_name);
    int *ranks = NULL;
    if (i == 1) {
        if (!(ranks = malloc(sizeof(int))))
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
        ranks[0] = rte_info.rank;
    }
    obj_group_t *g;
    int rc = obj_group_make(pset_size(i), ranks, session, &g);
    if (rc == MPI_SUCCESS)
        *newgroup = obj_group_handle(g);
    return rc;
}

/* ------------------------------------------------------------ communicators */

static int from_group_check(const obj_group_t *group, const char *stringtag)
{
    if (!obj_comm_bootstrap())
        return obj_errf(MPI_ERR_OTHER, "MPI is not initialized");
    if (group->rank == MPI_UNDEFINED)
        return obj_errf(MPI_ERR_GROUP, "the calling process is not a member of the group");
    if (!stringtag)
        return obj_errf(MPI_ERR_ARG, "stringtag must not be NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return obj_errf(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1 (%d)",
                        MPI_MAX_STRINGTAG_LEN - 1);
    return MPI_SUCCESS;
}

int mpii_comm_create_from_group(obj_group_t *group, const char *stringtag, obj_info_t *info,
                                obj_errhandler_t *errhandler, MPI_Comm *newcomm)
{
    int rc = from_group_check(group, stringtag);
    if (rc != MPI_SUCCESS)
        return rc;
    int *world = malloc((size_t)group->size * sizeof(int));
    if (!world)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < group->size; i++)
        world[i] = obj_group_world_rank(group, i);
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_boot(group, world, stringtag, &a);
    rc = comm_ctxid_agree(&a, ids);
    free(world);
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS && !(c = comm_new_for_session(group->session, errhandler, info)))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *newcomm = obj_comm_handle(c);
    return rc;
}
