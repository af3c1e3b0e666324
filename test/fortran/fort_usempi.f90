! use mpi: the same calls with explicit interfaces, plus nonblocking
! Waitall with statuses, a user reduction, a communicator's name, split.
program fort_usempi
  use mpi
  implicit none
  integer :: ierr, rank, np, i, next, prev, reqs(2), stats(MPI_STATUS_SIZE, 2), cnt
  integer :: sbuf(10), rbuf(10), isum, op, sub, subsize, rlen
  double precision :: dv(3), dr(3)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  external :: absmax

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  sbuf = [(rank * 100 + i, i = 1, 10)]
  rbuf = -1
  call MPI_Irecv(rbuf, 10, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 10, MPI_INTEGER, next, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, stats, ierr)
  call fort_check(ierr == MPI_SUCCESS, 'waitall')
  call fort_check(stats(MPI_SOURCE, 1) == prev .and. stats(MPI_TAG, 1) == 3, 'waitall status')
  call MPI_Get_count(stats(:, 1), MPI_INTEGER, cnt, ierr)
  call fort_check(cnt == 10, 'get_count')
  call fort_check(all(rbuf == [(prev * 100 + i, i = 1, 10)]), 'irecv data')

  call MPI_Allreduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call fort_check(isum == np * (np - 1) / 2, 'allreduce')
  dv = [dble(-rank), dble(rank), 0.5d0]
  call MPI_Op_create(absmax, .true., op, ierr)
  call fort_check(ierr == MPI_SUCCESS, 'op_create')
  call MPI_Allreduce(dv, dr, 3, MPI_DOUBLE_PRECISION, op, MPI_COMM_WORLD, ierr)
  call fort_check(all(dr == [dble(np - 1), dble(np - 1), 0.5d0]), 'user op')
  call MPI_Op_free(op, ierr)
  call fort_check(op == MPI_OP_NULL, 'op_free')

  if (rank == 0) dv = [1d0, 2d0, 3d0]
  call MPI_Bcast(dv, 3, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call fort_check(all(dv == [1d0, 2d0, 3d0]), 'bcast')

  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub, ierr)
  call MPI_Comm_size(sub, subsize, ierr)
  call fort_check(subsize == (np + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_Comm_set_name(sub, 'halves  ', ierr)
  call MPI_Comm_get_name(sub, name, rlen, ierr)
  call fort_check(name == 'halves' .and. rlen == 6, 'comm name')
  call MPI_Comm_free(sub, ierr)
  call fort_check(sub == MPI_COMM_NULL, 'comm_free')
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'fort_usempi: ok'
end program

subroutine absmax(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  double precision :: invec(len), inoutvec(len)
  do i = 1, len
    inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
  end do
end subroutine
