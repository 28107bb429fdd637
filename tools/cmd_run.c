/* commfit run [--output FILE] -- mpirun ... : preload the plugin into every
 * rank.  Open MPI's mpirun gets -x for LD_PRELOAD and every COMMFIT_*
 * variable; other launchers (MPICH's hydra, srun) forward the environment.
 * When the launcher returns and the job did not reach MPI_Finalize, the
 * records its ranks spilled are gathered into the profile.  mpirun and
 * mpiexec are Open MPI's unless they lead to hydra. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A signal to commfit run: the launcher gets it too when it came from the
 * terminal (one process group) or a batch system (every process of the
 * job), and a second one makes Open MPI's mpirun exit at once, without
 * giving its ranks time to write their records.  So it is passed on only
 * if the launcher is still running 10 s later (someone signalled commfit
 * run alone), once; we stay to gather what the ranks leave. */
static volatile sig_atomic_t cf_run_sig;
static void cf_run_on_signal(int sig)
{
    if (!cf_run_sig)
        cf_run_sig = sig;
}

static int cf_run_wait(pid_t child)
{
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGXCPU};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = cf_run_on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
    int status = 0, waited_ms = 0, forwarded = 0;
    for (;;) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            break;
        if (w < 0 && errno != EINTR) {
            status = 1 << 8;
            break;
        }
        if (cf_run_sig && !forwarded && (waited_ms += 100) >= 10000) {
            kill(child, cf_run_sig);
            forwarded = 1;
        }
        struct timespec ms100 = {0, 100000000};
        nanosleep(&ms100, NULL);
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
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "commfit run: cannot start %s: %s\n", args[0], strerror(errno));
        return 1;
    }
    if (child == 0) {
        execvp(args[0], args);
        fprintf(stderr, "commfit run: cannot run %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    unsetenv("LD_PRELOAD");
    int status = cf_run_wait(child);
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
