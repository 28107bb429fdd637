/* Hardware counters around MPI calls (PAPI).
 *
 * COMMFIT_PAPI_EVENTS=PAPI_TOT_CYC,PAPI_L2_DCM,...: each event is checked at
 * start-up on each rank's machine; those that can be counted go into one event
 * set per thread, made at the thread's first MPI call.  Around every
 * outermost MPI call the counters are read (cf_enter/cf_leave) and the
 * difference added to the operation's sum in a fixed per-thread array.  At
 * finalize the sums of all threads and ranks are added up on rank 0.
 *
 * Where counters cannot be read (virtual machines without a PMU, unknown
 * event names, perf_event disabled) the job runs unchanged, the reason is
 * recorded, and any event that can be counted still is.  When counting is
 * off, the only cost is the predictable test of the hooks in cf_enter/cf_leave, and
 * the PAPI library is not even loaded: linked, it would cost every rank
 * megabytes of memory. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CF_HAVE_PAPI
#include <papi.h>
#endif
#include "cf_papi.h"

#define CF_PAPI_MAX 8   /* events per run */
#define CF_PAPI_NAME 96 /* longest event name accepted */

typedef struct {
    int evset;
    int running;
    long long start[CF_PAPI_MAX];
    uint64_t calls[CF_OP_COUNT];
    uint64_t acc[CF_OP_COUNT][CF_PAPI_MAX];
} cf_papi_thread_t;

static struct {
    int requested;               /* COMMFIT_PAPI_EVENTS is set, even if malformed */
    char raw[256];
    unsigned nreq;
    char name[CF_PAPI_MAX][CF_PAPI_NAME];
    char note[CF_PAPI_MAX][256]; /* why a requested event is not counted; "" when it is */
    unsigned nev;                /* events counted */
    int code[CF_PAPI_MAX];       /* of the counted events */
    unsigned req_of[CF_PAPI_MAX]; /* requested index of each counted event */
    char reason[384];            /* why nothing is counted */
} cf_papi;

/* a thread whose event set could not be made: it stays uncounted */
static cf_papi_thread_t cf_papi_off;

#ifdef CF_HAVE_PAPI
/* The PAPI functions we call, loaded with the library (cf_papi_load). */
#define CF_PAPI_FNS(X)                                                                                        \
    X(PAPI_library_init) X(PAPI_thread_init) X(PAPI_create_eventset) X(PAPI_add_event) X(PAPI_start)         \
    X(PAPI_stop) X(PAPI_read) X(PAPI_cleanup_eventset) X(PAPI_destroy_eventset) X(PAPI_event_name_to_code) \
    X(PAPI_query_event) X(PAPI_strerror) X(PAPI_get_component_info) X(PAPI_get_hardware_info)              \
    X(PAPI_num_cmp_hwctrs) X(PAPI_enum_event)
enum {
#define CF_X(fn) CF_PAPI_FN_##fn,
    CF_PAPI_FNS(CF_X)
#undef CF_X
    CF_PAPI_FN_COUNT
};
static const char *const cf_papi_fn_names[CF_PAPI_FN_COUNT] = {
#define CF_X(fn) #fn,
    CF_PAPI_FNS(CF_X)
#undef CF_X
};
static void *cf_papi_fn[CF_PAPI_FN_COUNT];
/* A PAPI function, typed as papi.h declares it. */
#define CF_PAPI(fn) ((__typeof__(&fn))cf_papi_fn[CF_PAPI_FN_##fn])

static int cf_papi_load(char *err, size_t len)
{
    void *h = dlopen(CF_PAPI_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, len, "cannot load the PAPI library: %.200s", dlerror());
        return CF_ERR_UNSUPPORTED;
    }
    for (unsigned i = 0; i < CF_PAPI_FN_COUNT; i++) {
        cf_papi_fn[i] = dlsym(h, cf_papi_fn_names[i]);
        if (!cf_papi_fn[i]) {
            snprintf(err, len, "%s has no %s", CF_PAPI_LIB, cf_papi_fn_names[i]);
            goto err_close;
        }
    }
    return CF_OK;

err_close:
    dlclose(h);
    return CF_ERR_UNSUPPORTED;
}
#endif

