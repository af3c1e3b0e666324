/* Partitioned point-to-point (MPI-4.1 section 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived, on the
 * partitioned requests of pml/pml_part.c. */
#include "mpi/p2p.h"

int mpii_psend_init(const void *buf, int partitions, MPI_Count count, obj_datatype_t *datatype,
                    int dest, int tag, obj_comm_t *comm, obj_info_t *info, MPI_Request *request)
{
    (void)info;
    obj_request_t *req;
    int rc = pml_part_init((void *)buf, partitions, count, datatype, dest, tag, comm, true, &req);
    if (rc == MPI_SUCCESS)
        *request = obj_request_handle(req);
    return rc;
}

int mpii_precv_init(void *buf, int partitions, MPI_Count count, obj_datatype_t *datatype,
                    int source, int tag, obj_comm_t *comm, obj_info_t *info,
                    MPI_Request *request)
{
    (void)info;
    obj_request_t *req;
    int rc = pml_part_init(buf, partitions, count, datatype, source, tag, comm, false, &req);
    if (rc == MPI_SUCCESS)
        *request = obj_request_handle(req);
    return rc;
}

int mpii_pready(int partition, obj_request_t *request)
{
    int rc = pml_part_check(request, true, "MPI_Pready");
    return rc == MPI_SUCCESS ? pml_part_ready(request, partition) : rc;
}

int mpii_pready_range(int partition_low, int partition_high, obj_request_t *request)
{
    int rc = pml_part_check(request, true, "MPI_Pready_range");
    if (rc == MPI_SUCCESS && partition_low > partition_high)
        rc = obj_errf(MPI_ERR_ARG, "partition_low %d is above partition_high %d", partition_low,
                      partition_high);
    if (rc == MPI_SUCCESS)
        rc = pml_part_check_partition(request, partition_low);
    if (rc == MPI_SUCCESS)
        rc = pml_part_check_partition(request, partition_high);
    for (int i = partition_low; rc == MPI_SUCCESS && i <= partition_high; i++)
        rc = pml_part_ready(request, i);
    return rc;
}

int mpii_pready_list(int length, const int array_of_partitions[], obj_request_t *request)
{
    int rc = pml_part_check(request, true, "MPI_Pready_list");
    if (rc == MPI_SUCCESS && length < 0)
        rc = obj_errf(MPI_ERR_ARG, "length must not be negative (%d)", length);
    if (rc == MPI_SUCCESS && length > 0 && !array_of_partitions)
        rc = obj_errf(MPI_ERR_ARG, "array_of_partitions is NULL");
    for (int i = 0; rc == MPI_SUCCESS && i < length; i++)
        rc = pml_part_check_partition(request, array_of_partitions[i]);
    for (int i = 0; rc == MPI_SUCCESS && i < length; i++)
        rc = pml_part_ready(request, array_of_partitions[i]);
    return rc;
}

int mpii_parrived(obj_request_t *request, int partition, int *flag)
{
    int rc = pml_part_check(request, false, "MPI_Parrived");
    if (rc == MPI_SUCCESS)
        rc = pml_part_check_partition(request, partition);
    if (rc == MPI_SUCCESS)
        *flag = pml_part_arrived(request);
    return rc;
}
