#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cf_bins.h"
#include "cf_jstream.h"
#include "cf_profile.h"
#include "cf_sched.h"

void cf_profile_init(cf_profile_t *p)
{
    memset(p, 0, sizeof(*p));
    p->version = CF_PROFILE_VERSION;
    p->oversubscribed = -1;
}

/* 1 + the index of name in p->fault_region, added if new; 0 when it
 * cannot be held (no memory, 65535 names) */
static unsigned fault_region(cf_profile_t *p, const char *name)
{
    size_t i;
    char **grown, *dup;
    for (i = 0; i < p->nfault_region; i++)
        if (strcmp(p->fault_region[i], name) == 0)
            return (unsigned)i + 1;
    if (p->nfault_region >= UINT16_MAX - 1 ||
        (grown = realloc(p->fault_region, (p->nfault_region + 1) * sizeof(*grown))) == NULL)
        return 0;
    p->fault_region = grown;
    if ((dup = strdup(name)) == NULL)
        return 0;
    p->fault_region[p->nfault_region++] = dup;
    return (unsigned)p->nfault_region;
}

int cf_profile_set_rank_step(cf_profile_t *p, size_t i, const char *region, double faults, double preempt,
                             double step_s)
{
    unsigned id;
    if (i >= p->nrank_faults) {
        size_t n = i + 1 > 2 * p->nrank_faults ? i + 1 : 2 * p->nrank_faults;
        cf_rank_faults_t *g = realloc(p->rank_faults, n * sizeof(*g));
        if (g == NULL)
            return CF_ERR_NOMEM;
        memset(g + p->nrank_faults, 0, (n - p->nrank_faults) * sizeof(*g));
        p->rank_faults = g;
        p->nrank_faults = n;
    }
    if ((id = fault_region(p, region)) == 0)
        return CF_ERR_NOMEM;
    p->rank_faults[i] = (cf_rank_faults_t){(float)faults, (uint16_t)id, preempt >= 0 ? (float)preempt : NAN,
                                           step_s > 0 ? (float)step_s : NAN};
    return CF_OK;
}

double cf_profile_rank_load(const cf_profile_t *p, size_t i, double *step_s_p)
{
    const cf_rank_faults_t *f = i < p->nrank_faults && p->rank_faults[i].region >= 1 ? &p->rank_faults[i] : NULL;
    if (step_s_p != NULL)
        *step_s_p = f != NULL ? (double)f->step_s : NAN;
    return f != NULL ? (double)f->preempt : NAN;
}

double cf_profile_rank_faults(const cf_profile_t *p, size_t i, const char **region_p)
{
    const cf_rank_faults_t *f = i < p->nrank_faults ? &p->rank_faults[i] : NULL;
    int ok = f != NULL && f->region >= 1 && f->region <= p->nfault_region;
    if (region_p != NULL)
        *region_p = ok ? p->fault_region[f->region - 1] : NULL;
    return ok ? (double)f->per_step : NAN;
}

void cf_profile_free(cf_profile_t *p)
{
    free(p->rank);
    free(p->comm);
    cf_index_free(&p->comm_index);
    free(p->rec);
    free(p->matrix_pair);
    free(p->site);
    json_decref(p->site_strings);
    for (size_t i = 0; i < p->nregion; i++)
        free(p->region[i]);
    free(p->region);
    for (size_t i = 0; i < p->nfault_region; i++)
        free(p->fault_region[i]);
    free(p->fault_region);
    free(p->rank_faults);
    for (size_t i = 0; i < p->npartial_reason; i++)
        free(p->partial_reason[i]);
    free(p->partial_reason);
    if (p->extra)
        json_decref(p->extra);
    cf_profile_init(p);
}

int cf_profile_add_partial_reason(cf_profile_t *p, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    p->partial = 1;
    char **a = realloc(p->partial_reason, (p->npartial_reason + 1) * sizeof(char *));
    if (!a)
        return CF_ERR_NOMEM;
    p->partial_reason = a;
    if (!(a[p->npartial_reason] = strdup(buf)))
        return CF_ERR_NOMEM;
    p->npartial_reason++;
    return CF_OK;
}

static uint64_t comm_hash(uint32_t id)
{
    return cf_hash_bytes(CF_HASH_SEED, &id, sizeof(id));
}

const cf_comm_info_t *cf_profile_comm(const cf_profile_t *p, uint32_t id)
{
    if (p->comm_index.slot != NULL) {
        size_t cur = 0, pos;
        while (cf_index_next(&p->comm_index, comm_hash(id), &cur, &pos))
            if (p->comm[pos].id == id)
                return &p->comm[pos];
        return NULL;
    }
    for (size_t i = 0; i < p->ncomm; i++)
        if (p->comm[i].id == id)
            return &p->comm[i];
    return NULL;
}

const char *cf_comm_label(uint32_t id, char *buf, size_t len)
{
    switch (id) {
    case CF_COMM_ID_NONE: snprintf(buf, len, "-"); break;
    case CF_COMM_ID_WORLD: snprintf(buf, len, "world"); break;
    case CF_COMM_ID_SELF: snprintf(buf, len, "self"); break;
    default: snprintf(buf, len, "c%08" PRIx32, id); break;
    }
    return buf;
}

const char *cf_comm_name(const cf_profile_t *p, uint32_t id, char *buf, size_t len)
{
    const cf_comm_info_t *c = id == CF_COMM_ID_NONE || id == CF_COMM_ID_WORLD || id == CF_COMM_ID_SELF || p == NULL
                                  ? NULL
                                  : cf_profile_comm(p, id);
    if (c != NULL && c->user_name[0])
        snprintf(buf, len, "%s", c->user_name);
    else if (c != NULL && c->desc[0])
        snprintf(buf, len, "%s, %d rank%s", c->desc, c->size, c->size == 1 ? "" : "s");
    else if (c != NULL && c->name[0] && strcmp(c->name, "other") != 0)
        /* a profile from before descriptions: the constructor */
        snprintf(buf, len, "%s, %d rank%s", c->name, c->size, c->size == 1 ? "" : "s");
    else
        cf_comm_label(id, buf, len);
    return buf;
}

static const char *const cf_layer_names[] = {"mpi", "ucx"};

/* The "callsites" section sec (its sites null) with the sites read
 * compact, in the form the plugin writes them. */
static json_t *cf_profile_sites_json(const cf_profile_t *p, json_t *sec)
{
    json_t *m = json_deep_copy(sec), *sites = json_array();
    int bad = m == NULL || sites == NULL || json_object_set(m, "sites", sites) != 0;
    for (size_t i = 0; !bad && i < p->nsite; i++) {
        const cf_callsite_t *c = &p->site[i];
        json_t *stack = json_array(),
               *o = json_pack("{s:I, s:s, s:I, s:I, s:I, s:f}", "id", (json_int_t)c->id, "op", c->op, "comm",
                              (json_int_t)c->comm, "calls", (json_int_t)c->calls, "bytes", (json_int_t)c->bytes,
                              "time_s", c->time_s);
        bad = stack == NULL || o == NULL;
        if (!bad && isfinite(c->min_s))
            bad |= json_object_set_new(o, "min_s", json_real(c->min_s));
        if (!bad && isfinite(c->max_s))
            bad |= json_object_set_new(o, "max_s", json_real(c->max_s));
        for (size_t k = 0; !bad && k < c->nframe; k++) {
            const cf_site_frame_t *fr = &c->frame[k];
            json_t *f = json_pack("{s:s?, s:I}", "module", fr->module, "offset", (json_int_t)fr->offset);
            bad = f == NULL;
            if (!bad && fr->symbol != NULL)
                bad |= json_object_set_new(f, "symbol", json_string(fr->symbol)) ||
                       json_object_set_new(f, "symbol_offset", json_integer((json_int_t)fr->symbol_offset));
            bad |= json_array_append_new(stack, f) != 0;
        }
        if (!bad)
            bad |= json_object_set_new(o, "ranks", json_integer(c->ranks)) ||
                   json_object_set(o, "stack", stack) != 0;
        json_decref(stack);
        bad |= json_array_append_new(sites, o) != 0;
    }
    json_decref(sites);
    if (bad) {
        json_decref(m);
        return NULL;
    }
    return m;
}

/* The job section: its size, time, losses, library and machine */
static json_t *job_to_json(const cf_profile_t *p)
{
    json_t *job = json_object();
    json_object_set_new(job, "ranks", json_integer(p->ranks));
    json_object_set_new(job, "nodes", json_integer(p->nodes));
    json_object_set_new(job, "wall_s", json_real(p->wall_s));
    json_object_set_new(job, "partial", json_boolean(p->partial));
    json_t *why = json_array();
    for (size_t i = 0; i < p->npartial_reason; i++)
        json_array_append_new(why, json_string(p->partial_reason[i]));
    json_object_set_new(job, "partial_reasons", why);
    json_object_set_new(job, "failed_calls", json_integer((json_int_t)(p->failed_calls > INT64_MAX ? INT64_MAX : p->failed_calls)));
    if (p->unfinished_requests > 0)
        json_object_set_new(
            job, "unfinished_requests",
            json_integer((json_int_t)(p->unfinished_requests > INT64_MAX ? INT64_MAX : p->unfinished_requests)));
    if (p->oversubscribed >= 0) {
        json_object_set_new(job, "oversubscribed", json_boolean(p->oversubscribed));
        json_object_set_new(job, "ranks_per_node_max", json_integer(p->ranks_per_node_max));
        json_object_set_new(job, "cpus_per_node_min", json_integer(p->cpus_per_node_min));
    }
    json_object_set_new(job, "mpi_library", json_string(p->mpi_library));
    json_object_set_new(job, "start_time", json_string(p->start_time));
    json_object_set_new(job, "clock_hz", json_real(p->clock_hz));
    json_object_set_new(job, "memcpy_Bps", json_real(p->memcpy_Bps));
    if (p->program[0] != '\0')
        json_object_set_new(job, "program", json_string(p->program));
    if (p->frameworks & CF_FW_KNOWN) {
        json_t *fw = json_array();
#define CF_FW_PUT_(id, name, marker)                                                                                   \
    if (p->frameworks & CF_FW_BIT(id))                                                                                 \
        json_array_append_new(fw, json_string(name));
        CF_FW_LIST(CF_FW_PUT_)
#undef CF_FW_PUT_
        json_object_set_new(job, "frameworks", fw);
    }
    if (p->post_gaps > 0) {
        json_object_set_new(job, "post_gap_s", json_real(p->post_gap_s));
        json_object_set_new(job, "post_gaps", json_integer((json_int_t)p->post_gaps));
    }
    if (p->post_leads > 0) {
        json_object_set_new(job, "post_lead_s", json_real(p->post_lead_s));
        json_object_set_new(job, "post_leads", json_integer((json_int_t)p->post_leads));
    }
    cf_sched_to_json(job, p->extra);
    return job;
}

