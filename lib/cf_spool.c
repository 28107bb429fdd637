/* Spilled parts of a job that did not finish, and their merge into a
 * profile (see cf_spool.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sigabbrev_np */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cf_assemble.h"
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
    uint64_t mpi_ns, dropped, failed, missed, unfinished;
    cf_spill_fail_t *fail; /* by operation and class, summed over threads */
    size_t nfail;
} cf_part_t;

static void cf_part_free(cf_part_t *q)
{
    free(q->ops);
    free(q->comm);
    free(q->region);
    free(q->stats);
    free(q->stat_thread);
    free(q->thread_dropped);
    free(q->fail);
    memset(q, 0, sizeof(*q));
}

/* Bounds on what one rank can have counted: far past any real run, and
 * small enough that sums over every rank stay within the profile's
 * integers (63 bits). */
#define CF_PART_COUNT_MAX (1ull << 38) /* per-rank counters summed over ranks (<= 2^24 of them) */
#define CF_PART_VALUE_MAX (1ull << 62) /* a record's calls, bytes and times: merged with a check */

/* A reader of one part that knows how many bytes the file still has: no
 * count read from it is believed beyond that. */
typedef struct {
    FILE *f;
    uint64_t left; /* bytes of the file not read yet */
    char *why;
    size_t whylen;
} cf_in_t;

static int cf_in_read(cf_in_t *in, void *buf, size_t n)
{
    if (n > in->left || (n && fread(buf, 1, n, in->f) != n)) {
        snprintf(in->why, in->whylen, "truncated");
        return -1;
    }
    in->left -= n;
    return 0;
}

typedef int (*cf_item_ok_t)(const void *item, const cf_part_t *q, char *why, size_t whylen);

/* n items of elem bytes, each checked by ok: the count is held against the
 * bytes left first, and the array grows as items are read and pass, so a
 * file that is mostly holes (a sparse file reads as zeros) is refused at
 * its first bad item, having cost no more than what it really held. */
static void *cf_in_items(cf_in_t *in, uint64_t n, size_t elem, cf_item_ok_t ok, const cf_part_t *q, const char *what)
{
    if (n > in->left / elem) {
        snprintf(in->why, in->whylen, "%llu %ss claimed, the file has room for %llu", (unsigned long long)n, what,
                 (unsigned long long)(in->left / elem));
        return NULL;
    }
    size_t cap = n < 64 ? (size_t)n : 64, got = 0;
    char *a = malloc((cap ? cap : 1) * elem);
    while (a && got < n) {
        if (got == cap) {
            size_t ncap = cap * 2 < n ? cap * 2 : (size_t)n;
            char *g = realloc(a, ncap * elem);
            if (!g) {
                free(a);
                a = NULL;
                snprintf(in->why, in->whylen, "out of memory");
                break;
            }
            a = g;
            cap = ncap;
        }
        char *it = a + got * elem, m[200];
        if (cf_in_read(in, it, elem) != 0) {
            free(a);
            return NULL;
        }
        if (ok(it, q, m, sizeof(m)) != 0) {
            snprintf(in->why, in->whylen, "%s %llu: %s", what, (unsigned long long)got, m);
            free(a);
            return NULL;
        }
        got++;
    }
    if (!a)
        snprintf(in->why, in->whylen, "out of memory");
    return a;
}

/* Text fields end within their array, and are valid UTF-8 without control
 * characters (anything else becomes '?'). */
static void cf_clean_text(char *s, size_t len)
{
    s[len - 1] = 0;
    for (unsigned char *u = (unsigned char *)s; *u;) {
        size_t n = *u < 0x80 ? 1 : (*u & 0xe0) == 0xc0 ? 2 : (*u & 0xf0) == 0xe0 ? 3 : (*u & 0xf8) == 0xf0 ? 4 : 0;
        int good = n > 0 && (n > 1 || (*u >= 0x20 && *u != 0x7f));
        for (size_t k = 1; good && k < n; k++)
            good = (u[k] & 0xc0) == 0x80;
        if (good && n == 2)
            good = *u >= 0xc2; /* overlong */
        if (good && n == 3)
            good = !(*u == 0xe0 && u[1] < 0xa0) && !(*u == 0xed && u[1] >= 0xa0); /* overlong, surrogates */
        if (good && n == 4)
            good = !(*u == 0xf0 && u[1] < 0x90) && *u <= 0xf4 && !(*u == 0xf4 && u[1] >= 0x90);
        if (!good) {
            *u++ = '?';
            continue;
        }
        u += n;
    }
}

static int cf_op_ok(const void *item, const cf_part_t *q, char *why, size_t whylen)
{
    cf_spill_op_t *o = (cf_spill_op_t *)item;
    (void)q;
    cf_clean_text(o->name, sizeof(o->name));
    cf_clean_text(o->kind, sizeof(o->kind));
    if (!o->name[0] || !o->kind[0]) {
        snprintf(why, whylen, "no name");
        return -1;
    }
    return 0;
}

static int cf_comm_ok(const void *item, const cf_part_t *q, char *why, size_t whylen)
{
    cf_spill_comm_t *c = (cf_spill_comm_t *)item;
    cf_clean_text(c->name, sizeof(c->name));
    cf_clean_text(c->desc, sizeof(c->desc));
    cf_clean_text(c->user_name, sizeof(c->user_name));
    /* every communicator has a rank and a node (a hole in the file has neither) */
    (void)q;
    if (c->size < 1 || c->nodes < 0 || c->nodes > c->size || c->instances < 1 ||
        c->instances > CF_PART_COUNT_MAX) {
        snprintf(why, whylen, "size %d, nodes %d, instances %llu", c->size, c->nodes, (unsigned long long)c->instances);
        return -1;
    }
    return 0;
}

static int cf_fail_ok(const void *item, const cf_part_t *q, char *why, size_t whylen)
{
    cf_spill_fail_t *f = (cf_spill_fail_t *)item;
    (void)q;
    cf_clean_text(f->op, sizeof(f->op));
    cf_clean_text(f->cls, sizeof(f->cls));
    if (!f->op[0] || !f->cls[0] || !f->calls || f->calls > CF_PART_COUNT_MAX) {
        snprintf(why, whylen, "no name, or %llu calls", (unsigned long long)f->calls);
        return -1;
    }
    return 0;
}

