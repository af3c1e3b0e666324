/* MPI_Intercomm_create, MPI_Intercomm_create_from_groups and
 * MPI_Intercomm_merge on the intercommunicators of obj/intercomm.c. */
#include "mpi/mpi_err.h"
#include "obj/comm.h"
#include "mpi/binding/gen/mpi_impl.h"

int mpii_intercomm_create(obj_comm_t *local_comm, int local_leader, obj_comm_t *peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    obj_comm_t *c = NULL;
    int rc = obj_intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, &c);
    if (rc == MPI_SUCCESS)
        *newintercomm = obj_comm_handle(c);
    return rc;
}

int mpii_intercomm_create_from_groups(obj_group_t *local_group, int local_leader,
                                      obj_group_t *remote_group, int remote_leader,
                                      const char *stringtag, obj_info_t *info,
                                      obj_errhandler_t *errhandler, MPI_Comm *newintercomm)
{
    obj_comm_t *c = NULL;
    int rc = obj_intercomm_create_from_groups(local_group, local_leader, remote_group,
                                              remote_leader, stringtag, info, errhandler, &c);
    if (rc == MPI_SUCCESS)
        *newintercomm = obj_comm_handle(c);
    return rc;
}

int mpii_intercomm_merge(obj_comm_t *intercomm, int high, MPI_Comm *newintracomm)
{
    if (!intercomm->is_inter)
        return obj_errf(MPI_ERR_COMM, "MPI_Intercomm_merge needs an intercommunicator");
    obj_comm_t *c = NULL;
    int rc = obj_intercomm_merge(intercomm, high, &c);
    if (rc == MPI_SUCCESS)
        *newintracomm = obj_comm_handle(c);
    return rc;
}
