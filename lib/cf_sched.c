/* The batch job a profile comes from (cf_sched.h). */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cf_sched.h"

static void cf_put(json_t *o, const char *key, const char *env)
{
    const char *v = getenv(env);
    if (v && *v)
        json_object_set_new(o, key, json_string(v));
}

/* "[D-]HH:MM:SS", "MM:SS", "MM" (squeue's %l) in seconds; -1 otherwise */
static long cf_slurm_duration(const char *s)
{
    long d = 0, f[3] = {0, 0, 0};
    int n = 0;
    const char *dash = strchr(s, '-');
    if (dash) {
        d = strtol(s, NULL, 10);
        s = dash + 1;
    }
    while (n < 3 && isdigit((unsigned char)*s)) {
        char *end;
        f[n++] = strtol(s, &end, 10);
        s = *end == ':' ? end + 1 : end;
        if (*end != ':')
            break;
    }
    if (n == 0 || (*s && *s != '\n'))
        return -1;
    long sec = n == 3 ? f[0] * 3600 + f[1] * 60 + f[2] : n == 2 ? (dash ? f[0] * 3600 + f[1] * 60 : f[0] * 60 + f[1])
                                                               : (dash ? f[0] * 3600 : f[0] * 60);
    return d * 86400 + sec;
}

static void cf_slurm_limit(json_t *o, const char *job)
{
    if (strspn(job, "0123456789_") != strlen(job))
        return;
    char cmd[128], line[128] = "";
    snprintf(cmd, sizeof(cmd), "timeout 5 squeue -h -o %%l -j %s 2>/dev/null", job);
    FILE *f = popen(cmd, "r");
    if (!f)
        return;
    if (!fgets(line, sizeof(line), f))
        line[0] = 0;
    pclose(f);
    long s = cf_slurm_duration(line);
    if (s > 0)
        json_object_set_new(o, "time_limit_s", json_integer(s));
}

/* host added to the comma separated list (n of its len bytes used), unless
 * it is there already: the order of first appearance kept */
static void cf_add_host(char *list, size_t len, size_t *n, const char *host, size_t k)
{
    if (!k)
        return;
    for (const char *p = list; (p = strstr(p, host)) != NULL; p++)
        if ((p == list || p[-1] == ',') && (p[k] == ',' || p[k] == 0))
            return;
    if (*n + k + 2 < len)
        *n += (size_t)snprintf(list + *n, len - *n, "%s%s", *n ? "," : "", host);
}

/* PBS: the distinct hosts of $PBS_NODEFILE, comma separated */
static void cf_pbs_nodes(json_t *o)
{
    const char *path = getenv("PBS_NODEFILE");
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char list[4096] = "", host[256];
    size_t n = 0;
    while (fgets(host, sizeof(host), f)) {
        host[strcspn(host, "\r\n")] = 0;
        cf_add_host(list, sizeof(list), &n, host, strlen(host));
    }
    fclose(f);
    if (n)
        json_object_set_new(o, "nodes", json_string(list));
}

/* LSF: LSB_HOSTS names a host once per slot ("h1 h1 h2"); LSB_MCPU_HOSTS,
 * which LSF sets also for jobs too large for LSB_HOSTS, names it once with
 * its slot count ("h1 2 h2 1").  The distinct hosts, comma separated, in
 * the order given. */
static void cf_lsf_nodes(json_t *o)
{
    const char *v = getenv("LSB_HOSTS");
    int mcpu = !v || !*v;
    if (mcpu)
        v = getenv("LSB_MCPU_HOSTS");
    if (!v || !*v)
        return;
    char list[4096] = "", host[256];
    size_t n = 0;
    for (int i = 0; *(v += strspn(v, " \t\n")); i++) {
        size_t k = strcspn(v, " \t\n");
        if ((!mcpu || i % 2 == 0) && k < sizeof(host)) {
            memcpy(host, v, k);
            host[k] = 0;
            cf_add_host(list, sizeof(list), &n, host, k);
        }
        v += k;
    }
    if (n)
        json_object_set_new(o, "nodes", json_string(list));
}