/* Adds n failed-call kinds to list (*list_p, *n_p), summing the calls of
 * the same operation and class.  0, or -1 without memory. */
static int cf_fail_add(cf_spill_fail_t **list_p, size_t *n_p, const cf_spill_fail_t *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < *n_p && !(strcmp((*list_p)[j].op, f[i].op) == 0 && strcmp((*list_p)[j].cls, f[i].cls) == 0))
            j++;
        if (j == *n_p) {
            cf_spill_fail_t *g = realloc(*list_p, (*n_p + 1) * sizeof(*g));
            if (!g)
                return -1;
            *list_p = g;
            g[(*n_p)++] = f[i];
        } else {
            (*list_p)[j].calls += f[i].calls;
        }
    }
    return 0;
}

static int cf_region_ok(const void *item, const cf_part_t *q, char *why, size_t whylen)
{
    cf_spill_region_t *r = (cf_spill_region_t *)item;
    (void)q;
    cf_clean_text(r->path, sizeof(r->path));
    if (r->id == 0 || r->id > CF_REGION_MASK || !r->path[0] || r->entries > CF_PART_COUNT_MAX) {
        snprintf(why, whylen, "id %u, entries %llu", r->id, (unsigned long long)r->entries);
        return -1;
    }
    return 0;
}

/* A record as the plugin counts: a key it can make, ordered times, counts
 * within bounds. */
static int cf_stat_ok(const void *item, const cf_part_t *q, char *why, size_t whylen)
{
    const cf_stat_t *s = item;
    unsigned layer = cf_key_layer(s->key), op = cf_key_op(s->key);
    const char *bad = NULL;
    if (s->key == 0)
        bad = "no key";
    else if (cf_key_bin(s->key) >= CF_SIZE_BINS)
        bad = "a size bin past the last";
    else if (cf_key_path(s->key) > CF_PATH_INTER)
        bad = "an unknown path class";
    else if (op >= (layer == CF_LAYER_MPI ? q->h.nops : q->h.nops_ucx))
        bad = "an operation the part does not name";
    else if (s->calls > CF_PART_VALUE_MAX || s->bytes > CF_PART_VALUE_MAX || s->t_sum > CF_PART_VALUE_MAX ||
             s->t_wait > CF_PART_VALUE_MAX || s->t_post > CF_PART_VALUE_MAX || s->t_min > s->t_max)
        bad = "counts or times out of order or range";
    if (bad)
        snprintf(why, whylen, "%s", bad);
    return bad ? -1 : 0;
}

/* The header's values as the profile's reader wants them. */
static const char *cf_hdr_bad(const cf_spill_hdr_t *h)
{
    if (h->rank < 0 || h->size <= 0 || h->rank >= h->size || h->size > CF_SPOOL_MAX_RANKS)
        return "rank or size out of range";
    if (h->nnodes < 1 || h->nnodes > h->size || h->node < 0 || h->node >= h->nnodes)
        return "node numbers out of range";
    if (h->node_ranks < 0 || h->node_cpus < 0 || h->node_ranks > h->size)
        return "ranks or CPUs per node out of range";
    if (h->end < CF_END_SIGNAL || h->end > CF_END_REFRESH)
        return "an unknown way to end";
    if (h->nops > 512 || h->nops_ucx > 512 || h->nthreads > (1u << 16) || h->nregion > CF_REGION_MASK ||
        h->ncomm > (1u << 24))
        return "counts out of range";
    if (!isfinite(h->init_wall) || h->init_wall < 0 || h->init_wall > 1e11 || !isfinite(h->wall_s) ||
        h->wall_s < 0 || h->wall_s > 1e9 || !isfinite(h->clock_hz) || h->clock_hz < 0 || !isfinite(h->offset_ns) ||
        !isfinite(h->offset_err_ns) || fabs(h->offset_ns) > 1e15 || fabs(h->offset_err_ns) > 1e15)
        return "times not finite or out of range";
    if (h->threads_refused > CF_PART_COUNT_MAX || h->req_dropped > CF_PART_COUNT_MAX ||
        h->regions_full > CF_PART_COUNT_MAX || h->regions_deep > CF_PART_COUNT_MAX)
        return "counters out of range";
    if (h->nonce == 0)
        return "no job nonce";
    return NULL;
}

/* A part's file, opened to be read only when it is a regular file of the
 * user merging, never through a symbolic link: another user's file in the
 * spool is not this job's (and may be planted).  *size: its length. */
static int cf_part_open(const char *path, FILE **fp, uint64_t *size, char *why, size_t whylen)
{
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
    *fp = f;
    *size = (uint64_t)fst.st_size;
    return CF_OK;
}

/* One thread's header, records and failed-call kinds, added to the part's.
 * CF_OK, CF_ERR_FORMAT (why in in->why) or CF_ERR_NOMEM. */
static int cf_part_thread(cf_in_t *in, cf_part_t *q, uint32_t t)
{
    char *why = in->why;
    size_t whylen = in->whylen;
    cf_spill_thread_t th;
    if (cf_in_read(in, &th, sizeof(th)) != 0)
        return CF_ERR_FORMAT;
    if (th.dropped > CF_PART_COUNT_MAX || th.failed > CF_PART_COUNT_MAX || th.missed > CF_PART_COUNT_MAX ||
        th.unfinished > CF_PART_COUNT_MAX || th.mpi_ns > CF_PART_VALUE_MAX) {
        snprintf(why, whylen, "thread %u: counters out of range", t);
        return CF_ERR_FORMAT;
    }
    q->thread_dropped[t] = th.dropped;
    q->mpi_ns += th.mpi_ns;
    q->dropped += th.dropped;
    q->failed += th.failed;
    q->missed += th.missed;
    q->unfinished += th.unfinished;
    char what[48];
    snprintf(what, sizeof(what), "thread %u record", t);
    cf_stat_t *s = cf_in_items(in, th.nstats, sizeof(cf_stat_t), cf_stat_ok, q, what);
    if (!s)
        return CF_ERR_FORMAT;
    cf_stat_t *all = realloc(q->stats, (q->nstats + th.nstats + 1) * sizeof(*all));
    uint32_t *st = all ? realloc(q->stat_thread, (q->nstats + th.nstats + 1) * sizeof(*st)) : NULL;
    if (all)
        q->stats = all;
    if (st)
        q->stat_thread = st;
    if (!all || !st) {
        free(s);
        return CF_ERR_NOMEM;
    }
    memcpy(q->stats + q->nstats, s, th.nstats * sizeof(*s));
    free(s);
    for (size_t i = 0; i < th.nstats; i++)
        q->stat_thread[q->nstats + i] = t;
    q->nstats += th.nstats;
    if (th.nfail > CF_SPILL_FAILS) {
        snprintf(why, whylen, "thread %u: %llu failed-call kinds, at most %d", t, (unsigned long long)th.nfail,
                 CF_SPILL_FAILS);
        return CF_ERR_FORMAT;
    }
    snprintf(what, sizeof(what), "thread %u failed-call kind", t);
    cf_spill_fail_t *fl = cf_in_items(in, th.nfail, sizeof(cf_spill_fail_t), cf_fail_ok, q, what);
    if (!fl)
        return CF_ERR_FORMAT;
    int bad_add = cf_fail_add(&q->fail, &q->nfail, fl, th.nfail);
    free(fl);
    return bad_add ? CF_ERR_NOMEM : CF_OK;
}

