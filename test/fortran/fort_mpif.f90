! mpif.h in fixed form (compiled with -ffixed-form): point-to-point with
! statuses, allreduce (also in place), bcast, an error through
! MPI_ERRORS_RETURN, attributes, MPI_Wtime.
      PROGRAM FMPIF
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, NEXT, PREV, REQ, CNT, ICLASS
      INTEGER SBUF(10), RBUF(10), STATUS(MPI_STATUS_SIZE), ISUM
      INTEGER(KIND=MPI_ADDRESS_KIND) TAGUB
      LOGICAL FLAG
      DOUBLE PRECISION T0
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      T0 = MPI_WTIME()
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
      DO I = 1, 10
         SBUF(I) = RANK * 100 + I
         RBUF(I) = -1
      END DO
      CALL MPI_ISEND(SBUF, 10, MPI_INTEGER, NEXT, 7, MPI_COMM_WORLD,
     &               REQ, IERR)
      CALL MPI_RECV(RBUF, 10, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG,
     &              MPI_COMM_WORLD, STATUS, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'recv ierror')
      CALL CHECK(STATUS(MPI_SOURCE) .EQ. PREV, 'status source')
      CALL CHECK(STATUS(MPI_TAG) .EQ. 7, 'status tag')
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, CNT, IERR)
      CALL CHECK(CNT .EQ. 10, 'get_count')
      DO I = 1, 10
         CALL CHECK(RBUF(I) .EQ. PREV * 100 + I, 'received data')
      END DO
      CALL MPI_WAIT(REQ, MPI_STATUS_IGNORE, IERR)
      CALL CHECK(REQ .EQ. MPI_REQUEST_NULL, 'request freed')
      CALL MPI_ALLREDUCE(RANK, ISUM, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      CALL CHECK(ISUM .EQ. NP * (NP - 1) / 2, 'allreduce')
      ISUM = RANK + 1
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ISUM, 1, MPI_INTEGER, MPI_MAX,
     &                   MPI_COMM_WORLD, IERR)
      CALL CHECK(ISUM .EQ. NP, 'allreduce in place')
      IF (RANK .EQ. NP - 1) SBUF(1) = 4242
      CALL MPI_BCAST(SBUF, 1, MPI_INTEGER, NP - 1, MPI_COMM_WORLD, IERR)
      CALL CHECK(SBUF(1) .EQ. 4242, 'bcast')
      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, TAGUB, FLAG,
     &                       IERR)
      CALL CHECK(FLAG .AND. TAGUB .GE. 32767, 'MPI_TAG_UB')
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &                             IERR)
      CALL MPI_SEND(SBUF, 1, MPI_INTEGER, NP, 0, MPI_COMM_WORLD, IERR)
      CALL MPI_ERROR_CLASS(IERR, ICLASS, I)
      CALL CHECK(ICLASS .EQ. MPI_ERR_RANK, 'invalid rank reported')
      CALL CHECK(MPI_WTIME() .GE. T0, 'wtime')
      CALL MPI_FINALIZE(IERR)
      IF (RANK .EQ. 0) PRINT *, 'fort_mpif: ok'
      END

      SUBROUTINE CHECK(OK, WHAT)
      LOGICAL OK
      CHARACTER*(*) WHAT
      INCLUDE 'mpif.h'
      INTEGER IERR
      IF (.NOT. OK) THEN
         PRINT *, 'FAIL: ', WHAT
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      END