json_t *cf_profile_to_json(const cf_profile_t *p)
{
    json_t *root = json_object();
    json_object_set_new(root, "format", json_string(CF_PROFILE_FORMAT));
    json_object_set_new(root, "version", json_integer(CF_PROFILE_VERSION));

    json_object_set_new(root, "job", job_to_json(p));

    json_t *ranks = json_array();
    for (size_t i = 0; i < p->nrank; i++) {
        const cf_rank_info_t *r = &p->rank[i];
        json_array_append_new(ranks, json_pack("{s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:I, s:i, s:i}", "rank", r->rank,
                                               "node", r->node, "host", r->host, "wall_s", r->wall_s, "mpi_s",
                                               r->mpi_s, "wait_s", r->wait_s, "transfer_s", r->xfer_s, "dropped",
                                               (json_int_t)r->dropped, "node_ranks", r->node_ranks, "node_cpus",
                                               r->node_cpus));
        json_t *jr = json_array_get(ranks, json_array_size(ranks) - 1);
        const char *sr;
        double sf = cf_profile_rank_faults(p, i, &sr);
        if (isfinite(sf)) {
            double ss, sp = cf_profile_rank_load(p, i, &ss);
            json_object_set_new(jr, "step_minor_faults", json_real(sf));
            json_object_set_new(jr, "step_region", json_string(sr));
            if (isfinite(sp))
                json_object_set_new(jr, "step_preemptions", json_real(sp));
            if (isfinite(ss))
                json_object_set_new(jr, "step_s", json_real(ss));
        }
    }
    json_object_set_new(root, "ranks", ranks);

    json_t *comms = json_array();
    for (size_t i = 0; i < p->ncomm; i++) {
        const cf_comm_info_t *c = &p->comm[i];
        char label[24];
        json_array_append_new(comms, json_pack("{s:I, s:s, s:s, s:s, s:o, s:i, s:i}", "id", (json_int_t)c->id,
                                               "label", cf_comm_label(c->id, label, sizeof(label)), "name", c->name,
                                               "description", c->desc, "user_name",
                                               c->user_name[0] ? json_string(c->user_name) : json_null(),
                                               "size", c->size, "nodes", c->nodes));
        if (c->instances)
            json_object_set_new(json_array_get(comms, i), "instances",
                                json_integer((json_int_t)(c->instances > INT64_MAX ? INT64_MAX : c->instances)));
    }
    json_object_set_new(root, "communicators", comms);

    json_t *regions = json_array();
    for (size_t i = 0; i < p->nregion; i++)
        json_array_append_new(regions, json_string(p->region[i]));
    json_object_set_new(root, "regions", regions);

    json_t *recs = json_array();
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        json_t *o = json_object();
        json_object_set_new(o, "layer", json_string(cf_layer_names[r->layer ? 1 : 0]));
        json_object_set_new(o, "op", json_string(r->op));
        json_object_set_new(o, "kind", json_string(r->kind));
        if (r->layer == CF_LAYER_UCX)
            json_object_set_new(o, "parent_op", r->parent_op[0] ? json_string(r->parent_op) : json_null());
        json_object_set_new(o, "comm", json_integer(r->comm));
        json_object_set_new(o, "path", json_string(cf_path_name((unsigned)r->path)));
        if (r->region && r->region <= p->nregion)
            json_object_set_new(o, "region", json_string(p->region[r->region - 1]));
        json_object_set_new(o, "size_lo", json_integer((json_int_t)r->size_lo));
        json_object_set_new(o, "size_hi", json_integer((json_int_t)(r->size_hi > INT64_MAX ? INT64_MAX : r->size_hi)));
        json_object_set_new(o, "calls", json_integer((json_int_t)r->calls));
        json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
        json_object_set_new(o, "time_s", json_pack("{s:f, s:f, s:f, s:f, s:f}", "sum", r->t_sum, "min", r->t_min,
                                                   "max", r->t_max, "p50", r->t_p50, "p99", r->t_p99));
        json_object_set_new(o, "wait_s", json_real(r->wait_s));
        if (r->sample_eligible) {
            json_object_set_new(o, "sample_eligible", json_integer((json_int_t)r->sample_eligible));
            json_object_set_new(o, "sample_selected", json_integer((json_int_t)r->sample_selected));
        }
        if (r->ranks_missing)
            json_object_set_new(o, "ranks_missing", json_integer(r->ranks_missing));
        if (r->blocked_s > 0)
            json_object_set_new(o, "blocked_s", json_real(r->blocked_s));
        if (r->post_s > 0)
            json_object_set_new(o, "post_s", json_real(r->post_s));
        if (r->xfer_n)
            json_object_set_new(o, "transfer_s", json_pack("{s:I, s:f, s:f, s:f}", "n", (json_int_t)r->xfer_n, "sum",
                                                           r->xfer_sum, "p50", r->xfer_p50, "p99", r->xfer_p99));
        json_array_append_new(recs, o);
    }
    json_object_set_new(root, "records", recs);

    if (p->extra) {
        const char *k;
        json_t *v;
        json_object_foreach(p->extra, k, v) {
            if (json_object_get(root, k) || strcmp(k, CF_SCHED_KEY) == 0)
                continue;
            if (strcmp(k, "matrix") == 0 && p->matrix_cols)
                json_object_set_new(root, k, cf_profile_matrix_json(p));
            else if (strcmp(k, "callsites") == 0 && p->nsite > 0)
                json_object_set_new(root, k, cf_profile_sites_json(p, v));
            else
                json_object_set(root, k, v);
        }
    }
    return root;
}

/* Control characters from a profile (a host name, a library string, a
 * crafted file) never reach a terminal: each becomes '?', the C1 controls
 * of UTF-8 (U+0080 to U+009F: 8-bit CSI among them) too.  The rest of
 * UTF-8 stays (jansson has checked that it is valid). */
static void cf_clean(char *s)
{
    char *d = s;
    for (; s != NULL && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f) {
            *d++ = '?';
            s++;
        } else {
            *d++ = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    if (d != NULL)
        *d = '\0';
}

/* A string of the kept sections, cleaned in place. */
static void cf_clean_json(json_t *s)
{
    const char *v = json_string_value(s);
    for (const unsigned char *c = (const unsigned char *)v; c != NULL && *c; c++)
        if (*c < 0x20 || *c == 0x7f || (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)) {
            char *t = strdup(v);
            if (t != NULL) {
                cf_clean(t);
                json_string_set(s, t);
            }
            free(t);
            return;
        }
}

static void cf_errf(char *err, size_t len, const char *fmt, ...)
{
    if (!err || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    cf_clean(err);
}

/* Every string the readers take from a profile, cleaned. */
static void cf_profile_clean(cf_profile_t *p)
{
    cf_clean(p->mpi_library);
    cf_clean(p->start_time);
    cf_clean(p->program);
    for (size_t i = 0; i < p->npartial_reason; i++)
        cf_clean(p->partial_reason[i]);
    for (size_t i = 0; i < p->nrank; i++)
        cf_clean(p->rank[i].host);
    for (size_t i = 0; i < p->ncomm; i++) {
        cf_clean(p->comm[i].name);
        cf_clean(p->comm[i].desc);
        cf_clean(p->comm[i].user_name);
    }
    for (size_t i = 0; i < p->nregion; i++)
        cf_clean(p->region[i]);
    for (size_t i = 0; i < p->nrec; i++) {
        cf_clean(p->rec[i].op);
        cf_clean(p->rec[i].kind);
        cf_clean(p->rec[i].parent_op);
    }
    /* call sites: what --by-callsite prints of them */
    json_t *sites = json_object_get(json_object_get(p->extra, "callsites"), "sites"), *e, *f;
    size_t i, j;
    json_array_foreach(sites, i, e) {
        cf_clean_json(json_object_get(e, "op"));
        json_array_foreach(json_object_get(e, "stack"), j, f) {
            cf_clean_json(json_object_get(f, "module"));
            cf_clean_json(json_object_get(f, "symbol"));
        }
    }
}

/* The file a profile goes to: path itself, or what a symlink there names,
 * so that the link stays a link.  Anything but a regular file or a new
 * name is refused: the temporary file renamed over a device, a FIFO or a
 * directory would replace it (as root, COMMFIT_OUTPUT=/dev/null turned the
 * machine's /dev/null into a regular file). */
static int cf_profile_target(const char *path, char *out, size_t outlen, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            cf_errf(err, errlen, "cannot look at %s: %s", path, strerror(errno));
            return CF_ERR_IO;
        }
        if (snprintf(out, outlen, "%s", path) >= (int)outlen) {
            cf_errf(err, errlen, "path too long");
            return CF_ERR_INVALID;
        }
        return CF_OK;
    }
    if (S_ISLNK(st.st_mode)) {
        /* written through only when the link is ours and so is what it names:
         * another user's link (planted in a shared directory) is refused */
        struct stat to;
        if (st.st_uid != geteuid() || (stat(path, &to) == 0 && to.st_uid != geteuid())) {
            cf_errf(err, errlen, "%s is a symbolic link %s another user: refused", path,
                    st.st_uid != geteuid() ? "of" : "to a file of");
            return CF_ERR_INVALID;
        }
        char *real = realpath(path, NULL);
        if (real == NULL) {
            cf_errf(err, errlen, "%s is a symbolic link to nothing that exists: refused", path);
            return CF_ERR_INVALID;
        }
        if (stat(real, &st) != 0 || snprintf(out, outlen, "%s", real) >= (int)outlen) {
            cf_errf(err, errlen, "cannot follow the symbolic link %s", path);
            free(real);
            return CF_ERR_INVALID;
        }
        free(real);
    } else if (snprintf(out, outlen, "%s", path) >= (int)outlen) {
        cf_errf(err, errlen, "path too long");
        return CF_ERR_INVALID;
    }
    if (!S_ISREG(st.st_mode)) {
        cf_errf(err, errlen, "%s is %s, not a file: refused", out,
                S_ISDIR(st.st_mode)                           ? "a directory"
                : S_ISFIFO(st.st_mode)                        ? "a FIFO"
                : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                              : "a socket or other special file");
        return CF_ERR_INVALID;
    }
    return CF_OK;
}

