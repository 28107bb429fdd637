/* commfit merge [-o FILE] [--keep] SPOOL: the profile of a job that did not
 * reach MPI_Finalize, from the parts its ranks spilled (lib/cf_spool.h).
 * `commfit run` does the same by itself after the launcher returns. */
#include <errno.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cf_profile.h"
#include "cf_sched.h"
#include "cf_spool.h"
#include "commfit.h"

static void cf_merge_usage(FILE *out)
{
    fprintf(out, "usage: commfit merge [-o FILE] [--keep] SPOOL\n"
                 "  makes the profile of a job that did not reach MPI_Finalize (killed, MPI_Abort,\n"
                 "  exit without finalizing) from the records its ranks left in SPOOL (the\n"
                 "  directory the end-of-job message names: COMMFIT_SPOOL, or the profile's name\n"
                 "  with .parts for .json)\n"
                 "  -o, --output FILE  profile path (default: SPOOL without .parts, with .json; never\n"
                 "                     written over when it is the complete profile of a later job)\n"
                 "  -k, --keep         keep the spool (it is removed once the profile is written)\n");
}

/* The profile's default name: SPOOL without .parts, with .json. */
static char *cf_merge_default_out(const char *spool)
{
    size_t n = strlen(spool);
    while (n > 1 && spool[n - 1] == '/')
        n--;
    size_t base = n > 6 && strncmp(spool + n - 6, ".parts", 6) == 0 ? n - 6 : n;
    char *out = malloc(base + 6);
    if (out)
        snprintf(out, base + 6, "%.*s.json", (int)base, spool);
    return out;
}

/* A complete profile at out that started no earlier than the parts' job is
 * a later job's (or this one's, finished): never written over. */
static int cf_merge_later_complete(const char *out, const cf_profile_t *parts, char *start, size_t len)
{
    struct stat st;
    cf_profile_t q;
    char err[256];
    if (lstat(out, &st) != 0 || !S_ISREG(st.st_mode) || cf_profile_read(out, &q, err, sizeof(err)) != CF_OK)
        return 0;
    int later = !q.partial && strcmp(q.start_time, parts->start_time) >= 0;
    snprintf(start, len, "%s", q.start_time);
    cf_profile_free(&q);
    return later;
}

int cf_merge_spool(const char *who, const char *spool, unsigned long long nonce, const char *out, int keep)
{
    cf_profile_t p;
    char err[600], note[128], start[64];
    uint64_t job = 0;
    int rc = cf_spool_merge(spool, nonce, &p, &job, note, sizeof(note), err, sizeof(err));
    if (rc == CF_ERR_NODATA && nonce) {
        cf_sched_unlink(spool, nonce); /* rank 0's, of a job that left no part */
        return -1;
    }
    if (rc != CF_OK) {
        fprintf(stderr, "%s: %s: %s\n", who, spool, err);
        return CF_EXIT_USAGE;
    }
    json_t *sched = cf_sched_load(spool, job); /* as rank 0 saw it at MPI_Init */
    if (!sched && nonce)
        sched = cf_sched_collect(); /* commfit run, in the job */
    if (sched && p.extra)
        json_object_set_new(p.extra, CF_SCHED_KEY, sched);
    /* where the user says, or beside the spool: never a path a part names */
    char *dflt = NULL;
    if (!out)
        out = dflt = cf_merge_default_out(spool);
    if (out && cf_merge_later_complete(out, &p, start, sizeof(start))) {
        fprintf(stderr,
                "%s: %s is the complete profile of a job started at %s, not before these parts' (%s): not written "
                "over (-o names another file); the parts stay in %s\n",
                who, out, start, p.start_time, spool);
        cf_profile_free(&p);
        free(dflt);
        return 1;
    }
    rc = out ? cf_profile_write(&p, out, err, sizeof(err)) : CF_ERR_NOMEM;
    if (rc != CF_OK)
        fprintf(stderr, "%s: cannot write the profile to %s: %s\n", who, out ? out : "?",
                out ? err : "out of memory");
    else {
        fprintf(stderr, "commfit: the job did not reach MPI_Finalize: partial profile (%s) written to %s\n", note, out);
        if (!keep) {
            cf_sched_unlink(spool, job);
            cf_spool_remove(spool, job);
        }
    }
    cf_profile_free(&p);
    free(dflt);
    return rc == CF_OK ? 0 : 1;
}

int cf_cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"keep", no_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    int keep = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:kh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'k': keep = 1; break;
        case 'h': cf_merge_usage(stdout); return 0;
        default: cf_merge_usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "commfit merge: %s\n", optind >= argc ? "no spool directory given" : "one spool directory only");
        cf_merge_usage(stderr);
        return CF_EXIT_USAGE;
    }
    const char *spool = argv[optind];
    struct stat st;
    if (stat(spool, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "commfit merge: %s: %s\n", spool, errno && stat(spool, &st) != 0 ? strerror(errno) : "not a directory");
        return CF_EXIT_USAGE;
    }
    return cf_merge_spool("commfit merge", spool, 0, out, keep);
}
