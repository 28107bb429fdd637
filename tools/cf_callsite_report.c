/* commfit report --by-callsite (cf_callsite_report.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cf_bins.h"
#include "cf_callsite_report.h"
#include "cf_common.h"
#include "cf_units.h"

/* Where one frame is, as the report says it. */
typedef struct {
    char func[256];
    char file[512]; /* "" when no DWARF line */
    int line;
    char where[320]; /* "func (file:line)", or the fallback */
} cf_where_t;

/* Runs addr2line over the offsets of one module: n pairs of lines (function,
 * file:line) into w[k[i]].  Nothing changes when it cannot run. */
static void cf_addr2line(const char *module, const uint64_t *off, const size_t *k, size_t n, cf_where_t *w)
{
    char **argv = calloc(n + 7, sizeof(*argv));
    char *hex = calloc(n, 24);
    int fd[2];
    if (argv == NULL || hex == NULL || access(module, R_OK) != 0 || pipe(fd) != 0) {
        free(argv);
        free(hex);
        return;
    }
    size_t a = 0;
    argv[a++] = "addr2line";
    argv[a++] = "-f";
    argv[a++] = "-C";
    argv[a++] = "-e";
    argv[a++] = (char *)module;
    for (size_t i = 0; i < n; i++) {
        /* a return address is past its call: the call's line is the byte before */
        snprintf(hex + 24 * i, 24, "0x%llx", (unsigned long long)(off[i] ? off[i] - 1 : 0));
        argv[a++] = hex + 24 * i;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 2);
        execvp("addr2line", argv);
        _exit(127);
    }
    close(fd[1]);
    FILE *in = pid > 0 ? fdopen(fd[0], "r") : NULL;
    char fn[1024], fl[1024];
    for (size_t i = 0; in != NULL && i < n && fgets(fn, sizeof(fn), in) && fgets(fl, sizeof(fl), in); i++) {
        cf_where_t *x = &w[k[i]];
        fn[strcspn(fn, "\n")] = 0;
        fl[strcspn(fl, "\n")] = 0;
        if (strcmp(fn, "??") != 0)
            cf_strlcpy(x->func, fn, sizeof(x->func));
        char *colon = strrchr(fl, ':');
        if (colon != NULL && strncmp(fl, "??", 2) != 0) {
            *colon = 0;
            cf_strlcpy(x->file, fl, sizeof(x->file));
            x->line = atoi(colon + 1);
        }
    }
    if (in != NULL)
        fclose(in);
    else
        close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    free(argv);
    free(hex);
}

static const char *cf_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* One cf_where_t per frame of every site, in order (site i, frame j at
 * i * CF_CALLSITE_FRAMES + j); NULL when out of memory. */
static cf_where_t *cf_resolve(const cf_callsites_t *cs)
{
    size_t nf = cs->n * CF_CALLSITE_FRAMES;
    cf_where_t *w = calloc(nf + 1, sizeof(*w));
    uint64_t *off = calloc(nf + 1, sizeof(*off));
    size_t *k = calloc(nf + 1, sizeof(*k));
    char *done = calloc(nf + 1, 1);
    if (w == NULL || off == NULL || k == NULL || done == NULL) {
        free(w);
        w = NULL;
        goto out;
    }
    /* one addr2line per module, over all its offsets */
    for (size_t s = 0; s < nf; s++) {
        const cf_site_frame_t *f = &cs->site[s / CF_CALLSITE_FRAMES].frame[s % CF_CALLSITE_FRAMES];
        if (s % CF_CALLSITE_FRAMES >= cs->site[s / CF_CALLSITE_FRAMES].nframe || done[s] || f->module == NULL)
            continue;
        size_t n = 0;
        for (size_t u = s; u < nf; u++) {
            const cf_site_frame_t *g = &cs->site[u / CF_CALLSITE_FRAMES].frame[u % CF_CALLSITE_FRAMES];
            if (u % CF_CALLSITE_FRAMES < cs->site[u / CF_CALLSITE_FRAMES].nframe && !done[u] && g->module != NULL &&
                strcmp(g->module, f->module) == 0) {
                done[u] = 1;
                off[n] = g->offset;
                k[n++] = u;
            }
        }
        cf_addr2line(f->module, off, k, n, w);
    }
    for (size_t s = 0; s < nf; s++) {
        const cf_callsite_t *c = &cs->site[s / CF_CALLSITE_FRAMES];
        const cf_site_frame_t *f = &c->frame[s % CF_CALLSITE_FRAMES];
        cf_where_t *x = &w[s];
        if (s % CF_CALLSITE_FRAMES >= c->nframe)
            continue;
        if (x->func[0] == 0 && f->symbol != NULL)
            snprintf(x->func, sizeof(x->func), "%s+0x%llx", f->symbol, (unsigned long long)f->symbol_offset);
        char mod[300];
        snprintf(mod, sizeof(mod), "%s+0x%llx", f->module ? cf_base(f->module) : "?", (unsigned long long)f->offset);
        if (x->func[0] && x->file[0])
            snprintf(x->where, sizeof(x->where), "%s (%s:%d)", x->func, cf_base(x->file), x->line);
        else if (x->func[0])
            snprintf(x->where, sizeof(x->where), "%s (%s)", x->func, mod);
        else
            cf_strlcpy(x->where, mod, sizeof(x->where));
    }
out:
    free(off);
    free(k);
    free(done);
    return w;
}

