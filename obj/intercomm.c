/*
 * Intercommunicators: MPI_Intercomm_create, MPI_Intercomm_create_from_groups,
 * MPI_Intercomm_merge, and the exchanges between the two groups used by
 * split / create / dup on intercommunicators.
 *
 * Context ids of a new intercommunicator are agreed by both groups at once
 * (comm_ctxid.c): each group reduces its masks to its leader, the leaders
 * swap results over the peer communicator (MPI_Intercomm_create), the
 * parent intercommunicator, or the bootstrap communicator (from groups),
 * and broadcast the AND back.  Two ids: the intercommunicator's and the one
 * of its hidden local_comm.
 */
#include "obj/comm_int.h"
#include "obj/errhandler.h"
#include "obj/info.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

int intercomm_allgather(obj_comm_t *inter, const void *mine, size_t rec, void *all)
{
    obj_comm_t *lc = inter->local_comm;
    char *remote = (char *)all + (size_t)inter->size * rec;
    comm_xchg_t x = comm_xchg_intra(lc);
    int tag = comm_tag_next(inter);
    int rc = comm_xchg_allgather(&x, mine, rec, all);
    if (rc == MPI_SUCCESS && inter->rank == 0)
        rc = comm_xchg_sendrecv(inter, OBJ_P2P_COLL, 0, tag, all, (size_t)inter->size * rec, remote,
                                (size_t)inter->remote_size * rec);
    x = comm_xchg_intra(lc);
    if (rc == MPI_SUCCESS)
        rc = comm_xchg_bcast(&x, 0, remote, (size_t)inter->remote_size * rec);
    return rc;
}

/* World ranks of a group (malloc). */
static int *world_ranks_of(const obj_group_t *g)
{
    int *r = malloc((size_t)RAIL_MAX(g->size, 1) * sizeof(int));
    for (int i = 0; r && i < g->size; i++)
        r[i] = obj_group_world_rank(g, i);
    return r;
}

/* Leaders: swap a header and an int array over (comm, flags, peer, tag). */
typedef struct {
    int n;        /* entries of the array */
    int ok;       /* 1; 0 when the leader found an error */
    uint32_t cid; /* context id of the sender's local communicator */
} swap_hdr_t;

static int leader_swap(obj_comm_t *pc, unsigned flags, int peer, int tag, const swap_hdr_t *mine,
                       const int *arr, swap_hdr_t *theirs, int **tarr)
{
    int rc = comm_xchg_sendrecv(pc, flags, peer, tag, mine, sizeof(*mine), theirs,
                                sizeof(*theirs));
    if (rc != MPI_SUCCESS)
        return rc;
    *tarr = malloc((size_t)RAIL_MAX(theirs->n, 1) * sizeof(int));
    if (!*tarr)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    return comm_xchg_sendrecv(pc, flags, peer, tag, arr, (size_t)mine->n * sizeof(int), *tarr,
                              (size_t)theirs->n * sizeof(int));
}

/* Root hands its header and array to the rest of the local participants. */
static int local_bcast(const comm_xchg_t *x, int root, swap_hdr_t *hdr, int **arr)
{
    int rc = comm_xchg_bcast(x, root, hdr, sizeof(*hdr));
    if (rc != MPI_SUCCESS)
        return rc;
    if (x->me != root && !(*arr = malloc((size_t)RAIL_MAX(hdr->n, 1) * sizeof(int))))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    return comm_xchg_bcast(x, root, *arr, (size_t)hdr->n * sizeof(int));
}

int intercomm_swap_group(obj_comm_t *inter, const obj_group_t *mine, obj_group_t **theirs)
{
    int tag = comm_tag_next(inter);
    comm_xchg_t x = comm_xchg_intra(inter->local_comm);
    swap_hdr_t hdr = {mine->size, 1, 0}, th = {0, 1, 0};
    int *arr = NULL, rc = MPI_SUCCESS;
    if (inter->rank == 0) {
        int *w = world_ranks_of(mine);
        rc = w ? leader_swap(inter, OBJ_P2P_COLL, 0, tag, &hdr, w, &th, &arr)
               : obj_errf(MPI_ERR_NO_MEM, "out of memory");
        free(w);
    }
    if (rc == MPI_SUCCESS)
        rc = local_bcast(&x, 0, &th, &arr);
    if (rc == MPI_SUCCESS)
        return obj_group_make(th.n, arr, mine->session, theirs);
    free(arr);
    return rc;
}

/* Whether two groups share a process. */
static bool overlap(const obj_group_t *a, const int *b, int nb)
{
    for (int i = 0; i < nb; i++)
        if (obj_group_rank_of_world(a, b[i]) != MPI_UNDEFINED)
            return true;
    return false;
}

/* ------------------------------------------------------------ Intercomm_create */

