! allreduce_mpi.F90: a Fortran MPI program that knows nothing of multilane,
! built with `use mpi`, or with -DMPIF_H with `include 'mpif.h'`, or with
! -DF08 with `use mpi_f08` (the last two start MPI with MPI_INIT_THREAD).  It checks every MPI_ALLREDUCE element for
! element against the result computed from the ranks' values (small integers,
! so the system MPI's result is exactly that too, in any order): several types
! and ops, out of place and in place (MPI_IN_PLACE), on MPI_COMM_WORLD and on a
! split communicator; plus one MPI_IALLREDUCE.  Prints "fortran_allreduce ok rank R calls N" or
! stops with code 1.
!
! MPI_ALLREDUCE calls per rank: 6 per round x 2 rounds on MPI_COMM_WORLD and 6
! on the split communicator, 18 (the tests count them), and 1 MPI_IALLREDUCE.
program fortran_allreduce
#if defined(F08)
  use mpi_f08
  implicit none
#define HANDLE(kind) type(kind)
#elif defined(MPIF_H)
  implicit none
  include 'mpif.h'
#define HANDLE(kind) integer
#else
  use mpi
  implicit none
#define HANDLE(kind) integer
#endif
  integer, parameter :: n = 20000
  integer :: ierr, rank, size, provided, calls, bad, round
  HANDLE(MPI_Comm) :: split
  HANDLE(MPI_Request) :: req
  double precision, allocatable :: d(:), dsum(:), dmax(:), dout(:)
  real, allocatable :: r(:), rmin(:)
  integer, allocatable :: k(:), ksum(:), kmax(:), kout(:)
  integer :: i

#if defined(MPIF_H) || defined(F08)
  call MPI_INIT_THREAD(MPI_THREAD_FUNNELED, provided, ierr)
#else
  call MPI_INIT(ierr)
  provided = 0
#endif
  if (ierr /= MPI_SUCCESS) stop 1
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  allocate(d(n), dsum(n), dmax(n), dout(n), r(n), rmin(n), k(n), ksum(n), kmax(n), kout(n))
  bad = 0
  calls = 0

  do round = 1, 2
    call check_comm(MPI_COMM_WORLD, 0, 1, round)
  end do
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, split, ierr)
  call check_comm(split, mod(rank, 2), 2, 3)
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

  ! The values rank `rk` contributes: small integers, so every sum is exact.
  double precision function dv(i, rk, seed)
    integer, intent(in) :: i, rk, seed
    dv = dble(mod(i * 7 + rk * 13 + seed, 101))
  end function dv
  real function rv(i, rk, seed)
    integer, intent(in) :: i, rk, seed
    rv = real(mod(i * 3 + rk * 5 + seed, 61))
  end function rv
  integer function kv(i, rk, seed)
    integer, intent(in) :: i, rk, seed
    kv = mod(i * 11 + rk * 17 + seed, 1009) - 500
  end function kv

  ! Six calls on `comm`, whose members are the world ranks first, first +
  ! stride, ...: double SUM and MAX, integer MAX out of place; real MIN,
  ! integer SUM and double SUM in place.  Each result is compared with the
  ! sum, maximum or minimum computed here first from the members' values.
  subroutine check_comm(comm, first, stride, seed)
    HANDLE(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: first, stride, seed
    integer :: m
    dsum = 0
    dmax = -1
    ksum = 0
    kmax = -huge(0)
    rmin = huge(0.0)
    do i = 1, n
      d(i) = dv(i, rank, seed)
      r(i) = rv(i, rank, seed)
      k(i) = kv(i, rank, seed)
      do m = first, size - 1, stride
        dsum(i) = dsum(i) + dv(i, m, seed)
        dmax(i) = max(dmax(i), dv(i, m, seed))
        ksum(i) = ksum(i) + kv(i, m, seed)
        kmax(i) = max(kmax(i), kv(i, m, seed))
        rmin(i) = min(rmin(i), rv(i, m, seed))
      end do
    end do
    call MPI_ALLREDUCE(d, dout, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    if (ierr /= MPI_SUCCESS) bad = bad + 1
    if (any(dout /= dsum)) bad = bad + 1
    call MPI_ALLREDUCE(MPI_IN_PLACE, dout, n, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
    if (any(dout /= dsum * ((size - first + stride - 1) / stride))) bad = bad + 1
    call MPI_ALLREDUCE(d, dout, n, MPI_DOUBLE_PRECISION, MPI_MAX, comm, ierr)
    if (any(dout /= dmax)) bad = bad + 1
    call MPI_ALLREDUCE(k, kout, n, MPI_INTEGER, MPI_MAX, comm, ierr)
    if (any(kout /= kmax)) bad = bad + 1
    call MPI_ALLREDUCE(MPI_IN_PLACE, k, n, MPI_INTEGER, MPI_SUM, comm, ierr)
    if (any(k /= ksum)) bad = bad + 1
    call MPI_ALLREDUCE(MPI_IN_PLACE, r, n, MPI_REAL, MPI_MIN, comm, ierr)
    if (any(r /= rmin)) bad = bad + 1
    calls = calls + 6
  end subroutine check_comm

end program fortran_allreduce
