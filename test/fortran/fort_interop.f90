! Handles and statuses between C and Fortran in one program: the Fortran
! part passes handles and statuses of both bindings to C
! (fort_interop_c.c), which converts them with MPI_Comm_f2c,
! MPI_Status_f2c, MPI_Status_f082c... and hands back handles it made.
program fort_interop
  use mpi_f08
  use mpi, only: F_STATUS_IGNORE => MPI_STATUS_IGNORE, F_STATUSES_IGNORE => MPI_STATUSES_IGNORE
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function interop_check_comm(fcomm, fsize) bind(c)
      import :: c_int
      integer(c_int), value :: fcomm, fsize
    end function
    integer(c_int) function interop_make_comm() bind(c)
      import :: c_int
    end function
    integer(c_int) function interop_check_status(fstat, st08, source, tag) bind(c)
      import :: c_int, MPI_Status, MPI_STATUS_SIZE
      integer(c_int), intent(in) :: fstat(MPI_STATUS_SIZE)
      type(MPI_Status), intent(in) :: st08
      integer(c_int), value :: source, tag
    end function
    integer(c_int) function interop_ignore_addresses(fstat, fstats, st08) bind(c)
      import :: c_int, MPI_Status, MPI_STATUS_SIZE
      integer(c_int), intent(in) :: fstat(MPI_STATUS_SIZE), fstats(MPI_STATUS_SIZE, 1)
      type(MPI_Status), intent(in) :: st08
    end function
  end interface
  integer :: rank, np, fstat(MPI_STATUS_SIZE), sz, x
  type(MPI_Status) :: st
  type(MPI_Comm) :: c, half
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), 0, half)
  call MPI_Comm_size(half, sz)
  call fort_check(interop_check_comm(half%MPI_VAL, sz) == 0, 'C sees the Fortran communicator')
  c%MPI_VAL = interop_make_comm()
  call MPI_Comm_size(c, sz)
  call fort_check(sz == np, 'Fortran uses the C communicator')
  call MPI_Comm_free(c)
  call MPI_Comm_free(half)
  x = rank
  call MPI_Sendrecv_replace(x, 1, MPI_INTEGER, mod(rank + 1, np), 9, MPI_ANY_SOURCE, &
                            MPI_ANY_TAG, MPI_COMM_WORLD, st)
  call MPI_Status_f082f(st, fstat)
  call fort_check(interop_check_status(fstat, st, mod(rank + np - 1, np), 9) == 0, &
             'C reads both statuses')
  call fort_check(interop_ignore_addresses(F_STATUS_IGNORE, F_STATUSES_IGNORE, &
             MPI_STATUS_IGNORE) == 0, 'MPI_F_STATUS(ES)_IGNORE are the Fortran ones')
  call MPI_Finalize()
  if (rank == 0) print *, 'fort_interop: ok'
end program
