/* A job that does not reach MPI_Finalize: known calls, then an end that
 * argv[1] names, while each rank keeps its own tally of its calls in a
 * file mapped into memory (it survives the rank's death):
 *   term   loop of allreduces until the rank is killed
 *   abort  20 allreduces, then rank 1 calls MPI_Abort(3) while the others
 *          wait in a barrier
 *   exit   every rank exits with status 7 without MPI_Finalize
 *   usr1   (not an end) each rank's own SIGUSR1 handler, installed before
 *          MPI_Init, takes a SIGUSR1 in the middle of 20 allreduces, and the
 *          job goes on to MPI_Finalize
 *   segv   20 allreduces, then rank 1 dereferences a null pointer while the
 *          others wait in a barrier
 *   settle 3 rounds of 100 allreduces, a second's sleep after each; then
 *          the rank writes DIR/settled.RANK (the time after its last call,
 *          seconds since the epoch) and waits, without MPI, to be killed
 * argv[2] is the directory of the tallies (tally.RANK). */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int64_t pid, phase;
    int64_t allreduce, bcast, send, recv, barrier, region_allreduce, loop;
} tally_t;

static volatile sig_atomic_t usr1_seen;
static void on_usr1(int sig)
{
    (void)sig;
    usr1_seen = 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (!strcmp(argv[1], "usr1"))
        signal(SIGUSR1, on_usr1);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096];
    snprintf(path, sizeof(path), "%s/tally.%d", argv[2], rank);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, sizeof(tally_t)) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    volatile tally_t *t = mmap(NULL, sizeof(tally_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (t == MAP_FAILED)
        MPI_Abort(MPI_COMM_WORLD, 2);
    t->pid = getpid();
    double v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[8];
    char buf[1000] = {0};
    for (int i = 0; i < 10; i++) {
        MPI_Allreduce(v, w, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t->allreduce++;
    }
    for (int i = 0; i < 5; i++) {
        MPI_Bcast(buf, 1000, MPI_CHAR, 0, MPI_COMM_WORLD);
        t->bcast++;
    }
    /* pairs (0,1), (2,3): 7 messages of 256 bytes each way */
    int peer = rank ^ 1;
    for (int i = 0; peer < size && i < 7; i++) {
        if (rank % 2 == 0) {
            MPI_Send(buf, 256, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
            t->send++;
            MPI_Recv(buf, 256, MPI_CHAR, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t->recv++;
        } else {
            MPI_Recv(buf, 256, MPI_CHAR, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t->recv++;
            MPI_Send(buf, 256, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
            t->send++;
        }
    }
    /* a send of 64 KiB that rank 0 frees while active: a call the part
     * books, and counts as unfinished */
    static char big[65536];
    if (rank == 0 && size > 1) {
        MPI_Request r;
        MPI_Isend(big, sizeof(big), MPI_CHAR, 1, 6, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    } else if (rank == 1)
        MPI_Recv(big, sizeof(big), MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 3; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t->barrier++;
    }
    MPI_Pcontrol(1, "step");
    for (int i = 0; i < 2; i++) {
        MPI_Allreduce(v, w, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t->region_allreduce++;
    }
    MPI_Pcontrol(-1, "step");
    t->phase = 1;
    msync((void *)t, sizeof(*t), MS_SYNC);
    int x = 1, y;
    if (!strcmp(argv[1], "term")) {
        for (;;) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            t->loop++;
            usleep(500);
        }
    } else if (!strcmp(argv[1], "abort")) {
        for (int i = 0; i < 20; i++) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            t->loop++;
        }
        t->phase = 2;
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Barrier(MPI_COMM_WORLD); /* never returns: rank 1 is gone */
    } else if (!strcmp(argv[1], "usr1")) {
        for (int i = 0; i < 20; i++) {
            if (i == 10)
                raise(SIGUSR1);
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            t->loop++;
        }
        if (!usr1_seen)
            MPI_Abort(MPI_COMM_WORLD, 4);
    } else if (!strcmp(argv[1], "segv")) {
        for (int i = 0; i < 20; i++) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            t->loop++;
        }
        t->phase = 2;
        if (rank == 1) {
            volatile int *null = NULL;
            *null = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(argv[1], "settle")) {
        for (int i = 0; i < 300; i++) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            t->loop++;
            if (i % 100 == 99)
                sleep(1);
        }
        t->phase = 2;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        snprintf(path, sizeof(path), "%s/settled.%d", argv[2], rank);
        FILE *f = fopen(path, "w");
        if (!f || fprintf(f, "%ld.%09ld\n", (long)now.tv_sec, now.tv_nsec) < 0 || fclose(f) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (;;)
            pause();
    } else if (!strcmp(argv[1], "exit")) {
        for (int i = 0; i < 20; i++) {
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            t->loop++;
        }
        t->phase = 2;
        exit(7);
    }
    MPI_Finalize();
    return 0;
}