/* ---- the hot path (only reached when the hooks are set) ---- */
#ifdef CF_HAVE_PAPI
static cf_papi_thread_t *cf_papi_thread_start(void)
{
    cf_papi_thread_t *p = calloc(1, sizeof(*p));
    if (!p)
        return &cf_papi_off;
    p->evset = PAPI_NULL;
    if (CF_PAPI(PAPI_create_eventset)(&p->evset) != PAPI_OK)
        goto err_free;
    for (unsigned i = 0; i < cf_papi.nev; i++)
        if (CF_PAPI(PAPI_add_event)(p->evset, cf_papi.code[i]) != PAPI_OK)
            goto err_evset;
    if (CF_PAPI(PAPI_start)(p->evset) != PAPI_OK)
        goto err_evset;
    p->running = 1;
    return p;

err_evset:
    CF_PAPI(PAPI_cleanup_eventset)(p->evset);
    CF_PAPI(PAPI_destroy_eventset)(&p->evset);
err_free:
    free(p);
    return &cf_papi_off;
}

static void cf_papi_begin(cf_thread_t *t)
{
    cf_papi_thread_t *p = t->papi;
    if (__builtin_expect(p == NULL, 0))
        t->papi = p = cf_papi_thread_start();
    if (p->running && CF_PAPI(PAPI_read)(p->evset, p->start) != PAPI_OK)
        p->running = 0;
}

static void cf_papi_end(cf_thread_t *t, unsigned op)
{
    cf_papi_thread_t *p = t->papi;
    long long now[CF_PAPI_MAX];
    if (!p || !p->running || op >= CF_OP_COUNT || CF_PAPI(PAPI_read)(p->evset, now) != PAPI_OK)
        return;
    p->calls[op]++;
    for (unsigned i = 0; i < cf_papi.nev; i++)
        p->acc[op][i] += (uint64_t)(now[i] - p->start[i]);
}
#endif

/* ---- start-up ---- */

