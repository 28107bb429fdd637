/* commfit run [--output FILE] -- mpirun ... : preload the plugin into every
 * rank.  Open MPI's mpirun gets -x for LD_PRELOAD and every COMMFIT_*
 * variable; other launchers (MPICH's hydra, srun) forward the environment.
 * When the launcher returns and the job did not reach MPI_Finalize, the
 * records its ranks spilled are gathered into the profile.  mpirun and
 * mpiexec are Open MPI's unless they lead to hydra. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cf_spool.h"
#include "commfit.h"

extern char **environ;

static const char *cf_find_plugin(void)
{
    const char *env = getenv("COMMFIT_LIB");
    if (env && *env)
        return env;
    return CF_LIBDIR "/libcommfit.so";
}

/* MPICH's hydra under any of its names: mpiexec.mpich, mpirun.mpich,
 * mpiexec.hydra, or mpirun/mpiexec when they lead to one of these */
static int cf_is_hydra(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strstr(base, "mpich") != NULL || strstr(base, "hydra") != NULL;
}

static int cf_is_ompi_launcher(const char *cmd)
{
    const char *base = strrchr(cmd, '/');
    char found[4096], *real = NULL;
    base = base ? base + 1 : cmd;
    if (!(!strcmp(base, "mpirun") || !strcmp(base, "mpiexec") || !strcmp(base, "orterun") ||
          !strncmp(base, "mpirun.", 7) || !strncmp(base, "mpiexec.", 8)))
        return 0;
    if (cf_is_hydra(base))
        return 0;
    /* the file the name leads to (Debian's alternatives are links) */
    if (strchr(cmd, '/') == NULL) {
        const char *path = getenv("PATH");
        for (const char *d = path ? path : ""; *d && real == NULL;) {
            size_t n = strcspn(d, ":");
            if (n > 0 && snprintf(found, sizeof(found), "%.*s/%s", (int)n, d, cmd) < (int)sizeof(found) &&
                access(found, X_OK) == 0)
                real = realpath(found, NULL);
            d += n + (d[n] == ':');
        }
    } else
        real = realpath(cmd, NULL);
    int hydra = real != NULL && cf_is_hydra(real);
    free(real);
    return !hydra;
}

static void cf_run_usage(FILE *out)
{
    fprintf(out, "usage: commfit run [--output FILE] [--quiet] -- LAUNCHER ARGS...\n"
                 "  e.g. commfit run -o prof.json -- mpirun -np 4 ./app\n"
                 "  a job that does not reach MPI_Finalize still leaves a (partial) profile\n"
                 "  -o, --output FILE  profile path (sets COMMFIT_OUTPUT)\n"
                 "  -q, --quiet        no summary at the end (COMMFIT_SUMMARY=0)\n"
                 "The plugin is %s (override with COMMFIT_LIB).\n",
            cf_find_plugin());
}

/* The spool of the job, absolute (the ranks may run elsewhere than here):
 * COMMFIT_SPOOL, or the profile's name with .parts for .json, or a name of
 * its own; exported for the ranks. */
static int cf_run_spool_made; /* made here: removed when left empty */
static uint64_t cf_run_nonce;  /* the job's (COMMFIT_JOB_NONCE): only its parts are merged */

