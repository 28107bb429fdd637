/* MPI_Pcontrol: recording off and on, nested named regions, and the calls
 * the plugin must tolerate (level 1 without a name while recording, a close
 * that matches nothing, a resume with a stray string where a name would be). */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double x = 1, y;
    for (int i = 0; i < 5; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(0);
    for (int i = 0; i < 7; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_Pcontrol(1); /* no name, recording already on: nothing happens */
    for (int s = 0; s < 3; s++) {
        MPI_Pcontrol(1, "step");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(1, "exchange");
        for (int i = 0; i < 2; i++)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Pcontrol(-1, "exchange");
        MPI_Pcontrol(-1, "step");
    }
    MPI_Pcontrol(-1, "never-opened");
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    /* a resume whose caller left a string in the register the name would be
     * passed in (as a plain MPI_Pcontrol(1) after a printf may): after a
     * pause, level 1 only resumes and the name is not read */
    MPI_Pcontrol(0);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int (*resume)(int, const char *) = (int (*)(int, const char *))MPI_Pcontrol;
    resume(1, "stray");
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
