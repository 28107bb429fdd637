/* The names of what a run leaves: the profile (COMMFIT_OUTPUT, else a
 * default name with the date and the job), a spawned job's own, and the
 * spool of a job that does not finish; the MPI library's version line and
 * its error classes by name, as the profile and the spill's parts show them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cf_output.h"
#include "cf_sched.h"

/* ---- output path ---- */
static void cf_default_name(char *buf, size_t len, const char *dir)
{
    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
    char job[256];
    if (cf_sched_job_tag(job, sizeof(job)) != 0)
        snprintf(job, sizeof(job), "%ld", (long)getpid());
    snprintf(buf, len, "%s%scommfit-%s-%s.json", dir ? dir : "", dir ? "/" : "", date, job);
    for (int i = 1; i < 1000 && access(buf, F_OK) == 0; i++)
        snprintf(buf, len, "%s%scommfit-%s-%s.%d.json", dir ? dir : "", dir ? "/" : "", date, job, i);
}

/* A spawned job's name for COMMFIT_OUTPUT: "out.json" -> "out.spawn-<pid>.json",
 * so that it never replaces its parent's profile and can be told apart. */
static void cf_spawned_name(char *buf, size_t len, const char *out)
{
    size_t n = strlen(out);
    int has_ext = n > 5 && strcmp(out + n - 5, ".json") == 0;
    snprintf(buf, len, "%.*s.spawn-%ld.json", (int)(has_ext ? n - 5 : n), out, (long)getpid());
}

void cf_profile_output(char *buf, size_t len)
{
    buf[0] = 0;
    if (cf_g.cfg.output[0] && cf_g.spawned)
        cf_spawned_name(buf, len, cf_g.cfg.output);
    else if (cf_g.cfg.output[0])
        snprintf(buf, len, "%s", cf_g.cfg.output);
}

/* COMMFIT_SPOOL, else the profile's name with .parts for .json (rank 0, at
 * MPI_Init); a spawned job's own. */
void cf_spool_default(char *buf, size_t len)
{
    char out[4200];
    if (cf_g.cfg.spool[0]) {
        if (cf_g.spawned)
            snprintf(out, sizeof(out), "%s.spawn-%ld", cf_g.cfg.spool, (long)getpid());
        else
            snprintf(out, sizeof(out), "%s", cf_g.cfg.spool);
    } else {
        cf_profile_output(out, sizeof(out));
        if (!out[0])
            cf_default_name(out, sizeof(out), NULL);
        size_t n = strlen(out);
        if (n > 5 && strcmp(out + n - 5, ".json") == 0)
            out[n - 5] = 0;
        cf_strlcpy(out + strlen(out), ".parts", sizeof(out) - strlen(out));
    }
    /* absolute: the message names it, and merge may run elsewhere */
    cf_path_absolute(out, sizeof(out));
    if (strlen(out) + 64 >= len) {
        buf[0] = 0; /* no room for the part names: nothing is spilled */
        if (cf_g.world_rank == 0)
            cf_log("the spool path %s is too long; a job that does not finish leaves no records", out);
        return;
    }
    cf_strlcpy(buf, out, len);
}

void cf_write_profile(const cf_profile_t *p)
{
    char path[4200], err[512], out[4200];
    if (cf_g.cfg.output[0]) {
        if (cf_g.spawned)
            cf_spawned_name(out, sizeof(out), cf_g.cfg.output);
        else
            snprintf(out, sizeof(out), "%s", cf_g.cfg.output);
        if (cf_profile_write(p, out, err, sizeof(err)) == CF_OK) {
            if (cf_g.cfg.summary || cf_g.spawned)
                cf_log("profile written to %s%s", out, cf_g.spawned ? " (a spawned job: its own file)" : "");
            return;
        }
        cf_log("cannot write the profile to COMMFIT_OUTPUT=%s (%s)", out, err);
    }
    const char *dirs[] = {NULL, getenv("TMPDIR"), "/tmp"};
    for (size_t i = 0; i < CF_ARRAY_LEN(dirs); i++) {
        if (i > 0 && !dirs[i])
            continue;
        cf_default_name(path, sizeof(path), dirs[i]);
        if (cf_profile_write(p, path, err, sizeof(err)) == CF_OK) {
            if (cf_g.cfg.summary || cf_g.cfg.output[0])
                cf_log("profile written to %s", path);
            return;
        }
        cf_log("cannot write the profile to %s (%s)", path, err);
    }
    cf_log("no profile was written");
}

