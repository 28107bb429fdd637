/* MPI_Pcontrol: level 0 stops recording, level 1 resumes it; level 1 with a
 * name opens a region, -1 with the name closes it.  Regions nest: a record
 * carries the path of the innermost open region ("step/allreduce").  Region
 * ids are a hash of the path, so every rank names a region the same way
 * without talking. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include "cf_region.h"
#include "cf_text.h"

#define CF_REGION_NAME 128

typedef struct {
    unsigned id;
    uint64_t entries;
    char path[CF_REGION_NAME];
    /* the process's minor page faults, involuntary context switches and
     * the monotonic clock at the first and the last entry of an outermost
     * region (cf_region_step) */
    double flt_first, flt_last, csw_first, csw_last, t_first, t_last;
} cf_region_t;

/* The table grows by chunks up to the region ids there are (CF_MAX_REGIONS):
 * a chunk never moves, and the count is published after the entry is whole,
 * so a part written in a signal handler reads it without the lock. */
#define CF_REGION_CHUNK 256
static pthread_mutex_t cf_region_lock = PTHREAD_MUTEX_INITIALIZER;
static cf_region_t *_Atomic cf_chunks[(CF_MAX_REGIONS + CF_REGION_CHUNK - 1) / CF_REGION_CHUNK];
static _Atomic unsigned cf_nregions;
static uint16_t cf_region_slot[CF_REGION_MASK + 1]; /* region id -> table index + 1 */
static unsigned cf_stack[CF_REGION_DEPTH];
static unsigned cf_depth;
static int cf_pipe[2] = {-1, -1};
static uint64_t cf_region_misuse;
/* opens refused: the table full, or nested deeper than CF_REGION_DEPTH; the
 * closes of those still open are taken by unopened (innermost first) */
static uint64_t cf_region_full, cf_region_deep, cf_unopened;

static cf_region_t *cf_region_at(unsigned i)
{
    return &atomic_load(&cf_chunks[i / CF_REGION_CHUNK])[i % CF_REGION_CHUNK];
}

/* MPI_Pcontrol's name is a varargs argument the caller may not have passed:
 * read it through a pipe, which reports a bad address instead of faulting,
 * and accept only a short printable string. */
static int cf_read_name(const char *p, char *out, size_t len)
{
    if (!p)
        return 0;
    if (cf_pipe[0] < 0 && pipe2(cf_pipe, O_CLOEXEC) != 0)
        return 0;
    size_t got = 0;
    long page = sysconf(_SC_PAGESIZE);
    while (got < len - 1) {
        const char *at = p + got;
        size_t in_page = (size_t)(page - ((uintptr_t)at % (uintptr_t)page));
        size_t n = len - 1 - got < in_page ? len - 1 - got : in_page;
        ssize_t w = write(cf_pipe[1], at, n);
        if (w <= 0)
            return 0; /* EFAULT: not a readable address */
        if (read(cf_pipe[0], out + got, (size_t)w) != w)
            return 0;
        got += (size_t)w;
        if (memchr(out + got - (size_t)w, 0, (size_t)w))
            break;
    }
    out[len - 1] = 0;
    size_t n = strnlen(out, len);
    if (n == 0 || n >= len - 1)
        return 0;
    /* printable: ASCII or UTF-8 */
    return cf_text_printable(out, n) && memchr(out, '/', n) == NULL;
}

static unsigned cf_region_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    h = (h ^ (h >> 15)) & CF_REGION_MASK;
    return h ? h : 1;
}

/* The id of a region path, registered on first use (under the lock); 0
 * when every id is taken (or no memory). */
static unsigned cf_region_id(const char *path)
{
    unsigned id = cf_region_hash(path);
    for (unsigned tries = 0; tries < CF_REGION_MASK; tries++, id = (id % CF_REGION_MASK) + 1) {
        unsigned s = cf_region_slot[id];
        if (s == 0) {
            unsigned n = atomic_load(&cf_nregions);
            if (n >= CF_MAX_REGIONS)
                return 0;
            if (!atomic_load(&cf_chunks[n / CF_REGION_CHUNK])) {
                cf_region_t *c = calloc(CF_REGION_CHUNK, sizeof(*c));
                if (!c)
                    return 0;
                atomic_store(&cf_chunks[n / CF_REGION_CHUNK], c);
            }
            cf_region_t *r = cf_region_at(n);
            r->id = id;
            cf_strlcpy(r->path, path, sizeof(r->path));
            cf_region_slot[id] = (uint16_t)(n + 1);
            atomic_store(&cf_nregions, n + 1);
            return id;
        }
        if (strcmp(cf_region_at(s - 1)->path, path) == 0)
            return id;
        /* another path has this hash: the next free id (same on every rank
         * that opens the two regions in the same order) */
    }
    return 0;
}

