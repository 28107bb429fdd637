! Communication from Fortran: point to point, nonblocking with every
! completion call, persistent requests, probes, collectives, MPI-IO,
! one-sided and matched probes, with
! MPI_IN_PLACE, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE as Fortran passes
! them.  Each rank keeps its own tally of calls and payload (docs/recording.md,
! "What is recorded") and prints it as  TALLY rank op calls bytes.
! usage: fortran_calls DIR  (DIR: where the MPI-IO file goes)
! Built with -DUSE_MODULE for `use mpi`, -DUSE_F08 for `use mpi_f08`,
! else with mpif.h (which also builds with -fsecond-underscore: the g77
! names mpi_send__).
program fortran_calls
#if defined(USE_F08)
  use mpi_f08
  implicit none
#elif defined(USE_MODULE)
  use mpi
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer, parameter :: maxops = 32
  character(len=32) :: names(maxops)
  integer :: ncalls(maxops), nops
  integer(kind=8) :: nbytes(maxops)
  integer :: ierr, rank, p, right, left, i, n, idx, outcount, failures, indices(4)
#ifdef USE_F08
  type(MPI_Status) :: st, sts(4)
  type(MPI_Request) :: reqs(4), req
  type(MPI_Comm) :: dup, half
  type(MPI_File) :: fh
  type(MPI_Win) :: win
  type(MPI_Message) :: msg