int cf_profile_write(const cf_profile_t *p, const char *path_in, char *err, size_t errlen)
{
    char tmp[4200], path[4096];
    int trc = cf_profile_target(path_in, path, sizeof(path), err, errlen);
    if (trc != CF_OK)
        return trc;
    json_t *root = cf_profile_to_json(p);
    if (!root) {
        cf_errf(err, errlen, "out of memory");
        return CF_ERR_NOMEM;
    }
    /* the temporary file: a name nobody can guess, made new (never through
     * a link someone put there), 0666 less the umask as any file */
    int rc = CF_OK, fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        uint64_t r;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            r = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&r ^ (uint64_t)tries << 48;
        if (snprintf(tmp, sizeof(tmp), "%s.tmp.%016" PRIx64, path, r) >= (int)sizeof(tmp)) {
            cf_errf(err, errlen, "path too long");
            json_decref(root);
            return CF_ERR_INVALID;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        cf_errf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        rc = CF_ERR_IO;
        goto err_json;
    }
    if (json_dumpf(root, f, JSON_INDENT(1) | JSON_REAL_PRECISION(9)) != 0 || fputc('\n', f) == EOF) {
        cf_errf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        rc = CF_ERR_IO;
        fclose(f);
        goto err_tmp;
    }
    if (fclose(f) != 0) {
        cf_errf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        rc = CF_ERR_IO;
        goto err_tmp;
    }
    if (rename(tmp, path) != 0) {
        cf_errf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        rc = CF_ERR_IO;
        goto err_tmp;
    }
    json_decref(root);
    return CF_OK;

err_tmp:
    unlink(tmp);
err_json:
    json_decref(root);
    return rc;
}

/* ---- reading: every field is checked, the first problem is reported ---- */

static int cf_get_num(json_t *o, const char *key, double *v, const char *where, char *err, size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x || !json_is_number(x)) {
        cf_errf(err, errlen, "%s: '%s' %s", where, key, x ? "is not a number" : "is missing");
        return CF_ERR_FORMAT;
    }
    *v = json_number_value(x);
    return CF_OK;
}

/* A time: a number, finite and not negative. */
static int cf_get_time(json_t *o, const char *key, double *v, const char *where, char *err, size_t errlen)
{
    int rc = cf_get_num(o, key, v, where, err, errlen);
    if (rc == CF_OK && !(isfinite(*v) && *v >= 0)) {
        cf_errf(err, errlen, "%s: '%s' is %g, not a time (finite, not negative)", where, key, *v);
        return CF_ERR_FORMAT;
    }
    return rc;
}

static int cf_get_u64(json_t *o, const char *key, uint64_t *v, const char *where, char *err, size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x || !json_is_integer(x) || json_integer_value(x) < 0) {
        cf_errf(err, errlen, "%s: '%s' %s", where, key, x ? "is not a non-negative integer" : "is missing");
        return CF_ERR_FORMAT;
    }
    *v = (uint64_t)json_integer_value(x);
    return CF_OK;
}

static int cf_get_int(json_t *o, const char *key, int *v, const char *where, char *err, size_t errlen)
{
    uint64_t u;
    int rc = cf_get_u64(o, key, &u, where, err, errlen);
    if (rc == CF_OK && u > INT32_MAX) {
        cf_errf(err, errlen, "%s: '%s' is out of range", where, key);
        return CF_ERR_FORMAT;
    }
    if (rc == CF_OK)
        *v = (int)u;
    return rc;
}

static int cf_get_str(json_t *o, const char *key, char *dst, size_t len, const char *where, char *err,
                      size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x || !json_is_string(x)) {
        cf_errf(err, errlen, "%s: '%s' %s", where, key, x ? "is not a string" : "is missing");
        return CF_ERR_FORMAT;
    }
    snprintf(dst, len, "%s", json_string_value(x));
    return CF_OK;
}

static json_t *cf_get_array(json_t *root, const char *key, char *err, size_t errlen)
{
    json_t *a = json_object_get(root, key);
    if (!a || !json_is_array(a))
        cf_errf(err, errlen, "'%s' %s", key, a ? "is not an array" : "is missing");
    return a && json_is_array(a) ? a : NULL;
}

#define CF_CHECK(expr)                                                                                           \
    do {                                                                                                         \
        int rc_ = (expr);                                                                                        \
        if (rc_ != CF_OK)                                                                                        \
            return rc_;                                                                                          \
    } while (0)

/* A profile being read, section by section in the format's order (format,
 * version, job, ranks, communicators, regions, records, then the rest):
 * from a whole tree (cf_profile_from_json) or element by element from a
 * stream (cf_profile_read), by the same checks. */
typedef struct {
    cf_profile_t p;
    size_t cap_rank, cap_comm, cap_rec, cap_pair, cap_site;
    uint64_t calls_total, bytes_total;
    char *err;
    size_t errlen;
} cf_rd_t;

/* A new zeroed element at the end of *a (n elements, room for *cap);
 * NULL when out of memory. */
static void *cf_rd_push(void **a, size_t *n, size_t *cap, size_t size)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        void *b = realloc(*a, c * size);
        if (b == NULL)
            return NULL;
        *a = b;
        *cap = c;
    }
    char *e = (char *)*a + *n * size;
    memset(e, 0, size);
    (*n)++;
    return e;
}

/* Room for n more elements, when the count is known (a tree). */
static int cf_rd_reserve(void **a, size_t *cap, size_t n, size_t size)
{
    if (n <= *cap)
        return CF_OK;
    void *b = realloc(*a, n * size);
    if (b == NULL)
        return CF_ERR_NOMEM;
    *a = b;
    *cap = n;
    return CF_OK;
}

static int cf_rd_header(cf_rd_t *rd, json_t *fmt, json_t *ver)
{
    char *err = rd->err;
    size_t errlen = rd->errlen;
    if (!fmt || !json_is_string(fmt) || strcmp(json_string_value(fmt), CF_PROFILE_FORMAT) != 0) {
        cf_errf(err, errlen, "not a commfit profile ('format' is not \"%s\")", CF_PROFILE_FORMAT);
        return CF_ERR_FORMAT;
    }
    if (!ver || !json_is_integer(ver)) {
        cf_errf(err, errlen, "'version' is missing or not an integer");
        return CF_ERR_FORMAT;
    }
    if (json_integer_value(ver) != CF_PROFILE_VERSION) {
        cf_errf(err, errlen, "profile version %" JSON_INTEGER_FORMAT " is not supported (this commfit reads version %d)",
                json_integer_value(ver), CF_PROFILE_VERSION);
        return CF_ERR_VERSION;
    }
    return CF_OK;
}

/* A job's time of the framework's per post (post_gap_s, post_lead_s) and
 * its count, where the count is positive and the time a number >= 0. */
static void cf_get_gap(json_t *job, const char *key_s, const char *key_n, double *s, uint64_t *n)
{
    json_t *x = json_object_get(job, key_n), *v = json_object_get(job, key_s);
    if (x && json_is_integer(x) && json_integer_value(x) > 0 && json_is_number(v) && json_number_value(v) >= 0) {
        *n = (uint64_t)json_integer_value(x);
        *s = json_number_value(v);
    }
}

