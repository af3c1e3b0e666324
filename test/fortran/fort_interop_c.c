/* The C half of fort_interop.f90: conversions of handles and statuses. */
#include <mpi.h>
#include <stdio.h>

#define FAIL(...) (fprintf(stderr, "FAIL: " __VA_ARGS__), 1)

int interop_check_comm(MPI_Fint fcomm, int fsize)
{
    MPI_Comm c = MPI_Comm_f2c(fcomm);
    int size = -1;
    if (c == MPI_COMM_NULL || MPI_Comm_size(c, &size) != MPI_SUCCESS || size != fsize)
        return FAIL("MPI_Comm_f2c(%d): size %d, Fortran says %d\n", (int)fcomm, size, fsize);
    if (MPI_Comm_c2f(c) != fcomm)
        return FAIL("MPI_Comm_c2f does not give back %d\n", (int)fcomm);
    return 0;
}

int interop_make_comm(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    return MPI_Comm_c2f(c);
}

int interop_check_status(const MPI_Fint *fstat, const MPI_F08_status *st08, int source, int tag)
{
    MPI_Status a, b;
    int count = -1;
    if (MPI_Status_f2c(fstat, &a) != MPI_SUCCESS || MPI_Status_f082c(st08, &b) != MPI_SUCCESS)
        return FAIL("status conversion failed\n");
    if (a.MPI_SOURCE != source || a.MPI_TAG != tag || b.MPI_SOURCE != source || b.MPI_TAG != tag)
        return FAIL("statuses say %d/%d and %d/%d, expected %d/%d\n", a.MPI_SOURCE, a.MPI_TAG,
                    b.MPI_SOURCE, b.MPI_TAG, source, tag);
    MPI_Get_count(&b, MPI_INT, &count);
    if (count != 1)
        return FAIL("count %d from the f08 status\n", count);
    return 0;
}

int interop_ignore_addresses(const MPI_Fint *fstat, const MPI_Fint *fstats,
                             const MPI_F08_status *st08)
{
    if (fstat != MPI_F_STATUS_IGNORE || fstats != MPI_F_STATUSES_IGNORE ||
        st08 != MPI_F08_STATUS_IGNORE)
        return FAIL("the Fortran MPI_STATUS_IGNORE is not MPI_F_STATUS_IGNORE in C\n");
    return 0;
}
