/* MPI_Comm_*: queries, names, hints, free, and the constructors of
 * obj/comm*.c (dup, create, split), each a check and a call down. */
#include "mpi/mpi_err.h"
#include "obj/comm.h"
#include "obj/info.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <stdio.h>
#include <string.h>

/* The result of a constructor: its handle, or MPI_COMM_NULL (c is read
 * after the call that sets it). */
static int comm_out(int rc, obj_comm_t *const *c, MPI_Comm *newcomm)
{
    if (rc == MPI_SUCCESS)
        *newcomm = obj_comm_handle(*c);
    return rc;
}

/* ------------------------------------------------------------ queries */

int mpii_comm_rank(obj_comm_t *comm, int *rank)
{
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int mpii_comm_size(obj_comm_t *comm, int *size)
{
    *size = comm->size;
    return MPI_SUCCESS;
}

int mpii_comm_remote_size(obj_comm_t *comm, int *size)
{
    if (!comm->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Comm_remote_size needs an intercommunicator");
    *size = comm->remote_size;
    return MPI_SUCCESS;
}

int mpii_comm_test_inter(obj_comm_t *comm, int *flag)
{
    *flag = comm->is_inter;
    return MPI_SUCCESS;
}

int mpii_comm_set_name(obj_comm_t *comm, const char *comm_name)
{
    snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
    return MPI_SUCCESS;
}

int mpii_comm_get_name(obj_comm_t *comm, char *comm_name, int *resultlen)
{
    /* MPI-4.1 7.10: the null handle has a name too. */
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm ? comm->name : "MPI_COMM_NULL");
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}

int mpii_comm_get_parent(MPI_Comm *parent)
{
    /* No process of this job was spawned (MPI_Comm_spawn is not provided). */
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int mpii_comm_group(obj_comm_t *comm, MPI_Group *group)
{
    obj_group_retain(comm->group);
    *group = obj_group_handle(comm->group);
    return MPI_SUCCESS;
}

int mpii_comm_remote_group(obj_comm_t *comm, MPI_Group *group)
{
    if (!comm->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Comm_remote_group needs an intercommunicator");
    obj_group_retain(comm->remote_group);
    *group = obj_group_handle(comm->remote_group);
    return MPI_SUCCESS;
}

int mpii_comm_compare(obj_comm_t *comm1, obj_comm_t *comm2, int *result)
{
    *result = obj_comm_compare(comm1, comm2);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ hints */

int mpii_comm_set_info(obj_comm_t *comm, obj_info_t *info)
{
    return obj_comm_set_info(comm, info);
}

int mpii_comm_get_info(obj_comm_t *comm, MPI_Info *info_used)
{
    obj_info_t *used;
    int rc = obj_comm_get_info(comm, &used);
    if (rc == MPI_SUCCESS)
        *info_used = obj_info_handle(used);
    return rc;
}

int mpii_get_hw_resource_info(MPI_Info *hw_info)
{
    obj_info_t *info;
    int rc = obj_comm_hw_resource_info(&info);
    if (rc == MPI_SUCCESS)
        *hw_info = obj_info_handle(info);
    return rc;
}

/* ------------------------------------------------------------ free */

int mpii_comm_free(MPI_Comm *comm)
{
    obj_comm_t *c;
    int rc = obj_comm_lookup(*comm, &c);
    if (rc == MPI_SUCCESS)
        rc = obj_comm_free(c);
    if (rc == MPI_SUCCESS)
        *comm = MPI_COMM_NULL;
    return rc;
}

int mpii_comm_disconnect(MPI_Comm *comm)
{
    obj_comm_t *c;
    int rc = obj_comm_lookup(*comm, &c);
    if (rc == MPI_SUCCESS)
        rc = obj_comm_disconnect(c);
    if (rc == MPI_SUCCESS)
        *comm = MPI_COMM_NULL;
    return rc;
}

/* ------------------------------------------------------------ constructors */

int mpii_comm_dup(obj_comm_t *comm, MPI_Comm *newcomm)
{
    obj_comm_t *c = NULL;
    return comm_out(obj_comm_dup(comm, NULL, false, &c), &c, newcomm);
}

int mpii_comm_dup_with_info(obj_comm_t *comm, obj_info_t *info, MPI_Comm *newcomm)
{
    obj_comm_t *c = NULL;
    return comm_out(obj_comm_dup(comm, info, true, &c), &c, newcomm);
}

static int idup(obj_comm_t *comm, const obj_info_t *info, bool with_info, MPI_Comm *newcomm,
                MPI_Request *request)
{
    obj_comm_t *c = NULL;
    obj_request_t *req = NULL;
    int rc = obj_comm_idup(comm, info, with_info, &c, &req);
    if (rc == MPI_SUCCESS) {
        *newcomm = obj_comm_handle(c);
        *request = obj_request_handle(req);
    }
    return rc;
}

int mpii_comm_idup(obj_comm_t *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup(comm, NULL, false, newcomm, request);
}

int mpii_comm_idup_with_info(obj_comm_t *comm, obj_info_t *info, MPI_Comm *newcomm,
                             MPI_Request *request)
{
    return idup(comm, info, true, newcomm, request);
}

int mpii_comm_create(obj_comm_t *comm, obj_group_t *group, MPI_Comm *newcomm)
{
    obj_comm_t *c = NULL;
    return comm_out(obj_comm_create(comm, group, &c), &c, newcomm);
}

int mpii_comm_create_group(obj_comm_t *comm, obj_group_t *group, int tag, MPI_Comm *newcomm)
{
    if (comm->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Comm_create_group needs an intracommunicator");
    obj_comm_t *c = NULL;
    return comm_out(obj_comm_create_group(comm, group, tag, &c), &c, newcomm);
}

int mpii_comm_split(obj_comm_t *comm, int color, int key, MPI_Comm *newcomm)
{
    obj_comm_t *c = NULL;
    return comm_out(obj_comm_split(comm, color, key, &c), &c, newcomm);
}

int mpii_comm_split_type(obj_comm_t *comm, int split_type, int key, obj_info_t *info,
                         MPI_Comm *newcomm)
{
    if (comm->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Comm_split_type needs an intracommunicator");
    obj_comm_t *c = NULL;
    return comm_out(obj_comm_split_type(comm, split_type, key, info, &c), &c, newcomm);
}