static double cf_mpi_total(const cf_profile_t *p)
{
    double t = 0;
    for (size_t i = 0; i < p->nrank; i++)
        t += p->rank[i].mpi_s;
    return t;
}

static const char *cf_site_comm(const cf_profile_t *p, uint32_t id, char *buf, size_t len)
{
    return id == CF_COMM_ID_NONE ? "-" : cf_comm_name(p, id, buf, len);
}

/* The section and its resolution; CF_OK with w NULL when there is none. */
static int cf_load(const cf_profile_t *p, cf_callsites_t *cs, cf_where_t **w)
{
    char err[256];
    int rc = cf_profile_callsites(p, cs, err, sizeof(err));
    *w = NULL;
    if (rc != CF_OK) {
        fprintf(stderr, "commfit report: %s\n", rc == CF_ERR_FORMAT ? err : cf_status_str(rc));
        return rc;
    }
    if (cs->depth == 0)
        return CF_OK;
    *w = cf_resolve(cs);
    if (*w == NULL) {
        free(cs->site);
        fprintf(stderr, "commfit report: %s\n", cf_status_str(CF_ERR_NOMEM));
        return CF_ERR_NOMEM;
    }
    return CF_OK;
}

int cf_callsite_text(FILE *out, const cf_profile_t *p)
{
    cf_callsites_t cs;
    cf_where_t *w;
    int rc = cf_load(p, &cs, &w);
    if (rc != CF_OK)
        return rc;
    fprintf(out, "\nCALL SITES  where the program called MPI, time summed over ranks\n");
    if (cs.depth == 0) {
        fprintf(out, "  Not recorded: the profile has no call sites (COMMFIT_CALLSITE_DEPTH=0, or an older commfit).\n");
        return CF_OK;
    }
    double total = cf_mpi_total(p);
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN], name[CF_COMM_NAME_LEN];
    fprintf(out, "  %4s %-20s %-14s %10s %10s %10s %6s %10s  %s\n", "Site", "Operation", "Communicator", "Calls",
            "Time", "Per call", "MPI%", "Bytes", "Where");
    for (size_t i = 0; i < cs.n; i++) {
        const cf_callsite_t *c = &cs.site[i];
        const cf_where_t *x = &w[i * CF_CALLSITE_FRAMES];
        char pct[16] = "n/a";
        if (total > 0)
            snprintf(pct, sizeof(pct), "%.1f", 100.0 * c->time_s / total);
        fprintf(out, "  %4u %-20s %-14s %10llu %10s %10s %6s %10s  %s\n", c->id, c->op,
                cf_site_comm(p, c->comm, name, sizeof(name)), (unsigned long long)c->calls,
                cf_fmt_time(c->time_s, b1, sizeof(b1)),
                cf_fmt_time(c->calls ? c->time_s / (double)c->calls : NAN, b2, sizeof(b2)), pct,
                cf_fmt_size((double)c->bytes, b3, sizeof(b3)), x[0].where);
        for (size_t j = 1; j < c->nframe; j++)
            fprintf(out, "  %4s   called from %s\n", "", x[j].where);
    }
    fprintf(out, "  %zu call sites, %d frame%s each; bytes: sent or received, posted for nonblocking calls\n", cs.n,
            cs.depth, cs.depth == 1 ? "" : "s");
    if (!cs.complete || cs.lost_calls > 0)
        fprintf(out, "  WARNING: %llu calls found the call-site tables full and are not in this table "
                     "(COMMFIT_CALLSITES_MAX)\n",
                (unsigned long long)cs.lost_calls);
    free(w);
    free(cs.site);
    return CF_OK;
}

