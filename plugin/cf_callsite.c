/* The call-site module (cf_callsite.h): the per-thread tables whose hot
 * path is the core's (cf_site.h, cf_site.c), and at finalize their
 * addresses as module + offset, merged over ranks.  Ranks that run the
 * same binary agree on (module, offset) whatever their address-space
 * layout, so sites are merged by a hash of (operation, communicator,
 * modules, offsets) with the reductions of cf_coll.c: a union of the
 * keys, then element-wise sums over fixed-size structs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_callsite.h"
#include "cf_coll.h"
#include "cf_site.h"

#define CF_SITE_STR 512 /* module paths and symbol names, cut beyond */

/* A thread's table: room for COMMFIT_CALLSITES_MAX sites at most half
 * full, *mask_p + 1 slots; NULL when there is no memory.  Kept with call
 * sites off (COMMFIT_CALLSITE_DEPTH=0), for the memos it holds. */
static cf_site_t *cf_site_alloc(uint32_t *mask_p)
{
    uint32_t n = 64;
    while (n < 2 * cf_g.cfg.sites_max)
        n <<= 1;
    *mask_p = n - 1;
    _Static_assert(sizeof(cf_site_t) == 128, "a call site is two cache lines");
    cf_site_t *s = aligned_alloc(64, n * sizeof(cf_site_t));
    if (s != NULL)
        memset(s, 0, n * sizeof(cf_site_t));
    return s;
}

void cf_site_thread_init(cf_thread_t *t)
{
    t->site = cf_site_alloc(&t->site_mask);
}

void cf_site_init(void)
{
    /* backtrace() loads libgcc_s on its first call: here, not inside a
     * wrapped MPI call */
    if (cf_g.cfg.site_depth > 1) {
        void *b[2];
        (void)backtrace(b, 2);
    }
}

/* ---- finalize ---- */

typedef struct {
    uint64_t mod, off, sym, symoff; /* module and symbol as string hashes, 0 = none */
} cf_frame_wire_t;

typedef struct {
    uint64_t key; /* 0: no rank had it (yet) */
    uint64_t tag, calls, bytes;
    double t_sum, t_min, t_max; /* ns */
    uint32_t depth, ranks;
    cf_frame_wire_t f[CF_SITE_DEPTH_MAX];
} cf_site_wire_t;

typedef struct {
    uint64_t hash;
    char s[CF_SITE_STR];
} cf_str_wire_t;

static uint64_t cf_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ? h : 1;
}

/* This rank's strings (module paths, symbol names), by hash. */
typedef struct {
    cf_str_wire_t *v;
    size_t n, cap;
} cf_strs_t;

static uint64_t cf_strs_add(cf_strs_t *ss, const char *s)
{
    if (s == NULL || *s == 0)
        return 0;
    uint64_t h = cf_str_hash(s);
    for (size_t i = 0; i < ss->n; i++)
        if (ss->v[i].hash == h)
            return h;
    if (ss->n == ss->cap) {
        size_t c = ss->cap ? 2 * ss->cap : 16;
        cf_str_wire_t *v = realloc(ss->v, c * sizeof(*v));
        if (v == NULL)
            return 0;
        ss->v = v;
        ss->cap = c;
    }
    ss->v[ss->n].hash = h;
    cf_strlcpy(ss->v[ss->n].s, s, sizeof(ss->v[ss->n].s));
    ss->n++;
    return h;
}

/* A return address as module, offset in it (the link-time address, what
 * addr2line takes) and the dynamic symbol that holds it, if any. */
static cf_frame_wire_t cf_frame_resolve(uintptr_t a, cf_strs_t *ss)
{
    cf_frame_wire_t f = {0};
    Dl_info info;
    struct link_map *lm = NULL;
    if (a == 0 || !dladdr1((void *)a, &info, (void **)&lm, RTLD_DL_LINKMAP) || lm == NULL) {
        f.off = a;
        return f;
    }
    char path[PATH_MAX];
    const char *mod = info.dli_fname;
    if (lm->l_name == NULL || lm->l_name[0] == 0) { /* the executable */
        ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
        if (n > 0) {
            path[n] = 0;
            mod = path;
        }
    } else if (realpath(lm->l_name, path) != NULL)
        mod = path;
    f.mod = cf_strs_add(ss, mod);
    f.off = a - lm->l_addr;
    if (info.dli_sname != NULL && info.dli_saddr != NULL) {
        f.sym = cf_strs_add(ss, info.dli_sname);
        f.symoff = a - (uintptr_t)info.dli_saddr;
    }
    return f;
}