#else
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4), reqs(4), req, dup, half, fh, win, msg
#endif
  integer(kind=MPI_OFFSET_KIND) :: off
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp
  character(len=4096) :: dir
  integer :: ibuf(1000), ibuf2(1000), iall(64)
  double precision :: dbuf(1000), dbuf2(1000)
  logical :: flag

  nops = 0
  failures = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  right = mod(rank + 1, p)
  left = mod(rank + p - 1, p)
  ibuf = rank
  dbuf = 1.0d0

  ! blocking: 3 sends of 250 integers from 0 to 1, received with and without a status
  do i = 1, 3
    if (rank == 0) then
      call MPI_Send(ibuf, 250, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
      call tally('MPI_Send', 1000_8)
    else if (rank == 1) then
      if (i == 1) then
        call MPI_Recv(ibuf2, 1000, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, st, ierr)
        call MPI_Get_count(st, MPI_INTEGER, n, ierr)
        if (n /= 250) failures = failures + 1
      else
        call MPI_Recv(ibuf2, 1000, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      end if
      call tally('MPI_Recv', 1000_8)
    end if
  end do

  ! nonblocking exchange of 512 doubles around the ring, Waitall without statuses
  call MPI_Irecv(dbuf2, 512, MPI_DOUBLE_PRECISION, left, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(dbuf, 512, MPI_DOUBLE_PRECISION, right, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call tally('MPI_Irecv', 4096_8)
  call tally('MPI_Isend', 4096_8)
  ! with statuses, Waitany and Waitsome, Test until done
  call MPI_Irecv(ibuf2, 100, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(ibuf2(101), 100, MPI_INTEGER, left, 5, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Isend(ibuf, 30, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Isend(ibuf, 40, MPI_INTEGER, right, 5, MPI_COMM_WORLD, reqs(4), ierr)
  call tally('MPI_Irecv', 120_8)
  call tally('MPI_Irecv', 160_8)
  call tally('MPI_Isend', 120_8)
  call tally('MPI_Isend', 160_8)
  call MPI_Waitany(4, reqs, idx, st, ierr)
  if (idx < 1 .or. idx > 4) failures = failures + 1
  call MPI_Waitsome(4, reqs, outcount, indices, sts, ierr)
  call MPI_Waitall(4, reqs, sts, ierr)
  call MPI_Irecv(ibuf2, 10, MPI_INTEGER, left, 6, MPI_COMM_WORLD, req, ierr)
  call MPI_Send(ibuf, 10, MPI_INTEGER, right, 6, MPI_COMM_WORLD, ierr)
  call tally('MPI_Irecv', 40_8)
  call tally('MPI_Send', 40_8)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, st, ierr)
  end do
  call MPI_Get_count(st, MPI_INTEGER, n, ierr)
  if (n /= 10) failures = failures + 1

  ! persistent: 2 starts of 16 integers around the ring
  call MPI_Recv_init(ibuf2, 16, MPI_INTEGER, left, 8, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send_init(ibuf, 16, MPI_INTEGER, right, 8, MPI_COMM_WORLD, reqs(2), ierr)
  do i = 1, 2
    call MPI_Startall(2, reqs, ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call tally('MPI_Recv_init', 64_8)
    call tally('MPI_Send_init', 64_8)
  end do
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)

  ! sendrecv around the ring, probe then receive
  call MPI_Sendrecv(ibuf, 64, MPI_INTEGER, right, 1, ibuf2, 64, MPI_INTEGER, left, 1, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Sendrecv', 256_8)
  if (rank == 0) then
    call MPI_Send(ibuf, 21, MPI_INTEGER, 1, 11, MPI_COMM_WORLD, ierr)
    call tally('MPI_Send', 84_8)
  else if (rank == 1) then
    call MPI_Probe(0, 11, MPI_COMM_WORLD, st, ierr)
    call tally('MPI_Probe', 84_8)
    call MPI_Recv(ibuf2, 100, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, st, ierr)
    call tally('MPI_Recv', 84_8)
  end if

  ! collectives, in place where Fortran passes MPI_IN_PLACE
  call MPI_Allreduce(MPI_IN_PLACE, dbuf, 100, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call tally('MPI_Allreduce', 800_8)
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, ibuf, 10, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  else
    call MPI_Reduce(ibuf, ibuf2, 10, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  call tally('MPI_Reduce', 40_8)
  call MPI_Bcast(ibuf, 33, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call tally('MPI_Bcast', 132_8)
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, iall, 4, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call tally('MPI_Alltoall', int(p * 16, 8))
  call MPI_Allgather(ibuf, 2, MPI_INTEGER, iall, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call tally('MPI_Allgather', int(p * 8, 8))
  call MPI_Iallreduce(MPI_IN_PLACE, dbuf, 50, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call tally('MPI_Iallreduce', 400_8)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call tally('MPI_Barrier', 0_8)
#ifdef USE_F08
  ! ierror is optional in mpi_f08
  call MPI_Barrier(MPI_COMM_WORLD)
  call tally('MPI_Barrier', 0_8)
#endif
  ! on communicators made from Fortran
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, dbuf, 10, MPI_DOUBLE_PRECISION, MPI_SUM, dup, ierr)
  call tally('MPI_Allreduce', 80_8)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call MPI_Bcast(ibuf, 5, MPI_INTEGER, 0, half, ierr)
  call tally('MPI_Bcast', 20_8)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(half, ierr)
  if (dup /= MPI_COMM_NULL .or. half /= MPI_COMM_NULL) failures = failures + 1
  ! a periodic ring (2 neighbours), a node communicator, a nonblocking duplicate
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [p], [.true.], .false., dup, ierr)
  call MPI_Neighbor_allgather(ibuf, 1, MPI_INTEGER, iall, 1, MPI_INTEGER, dup, ierr)
  call tally('MPI_Neighbor_allgather', 8_8)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, half, ierr)
  call MPI_Bcast(ibuf, 3, MPI_INTEGER, 0, half, ierr)
  call tally('MPI_Bcast', 12_8)
  call MPI_Comm_free(half, ierr)
  call MPI_Comm_idup(MPI_COMM_WORLD, dup, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, dbuf, 1, MPI_DOUBLE_PRECISION, MPI_SUM, dup, ierr)
  call tally('MPI_Allreduce', 8_8)
  call MPI_Comm_free(dup, ierr)

  ! MPI-IO: 100 integers per rank at its own offset, written collectively, read back
  call get_command_argument(1, dir)
  call MPI_File_open(MPI_COMM_WORLD, trim(dir)//'/fortran_calls.dat', MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  call tally('MPI_File_open', 0_8)
  off = rank * 400
  call MPI_File_write_at_all(fh, off, ibuf, 100, MPI_INTEGER, st, ierr)
  call tally('MPI_File_write_at_all', 400_8)
  ! sync, barrier, sync: what MPI asks for the data to be there for every reader
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_sync(fh, ierr)
  call tally('MPI_File_sync', 0_8)
  call tally('MPI_File_sync', 0_8)
  call tally('MPI_Barrier', 0_8)
  call MPI_File_read_at(fh, off, ibuf2, 100, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call tally('MPI_File_read_at', 400_8)
  call MPI_File_close(fh, ierr)
  call tally('MPI_File_close', 0_8)
  ! one-sided: 10 integers put to the right between fences
  winsize = 400
  call MPI_Win_create(ibuf2, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call tally('MPI_Win_create', 0_8)
  call MPI_Win_fence(0, win, ierr)
  call tally('MPI_Win_fence', 0_8)
  disp = 0
  call MPI_Put(ibuf, 10, MPI_INTEGER, right, disp, 10, MPI_INTEGER, win, ierr)
  call tally('MPI_Put', 40_8)
  call MPI_Win_fence(0, win, ierr)
  call tally('MPI_Win_fence', 0_8)
  call MPI_Win_free(win, ierr)
  call tally('MPI_Win_free', 0_8)
  ! matched probe and receive of 12 integers from 0 to 1
  if (rank == 0) then
    call MPI_Send(ibuf, 12, MPI_INTEGER, 1, 12, MPI_COMM_WORLD, ierr)
    call tally('MPI_Send', 48_8)
  else if (rank == 1) then
    call MPI_Mprobe(0, 12, MPI_COMM_WORLD, msg, st, ierr)
    call tally('MPI_Mprobe', 48_8)
    call MPI_Mrecv(ibuf2, 12, MPI_INTEGER, msg, MPI_STATUS_IGNORE, ierr)
    call tally('MPI_Mrecv', 48_8)
  end if

  do i = 1, nops
    write (*, '(a,i0,1x,a,1x,i0,1x,i0)') 'TALLY ', rank, trim(names(i)), ncalls(i), nbytes(i)
  end do
  flush (6)
  if (failures > 0) write (0, *) 'rank', rank, ':', failures, 'statuses or indices wrong'
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1

contains

  subroutine tally(op, b)
    character(len=*), intent(in) :: op
    integer(kind=8), intent(in) :: b
    integer :: k
    do k = 1, nops
      if (names(k) == op) then
        ncalls(k) = ncalls(k) + 1
        nbytes(k) = nbytes(k) + b
        return
      end if
    end do
    nops = nops + 1
    names(nops) = op
    ncalls(nops) = 1
    nbytes(nops) = b
  end subroutine tally

end program fortran_calls
