/*
 * Run-time helpers of the Fortran glue: the sentinel variables (the common
 * blocks of mpif.h and the modules live here), strings, statuses, handle
 * arrays, indices, attribute values, and the Fortran-only procedures
 * MPI_F_sync_reg.
 */
#include "fortran/fort_glue.h"

#include <string.h>

/* Common blocks /MPI_FORT_xxx/: defined here, so that every Fortran unit
 * and the C glue see one address for each. */
#define FORT_COMMON __attribute__((aligned(32)))   /* as gfortran aligns them */
FORT_COMMON MPI_Fint mpi_fort_bottom_;
FORT_COMMON MPI_Fint mpi_fort_in_place_;
FORT_COMMON MPI_Fint mpi_fort_buffer_automatic_;
FORT_COMMON MPI_Fint mpi_fort_status_ignore_[MPI_F_STATUS_SIZE];
FORT_COMMON MPI_Fint mpi_fort_statuses_ignore_[MPI_F_STATUS_SIZE];
FORT_COMMON MPI_Fint mpi_fort_status_ignore_f08_[MPI_F_STATUS_SIZE];
FORT_COMMON MPI_Fint mpi_fort_statuses_ignore_f08_[MPI_F_STATUS_SIZE];
FORT_COMMON MPI_Fint mpi_fort_errcodes_ignore_[1];
FORT_COMMON MPI_Fint mpi_fort_unweighted_[1];
FORT_COMMON MPI_Fint mpi_fort_weights_empty_[1];

/* MPI_F_STATUS_IGNORE etc. of mpi.h are the addresses of the Fortran ones
 * once the Fortran library is loaded (MPI-4.1 19.3.5). */
__attribute__((constructor)) static void fort_glue_init(void)
{
    MPI_F_STATUS_IGNORE = mpi_fort_status_ignore_;
    MPI_F_STATUSES_IGNORE = mpi_fort_statuses_ignore_;
    MPI_F08_STATUS_IGNORE = (MPI_F08_status *)mpi_fort_status_ignore_f08_;
    MPI_F08_STATUSES_IGNORE = (MPI_F08_status *)mpi_fort_statuses_ignore_f08_;
}

void *fort_addr(const void *p)
{
    if (p == &mpi_fort_bottom_)
        return MPI_BOTTOM;
    if (p == &mpi_fort_in_place_)
        return MPI_IN_PLACE;
    if (p == &mpi_fort_buffer_automatic_)
        return MPI_BUFFER_AUTOMATIC;
    if (p == mpi_fort_errcodes_ignore_)
        return MPI_ERRCODES_IGNORE;
    if (p == mpi_fort_unweighted_)
        return MPI_UNWEIGHTED;
    if (p == mpi_fort_weights_empty_)
        return MPI_WEIGHTS_EMPTY;
    return (void *)p;
}

MPI_Status *fort_status(MPI_Fint *s)
{
    if (s == mpi_fort_status_ignore_ || s == mpi_fort_status_ignore_f08_)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)s;
}

MPI_Status *fort_statuses(MPI_Fint *s)
{
    if (s == mpi_fort_statuses_ignore_ || s == mpi_fort_statuses_ignore_f08_)
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)s;
}

char *fort_cstr(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    size_t skip = 0;
    while (skip < len && s[skip] == ' ')
        skip++;
    char *c = malloc(len - skip + 1);
    if (c) {
        memcpy(c, s + skip, len - skip);
        c[len - skip] = '\0';
    }
    return c;
}

/* The C procedures write up to their MPI_MAX_* size (the largest is the
 * library version string) or the length they are given. */
char *fort_cbuf(const char *s, size_t len)
{
    (void)s;
    return calloc(len + MPI_MAX_LIBRARY_VERSION_STRING + 1, 1);
}

void fort_fstr(int rc, char *dst, size_t len, char *src)
{
    if (src && rc == MPI_SUCCESS) {
        size_t n = strnlen(src, len);
        memcpy(dst, src, n);
        memset(dst + n, ' ', len - n);
    }
    free(src);
}

void *fort_halloc(MPI_Count n, size_t size, int *rc)
{
    if (*rc != MPI_SUCCESS)
        return NULL;
    /* Zeroed: an output the call leaves alone converts to the null handle. */
    void *p = calloc((size_t)(n > 0 ? n : 1), size);
    if (!p)
        *rc = MPI_ERR_NO_MEM;
    return p;
}

MPI_Count fort_comm_peer_size(MPI_Comm comm)
{
    int inter = 0, n = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return 0;
    (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &n);
    return n;
}

int fort_raise(int rc)
{
    PMPI_Comm_call_errhandler(MPI_COMM_SELF, rc);
    return rc;
}

void fort_index_out(int rc, MPI_Fint *idx, int n)
{
    if (rc != MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++)
        if (idx[i] >= 0)
            idx[i]++;
}

/* Predefined attributes hold a pointer to an int in C; Fortran gets the
 * int.  Others hold the INTEGER(MPI_ADDRESS_KIND) a Fortran program set. */
intptr_t fort_attr_value(int keyval, void *val)
{
    switch (keyval) {
    case MPI_TAG_UB: case MPI_IO: case MPI_HOST: case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE: case MPI_APPNUM: case MPI_LASTUSEDCODE:
    case MPI_WIN_DISP_UNIT: case MPI_WIN_CREATE_FLAVOR: case MPI_WIN_MODEL:
        return val ? *(int *)val : 0;
    case MPI_WIN_SIZE:
        return val ? *(MPI_Aint *)val : 0;
    default:
        return (intptr_t)val;
    }
}

/* MPI_F_sync_reg: its only effect is that the compiler must assume the
 * buffer is read and written here. */
void mpi_f_sync_reg_(void *buf)
{
    __asm__ __volatile__("" : : "r"(buf) : "memory");
}

void mpi_f_sync_reg_f08(CFI_cdesc_t *buf)
{
    __asm__ __volatile__("" : : "r"(buf) : "memory");
}