static uint64_t cf_site_key(const cf_site_wire_t *w)
{
    uint64_t h = cf_str_hash("site") ^ w->tag * 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < w->depth; i++)
        h = ((h ^ w->f[i].mod) * 0xff51afd7ed558ccdull ^ w->f[i].off) * 0xc4ceb9fe1a85ec53ull;
    return h ? h : 1;
}

static void cf_site_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_site_wire_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        if (a[i].key == 0)
            continue;
        if (b[i].key == 0) {
            b[i] = a[i];
            continue;
        }
        b[i].calls += a[i].calls;
        b[i].bytes += a[i].bytes;
        b[i].t_sum += a[i].t_sum;
        b[i].ranks += a[i].ranks;
        if (a[i].t_min < b[i].t_min)
            b[i].t_min = a[i].t_min;
        if (a[i].t_max > b[i].t_max)
            b[i].t_max = a[i].t_max;
    }
}

static void cf_str_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_str_wire_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        if (b[i].s[0] == 0 && a[i].s[0] != 0)
            b[i] = a[i];
}

static int cf_cmp_site_key(const void *x, const void *y)
{
    const cf_site_wire_t *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cf_cmp_site_time(const void *x, const void *y)
{
    const cf_site_wire_t *a = x, *b = y;
    if (a->t_sum != b->t_sum)
        return a->t_sum > b->t_sum ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* This rank's sites, one entry per key, sorted by key; *lost_p gets the
 * calls that found no slot. */
static cf_site_wire_t *cf_site_rows(size_t *n_p, uint64_t *lost_p, cf_strs_t *ss)
{
    uint32_t nthreads = cf_thread_count(), depth = cf_g.cfg.site_depth;
    size_t n = 0, cap = 0;
    cf_site_wire_t *rows = NULL;

    *lost_p = 0;
    for (uint32_t i = 0; i < nthreads; i++) {
        const cf_thread_t *t = cf_thread_at(i);
        if (t == NULL || t->site == NULL)
            continue;
        *lost_p += t->site_full;
        for (uint32_t s = 0; s <= t->site_mask; s++) {
            const cf_site_t *e = &t->site[s];
            if (e->ra[0] == 0 || e->calls == 0)
                continue;
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                cf_site_wire_t *r = realloc(rows, c * sizeof(*r));
                if (r == NULL) {
                    *lost_p += e->calls;
                    continue;
                }
                rows = r;
                cap = c;
            }
            cf_site_wire_t *w = &rows[n++];
            memset(w, 0, sizeof(*w));
            w->tag = e->tag;
            w->calls = e->calls;
            w->bytes = e->bytes;
            w->t_sum = (double)cf_ticks_to_ns(e->t_sum);
            w->t_min = (double)cf_ticks_to_ns(e->t_min);
            w->t_max = (double)cf_ticks_to_ns(e->t_max);
            w->ranks = 1;
            while (w->depth < depth && e->ra[w->depth] != 0) {
                w->f[w->depth] = cf_frame_resolve(e->ra[w->depth], ss);
                w->depth++;
            }
            w->key = cf_site_key(w);
        }
    }
    if (n > 0)
        qsort(rows, n, sizeof(*rows), cf_cmp_site_key);
    /* the same site on several threads: one entry */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && rows[m - 1].key == rows[i].key) {
            int one = 1;
            cf_site_op(&rows[i], &rows[m - 1], &one, NULL);
            rows[m - 1].ranks = 1;
        } else
            rows[m++] = rows[i];
    }
    *n_p = m;
    return rows;
}

static json_t *cf_frame_json(const cf_frame_wire_t *f, const cf_str_wire_t *strs, size_t nstr)
{
    const char *mod = NULL, *sym = NULL;
    for (size_t i = 0; i < nstr; i++) {
        if (f->mod && strs[i].hash == f->mod)
            mod = strs[i].s;
        if (f->sym && strs[i].hash == f->sym)
            sym = strs[i].s;
    }
    json_t *o = json_pack("{s:s?, s:I}", "module", mod, "offset", (json_int_t)f->off);
    if (o != NULL && sym != NULL) {
        json_object_set_new(o, "symbol", json_string(sym));
        json_object_set_new(o, "symbol_offset", json_integer((json_int_t)f->symoff));
    }
    return o;
}