/* One rank's part; a short message in why when it cannot be used.  Every
 * count is held against the file's size before anything is allocated for
 * it. */
static int cf_part_read(const char *path, cf_part_t *q, char *why, size_t whylen)
{
    memset(q, 0, sizeof(*q));
    why[0] = 0;
    FILE *f = NULL;
    uint64_t size = 0;
    int rc = cf_part_open(path, &f, &size, why, whylen);
    if (rc != CF_OK)
        return rc;
    cf_in_t in = {f, size, why, whylen};
    rc = CF_ERR_FORMAT;
    if (cf_in_read(&in, &q->h, sizeof(q->h)) != 0 || memcmp(q->h.magic, CF_SPILL_MAGIC, 8) != 0) {
        snprintf(why, whylen, "not a commfit spill file");
        goto out;
    }
    if (q->h.version != CF_SPILL_VERSION || q->h.hdr_size != sizeof(q->h) || q->h.stat_size != sizeof(cf_stat_t) ||
        q->h.hist_n != CF_HIST_N) {
        snprintf(why, whylen, "written by another version of commfit");
        rc = CF_ERR_VERSION;
        goto out;
    }
    cf_clean_text(q->h.host, sizeof(q->h.host));
    cf_clean_text(q->h.mpi_library, sizeof(q->h.mpi_library));
    cf_clean_text(q->h.jobid, sizeof(q->h.jobid));
    cf_clean_text(q->h.program, sizeof(q->h.program));
    const char *bad = cf_hdr_bad(&q->h);
    if (bad) {
        snprintf(why, whylen, "inconsistent header: %s", bad);
        goto out;
    }
    if (!(q->ops = cf_in_items(&in, q->h.nops + q->h.nops_ucx, sizeof(*q->ops), cf_op_ok, q, "operation")) ||
        !(q->comm = cf_in_items(&in, q->h.ncomm, sizeof(*q->comm), cf_comm_ok, q, "communicator")) ||
        !(q->region = cf_in_items(&in, q->h.nregion, sizeof(*q->region), cf_region_ok, q, "region")))
        goto out;
    /* the threads' headers come each before its records: room for all of them is needed */
    if (q->h.nthreads > in.left / sizeof(cf_spill_thread_t)) {
        snprintf(why, whylen, "%u threads claimed, the file has room for %llu", q->h.nthreads,
                 (unsigned long long)(in.left / sizeof(cf_spill_thread_t)));
        goto out;
    }
    if (!(q->thread_dropped = calloc(q->h.nthreads + 1, sizeof(uint64_t))))
        goto nomem;
    for (uint32_t t = 0; t < q->h.nthreads; t++) {
        int trc = cf_part_thread(&in, q, t);
        if (trc == CF_ERR_NOMEM)
            goto nomem;
        if (trc != CF_OK)
            goto out;
    }
    if (in.left) {
        snprintf(why, whylen, "%llu bytes past its end", (unsigned long long)in.left);
        goto out;
    }
    rc = CF_OK;
    goto out;
nomem:
    snprintf(why, whylen, "out of memory");
    rc = CF_ERR_NOMEM;
out:
    fclose(f);
    if (rc != CF_OK)
        cf_part_free(q);
    return rc;
}

/* The nonce of a part, from its header alone (0 when it is not a part of ours). */
static uint64_t cf_part_nonce(const char *path)
{
    cf_spill_hdr_t h;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    uint64_t n = 0;
    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && read(fd, &h, sizeof(h)) == sizeof(h) &&
        memcmp(h.magic, CF_SPILL_MAGIC, 8) == 0 && h.version == CF_SPILL_VERSION)
        n = h.nonce;
    close(fd);
    return n;
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

void cf_spool_remove(const char *dir, uint64_t nonce)
{
    cf_paths_t l = {0};
    cf_list_parts(dir, &l, 0);
    for (size_t i = 0; i < l.n; i++) {
        if (nonce && cf_part_nonce(l.path[i]) != nonce)
            continue; /* another job's: not ours to take */
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
    /* the job file goes with its job's parts, or with the last part */
    cf_paths_t left = {0};
    cf_list_parts(dir, &left, 0);
    uint64_t n = 0;
    if (cf_spool_job_read(dir, &n, NULL, 0, NULL) == 0 && (!nonce || n == nonce || left.n == 0))
        cf_spool_job_unlink(dir, n);
    cf_paths_free(&left);
    rmdir(dir);
}

/* ---- the job a spool belongs to ---- */

uint64_t cf_spool_nonce(void)
{
    uint64_t n = 0;
    while (n == 0)
        if (getrandom(&n, sizeof(n), 0) != (ssize_t)sizeof(n)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            n = ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uintptr_t)&n;
        }
    return n;
}

void cf_spool_nonce_str(uint64_t nonce, char *out) { snprintf(out, 17, "%016llx", (unsigned long long)nonce); }

uint64_t cf_spool_nonce_parse(const char *s)
{
    if (!s || strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16)
        return 0;
    return strtoull(s, NULL, 16);
}