/* Leader: check the peer arguments and swap groups with the remote leader. */
static int icreate_leader(obj_comm_t *local_comm, obj_comm_t *peer_comm, int remote_leader,
                          int ptag, swap_hdr_t *th, int **arr)
{
    swap_hdr_t hdr = {local_comm->size, 1, local_comm->context_id};
    if (!peer_comm)
        return obj_errf(MPI_ERR_COMM, "MPI_COMM_NULL as peer_comm at the local leader");
    if (remote_leader < 0 || remote_leader >= peer_comm->remote_size)
        return obj_errf(MPI_ERR_RANK, "invalid remote_leader %d (peer_comm has %d processes)",
                        remote_leader, peer_comm->remote_size);
    int *w = world_ranks_of(local_comm->group);
    int rc = w ? leader_swap(peer_comm, OBJ_P2P_COLL, remote_leader, ptag, &hdr, w, th, arr)
               : obj_errf(MPI_ERR_NO_MEM, "out of memory");
    free(w);
    if (rc == MPI_SUCCESS && overlap(local_comm->group, *arr, th->n))
        th->ok = 0;
    return rc;
}

int obj_intercomm_create(obj_comm_t *local_comm, int local_leader, obj_comm_t *peer_comm,
                         int remote_leader, int tag, obj_comm_t **out)
{
    if (local_comm->is_inter)
        return obj_errf(MPI_ERR_COMM, "local_comm must be an intracommunicator");
    if (local_leader < 0 || local_leader >= local_comm->size)
        return obj_errf(MPI_ERR_RANK, "invalid local_leader %d (local_comm has %d processes)",
                        local_leader, local_comm->size);
    int ptag = comm_tag_user(COMM_TAG_PEER, tag);
    bool leader = local_comm->rank == local_leader;
    swap_hdr_t th = {0, 0, 0};
    int *arr = NULL, rc = MPI_SUCCESS;
    if (leader)
        rc = icreate_leader(local_comm, peer_comm, remote_leader, ptag, &th, &arr);
    comm_xchg_t x = comm_xchg_intra(local_comm);
    int brc = local_bcast(&x, local_leader, &th, &arr);   /* th.ok = 0 on leader errors */
    if (rc == MPI_SUCCESS && brc != MPI_SUCCESS)
        rc = brc;
    if (rc == MPI_SUCCESS && !th.ok)
        rc = obj_errf(MPI_ERR_COMM, "the two groups of MPI_Intercomm_create overlap, or the "
                      "local leader failed");
    obj_group_t *remote = NULL;
    if (rc == MPI_SUCCESS)
        rc = obj_group_make(th.n, arr, local_comm->session, &remote);
    else
        free(arr);
    if (rc != MPI_SUCCESS)
        return rc;
    comm_agree_t a = {
        .local = comm_xchg_intra(local_comm), .root = local_leader, .member = true, .nids = 2,
        .peer_comm = leader ? peer_comm : NULL, .peer_flags = OBJ_P2P_COLL,
        .peer_rank = remote_leader, .peer_tag = ptag,
        .key = COMM_KEY(COMM_KEY_ICREATE, RAIL_MIN(local_comm->context_id, th.cid),
                        RAIL_MAX(local_comm->context_id, th.cid)),
    };
    uint32_t ids[2];
    obj_comm_t *c = NULL;
    rc = comm_ctxid_agree(&a, ids);
    if (rc == MPI_SUCCESS && !(c = comm_new(local_comm)))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_inter(c, local_comm->group, remote, ids[0], ids[1]);
    obj_group_release(remote);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

/* ------------------------------------------------------------ from groups */

/* FNV-1a, 64 bits: the tag of a string tag on the bootstrap communicator. */
uint64_t comm_string_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The agreement among the members of `group` on the bootstrap communicator. */
void comm_agree_boot(const obj_group_t *group, const int *world, const char *stringtag,
                     comm_agree_t *a)
{
    uint64_t h = comm_string_hash(stringtag);
    memset(a, 0, sizeof(*a));
    a->local = (comm_xchg_t){ .comm = obj_comm_bootstrap(), .flags = 0,
                              .tag = (int)(h & 0x3fffffff), .n = group->size, .me = group->rank,
                              .ranks = world };
    a->member = true;
    a->nids = 1;
    a->key = COMM_KEY(COMM_KEY_BOOT, 0, 0) | (h & ((1ull << 62) - 1));
}

/* A new communicator for the session constructors: errhandler and hints
 * from the arguments. */
obj_comm_t *comm_new_for_session(obj_session_t *session, obj_errhandler_t *eh,
                                 const obj_info_t *info)
{
    obj_comm_t *c = comm_new(NULL);
    if (!c)
        return NULL;
    obj_errhandler_retain(eh);
    obj_errhandler_release(c->errhandler);
    c->errhandler = eh;
    c->session = session;
    if (comm_info_merge(&c->info, info) != MPI_SUCCESS) {
        comm_destroy(c);
        return NULL;
    }
    return c;
}

static int fromgroups_check(const obj_group_t *lg, int local_leader, const char *stringtag)
{
    if (!obj_comm_bootstrap())
        return obj_errf(MPI_ERR_OTHER, "MPI is not initialized");
    if (lg->rank == MPI_UNDEFINED)
        return obj_errf(MPI_ERR_GROUP, "the calling process is not in local_group");
    if (local_leader < 0 || local_leader >= lg->size)
        return obj_errf(MPI_ERR_RANK, "invalid local_leader %d (local_group has %d processes)",
                        local_leader, lg->size);
    if (!stringtag)
        return obj_errf(MPI_ERR_ARG, "stringtag must not be NULL");
    return MPI_SUCCESS;
}

/* Leader: check the remote group and name its leader. */
static int fromgroups_leader(const obj_group_t *lg, const obj_group_t *rg, int remote_leader,
                             swap_hdr_t *hdr, int **arr)
{
    if (!rg)
        return obj_errf(MPI_ERR_GROUP, "MPI_GROUP_NULL as remote_group at the local leader");
    if (remote_leader < 0 || remote_leader >= rg->size)
        return obj_errf(MPI_ERR_RANK, "invalid remote_leader %d (remote_group has %d processes)",
                        remote_leader, rg->size);
    if (!(*arr = world_ranks_of(rg)))
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    *hdr = (swap_hdr_t){rg->size, !overlap(lg, *arr, rg->size),
                        (uint32_t)obj_group_world_rank(rg, remote_leader)};
    return MPI_SUCCESS;
}

int obj_intercomm_create_from_groups(obj_group_t *local_group, int local_leader,
                                     obj_group_t *remote_group, int remote_leader,
                                     const char *stringtag, const obj_info_t *info,
                                     obj_errhandler_t *errhandler, obj_comm_t **out)
{
    int rc = fromgroups_check(local_group, local_leader, stringtag);
    if (rc != MPI_SUCCESS)
        return rc;
    int *lw = world_ranks_of(local_group), *arr = NULL;
    if (!lw)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    comm_agree_t a;
    comm_agree_boot(local_group, lw, stringtag, &a);
    a.root = local_leader;
    a.nids = 2;
    swap_hdr_t hdr = {0, 0, 0};
    if (local_group->rank == local_leader)
        rc = fromgroups_leader(local_group, remote_group, remote_leader, &hdr, &arr);
    int brc = local_bcast(&a.local, local_leader, &hdr, &arr);   /* hdr.ok = 0 on errors */
    if (rc == MPI_SUCCESS && (rc = brc) == MPI_SUCCESS && !hdr.ok)
        rc = obj_errf(MPI_ERR_GROUP, "local_group and remote_group overlap, or the local leader "
                      "failed");
    obj_group_t *remote = NULL;
    if (rc == MPI_SUCCESS)
        rc = obj_group_make_copy(hdr.n, arr, local_group->session, &remote);
    free(arr);
    if (rc == MPI_SUCCESS && local_group->rank == local_leader) {
        a.peer_comm = a.local.comm;
        a.peer_rank = (int)hdr.cid;
        a.peer_tag = a.local.tag;
    }
    uint32_t ids[2];
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS)
        rc = comm_ctxid_agree(&a, ids);
    free(lw);
    if (rc == MPI_SUCCESS && !(c = comm_new_for_session(local_group->session, errhandler, info)))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_inter(c, local_group, remote, ids[0], ids[1]);
    obj_group_release(remote);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}

