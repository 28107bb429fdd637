/* Regions past the limits of MPI_Pcontrol's table, argv[1] the case:
 *   wide   300 distinct regions r000..r299, one allreduce in each; then
 *          regions d0..d19 nested 20 deep: an allreduce in the innermost,
 *          the four innermost closed, a bcast, the rest closed, a barrier
 *   full   8200 distinct regions f0000..f8199, one allreduce in each (the
 *          table holds 8191), then MPI_Finalize; "full-exit" the same, then
 *          exit(7) without MPI_Finalize */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    MPI_Init(&argc, &argv);
    double x = 1, y;
    char name[32];
    if (!strcmp(argv[1], "wide")) {
        for (int i = 0; i < 300; i++) {
            snprintf(name, sizeof(name), "r%03d", i);
            MPI_Pcontrol(1, name);
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Pcontrol(-1, name);
        }
        for (int d = 0; d < 20; d++) {
            snprintf(name, sizeof(name), "d%d", d);
            MPI_Pcontrol(1, name);
        }
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int d = 19; d >= 0; d--) {
            if (d == 15)
                MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            snprintf(name, sizeof(name), "d%d", d);
            MPI_Pcontrol(-1, name);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < 8200; i++) {
            snprintf(name, sizeof(name), "f%04d", i);
            MPI_Pcontrol(1, name);
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Pcontrol(-1, name);
        }
        if (!strcmp(argv[1], "full-exit"))
            exit(7);
    }
    MPI_Finalize();
    return 0;
}
