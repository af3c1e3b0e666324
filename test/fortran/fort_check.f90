! The check of the Fortran tests: a failed condition prints what failed
! and aborts the job (no rank waits for the others).
subroutine fort_check(ok, what)
  use mpi_f08, only: MPI_Abort, MPI_COMM_WORLD
  implicit none
  logical, intent(in) :: ok
  character(len=*), intent(in) :: what
  if (.not. ok) then
    print *, 'FAIL: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
end subroutine
