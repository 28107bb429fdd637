! The Fortran path's cost: the loops of hotpath.c that matter, from
! Fortran (mpif.h), printed as  NAME CALLS NS_PER_ITERATION  (best of 5).
program hotpath_f
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, p, rep, i, req(2), peer
  integer :: ibuf(2)
  double precision :: t0, best, x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  peer = mod(rank + 1, 2)
  best = 1d30
  do rep = 1, 5
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 200000
      call MPI_Send(ibuf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 200000 * 1d9)
  end do
  if (rank == 0) write (*, '(a,1x,i0,1x,f0.1)') 'f_send_proc_null', 1, best
  best = 1d30
  do rep = 1, 5
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 20000
      x = 1d0
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 20000 * 1d9)
  end do
  if (rank == 0) write (*, '(a,1x,i0,1x,f0.1)') 'f_allreduce_8B', 1, best
  best = 1d30
  do rep = 1, 5
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 20000
      call MPI_Irecv(ibuf(1), 1, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, req(1), ierr)
      call MPI_Isend(ibuf(2), 1, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, req(2), ierr)
      call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 20000 * 1d9)
  end do
  if (rank == 0) write (*, '(a,1x,i0,1x,f0.1)') 'f_isend_irecv_waitall', 3, best
  call MPI_Finalize(ierr)
end program hotpath_f
