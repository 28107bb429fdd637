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
    char *func;  /* NULL: unknown */
    char *file;  /* NULL when no DWARF line */
    int line;
    char *where; /* "func (file:line)", or the fallback */
} cf_where_t;

/* What the report held in fixed fields: the same lengths, held as long as
 * they are (a site's frames are many, most strings short). */
#define CF_FUNC_MAX 256
#define CF_FILE_MAX 512
#define CF_WHERE_MAX 320
#define CF_STR(s) ((s) != NULL ? (s) : "")

/* s, at most max - 1 bytes of it, in memory of its own; NULL for "". */
static char *cf_dup_max(const char *s, size_t max)
{
    return s[0] ? strndup(s, max - 1) : NULL;
}

static void cf_where_free(cf_where_t *w, size_t n)
{
    for (size_t i = 0; w != NULL && i < n; i++) {
        free(w[i].func);
        free(w[i].file);
        free(w[i].where);
    }
    free(w);
}

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
        if (strcmp(fn, "??") != 0) {
            free(x->func);
            x->func = cf_dup_max(fn, CF_FUNC_MAX);
        }
        char *colon = strrchr(fl, ':');
        if (colon != NULL && strncmp(fl, "??", 2) != 0) {
            *colon = 0;
            free(x->file);
            x->file = cf_dup_max(fl, CF_FILE_MAX);
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

/* Frames by module (then in their order): each module's frames adjacent. */
static const cf_callsites_t *cf_sort_cs;
static const cf_site_frame_t *cf_frame_at(const cf_callsites_t *cs, size_t s)
{
    return &cs->site[s / CF_CALLSITE_FRAMES].frame[s % CF_CALLSITE_FRAMES];
}

static int cf_cmp_module(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(cf_frame_at(cf_sort_cs, x)->module, cf_frame_at(cf_sort_cs, y)->module);
    return c ? c : (x > y) - (x < y);
}

/* Control characters (an escape sequence in a crafted profile, or in what
 * addr2line says of a crafted binary) never reach a terminal: each becomes
 * '?', as in every other string a report takes from a profile. */
static void cf_clean_str(char *s)
{
    for (; s != NULL && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* One cf_where_t per frame of every site, in order (site i, frame j at
 * i * CF_CALLSITE_FRAMES + j); NULL when out of memory. */
static cf_where_t *cf_resolve(const cf_callsites_t *cs)
{
    size_t nf = cs->n * CF_CALLSITE_FRAMES, nm = 0;
    cf_where_t *w = calloc(nf + 1, sizeof(*w));
    uint64_t *off = calloc(nf + 1, sizeof(*off));
    size_t *k = calloc(nf + 1, sizeof(*k)), *by = calloc(nf + 1, sizeof(*by));
    if (w == NULL || off == NULL || k == NULL || by == NULL) {
        free(w);
        w = NULL;
        goto out;
    }
    /* one addr2line per module, over all its offsets in the sites' order:
     * the frames sorted by module, not each module searched for */
    for (size_t s = 0; s < nf; s++)
        if (s % CF_CALLSITE_FRAMES < cs->site[s / CF_CALLSITE_FRAMES].nframe && cf_frame_at(cs, s)->module != NULL)
            by[nm++] = s;
    cf_sort_cs = cs;
    qsort(by, nm, sizeof(*by), cf_cmp_module);
    for (size_t i = 0, j; i < nm; i = j) {
        const char *module = cf_frame_at(cs, by[i])->module;
        size_t n = 0;
        for (j = i; j < nm && strcmp(cf_frame_at(cs, by[j])->module, module) == 0; j++) {
            off[n] = cf_frame_at(cs, by[j])->offset;
            k[n++] = by[j];
        }
        cf_addr2line(module, off, k, n, w);
    }
    for (size_t s = 0; s < nf; s++) {
        const cf_callsite_t *c = &cs->site[s / CF_CALLSITE_FRAMES];
        const cf_site_frame_t *f = &c->frame[s % CF_CALLSITE_FRAMES];
        cf_where_t *x = &w[s];
        if (s % CF_CALLSITE_FRAMES >= c->nframe)
            continue;
        char buf[CF_WHERE_MAX > CF_FUNC_MAX ? CF_WHERE_MAX : CF_FUNC_MAX], mod[300];
        if (x->func == NULL && f->symbol != NULL) {
            snprintf(buf, CF_FUNC_MAX, "%s+0x%llx", f->symbol, (unsigned long long)f->symbol_offset);
            x->func = cf_dup_max(buf, CF_FUNC_MAX);
        }
        cf_clean_str(x->func);
        cf_clean_str(x->file);
        snprintf(mod, sizeof(mod), "%s+0x%llx", f->module ? cf_base(f->module) : "?", (unsigned long long)f->offset);
        cf_clean_str(mod);
        if (x->func != NULL && x->file != NULL)
            snprintf(buf, CF_WHERE_MAX, "%s (%s:%d)", x->func, cf_base(x->file), x->line);
        else if (x->func != NULL)
            snprintf(buf, CF_WHERE_MAX, "%s (%s)", x->func, mod);
        else
            cf_strlcpy(buf, mod, CF_WHERE_MAX);
        x->where = cf_dup_max(buf, CF_WHERE_MAX);
    }
out:
    free(off);
    free(k);
    free(by);
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
        fprintf(out,
                "  Not recorded: the profile has no call sites (COMMFIT_CALLSITE_DEPTH=0, a job that did not reach "
                "MPI_Finalize, whose spooled parts carry none, or an older commfit).\n");
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
                cf_fmt_size((double)c->bytes, b3, sizeof(b3)), CF_STR(x[0].where));
        for (size_t j = 1; j < c->nframe; j++)
            fprintf(out, "  %4s   called from %s\n", "", CF_STR(x[j].where));
    }
    fprintf(out, "  %zu call sites, %d frame%s each; bytes: sent or received, posted for nonblocking calls\n", cs.n,
            cs.depth, cs.depth == 1 ? "" : "s");
    if (!cs.complete || cs.lost_calls > 0)
        fprintf(out, "  WARNING: %llu calls found the call-site tables full and are not in this table "
                     "(COMMFIT_CALLSITES_MAX)\n",
                (unsigned long long)cs.lost_calls);
    cf_where_free(w, cs.n * CF_CALLSITE_FRAMES);
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
            cf_csv_str(out, CF_STR(x->func));
            cf_csv_str(out, CF_STR(x->file));
            if (x->file != NULL)
                fprintf(out, ",%d", x->line);
            else
                fputc(',', out);
            cf_csv_str(out, c->frame[j].module ? c->frame[j].module : "");
            fprintf(out, ",0x%llx\n", (unsigned long long)c->frame[j].offset);
        }
    }
    cf_where_free(w, cs.n * CF_CALLSITE_FRAMES);
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
                                                   x->func, "file", x->file,
                                                   "line", x->file != NULL ? json_integer(x->line) : json_null(), "module",
                                                   c->frame[j].module, "offset", (json_int_t)c->frame[j].offset,
                                                   "where", CF_STR(x->where)));
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
    cf_where_free(w, cs.n * CF_CALLSITE_FRAMES);
    free(cs.site);
    return CF_OK;
}
