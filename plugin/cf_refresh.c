/* The spool part, refreshed in the background.  A thread of its own, which
 * takes no signal, wakes every COMMFIT_SPOOL_EVERY seconds (300; 0: never)
 * and once COMMFIT_SPOOL_BEFORE seconds (30; 0: never) before the job's
 * end, and writes this rank's part with cf_spill.c's writer: the calls
 * themselves never look here.  The part appears by rename, whole or not at
 * all, so a SIGKILL during a refresh leaves the one before.  A part written
 * at a signal or an exit is never replaced by a refresh.
 *
 * The job's end: COMMFIT_DEADLINE (seconds since the epoch), else
 * SLURM_JOB_END_TIME, else what `squeue -h -o %e -j $SLURM_JOB_ID` says (rank
 * 0 asks once, at MPI_Init, and tells the others). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strptime */
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cf_refresh.h"
#include "cf_runtime.h"

static pthread_t cf_refresh_thread;
static int cf_refresh_running, cf_refresh_quit;
static pthread_mutex_t cf_refresh_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cf_refresh_cond = PTHREAD_COND_INITIALIZER;
static double cf_every, cf_before, cf_deadline;
static unsigned long cf_refresh_count;
static int (*cf_refresh_write)(void); /* the spill's writer */
static double cf_refresh_last_s, cf_refresh_max_s;

static double cf_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* seconds from the environment; def when unset, said and def when not a number */
static double cf_env_seconds(const char *name, double def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || *end || !(d >= 0) || d > 1e9) {
        if (cf_g.world_rank == 0)
            cf_log("%s=%s is not a number of seconds (0 or more): %g is used", name, v, def);
        return def;
    }
    return d;
}

/* The job's end in seconds since the epoch, 0 when none is known. */
static double cf_job_deadline(void)
{
    const char *v = getenv("COMMFIT_DEADLINE");
    if (!v || !*v)
        v = getenv("SLURM_JOB_END_TIME");
    if (v && *v) {
        char *end;
        double d = strtod(v, &end);
        return *end == 0 && d > 0 ? d : 0;
    }
    const char *job = getenv("SLURM_JOB_ID");
    if (!job || !*job || strspn(job, "0123456789_") != strlen(job))
        return 0;
    char cmd[128], line[128] = "";
    snprintf(cmd, sizeof(cmd), "timeout 5 squeue -h -o %%e -j %s 2>/dev/null", job);
    FILE *f = popen(cmd, "r");
    if (!f)
        return 0;
    if (!fgets(line, sizeof(line), f))
        line[0] = 0;
    pclose(f);
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *rest = strptime(line, "%Y-%m-%dT%H:%M:%S", &tm); /* local time; "N/A", "Unknown": none */
    if (!rest)
        return 0;
    tm.tm_isdst = -1;
    time_t t = mktime(&tm);
    return t > 0 ? (double)t : 0;
}

static void *cf_refresh_main(void *arg)
{
    (void)arg;
    double start = cf_now(), next = cf_every > 0 ? start + cf_every : 0, soon = 0;
    if (cf_deadline > 0 && cf_before > 0) {
        soon = cf_deadline - cf_before;
        if (soon <= start) /* a job shorter than that: half way */
            soon = start + (cf_deadline - start) / 2;
    }
    pthread_mutex_lock(&cf_refresh_lock);
    while (!cf_refresh_quit) {
        double when = next;
        if (soon > 0 && (when == 0 || soon < when))
            when = soon;
        if (when == 0) {
            pthread_cond_wait(&cf_refresh_cond, &cf_refresh_lock);
            continue;
        }
        struct timespec ts = {(time_t)when, (long)((when - (double)(time_t)when) * 1e9)};
        if (pthread_cond_timedwait(&cf_refresh_cond, &cf_refresh_lock, &ts) != ETIMEDOUT)
            continue;
        double t = cf_now();
        if (t < when)
            continue;
        pthread_mutex_unlock(&cf_refresh_lock);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int rc = cf_refresh_write();
        clock_gettime(CLOCK_MONOTONIC, &b);
        pthread_mutex_lock(&cf_refresh_lock);
        if (rc == 0) {
            cf_refresh_count++;
            cf_refresh_last_s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
            if (cf_refresh_last_s > cf_refresh_max_s)
                cf_refresh_max_s = cf_refresh_last_s;
        }
        if (soon > 0 && t >= soon)
            soon = 0;
        if (next > 0 && t >= next)
            next = t + cf_every;
    }
    pthread_mutex_unlock(&cf_refresh_lock);
    return NULL;
}

void cf_refresh_init(int (*write)(void))
{
    cf_refresh_write = write;
    if (!cf_g.cfg.spill)
        return;
    cf_every = cf_env_seconds("COMMFIT_SPOOL_EVERY", 300);
    cf_before = cf_env_seconds("COMMFIT_SPOOL_BEFORE", 30);
    double deadline = 0;
    if (cf_g.world_rank == 0 && cf_before > 0)
        deadline = cf_job_deadline();
    PMPI_Bcast(&deadline, 1, MPI_DOUBLE, 0, cf_g.tool_comm);
    cf_deadline = deadline;
    if (cf_every <= 0 && cf_deadline <= 0)
        return;
    /* the thread takes no signal: a handler that writes the part runs on
     * another thread, never on one in the middle of a refresh */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    cf_refresh_quit = 0;
    cf_refresh_running = pthread_create(&cf_refresh_thread, NULL, cf_refresh_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (cf_g.cfg.verbose && cf_g.world_rank == 0)
        cf_log("the spool part is refreshed every %g s (0: never); the job's end: %s%.0f s from now", cf_every,
               cf_deadline > 0 ? "" : "unknown, ", cf_deadline > 0 ? cf_deadline - cf_now() : 0);
}

void cf_refresh_stop(void)
{
    if (!cf_refresh_running)
        return;
    pthread_mutex_lock(&cf_refresh_lock);
    cf_refresh_quit = 1;
    pthread_cond_signal(&cf_refresh_cond);
    pthread_mutex_unlock(&cf_refresh_lock);
    pthread_join(cf_refresh_thread, NULL);
    cf_refresh_running = 0;
    if (cf_g.cfg.verbose && cf_g.world_rank == 0)
        cf_log("rank 0 refreshed its spool part %lu times, the last in %.3f ms (at most %.3f ms)", cf_refresh_count,
               cf_refresh_last_s * 1e3, cf_refresh_max_s * 1e3);
}