static char *cf_run_spool(void)
{
    char cwd[PATH_MAX], name[PATH_MAX + 64];
    const char *set = getenv("COMMFIT_SPOOL"), *out = getenv("COMMFIT_OUTPUT");
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = 0;
    if (set && *set)
        snprintf(name, sizeof(name), "%s", set);
    else if (out && *out) {
        size_t n = strlen(out);
        int ext = n > 5 && strcmp(out + n - 5, ".json") == 0;
        snprintf(name, sizeof(name), "%.*s.parts", (int)(ext ? n - 5 : n), out);
    } else {
        char date[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
        snprintf(name, sizeof(name), "commfit-%s-%ld.parts", date, (long)getpid());
    }
    size_t len = strlen(cwd) + strlen(name) + 2;
    char *abs = malloc(len);
    if (!abs)
        return NULL;
    if (name[0] == '/' || !cwd[0])
        snprintf(abs, len, "%s", name);
    else
        snprintf(abs, len, "%s/%s", cwd, name);
    /* the spool is ours alone: one that exists must be a directory of this
     * user nobody else can write (its name is easy to guess, anyone could
     * make it first); else a private one is used, and said */
    char why[300];
    int r = cf_spool_check(abs, why, sizeof(why));
    if (r == 1 && mkdir(abs, 0700) != 0)
        snprintf(why, sizeof(why), "cannot make it: %s", strerror(errno));
    else if (r == 1) {
        cf_run_spool_made = 1;
        r = cf_spool_check(abs, why, sizeof(why));
    }
    if (r != 0) {
        char priv[PATH_MAX + 64];
        if (cf_spool_private(abs, priv, sizeof(priv)) != 0) {
            fprintf(stderr, "commfit run: the spool %s is refused (%s) and no private one could be made: %s\n", abs,
                    why, strerror(errno));
            free(abs);
            return NULL;
        }
        fprintf(stderr, "commfit run: the spool %s is refused (%s): the parts go to %s\n", abs, why, priv);
        free(abs);
        cf_run_spool_made = 1;
        if (!(abs = strdup(priv)))
            return NULL;
    }
    /* the spool is this job's alone: one holding an earlier job's parts is
     * left to `commfit merge`, and a new one beside it is used */
    char other[64], beside[PATH_MAX + 64], hex[17], jobid[64];
    cf_run_nonce = cf_spool_nonce();
    cf_spool_jobid(jobid, sizeof(jobid));
    r = cf_spool_claim(abs, cf_run_nonce, jobid, (double)time(NULL), other, sizeof(other), why, sizeof(why));
    if (r == 1 && cf_spool_beside(abs, beside, sizeof(beside)) == 0) {
        fprintf(stderr, "commfit run: the spool %s holds the parts of an earlier job (%s): `commfit merge %s` makes "
                "its profile; this job's parts go to %s\n", abs, other, abs, beside);
        free(abs);
        cf_run_spool_made = 1;
        if (!(abs = strdup(beside)))
            return NULL;
        r = cf_spool_claim(abs, cf_run_nonce, jobid, (double)time(NULL), other, sizeof(other), why, sizeof(why));
    }
    if (r != 0)
        fprintf(stderr, "commfit run: the spool %s: %s\n", abs, r == 1 ? "holds an earlier job's parts" : why);
    cf_spool_nonce_str(cf_run_nonce, hex);
    setenv("COMMFIT_JOB_NONCE", hex, 1);
    setenv("COMMFIT_SPOOL", abs, 1);
    setenv("COMMFIT_GATHER", "1", 1); /* the ranks leave the message to us */
    return abs;
}

/* A signal to commfit run is passed on at once to the ranks it launched,
 * whatever process groups the launcher gave them (Open MPI's mpirun puts
 * each rank in one of its own, so a batch system's signal to the job's
 * group never reaches them).  The ranks are the processes below the
 * launcher that hold the spool open (every rank does from MPI_Init on):
 * each gets the signal directly, and the launcher notices them end (mpirun
 * then ends the ranks of other nodes with SIGTERM, which they spill on).
 * The launcher itself gets a terminating signal only when no rank runs
 * here (srun, whose ranks are slurmstepd's; or before MPI_Init): a second
 * SIGTERM makes Open MPI's mpirun exit at once, and a batch system may
 * already have sent it the first.  SIGUSR1 and SIGUSR2 go to Open MPI's
 * mpirun only, which forwards them to every rank (ess_base_forward_signals),
 * so that a rank gets them once.  One line says what was done, before
 * anything else: a batch system may kill commfit run before it gathers. */
static const int cf_run_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGXCPU};
#define CF_RUN_NSIGS (sizeof(cf_run_sigs) / sizeof(cf_run_sigs[0]))
#define CF_RUN_MAXRANKS 4096

typedef struct {
    pid_t launcher;
    int ompi;
    const char *spool; /* as the ranks opened it */
    pid_t rank[CF_RUN_MAXRANKS];
    int nrank;
} cf_run_job_t;

/* The parent of pid, from /proc/PID/stat (-1 when gone). */
static pid_t cf_run_ppid(const char *pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close = strrchr(buf, ')'); /* the name may hold anything */
    int ppid;
    if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
        return -1;
    return (pid_t)ppid;
}

/* Whether pid holds the directory dir open. */
static int cf_run_holds(pid_t pid, const char *dir)
{
    char path[64], link[PATH_MAX + 1], to[PATH_MAX + 1];
    snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        if (e->d_name[0] == '.' || snprintf(link, sizeof(link), "%s/%s", path, e->d_name) >= (int)sizeof(link))
            continue;
        ssize_t n = readlink(link, to, sizeof(to) - 1);
        if (n > 0) {
            to[n] = 0;
            found = strcmp(to, dir) == 0;
        }
    }
    closedir(d);
    return found;
}

