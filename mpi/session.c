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
#include "mpi/mpi_comm_int.h"
#include "mpi/mpi_env.h"
#include "mpi/mpi_errhandler.h"
#include "mpi/mpi_info.h"
#include "mpi/mpi_session.h"
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
static int requested_level(const mpi_info_t *info, int *level)
{
    const char *v = mpi_info_value(info, "thread_level");
    *level = MPI_THREAD_SINGLE;
    if (!v)
        return MPI_SUCCESS;
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, level_names[i]) == 0) {
            *level = levels[i];
            return MPI_SUCCESS;
        }
    }
    return mpi_errf(MPI_ERR_INFO_VALUE, "invalid value \"%s\" for the thread_level hint "
                    "(MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED or _MULTIPLE)", v);
}

static int session_new(mpi_info_t *info, mpi_errhandler_t *eh, int level, mpi_session_t **out)
{
    mpi_session_t *s = calloc(1, sizeof(*s));
    if (!s)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    if (info && mpi_info_copy(info, &s->info) != MPI_SUCCESS) {
        free(s);
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    mpi_obj_init(&s->obj, MPI_OBJ_SESSION);
    mpi_errhandler_retain(eh);
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

int mpii_session_init(mpi_info_t *info, mpi_errhandler_t *errhandler, MPI_Session *session)
{
    int level;
    int rc = requested_level(info, &level);
    if (rc != MPI_SUCCESS)
        return rc;
    if (errhandler->for_kind != MPI_EH_FOR_ANY && errhandler->for_kind != MPI_EH_FOR_SESSION)
        return mpi_errf(MPI_ERR_ARG, "the errhandler was not created for sessions");
    if ((rc = mpi_env_core_up(level)) != MPI_SUCCESS)
        return mpi_errf(rc, "the run-time environment could not be set up");
    mpi_session_t *s = NULL;
    if ((rc = session_new(info, errhandler, level, &s)) != MPI_SUCCESS) {
        mpi_env_core_down();
        return rc;
    }
    rail_atomic_add_fetch(&mpi_env.sessions, 1);
    mpi_env_update_ready();
    *session = mpi_session_handle(s);
    return MPI_SUCCESS;
}

int mpii_session_finalize(MPI_Session *session)
{
    mpi_session_t *s = NULL;
    int rc = mpi_session_lookup(*session, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    mpi_errhandler_release(s->errhandler);
    mpi_info_release(s->info);
    mpi_obj_fini(&s->obj);
    free(s);
    *session = MPI_SESSION_NULL;
    rail_atomic_sub_fetch(&mpi_env.sessions, 1);
    rc = mpi_env_core_down();
    mpi_env_update_ready();
    return rc;
}

int mpii_session_get_info(mpi_session_t *session, MPI_Info *info_used)
{
    mpi_info_t *i;
    int rc = mpi_info_copy(session->info, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int k = 0; k < 4; k++)
        if (levels[k] == session->thread_level &&
            mpi_info_set_value(i, "thread_level", level_names[k]) != MPI_SUCCESS) {
            mpi_info_release(i);
            return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
        }
    *info_used = mpi_info_handle(i);
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
    return mpi_errf(MPI_ERR_ARG, "unknown process set \"%s\" (this session offers mpi://WORLD "
                    "and mpi://SELF)", name ? name : "(null)");
}

int mpii_session_get_num_psets(mpi_session_t *session, mpi_info_t *info, int *npset_names)
{
    *npset_names = N_PSETS;
    return MPI_SUCCESS;
}

int mpii_session_get_nth_pset(mpi_session_t *session, mpi_info_t *info, int n, int *pset_len,
                              char *pset_name)
{
    if (n < 0 || n >= N_PSETS)
        return mpi_errf(MPI_ERR_ARG, "invalid process set index %d (there are %d)", n, N_PSETS);
    int len = (int)strlen(psets[n]) + 1;
    /* pset_len 0 asks for the length only (pset_name may be NULL). */
    if (*pset_len > 0 && !pset_name)
        return mpi_errf(MPI_ERR_ARG, "pset_name is NULL with pset_len %d", *pset_len);
    if (*pset_len > 0)
        snprintf(pset_name, (size_t)*pset_len, "%s", psets[n]);
    else if (*pset_len < 0)
        return mpi_errf(MPI_ERR_ARG, "negative pset_len %d", *pset_len);
    *pset_len = len;
    return MPI_SUCCESS;
}

static int pset_size(int i)
{
    return i == 0 ? rte_info.size : 1;
}

int mpii_session_get_pset_info(mpi_session_t *session, const char *pset_name, MPI_Info *info)
{
    int i = pset_index(pset_name);
    if (i < 0)
        return unknown_pset(pset_name);
    mpi_info_t *inf = mpi_info_new();
    char buf[32];
    snprintf(buf, sizeof(buf), "%d", pset_size(i));
    if (!inf || mpi_info_set_value(inf, "mpi_size", buf) != MPI_SUCCESS) {
        mpi_info_release(inf);
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    }
    *info = mpi_info_handle(inf);
    return MPI_SUCCESS;
}

int mpii_group_from_session_pset(mpi_session_t *session, const char *pset_name,
                                 MPI_Group *newgroup)
{
    int i = pset_index(pset_name);
    if (i < 0)
        return unknown_pset(pset_name);
    int *ranks = NULL;
    if (i == 1) {
        if (!(ranks = malloc(sizeof(int))))
            return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
        ranks[0] = rte_info.rank;
    }
    mpi_group_t *g;
    int rc = mpi_group_make(pset_size(i), ranks, session, &g);
    if (rc == MPI_SUCCESS)
        *newgroup = mpi_group_handle(g);
    return rc;
}

/* ------------------------------------------------------------ communicators */

static int from_group_check(const mpi_group_t *group, const char *stringtag)
{
    if (!mpi_comm_bootstrap())
        return mpi_errf(MPI_ERR_OTHER, "MPI is not initialized");
    if (group->rank == MPI_UNDEFINED)
        return mpi_errf(MPI_ERR_GROUP, "the calling process is not a member of the group");
    if (!stringtag)
        return mpi_errf(MPI_ERR_ARG, "stringtag must not be NULL");
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return mpi_errf(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1 (%d)",
                        MPI_MAX_STRINGTAG_LEN - 1);
    return MPI_SUCCESS;
}

int mpii_comm_create_from_group(mpi_group_t *group, const char *stringtag, mpi_info_t *info,
                                mpi_errhandler_t *errhandler, MPI_Comm *newcomm)
{
    int rc = from_group_check(group, stringtag);
    if (rc != MPI_SUCCESS)
        return rc;
    int *world = malloc((size_t)group->size * sizeof(int));
    if (!world)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < group->size; i++)
        world[i] = mpi_group_world_rank(group, i);
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_boot(group, world, stringtag, &a);
    rc = comm_ctxid_agree(&a, ids);
    free(world);
    mpi_comm_t *c = NULL;
    if (rc == MPI_SUCCESS && !(c = comm_new_for_session(group->session, errhandler, info)))
        rc = mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *newcomm = mpi_comm_handle(c);
    return rc;
}
