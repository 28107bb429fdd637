/* A Horovod-style exchange: per step, one MPI_Iallreduce per "tensor"
 * posted as it is produced (with compute between the posts), a few
 * Isend/Irecv pairs with the neighbours, then one MPI_Waitall over all of
 * them.  Every STEPS-th step completes the requests one by one with
 * MPI_Wait instead, and one request per step is completed by a polling
 * MPI_Test loop, so that every completion call charges its time.
 *
 * Prints its own tallies on rank 0 (summed over ranks), which the test
 * holds the profile to:
 *   iallreduce CALLS BYTES
 *   blocked WAIT_SECONDS       time inside the completion calls that
 *                              completed something (Waitall, Wait, the
 *                              Test that returned true)
 *   polled TEST_CALLS          Test calls that completed nothing
 *   allreduce CALLS BYTES      the blocking steps (--blocking N): the same
 *                              tensors, one MPI_Allreduce each
 *
 * usage: overlap [--steps N] [--tensors K] [--compute-us U] [--blocking N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void busy(double us)
{
    double t = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < t) {
    }
}

int main(int argc, char **argv)
{
    int steps = 20, tensors = 16, blocking = 0;
    double compute_us = 200;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--tensors"))
            tensors = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--blocking"))
            blocking = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--compute-us"))
            compute_us = atof(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = tensors + 2;
    MPI_Request *req = malloc((size_t)n * sizeof(*req));
    float **buf = malloc((size_t)tensors * sizeof(*buf));
    int *count = malloc((size_t)tensors * sizeof(*count));
    for (int k = 0; k < tensors; k++) {
        count[k] = 16 << (k % 10); /* 64 B to 32 KiB */
        buf[k] = calloc((size_t)count[k], sizeof(float));
    }
    double sbuf[64] = {0}, rbuf[64];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long long icalls = 0, ibytes = 0, polled = 0;
    double blocked = 0;
    for (int s = 0; s < steps; s++) {
        MPI_Irecv(rbuf, 64, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &req[tensors]);
        for (int k = 0; k < tensors; k++) {
            busy(compute_us / tensors);
            MPI_Iallreduce(MPI_IN_PLACE, buf[k], count[k], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req[k]);
            icalls++;
            ibytes += (long long)count[k] * (long long)sizeof(float);
        }
        MPI_Isend(sbuf, 64, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &req[tensors + 1]);
        /* the first all-reduce by polling */
        int flag = 0;
        while (!flag) {
            double t0 = MPI_Wtime();
            MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
            if (flag)
                blocked += MPI_Wtime() - t0;
            else
                polled++;
        }
        double t0 = MPI_Wtime();
        if (s % 5 == 4) {
            for (int k = 1; k < n; k++) {
                double t1 = MPI_Wtime();
                MPI_Wait(&req[k], MPI_STATUS_IGNORE);
                blocked += MPI_Wtime() - t1;
            }
        } else {
            MPI_Waitall(n - 1, req + 1, MPI_STATUSES_IGNORE);
            blocked += MPI_Wtime() - t0;
        }
    }
    long long bcalls = 0, bbytes = 0;
    for (int s = 0; s < blocking; s++)
        for (int k = 0; k < tensors; k++) {
            MPI_Allreduce(MPI_IN_PLACE, buf[k], count[k], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            bcalls++;
            bbytes += (long long)count[k] * (long long)sizeof(float);
        }
    long long tot[5] = {icalls, ibytes, polled, bcalls, bbytes}, sum[5];
    double bsum;
    MPI_Reduce(tot, sum, 5, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&blocked, &bsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("iallreduce %lld %lld\n", sum[0], sum[1]);
        printf("blocked %.9f\n", bsum);
        printf("polled %lld\n", sum[2]);
        printf("allreduce %lld %lld\n", sum[3], sum[4]);
    }
    for (int k = 0; k < tensors; k++)
        free(buf[k]);
    free(buf);
    free(count);
    free(req);
    MPI_Finalize();
    return 0;
}