/* The ranks below the launcher, anew. */
static void cf_run_find_ranks(cf_run_job_t *j)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    size_t cap = 1024, n = 0;
    pid_t *pid = malloc(cap * sizeof(*pid)), *ppid = malloc(cap * sizeof(*ppid));
    for (struct dirent *e; pid && ppid && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        if (n == cap) {
            cap *= 2;
            pid_t *a = realloc(pid, cap * sizeof(*pid)), *b = a ? realloc(ppid, cap * sizeof(*ppid)) : NULL;
            if (a)
                pid = a;
            if (!b)
                break;
            ppid = b;
        }
        pid[n] = (pid_t)atol(e->d_name);
        ppid[n] = cf_run_ppid(e->d_name);
        n++;
    }
    closedir(d);
    if (pid && ppid) {
        /* descendants: mark the launcher's children, then theirs, until none is added */
        unsigned char *below = calloc(n + 1, 1);
        for (int added = 1; below && added;) {
            added = 0;
            for (size_t i = 0; i < n; i++) {
                if (below[i] || ppid[i] <= 0)
                    continue;
                int up = ppid[i] == j->launcher;
                for (size_t k = 0; !up && k < n; k++)
                    up = below[k] && pid[k] == ppid[i];
                if (up)
                    below[i] = added = 1;
            }
        }
        j->nrank = 0;
        for (size_t i = 0; below && i < n && j->nrank < CF_RUN_MAXRANKS; i++)
            if (below[i] && cf_run_holds(pid[i], j->spool))
                j->rank[j->nrank++] = pid[i];
        free(below);
    }
    free(pid);
    free(ppid);
}

static const char *cf_run_sig_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGXCPU: return "SIGXCPU";
    default: return "a signal";
    }
}

static void cf_run_forward(cf_run_job_t *j, int sig, const char *why)
{
    const char *name = cf_run_sig_name(sig);
    if (j->ompi && (sig == SIGUSR1 || sig == SIGUSR2)) {
        kill(j->launcher, sig);
        fprintf(stderr, "commfit run: %s%s passed on to mpirun (pid %ld), which forwards it to every rank\n", why,
                name, (long)j->launcher);
        return;
    }
    int sent = 0;
    for (int i = 0; i < j->nrank; i++)
        sent += kill(j->rank[i], sig) == 0;
    /* said at once: when the batch script ended, we have milliseconds */
    if (sent)
        fprintf(stderr, "commfit run: %s%s passed on to the ranks here; if the job is killed before the profile "
                        "is written, `commfit merge %s` makes it\n", why, name, j->spool);
    /* ranks that started since the last look */
    int told = sent;
    cf_run_job_t now = *j;
    cf_run_find_ranks(&now);
    for (int i = 0; i < now.nrank; i++) {
        int known = 0;
        for (int k = 0; !known && k < j->nrank; k++)
            known = now.rank[i] == j->rank[k];
        if (!known)
            sent += kill(now.rank[i], sig) == 0;
    }
    *j = now;
    if (sent && !told)
        fprintf(stderr, "commfit run: %s%s passed on to the ranks here; if the job is killed before the profile "
                        "is written, `commfit merge %s` makes it\n", why, name, j->spool);
    else if (!sent) {
        kill(j->launcher, sig);
        fprintf(stderr, "commfit run: %s%s passed on to %s (pid %ld), no rank runs here; if the job is killed "
                        "before the profile is written, `commfit merge %s` makes it\n", why, name,
                j->ompi ? "mpirun" : "the launcher", (long)j->launcher, j->spool);
    }
}

/* Whether our parent is a Slurm batch script: slurmstepd's child, in a job
 * and outside any step. */
static int cf_run_under_batch(void)
{
    if (!getenv("SLURM_JOB_ID") || getenv("SLURM_STEP_ID") || getenv("SLURM_STEPID"))
        return 0;
    char ppid[24], path[64], comm[64] = "";
    snprintf(ppid, sizeof(ppid), "%ld", (long)getppid());
    pid_t gp = cf_run_ppid(ppid);
    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)gp);
    FILE *f = gp > 0 ? fopen(path, "r") : NULL;
    if (f) {
        if (!fgets(comm, sizeof(comm), f))
            comm[0] = 0;
        fclose(f);
    }
    return strncmp(comm, "slurmstepd", 10) == 0;
}

/* Waits for the launcher, passing signals on; the signals are blocked
 * (since before the fork) and taken here, with SIGCHLD for the end. */
