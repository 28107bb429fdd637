/* Spilled parts of a job that did not finish, and their merge into a
 * profile (see cf_spool.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sigabbrev_np */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cf_spool.h"

/* ---- paths, without the formatting library (signal handlers use them) ---- */

static size_t cf_put_str(char *out, size_t at, size_t len, const char *s)
{
    while (*s && at + 1 < len)
        out[at++] = *s++;
    if (*s)
        return len; /* did not fit */
    out[at] = 0;
    return at;
}

static size_t cf_put_uint(char *out, size_t at, size_t len, unsigned long v)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n > 0 && at + 1 < len)
        out[at++] = d[--n];
    if (n > 0)
        return len;
    out[at] = 0;
    return at;
}

int cf_spool_paths(const char *dir, int rank, uint32_t fanout, char *sub, char *path, size_t len)
{
    size_t n = cf_put_str(sub, 0, len, dir);
    if (fanout && n < len) {
        unsigned long first = (unsigned long)rank / fanout * fanout;
        n = cf_put_str(sub, n, len, "/ranks-");
        n = n < len ? cf_put_uint(sub, n, len, first) : n;
        n = n < len ? cf_put_str(sub, n, len, "-") : n;
        n = n < len ? cf_put_uint(sub, n, len, first + fanout - 1) : n;
    }
    if (n >= len)
        return -1;
    size_t m = cf_put_str(path, 0, len, sub);
    m = m < len ? cf_put_str(path, m, len, "/rank-") : m;
    m = m < len ? cf_put_uint(path, m, len, (unsigned long)rank) : m;
    m = m < len ? cf_put_str(path, m, len, CF_SPILL_SUFFIX) : m;
    return m < len ? (int)m : -1;
}

/* ---- records ---- */

static double cf_s(uint64_t ns) { return (double)ns * 1e-9; }

void cf_record_from_stat(cf_record_t *r, const cf_stat_t *s, const char *op, const char *kind, const char *parent_op)
{
    r->layer = (int)cf_key_layer(s->key);
    cf_strlcpy(r->op, op, sizeof(r->op));
    cf_strlcpy(r->kind, kind, sizeof(r->kind));
    r->comm = cf_key_comm(s->key);
    if (r->layer == CF_LAYER_UCX) {
        /* the communicator field of a UCX key holds the MPI operation above it */
        cf_strlcpy(r->parent_op, parent_op ? parent_op : "", sizeof(r->parent_op));
        r->comm = CF_COMM_ID_NONE;
    }
    r->path = (int)cf_key_path(s->key);
    r->size_lo = cf_size_bin_lo(cf_key_bin(s->key));
    r->size_hi = cf_size_bin_hi(cf_key_bin(s->key));
    r->calls = s->calls;
    r->bytes = s->bytes;
    r->t_sum = cf_s(s->t_sum);
    r->t_min = cf_s(s->t_min);
    r->t_max = cf_s(s->t_max);
    r->t_p50 = cf_hist_quantile(s->hist, 0.5, (double)s->t_min, (double)s->t_max) * 1e-9;
    r->t_p99 = cf_hist_quantile(s->hist, 0.99, (double)s->t_min, (double)s->t_max) * 1e-9;
    /* the records' own wait field holds the blocked time charged at completion (ns) */
    r->blocked_s = cf_s(s->t_wait);
    r->post_s = cf_s(s->t_post);
}

/* ---- reading the parts ---- */

typedef struct {
    cf_spill_hdr_t h;
    cf_spill_op_t *ops;
    cf_spill_comm_t *comm;
    cf_spill_region_t *region;
    cf_stat_t *stats;
    size_t nstats;
    /* per stat: index of its thread; thread drop counts */
    uint32_t *stat_thread;
    uint64_t *thread_dropped;
    uint64_t mpi_ns, dropped, failed, missed;
} cf_part_t;

static void cf_part_free(cf_part_t *q)
{
    free(q->ops);
    free(q->comm);
    free(q->region);
    free(q->stats);
    free(q->stat_thread);
    free(q->thread_dropped);
    memset(q, 0, sizeof(*q));
}