void cf_spool_jobid(char *out, size_t len)
{
    static const char *const vars[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID", "FLUX_JOB_ID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            snprintf(out, len, "%s %s", vars[i], v);
            cf_clean_text(out, len);
            return;
        }
    }
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    snprintf(out, len, "pid %ld on %s", (long)getpid(), host);
    cf_clean_text(out, len);
}

/* "commfit spool 1\nnonce N\njob ID\nstarted T\n" */
int cf_spool_job_read(const char *dir, uint64_t *nonce, char *jobid, size_t jobidlen, double *started)
{
    char path[4200], buf[512];
    if (snprintf(path, sizeof(path), "%s/" CF_SPOOL_JOB_FILE, dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() ? read(fd, buf, sizeof(buf) - 1) : -1;
    close(fd);
    if (n <= 0) {
        errno = EPERM;
        return -1;
    }
    buf[n] = 0;
    char hex[17] = "", *j = strstr(buf, "\njob "), *t = strstr(buf, "\nstarted ");
    if (strncmp(buf, "commfit spool 1\nnonce ", 22) != 0 || sscanf(buf + 22, "%16[0-9a-f]", hex) != 1 ||
        !cf_spool_nonce_parse(hex)) {
        errno = EINVAL;
        return -1;
    }
    *nonce = cf_spool_nonce_parse(hex);
    if (jobid && jobidlen) {
        jobid[0] = 0;
        if (j)
            snprintf(jobid, jobidlen, "%.*s", (int)strcspn(j + 5, "\n"), j + 5);
        cf_clean_text(jobid, jobidlen);
    }
    if (started)
        *started = t ? strtod(t + 9, NULL) : 0;
    return 0;
}

void cf_spool_job_unlink(const char *dir, uint64_t nonce)
{
    uint64_t n = 0;
    char path[4200];
    if (cf_spool_job_read(dir, &n, NULL, 0, NULL) == 0 && n == nonce &&
        snprintf(path, sizeof(path), "%s/" CF_SPOOL_JOB_FILE, dir) < (int)sizeof(path))
        unlink(path);
}

int cf_spool_claim(const char *dir, uint64_t nonce, const char *jobid, double started, char *other, size_t otherlen,
                   char *why, size_t whylen)
{
    uint64_t n = 0;
    if (other && otherlen)
        other[0] = 0;
    if (cf_spool_job_read(dir, &n, other, otherlen, NULL) == 0 && n == nonce)
        return 0;
    /* parts of another job: the spool is its own until merged */
    cf_paths_t l = {0};
    int busy = 0;
    cf_list_parts(dir, &l, 0);
    for (size_t i = 0; i < l.n && !busy; i++) {
        uint64_t pn = cf_part_nonce(l.path[i]);
        busy = pn != nonce;
    }
    cf_paths_free(&l);
    if (busy) {
        if (other && otherlen && !other[0])
            snprintf(other, otherlen, "%s", n ? "its job file is unreadable" : "a job that left no job file");
        return 1;
    }
    /* written new under a name nobody can guess, then renamed over */
    char tmp[4200], path[4200], text[512], hex[17];
    cf_spool_nonce_str(nonce, hex);
    int len = snprintf(text, sizeof(text), "commfit spool 1\nnonce %s\njob %s\nstarted %.3f\n", hex, jobid, started);
    if (snprintf(path, sizeof(path), "%s/" CF_SPOOL_JOB_FILE, dir) >= (int)sizeof(path) ||
        snprintf(tmp, sizeof(tmp), "%s/.job.%016llx", dir, (unsigned long long)cf_spool_nonce()) >= (int)sizeof(tmp)) {
        snprintf(why, whylen, "its path is too long");
        return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int ok = fd >= 0 && write(fd, text, (size_t)len) == len;
    if (fd >= 0 && close(fd) != 0)
        ok = 0;
    if (ok && rename(tmp, path) != 0)
        ok = 0;
    if (!ok) {
        snprintf(why, whylen, "cannot write its job file: %s", strerror(errno));
        if (fd >= 0)
            unlink(tmp);
        return -1;
    }
    return 0;
}

int cf_spool_beside(const char *dir, char *out, size_t outlen)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (snprintf(out, outlen, "%.*s.XXXXXX", (int)n, dir) >= (int)outlen) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(out) ? 0 : -1;
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

/* Appends "lo" or "lo-hi" to a list of ranks ("0, 2-5, 9"), "..." once it is full. */
static void cf_range_add(char *out, size_t len, size_t *at, int lo, int hi)
{
    if (*at + 24 >= len) {
        if (*at >= 3 && *at + 4 < len && strcmp(out + *at - 3, "...") != 0)
            *at += (size_t)snprintf(out + *at, len - *at, "...");
        return;
    }
    *at += (size_t)snprintf(out + *at, len - *at, "%s%d", *at ? ", " : "", lo);
    if (hi > lo)
        *at += (size_t)snprintf(out + *at, len - *at, "-%d", hi);
}

/* The ranks of the parts q[0..n) (ascending ranks) that pick selects. */
static void cf_rank_list(cf_part_t *const *q, size_t n, int (*pick)(const cf_part_t *, const cf_part_t *),
                         const cf_part_t *like, char *out, size_t len)
{
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!pick(q[i], like))
            continue;
        size_t e = i;
        while (e + 1 < n && pick(q[e + 1], like) && q[e + 1]->h.rank == q[e]->h.rank + 1)
            e++;
        cf_range_add(out, len, &at, q[i]->h.rank, q[e]->h.rank);
        i = e;
    }
}

/* The ranks of 0..size-1 that have no part among q[0..n) (ascending). */
static void cf_missing_list(cf_part_t *const *q, size_t n, int size, char *out, size_t len)
{
    size_t at = 0;
    int next = 0;
    out[0] = 0;
    for (size_t i = 0; i <= n; i++) {
        int r = i < n ? q[i]->h.rank : size;
        if (r > next)
            cf_range_add(out, len, &at, next, r - 1);
        next = r + 1;
    }
}

static int cf_same_end(const cf_part_t *a, const cf_part_t *b) { return a->h.end == b->h.end && a->h.code == b->h.code; }

static const char *cf_sig_name(int sig, char *buf, size_t len)
{
    const char *abbrev = sig > 0 && sig < 65 ? sigabbrev_np(sig) : NULL;
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

static int cf_cmp_part_rank(const void *a, const void *b)
{
    const cf_part_t *x = *(cf_part_t *const *)a, *y = *(cf_part_t *const *)b;
    return x->h.rank < y->h.rank ? -1 : x->h.rank > y->h.rank;
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

/* d += s unless a sum would leave the profile's integers (63 bits). */
static int cf_stat_merge_checked(cf_stat_t *d, const cf_stat_t *s)
{
    const uint64_t lim = (uint64_t)INT64_MAX;
    if (d->calls > lim - s->calls || d->bytes > lim - s->bytes || d->t_sum > lim - s->t_sum ||
        d->t_wait > lim - s->t_wait || d->t_post > lim - s->t_post)
        return -1;
    cf_stat_merge(d, s);
    return 0;
}

/* What the merge of one job's parts holds between its phases. */
typedef struct {
    const char *dir;
    uint64_t nonce, spool_nonce;
    char jobid[64];
    cf_part_t *parts; /* every part that could be read */
    size_t np, bad, other, dup, mismatch;
    char first_bad[600], other_job[64];
    cf_part_t **sel; /* this job's, one per rank, ascending ranks */
    size_t have;
    int size;
    const cf_part_t *ref;
    cf_merged_t m;
    uint64_t overflow, ranks_dropping;
    uint64_t refused, req_dropped, dropped, regions_full, regions_deep;
    uint32_t table_size, max_threads; /* the parts' limits when they agree, else 0 */
    char *list; /* CF_MERGE_LIST bytes: a list of ranks for a sentence */
} cf_merge_t;

#define CF_MERGE_LIST 4096

/* Every part in the spool that can be read, and the job its job file names. */
static int cf_merge_read_parts(cf_merge_t *g, char *err, size_t errlen)
{
    cf_paths_t l = {0};
    if (cf_list_parts(g->dir, &l, 0) != CF_OK) {
        snprintf(err, errlen, "cannot read the spool directory: %s", strerror(errno));
        cf_paths_free(&l);
        return CF_ERR_IO;
    }
    if (l.n == 0) {
        snprintf(err, errlen, "no rank-*.spill parts in it");
        cf_paths_free(&l);
        return CF_ERR_NODATA;
    }
    /* the job: the one asked for, else the spool's, else the newest among the parts */
    if (!g->nonce && cf_spool_job_read(g->dir, &g->spool_nonce, g->jobid, sizeof(g->jobid), NULL) == 0)
        g->nonce = g->spool_nonce;
    g->parts = calloc(l.n, sizeof(*g->parts));
    char why[256];
    for (size_t i = 0; g->parts && i < l.n; i++) {
        int prc = cf_part_read(l.path[i], &g->parts[g->np], why, sizeof(why));
        if (prc != CF_OK) {
            fprintf(stderr, "commfit: %s: %s\n", l.path[i], why);
            if (!g->bad++)
                snprintf(g->first_bad, sizeof(g->first_bad), "%s: %s", l.path[i], why);
        } else
            g->np++;
    }
    cf_paths_free(&l);
    if (!g->parts) {
        snprintf(err, errlen, "out of memory");
        return CF_ERR_NOMEM;
    }
    return CF_OK;
}

/* The job's parts, one per rank, ascending ranks; the size the first says.
 * CF_ERR_FORMAT or CF_ERR_NODATA (err said) when there is none. */
static int cf_merge_select(cf_merge_t *g, char *err, size_t errlen)
{
    const cf_part_t *parts = g->parts;
    size_t np = g->np;
    /* a job file naming a job none of the parts is of says nothing about them */
    int named = 0;
    for (size_t i = 0; g->spool_nonce && i < np; i++)
        named |= parts[i].h.nonce == g->spool_nonce;
    if (g->spool_nonce && !named)
        g->nonce = 0;
    if (!g->nonce) {
        double newest = -1;
        for (size_t i = 0; i < np; i++)
            if (parts[i].h.init_wall > newest) {
                newest = parts[i].h.init_wall;
                g->nonce = parts[i].h.nonce;
            }
    }
    g->sel = calloc(np + 1, sizeof(*g->sel));
    for (size_t i = 0; g->sel && i < np; i++)
        if (parts[i].h.nonce == g->nonce) {
            if (!g->have)
                g->size = parts[i].h.size;
            if (parts[i].h.size != g->size) {
                g->mismatch++;
                continue;
            }
            g->sel[g->have++] = &g->parts[i];
        } else {
            g->other++;
            if (!g->other_job[0])
                snprintf(g->other_job, sizeof(g->other_job), "%s", parts[i].h.jobid);
        }
    g->list = malloc(CF_MERGE_LIST);
    if (!g->sel || !g->list)
        return CF_ERR_NOMEM;
    if (g->have == 0) {
        if (np == 0)
            snprintf(err, errlen, "no usable part (%s)", g->first_bad);
        else
            snprintf(err, errlen, "no part of this job (%zu of other jobs)", g->other);
        return np == 0 ? CF_ERR_FORMAT : CF_ERR_NODATA;
    }
    qsort(g->sel, g->have, sizeof(*g->sel), cf_cmp_part_rank);
    size_t w = 0;
    for (size_t i = 0; i < g->have; i++) {
        if (w && g->sel[w - 1]->h.rank == g->sel[i]->h.rank) {
            g->dup++; /* the same rank twice: the first one counts */
            continue;
        }
        g->sel[w++] = g->sel[i];
    }
    g->have = w;
    g->ref = g->sel[0];
    if (!g->jobid[0] || g->spool_nonce != g->nonce)
        snprintf(g->jobid, sizeof(g->jobid), "%s", g->ref->h.jobid);
    return CF_OK;
}

/* The ranks' records summed by key, and what their dropped records may lack. */
static int cf_merge_stats(cf_merge_t *g)
{
    size_t total = 0;
    for (size_t i = 0; i < g->have; i++)
        total += g->sel[i]->nstats;
    /* room for every key at most half full, so that none is dropped */
    uint32_t cap = 64;
    while (cap < 2 * total + 64 && cap < (1u << 30))
        cap <<= 1;
    if (cf_table_init(&g->m.stats, cap) != CF_OK || cf_u64map_init(&g->m.full, total) != CF_OK)
        return CF_ERR_NOMEM;
    for (size_t r = 0; r < g->have; r++) {
        const cf_part_t *q = g->sel[r];
        for (size_t i = 0; i < q->nstats; i++) {
            cf_stat_t *d = cf_table_get(&g->m.stats, q->stats[i].key);
            if (d && cf_stat_merge_checked(d, &q->stats[i]) != 0)
                g->overflow++;
        }
    }
    /* a rank's table that filled up dropped whole records (a key gets in at
     * its first call or never): a record may lack the calls of each rank
     * where some thread that dropped has no entry of it, and of each rank
     * without a part.  full counts, per key, the ranks with drops whose every
     * dropping thread holds it. */
    for (size_t r = 0; r < g->have; r++) {
        const cf_part_t *q = g->sel[r];
        uint64_t nd = 0;
        for (uint32_t t = 0; t < q->h.nthreads; t++)
            nd += q->thread_dropped[t] != 0;
        if (!nd)
            continue;
        g->ranks_dropping++;
        cf_u64map_t held;
        if (cf_u64map_init(&held, q->nstats) != CF_OK)
            return CF_ERR_NOMEM;
        for (size_t i = 0; i < q->nstats; i++)
            if (q->thread_dropped[q->stat_thread[i]])
                (*cf_u64map_get(&held, q->stats[i].key))++;
        for (size_t s2 = 0; s2 <= held.mask; s2++)
            if (held.keys[s2] && held.vals[s2] == nd)
                (*cf_u64map_get(&g->m.full, held.keys[s2]))++;
        cf_u64map_fini(&held);
    }
    return CF_OK;
}

/* A limit the parts name, from the value so far and part r's: known only
 * when every part gives the same one, within the plugin's bounds
 * (cf_config_read). */
static uint32_t cf_part_limit(size_t r, uint32_t so_far, uint32_t v, uint32_t bound)
{
    if (v > bound || (r > 0 && v != so_far))
        return 0;
    return v;
}

/* The job and its ranks, and the losses their parts count. */
static int cf_merge_ranks(cf_merge_t *g, cf_profile_t *p)
{
    const cf_part_t *ref = g->ref;
    p->ranks = g->size;
    p->partial = 1;
    p->clock_hz = ref->h.clock_hz;
    cf_strlcpy(p->mpi_library, ref->h.mpi_library, sizeof(p->mpi_library));
    /* rank 0's, as a finished job's profile has it; unknown without its part
     * (the frameworks stay unknown: cf_spill_hdr_t) */
    if (g->have > 0 && g->sel[0]->h.rank == 0)
        cf_strlcpy(p->program, g->sel[0]->h.program, sizeof(p->program));
    time_t t0 = (time_t)ref->h.init_wall;
    for (size_t r = 0; r < g->have; r++)
        if ((time_t)g->sel[r]->h.init_wall < t0)
            t0 = (time_t)g->sel[r]->h.init_wall;
    struct tm tm;
    gmtime_r(&t0, &tm);
    strftime(p->start_time, sizeof(p->start_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
    p->nodes = ref->h.nnodes;
    p->rank = calloc(g->have, sizeof(*p->rank));
    if (!p->rank)
        return CF_ERR_NOMEM;
    uint64_t failed = 0, unfinished = 0;
    for (size_t r = 0; r < g->have; r++) {
        const cf_part_t *q = g->sel[r];
        g->regions_full += q->h.regions_full;
        g->regions_deep += q->h.regions_deep;
        cf_rank_info_t *ri = &p->rank[p->nrank++];
        ri->rank = q->h.rank;
        ri->node = q->h.node < p->nodes ? q->h.node : p->nodes - 1;
        cf_strlcpy(ri->host, q->h.host, sizeof(ri->host));
        ri->wall_s = q->h.wall_s;
        ri->mpi_s = (double)q->mpi_ns * 1e-9;
        ri->dropped = q->dropped;
        ri->node_ranks = q->h.node_ranks;
        ri->node_cpus = q->h.node_cpus;
        if (ri->wall_s > p->wall_s)
            p->wall_s = ri->wall_s;
        g->table_size = cf_part_limit(r, g->table_size, q->h.table_size, 1u << 20);
        g->max_threads = cf_part_limit(r, g->max_threads, q->h.max_threads, 4096);
        g->refused += q->h.threads_refused;
        g->req_dropped += q->h.req_dropped;
        g->dropped += q->dropped;
        failed += q->failed;
        unfinished += q->unfinished;
    }
    cf_assemble_oversubscription(p);
    p->failed_calls = failed;
    p->unfinished_requests = unfinished;
    return CF_OK;
}

/* The sentence of the ranks killed after their last refresh (like q): where
 * their counts end, the refresh's clock time, and how long before the others
 * ended. */
static void cf_merge_refresh_reason(const cf_merge_t *g, cf_profile_t *p, const cf_part_t *q, const char *who)
{
    double lo = q->h.wall_s, hi = lo, first = q->h.init_wall + lo, last = first, others = 0;
    for (size_t k = 0; k < g->have; k++) {
        double ws = g->sel[k]->h.wall_s, e = g->sel[k]->h.init_wall + ws;
        if (!cf_same_end(g->sel[k], q)) {
            others = e > others ? e : others;
            continue;
        }
        lo = ws < lo ? ws : lo;
        hi = ws > hi ? ws : hi;
        first = e < first ? e : first;
        last = e > last ? e : last;
    }
    char at[64], ago[64] = "", after[48];
    struct tm tm1;
    time_t a = (time_t)first, b = (time_t)last;
    size_t k = strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&a, &tm1));
    if (b != a)
        strftime(at + k, sizeof(at) - k, " to %H:%M:%SZ", gmtime_r(&b, &tm1));
    if (others > last)
        snprintf(ago, sizeof(ago), ", %.0f s before the other ranks ended", others - last);
    if ((long)(hi + 0.5) != (long)(lo + 0.5))
        snprintf(after, sizeof(after), "%.0f to %.0f", lo, hi);
    else
        snprintf(after, sizeof(after), "%.0f", lo);
    cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s killed with no chance to write "
                                  "(SIGKILL, or the node lost): records up to the last refresh, at %s, %s s "
                                  "after MPI_Init%s (COMMFIT_SPOOL_EVERY, COMMFIT_SPOOL_BEFORE); later calls "
                                  "are not in them",
                                  who, g->list, at, after, ago);
}

/* why it is partial: how the ranks ended, one sentence per way (signal,
 * abort, exit) and code */
static int cf_merge_ends(cf_merge_t *g, cf_profile_t *p)
{
    char name[32];
    unsigned char *told = calloc(g->have + 1, 1);
    if (!told)
        return CF_ERR_NOMEM;
    for (size_t r = 0; r < g->have; r++) {
        const cf_part_t *q = g->sel[r];
        if (told[r])
            continue;
        int n = 0;
        for (size_t k = r; k < g->have; k++)
            if (cf_same_end(g->sel[k], q)) {
                told[k] = 1;
                n++;
            }
        cf_rank_list(g->sel, g->have, cf_same_end, q, g->list, CF_MERGE_LIST);
        const char *who = n > 1 ? "ranks" : "rank";
        if (q->h.end == CF_END_SIGNAL)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s ended by %s", who, g->list,
                                          cf_sig_name(q->h.code, name, sizeof(name)));
        else if (q->h.end == CF_END_REFRESH)
            cf_merge_refresh_reason(g, p, q, who);
        else if (q->h.end == CF_END_ABORT)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s called MPI_Abort (errorcode %d)",
                                          who, g->list, q->h.code);
        else if (q->h.code >= 0)
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s exited (status %d) without it",
                                          who, g->list, q->h.code);
        else
            cf_profile_add_partial_reason(p, "the job did not reach MPI_Finalize: %s %s exited without it", who,
                                          g->list);
    }
    free(told);
    return CF_OK;
}

