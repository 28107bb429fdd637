/* Memory mapped in afresh every step: each entry of region "step" maps
 * PAGES pages, writes one byte of each (a minor page fault apiece) and
 * unmaps them, then all-reduces; a region "eval", entered twice, is not
 * the step; with SLEEP_US, each step also sleeps that long (the step's
 * period, ranks[].step_s, is at least it).  With SPIN_MS, each rank pins
 * itself and a spinning child process to the CPU it runs on and spins that
 * long a step, so that the scheduler takes the CPU from it (involuntary
 * context switches), and prints its own count of them per step, read with
 * getrusage at each entry of "step" as the plugin reads it:
 * "step_faults: rank R ivcsw_per_step X".
 * usage: step_faults PAGES STEPS [SLEEP_US [SPIN_MS]] */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long ivcsw(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_nivcsw : -1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long pages = argc > 1 ? atol(argv[1]) : 64, steps = argc > 2 ? atol(argv[2]) : 10;
    long sleep_us = argc > 3 ? atol(argv[3]) : 0, spin_ms = argc > 4 ? atol(argv[4]) : 0;
    long csw_first = -1, csw_last = -1;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    double x = 1, y;
    pid_t spinner = -1;
    if (spin_ms > 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        if (sched_setaffinity(0, sizeof(one), &one) != 0)
            perror("sched_setaffinity");
        if ((spinner = fork()) == 0) /* inherits the affinity: the same CPU */
            for (;;)
                ;
    }
    for (long s = 0; s < steps; s++) {
        csw_last = ivcsw();
        if (s == 0)
            csw_first = csw_last;
        MPI_Pcontrol(1, "step");
        for (double t0 = now_s(); spin_ms > 0 && now_s() - t0 < 1e-3 * (double)spin_ms;)
            ;
        if (pages > 0) {
            char *m = mmap(NULL, (size_t)pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) {
                perror("mmap");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (long i = 0; i < pages; i++)
                m[(size_t)i * page] = 1;
            munmap(m, (size_t)pages * page);
        }
        if (sleep_us > 0)
            usleep((useconds_t)sleep_us);
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Pcontrol(-1, "step");
    }
    for (int e = 0; e < 2; e++) {
        MPI_Pcontrol(1, "eval");
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Pcontrol(-1, "eval");
    }
    if (spinner > 0) {
        int rank;
        kill(spinner, SIGKILL);
        waitpid(spinner, NULL, 0);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        printf("step_faults: rank %d ivcsw_per_step %.6f\n", rank,
               steps > 1 ? (double)(csw_last - csw_first) / (double)(steps - 1) : 0.0);
    }
    MPI_Finalize();
    return 0;
}
