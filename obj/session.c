/*
 * Sessions (MPI-4.1 chapter 11): session objects, process sets, and
 * MPI_Comm_create_from_group.
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
#include "obj/errhandler.h"
#include "obj/info.h"
#include "obj/session.h"
#include "base/progress.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                             MPI_THREAD_MULTIPLE};

/* ------------------------------------------------------------ objects */

int obj_session_level(const obj_info_t *info, int *level)
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

int obj_session_new(const obj_info_t *info, obj_errhandler_t *eh, int level, obj_session_t **out)
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

void obj_session_free(obj_session_t *s)
{
    obj_errhandler_release(s->errhandler);
    obj_info_release(s->info);
    obj_fini(&s->obj);
    free(s);
}

int obj_session_info(const obj_session_t *session, obj_info_t **out)
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
    *out = i;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ process sets */

const char *obj_session_pset_name(int n)
{
    return n >= 0 && n < OBJ_SESSION_PSETS ? psets[n] : NULL;
}

int obj_session_pset(const char *name, int *index)
{
    for (int i = 0; name && i < OBJ_SESSION_PSETS; i++) {
        if (strcasecmp(name, psets[i]) == 0) {
            *index = i;
            return MPI_SUCCESS;
        }
    }
    return obj_errf(MPI_ERR_ARG, "unknown process set \"%s\" (this session offers mpi://WORLD "
                    "and mpi://SELF)", name ? name : "(null)");
}

int obj_session_pset_size(int index)
{
    return index == 0 ? rte_info.size : 1;
}

int obj_session_pset_group(obj_session_t *session, int index, obj_group_t **out)
{
    int *ranks = NULL;
    if (index == 1) {
        if (!(ranks = malloc(sizeof(int))))
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
        ranks[0] = rte_info.rank;
    }
    return obj_group_make(obj_session_pset_size(index), ranks, session, out);
}

/* ------------------------------------------------------------ communicators */

int obj_comm_create_from_group(obj_group_t *group, const char *stringtag,
                               const obj_info_t *info, obj_errhandler_t *errhandler,
                               obj_comm_t **out)
{
    if (!obj_comm_bootstrap())
        return obj_errf(MPI_ERR_OTHER, "MPI is not initialized");
    if (group->rank == MPI_UNDEFINED)
        return obj_errf(MPI_ERR_GROUP, "the calling process is not a member of the group");
    int *world = malloc((size_t)group->size * sizeof(int));
    if (!world)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < group->size; i++)
        world[i] = obj_group_world_rank(group, i);
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_boot(group, world, stringtag, &a);
    int rc = comm_ctxid_agree(&a, ids);
    free(world);
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS && !(c = comm_new_for_session(group->session, errhandler, info)))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_intra(c, group, ids[0]);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}