/* The rest of why it is partial: the ranks without a part, the clocks, what
 * the tables lost and the parts refused. */
static void cf_merge_losses(cf_merge_t *g, cf_profile_t *p)
{
    int size = g->size, have = (int)g->have;
    if (have < size) {
        cf_missing_list(g->sel, g->have, size, g->list, CF_MERGE_LIST);
        cf_profile_add_partial_reason(p, "%d of %d ranks left nothing (killed before they could write: SIGKILL, or "
                                      "no room): ranks %s; records may lack their calls (ranks_missing)",
                                      size - have, size, g->list);
    }
    cf_profile_add_partial_reason(p, "clocks not synchronized: the job ended before MPI_Finalize, so waits, transfer "
                                  "times and one-way times are not measured; times are each rank's own");
    /* the parts carry the tables' limits, not COMMFIT_MAX_REQUESTS: its sentence names the variable alone */
    cf_losses_t l = {.threads = g->refused, .records = g->dropped, .requests = g->req_dropped,
                     .table_size = g->table_size, .max_threads = g->max_threads};
    cf_assemble_losses(p, &l);
    cf_assemble_region_losses(p, g->regions_full, g->regions_deep);
    if (g->other)
        cf_profile_add_partial_reason(p, "%zu parts of another job (%s) left in the spool", g->other,
                                      g->other_job[0] ? g->other_job : "no job id");
    if (g->mismatch || g->dup)
        cf_profile_add_partial_reason(p, "%zu parts of this job refused: %zu of a rank already merged, %zu of a job "
                                      "size other than %d", g->mismatch + g->dup, g->dup, g->mismatch, size);
    if (g->bad)
        cf_profile_add_partial_reason(p, "%zu parts refused (%s)", g->bad, g->first_bad);
    if (g->overflow)
        cf_profile_add_partial_reason(p, "%llu records of a rank left out: their sums would overflow",
                                      (unsigned long long)g->overflow);
}

