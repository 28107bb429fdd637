/* peak_rss OUT COMMAND ARGS...: runs the command and writes its wall time
 * and CPU time (user and system) in seconds and its peak resident memory in
 * kB to OUT ("1.23 1.10 4567"): the CPU time swings much less than the wall
 * time on a busy machine, the memory not at all.  Exits
 * with the command's status.  Forked from this small program, the child's
 * figure is the command's own (from a Python parent it would start at the
 * interpreter's). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct timespec t0, t1;
    struct rusage ru;
    int status;
    if (argc < 3) {
        fprintf(stderr, "usage: peak_rss OUT COMMAND ARGS...\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
        return 2;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    FILE *f = fopen(argv[1], "w");
    if (f == NULL)
        return 2;
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    fprintf(f, "%.2f %.2f %ld\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), cpu,
            ru.ru_maxrss);
    fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