/* The library's name and version, its first line up to a comma, tabs as
 * spaces ("MPICH Version:\t4.0.2" -> "MPICH Version: 4.0.2"). */
void cf_library_version(char *out, size_t len)
{
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    PMPI_Get_library_version(ver, &vlen);
    ver[strcspn(ver, "\n,")] = 0;
    for (char *c = ver; *c; c++)
        if (*c == '\t')
            *c = ' ';
    cf_strlcpy(out, ver, len);
}

/* The process's executable (its file name) and the frameworks whose files
 * it mapped (CF_FW_LIST): what the fusion advice names settings of. */
void cf_program_info(char *prog, size_t len, unsigned *fw)
{
    char path[4096], line[4608];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    prog[0] = '\0';
    if (n > 0) {
        path[n] = '\0';
        const char *base = strrchr(path, '/');
        cf_strlcpy(prog, base != NULL ? base + 1 : path, len);
    }
    *fw = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return;
    *fw = CF_FW_KNOWN;
    while (fgets(line, sizeof(line), f) != NULL)
        *fw |= cf_fw_of_path(line);
    fclose(f);
}

/* ---- MPI's names ---- */

/* MPI's error classes by name: the failed calls' section and the spill's parts */
static const struct {
    int cls;
    const char *name;
} cf_error_classes[] = {
#define CF_E(c) {c, #c}
    CF_E(MPI_ERR_BUFFER), CF_E(MPI_ERR_COUNT), CF_E(MPI_ERR_TYPE), CF_E(MPI_ERR_TAG), CF_E(MPI_ERR_COMM),
    CF_E(MPI_ERR_RANK), CF_E(MPI_ERR_REQUEST), CF_E(MPI_ERR_ROOT), CF_E(MPI_ERR_GROUP), CF_E(MPI_ERR_OP),
    CF_E(MPI_ERR_TOPOLOGY), CF_E(MPI_ERR_DIMS), CF_E(MPI_ERR_ARG), CF_E(MPI_ERR_UNKNOWN), CF_E(MPI_ERR_TRUNCATE),
    CF_E(MPI_ERR_OTHER), CF_E(MPI_ERR_INTERN), CF_E(MPI_ERR_IN_STATUS), CF_E(MPI_ERR_PENDING),
    CF_E(MPI_ERR_KEYVAL), CF_E(MPI_ERR_NO_MEM), CF_E(MPI_ERR_BASE), CF_E(MPI_ERR_INFO_KEY),
    CF_E(MPI_ERR_INFO_VALUE), CF_E(MPI_ERR_INFO_NOKEY), CF_E(MPI_ERR_SPAWN), CF_E(MPI_ERR_PORT),
    CF_E(MPI_ERR_SERVICE), CF_E(MPI_ERR_NAME), CF_E(MPI_ERR_WIN), CF_E(MPI_ERR_SIZE), CF_E(MPI_ERR_DISP),
    CF_E(MPI_ERR_INFO), CF_E(MPI_ERR_LOCKTYPE), CF_E(MPI_ERR_ASSERT), CF_E(MPI_ERR_RMA_CONFLICT),
    CF_E(MPI_ERR_RMA_SYNC), CF_E(MPI_ERR_RMA_RANGE), CF_E(MPI_ERR_RMA_ATTACH), CF_E(MPI_ERR_RMA_SHARED),
    CF_E(MPI_ERR_RMA_FLAVOR), CF_E(MPI_ERR_FILE), CF_E(MPI_ERR_NOT_SAME), CF_E(MPI_ERR_AMODE),
    CF_E(MPI_ERR_UNSUPPORTED_DATAREP), CF_E(MPI_ERR_UNSUPPORTED_OPERATION), CF_E(MPI_ERR_NO_SUCH_FILE),
    CF_E(MPI_ERR_FILE_EXISTS), CF_E(MPI_ERR_BAD_FILE), CF_E(MPI_ERR_ACCESS), CF_E(MPI_ERR_NO_SPACE),
    CF_E(MPI_ERR_QUOTA), CF_E(MPI_ERR_READ_ONLY), CF_E(MPI_ERR_FILE_IN_USE), CF_E(MPI_ERR_DUP_DATAREP),
    CF_E(MPI_ERR_CONVERSION), CF_E(MPI_ERR_IO),
#undef CF_E
};

const char *cf_error_class_name(int cls)
{
    for (size_t e = 0; e < CF_ARRAY_LEN(cf_error_classes); e++)
        if (cf_error_classes[e].cls == cls)
            return cf_error_classes[e].name;
    return NULL;
}