/* communicators: union by id; regions: union by id, sorted by name into
 * *regs_p (*nr_p of them) */
static int cf_merge_names(const cf_merge_t *g, cf_profile_t *p, cf_spill_region_t **regs_p, size_t *nr_p)
{
    size_t ncomm = 0, nreg = 0;
    for (size_t r = 0; r < g->have; r++) {
        ncomm += g->sel[r]->h.ncomm;
        nreg += g->sel[r]->h.nregion;
    }
    p->comm = calloc(ncomm + 1, sizeof(*p->comm));
    cf_spill_region_t *regs = *regs_p = calloc(nreg + 1, sizeof(*regs));
    cf_u64map_t seen;
    size_t nr = 0;
    if (!p->comm || !regs || cf_u64map_init(&seen, ncomm + nreg) != CF_OK)
        return CF_ERR_NOMEM;
    for (size_t r = 0; r < g->have; r++) {
        const cf_part_t *q = g->sel[r];
        for (uint32_t i = 0; i < q->h.ncomm; i++) {
            uint64_t *v = cf_u64map_get(&seen, (uint64_t)q->comm[i].id + 1);
            if (*v) {
                /* a name given on any rank names it */
                cf_comm_info_t *c = &p->comm[*v - 1];
                if (!c->user_name[0])
                    cf_strlcpy(c->user_name, q->comm[i].user_name, sizeof(c->user_name));
                continue;
            }
            cf_comm_info_t *c = &p->comm[p->ncomm++];
            *v = p->ncomm;
            c->id = q->comm[i].id;
            c->size = q->comm[i].size;
            c->nodes = q->comm[i].nodes;
            c->instances = q->comm[i].instances;
            cf_strlcpy(c->name, q->comm[i].name, sizeof(c->name));
            cf_strlcpy(c->desc, q->comm[i].desc, sizeof(c->desc));
            cf_strlcpy(c->user_name, q->comm[i].user_name, sizeof(c->user_name));
        }
        for (uint32_t i = 0; i < q->h.nregion; i++) {
            uint64_t *v = cf_u64map_get(&seen, ((uint64_t)q->region[i].id + 1) << 40);
            if (*v) {
                /* entries: the most any rank counted, as at finalize */
                if (q->region[i].entries > regs[*v - 1].entries)
                    regs[*v - 1].entries = q->region[i].entries;
                continue;
            }
            regs[nr++] = q->region[i];
            *v = nr;
        }
    }
    cf_u64map_fini(&seen);
    qsort(regs, nr, sizeof(*regs), cf_cmp_region);
    *nr_p = nr;
    return CF_OK;
}