static int cf_read_all(FILE *f, void *buf, size_t n)
{
    return n == 0 || fread(buf, 1, n, f) == n;
}

static void *cf_read_array(FILE *f, size_t n, size_t elem, int *ok)
{
    if (!*ok)
        return NULL;
    void *a = calloc(n ? n : 1, elem);
    if (!a || !cf_read_all(f, a, n * elem)) {
        free(a);
        *ok = 0;
        return NULL;
    }
    return a;
}

/* One rank's part; a short message in why when it cannot be used. */
/* A part is read only when it is a regular file of the user merging, never
 * through a symbolic link: another user's file in the spool is not this
 * job's (and may be planted). */
static int cf_part_read(const char *path, cf_part_t *q, char *why, size_t whylen)
{
    memset(q, 0, sizeof(*q));
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, whylen, "%s", errno == ELOOP ? "a symbolic link: refused" : strerror(errno));
        return errno == ELOOP ? CF_ERR_INVALID : CF_ERR_IO;
    }
    struct stat fst;
    if (fstat(fd, &fst) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return CF_ERR_IO;
    }
    if (!S_ISREG(fst.st_mode) || fst.st_uid != geteuid()) {
        if (!S_ISREG(fst.st_mode))
            snprintf(why, whylen, "not a regular file: refused");
        else
            snprintf(why, whylen, "owned by another user (uid %lu): refused", (unsigned long)fst.st_uid);
        close(fd);
        return CF_ERR_INVALID;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return CF_ERR_IO;
    }
    int ok = cf_read_all(f, &q->h, sizeof(q->h));
    if (!ok || memcmp(q->h.magic, CF_SPILL_MAGIC, 8) != 0) {
        snprintf(why, whylen, "not a commfit spill file");
        fclose(f);
        return CF_ERR_FORMAT;
    }
    if (q->h.version != CF_SPILL_VERSION || q->h.hdr_size != sizeof(q->h) || q->h.stat_size != sizeof(cf_stat_t) ||
        q->h.hist_n != CF_HIST_N) {
        snprintf(why, whylen, "written by another version of commfit");
        fclose(f);
        return CF_ERR_VERSION;
    }
    q->h.host[sizeof(q->h.host) - 1] = 0;
    q->h.mpi_library[sizeof(q->h.mpi_library) - 1] = 0;
    q->h.output[sizeof(q->h.output) - 1] = 0;
    if (q->h.rank < 0 || q->h.size <= 0 || q->h.rank >= q->h.size || q->h.nops > 4096 || q->h.nops_ucx > 4096 ||
        q->h.nthreads > (1u << 16) || q->h.nregion > (1u << 16) || q->h.ncomm > (1u << 26)) {
        snprintf(why, whylen, "inconsistent header");
        fclose(f);
        return CF_ERR_FORMAT;
    }
    q->ops = cf_read_array(f, q->h.nops + q->h.nops_ucx, sizeof(*q->ops), &ok);
    q->comm = cf_read_array(f, q->h.ncomm, sizeof(*q->comm), &ok);
    q->region = cf_read_array(f, q->h.nregion, sizeof(*q->region), &ok);
    q->thread_dropped = ok ? calloc(q->h.nthreads + 1, sizeof(uint64_t)) : NULL;
    ok = ok && q->thread_dropped;
    size_t cap = 0;
    for (uint32_t t = 0; ok && t < q->h.nthreads; t++) {
        cf_spill_thread_t th;
        if (!cf_read_all(f, &th, sizeof(th)) || th.nstats > (1u << 24)) {
            ok = 0;
            break;
        }
        q->thread_dropped[t] = th.dropped;
        q->mpi_ns += th.mpi_ns;
        q->dropped += th.dropped;
        q->failed += th.failed;
        q->missed += th.missed;
        if (q->nstats + th.nstats > cap) {
            cap = (q->nstats + th.nstats) * 2;
            cf_stat_t *s = realloc(q->stats, cap * sizeof(*s));
            uint32_t *st = realloc(q->stat_thread, cap * sizeof(*st));
            if (s)
                q->stats = s;
            if (st)
                q->stat_thread = st;
            if (!s || !st) {
                ok = 0;
                break;
            }
        }
        if (!cf_read_all(f, q->stats + q->nstats, th.nstats * sizeof(cf_stat_t))) {
            ok = 0;
            break;
        }
        for (size_t i = 0; i < th.nstats; i++)
            q->stat_thread[q->nstats + i] = t;
        q->nstats += th.nstats;
    }
    fclose(f);
    if (!ok) {
        snprintf(why, whylen, "truncated");
        cf_part_free(q);
        return CF_ERR_FORMAT;
    }
    for (uint32_t i = 0; i < q->h.nops + q->h.nops_ucx; i++) {
        q->ops[i].name[sizeof(q->ops[i].name) - 1] = 0;
        q->ops[i].kind[sizeof(q->ops[i].kind) - 1] = 0;
    }
    for (uint32_t i = 0; i < q->h.ncomm; i++)
        q->comm[i].name[sizeof(q->comm[i].name) - 1] = 0;
    for (uint32_t i = 0; i < q->h.nregion; i++)
        q->region[i].path[sizeof(q->region[i].path) - 1] = 0;
    return CF_OK;
}