static cf_region_t *cf_region_find(unsigned id)
{
    unsigned s = cf_region_slot[id & CF_REGION_MASK];
    return s ? cf_region_at(s - 1) : NULL;
}

/* An outermost region entered: the figures of cf_region_step. */
static void cf_region_mark_step(cf_region_t *r)
{
    struct rusage ru;
    struct timespec ts;
    int ok = getrusage(RUSAGE_SELF, &ru) == 0;
    r->flt_last = ok ? (double)ru.ru_minflt : NAN;
    r->csw_last = ok ? (double)ru.ru_nivcsw : NAN;
    r->t_last = clock_gettime(CLOCK_MONOTONIC, &ts) == 0 ? (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec : NAN;
    if (r->entries == 0) {
        r->flt_first = r->flt_last;
        r->csw_first = r->csw_last;
        r->t_first = r->t_last;
    }
}

void cf_pcontrol(int level, const char *name)
{
    if (atomic_load(&cf_g.state) != 1)
        return;
    char buf[64];
    /* the pipe is shared: one reader at a time */
    pthread_mutex_lock(&cf_region_lock);
    int named = (level == 1 || level == -1) && cf_read_name(name, buf, sizeof(buf));
    if (level == 0) {
        cf_recording_pause();
    } else if (level == 1 && !named) {
        cf_recording_resume();
    } else if (level == 1) {
        cf_recording_resume(); /* level 1 means on, with or without a name */
        /* past the depth limit nothing is registered: the calls stay in the region around */
        unsigned id = 0;
        if (cf_depth < CF_REGION_DEPTH && !cf_unopened) {
            const cf_region_t *top = cf_depth ? cf_region_find(cf_stack[cf_depth - 1]) : NULL;
            char path[CF_REGION_NAME];
            if (snprintf(path, sizeof(path), "%s%s%s", top ? top->path : "", top ? "/" : "", buf) >= (int)sizeof(path))
                path[sizeof(path) - 1] = 0; /* a deep path is cut at its end */
            if (!(id = cf_region_id(path)))
                cf_region_full++;
        } else
            cf_region_deep++;
        if (id) {
            cf_region_t *r = cf_region_find(id);
            if (cf_depth == 0)
                cf_region_mark_step(r);
            cf_stack[cf_depth++] = id;
            r->entries++;
            atomic_store(&cf_g.region, id);
            atomic_fetch_add(&cf_memo_gen, 1); /* the memos hold their region's records */
        } else
            cf_unopened++;
    } else if (level == -1 && named && cf_unopened) {
        cf_unopened--; /* the close of an open that was refused */
    } else if (level == -1 && named && cf_depth) {
        /* close the innermost open region of that name, and those inside it */
        unsigned d = cf_depth;
        while (d > 0) {
            const cf_region_t *r = cf_region_find(cf_stack[d - 1]);
            const char *leaf = r ? strrchr(r->path, '/') : NULL;
            leaf = leaf ? leaf + 1 : r ? r->path : "";
            if (strcmp(leaf, buf) == 0)
                break;
            d--;
        }
        if (d > 0) {
            cf_depth = d - 1;
            atomic_store(&cf_g.region, cf_depth ? cf_stack[cf_depth - 1] : 0);
            atomic_fetch_add(&cf_memo_gen, 1);
        } else
            cf_region_misuse++;
    } else if (level == -1) {
        cf_region_misuse++;
    }
    pthread_mutex_unlock(&cf_region_lock);
}

uint64_t cf_region_outer_entries(unsigned id)
{
    uint64_t n = 0;
    pthread_mutex_lock(&cf_region_lock);
    const cf_region_t *r = id ? cf_region_find(id) : NULL;
    if (r) {
        const char *slash = strchr(r->path, '/');
        size_t len = slash ? (size_t)(slash - r->path) : strlen(r->path);
        for (unsigned i = 0; i < atomic_load(&cf_nregions) && !n; i++) {
            const cf_region_t *o = cf_region_at(i);
            if (strncmp(o->path, r->path, len) == 0 && o->path[len] == '\0')
                n = o->entries;
        }
    }
    pthread_mutex_unlock(&cf_region_lock);
    return n;
}

static double cf_per_step(double first, double last, uint64_t entries)
{
    return last >= first ? (last - first) / (double)(entries - 1) : NAN;
}

cf_region_step_t cf_region_step(char *name, size_t len)
{
    const cf_region_t *best = NULL;
    pthread_mutex_lock(&cf_region_lock);
    for (unsigned i = 0; i < atomic_load(&cf_nregions); i++) {
        const cf_region_t *r = cf_region_at(i);
        if (strchr(r->path, '/') == NULL && r->entries >= 3 && (best == NULL || r->entries > best->entries))
            best = r;
    }
    cf_region_step_t s = {NAN, NAN, NAN};
    if (best != NULL) {
        s.faults = cf_per_step(best->flt_first, best->flt_last, best->entries);
        s.preempt = cf_per_step(best->csw_first, best->csw_last, best->entries);
        s.period_s = cf_per_step(best->t_first, best->t_last, best->entries);
    }
    snprintf(name, len, "%s", isfinite(s.faults) ? best->path : "");
    pthread_mutex_unlock(&cf_region_lock);
    return s;
}

/* For a part written without MPI (cf_spill.c): plain reads, no lock (a
 * signal handler may call it). */
size_t cf_regions_copy(cf_spill_region_t *out, size_t max, uint64_t *full_p, uint64_t *deep_p)
{
    size_t n = atomic_load(&cf_nregions);
    n = n < max ? n : max;
    for (size_t i = 0; i < n; i++) {
        const cf_region_t *r = cf_region_at((unsigned)i);
        out[i].id = r->id;
        out[i].pad = 0;
        out[i].entries = r->entries;
        memcpy(out[i].path, r->path, sizeof(out[i].path));
    }
    *full_p = cf_region_full;
    *deep_p = cf_region_deep;
    return n;
}

/* ---- at finalize: the names of all ranks' regions ---- */

typedef struct {
    uint32_t id;
    uint32_t pad;
    uint64_t entries;
    char path[CF_REGION_NAME];
} cf_region_wire_t;

static void cf_region_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_region_wire_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        if (!b[i].path[0])
            memcpy(b[i].path, a[i].path, sizeof(b[i].path));
        if (a[i].entries > b[i].entries)
            b[i].entries = a[i].entries;
    }
}