/* The regions' names and entries, and the records, sorted by key as at
 * finalize, with their region ids: index + 1 in the sorted list */
static int cf_merge_records(cf_merge_t *g, cf_profile_t *p, const cf_spill_region_t *regs, size_t nr)
{
    cf_u64map_t rindex;
    if (cf_u64map_init(&rindex, nr) != CF_OK)
        return CF_ERR_NOMEM;
    p->region = calloc(nr + 1, sizeof(char *));
    json_t *entries = json_object();
    for (size_t i = 0; p->region && i < nr; i++) {
        p->region[p->nregion++] = strdup(regs[i].path);
        *cf_u64map_get(&rindex, regs[i].id) = i + 1;
        json_object_set_new(entries, regs[i].path, json_integer((json_int_t)regs[i].entries));
    }
    p->extra = json_object();
    json_object_set_new(p->extra, "region_entries", entries);

    const cf_table_t *t = &g->m.stats;
    cf_stat_t *sorted = calloc(t->used + 1, sizeof(*sorted));
    p->rec = calloc(t->used + 1, sizeof(*p->rec));
    if (!sorted || !p->rec) {
        free(sorted);
        cf_u64map_fini(&rindex);
        return CF_ERR_NOMEM;
    }
    size_t ns = 0;
    for (uint32_t s = 0; s < t->used; s++)
        if (cf_table_nth(t, s)->calls)
            sorted[ns++] = *cf_table_nth(t, s);
    qsort(sorted, ns, sizeof(*sorted), cf_cmp_stat_key);
    uint64_t missing = (uint64_t)(g->size - (int)g->have) + g->ranks_dropping;
    for (size_t i = 0; i < ns; i++) {
        const cf_stat_t *s = &sorted[i];
        const cf_spill_op_t *op = cf_part_op(g->ref, cf_key_layer(s->key), cf_key_op(s->key));
        const cf_spill_op_t *parent = cf_key_layer(s->key) == CF_LAYER_UCX && cf_key_comm(s->key)
                                          ? cf_part_op(g->ref, CF_LAYER_MPI, cf_key_comm(s->key))
                                          : NULL;
        unsigned rid = cf_key_region(s->key);
        cf_assemble_record(p, s, op ? op->name : "unknown", op ? op->kind : "other", parent ? parent->name : "",
                           rid && nr ? (unsigned)*cf_u64map_get(&rindex, rid) : 0,
                           (uint32_t)(missing - *cf_u64map_get(&g->m.full, s->key)));
    }
    cf_u64map_fini(&rindex);
    free(sorted);
    return CF_OK;
}

