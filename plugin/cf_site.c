/* Call sites on the hot path (cf_site.h): the Fortran caller's slot, and
 * the probe of a thread's table past its first slot, which the inline
 * helpers call when the first slot is another site's (or, deeper than one
 * frame, always).  The tables are allocated by the call-site module
 * (cf_callsite.c), which also turns them into the profile's section. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <string.h>

#include "cf_site.h"

__thread void *cf_site_caller __attribute__((tls_model("initial-exec")));
__thread void *cf_split_ra __attribute__((tls_model("initial-exec")));

#define CF_SITE_PROBE 32

cf_site_t *cf_site_slot(cf_thread_t *t, uint64_t tag, const uintptr_t *ra)
{
    unsigned depth = cf_g.cfg.site_depth;
    uint32_t i = cf_site_hash(tag, ra, depth) & t->site_mask;
    for (unsigned n = 0; n < CF_SITE_PROBE; n++, i = (i + 1) & t->site_mask) {
        cf_site_t *s = &t->site[i];
        if (s->ra[0] == 0) {
            /* a new site, while there is room for one: at most
             * COMMFIT_CALLSITES_MAX per thread, so the table stays half empty */
            if (t->site_used >= cf_g.cfg.sites_max)
                break;
            t->site_used++;
            memcpy(s->ra, ra, depth * sizeof(*ra));
            s->tag = tag;
            s->t_min = UINT64_MAX;
        }
        if (s->tag == tag && memcmp(s->ra, ra, depth * sizeof(*ra)) == 0)
            return s;
    }
    t->site_full++;
    return NULL;
}

cf_site_t *cf_site_slot_deep(cf_thread_t *t, uint64_t tag, void *ra)
{
    void *buf[CF_SITE_DEPTH_MAX + 8];
    uintptr_t fr[CF_SITE_DEPTH_MAX] = {(uintptr_t)ra};
    unsigned depth = cf_g.cfg.site_depth;
    int n = backtrace(buf, (int)CF_ARRAY_LEN(buf));
    /* the frames from the wrapper's return address on: what lies below
     * it (this function, the wrapper) depends on inlining */
    for (int i = 0; i < n; i++)
        if (buf[i] == ra) {
            for (unsigned k = 1; k < depth && i + (int)k < n; k++)
                fr[k] = (uintptr_t)buf[i + (int)k];
            break;
        }
    return cf_site_slot(t, tag, fr);
}
