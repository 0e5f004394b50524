! allreduce_mpi.F90: a Fortran MPI program that knows nothing of multilane,
! built with `use mpi` or, with -DMPIF_H, with `include 'mpif.h'` (which also
! starts MPI with MPI_INIT_THREAD).  It checks MPI_ALLREDUCE against the
! system MPI's own (PMPI_ALLREDUCE), element for element: several types and
! ops, out of place and in place (MPI_IN_PLACE), on MPI_COMM_WORLD and on a
! split communicator, plus one MPI_IALLREDUCE.  Values are small integers, so every sum is
! exact whatever the order.  Prints "fortran_allreduce ok rank R calls N" or
! stops with code 1.
!
! MPI_ALLREDUCE calls per rank: 6 per round x 2 rounds on MPI_COMM_WORLD and 6
! on the split communicator, 18 (the tests count them), and 1 MPI_IALLREDUCE.
program fortran_allreduce
#ifdef MPIF_H
  implicit none
  include 'mpif.h'
#else
  use mpi
  implicit none
#endif
  integer, parameter :: n = 20000
  integer :: ierr, rank, size, provided, split, calls, bad, round
  double precision, allocatable :: d(:), dref(:), dout(:)
  real, allocatable :: r(:), rref(:)
  integer, allocatable :: k(:), kref(:), kout(:)
  integer :: req, i

#ifdef MPIF_H
  call MPI_INIT_THREAD(MPI_THREAD_FUNNELED, provided, ierr)
#else
  call MPI_INIT(ierr)
  provided = 0
#endif
  if (ierr /= MPI_SUCCESS) stop 1
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  allocate(d(n), dref(n), dout(n), r(n), rref(n), k(n), kref(n), kout(n))
  bad = 0
  calls = 0

  do round = 1, 2
    call check_world(round)
  end do
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, split, ierr)
  call check_comm(split, 3)
  call MPI_COMM_FREE(split, ierr)

  ! A nonblocking one: passed to the system MPI, counted.
  d = dble(rank)
  call MPI_IALLREDUCE(d, dout, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  if (any(dout /= dble(size * (size - 1) / 2))) bad = bad + 1

  if (bad /= 0) then
    print '(a,i0,a,i0)', 'fortran_allreduce WRONG rank ', rank, ' bad ', bad
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    stop 1
  end if
  print '(a,i0,a,i0)', 'fortran_allreduce ok rank ', rank, ' calls ', calls
  call MPI_FINALIZE(ierr)

contains

  subroutine fill(seed)
    integer, intent(in) :: seed
    do i = 1, n
      d(i) = dble(mod(i * 7 + rank * 13 + seed, 101))
      r(i) = real(mod(i * 3 + rank * 5 + seed, 61))
      k(i) = mod(i * 11 + rank * 17 + seed, 1009) - 500
    end do
  end subroutine fill

  ! Six calls on `comm`: double SUM and MAX, integer MAX out of place; real
  ! MIN, integer SUM and double SUM in place.
  subroutine check_comm(comm, seed)
    integer, intent(in) :: comm, seed
    call fill(seed)
    call PMPI_ALLREDUCE(d, dref, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    call MPI_ALLREDUCE(d, dout, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    if (ierr /= MPI_SUCCESS .or. any(dout /= dref)) bad = bad + 1
    call PMPI_ALLREDUCE(d, dref, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
    call MPI_ALLREDUCE(d, dout, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
    if (any(dout /= dref)) bad = bad + 1
    call PMPI_ALLREDUCE(k, kref, n, MPI_INTEGER, MPI_MAX, comm, ierr)
    call MPI_ALLREDUCE(k, kout, n, MPI_INTEGER, MPI_MAX, comm, ierr)
    if (any(kout /= kref)) bad = bad + 1
    call PMPI_ALLREDUCE(r, rref, n, MPI_REAL, MPI_MIN, comm, ierr)
    call MPI_ALLREDUCE(MPI_IN_PLACE, r, n, MPI_REAL, MPI_MIN, comm, ierr)
    if (any(r /= rref)) bad = bad + 1
    call PMPI_ALLREDUCE(k, kref, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    call MPI_ALLREDUCE(MPI_IN_PLACE, k, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    if (any(k /= kref)) bad = bad + 1
    call PMPI_ALLREDUCE(d, dref, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    dout = d
    call MPI_ALLREDUCE(MPI_IN_PLACE, dout, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    if (any(dout /= dref)) bad = bad + 1
    calls = calls + 6
  end subroutine check_comm

  subroutine check_world(seed)
    integer, intent(in) :: seed
    call check_comm(MPI_COMM_WORLD, seed)
  end subroutine check_world

end program fortran_allreduce