static int cf_rd_job(cf_rd_t *rd, json_t *job)
{
    cf_profile_t *p = &rd->p;
    char *err = rd->err;
    size_t errlen = rd->errlen;
    if (!json_is_object(job)) {
        cf_errf(err, errlen, "'job' is missing or not an object");
        return CF_ERR_FORMAT;
    }
    /* the batch job's names (cf_sched.h), kept beside the other sections */
    if (p->extra == NULL && (p->extra = json_object()) == NULL)
        return CF_ERR_NOMEM;
    cf_sched_from_json(job, p->extra);
    CF_CHECK(cf_get_int(job, "ranks", &p->ranks, "job", err, errlen));
    CF_CHECK(cf_get_int(job, "nodes", &p->nodes, "job", err, errlen));
    CF_CHECK(cf_get_time(job, "wall_s", &p->wall_s, "job", err, errlen));
    json_t *partial = json_object_get(job, "partial");
    if (!json_is_boolean(partial)) {
        cf_errf(err, errlen, "job: 'partial' is missing or not a boolean");
        return CF_ERR_FORMAT;
    }
    p->partial = json_is_true(partial);
    json_t *x;
    if ((x = json_object_get(job, "partial_reasons")) && json_is_array(x)) {
        size_t k;
        json_t *s;
        json_array_foreach(x, k, s) {
            if (!json_is_string(s)) {
                cf_errf(err, errlen, "job: partial_reasons[%zu] is not a string", k);
                return CF_ERR_FORMAT;
            }
            int keep = p->partial;
            if (cf_profile_add_partial_reason(p, "%s", json_string_value(s)) != CF_OK)
                return CF_ERR_NOMEM;
            p->partial = keep; /* the flag is what the file says */
        }
    }
    if ((x = json_object_get(job, "failed_calls")) && json_is_integer(x) && json_integer_value(x) >= 0)
        p->failed_calls = (uint64_t)json_integer_value(x);
    if ((x = json_object_get(job, "unfinished_requests")) && json_is_integer(x) && json_integer_value(x) >= 0)
        p->unfinished_requests = (uint64_t)json_integer_value(x);
    if ((x = json_object_get(job, "oversubscribed")) && json_is_boolean(x))
        p->oversubscribed = json_is_true(x);
    if ((x = json_object_get(job, "ranks_per_node_max")) && json_is_integer(x) && json_integer_value(x) >= 0 &&
        json_integer_value(x) <= INT32_MAX)
        p->ranks_per_node_max = (int)json_integer_value(x);
    if ((x = json_object_get(job, "cpus_per_node_min")) && json_is_integer(x) && json_integer_value(x) >= 0 &&
        json_integer_value(x) <= INT32_MAX)
        p->cpus_per_node_min = (int)json_integer_value(x);
    CF_CHECK(cf_get_str(job, "mpi_library", p->mpi_library, sizeof(p->mpi_library), "job", err, errlen));
    if ((x = json_object_get(job, "start_time")) && json_is_string(x))
        cf_strlcpy(p->start_time, json_string_value(x), sizeof(p->start_time));
    if ((x = json_object_get(job, "clock_hz")) && json_is_number(x))
        p->clock_hz = json_number_value(x);
    if ((x = json_object_get(job, "memcpy_Bps")) && json_is_number(x))
        p->memcpy_Bps = json_number_value(x);
    if ((x = json_object_get(job, "program")) && json_is_string(x))
        cf_strlcpy(p->program, json_string_value(x), sizeof(p->program));
    if ((x = json_object_get(job, "frameworks")) && json_is_array(x)) {
        size_t i;
        json_t *v;
        p->frameworks = CF_FW_KNOWN;
        json_array_foreach (x, i, v) {
            const char *name = json_is_string(v) ? json_string_value(v) : "";
#define CF_FW_GET_(id, fname, marker)                                                                                  \
    if (strcmp(name, fname) == 0)                                                                                      \
        p->frameworks |= CF_FW_BIT(id);
            CF_FW_LIST(CF_FW_GET_)
#undef CF_FW_GET_
        }
    }
    cf_get_gap(job, "post_gap_s", "post_gaps", &p->post_gap_s, &p->post_gaps);
    cf_get_gap(job, "post_lead_s", "post_leads", &p->post_lead_s, &p->post_leads);
    return CF_OK;
}

static int cf_rd_rank(cf_rd_t *rd, json_t *o)
{
    cf_profile_t *p = &rd->p;
    char *err = rd->err, where[64];
    size_t errlen = rd->errlen;
    json_t *x;
    snprintf(where, sizeof(where), "ranks[%zu]", p->nrank);
    cf_rank_info_t *r = cf_rd_push((void **)&p->rank, &p->nrank, &rd->cap_rank, sizeof(*r));
    if (r == NULL)
        return CF_ERR_NOMEM;
    CF_CHECK(cf_get_int(o, "rank", &r->rank, where, err, errlen));
    CF_CHECK(cf_get_int(o, "node", &r->node, where, err, errlen));
    CF_CHECK(cf_get_str(o, "host", r->host, sizeof(r->host), where, err, errlen));
    CF_CHECK(cf_get_time(o, "wall_s", &r->wall_s, where, err, errlen));
    CF_CHECK(cf_get_time(o, "mpi_s", &r->mpi_s, where, err, errlen));
    if ((x = json_object_get(o, "wait_s")) && json_is_number(x))
        r->wait_s = json_number_value(x);
    if ((x = json_object_get(o, "transfer_s")) && json_is_number(x))
        r->xfer_s = json_number_value(x);
    if ((x = json_object_get(o, "dropped")) && json_is_integer(x))
        r->dropped = (uint64_t)json_integer_value(x);
    if ((x = json_object_get(o, "node_ranks")) && json_is_integer(x) && json_integer_value(x) >= 0 &&
        json_integer_value(x) <= INT32_MAX)
        r->node_ranks = (int)json_integer_value(x);
    if ((x = json_object_get(o, "node_cpus")) && json_is_integer(x) && json_integer_value(x) >= 0 &&
        json_integer_value(x) <= INT32_MAX)
        r->node_cpus = (int)json_integer_value(x);
    json_t *sp = json_object_get(o, "step_preemptions"), *ss = json_object_get(o, "step_s");
    if ((x = json_object_get(o, "step_minor_faults")) && json_is_number(x) && json_number_value(x) >= 0 &&
        json_is_string(json_object_get(o, "step_region")) &&
        cf_profile_set_rank_step(p, p->nrank - 1, json_string_value(json_object_get(o, "step_region")),
                                 json_number_value(x), json_is_number(sp) ? json_number_value(sp) : NAN,
                                 json_is_number(ss) ? json_number_value(ss) : NAN) != CF_OK)
        return CF_ERR_NOMEM;
    return CF_OK;
}

static int cf_rd_ranks_end(cf_rd_t *rd)
{
    cf_profile_t *p = &rd->p;
    /* a job that did not finish may lack ranks that left nothing (partial) */
    if (p->ranks < 1 || (size_t)p->ranks < p->nrank || ((size_t)p->ranks > p->nrank && !(p->partial && p->nrank > 0))) {
        cf_errf(rd->err, rd->errlen, "job: 'ranks' is %d but 'ranks' lists %zu rank%s", p->ranks, p->nrank,
                p->nrank == 1 ? "" : "s");
        return CF_ERR_FORMAT;
    }
    return CF_OK;
}

static int cf_rd_comm(cf_rd_t *rd, json_t *o)
{
    cf_profile_t *p = &rd->p;
    char *err = rd->err, where[64];
    size_t errlen = rd->errlen;
    uint64_t id;
    json_t *x;
    snprintf(where, sizeof(where), "communicators[%zu]", p->ncomm);
    cf_comm_info_t *c = cf_rd_push((void **)&p->comm, &p->ncomm, &rd->cap_comm, sizeof(*c));
    if (c == NULL)
        return CF_ERR_NOMEM;
    CF_CHECK(cf_get_u64(o, "id", &id, where, err, errlen));
    c->id = (uint32_t)id;
    CF_CHECK(cf_get_int(o, "size", &c->size, where, err, errlen));
    CF_CHECK(cf_get_int(o, "nodes", &c->nodes, where, err, errlen));
    if ((x = json_object_get(o, "name")) && json_is_string(x))
        cf_strlcpy(c->name, json_string_value(x), sizeof(c->name));
    if ((x = json_object_get(o, "description")) && json_is_string(x))
        cf_strlcpy(c->desc, json_string_value(x), sizeof(c->desc));
    if ((x = json_object_get(o, "user_name")) && json_is_string(x))
        cf_strlcpy(c->user_name, json_string_value(x), sizeof(c->user_name));
    if ((x = json_object_get(o, "instances")) && json_is_integer(x) && json_integer_value(x) > 0)
        c->instances = (uint64_t)json_integer_value(x);
    return CF_OK;
}

static int cf_rd_comms_end(cf_rd_t *rd)
{
    cf_profile_t *p = &rd->p;
    if (cf_index_init(&p->comm_index, p->ncomm) != CF_OK)
        return CF_ERR_NOMEM;
    for (size_t k = 0; k < p->ncomm; k++) /* the first of a repeated id is found first */
        cf_index_put(&p->comm_index, comm_hash(p->comm[k].id), k);
    return CF_OK;
}

static int cf_rd_regions(cf_rd_t *rd, json_t *a)
{
    cf_profile_t *p = &rd->p;
    json_t *o;
    size_t i;
    if (a == NULL || !json_is_array(a))
        return CF_OK;
    p->region = calloc(json_array_size(a) + 1, sizeof(char *));
    if (!p->region)
        return CF_ERR_NOMEM;
    json_array_foreach(a, i, o) {
        if (!json_is_string(o)) {
            cf_errf(rd->err, rd->errlen, "regions[%zu] is not a string", i);
            return CF_ERR_FORMAT;
        }
        if ((p->region[p->nregion] = strdup(json_string_value(o))) == NULL)
            return CF_ERR_NOMEM;
        p->nregion++;
    }
    return CF_OK;
}