json_t *cf_sched_collect(void)
{
    json_t *o = json_object();
    const char *job;
    if ((job = getenv("SLURM_JOB_ID")) && *job) {
        json_object_set_new(o, "name", json_string("slurm"));
        cf_put(o, "job_id", "SLURM_JOB_ID");
        cf_put(o, "job_name", "SLURM_JOB_NAME");
        cf_put(o, "step", "SLURM_STEP_ID");
        cf_put(o, "array_job_id", "SLURM_ARRAY_JOB_ID");
        cf_put(o, "array_index", "SLURM_ARRAY_TASK_ID");
        cf_put(o, "partition", "SLURM_JOB_PARTITION");
        cf_put(o, "nodes", "SLURM_JOB_NODELIST");
        if (!json_object_get(o, "nodes"))
            cf_put(o, "nodes", "SLURM_NODELIST");
        cf_slurm_limit(o, job);
    } else if ((job = getenv("PBS_JOBID")) && *job) {
        json_object_set_new(o, "name", json_string("pbs"));
        cf_put(o, "job_id", "PBS_JOBID");
        cf_put(o, "job_name", "PBS_JOBNAME");
        cf_put(o, "array_index", "PBS_ARRAY_INDEX");
        if (!json_object_get(o, "array_index"))
            cf_put(o, "array_index", "PBS_ARRAYID");
        cf_put(o, "partition", "PBS_QUEUE");
        cf_pbs_nodes(o);
        const char *w = getenv("PBS_WALLTIME");
        if (w && *w && strspn(w, "0123456789") == strlen(w))
            json_object_set_new(o, "time_limit_s", json_integer(atol(w)));
    } else if ((job = getenv("LSB_JOBID")) && *job) {
        json_object_set_new(o, "name", json_string("lsf"));
        cf_put(o, "job_id", "LSB_JOBID");
        cf_put(o, "job_name", "LSB_JOBNAME");
        const char *ix = getenv("LSB_JOBINDEX");
        if (ix && *ix && strcmp(ix, "0") != 0)
            json_object_set_new(o, "array_index", json_string(ix));
        cf_put(o, "partition", "LSB_QUEUE");
        cf_lsf_nodes(o);
    } else {
        json_decref(o);
        return NULL;
    }
    return o;
}

