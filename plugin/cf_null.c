/* The template module, as Darshan's null module is: it adds nothing to a
 * call's path and shows each hook of cf_module.h at work, with its state
 * file-static.  Its "null" section says how many ranks ran its init, how
 * many threads it saw register, and how many calls the threads' tables
 * hold, summed over the ranks.
 *
 * It is built only into the test library (libcommfit_null.so, compiled
 * with COMMFIT_NULL_MODULE; tests/mpi/test_null_module.sh and
 * test_null_abort.sh), so the plugin's own profiles and hot path do not
 * change.  A new module: copy this file and cf_null.h, include no other
 * module's header (the core's and its services' are cf_runtime.h,
 * cf_module.h, cf_coll.h, cf_output.h, cf_sample.h, cf_sync.h,
 * cf_region.h; tests/check_shape.py fails on a module's), and add its
 * descriptor to the list in cf_modules.c at the place where its section
 * goes in the profile.  A module that records on the hot path does it
 * through inline helpers the wrappers call (gen_wrappers.py), never
 * through this table. */
#include "cf_null.h"

static struct {
    uint64_t inits;           /* 1 once init ran on this rank */
    _Atomic uint64_t threads; /* threads registered on this rank */
} cf_null;

/* MPI_Init, every rank, in the list's order. */
void cf_null_init(void)
{
    cf_null.inits = 1;
}

/* A thread's first recorded call, under the registry's lock. */
void cf_null_thread_init(cf_thread_t *t)
{
    (void)t; /* a module would set its fields of t here */
    atomic_fetch_add(&cf_null.threads, 1);
}

/* Collective over the world, after the core's merge: every rank adds its
 * figures, rank 0 returns the section. */
json_t *cf_null_section(const cf_fin_t *f)
{
    enum { INITS, THREADS, CALLS, N };
    uint64_t mine[N] = {cf_null.inits, atomic_load(&cf_null.threads), 0}, sum[N] = {0};
    (void)f;
    for (uint32_t i = 0; i < cf_thread_count(); i++) {
        const cf_table_t *tb = &cf_thread_at(i)->table;
        for (uint32_t s = 0, ns = cf_table_count(tb); s < ns; s++)
            mine[CALLS] += cf_table_nth(tb, s)->calls;
    }
    PMPI_Reduce(mine, sum, N, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    if (cf_g.world_rank != 0)
        return NULL;
    return json_pack("{s:I, s:I, s:I}", "ranks", (json_int_t)sum[INITS], "threads", (json_int_t)sum[THREADS],
                     "calls", (json_int_t)sum[CALLS]);
}

/* End of MPI_Finalize, the profile written. */
void cf_null_fini(void)
{
    if (cf_g.cfg.verbose)
        cf_log("rank %d: the null module ends after %llu threads", cf_g.world_rank,
               (unsigned long long)atomic_load(&cf_null.threads));
}

/* MPI_Abort on this rank, before the library kills the job: no collective
 * (the other ranks are elsewhere), nothing that may block. */
void cf_null_abort(int errorcode)
{
    if (cf_g.cfg.verbose)
        cf_log("rank %d: the null module sees MPI_Abort (errorcode %d) after %llu threads", cf_g.world_rank,
               errorcode, (unsigned long long)atomic_load(&cf_null.threads));
}