static int cf_rd_record(cf_rd_t *rd, json_t *o)
{
    cf_profile_t *p = &rd->p;
    char *err = rd->err, where[64], buf[40];
    size_t errlen = rd->errlen, i = p->nrec;
    uint64_t comm;
    json_t *x;
    cf_record_t *r = cf_rd_push((void **)&p->rec, &p->nrec, &rd->cap_rec, sizeof(*r));
    if (r == NULL)
        return CF_ERR_NOMEM;
    snprintf(where, sizeof(where), "records[%zu]", i);
    if (!json_is_object(o)) {
        cf_errf(err, errlen, "%s is not an object", where);
        return CF_ERR_FORMAT;
    }
    CF_CHECK(cf_get_str(o, "layer", buf, sizeof(buf), where, err, errlen));
    if (strcmp(buf, "mpi") == 0)
        r->layer = CF_LAYER_MPI;
    else if (strcmp(buf, "ucx") == 0)
        r->layer = CF_LAYER_UCX;
    else {
        cf_errf(err, errlen, "%s: unknown layer '%s'", where, buf);
        return CF_ERR_FORMAT;
    }
    CF_CHECK(cf_get_str(o, "op", r->op, sizeof(r->op), where, err, errlen));
    if ((x = json_object_get(o, "kind")) && json_is_string(x))
        cf_strlcpy(r->kind, json_string_value(x), sizeof(r->kind));
    else
        snprintf(r->kind, sizeof(r->kind), "other");
    if ((x = json_object_get(o, "parent_op")) && json_is_string(x))
        cf_strlcpy(r->parent_op, json_string_value(x), sizeof(r->parent_op));
    CF_CHECK(cf_get_u64(o, "comm", &comm, where, err, errlen));
    r->comm = (uint32_t)comm;
    CF_CHECK(cf_get_str(o, "path", buf, sizeof(buf), where, err, errlen));
    if ((r->path = cf_path_from_name(buf)) < 0) {
        cf_errf(err, errlen, "%s: unknown path '%s'", where, buf);
        return CF_ERR_FORMAT;
    }
    if ((x = json_object_get(o, "region")) && json_is_string(x)) {
        for (size_t k = 0; k < p->nregion; k++)
            if (strcmp(p->region[k], json_string_value(x)) == 0)
                r->region = (unsigned)k + 1;
        if (!r->region) {
            cf_errf(err, errlen, "%s: region '%s' is not listed in 'regions'", where, json_string_value(x));
            return CF_ERR_FORMAT;
        }
    }
    CF_CHECK(cf_get_u64(o, "size_lo", &r->size_lo, where, err, errlen));
    CF_CHECK(cf_get_u64(o, "size_hi", &r->size_hi, where, err, errlen));
    CF_CHECK(cf_get_u64(o, "calls", &r->calls, where, err, errlen));
    CF_CHECK(cf_get_u64(o, "bytes", &r->bytes, where, err, errlen));
    /* totals are summed over records: they must not overflow */
    if (r->calls > INT64_MAX - rd->calls_total || r->bytes > INT64_MAX - rd->bytes_total) {
        cf_errf(err, errlen, "%s: calls or bytes overflow the job's totals", where);
        return CF_ERR_FORMAT;
    }
    rd->calls_total += r->calls;
    rd->bytes_total += r->bytes;
    json_t *t = json_object_get(o, "time_s");
    snprintf(where, sizeof(where), "records[%zu].time_s", i);
    if (!json_is_object(t)) {
        cf_errf(err, errlen, "%s is missing or not an object", where);
        return CF_ERR_FORMAT;
    }
    CF_CHECK(cf_get_time(t, "sum", &r->t_sum, where, err, errlen));
    CF_CHECK(cf_get_time(t, "min", &r->t_min, where, err, errlen));
    CF_CHECK(cf_get_time(t, "max", &r->t_max, where, err, errlen));
    CF_CHECK(cf_get_time(t, "p50", &r->t_p50, where, err, errlen));
    CF_CHECK(cf_get_time(t, "p99", &r->t_p99, where, err, errlen));
    if ((x = json_object_get(o, "wait_s")) && json_is_number(x))
        r->wait_s = json_number_value(x);
    if ((x = json_object_get(o, "sample_eligible")) && json_is_integer(x) && json_integer_value(x) >= 0)
        r->sample_eligible = (uint64_t)json_integer_value(x);
    if ((x = json_object_get(o, "sample_selected")) && json_is_integer(x) && json_integer_value(x) >= 0)
        r->sample_selected = (uint64_t)json_integer_value(x);
    if ((x = json_object_get(o, "ranks_missing")) && json_is_integer(x) && json_integer_value(x) > 0 &&
        json_integer_value(x) <= p->ranks)
        r->ranks_missing = (uint32_t)json_integer_value(x);
    /* blocked time beyond the record's own time (completion calls) is not a measurement */
    if ((x = json_object_get(o, "blocked_s")) && json_is_number(x) && isfinite(json_number_value(x)) &&
        json_number_value(x) > 0)
        r->blocked_s = json_number_value(x);
    if ((x = json_object_get(o, "post_s")) && json_is_number(x) && isfinite(json_number_value(x)) &&
        json_number_value(x) > 0)
        r->post_s = json_number_value(x);
    if ((t = json_object_get(o, "transfer_s")) && json_is_object(t)) {
        snprintf(where, sizeof(where), "records[%zu].transfer_s", i);
        CF_CHECK(cf_get_u64(t, "n", &r->xfer_n, where, err, errlen));
        CF_CHECK(cf_get_num(t, "sum", &r->xfer_sum, where, err, errlen));
        CF_CHECK(cf_get_num(t, "p50", &r->xfer_p50, where, err, errlen));
        CF_CHECK(cf_get_num(t, "p99", &r->xfer_p99, where, err, errlen));
    }
    return CF_OK;
}

/* The sections of the format, in their order. */
enum { CF_SEC_FORMAT, CF_SEC_VERSION, CF_SEC_JOB, CF_SEC_RANKS, CF_SEC_COMMS, CF_SEC_REGIONS, CF_SEC_RECORDS, CF_SEC_N };
static const char *const cf_sec_names[CF_SEC_N] = {"format", "version", "job", "ranks", "communicators", "regions",
                                                   "records"};

static int cf_sec_of(const char *key)
{
    for (int s = 0; s < CF_SEC_N; s++)
        if (strcmp(key, cf_sec_names[s]) == 0)
            return s;
    return -1;
}

static void cf_rd_init(cf_rd_t *rd, char *err, size_t errlen)
{
    memset(rd, 0, sizeof(*rd));
    cf_profile_init(&rd->p);
    rd->err = err;
    rd->errlen = errlen;
}

/* *a (n elements in room for cap) without the room it does not use. */
static void cf_rd_trim(void **a, size_t n, size_t cap, size_t size)
{
    void *b = n > 0 && n < cap ? realloc(*a, n * size) : NULL;
    if (b != NULL)
        *a = b;
}

/* The profile read; the arrays trimmed to their size. */
static int cf_rd_finish(cf_rd_t *rd, cf_profile_t *p_out)
{
    cf_profile_t *p = &rd->p;
    if (p->extra == NULL && (p->extra = json_object()) == NULL)
        return CF_ERR_NOMEM;
    /* the tools hold these for their whole run: no slack */
    cf_rd_trim((void **)&p->rank, p->nrank, rd->cap_rank, sizeof(*p->rank));
    cf_rd_trim((void **)&p->comm, p->ncomm, rd->cap_comm, sizeof(*p->comm));
    cf_rd_trim((void **)&p->rec, p->nrec, rd->cap_rec, sizeof(*p->rec));
    cf_rd_trim((void **)&p->matrix_pair, p->matrix_npair, rd->cap_pair, sizeof(*p->matrix_pair));
    cf_rd_trim((void **)&p->site, p->nsite, rd->cap_site, sizeof(*p->site));
    if (p->rank == NULL && (p->rank = calloc(1, sizeof(*p->rank))) == NULL)
        return CF_ERR_NOMEM;
    if (p->comm == NULL && (p->comm = calloc(1, sizeof(*p->comm))) == NULL)
        return CF_ERR_NOMEM;
    if (p->rec == NULL && (p->rec = calloc(1, sizeof(*p->rec))) == NULL)
        return CF_ERR_NOMEM;
    cf_profile_clean(p);
    *p_out = *p;
    cf_profile_init(p);
    return CF_OK;
}

static int cf_rd_tree(cf_rd_t *rd, json_t *root)
{
    json_t *a, *o;
    size_t i;

    if (!json_is_object(root)) {
        cf_errf(rd->err, rd->errlen, "not a JSON object");
        return CF_ERR_FORMAT;
    }
    CF_CHECK(cf_rd_header(rd, json_object_get(root, "format"), json_object_get(root, "version")));
    CF_CHECK(cf_rd_job(rd, json_object_get(root, "job")));
    if (!(a = cf_get_array(root, "ranks", rd->err, rd->errlen)))
        return CF_ERR_FORMAT;
    CF_CHECK(cf_rd_reserve((void **)&rd->p.rank, &rd->cap_rank, json_array_size(a), sizeof(*rd->p.rank)));
    json_array_foreach(a, i, o)
        CF_CHECK(cf_rd_rank(rd, o));
    CF_CHECK(cf_rd_ranks_end(rd));
    if (!(a = cf_get_array(root, "communicators", rd->err, rd->errlen)))
        return CF_ERR_FORMAT;
    CF_CHECK(cf_rd_reserve((void **)&rd->p.comm, &rd->cap_comm, json_array_size(a), sizeof(*rd->p.comm)));
    json_array_foreach(a, i, o)
        CF_CHECK(cf_rd_comm(rd, o));
    CF_CHECK(cf_rd_comms_end(rd));
    CF_CHECK(cf_rd_regions(rd, json_object_get(root, "regions")));
    if (!(a = cf_get_array(root, "records", rd->err, rd->errlen)))
        return CF_ERR_FORMAT;
    CF_CHECK(cf_rd_reserve((void **)&rd->p.rec, &rd->cap_rec, json_array_size(a), sizeof(*rd->p.rec)));
    json_array_foreach(a, i, o)
        CF_CHECK(cf_rd_record(rd, o));

    /* keep sections this reader does not model, for tools that want them */
    if (rd->p.extra == NULL && (rd->p.extra = json_object()) == NULL)
        return CF_ERR_NOMEM;
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        if (cf_sec_of(k) < 0)
            json_object_set(rd->p.extra, k, v);
    }
    return CF_OK;
}

int cf_profile_from_json(json_t *root, cf_profile_t *p_out, char *err, size_t errlen)
{
    cf_rd_t rd;
    cf_rd_init(&rd, err, errlen);
    int rc = cf_rd_tree(&rd, root);
    if (rc == CF_OK)
        rc = cf_rd_finish(&rd, p_out);
    cf_profile_free(&rd.p);
    return rc;
}

/* The elements of the array that comes next, each through one(): one
 * element's tree at a time. */
static int cf_rd_stream_array(cf_rd_t *rd, cf_jin_t *in, int (*one)(cf_rd_t *, json_t *))
{
    int first = 1, more, rc = CF_OK;
    if (!cf_jin_accept(in, '['))
        return CF_ERR_FORMAT;
    cf_jin_set_depth(in, 2);
    while (rc == CF_OK && (more = cf_jin_more(in, ']', &first)) == 1) {
        json_t *e = cf_jin_value(in, JSON_REJECT_DUPLICATES);
        rc = e != NULL ? one(rd, e) : CF_ERR_FORMAT;
        json_decref(e);
    }
    cf_jin_set_depth(in, 1);
    return rc != CF_OK ? rc : more == 0 ? CF_OK : CF_ERR_FORMAT;
}

