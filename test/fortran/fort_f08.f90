! use mpi_f08: handle types, MPI_Status, optional ierror, big-count
! overloads, and array sections as buffers (MPI-4.1 19.1.12): strided and
! 2-D sections in blocking calls, in nonblocking ones, and in a collective;
! the nonblocking section the glue refuses.
program fort_f08
  use mpi_f08
  implicit none
  integer :: rank, np, next, prev, i, j, cnt, ierr, isum, cls
  integer :: a(20), b(20), m(5, 5), r(5, 5)
  integer :: fstat(MPI_STATUS_SIZE)
  type(MPI_Status) :: st, st2
  type(MPI_Request) :: reqs(2)
  type(MPI_Comm) :: dup
  integer(kind=MPI_COUNT_KIND) :: big

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)

  ! Plain send/recv with a status, and a big-count send (MPI_Send_c).
  a = [(rank * 100 + i, i = 1, 20)]
  b = -1
  big = 4
  call MPI_Isend(a, 4, MPI_INTEGER, next, 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Recv(b, 20, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, st, ierr)
  call fort_check(ierr == MPI_SUCCESS, 'recv')
  call fort_check(st%MPI_SOURCE == prev .and. st%MPI_TAG == 1, 'status fields')
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call fort_check(cnt == 4 .and. all(b(1:4) == [(prev * 100 + i, i = 1, 4)]), 'recv data')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  call fort_check(reqs(1) == MPI_REQUEST_NULL, 'wait frees the request')
  call MPI_Sendrecv(a, big, MPI_INTEGER, next, 2, b, big, MPI_INTEGER, prev, 2, &
                    MPI_COMM_WORLD, st)
  call fort_check(all(b(1:4) == [(prev * 100 + i, i = 1, 4)]), 'sendrecv_c data')

  ! A strided section sent and received (blocking): every other element.
  b = -1
  call MPI_Sendrecv(a(1:20:2), 10, MPI_INTEGER, next, 3, b(2:20:2), 10, MPI_INTEGER, prev, 3, &
                    MPI_COMM_WORLD, st)
  call fort_check(all(b(2:20:2) == [(prev * 100 + i, i = 1, 20, 2)]), 'strided section received')
  call fort_check(all(b(1:19:2) == -1), 'elements between the section untouched')

  ! A 2-D section: rows 2-4 of columns 1, 3, 5, nonblocking on both sides.
  m = reshape([(rank * 1000 + i, i = 1, 25)], [5, 5])
  r = -1
  call MPI_Irecv(r(1:5:2, 2:4), 9, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(m(2:4, 1:5:2), 9, MPI_INTEGER, next, 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  do j = 1, 3
    do i = 1, 3
      call fort_check(r(2 * i - 1, j + 1) == prev * 1000 + (2 * j - 2) * 5 + i + 1, '2-D section')
    end do
  end do
  call fort_check(all(r(2:4:2, :) == -1) .and. all(r(:, 1) == -1) .and. all(r(:, 5) == -1), &
             '2-D section leaves the rest')

  ! Collectives: allreduce on a section in place, bcast of a section.
  a = 1
  call MPI_Allreduce(MPI_IN_PLACE, a(1:20:4), 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call fort_check(all(a(1:20:4) == np) .and. all(a(2:20:4) == 1), 'allreduce in place on a section')
  call MPI_Allreduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call fort_check(isum == np * (np - 1) / 2, 'allreduce')
  b = 0
  if (rank == 0) b(20:1:-3) = [(i, i = 1, 7)]
  call MPI_Bcast(b(20:1:-3), 7, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call fort_check(all(b(20:1:-3) == [(i, i = 1, 7)]) .and. b(19) == 0, 'bcast of a reversed section')

  ! Handles compare; statuses convert between the bindings.
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call fort_check(dup /= MPI_COMM_WORLD .and. .not. (dup == MPI_COMM_NULL), 'handle compare')
  call MPI_Comm_free(dup)
  call fort_check(dup == MPI_COMM_NULL, 'comm_free')
  call MPI_Status_f082f(st, fstat)
  call fort_check(fstat(MPI_SOURCE) == prev .and. fstat(MPI_TAG) == 3, 'status_f082f')
  call MPI_Status_f2f08(fstat, st2)
  call fort_check(st2%MPI_SOURCE == prev .and. st2%MPI_TAG == 3, 'status_f2f08')

  ! A nonblocking section the glue cannot describe in place (send and
  ! receive buffers share one datatype): MPI_ERR_BUFFER through
  ! MPI_COMM_SELF's errhandler, on every rank, so no collective starts.
  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
  call MPI_Iallreduce(a(1:20:2), b(1:20:2), 10, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                      reqs(1), ierr)
  call MPI_Error_class(ierr, cls)
  call fort_check(cls == MPI_ERR_BUFFER, 'nonblocking section without a datatype of its own')

  call MPI_Finalize(ierr)
  call fort_check(ierr == MPI_SUCCESS, 'finalize')
  if (rank == 0) print *, 'fort_f08: ok'
end program
