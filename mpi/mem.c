/* MPI_Alloc_mem / MPI_Free_mem: cache-line aligned host memory (the info
 * key mpi_minimum_memory_alignment asks for more). */
#include "mpi/mpi_err.h"
#include "obj/info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mpii_alloc_mem(MPI_Aint size, obj_info_t *info, void *baseptr)
{
    if (size < 0)
        return obj_errf(MPI_ERR_SIZE, "negative size %lld", (long long)size);
    size_t align = RAIL_CACHELINE;
    const char *a = obj_info_value(info, "mpi_minimum_memory_alignment");
    if (a) {
        char *end;
        unsigned long long v = strtoull(a, &end, 10);
        if (*end || v == 0 || (v & (v - 1)))
            return obj_errf(MPI_ERR_INFO_VALUE,
                            "mpi_minimum_memory_alignment \"%s\" is not a power of two", a);
        if (v > align)
            align = (size_t)v;
    }
    void *p = NULL;
    int rc = posix_memalign(&p, align, size ? (size_t)size : 1);
    if (rc != 0)
        return obj_errf(MPI_ERR_NO_MEM, "cannot allocate %lld bytes: %s", (long long)size,
                        strerror(rc));
    memcpy(baseptr, &p, sizeof(p));
    return MPI_SUCCESS;
}

int mpii_free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
