/*
 * Packing in the "external32" representation (MPI_Pack_external,
 * MPI_Unpack_external, MPI_Pack_external_size): big-endian, IEEE, sizes of
 * the MPI-4.1 table, converted by the engine.
 */
#include "obj/type_impl.h"
#include "accel/accel.h"

static int ext32_bytes(const obj_datatype_t *dt, MPI_Count count, const char *name,
                       MPI_Count *bytes)
{
    if (count < 0)
        return obj_errf(MPI_ERR_COUNT, "invalid %s %lld (must be non-negative)", name,
                        (long long)count);
    size_t n = 0;
    int rc = rail_dt_external32_size(dt->layout, count, &n);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "datatype %s has no external32 representation",
                        dt->name[0] ? dt->name : "(derived)");
    *bytes = (MPI_Count)n;
    return MPI_SUCCESS;
}

static int check_position(MPI_Count pos, MPI_Count size, const char *name)
{
    if (size < 0)
        return obj_errf(MPI_ERR_ARG, "invalid %s size %lld", name, (long long)size);
    if (pos >= 0 && pos <= size)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ARG, "position %lld is outside the %s of %lld bytes", (long long)pos,
                    name, (long long)size);
}

int obj_pack_external_size(MPI_Count incount, const obj_datatype_t *datatype, MPI_Count *size)
{
    return ext32_bytes(datatype, incount, "incount", size);
}

int obj_pack_external(const void *inbuf, MPI_Count incount, obj_datatype_t *datatype,
                      void *outbuf, MPI_Count outsize, MPI_Count *position)
{
    MPI_Count bytes = 0;
    int rc = ext32_bytes(datatype, incount, "incount", &bytes);
    if (rc == MPI_SUCCESS)
        rc = check_position(*position, outsize, "output buffer");
    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes > outsize - *position)
        return obj_errf(MPI_ERR_TRUNCATE, "%lld bytes do not fit in the %lld left of the output "
                        "buffer", (long long)bytes, (long long)(outsize - *position));
    if (bytes == 0)
        return MPI_SUCCESS;
    if (!outbuf)
        return obj_errf(MPI_ERR_BUFFER, "outbuf is NULL");
    size_t pos = (size_t)*position;
    if (RAIL_UNLIKELY(accel_any_device_active) &&
        (obj_pack_is_device((const char *)inbuf + datatype->true_lb) ||
         obj_pack_is_device((char *)outbuf + pos)))
        rc = rail_dt_pack_external32_cb(datatype->layout, incount, inbuf, outbuf,
                                        (size_t)outsize, &pos, obj_pack_accel_copy, NULL);
    else
        rc = rail_dt_pack_external32(datatype->layout, incount, inbuf, outbuf, (size_t)outsize,
                                     &pos);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "external32 packing failed");
    *position = (MPI_Count)pos;
    return MPI_SUCCESS;
}

int obj_pack_unpack_external(const void *inbuf, MPI_Count insize, MPI_Count *position,
                             void *outbuf, MPI_Count outcount, obj_datatype_t *datatype)
{
    MPI_Count bytes = 0;
    int rc = ext32_bytes(datatype, outcount, "outcount", &bytes);
    if (rc == MPI_SUCCESS)
        rc = check_position(*position, insize, "input buffer");
    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes > insize - *position)
        return obj_errf(MPI_ERR_TRUNCATE, "%lld elements need %lld bytes of external32 data, the "
                        "input buffer has %lld left", (long long)outcount, (long long)bytes,
                        (long long)(insize - *position));
    if (bytes == 0)
        return MPI_SUCCESS;
    if (!inbuf)
        return obj_errf(MPI_ERR_BUFFER, "inbuf is NULL");
    size_t pos = (size_t)*position;
    if (RAIL_UNLIKELY(accel_any_device_active) &&
        (obj_pack_is_device((char *)outbuf + datatype->true_lb) ||
         obj_pack_is_device((const char *)inbuf + pos)))
        rc = rail_dt_unpack_external32_cb(datatype->layout, outcount, outbuf, inbuf,
                                          (size_t)insize, &pos, obj_pack_accel_copy, NULL);
    else
        rc = rail_dt_unpack_external32(datatype->layout, outcount, outbuf, inbuf, (size_t)insize,
                                       &pos);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "external32 unpacking failed");
    *position = (MPI_Count)pos;
    return MPI_SUCCESS;
}