/* Checks the value that comes next as the tree reader would (valid JSON,
 * no repeated names), keeping nothing: objects walked, arrays a member at
 * a time.  k: the arrays and objects around it. */
static int cf_rd_skip(cf_jin_t *in, int k)
{
    int first = 1, more = -1, rc = CF_OK;
    json_t *keys, *v;
    if (cf_jin_accept(in, '[')) {
        cf_jin_set_depth(in, k + 1);
        while (rc == CF_OK && (more = cf_jin_more(in, ']', &first)) == 1) {
            if ((v = cf_jin_value(in, JSON_REJECT_DUPLICATES)) == NULL)
                rc = CF_ERR_FORMAT;
            json_decref(v);
        }
        return rc == CF_OK && more == 0 ? CF_OK : CF_ERR_FORMAT;
    }
    cf_jin_set_depth(in, k);
    if (!cf_jin_accept(in, '{')) {
        v = cf_jin_value(in, 0);
        rc = v != NULL ? CF_OK : CF_ERR_FORMAT;
        json_decref(v);
        return rc;
    }
    if ((keys = json_object()) == NULL)
        return CF_ERR_NOMEM;
    while (rc == CF_OK && (more = cf_jin_more(in, '}', &first)) == 1) {
        cf_jin_set_depth(in, k + 1);
        json_t *key = cf_jin_value(in, 0);
        const char *name = json_string_value(key);
        if (name == NULL || json_object_get(keys, name) != NULL || json_object_set_new(keys, name, json_null()) != 0 ||
            !cf_jin_accept(in, ':'))
            rc = CF_ERR_FORMAT;
        else
            rc = cf_rd_skip(in, k + 1);
        json_decref(key);
    }
    json_decref(keys);
    return rc == CF_OK && more == 0 ? CF_OK : CF_ERR_FORMAT;
}

static int cf_pair_from_json(json_t *e, int ranks, cf_pair_t *out);
static int cf_site_from_json(json_t *e, cf_callsite_t *c);

/* One pair of the matrix into p->matrix_pair. */
static int cf_rd_pair(cf_rd_t *rd, json_t *e)
{
    cf_profile_t *p = &rd->p;
    cf_pair_t q, *slot;
    int cols = cf_pair_from_json(e, p->ranks, &q);
    if (cols == 0 || (p->matrix_cols != 0 && cols != p->matrix_cols))
        return CF_ERR_FORMAT;
    p->matrix_cols = cols;
    if ((slot = cf_rd_push((void **)&p->matrix_pair, &p->matrix_npair, &rd->cap_pair, sizeof(q))) == NULL)
        return CF_ERR_NOMEM;
    *slot = q;
    return CF_OK;
}

/* s once in the profile's pool of call-site strings, cleaned as every
 * string the readers keep; NULL for NULL.  *rc_p CF_ERR_NOMEM when out
 * of memory. */
static const char *cf_rd_intern(cf_rd_t *rd, const char *s, int *rc_p)
{
    json_t *pool = rd->p.site_strings, *v;
    char *t;
    if (s == NULL)
        return NULL;
    if ((v = json_object_get(pool, s)) != NULL)
        return json_string_value(v);
    if ((t = strdup(s)) == NULL) {
        *rc_p = CF_ERR_NOMEM;
        return NULL;
    }
    cf_clean(t);
    v = json_string(t);
    free(t);
    if (v == NULL || json_object_set_new(pool, s, v) != 0) {
        *rc_p = CF_ERR_NOMEM;
        return NULL;
    }
    return json_string_value(v);
}

/* One call site into p->site, its strings interned: a thousand sites of
 * eight frames name a few hundred modules. */
static int cf_rd_site(cf_rd_t *rd, json_t *e)
{
    cf_profile_t *p = &rd->p;
    cf_callsite_t c, *slot;
    int rc = CF_OK;
    memset(&c, 0, sizeof(c));
    if (!cf_site_from_json(e, &c))
        return CF_ERR_FORMAT;
    if (p->site_strings == NULL && (p->site_strings = json_object()) == NULL)
        return CF_ERR_NOMEM;
    c.op = cf_rd_intern(rd, c.op, &rc);
    for (size_t k = 0; k < c.nframe; k++) {
        c.frame[k].module = cf_rd_intern(rd, c.frame[k].module, &rc);
        c.frame[k].symbol = cf_rd_intern(rd, c.frame[k].symbol, &rc);
    }
    if (rc != CF_OK || (slot = cf_rd_push((void **)&p->site, &p->nsite, &rd->cap_site, sizeof(c))) == NULL)
        return CF_ERR_NOMEM;
    *slot = c;
    return CF_OK;
}

/* A section the tools keep, read compact: the object that comes next,
 * its member array (an element at a time through one(), which counts
 * them in *n_p) left null in the copy that goes to extra with the other
 * members (an empty array stays as it is).  CF_ERR_FORMAT on anything
 * the tree reader says more about: an element that is not one, a
 * repeated name. */
static int cf_rd_compact(cf_rd_t *rd, cf_jin_t *in, const char *name, const char *array,
                         int (*one)(cf_rd_t *, json_t *), const size_t *n_p)
{
    json_t *m = json_object(), *key = NULL, *v;
    int first = 1, more = -1, rc = CF_ERR_FORMAT;

    if (m == NULL)
        return CF_ERR_NOMEM;
    if (!cf_jin_accept(in, '{'))
        goto out;
    while ((more = cf_jin_more(in, '}', &first)) == 1) {
        json_decref(key);
        cf_jin_set_depth(in, 2);
        if ((key = cf_jin_value(in, 0)) == NULL || !json_is_string(key) || !cf_jin_accept(in, ':') ||
            json_object_get(m, json_string_value(key)) != NULL)
            goto out;
        if (strcmp(json_string_value(key), array) == 0 && cf_jin_accept(in, '[')) {
            int efirst = 1, emore;
            cf_jin_set_depth(in, 3);
            while ((emore = cf_jin_more(in, ']', &efirst)) == 1) {
                json_t *e = cf_jin_value(in, JSON_REJECT_DUPLICATES);
                rc = e != NULL ? one(rd, e) : CF_ERR_FORMAT;
                json_decref(e);
                if (rc != CF_OK)
                    goto out;
            }
            rc = CF_ERR_FORMAT;
            if (emore != 0)
                goto out;
            v = *n_p > 0 ? json_null() : json_array();
        } else if ((v = cf_jin_value(in, JSON_REJECT_DUPLICATES)) == NULL) {
            goto out;
        }
        if (json_object_set_new(m, json_string_value(key), v) != 0) {
            rc = CF_ERR_NOMEM;
            goto out;
        }
    }
    if (more != 0)
        goto out;
    rc = json_object_set_new(rd->p.extra, name, m) == 0 ? CF_OK : CF_ERR_NOMEM;
    m = NULL;
out:
    cf_jin_set_depth(in, 1);
    json_decref(key);
    json_decref(m);
    return rc;
}

