/* Call sites: each MPI call also counted under where the program called
 * MPI (the return address of the wrapper; with COMMFIT_CALLSITE_DEPTH > 1
 * that many frames, from backtrace()).  A small open-addressing table per
 * thread, COMMFIT_CALLSITES_MAX entries, keyed by (operation, communicator
 * id, frames); calls that find it full are counted, not recorded.  The
 * addresses become module + offset at finalize (cf_callsite.c), file and
 * line at report time. */
#ifndef CF_CALLSITE_H
#define CF_CALLSITE_H

#include <stdint.h>
#include <jansson.h>

#include "cf_runtime.h"

#define CF_SITE_DEPTH_MAX 8

/* 128 bytes, 64-aligned: what one call touches (tag to ra[0]) is one cache line */
typedef struct cf_site {
    uint64_t tag; /* op << 32 | communicator id */
    uint64_t calls, bytes;
    uint64_t t_sum, t_min, t_max;    /* ticks */
    uintptr_t ra[CF_SITE_DEPTH_MAX]; /* ra[0] = 0: empty slot */
    uint64_t pad[2];
} cf_site_t;

/* The slot of (tag, ra[0..depth-1]), taken if new; NULL when the probe
 * window is full (counted in t->site_full). */
CF_HIDDEN cf_site_t *cf_site_slot(cf_thread_t *t, uint64_t tag, const uintptr_t *ra);
/* Depth > 1: the frames above ra from backtrace(), then cf_site_slot. */
CF_HIDDEN cf_site_t *cf_site_slot_deep(cf_thread_t *t, uint64_t tag, void *ra);
/* A thread's table: room for COMMFIT_CALLSITES_MAX sites at most half
 * full, *mask_p + 1 slots; NULL when call sites are off or no memory. */
CF_HIDDEN cf_site_t *cf_site_alloc(uint32_t *mask_p);
/* At MPI_Init: loads what backtrace() needs when the depth asks for it. */
CF_HIDDEN void cf_site_init(void);
/* The profile's "callsites" section on rank 0 (collective over the world;
 * NULL elsewhere and when call sites are off). */
CF_HIDDEN json_t *cf_callsite_section(void);

/* The Fortran wrappers that go through the C ones (the completion calls,
 * start, request free: cf_fortran.c) name their own caller here, for the
 * C function to take instead of its return address (in the plugin). */
CF_HIDDEN extern __thread void *cf_site_caller __attribute__((tls_model("initial-exec")));
static inline void *cf_site_ra(void *ra)
{
    void *c = cf_site_caller;
    if (__builtin_expect(c != NULL, 0)) {
        cf_site_caller = NULL;
        return c;
    }
    return ra;
}
/* In a hand-written C wrapper: where its call site is. */
#define CF_SITE_RA cf_site_ra(__builtin_return_address(0))
static inline void cf_site_caller_end(void **scope)
{
    (void)scope;
    cf_site_caller = NULL;
}
/* At the top of such a Fortran wrapper: its caller, until it returns. */
#define CF_SITE_CALLER()                                                                                      \
    __attribute__((cleanup(cf_site_caller_end), unused)) void *cf_site_scope = cf_site_caller =               \
        __builtin_return_address(0)

/* Where the slot of (tag, frames) starts its probe. */
static inline uint32_t cf_site_hash(uint64_t tag, const uintptr_t *ra, unsigned depth)
{
    uint64_t h = tag * 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < depth; i++)
        h = (h ^ ra[i]) * 0xff51afd7ed558ccdull;
    return (uint32_t)(h >> 32);
}

/* One call of op on communicator comm, made from ra (the wrapper's return
 * address), that moved bytes between ticks t0 and t1.  Depth 1: one
 * multiply, and one compare in the slot the hash names (the first probe). */
CF_HOT void cf_site_note(cf_thread_t *t, unsigned op, uint32_t comm, void *ra, uint64_t bytes, uint64_t t0,
                                uint64_t t1)
{
    if (t->site == NULL)
        return;
    uint64_t tag = (uint64_t)op << 32 | comm;
    uintptr_t a = (uintptr_t)ra;
    cf_site_t *s;
    if (__builtin_expect(cf_g.cfg.site_depth > 1, 0))
        s = cf_site_slot_deep(t, tag, ra);
    else {
        s = &t->site[cf_site_hash(tag, &a, 1) & t->site_mask];
        if (s->ra[0] != a || s->tag != tag)
            s = cf_site_slot(t, tag, &a);
    }
    if (s == NULL)
        return;
    uint64_t d = t1 - t0;
    s->calls++;
    s->bytes += bytes;
    s->t_sum += d;
    if (d < s->t_min)
        s->t_min = d;
    if (d > s->t_max)
        s->t_max = d;
}

#endif