/* ---- the list of part files ---- */

typedef struct {
    char **path;
    size_t n, cap;
} cf_paths_t;

static int cf_paths_add(cf_paths_t *l, const char *dir, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        char **a = realloc(l->path, cap * sizeof(*a));
        if (!a)
            return CF_ERR_NOMEM;
        l->path = a;
        l->cap = cap;
    }
    size_t len = strlen(dir) + strlen(name) + 2;
    if (!(l->path[l->n] = malloc(len)))
        return CF_ERR_NOMEM;
    snprintf(l->path[l->n++], len, "%s/%s", dir, name);
    return CF_OK;
}

static int cf_has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcmp(s + n - m, suf) == 0;
}

/* Part files in dir and in its ranks-* subdirectories (one level). */
static int cf_list_parts(const char *dir, cf_paths_t *l, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return CF_ERR_IO;
    struct dirent *e;
    int rc = CF_OK;
    while (rc == CF_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (depth == 0 && strncmp(e->d_name, "ranks-", 6) == 0) {
            size_t len = strlen(dir) + strlen(e->d_name) + 2;
            char *sub = malloc(len);
            if (!sub) {
                rc = CF_ERR_NOMEM;
                break;
            }
            snprintf(sub, len, "%s/%s", dir, e->d_name);
            struct stat st; /* a symbolic link is not followed */
            if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                rc = cf_list_parts(sub, l, 1);
            free(sub);
        } else if (strncmp(e->d_name, "rank-", 5) == 0 && cf_has_suffix(e->d_name, CF_SPILL_SUFFIX))
            rc = cf_paths_add(l, dir, e->d_name);
    }
    closedir(d);
    return rc;
}

static void cf_paths_free(cf_paths_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->path[i]);
    free(l->path);
}

void cf_spool_remove(const char *dir)
{
    cf_paths_t l = {0};
    cf_list_parts(dir, &l, 0);
    for (size_t i = 0; i < l.n; i++) {
        unlink(l.path[i]);
        /* its subdirectory goes when it is empty */
        char *slash = strrchr(l.path[i], '/');
        if (slash) {
            *slash = 0;
            if (strcmp(l.path[i], dir) != 0)
                rmdir(l.path[i]);
        }
    }
    cf_paths_free(&l);
    rmdir(dir);
}

/* ---- the spool itself ---- */

int cf_spool_check_stat(const struct stat *st, char *why, size_t whylen)
{
    if (S_ISLNK(st->st_mode))
        snprintf(why, whylen, "it is a symbolic link");
    else if (!S_ISDIR(st->st_mode))
        snprintf(why, whylen, "it is not a directory");
    else if (st->st_uid != geteuid())
        snprintf(why, whylen, "it is owned by another user (uid %lu)", (unsigned long)st->st_uid);
    else if (st->st_mode & 022)
        snprintf(why, whylen, "others can write to it (mode %03o)", (unsigned)(st->st_mode & 07777));
    else
        return 0;
    return -1;
}