int cf_sched_job_tag(char *buf, size_t len)
{
    const char *job = getenv("SLURM_JOB_ID"), *arr = getenv("SLURM_ARRAY_JOB_ID"),
               *ix = getenv("SLURM_ARRAY_TASK_ID");
    if (!job || !*job) {
        arr = NULL;
        if ((job = getenv("PBS_JOBID")) && *job)
            ix = getenv("PBS_ARRAY_INDEX");
        else if ((job = getenv("LSB_JOBID")) && *job) {
            ix = getenv("LSB_JOBINDEX");
            arr = ix && *ix && strcmp(ix, "0") != 0 ? job : NULL;
        } else
            return -1;
    }
    if (arr && *arr && ix && *ix)
        snprintf(buf, len, "%s_%s", arr, ix);
    else
        snprintf(buf, len, "%s", job);
    /* a name of a file: nothing that leads elsewhere */
    for (char *p = buf; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.' && *p != '+')
            *p = '_';
    return 0;
}

static const char *const cf_sched_fields[] = {"name", "job_id", "job_name", "step", "array_job_id", "array_index",
                                              "partition", "nodes", "time_limit_s"};
#define CF_SCHED_NFIELDS (sizeof(cf_sched_fields) / sizeof(cf_sched_fields[0]))

/* the known fields of o, strings (time_limit_s a number), nothing else */
static json_t *cf_sched_clean(const json_t *o)
{
    if (!json_is_object(o))
        return NULL;
    json_t *c = json_object();
    for (size_t i = 0; i < CF_SCHED_NFIELDS; i++) {
        json_t *v = json_object_get(o, cf_sched_fields[i]);
        if (i + 1 == CF_SCHED_NFIELDS ? json_is_integer(v) && json_integer_value(v) > 0 : json_is_string(v))
            json_object_set(c, cf_sched_fields[i], v);
    }
    return c;
}

static int cf_sched_path(char *path, size_t len, const char *dir, uint64_t nonce)
{
    return snprintf(path, len, "%s/" CF_SCHED_KEY ".%016llx", dir, (unsigned long long)nonce) < (int)len ? 0 : -1;
}

int cf_sched_save(const char *dir, uint64_t nonce, const json_t *sched)
{
    char path[4200], tmp[4220];
    if (!sched || cf_sched_path(path, sizeof(path), dir, nonce) != 0 ||
        snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
        return -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int ok = f && json_dumpf(sched, f, JSON_COMPACT) == 0;
    if (f ? fclose(f) != 0 : fd >= 0 && close(fd) != 0)
        ok = 0;
    if (ok && rename(tmp, path) == 0)
        return 0;
    if (fd >= 0)
        unlink(tmp);
    return -1;
}

json_t *cf_sched_load(const char *dir, uint64_t nonce)
{
    char path[4200];
    if (cf_sched_path(path, sizeof(path), dir, nonce) != 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size < 65536
                  ? fdopen(fd, "r") : NULL;
    if (!f) {
        close(fd);
        return NULL;
    }
    json_t *o = json_loadf(f, 0, NULL);
    fclose(f);
    json_t *c = cf_sched_clean(o);
    json_decref(o);
    if (c && !json_object_get(c, "job_id")) {
        json_decref(c);
        c = NULL;
    }
    return c;
}

void cf_sched_unlink(const char *dir, uint64_t nonce)
{
    char path[4200];
    if (cf_sched_path(path, sizeof(path), dir, nonce) == 0)
        unlink(path);
}

void cf_sched_to_json(json_t *job, const json_t *extra)
{
    json_t *c = extra ? cf_sched_clean(json_object_get(extra, CF_SCHED_KEY)) : NULL;
    if (c)
        json_object_set_new(job, CF_SCHED_KEY, c);
}

void cf_sched_from_json(const json_t *job, json_t *extra)
{
    json_t *c = job && extra ? cf_sched_clean(json_object_get(job, CF_SCHED_KEY)) : NULL;
    if (c)
        json_object_set_new(extra, CF_SCHED_KEY, c);
}

static const char *cf_str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v && *v ? v : NULL;
}

size_t cf_sched_line(const json_t *extra, char *buf, size_t len)
{
    const json_t *o = extra ? json_object_get(extra, CF_SCHED_KEY) : NULL;
    if (!json_is_object(o) || !cf_str(o, "job_id") || len == 0)
        return 0;
    const char *name = cf_str(o, "name"), *v;
    const char *label = name && !strcmp(name, "slurm") ? "Slurm" : name && !strcmp(name, "pbs") ? "PBS"
                        : name && !strcmp(name, "lsf") ? "LSF" : "batch";
    size_t n = (size_t)snprintf(buf, len, "%s job %s", label, cf_str(o, "job_id"));
    if (n < len && (v = cf_str(o, "step")))
        n += (size_t)snprintf(buf + n, len - n, " step %s", v);
    if (n < len && (v = cf_str(o, "array_index")))
        n += (size_t)snprintf(buf + n, len - n, " (array%s%s index %s)", cf_str(o, "array_job_id") ? " " : "",
                              cf_str(o, "array_job_id") ? cf_str(o, "array_job_id") : "", v);
    if (n < len && (v = cf_str(o, "job_name")))
        n += (size_t)snprintf(buf + n, len - n, " \"%s\"", v);
    if (n < len && (v = cf_str(o, "partition")))
        n += (size_t)snprintf(buf + n, len - n, ", partition %s", v);
    if (n < len && (v = cf_str(o, "nodes")))
        n += (size_t)snprintf(buf + n, len - n, ", nodes %s", v);
    json_int_t lim = json_integer_value(json_object_get(o, "time_limit_s"));
    if (n < len && lim > 0)
        n += (size_t)snprintf(buf + n, len - n, ", time limit %lld:%02lld:%02lld", (long long)(lim / 3600),
                              (long long)(lim / 60 % 60), (long long)(lim % 60));
    if (n >= len)
        n = len - 1;
    /* from a file: no control character reaches a terminal */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
            buf[i] = '?';
    return n;
}
