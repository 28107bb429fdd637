/* commfit run [--output FILE] -- mpirun ... : preload the plugin into every
 * rank.  Open MPI's mpirun gets -x for LD_PRELOAD and every COMMFIT_*
 * variable; other launchers (MPICH's hydra, srun) forward the environment.
 * mpirun and mpiexec are Open MPI's unless they lead to hydra. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
                 "  -o, --output FILE  profile path (sets COMMFIT_OUTPUT)\n"
                 "  -q, --quiet        no summary at the end (COMMFIT_SUMMARY=0)\n"
                 "The plugin is %s (override with COMMFIT_LIB).\n",
            cf_find_plugin());
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

    char **cmd = argv + optind;
    int ncmd = argc - optind;
    char **args = calloc((size_t)ncmd + 256, sizeof(char *));
    if (!args) {
        free(preload);
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
    execvp(args[0], args);
    fprintf(stderr, "commfit run: cannot run %s: %s\n", args[0], strerror(errno));
    free(preload);
    free(args);
    return 127;
}
