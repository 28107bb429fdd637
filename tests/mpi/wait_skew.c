/* Load imbalance before collectives: rank r computes r * D microseconds
 * before each allreduce, of 1 kB to 512 kB in turn.  Durations then mostly
 * measure waiting; the profile must say so (wait share), keep the transfer
 * time small, and the fit on transfer times must not put D into alpha.
 * usage: wait_skew D_US ITERS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void spin_us(double us)
{
    double t0 = MPI_Wtime();
    while ((MPI_Wtime() - t0) * 1e6 < us)
        ;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    double d = argc > 1 ? atof(argv[1]) : 500;
    int iters = argc > 2 ? atoi(argv[2]) : 40;
    static double in[65536], out[65536];
    static const int counts[] = {128, 1024, 8192, 65536};
    for (int i = 0; i < iters; i++) {
        spin_us(rank * d);
        MPI_Allreduce(in, out, counts[i % 4], MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    /* rank 0 broadcasts late: the others wait for the root */
    for (int i = 0; i < iters / 4; i++) {
        if (rank == 0)
            spin_us(d);
        MPI_Bcast(in, 512, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