json_t *cf_callsite_section(const cf_fin_t *f)
{
    (void)f;
    uint32_t depth = 0, mine = cf_g.cfg.sites_shown ? cf_g.cfg.site_depth : 0;
    PMPI_Allreduce(&mine, &depth, 1, MPI_UINT32_T, MPI_MAX, cf_g.tool_comm);
    if (depth == 0)
        return NULL;
    cf_strs_t ss = {0};
    size_t n = 0, nu = 0, ns = 0;
    uint64_t lost = 0, lost_all = 0;
    cf_site_wire_t *rows = cf_site_rows(&n, &lost, &ss);
    int overflow = 0, soverflow = 0;
    uint32_t cap = 4 * cf_g.cfg.sites_max;
    uint64_t *keys = malloc((n + 1) * sizeof(uint64_t));
    for (size_t i = 0; keys && i < n; i++)
        keys[i] = rows[i].key;
    uint64_t *ukeys = cf_union_keys(keys ? keys : &lost_all, keys ? n : 0, cap, &nu, &overflow);
    free(keys);
    cf_site_wire_t *all = ukeys ? calloc(nu ? nu : 1, sizeof(*all)) : NULL;
    for (size_t i = 0, j = 0; all && i < nu; i++) {
        /* both sorted by key */
        while (j < n && rows[j].key < ukeys[i])
            j++;
        if (j < n && rows[j].key == ukeys[i])
            all[i] = rows[j];
    }
    /* calls of sites beyond the union's room are lost too */
    for (size_t j = 0, i = 0; ukeys && j < n; j++) {
        while (i < nu && ukeys[i] < rows[j].key)
            i++;
        if (i >= nu || ukeys[i] != rows[j].key)
            lost += rows[j].calls;
    }
    PMPI_Reduce(&lost, &lost_all, 1, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    int ok = ukeys != NULL && cf_all_ok(all != NULL);
    if (ok)
        cf_reduce_bytes(all, nu, sizeof(*all), cf_site_op, 0);

    /* the strings, likewise */
    uint64_t *skeys = malloc((ss.n + 1) * sizeof(uint64_t));
    for (size_t i = 0; skeys && i < ss.n; i++)
        skeys[i] = ss.v[i].hash;
    uint64_t *ushash = cf_union_keys(skeys ? skeys : &lost, skeys ? ss.n : 0, cap * depth + 64, &ns, &soverflow);
    free(skeys);
    cf_str_wire_t *strs = ushash ? calloc(ns ? ns : 1, sizeof(*strs)) : NULL;
    for (size_t i = 0; strs && i < ns; i++) {
        strs[i].hash = ushash[i];
        for (size_t k = 0; k < ss.n; k++)
            if (ss.v[k].hash == ushash[i])
                strs[i] = ss.v[k];
    }
    int sok = ushash != NULL && cf_all_ok(strs != NULL);
    if (sok)
        cf_reduce_bytes(strs, ns, sizeof(*strs), cf_str_op, 0);

    json_t *sec = NULL;
    if (cf_g.world_rank == 0 && ok) {
        size_t m = 0;
        for (size_t i = 0; i < nu; i++)
            if (all[i].key != 0 && all[i].calls != 0)
                all[m++] = all[i];
        qsort(all, m, sizeof(*all), cf_cmp_site_time);
        json_t *sites = json_array();
        for (size_t i = 0; sites && i < m; i++) {
            const cf_site_wire_t *w = &all[i];
            unsigned op = (unsigned)(w->tag >> 32);
            json_t *stack = json_array();
            for (unsigned k = 0; stack && k < w->depth; k++)
                json_array_append_new(stack, cf_frame_json(&w->f[k], sok ? strs : NULL, sok ? ns : 0));
            json_array_append_new(
                sites, json_pack("{s:I, s:s, s:I, s:I, s:I, s:f, s:f, s:f, s:i, s:o}", "id", (json_int_t)(i + 1),
                                 "op", op < CF_OP_COUNT ? cf_op_names[op] : "unknown", "comm",
                                 (json_int_t)(uint32_t)w->tag, "calls", (json_int_t)w->calls, "bytes",
                                 (json_int_t)w->bytes, "time_s", w->t_sum * 1e-9, "min_s", w->t_min * 1e-9, "max_s",
                                 w->t_max * 1e-9, "ranks", (int)w->ranks, "stack", stack));
        }
        sec = json_pack("{s:i, s:I, s:b, s:o}", "depth", (int)depth, "lost_calls", (json_int_t)lost_all,
                        "complete", !overflow && !soverflow && sok && lost_all == 0, "sites", sites);
    }
    free(rows);
    free(all);
    free(ukeys);
    free(ushash);
    free(strs);
    free(ss.v);
    return sec;
}