/* Splits the list; complains (rank 0) about empty, long, duplicate or surplus names. */
static void cf_papi_parse(const char *s, int complain)
{
    unsigned empty = 0, dropped = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *b = p, *e = p + len;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        size_t n = (size_t)(e - b);
        if (n == 0) {
            empty++;
        } else if (n >= CF_PAPI_NAME) {
            if (complain)
                cf_log("COMMFIT_PAPI_EVENTS: the name '%.40s...' is longer than %d characters; ignored", b,
                       CF_PAPI_NAME - 1);
        } else {
            char name[CF_PAPI_NAME];
            memcpy(name, b, n);
            name[n] = 0;
            unsigned j;
            for (j = 0; j < cf_papi.nreq && strcmp(cf_papi.name[j], name); j++)
                ;
            if (j < cf_papi.nreq) {
                if (complain)
                    cf_log("COMMFIT_PAPI_EVENTS names %s twice; counted once", name);
            } else if (cf_papi.nreq == CF_PAPI_MAX) {
                dropped++;
            } else {
                cf_strlcpy(cf_papi.name[cf_papi.nreq++], name, CF_PAPI_NAME);
            }
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    if (!complain)
        return;
    if (cf_papi.nreq == 0)
        cf_log("COMMFIT_PAPI_EVENTS='%s' names no event (expected a comma-separated list such as "
               "PAPI_TOT_CYC,PAPI_TOT_INS); counters are off",
               s);
    else if (empty)
        cf_log("COMMFIT_PAPI_EVENTS='%s' has an empty name between commas; ignored", s);
    if (dropped)
        cf_log("COMMFIT_PAPI_EVENTS names more than %d events; the last %u are ignored", CF_PAPI_MAX, dropped);
}

#ifdef CF_HAVE_PAPI
/* What the machine offers, for the reason when an event cannot be counted. */
static void cf_papi_machine_note(char *buf, size_t len)
{
    const PAPI_component_info_t *ci = CF_PAPI(PAPI_get_component_info)(0);
    const PAPI_hw_info_t *hw = CF_PAPI(PAPI_get_hardware_info)();
    int ctrs = CF_PAPI(PAPI_num_cmp_hwctrs)(0);
    int avail = 0, code = PAPI_PRESET_MASK;
    char vm[160] = "virtual machine?";
    buf[0] = 0;
    if (hw && hw->virtualized)
        snprintf(vm, sizeof(vm), "virtual machine%s%s", hw->virtual_vendor_string[0] ? ": " : "",
                 hw->virtual_vendor_string);
    if (CF_PAPI(PAPI_enum_event)(&code, PAPI_ENUM_FIRST) == PAPI_OK) {
        do
            avail += CF_PAPI(PAPI_query_event)(code) == PAPI_OK;
        while (CF_PAPI(PAPI_enum_event)(&code, PAPI_PRESET_ENUM_AVAIL) == PAPI_OK);
    }
    if (ci && ci->disabled)
        snprintf(buf, len, "the CPU counter component (%.40s) is disabled: %.100s", ci->name, ci->disabled_reason);
    else if (ctrs <= 0)
        snprintf(buf, len, "no hardware counters available (PAPI sees 0 counters: %s)", vm);
    else if (avail == 0)
        snprintf(buf, len, "no hardware counters usable (PAPI sees %d counters but none of its preset events: %s)",
                 ctrs, vm);
}

static void cf_papi_check(int complain)
{
    if (cf_papi_load(cf_papi.reason, sizeof(cf_papi.reason)) != CF_OK) {
        if (complain)
            cf_log("PAPI counters are not available: %s; the job runs without them", cf_papi.reason);
        return;
    }
    int rc = CF_PAPI(PAPI_library_init)(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        snprintf(cf_papi.reason, sizeof(cf_papi.reason), "PAPI_library_init failed: %s",
                 rc > 0 ? "the PAPI library is not the version commfit was built with" : CF_PAPI(PAPI_strerror)(rc));
        return;
    }
    if ((rc = CF_PAPI(PAPI_thread_init)((unsigned long (*)(void))pthread_self)) != PAPI_OK) {
        snprintf(cf_papi.reason, sizeof(cf_papi.reason), "PAPI_thread_init failed: %s", CF_PAPI(PAPI_strerror)(rc));
        return;
    }
    char machine[256];
    cf_papi_machine_note(machine, sizeof(machine));
    int evset = PAPI_NULL;
    if ((rc = CF_PAPI(PAPI_create_eventset)(&evset)) != PAPI_OK) {
        snprintf(cf_papi.reason, sizeof(cf_papi.reason), "PAPI_create_eventset failed: %s", CF_PAPI(PAPI_strerror)(rc));
        return;
    }
    for (unsigned i = 0; i < cf_papi.nreq; i++) {
        int code;
        char note[sizeof(cf_papi.note[0])] = "";
        if (CF_PAPI(PAPI_event_name_to_code)(cf_papi.name[i], &code) != PAPI_OK)
            snprintf(note, sizeof(note), "unknown event %.*s", CF_PAPI_NAME, cf_papi.name[i]);
        else if (CF_PAPI(PAPI_query_event)(code) != PAPI_OK)
            snprintf(note, sizeof(note), "not available on this machine%s%.200s", machine[0] ? ": " : "", machine);
        else if ((rc = CF_PAPI(PAPI_add_event)(evset, code)) != PAPI_OK)
            snprintf(note, sizeof(note), "cannot be counted%s: %s", cf_papi.nev ? " together with the others" : "",
                     CF_PAPI(PAPI_strerror)(rc));
        else {
            cf_papi.code[cf_papi.nev] = code;
            cf_papi.req_of[cf_papi.nev++] = i;
        }
        cf_strlcpy(cf_papi.note[i], note, sizeof(cf_papi.note[i]));
    }
    if (cf_papi.nev) {
        long long v[CF_PAPI_MAX];
        rc = CF_PAPI(PAPI_start)(evset);
        if (rc == PAPI_OK)
            rc = CF_PAPI(PAPI_stop)(evset, v);
        if (rc != PAPI_OK) {
            for (unsigned i = 0; i < cf_papi.nev; i++)
                snprintf(cf_papi.note[cf_papi.req_of[i]], sizeof(cf_papi.note[0]), "cannot be started: %s",
                         CF_PAPI(PAPI_strerror)(rc));
            snprintf(cf_papi.reason, sizeof(cf_papi.reason), "PAPI_start failed: %s (perf_event_paranoid?)",
                     CF_PAPI(PAPI_strerror)(rc));
            cf_papi.nev = 0;
        }
    } else {
        snprintf(cf_papi.reason, sizeof(cf_papi.reason), "%s",
                 machine[0] ? machine : "none of the requested events can be counted here");
    }
    CF_PAPI(PAPI_cleanup_eventset)(evset);
    CF_PAPI(PAPI_destroy_eventset)(&evset);
    if (!complain)
        return;
    if (!cf_papi.nev)
        cf_log("PAPI counters are not available: %s; the job runs without them", cf_papi.reason);
    for (unsigned i = 0; cf_papi.nev && i < cf_papi.nreq; i++)
        if (cf_papi.note[i][0])
            cf_log("PAPI event %s is not counted: %s", cf_papi.name[i], cf_papi.note[i]);
}
#endif

void cf_papi_init(void)
{
    const char *s = getenv("COMMFIT_PAPI_EVENTS");
    int complain = cf_g.world_rank == 0;
    if (!s)
        return;
    cf_papi.requested = 1;
    cf_strlcpy(cf_papi.raw, s, sizeof(cf_papi.raw));
    cf_papi_parse(s, complain);
#ifdef CF_HAVE_PAPI
    if (cf_papi.nreq == 0) {
        snprintf(cf_papi.reason, sizeof(cf_papi.reason), "COMMFIT_PAPI_EVENTS names no event");
        return;
    }
    cf_papi_check(complain);
    if (cf_papi.nev > 0)
        cf_call_hooks(cf_papi_begin, cf_papi_end);
#else
    snprintf(cf_papi.reason, sizeof(cf_papi.reason), "built without PAPI");
    if (complain && cf_papi.nreq)
        cf_log("COMMFIT_PAPI_EVENTS is set, but this commfit was built without PAPI (configure --with-papi); "
               "counters are off");
#endif
}

/* ---- end of the run ---- */
json_t *cf_papi_section(const cf_fin_t *f)
{
    (void)f;
    int req = cf_papi.requested, any = 0;
    PMPI_Allreduce(&req, &any, 1, MPI_INT, MPI_MAX, cf_g.tool_comm);
    if (!any)
        return NULL;
    /* [calls per op][sums per op and event]..., ranks counting */
    const size_t stride = CF_PAPI_MAX + 1, n = (size_t)CF_OP_COUNT * stride + 1;
    uint64_t *v = calloc(n, sizeof(uint64_t));
    uint64_t *sum = cf_g.world_rank == 0 ? calloc(n, sizeof(uint64_t)) : NULL;
    uint32_t nthreads = cf_thread_count();
    for (uint32_t i = 0; v && i < nthreads; i++) {
        const cf_papi_thread_t *p = cf_thread_at(i)->papi;
        if (!p || p == &cf_papi_off)
            continue;
        for (unsigned op = 0; op < CF_OP_COUNT; op++) {
            v[op * stride] += p->calls[op];
            for (unsigned e = 0; e < cf_papi.nev; e++)
                v[op * stride + 1 + e] += p->acc[op][e];
        }
    }
    if (v)
        v[n - 1] = cf_papi.nev > 0;
    /* every rank takes part; one without memory adds nothing */
    int ok = v != NULL && (cf_g.world_rank != 0 || sum != NULL), all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, cf_g.tool_comm);
    if (all_ok)
        PMPI_Reduce(v, sum, (int)n, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    free(v);
    if (cf_g.world_rank != 0) {
        free(sum);
        return NULL;
    }

    json_t *s = json_object();
    json_t *names = json_array();
    for (unsigned i = 0; i < cf_papi.nreq; i++)
        json_array_append_new(names, json_string(cf_papi.name[i]));
    json_object_set_new(s, "requested", names);
    if (cf_papi.nreq == 0)
        json_object_set_new(s, "requested_as", json_string(cf_papi.raw));
    uint64_t ranks = all_ok && sum ? sum[n - 1] : 0;
    json_object_set_new(s, "available", json_boolean(cf_papi.nev > 0));
    if (!cf_papi.nev)
        json_object_set_new(s, "reason", json_string(cf_papi.reason));
    if (!all_ok)
        json_object_set_new(s, "partial", json_string("a rank had no memory for the sums"));
    json_object_set_new(s, "ranks_counting", json_integer((json_int_t)ranks));
    json_t *events = json_array();
    for (unsigned i = 0; i < cf_papi.nreq; i++) {
        unsigned k;
        for (k = 0; k < cf_papi.nev && cf_papi.req_of[k] != i; k++)
            ;
        json_t *e = json_pack("{s:s, s:b}", "name", cf_papi.name[i], "counted", k < cf_papi.nev);
        if (k == cf_papi.nev) {
            json_object_set_new(e, "note", json_string(cf_papi.note[i][0] ? cf_papi.note[i] : cf_papi.reason));
        } else if (sum) {
            uint64_t total = 0;
            json_t *by = json_object();
            for (unsigned op = 1; op < CF_OP_COUNT; op++) {
                uint64_t x = sum[op * stride + 1 + k];
                total += x;
                if (sum[op * stride])
                    json_object_set_new(by, cf_op_names[op], json_integer((json_int_t)x));
            }
            json_object_set_new(e, "total", json_integer((json_int_t)total));
            json_object_set_new(e, "by_operation", by);
        }
        json_array_append_new(events, e);
    }
    json_object_set_new(s, "events", events);
    if (cf_papi.nev && sum) {
        uint64_t calls = 0;
        for (unsigned op = 1; op < CF_OP_COUNT; op++)
            calls += sum[op * stride];
        json_object_set_new(s, "calls_counted", json_integer((json_int_t)calls));
    }
    free(sum);
    return s;
}
