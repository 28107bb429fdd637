/* Memory mapped in afresh every step: each entry of region "step" maps
 * PAGES pages, writes one byte of each (a minor page fault apiece) and
 * unmaps them, then all-reduces; a region "eval", entered twice, is not
 * the step; with SLEEP_US, each step also sleeps that long (the step's
 * period, ranks[].step_s, is at least it).
 * usage: step_faults PAGES STEPS [SLEEP_US] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long pages = argc > 1 ? atol(argv[1]) : 64, steps = argc > 2 ? atol(argv[2]) : 10;
    long sleep_us = argc > 3 ? atol(argv[3]) : 0;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    double x = 1, y;
    for (long s = 0; s < steps; s++) {
        MPI_Pcontrol(1, "step");
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
    MPI_Finalize();
    return 0;
}