/* clocks: what MPI_Init measured, marked unsynchronized; how the job ended;
 * the failed calls by operation and error class, as at finalize */
static int cf_merge_extra(const cf_merge_t *g, cf_profile_t *p)
{
    json_t *per = json_array();
    for (size_t r = 0; r < g->have; r++)
        json_array_append_new(per, json_pack("{s:i, s:b, s:f, s:f}", "rank", g->sel[r]->h.rank, "synchronized", 0,
                                             "offset_init_s", g->sel[r]->h.offset_ns * 1e-9, "error_s",
                                             g->sel[r]->h.offset_err_ns * 1e-9));
    json_object_set_new(p->extra, "clock",
                        json_pack("{s:s, s:b, s:s, s:o}", "method",
                                  "offsets measured at MPI_Init only (the job ended before MPI_Finalize)",
                                  "synchronized", 0, "reason", "the job did not reach MPI_Finalize", "ranks", per));
    char hex[17];
    cf_spool_nonce_str(g->nonce, hex);
    json_object_set_new(p->extra, "ended",
                        json_pack("{s:i, s:i, s:s, s:s, s:s}", "ranks_with_parts", (int)g->have, "ranks", g->size,
                                  "spool", g->dir, "job", g->jobid, "nonce", hex));
    cf_spill_fail_t *fails = NULL;
    size_t nfails = 0;
    for (size_t r = 0; r < g->have; r++)
        if (cf_fail_add(&fails, &nfails, g->sel[r]->fail, g->sel[r]->nfail) != 0) {
            free(fails);
            return CF_ERR_NOMEM;
        }
    if (nfails) {
        json_t *fa = json_array();
        for (size_t i = 0; i < nfails; i++)
            json_array_append_new(fa, json_pack("{s:s, s:s, s:I}", "op", fails[i].op, "class", fails[i].cls, "calls",
                                                (json_int_t)fails[i].calls));
        json_object_set_new(p->extra, "failed_calls", fa);
    }
    free(fails);
    return CF_OK;
}

int cf_spool_merge(const char *dir, uint64_t nonce, cf_profile_t *p, uint64_t *nonce_p, char *note, size_t notelen,
                   char *err, size_t errlen)
{
    cf_merge_t g = {0};
    g.dir = dir;
    g.nonce = nonce;
    if (nonce_p)
        *nonce_p = 0;
    if (note && notelen)
        note[0] = 0;
    cf_profile_init(p);
    int rc = cf_merge_read_parts(&g, err, errlen);
    if (rc != CF_OK)
        return rc;
    cf_spill_region_t *regs = NULL;
    size_t nr = 0;
    if ((rc = cf_merge_select(&g, err, errlen)) != CF_OK)
        goto out;
    if (nonce_p)
        *nonce_p = g.nonce;
    if ((rc = cf_merge_stats(&g)) != CF_OK || (rc = cf_merge_ranks(&g, p)) != CF_OK ||
        (rc = cf_merge_ends(&g, p)) != CF_OK)
        goto out;
    cf_merge_losses(&g, p);
    if ((rc = cf_merge_names(&g, p, &regs, &nr)) != CF_OK || (rc = cf_merge_records(&g, p, regs, nr)) != CF_OK)
        goto out;
    free(regs);
    regs = NULL;
    if ((rc = cf_merge_extra(&g, p)) != CF_OK)
        goto out;
    if (note && notelen) {
        if ((int)g.have < g.size)
            snprintf(note, notelen, "parts of %d of %d ranks", (int)g.have, g.size);
        else
            snprintf(note, notelen, "parts of all %d ranks", g.size);
    }
out:
    free(regs);
    if (rc == CF_ERR_NOMEM)
        snprintf(err, errlen, "out of memory");
    cf_table_fini(&g.m.stats);
    cf_u64map_fini(&g.m.full);
    for (size_t i = 0; i < g.np; i++)
        cf_part_free(&g.parts[i]);
    free(g.parts);
    free(g.sel);
    free(g.list);
    if (rc != CF_OK)
        cf_profile_free(p);
    return rc;
}