int cf_spool_check(const char *dir, char *why, size_t whylen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT)
            return 1;
        snprintf(why, whylen, "cannot look at it: %s", strerror(errno));
        return -1;
    }
    return cf_spool_check_stat(&st, why, whylen);
}

int cf_spool_private(const char *dir, char *out, size_t outlen)
{
    const char *tmp = getenv("TMPDIR"), *base = strrchr(dir, '/');
    struct stat st;
    if (!tmp || tmp[0] != '/' || stat(tmp, &st) != 0 || !S_ISDIR(st.st_mode) || access(tmp, W_OK | X_OK) != 0)
        tmp = "/tmp";
    base = base ? base + 1 : dir;
    if (!*base)
        base = "commfit.parts";
    if (snprintf(out, outlen, "%s/%s.XXXXXX", tmp, base) >= (int)outlen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(out) ? 0 : -1;
}

/* ---- the merge ---- */

/* "0, 2-5, 9" for the set ranks flagged in mark[0..n), at most len bytes. */
static void cf_rank_list(const unsigned char *mark, int n, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (int r = 0; r < n && at + 16 < len; r++) {
        if (!mark[r])
            continue;
        int e = r;
        while (e + 1 < n && mark[e + 1])
            e++;
        at += (size_t)snprintf(out + at, len - at, "%s%d", at ? ", " : "", r);
        if (e > r)
            at += (size_t)snprintf(out + at, len - at, "-%d", e);
        r = e;
    }
    if (at + 16 >= len)
        snprintf(out + (len > 4 ? len - 4 : 0), 4, "...");
}

static const char *cf_sig_name(int sig, char *buf, size_t len)
{
    const char *abbrev = sig > 0 ? sigabbrev_np(sig) : NULL;
    if (abbrev)
        snprintf(buf, len, "SIG%s", abbrev);
    else
        snprintf(buf, len, "signal %d", sig);
    return buf;
}

/* A map of 64-bit keys (not 0) to counts, at most half full. */
typedef struct {
    uint64_t *keys, *vals;
    size_t mask;
} cf_u64map_t;

static int cf_u64map_init(cf_u64map_t *m, size_t n)
{
    size_t cap = 64;
    while (cap < 2 * n + 2)
        cap <<= 1;
    m->keys = calloc(cap, sizeof(uint64_t));
    m->vals = calloc(cap, sizeof(uint64_t));
    m->mask = cap - 1;
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = m->vals = NULL;
        return CF_ERR_NOMEM;
    }
    return CF_OK;
}

static void cf_u64map_fini(cf_u64map_t *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
}

/* The count of key, inserted at 0; the map must have room (sized at init). */
static uint64_t *cf_u64map_get(cf_u64map_t *m, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & m->mask;
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & m->mask;
    m->keys[i] = key;
    return &m->vals[i];
}

typedef struct {
    cf_table_t stats;
    cf_u64map_t full;
} cf_merged_t;

static int cf_cmp_region(const void *a, const void *b)
{
    return strcmp(((const cf_spill_region_t *)a)->path, ((const cf_spill_region_t *)b)->path);
}

static int cf_cmp_stat_key(const void *a, const void *b)
{
    uint64_t x = ((const cf_stat_t *)a)->key, y = ((const cf_stat_t *)b)->key;
    return x < y ? -1 : x > y;
}

/* The op name and kind of a key, from the part's own table. */
static const cf_spill_op_t *cf_part_op(const cf_part_t *q, unsigned layer, unsigned op)
{
    if (layer == CF_LAYER_MPI && op < q->h.nops)
        return &q->ops[op];
    if (layer == CF_LAYER_UCX && op < q->h.nops_ucx)
        return &q->ops[q->h.nops + op];
    return NULL;
}

