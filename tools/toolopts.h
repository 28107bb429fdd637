/* The command line shared by the commands that read profiles (report,
 * diff): --format among the formats a command allows, --link into the
 * analysis options, --help, the command's own flags, one-line usage errors
 * followed by the usage, and loading a profile with one line naming the
 * file when it cannot be read. */
#ifndef CF_TOOLS_TOOLOPTS_H
#define CF_TOOLS_TOOLOPTS_H

#include <stdio.h>

#include "cf_analysis.h"
#include "cf_profile.h"

/* A flag of one command, e.g. {"by-region", 'r', &by_region, NULL}: *set_p = 1
 * when given; or an option with a value, {"output", 'o', NULL, &path}:
 * *value_p = its value. */
typedef struct {
    const char *name;
    int letter;
    int *set_p;
    const char **value_p;
} cf_tool_flag_t;

typedef struct {
    const char *cmd;                 /* "report": messages read "commfit report: ..." */
    const char *const *formats;      /* NULL-terminated; the first is the default */
    const cf_tool_flag_t *flags;     /* the command's own flags, {NULL} ends; NULL: none */
    void (*usage)(FILE *f);
} cf_tool_t;

/* What the shared options gave. */
typedef struct {
    int format;                      /* index into formats */
    cf_analysis_opts_t an;
    int nargs;                       /* operands after the options */
    char **args;
} cf_tool_args_t;

/* Parses argv (argv[0] is the command's name).  0; CF_EXIT_USAGE after a
 * message and the usage on stderr; -1 when --help printed the usage. */
int cf_tool_parse(const cf_tool_t *t, int argc, char **argv, cf_tool_args_t *args_p);

/* "commfit CMD: WHAT 'ARG'WHY" (or "commfit CMD: WHAT" when arg is NULL),
 * then the usage, on stderr; returns CF_EXIT_USAGE. */
int cf_tool_usage_error(const cf_tool_t *t, const char *what, const char *arg, const char *why);

/* Reads and analyses the profile at path.  CF_OK; CF_EXIT_USAGE (a
 * directory, a profile that cannot be read) or 1 (the analysis failed),
 * after one line "commfit CMD: PATH: why" on stderr.  On success free with
 * cf_analysis_free(*a_p) and cf_profile_free(p). */
int cf_tool_load(const cf_tool_t *t, const char *path, const cf_analysis_opts_t *an, cf_profile_t *p,
                 cf_analysis_t **a_p);

#endif