static int cf_run_wait(cf_run_job_t *j, const sigset_t *set)
{
    int status = 0;
    /* Slurm signals the batch script alone (not its process group) at a
     * cancel or time limit; the script dies, and slurmstepd kills whatever is
     * left some milliseconds later.  The script's end is our signal. */
    pid_t parent = getppid();
    int batch = cf_run_under_batch() && prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() == parent;
    if (batch) /* the batch log says it before anything can go wrong */
        fprintf(stderr, "commfit run: if this job is killed before its profile is written, `commfit merge %s` "
                        "makes it from the parts its ranks leave\n", j->spool);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    double next_look = 0;
    for (;;) {
        pid_t w = waitpid(j->launcher, &status, WNOHANG);
        if (w == j->launcher)
            break;
        if (w < 0 && errno != EINTR) {
            status = 1 << 8;
            break;
        }
        /* the ranks are looked for often while the job starts, then every 2 s
         * (a look reads /proc: about a millisecond), so that a signal reaches
         * them without one */
        clock_gettime(CLOCK_MONOTONIC, &now);
        double t = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9;
        if (t >= next_look) {
            cf_run_find_ranks(j);
            next_look = t + (t < 10 && j->nrank == 0 ? 0.2 : 2);
        }
        struct timespec wait = {0, 200000000};
        siginfo_t si;
        int sig = sigtimedwait(set, &si, &wait);
        const char *why = "";
        if (sig == SIGTERM && batch && getppid() != parent) {
            why = "the batch script ended before the job (a cancel or the time limit): ";
            batch = 0;
        }
        if (sig > 0 && sig != SIGCHLD)
            cf_run_forward(j, sig, why);
    }
    return status;
}

int cf_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': setenv("COMMFIT_OUTPUT", optarg, 1); break;
        case 'q': setenv("COMMFIT_SUMMARY", "0", 1); break;
        case 'h': cf_run_usage(stdout); return 0;
        default: cf_run_usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "commfit run: no command given\n");
        cf_run_usage(stderr);
        return CF_EXIT_USAGE;
    }
    const char *plugin = cf_find_plugin();
    if (access(plugin, R_OK) != 0) {
        fprintf(stderr, "commfit run: cannot read the plugin %s: %s (set COMMFIT_LIB)\n", plugin, strerror(errno));
        return CF_EXIT_USAGE;
    }
    /* keep whatever the user already preloads */
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(plugin) + (old ? strlen(old) + 2 : 1);
    char *preload = malloc(len);
    if (!preload)
        return 1;
    snprintf(preload, len, "%s%s%s", plugin, old && *old ? ":" : "", old && *old ? old : "");
    if (old && strstr(old, plugin))
        snprintf(preload, len, "%s", old);

    /* before the variables are forwarded: the ranks need the spool's name */
    char *spool = cf_run_spool();
    if (!spool) {
        free(preload);
        return 1;
    }
    char **cmd = argv + optind;
    int ncmd = argc - optind;
    char **args = calloc((size_t)ncmd + 256, sizeof(char *));
    if (!args) {
        free(preload);
        free(spool);
        return 1;
    }
    int n = 0;
    args[n++] = cmd[0];
    if (cf_is_ompi_launcher(cmd[0])) {
        static char xflag[] = "-x";
        args[n++] = xflag;
        args[n++] = "LD_PRELOAD";
        for (char **e = environ; *e && n < 240; e++) {
            if (strncmp(*e, "COMMFIT_", 8) != 0)
                continue;
            size_t k = strcspn(*e, "=");
            args[n++] = xflag;
            args[n++] = strndup(*e, k);
        }
    }
    for (int i = 1; i < ncmd; i++)
        args[n++] = cmd[i];
    args[n] = NULL;
    /* the launcher itself must not be profiled: it is not an MPI process, but
     * it may be a dynamically linked program that would load libmpi */
    setenv("LD_PRELOAD", preload, 1);
    /* the signals wait for cf_run_wait from now on; the launcher gets the mask we had */
    sigset_t set, oldmask;
    sigemptyset(&set);
    for (size_t i = 0; i < CF_RUN_NSIGS; i++)
        sigaddset(&set, cf_run_sigs[i]);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, &oldmask);
    cf_run_job_t *job = calloc(1, sizeof(*job));
    if (!job) {
        free(preload);
        free(spool);
        free(args);
        return 1;
    }
    job->ompi = cf_is_ompi_launcher(cmd[0]);
    char *real = realpath(spool, NULL); /* as /proc shows what the ranks hold */
    job->spool = real ? real : spool;
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "commfit run: cannot start %s: %s\n", args[0], strerror(errno));
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        return 1;
    }
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        execvp(args[0], args);
        fprintf(stderr, "commfit run: cannot run %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    unsetenv("LD_PRELOAD");
    job->launcher = child;
    int status = cf_run_wait(job, &set);
    free(job);
    free(real);
    /* the signals stay blocked: one more must not end us before the profile
     * is gathered (they are dropped at exit) */
    /* the job did not finish: its ranks left their records in the spool
     * (only this job's parts: they carry the nonce it was given) */
    struct stat st;
    if (lstat(spool, &st) == 0 && S_ISDIR(st.st_mode) &&
        cf_merge_spool("commfit run", spool, cf_run_nonce, getenv("COMMFIT_OUTPUT"), 0) == -1)
        cf_spool_job_unlink(spool, cf_run_nonce);
    if (cf_run_spool_made)
        rmdir(spool); /* made above, left empty */
    free(spool);
    free(preload);
    free(args);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
