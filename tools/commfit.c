/* commfit: run a job under the profiler, and read what it recorded. */
#include <stdio.h>
#include <string.h>
#include "commfit.h"

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
} cf_command_t;

static const cf_command_t cf_commands[] = {
    {"run", cf_cmd_run, "run an MPI job with the profiler preloaded on every rank"},
    {"model", cf_cmd_model, "time of a message or collective under the alpha + M/B model"},
    {"report", cf_cmd_report, "fits, verdicts, collective efficiency and fusion advice of a profile"},
    {"trace", cf_cmd_trace, "sampled collective instances as a Chrome/Perfetto trace"},
    {"diff", cf_cmd_diff, "compare two profiles: time, calls, fits, realised fusion saving"},
    {"merge", cf_cmd_merge, "the profile of a job that did not reach MPI_Finalize, from its spool"},
};

static void cf_usage(FILE *out)
{
    fprintf(out, "usage: commfit COMMAND [OPTIONS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(cf_commands) / sizeof(cf_commands[0]); i++)
        fprintf(out, "  %-8s %s\n", cf_commands[i].name, cf_commands[i].help);
    fprintf(out, "\n'commfit COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cf_usage(stderr);
        return CF_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        cf_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("commfit %s\n", CF_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(cf_commands) / sizeof(cf_commands[0]); i++)
        if (!strcmp(argv[1], cf_commands[i].name))
            return cf_commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "commfit: unknown command '%s'\n", argv[1]);
    cf_usage(stderr);
    return CF_EXIT_USAGE;
}
