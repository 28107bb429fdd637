/* MPI_THREAD_MULTIPLE: T threads per rank exchange K messages of 64 bytes
 * with the same thread on the partner rank, all at once.  Every call must
 * be counted.  Exits 77 (skip) when the library does not provide MULTIPLE. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int nthreads = 4, k = 500, rank, p;

static void *worker(void *arg)
{
    int tid = (int)(long)arg;
    int peer = rank ^ 1;
    char out[64], in[64];
    for (int i = 0; i < k; i++) {
        MPI_Request r[2];
        for (int j = 0; j < 64; j++)
            out[j] = (char)(rank + tid + i + j);
        MPI_Irecv(in, 64, MPI_BYTE, peer, tid, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, 64, MPI_BYTE, peer, tid, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        for (int j = 0; j < 64; j++)
            if (in[j] != (char)(peer + tid + i + j)) {
                fprintf(stderr, "rank %d thread %d: wrong data\n", rank, tid);
                abort();
            }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        k = atoi(argv[2]);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (provided < MPI_THREAD_MULTIPLE || p % 2) {
        if (rank == 0)
            printf("SKIP: MPI_THREAD_MULTIPLE not provided or odd rank count\n");
        MPI_Finalize();
        return 77;
    }
    pthread_t th[64];
    for (long t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    MPI_Finalize();
    return 0;
}