static void cf_csv_str(FILE *out, const char *s)
{
    fputc(',', out);
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

int cf_callsite_csv(FILE *out, const cf_profile_t *p)
{
    cf_callsites_t cs;
    cf_where_t *w;
    int rc = cf_load(p, &cs, &w);
    if (rc != CF_OK)
        return rc;
    double total = cf_mpi_total(p);
    char name[CF_COMM_NAME_LEN];
    fprintf(out, "site,level,op,comm,calls,bytes,time_s,time_per_call_s,mpi_share,min_s,max_s,function,file,line,"
                 "module,offset\n");
    for (size_t i = 0; i < cs.n; i++) {
        const cf_callsite_t *c = &cs.site[i];
        for (size_t j = 0; j < c->nframe; j++) {
            const cf_where_t *x = &w[i * CF_CALLSITE_FRAMES + j];
            fprintf(out, "%u,%zu", c->id, j);
            cf_csv_str(out, c->op);
            cf_csv_str(out, cf_site_comm(p, c->comm, name, sizeof(name)));
            fprintf(out, ",%llu,%llu,%.9g,%.9g,%.9g,%.9g,%.9g", (unsigned long long)c->calls,
                    (unsigned long long)c->bytes, c->time_s, c->calls ? c->time_s / (double)c->calls : 0,
                    total > 0 ? c->time_s / total : 0, c->min_s, c->max_s);
            cf_csv_str(out, x->func);
            cf_csv_str(out, x->file);
            if (x->file[0])
                fprintf(out, ",%d", x->line);
            else
                fputc(',', out);
            cf_csv_str(out, c->frame[j].module ? c->frame[j].module : "");
            fprintf(out, ",0x%llx\n", (unsigned long long)c->frame[j].offset);
        }
    }
    free(w);
    free(cs.site);
    return CF_OK;
}

int cf_callsite_json(json_t *root, const cf_profile_t *p)
{
    cf_callsites_t cs;
    cf_where_t *w;
    int rc = cf_load(p, &cs, &w);
    if (rc != CF_OK)
        return rc;
    if (cs.depth == 0) {
        json_object_set_new(root, "callsites", json_null());
        return CF_OK;
    }
    double total = cf_mpi_total(p);
    char name[CF_COMM_NAME_LEN];
    json_t *sites = json_array();
    for (size_t i = 0; sites != NULL && i < cs.n; i++) {
        const cf_callsite_t *c = &cs.site[i];
        json_t *stack = json_array();
        for (size_t j = 0; stack != NULL && j < c->nframe; j++) {
            const cf_where_t *x = &w[i * CF_CALLSITE_FRAMES + j];
            json_array_append_new(stack, json_pack("{s:s?, s:s?, s:o, s:s?, s:I, s:s}", "function",
                                                   x->func[0] ? x->func : NULL, "file", x->file[0] ? x->file : NULL,
                                                   "line", x->file[0] ? json_integer(x->line) : json_null(), "module",
                                                   c->frame[j].module, "offset", (json_int_t)c->frame[j].offset,
                                                   "where", x->where));
        }
        json_array_append_new(
            sites, json_pack("{s:i, s:s, s:I, s:s, s:I, s:I, s:f, s:f, s:o, s:i, s:o}", "id", (int)c->id, "op", c->op,
                             "comm", (json_int_t)c->comm, "comm_name", cf_site_comm(p, c->comm, name, sizeof(name)),
                             "calls", (json_int_t)c->calls, "bytes", (json_int_t)c->bytes, "time_s", c->time_s,
                             "time_per_call_s", c->calls ? c->time_s / (double)c->calls : 0.0, "mpi_share",
                             total > 0 ? json_real(c->time_s / total) : json_null(), "ranks", c->ranks, "stack",
                             stack));
    }
    json_object_set_new(root, "callsites",
                        json_pack("{s:i, s:I, s:b, s:o}", "depth", cs.depth, "lost_calls", (json_int_t)cs.lost_calls,
                                  "complete", cs.complete, "sites", sites));
    free(w);
    free(cs.site);
    return CF_OK;
}
