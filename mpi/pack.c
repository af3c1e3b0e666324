/*
 * MPI_Pack, MPI_Unpack, MPI_Pack_size and their _external forms: the
 * entry points' semantics, over the packing of the object layer
 * (obj/pack_native.c, obj/pack_external.c).  "external32" is the only data
 * representation the _external functions know; any other name is
 * MPI_ERR_UNSUPPORTED_DATAREP.
 */
#include "obj/type_impl.h"
#include "mpi/binding/gen/mpi_impl.h"

#include <string.h>

int mpii_pack(const void *inbuf, MPI_Count incount, obj_datatype_t *datatype, void *outbuf,
              MPI_Count outsize, MPI_Count *position, obj_comm_t *comm)
{
    (void)comm;
    return obj_pack(inbuf, incount, datatype, outbuf, outsize, position);
}

int mpii_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                MPI_Count outcount, obj_datatype_t *datatype, obj_comm_t *comm)
{
    (void)comm;
    return obj_pack_unpack(inbuf, insize, position, outbuf, outcount, datatype);
}

int mpii_pack_size(MPI_Count incount, obj_datatype_t *datatype, obj_comm_t *comm, MPI_Count *size)
{
    (void)comm;
    return obj_pack_size(incount, datatype, size);
}

/* ------------------------------------------------------------ external32 */

static int check_datarep(const char *datarep)
{
    if (!datarep)
        return obj_errf(MPI_ERR_ARG, "datarep must not be NULL");
    if (strcmp(datarep, "external32") == 0)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_UNSUPPORTED_DATAREP,
                    "data representation \"%s\" (only \"external32\" is defined for packing)",
                    datarep);
}

int mpii_pack_external_size(const char datarep[], MPI_Count incount, obj_datatype_t *datatype,
                            MPI_Count *size)
{
    int rc = check_datarep(datarep);
    return rc ? rc : obj_pack_external_size(incount, datatype, size);
}

int mpii_pack_external(const char datarep[], const void *inbuf, MPI_Count incount,
                       obj_datatype_t *datatype, void *outbuf, MPI_Count outsize,
                       MPI_Count *position)
{
    int rc = check_datarep(datarep);
    return rc ? rc : obj_pack_external(inbuf, incount, datatype, outbuf, outsize, position);
}

int mpii_unpack_external(const char datarep[], const void *inbuf, MPI_Count insize,
                         MPI_Count *position, void *outbuf, MPI_Count outcount,
                         obj_datatype_t *datatype)
{
    int rc = check_datarep(datarep);
    return rc ? rc
              : obj_pack_unpack_external(inbuf, insize, position, outbuf, outcount, datatype);
}