/* ------------------------------------------------------------ merge */

/* The merged group: the "low" group first (ties: the group whose first
 * member has the lower world rank). */
static int merged_group(obj_comm_t *inter, const int *high, obj_group_t **out)
{
    const obj_group_t *l = inter->group, *r = inter->remote_group;
    int lh = high[0], rh = high[inter->size];
    bool local_first = lh != rh ? !lh
                                : obj_group_world_rank(l, 0) < obj_group_world_rank(r, 0);
    const obj_group_t *first = local_first ? l : r, *second = local_first ? r : l;
    int n = l->size + r->size;
    int *w = malloc((size_t)n * sizeof(int));
    if (!w)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < first->size; i++)
        w[i] = obj_group_world_rank(first, i);
    for (int i = 0; i < second->size; i++)
        w[first->size + i] = obj_group_world_rank(second, i);
    return obj_group_make(n, w, inter->session, out);
}

int obj_intercomm_merge(obj_comm_t *intercomm, int high, obj_comm_t **out)
{
    int n = intercomm->size + intercomm->remote_size, mine = high ? 1 : 0;
    int *highs = malloc((size_t)n * sizeof(int));
    if (!highs)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    int rc = intercomm_allgather(intercomm, &mine, sizeof(int), highs);
    obj_group_t *g = NULL;
    if (rc == MPI_SUCCESS)
        rc = merged_group(intercomm, highs, &g);
    free(highs);
    comm_agree_t a;
    uint32_t ids[2];
    comm_agree_over(intercomm, true, &a);
    if (rc == MPI_SUCCESS)
        rc = comm_ctxid_agree(&a, ids);
    obj_comm_t *c = NULL;
    if (rc == MPI_SUCCESS && !(c = comm_new(intercomm)))
        rc = obj_errf(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS)
        rc = comm_setup_intra(c, g, ids[0]);
    obj_group_release(g);
    if (rc == MPI_SUCCESS)
        *out = c;
    return rc;
}
