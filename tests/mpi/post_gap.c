/* The framework's time after a nonblocking collective's post and before
 * the next: each of --posts MPI_Iallreduce calls comes after --lead-us of
 * work outside MPI (MPI_Wtime, which commfit does not wrap) and is followed
 * by --gap-us of it, then MPI_Wait; then four times as many posts whose gap
 * holds an MPI call, which is no gap of the framework's: an all-reduce on
 * MPI_COMM_SELF, a region entered (MPI_Pcontrol), recording paused and
 * resumed, a communicator duplicated and freed; then as many again whose
 * gap holds nothing but whose lead holds that all-reduce.  The profile's
 * job.post_gaps counts the gaps on every rank and job.post_gap_s is their
 * gap; job.post_leads and post_lead_s the same for the leads.  Prints
 * "posts N" on rank 0: the posts of each kind, summed over the ranks.
 * usage: post_gap [--posts N] [--gap-us U] [--lead-us L] */
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
    int posts = 200;
    double gap_us = 50, lead_us = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--posts"))
            posts = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--gap-us"))
            gap_us = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--lead-us"))
            lead_us = atof(argv[i + 1]);
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float buf[8] = {0};
    int one = 1, sum;
    long long made = 0, total = 0;
    MPI_Request req;
    for (int between = 0; between < 6; between++)
        for (int k = 0; k < posts; k++) {
            busy(lead_us);
            MPI_Iallreduce(MPI_IN_PLACE, buf, 8, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            busy(gap_us);
            if (between == 1)
                MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
            else if (between == 2)
                MPI_Pcontrol(1, "between");
            else if (between == 3) {
                MPI_Pcontrol(0);
                MPI_Pcontrol(1);
            } else if (between == 4) {
                MPI_Comm dup;
                MPI_Comm_dup(MPI_COMM_SELF, &dup);
                MPI_Comm_free(&dup);
            } else if (between == 0)
                made++;
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (between == 2)
                MPI_Pcontrol(-1, "between");
            else if (between == 5)
                MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
        }
    MPI_Reduce(&made, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("posts %lld\n", total);
    MPI_Finalize();
    return 0;
}