static int cf_in_list(const char *const *list, const char *s)
{
    for (; list != NULL && *list != NULL; list++)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

/* Reads a profile written in the format's order from fd, the large arrays
 * element by element.  CF_OK; anything else when the file is not exactly
 * that (invalid JSON, sections out of order, a bad field): the caller
 * then reads the whole tree, which says precisely what is wrong. */
static int cf_rd_stream(cf_rd_t *rd, int fd, const char *const *skip)
{
    cf_jin_t *in = cf_jin_new(fd);
    json_t *fmt = NULL, *key = NULL, *v;
    int next = CF_SEC_FORMAT, first = 1, more = -1, rc = CF_ERR_FORMAT;

    if (in == NULL || (rd->p.extra = json_object()) == NULL) {
        rc = CF_ERR_NOMEM;
        goto out;
    }
    if (!cf_jin_accept(in, '{'))
        goto out;
    cf_jin_set_depth(in, 1);
    while ((more = cf_jin_more(in, '}', &first)) == 1) {
        json_decref(key);
        if ((key = cf_jin_value(in, 0)) == NULL || !json_is_string(key) || !cf_jin_accept(in, ':'))
            goto out;
        const char *k = json_string_value(key);
        int s = cf_sec_of(k);
        if (s < 0) {
            /* a section kept as it is, or checked and left out; a repeated
             * name is the tree's to refuse */
            if (json_object_get(rd->p.extra, k) != NULL)
                goto out;
            if (cf_in_list(skip, k)) {
                /* noted, so that a repeat is seen */
                if (cf_rd_skip(in, 1) != CF_OK || json_object_set_new(rd->p.extra, k, json_null()) != 0)
                    goto out;
                continue;
            }
            /* the largest sections the tools keep, compact: the matrix
             * (its pairs checked against the job's ranks) and the call
             * sites */
            if (strcmp(k, "matrix") == 0 && next > CF_SEC_JOB && cf_jin_peek(in) == '{') {
                if ((rc = cf_rd_compact(rd, in, k, "pairs", cf_rd_pair, &rd->p.matrix_npair)) != CF_OK)
                    goto out;
                rc = CF_ERR_FORMAT;
                continue;
            }
            if (strcmp(k, "callsites") == 0 && cf_jin_peek(in) == '{') {
                if ((rc = cf_rd_compact(rd, in, k, "sites", cf_rd_site, &rd->p.nsite)) != CF_OK)
                    goto out;
                rc = CF_ERR_FORMAT;
                continue;
            }
            if ((v = cf_jin_value(in, JSON_REJECT_DUPLICATES)) == NULL || json_object_set_new(rd->p.extra, k, v) != 0)
                goto out;
            continue;
        }
        if (s != next && !(next == CF_SEC_REGIONS && s == CF_SEC_RECORDS))
            goto out;
        next = s + 1;
        switch (s) {
        case CF_SEC_FORMAT:
            if ((fmt = cf_jin_value(in, 0)) == NULL)
                goto out;
            break;
        case CF_SEC_RANKS:
            if ((rc = cf_rd_stream_array(rd, in, cf_rd_rank)) != CF_OK || (rc = cf_rd_ranks_end(rd)) != CF_OK)
                goto out;
            break;
        case CF_SEC_COMMS:
            if ((rc = cf_rd_stream_array(rd, in, cf_rd_comm)) != CF_OK || (rc = cf_rd_comms_end(rd)) != CF_OK)
                goto out;
            break;
        case CF_SEC_RECORDS:
            if ((rc = cf_rd_stream_array(rd, in, cf_rd_record)) != CF_OK)
                goto out;
            break;
        default:
            if ((v = cf_jin_value(in, JSON_REJECT_DUPLICATES)) == NULL) {
                rc = CF_ERR_FORMAT;
                goto out;
            }
            rc = s == CF_SEC_VERSION ? cf_rd_header(rd, fmt, v) : s == CF_SEC_JOB ? cf_rd_job(rd, v) : cf_rd_regions(rd, v);
            json_decref(v);
            if (rc != CF_OK)
                goto out;
        }
        rc = CF_ERR_FORMAT;
    }
    /* the whole object, every section, and nothing after it */
    if (more == 0 && next == CF_SEC_N && cf_jin_peek(in) < 0)
        rc = CF_OK;
    for (; rc == CF_OK && skip != NULL && *skip != NULL; skip++)
        json_object_del(rd->p.extra, *skip);
out:
    json_decref(key);
    json_decref(fmt);
    cf_jin_free(in);
    return rc;
}

/* Feeds the parser in blocks: json_loadf reads a character at a time,
 * which made reading the largest part of every tool's run. */
static size_t read_block(void *buffer, size_t buflen, void *data)
{
    FILE *f = data;
    size_t n = fread(buffer, 1, buflen, f);
    return n == 0 && ferror(f) ? (size_t)-1 : n;
}

/* The whole tree at once: the reader of anything cf_rd_stream did not
 * take, with the messages that say what is wrong. */
static int cf_profile_read_tree(const char *path, cf_profile_t *p_out, char *err, size_t errlen)
{
    json_error_t jerr;
    struct stat st;
    FILE *f = fopen(path, "r");
    if (!f) {
        cf_errf(err, errlen, "cannot open: %s", strerror(errno));
        return CF_ERR_IO;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        cf_errf(err, errlen, "is a directory, not a profile");
        return CF_ERR_IO;
    }
    json_t *root = json_load_callback(read_block, f, JSON_REJECT_DUPLICATES, &jerr);
    fclose(f);
    if (!root) {
        /* an error at the very end of the file means the file was cut short */
        if (st.st_size == 0)
            cf_errf(err, errlen, "truncated or empty: the file has 0 bytes");
        else if (jerr.position + 2 >= st.st_size || strstr(jerr.text, "end of file") ||
                 strstr(jerr.text, "premature end"))
            cf_errf(err, errlen, "truncated after %lld bytes (JSON error at line %d: %s)", (long long)st.st_size,
                    jerr.line, jerr.text);
        else
            cf_errf(err, errlen, "not valid JSON (line %d: %s)", jerr.line, jerr.text);
        return CF_ERR_FORMAT;
    }
    int rc = cf_profile_from_json(root, p_out, err, errlen);
    json_decref(root);
    return rc;
}

int cf_profile_read_without(const char *path, const char *const *skip, cf_profile_t *p_out, char *err,
                            size_t errlen)
{
    struct stat st;
    cf_rd_t rd;
    int rc = CF_ERR_FORMAT, fd = open(path, O_RDONLY | O_CLOEXEC);

    /* a regular file streamed; anything else (and whatever the stream did
     * not take) read as a whole */
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        cf_rd_init(&rd, err, errlen);
        rc = cf_rd_stream(&rd, fd, skip);
        if (rc == CF_OK)
            rc = cf_rd_finish(&rd, p_out);
        cf_profile_free(&rd.p);
    }
    if (fd >= 0)
        close(fd);
    if (rc == CF_OK || rc == CF_ERR_NOMEM)
        return rc;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    rc = cf_profile_read_tree(path, p_out, err, errlen);
    for (; rc == CF_OK && skip != NULL && *skip != NULL; skip++)
        json_object_del(p_out->extra, *skip);
    return rc;
}

/* The members of the object that comes next until one is named name:
 * 1 there (its ':' consumed), 0 when it has none, -1 on bad input. */
static int cf_jin_find(cf_jin_t *in, const char *name)
{
    int first = 1, more;
    if (!cf_jin_accept(in, '{'))
        return cf_jin_skip(in) ? 0 : -1;
    while ((more = cf_jin_more(in, '}', &first)) == 1) {
        json_t *key = cf_jin_value(in, 0);
        int found = json_is_string(key) && strcmp(json_string_value(key), name) == 0;
        json_decref(key);
        if (!cf_jin_accept(in, ':'))
            return -1;
        if (found)
            return 1;
        if (!cf_jin_skip(in))
            return -1;
    }
    return more == 0 ? 0 : -1;
}

int cf_profile_each(const char *path, const char *section, const char *member, int (*fn)(json_t *e, void *ctx),
                    void *ctx)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc, first = 1, more = 0;
    cf_jin_t *in = fd >= 0 ? cf_jin_new(fd) : NULL;
    if (in == NULL) {
        rc = fd < 0 ? CF_ERR_IO : CF_ERR_NOMEM;
        goto out;
    }
    if ((rc = cf_jin_find(in, section)) != 1 || (rc = cf_jin_find(in, member)) != 1 || !cf_jin_accept(in, '[')) {
        rc = rc < 0 ? CF_ERR_FORMAT : CF_ERR_NODATA;
        goto out;
    }
    rc = CF_OK;
    cf_jin_set_depth(in, 3);
    while (fn != NULL && rc == CF_OK && (more = cf_jin_more(in, ']', &first)) == 1) {
        json_t *e = cf_jin_value(in, 0);
        rc = e != NULL ? fn(e, ctx) : CF_ERR_FORMAT;
        json_decref(e);
    }
    if (fn != NULL && rc == CF_OK && more != 0)
        rc = CF_ERR_FORMAT;
out:
    cf_jin_free(in);
    if (fd >= 0)
        close(fd);
    return rc;
}

int cf_profile_read(const char *path, cf_profile_t *p_out, char *err, size_t errlen)
{
    return cf_profile_read_without(path, NULL, p_out, err, errlen);
}

/* One pair of the matrix, [src, dst, messages, bytes], and since the
 * communicator column [src, dst, messages, bytes, comm, "mpi" | "ucx"],
 * of ranks below ranks: its columns (4 or 6), 0 when it is not that. */
static int cf_pair_from_json(json_t *e, int ranks, cf_pair_t *out)
{
    json_int_t v[5] = {0, 0, 0, 0, CF_COMM_ID_NONE};
    size_t len = json_is_array(e) ? json_array_size(e) : 0;
    const char *src = len == 6 ? json_string_value(json_array_get(e, 5)) : "mpi";
    int ok = (len == 4 || len == 6) && src != NULL && (!strcmp(src, "mpi") || !strcmp(src, "ucx"));
    for (size_t k = 0; ok && k < (len == 6 ? 5 : 4); k++) {
        json_t *x = json_array_get(e, k);
        ok = json_is_integer(x) && (v[k] = json_integer_value(x)) >= 0;
    }
    if (!ok || v[0] >= ranks || v[1] >= ranks || v[4] > (json_int_t)UINT32_MAX)
        return 0;
    *out = (cf_pair_t){(int)v[0], (int)v[1], (uint64_t)v[2], (uint64_t)v[3], (uint32_t)v[4],
                       !strcmp(src, "ucx") ? CF_PAIR_UCX : CF_PAIR_MPI};
    return (int)len;
}

int cf_profile_matrix(const cf_profile_t *p, cf_pair_t **pairs_p, size_t *n_p, uint64_t *lost_p, char *err,
                      size_t errlen)
{
    json_t *m = p->extra != NULL ? json_object_get(p->extra, "matrix") : NULL, *pairs, *e;
    cf_pair_t *out;
    size_t i, n;

    *pairs_p = NULL;
    *n_p = 0;
    if (lost_p != NULL)
        *lost_p = 0;
    if (m == NULL || json_is_null(m))
        return CF_OK;
    pairs = json_object_get(m, "pairs");
    if (!json_is_object(m) || !(json_is_array(pairs) || p->matrix_cols)) {
        cf_errf(err, errlen, "'matrix' has no array 'pairs'");
        return CF_ERR_FORMAT;
    }
    if (lost_p != NULL && json_is_integer(json_object_get(m, "lost_messages")) &&
        json_integer_value(json_object_get(m, "lost_messages")) > 0)
        *lost_p = (uint64_t)json_integer_value(json_object_get(m, "lost_messages"));
    n = p->matrix_cols ? p->matrix_npair : json_array_size(pairs);
    out = calloc(n + 1, sizeof(*out));
    if (out == NULL)
        return CF_ERR_NOMEM;
    if (p->matrix_cols && n > 0)
        memcpy(out, p->matrix_pair, n * sizeof(*out));
    else
        json_array_foreach(pairs, i, e) {
            if (!cf_pair_from_json(e, p->ranks, &out[i])) {
                cf_errf(err, errlen,
                        "matrix.pairs[%zu] is not [src, dst, messages, bytes, comm, \"mpi\" or \"ucx\"] of ranks "
                        "below %d",
                        i, p->ranks);
                free(out);
                return CF_ERR_FORMAT;
            }
        }
    *pairs_p = out;
    *n_p = n;
    return CF_OK;
}

