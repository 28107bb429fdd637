/*
 * hello.c - smoke test for the emulated cluster (tests/cluster).
 *
 * Every rank prints its rank, the processor name (hostname of its emulated
 * node) and, if asked, one environment variable.  Rank 0 then does a 1 MB
 * MPI_Send/MPI_Recv ping-pong with every other rank and prints the round-trip
 * time and the resulting throughput.
 *
 * Usage: hello [-n ITERS] [-s BYTES] [-e ENVVAR]
 *
 * Output lines (parsed by selftest.sh):
 *   HELLO rank=R size=S host=H env=VALUE
 *   PINGPONG peer=P peerhost=H bytes=B iters=I best_us=T avg_us=T mbps_best=X mbps_avg=Y
 * mbps = 2*bytes / round-trip time, in 10^6 bytes per second.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, len, i, it;
    int iters = 5;
    long bytes = 1L << 20;
    const char *envname = NULL;
    char host[MPI_MAX_PROCESSOR_NAME];
    char peerhost[MPI_MAX_PROCESSOR_NAME];
    char *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            bytes = atol(argv[++i]);
        else if (!strcmp(argv[i], "-e") && i + 1 < argc)
            envname = argv[++i];
    }
    if (iters < 1)
        iters = 1;
    if (bytes < 1)
        bytes = 1;

    MPI_Get_processor_name(host, &len);
    {
        const char *v = envname ? getenv(envname) : NULL;
        printf("HELLO rank=%d size=%d host=%s env=%s\n", rank, size, host,
               envname ? (v ? v : "<unset>") : "-");
        fflush(stdout);
    }

    buf = malloc((size_t)bytes);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    memset(buf, rank & 0xff, (size_t)bytes);

    MPI_Barrier(MPI_COMM_WORLD);
    for (i = 1; i < size; i++) {
        if (rank == 0) {
            double best = 1e30, total = 0.0, t0, dt;
            MPI_Recv(peerhost, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, i, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* warm-up: the TCP BTL connects lazily */
            MPI_Send(buf, (int)bytes, MPI_BYTE, i, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, i, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (it = 0; it < iters; it++) {
                t0 = MPI_Wtime();
                MPI_Send(buf, (int)bytes, MPI_BYTE, i, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, i, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                dt = MPI_Wtime() - t0;
                total += dt;
                if (dt < best)
                    best = dt;
            }
            printf("PINGPONG peer=%d peerhost=%s bytes=%ld iters=%d "
                   "best_us=%.0f avg_us=%.0f mbps_best=%.1f mbps_avg=%.1f\n",
                   i, peerhost, bytes, iters, best * 1e6, total / iters * 1e6,
                   2.0 * bytes / best / 1e6, 2.0 * bytes * iters / total / 1e6);
            fflush(stdout);
        } else if (rank == i) {
            MPI_Send(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 0,
                     MPI_COMM_WORLD);
            for (it = 0; it < iters + 1; it++) {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    free(buf);
    MPI_Finalize();
    return 0;
}
