/*
 * Packing in the native representation (MPI_Pack, MPI_Unpack,
 * MPI_Pack_size): the packed form is the type signature's bytes, no
 * header, so a packed message is count * size bytes.  Contiguous host data
 * is one memcpy; other layouts go through the engine's whole-buffer pack
 * (no staging); device memory on either side goes through accel_copy.
 */
#include "obj/type_impl.h"
#include "accel/accel.h"
#include "accel/accel_dt.h"

#include <string.h>

int obj_pack_accel_copy(void *dst, const void *src, size_t len, void *ctx)
{
    (void)ctx;
    return accel_copy(dst, src, len, NULL);
}

bool obj_pack_is_device(const void *ptr)
{
    return accel_is_device(ptr);
}

/* Bytes of count elements: MPI_ERR_COUNT when negative or too large. */
static int packed_bytes(MPI_Count count, const obj_datatype_t *dt, const char *name,
                        MPI_Count *bytes)
{
    if (count < 0)
        return obj_errf(MPI_ERR_COUNT, "invalid %s %lld (must be non-negative)", name,
                        (long long)count);
    if (__builtin_mul_overflow(count, dt->size, bytes))
        return obj_errf(MPI_ERR_COUNT, "%s %lld of a %lld-byte datatype overflows", name,
                        (long long)count, (long long)dt->size);
    return MPI_SUCCESS;
}

static int check_position(MPI_Count pos, MPI_Count size, const char *name)
{
    if (pos >= 0 && pos <= size)
        return MPI_SUCCESS;
    return obj_errf(MPI_ERR_ARG, "position %lld is outside the %s of %lld bytes", (long long)pos,
                    name, (long long)size);
}

/* Pack or unpack `bytes` with device memory on either side: the pieces go
 * through a device staging buffer in one stream's worth of queued copies
 * (accel_dt_pack), like the device side of the two. */
static int pack_device(const struct rail_dt *l, MPI_Count count, const void *buf, void *packed,
                       size_t bytes, const void *like, bool pack)
{
    struct rail_dt_cursor c;
    int rc = rail_dt_cursor_init(&c, l, count, buf);
    if (rc != MPI_SUCCESS)
        return rc;
    rail_dt_cursor_set_copy(&c, obj_pack_accel_copy, NULL);
    size_t n = pack ? accel_dt_pack(&c, packed, bytes, like)
                    : accel_dt_unpack(&c, packed, bytes, like);
    if (rail_dt_cursor_status(&c) != MPI_SUCCESS)
        return rail_dt_cursor_status(&c);
    return n == bytes ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int obj_pack(const void *inbuf, MPI_Count incount, obj_datatype_t *datatype, void *outbuf,
             MPI_Count outsize, MPI_Count *position)
{
    MPI_Count bytes = 0, pos = *position;
    int rc = packed_bytes(incount, datatype, "incount", &bytes);
    if (rc == MPI_SUCCESS)
        rc = check_position(pos, outsize, "output buffer");
    if (rc != MPI_SUCCESS)
        return rc;
    if (RAIL_UNLIKELY(bytes > outsize - pos))
        return obj_errf(MPI_ERR_TRUNCATE, "%lld bytes do not fit in the %lld left of the output "
                        "buffer", (long long)bytes, (long long)(outsize - pos));
    if (bytes == 0)
        return MPI_SUCCESS;
    if (RAIL_UNLIKELY(!outbuf))
        return obj_errf(MPI_ERR_BUFFER, "outbuf is NULL");
    char *dst = (char *)outbuf + pos;
    const struct rail_dt *l = datatype->layout;
    const char *user = (const char *)inbuf + datatype->true_lb;
    if (RAIL_UNLIKELY(accel_any_device_active) &&
        (obj_pack_is_device(user) || obj_pack_is_device(dst)))
        rc = pack_device(l, incount, inbuf, dst, (size_t)bytes,
                         obj_pack_is_device(user) ? (const void *)user : dst, true);
    else if (rail_dt_is_contig(l, incount))
        memcpy(dst, rail_dt_contig_ptr(l, incount, inbuf), (size_t)bytes);
    else
        rc = rail_dt_pack_all(l, incount, inbuf, dst, (size_t)bytes, NULL);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "packing failed");
    *position = pos + bytes;
    return MPI_SUCCESS;
}

int obj_pack_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                    MPI_Count outcount, obj_datatype_t *datatype)
{
    MPI_Count bytes = 0, pos = *position;
    int rc = packed_bytes(outcount, datatype, "outcount", &bytes);
    if (rc == MPI_SUCCESS)
        rc = check_position(pos, insize, "input buffer");
    if (rc != MPI_SUCCESS)
        return rc;
    if (RAIL_UNLIKELY(bytes > insize - pos))
        return obj_errf(MPI_ERR_TRUNCATE, "%lld elements need %lld bytes, the input buffer has "
                        "%lld left", (long long)outcount, (long long)bytes,
                        (long long)(insize - pos));
    if (bytes == 0)
        return MPI_SUCCESS;
    if (RAIL_UNLIKELY(!inbuf))
        return obj_errf(MPI_ERR_BUFFER, "inbuf is NULL");
    const char *src = (const char *)inbuf + pos;
    const struct rail_dt *l = datatype->layout;
    const char *user = (const char *)outbuf + datatype->true_lb;
    if (RAIL_UNLIKELY(accel_any_device_active) &&
        (obj_pack_is_device(user) || obj_pack_is_device(src)))
        rc = pack_device(l, outcount, outbuf, (void *)src, (size_t)bytes,
                         obj_pack_is_device(user) ? (const void *)user : src, false);
    else if (rail_dt_is_contig(l, outcount))
        memcpy(rail_dt_contig_ptr(l, outcount, outbuf), src, (size_t)bytes);
    else
        rc = rail_dt_unpack_all(l, outcount, outbuf, src, (size_t)bytes, NULL);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "unpacking failed");
    *position = pos + bytes;
    return MPI_SUCCESS;
}

int obj_pack_size(MPI_Count incount, const obj_datatype_t *datatype, MPI_Count *size)
{
    return packed_bytes(incount, datatype, "incount", size);
}