json_t *cf_profile_matrix_json(const cf_profile_t *p)
{
    json_t *m = p->extra != NULL ? json_object_get(p->extra, "matrix") : NULL, *pairs;
    if (m == NULL || !p->matrix_cols)
        return m != NULL ? json_deep_copy(m) : NULL;
    if ((m = json_deep_copy(m)) == NULL || (pairs = json_array()) == NULL || json_object_set_new(m, "pairs", pairs)) {
        json_decref(m);
        return NULL;
    }
    for (size_t i = 0; i < p->matrix_npair; i++) {
        const cf_pair_t *q = &p->matrix_pair[i];
        json_t *e = p->matrix_cols == 4
                        ? json_pack("[I, I, I, I]", (json_int_t)q->src, (json_int_t)q->dst, (json_int_t)q->msgs,
                                    (json_int_t)q->bytes)
                        : json_pack("[I, I, I, I, I, s]", (json_int_t)q->src, (json_int_t)q->dst,
                                    (json_int_t)q->msgs, (json_int_t)q->bytes, (json_int_t)q->comm,
                                    q->source == CF_PAIR_UCX ? "ucx" : "mpi");
        if (e == NULL || json_array_append_new(pairs, e) != 0) {
            json_decref(m);
            return NULL;
        }
    }
    return m;
}

static int cmp_pair_group(const void *pa, const void *pb)
{
    const cf_pair_t *a = pa, *b = pb;
    if (a->source != b->source)
        return a->source - b->source;
    if (a->comm != b->comm)
        return (a->comm > b->comm) - (a->comm < b->comm);
    if (a->bytes != b->bytes)
        return (a->bytes < b->bytes) - (a->bytes > b->bytes);
    if (a->src != b->src)
        return a->src - b->src;
    return a->dst - b->dst;
}

static int cmp_group_bytes(const void *pa, const void *pb)
{
    const cf_pair_group_t *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return (a->bytes < b->bytes) - (a->bytes > b->bytes);
    if (a->source != b->source)
        return a->source - b->source;
    return (a->comm > b->comm) - (a->comm < b->comm);
}

int cf_matrix_groups(cf_pair_t *pairs, size_t n, cf_pair_group_t **groups_p, size_t *ng_p)
{
    cf_pair_group_t *g = NULL;
    size_t ng = 0;

    *groups_p = NULL;
    *ng_p = 0;
    if (n == 0)
        return CF_OK;
    qsort(pairs, n, sizeof(*pairs), cmp_pair_group);
    g = calloc(n, sizeof(*g));
    if (g == NULL)
        return CF_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (ng == 0 || g[ng - 1].comm != pairs[i].comm || g[ng - 1].source != pairs[i].source)
            g[ng++] = (cf_pair_group_t){pairs[i].comm, pairs[i].source, i, 0, 0, 0};
        g[ng - 1].n++;
        g[ng - 1].msgs += pairs[i].msgs;
        g[ng - 1].bytes += pairs[i].bytes;
    }
    qsort(g, ng, sizeof(*g), cmp_group_bytes);
    *groups_p = g;
    *ng_p = ng;
    return CF_OK;
}

static int cf_json_u64(json_t *o, const char *k, uint64_t *v)
{
    json_t *x = json_object_get(o, k);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
        return 0;
    *v = (uint64_t)json_integer_value(x);
    return 1;
}

static int cf_site_from_json(json_t *e, cf_callsite_t *c)
{
    json_t *stack = json_object_get(e, "stack"), *f;
    uint64_t id = 0, comm = 0;
    size_t i;
    memset(c, 0, sizeof(*c)); /* a frame's fields that the file leaves out are 0 */
    if (!json_is_object(e) || !cf_json_u64(e, "id", &id) || !json_is_string(json_object_get(e, "op")) ||
        !cf_json_u64(e, "comm", &comm) || comm > UINT32_MAX || !cf_json_u64(e, "calls", &c->calls) ||
        !cf_json_u64(e, "bytes", &c->bytes) || !json_is_number(json_object_get(e, "time_s")) ||
        !json_is_array(stack) || json_array_size(stack) == 0 || json_array_size(stack) > CF_CALLSITE_FRAMES)
        return 0;
    c->id = (unsigned)id;
    c->comm = (uint32_t)comm;
    c->op = json_string_value(json_object_get(e, "op"));
    c->time_s = json_number_value(json_object_get(e, "time_s"));
    c->min_s = json_is_number(json_object_get(e, "min_s")) ? json_number_value(json_object_get(e, "min_s")) : NAN;
    c->max_s = json_is_number(json_object_get(e, "max_s")) ? json_number_value(json_object_get(e, "max_s")) : NAN;
    c->ranks = json_is_integer(json_object_get(e, "ranks")) ? (int)json_integer_value(json_object_get(e, "ranks")) : 0;
    json_array_foreach(stack, i, f) {
        cf_site_frame_t *fr = &c->frame[i];
        if (!json_is_object(f) || !cf_json_u64(f, "offset", &fr->offset))
            return 0;
        fr->module = json_string_value(json_object_get(f, "module"));
        fr->symbol = json_string_value(json_object_get(f, "symbol"));
        if (fr->symbol != NULL && !cf_json_u64(f, "symbol_offset", &fr->symbol_offset))
            fr->symbol_offset = 0;
    }
    c->nframe = json_array_size(stack);
    return 1;
}

/* The "callsites" section's depth and array (CF_OK with *depth_p 0 when
 * there is no section), checked as cf_profile_callsites says. */
static int cf_sites_section(const cf_profile_t *p, json_t **sec_p, json_t **sites_p, json_int_t *depth_p, char *err,
                            size_t errlen)
{
    json_t *sec = p->extra != NULL ? json_object_get(p->extra, "callsites") : NULL;
    *depth_p = 0;
    if (sec == NULL || json_is_null(sec))
        return CF_OK;
    *sites_p = json_object_get(sec, "sites");
    *depth_p = json_integer_value(json_object_get(sec, "depth"));
    if (!json_is_object(sec) || !(json_is_array(*sites_p) || p->nsite > 0) || *depth_p < 1 ||
        *depth_p > CF_CALLSITE_FRAMES) {
        cf_errf(err, errlen, "'callsites' needs a depth from 1 to %d and an array 'sites'", CF_CALLSITE_FRAMES);
        *depth_p = 0;
        return CF_ERR_FORMAT;
    }
    *sec_p = sec;
    return CF_OK;
}

int cf_profile_callsites_each(const cf_profile_t *p, int (*fn)(const cf_callsite_t *, void *), void *arg, char *err,
                              size_t errlen)
{
    json_t *sec = NULL, *sites = NULL, *e;
    json_int_t depth;
    size_t i;
    int rc = cf_sites_section(p, &sec, &sites, &depth, err, errlen);
    if (rc != CF_OK || depth == 0)
        return rc;
    if (p->nsite > 0) {
        for (i = 0; i < p->nsite; i++)
            if (fn(&p->site[i], arg))
                break;
        return CF_OK;
    }
    json_array_foreach (sites, i, e) {
        cf_callsite_t c;
        if (!cf_site_from_json(e, &c)) {
            cf_errf(err, errlen,
                    "callsites.sites[%zu] needs id, op, comm, calls, bytes, time_s and a stack of "
                    "1 to %d frames with an offset",
                    i, CF_CALLSITE_FRAMES);
            return CF_ERR_FORMAT;
        }
        if (fn(&c, arg))
            break;
    }
    return CF_OK;
}

size_t cf_profile_ncallsites(const cf_profile_t *p)
{
    json_t *sec = NULL, *sites = NULL;
    json_int_t depth;
    if (cf_sites_section(p, &sec, &sites, &depth, NULL, 0) != CF_OK || depth == 0)
        return 0;
    return p->nsite > 0 ? p->nsite : json_array_size(sites);
}

const cf_callsite_t *cf_profile_callsite(const cf_profile_t *p, size_t i, cf_callsite_t *tmp)
{
    json_t *sec = NULL, *sites = NULL;
    json_int_t depth;
    if (cf_sites_section(p, &sec, &sites, &depth, NULL, 0) != CF_OK || depth == 0)
        return NULL;
    if (p->nsite > 0)
        return i < p->nsite ? &p->site[i] : NULL;
    json_t *e = json_array_get(sites, i);
    return e != NULL && cf_site_from_json(e, tmp) ? tmp : NULL;
}

typedef struct {
    cf_callsites_t *cs;
    size_t cap;
} cf_sites_into_t;

static int cf_site_into(const cf_callsite_t *c, void *arg)
{
    cf_sites_into_t *in = arg;
    if (in->cs->n < in->cap)
        in->cs->site[in->cs->n++] = *c;
    return 0;
}

int cf_profile_callsites(const cf_profile_t *p, cf_callsites_t *cs, char *err, size_t errlen)
{
    json_t *sec = NULL, *sites = NULL;
    json_int_t depth;
    int rc;

    memset(cs, 0, sizeof(*cs));
    if ((rc = cf_sites_section(p, &sec, &sites, &depth, err, errlen)) != CF_OK || depth == 0)
        return rc;
    cf_sites_into_t in = {cs, p->nsite > 0 ? p->nsite : json_array_size(sites)};
    cs->site = calloc(in.cap + 1, sizeof(*cs->site));
    if (cs->site == NULL)
        return CF_ERR_NOMEM;
    if ((rc = cf_profile_callsites_each(p, cf_site_into, &in, err, errlen)) != CF_OK) {
        free(cs->site);
        memset(cs, 0, sizeof(*cs));
        return rc;
    }
    cs->depth = (int)depth;
    cf_json_u64(sec, "lost_calls", &cs->lost_calls);
    cs->complete = json_is_true(json_object_get(sec, "complete"));
    return CF_OK;
}

unsigned cf_fw_of_path(const char *path)
{
    if (path == NULL)
        return 0;
#define CF_FW_OF_(id, name, marker)                                                                                    \
    if (strstr(path, marker) != NULL)                                                                                  \
        return CF_FW_BIT(id);
    CF_FW_LIST(CF_FW_OF_)
#undef CF_FW_OF_
    return 0;
}