static int cf_region_cmp(const void *a, const void *b)
{
    return strcmp(((const cf_region_wire_t *)a)->path, ((const cf_region_wire_t *)b)->path);
}

int cf_regions_merge(cf_profile_t *p, unsigned **ids_p)
{
    unsigned nreg = atomic_load(&cf_nregions);
    uint64_t *ids = calloc(nreg + 1, sizeof(*ids));
    for (unsigned i = 0; ids && i < nreg; i++)
        ids[i] = cf_region_at(i)->id;
    size_t nu = 0;
    int overflow = !ids;
    uint64_t none = 0;
    uint64_t *u = cf_union_keys(ids ? ids : &none, ids ? nreg : 0, CF_MAX_REGIONS, &nu, &overflow);
    free(ids);
    cf_region_wire_t *w = u ? calloc(nu ? nu : 1, sizeof(*w)) : NULL;
    for (size_t i = 0; w && i < nu; i++) {
        w[i].id = (uint32_t)u[i];
        const cf_region_t *r = cf_region_find((unsigned)u[i]);
        if (r) {
            memcpy(w[i].path, r->path, sizeof(w[i].path));
            w[i].entries = r->entries;
        }
    }
    uint64_t mine[3] = {cf_region_misuse, cf_region_full, cf_region_deep}, all[3] = {0, 0, 0};
    PMPI_Reduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    uint64_t misuse = all[0];
    if (u && cf_all_ok(w != NULL))
        cf_reduce_bytes(w, nu, sizeof(*w), cf_region_op, 0);
    else {
        free(w);
        w = NULL;
    }
    if (p && w) {
        /* profile regions are listed by name; records refer to index + 1 */
        qsort(w, nu, sizeof(*w), cf_region_cmp);
        p->region = calloc(nu + 1, sizeof(char *));
        unsigned *ids_out = calloc(nu + 1, sizeof(unsigned));
        *ids_p = ids_out;
        json_t *entries = json_object();
        for (size_t i = 0; p->region && ids_out && i < nu; i++) {
            ids_out[p->nregion] = w[i].id;
            p->region[p->nregion++] = strdup(w[i].path[0] ? w[i].path : "?");
            json_object_set_new(entries, w[i].path, json_integer((json_int_t)w[i].entries));
        }
        if (!p->extra)
            p->extra = json_object();
        json_object_set_new(p->extra, "region_entries", entries);
        cf_assemble_region_losses(p, all[1], all[2]);
        if (misuse)
            cf_log("%llu MPI_Pcontrol calls did not match an open region; ignored", (unsigned long long)misuse);
    }
    free(w);
    free(u);
    return overflow ? CF_ERR_NOMEM : CF_OK;
}