int cf_spool_merge(const char *dir, double since, cf_profile_t *p, char **output_p, char *note, size_t notelen,
                   char *err, size_t errlen)
{
    cf_paths_t l = {0};
    if (output_p)
        *output_p = NULL;
    if (note && notelen)
        note[0] = 0;
    cf_profile_init(p);
    if (cf_list_parts(dir, &l, 0) != CF_OK) {
        snprintf(err, errlen, "cannot read the spool directory: %s", strerror(errno));
        cf_paths_free(&l);
        return CF_ERR_IO;
    }
    if (l.n == 0) {
        snprintf(err, errlen, "no rank-*.spill parts in it");
        cf_paths_free(&l);
        return CF_ERR_NODATA;
    }
    cf_part_t *parts = calloc(l.n, sizeof(*parts));
    size_t np = 0, bad = 0, stale = 0;
    char why[256], first_bad[512] = "";
    size_t older = 0;
    for (size_t i = 0; parts && i < l.n; i++) {
        int prc = cf_part_read(l.path[i], &parts[np], why, sizeof(why));
        if (prc == CF_ERR_INVALID)
            fprintf(stderr, "commfit: %s: %s\n", l.path[i], why);
        if (prc != CF_OK) {
            if (!bad++)
                snprintf(first_bad, sizeof(first_bad), "%s: %s", l.path[i], why);
        } else if (parts[np].h.init_wall < since) {
            older++; /* an earlier job's, never merged: not this one's to take */
            cf_part_free(&parts[np]);
        } else
            np++;
    }
    cf_paths_free(&l);
    if (parts && np == 0 && older && !bad) {
        snprintf(err, errlen, "only parts of an earlier job");
        free(parts);
        return CF_ERR_NODATA;
    }
    if (!parts || np == 0) {
        snprintf(err, errlen, "no usable part (%s)", first_bad[0] ? first_bad : "out of memory");
        free(parts);
        return CF_ERR_FORMAT;
    }
    /* the newest job's parts: an older job that wrote to the same spool is left out */
    uint64_t token = parts[0].h.job_token;
    double newest = parts[0].h.init_wall;
    for (size_t i = 1; i < np; i++)
        if (parts[i].h.init_wall > newest) {
            newest = parts[i].h.init_wall;
            token = parts[i].h.job_token;
        }
    int size = 0;
    for (size_t i = 0; i < np; i++)
        if (parts[i].h.job_token == token && parts[i].h.size > size)
            size = parts[i].h.size;
    cf_part_t **byrank = calloc((size_t)size, sizeof(*byrank));
    unsigned char *mark = calloc((size_t)size + 1, 1);
    char *list = malloc(4096);
    int rc = CF_ERR_NOMEM;
    cf_merged_t m = {0};
    if (!byrank || !mark || !list)
        goto out;
    size_t total = 0;
    for (size_t i = 0; i < np; i++) {
        cf_part_t *q = &parts[i];
        if (q->h.job_token != token || q->h.size != size) {
            stale++;
            continue;
        }
        if (byrank[q->h.rank])
            continue; /* the same rank twice: the first one counts */
        byrank[q->h.rank] = q;
        total += q->nstats;
    }
    /* room for every key at most half full, so that none is dropped */
    uint32_t cap = 64;
    while (cap < 2 * total + 64 && cap < (1u << 30))
        cap <<= 1;
    if (cf_table_init(&m.stats, cap) != CF_OK || cf_u64map_init(&m.full, total) != CF_OK)
        goto out;
    const cf_part_t *ref = NULL;
    int have = 0;
    for (int r = 0; r < size; r++) {
        const cf_part_t *q = byrank[r];
        if (!q)
            continue;
        have++;
        if (!ref)
            ref = q;
        for (size_t i = 0; i < q->nstats; i++) {
            cf_stat_t *d = q->stats[i].key ? cf_table_get(&m.stats, q->stats[i].key) : NULL;
            if (d)
                cf_stat_merge(d, &q->stats[i]);
        }
    }
    /* a rank's table that filled up dropped whole records (a key gets in at
     * its first call or never): a record may lack the calls of each rank
     * where some thread that dropped has no entry of it, and of each rank
     * without a part.  full counts, per key, the ranks with drops whose every
     * dropping thread holds it. */
    uint64_t ranks_dropping = 0;
    for (int r = 0; r < size; r++) {
        const cf_part_t *q = byrank[r];
        uint64_t nd = 0;
        for (uint32_t t = 0; q && t < q->h.nthreads; t++)
            nd += q->thread_dropped[t] != 0;
        if (!nd)
            continue;
        ranks_dropping++;
        cf_u64map_t held;
        if (cf_u64map_init(&held, q->nstats) != CF_OK)
            goto out;
        for (size_t i = 0; i < q->nstats; i++)
            if (q->thread_dropped[q->stat_thread[i]] && q->stats[i].key)
                (*cf_u64map_get(&held, q->stats[i].key))++;
        for (size_t s2 = 0; s2 <= held.mask; s2++)
            if (held.keys[s2] && held.vals[s2] == nd)
                (*cf_u64map_get(&m.full, held.keys[s2]))++;
        cf_u64map_fini(&held);
    }

    /* the job */
    p->ranks = size;
    p->partial = 1;
    p->clock_hz = ref->h.clock_hz;
    cf_strlcpy(p->mpi_library, ref->h.mpi_library, sizeof(p->mpi_library));
    time_t t0 = (time_t)byrank[ref->h.rank]->h.init_wall;
    for (int r = 0; r < size; r++)
        if (byrank[r] && (time_t)byrank[r]->h.init_wall < t0)
            t0 = (time_t)byrank[r]->h.init_wall;
    struct tm tm;
    gmtime_r(&t0, &tm);
    strftime(p->start_time, sizeof(p->start_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
    p->nodes = ref->h.nnodes;
    p->rank = calloc((size_t)size, sizeof(*p->rank));
    if (!p->rank)
        goto out;
    uint64_t refused = 0, req_dropped = 0, dropped = 0, failed = 0;
    for (int r = 0; r < size; r++) {
        const cf_part_t *q = byrank[r];
        if (!q)
            continue;
        cf_rank_info_t *ri = &p->rank[p->nrank++];
        ri->rank = r;
        ri->node = q->h.node;
        cf_strlcpy(ri->host, q->h.host, sizeof(ri->host));
        ri->wall_s = q->h.wall_s;
        ri->mpi_s = (double)q->mpi_ns * 1e-9;
        ri->dropped = q->dropped;
        ri->node_ranks = q->h.node_ranks;
        ri->node_cpus = q->h.node_cpus;
        if (ri->wall_s > p->wall_s)
            p->wall_s = ri->wall_s;
        refused += q->h.threads_refused;
        req_dropped += q->h.req_dropped;
        dropped += q->dropped;
        failed += q->failed;
        if (q->h.node_ranks > 0 && q->h.node_cpus > 0) {
            if (p->oversubscribed < 0)
                p->oversubscribed = 0;
            if (q->h.node_ranks > q->h.node_cpus)
                p->oversubscribed = 1;
            if (q->h.node_ranks > p->ranks_per_node_max)
                p->ranks_per_node_max = q->h.node_ranks;
            if (!p->cpus_per_node_min || q->h.node_cpus < p->cpus_per_node_min)
                p->cpus_per_node_min = q->h.node_cpus;
        }
    }
    p->failed_calls = failed;

    /* why it is partial: how the ranks ended, one sentence per way (signal,
     * abort, exit) and code */
    char name[32];
    unsigned char *told = calloc((size_t)size + 1, 1);
    if (!told)
        goto out;
    for (int r = 0; r < size; r++) {
        const cf_part_t *q = byrank[r];
        if (!q || told[r])
            continue;
        memset(mark, 0, (size_t)size);
        int n = 0;
        for (int k = r; k < size; k++)
            if (byrank[k] && byrank[k]->h.end == q->h.end && byrank[k]->h.code == q->h.code) {
                mark[k] = told[k] = 1;
                n++;
            }
        cf_rank_list(mark, size, list, 4096);
        const char *who = n > 1 ? "ranks" : "rank";
        if (q->h.end == CF_END_SIGNAL)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s ended by %s", who, list,
                                          cf_sig_name(q->h.code, name, sizeof(name)));
        else if (q->h.end == CF_END_REFRESH)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s killed with no chance to write "
                                          "(SIGKILL, or the node lost): records up to the last refresh, %.0f s after "
                                          "MPI_Init (COMMFIT_SPOOL_EVERY)", who, list, q->h.wall_s);
        else if (q->h.end == CF_END_ABORT)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s called MPI_Abort (errorcode %d)",
                                          who, list, q->h.code);
        else if (q->h.code >= 0)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s exited (status %d) without it",
                                          who, list, q->h.code);
        else
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s exited without it", who, list);
    }
    free(told);
    memset(mark, 0, (size_t)size);
    for (int r = 0; r < size; r++)
        mark[r] = byrank[r] == NULL;
    if (have < size) {
        cf_rank_list(mark, size, list, 4096);
        cf_profile_add_partial_reason(p, "%d of %d ranks left nothing (killed before they could write: SIGKILL, or "
                                      "no room): ranks %s; records may lack their calls (ranks_missing)",
                                      size - have, size, list);
    }
    cf_profile_add_partial_reason(p, "clocks not synchronized: the job ended before MPI_Finalize, so waits, transfer "
                                  "times and one-way times are not measured; times are each rank's own");
    if (refused)
        cf_profile_add_partial_reason(p, "%llu threads not recorded (COMMFIT_MAX_THREADS)", (unsigned long long)refused);
    if (dropped)
        cf_profile_add_partial_reason(p, "records dropped: %llu calls found the tables full (COMMFIT_TABLE_SIZE); "
                                      "the records concerned say how many ranks they may lack (ranks_missing)",
                                      (unsigned long long)dropped);
    if (req_dropped)
        cf_profile_add_partial_reason(p, "%llu requests not tracked (COMMFIT_MAX_REQUESTS)",
                                      (unsigned long long)req_dropped);
    if (stale)
        cf_profile_add_partial_reason(p, "%zu parts of another run in the same spool left out", stale);
    if (bad)
        cf_profile_add_partial_reason(p, "%zu parts unreadable (%s)", bad, first_bad);

    /* communicators: union by id; regions: union by id, listed by name */
    size_t ncomm = 0, nreg = 0;
    for (int r = 0; r < size; r++)
        if (byrank[r]) {
            ncomm += byrank[r]->h.ncomm;
            nreg += byrank[r]->h.nregion;
        }
    p->comm = calloc(ncomm + 1, sizeof(*p->comm));
    cf_spill_region_t *regs = calloc(nreg + 1, sizeof(*regs));
    if (!p->comm || !regs) {
        free(regs);
        goto out;
    }
    cf_u64map_t seen;
    size_t nr = 0;
    if (cf_u64map_init(&seen, ncomm + nreg) != CF_OK) {
        free(regs);
        goto out;
    }
    for (int r = 0; r < size; r++) {
        const cf_part_t *q = byrank[r];
        for (uint32_t i = 0; q && i < q->h.ncomm; i++) {
            if ((*cf_u64map_get(&seen, (uint64_t)q->comm[i].id + 1))++)
                continue;
            cf_comm_info_t *c = &p->comm[p->ncomm++];
            c->id = q->comm[i].id;
            c->size = q->comm[i].size;
            c->nodes = q->comm[i].nodes;
            c->instances = q->comm[i].instances;
            cf_strlcpy(c->name, q->comm[i].name, sizeof(c->name));
        }
        for (uint32_t i = 0; q && i < q->h.nregion; i++) {
            if ((*cf_u64map_get(&seen, ((uint64_t)q->region[i].id + 1) << 40))++) {
                /* entries: the most any rank counted, as at finalize */
                for (size_t k = 0; k < nr; k++)
                    if (regs[k].id == q->region[i].id && q->region[i].entries > regs[k].entries)
                        regs[k].entries = q->region[i].entries;
                continue;
            }
            regs[nr++] = q->region[i];
        }
    }
    cf_u64map_fini(&seen);
    qsort(regs, nr, sizeof(*regs), cf_cmp_region);
    p->region = calloc(nr + 1, sizeof(char *));
    json_t *entries = json_object();
    for (size_t i = 0; p->region && i < nr; i++) {
        p->region[p->nregion++] = strdup(regs[i].path);
        json_object_set_new(entries, regs[i].path, json_integer((json_int_t)regs[i].entries));
    }
    p->extra = json_object();
    json_object_set_new(p->extra, "region_entries", entries);

    /* records, sorted by key as at finalize */
    cf_stat_t *sorted = calloc(m.stats.used + 1, sizeof(*sorted));
    p->rec = calloc(m.stats.used + 1, sizeof(*p->rec));
    if (!sorted || !p->rec) {
        free(sorted);
        free(regs);
        goto out;
    }
    size_t ns = 0;
    for (uint32_t s = 0; s < m.stats.cap; s++)
        if (m.stats.slots[s].key && m.stats.slots[s].calls)
            sorted[ns++] = m.stats.slots[s];
    qsort(sorted, ns, sizeof(*sorted), cf_cmp_stat_key);
    for (size_t i = 0; i < ns; i++) {
        const cf_stat_t *s = &sorted[i];
        const cf_spill_op_t *op = cf_part_op(ref, cf_key_layer(s->key), cf_key_op(s->key));
        const cf_spill_op_t *parent =
            cf_key_layer(s->key) == CF_LAYER_UCX && cf_key_comm(s->key) ? cf_part_op(ref, CF_LAYER_MPI, cf_key_comm(s->key)) : NULL;
        cf_record_t *rec = &p->rec[p->nrec++];
        cf_record_from_stat(rec, s, op ? op->name : "unknown", op ? op->kind : "other", parent ? parent->name : "");
        unsigned rid = cf_key_region(s->key);
        for (size_t k = 0; rid && k < nr; k++)
            if (regs[k].id == rid)
                rec->region = (unsigned)k + 1;
        rec->ranks_missing = (uint32_t)((uint64_t)(size - have) + ranks_dropping - *cf_u64map_get(&m.full, s->key));
    }
    free(sorted);
    free(regs);

    /* clocks: what MPI_Init measured, marked unsynchronized */
    json_t *per = json_array();
    for (int r = 0; r < size; r++)
        if (byrank[r])
            json_array_append_new(per, json_pack("{s:i, s:b, s:f, s:f}", "rank", r, "synchronized", 0, "offset_init_s",
                                                 byrank[r]->h.offset_ns * 1e-9, "error_s",
                                                 byrank[r]->h.offset_err_ns * 1e-9));
    json_object_set_new(p->extra, "clock",
                        json_pack("{s:s, s:b, s:s, s:o}", "method",
                                  "offsets measured at MPI_Init only (the job ended before MPI_Finalize)",
                                  "synchronized", 0, "reason", "the job did not reach MPI_Finalize", "ranks", per));
    json_object_set_new(p->extra, "ended",
                        json_pack("{s:i, s:i, s:s}", "ranks_with_parts", have, "ranks", size, "spool", dir));
    if (output_p && ref->h.output[0])
        *output_p = strdup(ref->h.output);
    if (note && notelen) {
        if (have < size)
            snprintf(note, notelen, "parts of %d of %d ranks", have, size);
        else
            snprintf(note, notelen, "parts of all %d ranks", size);
    }
    rc = CF_OK;
out:
    if (rc == CF_ERR_NOMEM)
        snprintf(err, errlen, "out of memory");
    cf_table_fini(&m.stats);
    cf_u64map_fini(&m.full);
    for (size_t i = 0; i < np; i++)
        cf_part_free(&parts[i]);
    free(parts);
    free(byrank);
    free(mark);
    free(list);
    if (rc != CF_OK)
        cf_profile_free(p);
    return rc;
}
