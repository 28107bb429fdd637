/* End of run: the tables of every thread and rank become one profile on
 * rank 0.  Every step is a PMPI collective over fixed-size arrays (cf_coll.h),
 * so the cost is a reduction tree, not a receive loop at rank 0.  The
 * modules (cf_module.h) add their sections after the core's merge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include "cf_assemble.h"
#include "cf_coll.h"
#include "cf_module.h"
#include "cf_output.h"
#include "cf_profile.h"
#include "cf_region.h"
#include "cf_runtime.h"
#include "cf_sample.h"
#include "cf_summary.h"

typedef struct {
    uint32_t id;
    int size, nodes;
    uint64_t instances;
    char name[48];
    char desc[CF_COMM_DESC_LEN], user_name[CF_COMM_USER_LEN];
} cf_comm_wire_t;

/* One description per id whatever the order of the ranks: a described one
 * over none, then the smallest (ranks that first used a communicator
 * outside the wrapped constructors know less about it). */
static void cf_comm_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_comm_wire_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        uint64_t n = a[i].instances > b[i].instances ? a[i].instances : b[i].instances;
        int c = strcmp(a[i].desc, b[i].desc);
        if ((b[i].size == 0 && a[i].size != 0) ||
            (a[i].size != 0 && (b[i].desc[0] == 0 ? a[i].desc[0] != 0 : a[i].desc[0] != 0 && c < 0)))
            b[i] = a[i];
        else if (a[i].size != 0 && c == 0 && strcmp(a[i].user_name, b[i].user_name) > 0)
            cf_strlcpy(b[i].user_name, a[i].user_name, sizeof(b[i].user_name));
        b[i].instances = n;
    }
}

static int cf_cmp_comm_id(const void *x, const void *y)
{
    uint32_t a = (*(cf_comm_t *const *)x)->id, b = (*(cf_comm_t *const *)y)->id;
    return a < b ? -1 : a > b;
}

typedef struct {
    int rank, node;
    char host[64];
    double wall_s, mpi_s, wait_s, xfer_s;
    uint64_t dropped;
    int node_ranks, node_cpus;
    double copy_Bps; /* the node's copy bandwidth, on its first rank; 0 elsewhere */
    double step_faults;  /* per entry of its step region (cf_region_step); NaN: none */
    double step_preempt, step_s; /* the same region's involuntary switches per entry, its period */
    char step_region[64];
    double post_gap_s;  /* median of its threads' gaps after nonblocking collectives' posts (cf_post_gap) */
    uint64_t post_gaps; /* and their count; 0: none */
    double post_lead_s;  /* the shortest tenth of its threads' times from such a gap to the next post (cf_post_lead) */
    uint64_t post_leads; /* and their count; 0: none */
} cf_rank_wire_t;

/* Losses counted on every rank and summed on rank 0, for the reasons of a
 * partial profile. */
enum {
    CF_LOSS_THREADS,
    CF_LOSS_RECORDS,
    CF_LOSS_MERGE_KEYS,
    CF_LOSS_REQUESTS,
    CF_LOSS_STREAMS,
    CF_LOSS_FAILED,
    CF_LOSS_UNFINISHED,
    CF_LOSS_N
};
/* Conditions some rank met at finalize. */
enum { CF_FAIL_NOMEM, CF_FAIL_MERGE, CF_FAIL_COMMS, CF_FAIL_REGIONS, CF_FAIL_N };

static double cf_ns_to_s(double ns) { return ns * 1e-9; }

/* Copy bandwidth of this node, for what the advice charges for packing
 * tensors into a fusion bucket and out again (2 x fused bytes / memcpy_Bps,
 * lib/cf_advice.c): the best of three copies of CF_COPY_BYTES, a bucket of
 * the size frameworks pack (a few MiB) and past a core's private caches,
 * after one that faults the destination in.  Measured by the first rank of
 * each node (cf_node_first) and the job's figure is the slowest node's:
 * one 8 MiB footprint per node, a few ms.  Mapped with its pages in
 * (MAP_POPULATE), not faulted in one by one: on a VM whose page fault
 * costs 10 us that took 24 ms of the finalize, populated 14; and not
 * through malloc, whose thresholds a freed 8 MiB block would move. */
#define CF_COPY_BYTES (4u << 20)
static double cf_memcpy_bandwidth(void)
{
    size_t n = CF_COPY_BYTES;
    char *a = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    char *b = a + n;
    double best = 0;
    if (a == MAP_FAILED)
        return 0;
    memset(a, 1, n);
    for (int i = 0; i < 4; i++) {
        uint64_t t0 = cf_clock_mono_ns();
        memcpy(b, a, n);
        uint64_t t1 = cf_clock_mono_ns();
        if (i > 0 && t1 > t0 && (double)n * 1e9 / (double)(t1 - t0) > best)
            best = (double)n * 1e9 / (double)(t1 - t0);
        a[i] = b[n - 1 - (size_t)i]; /* keep the copies observable */
    }
    munmap(a, 2 * n);
    return best;
}

/* Whether this rank is the first world rank of its node. */
static int cf_node_first(void)
{
    for (int i = 0; cf_g.world_node && i < cf_g.world_rank; i++)
        if (cf_g.world_node[i] == cf_g.node)
            return 0;
    return 1;
}

/* The clock, sampling and last-arrival sections (rank 0). */
static void cf_profile_add_sections(cf_profile_t *p, cf_sample_result_t *sres)
{
    if (!p->extra)
        p->extra = json_object();
    if (sres->clock)
        json_object_set_new(p->extra, "clock", sres->clock);
    json_object_set_new(p->extra, "sampling",
                        json_pack("{s:i, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "first", CF_SAMPLE_FIRST, "every",
                                  (int)cf_g.cfg.sample_every, "rule", "pairs", "collective_calls", (json_int_t)sres->coll_used,
                                  "collective_calls_incomplete", (json_int_t)sres->coll_incomplete, "messages_matched",
                                  (json_int_t)sres->p2p_matched, "messages_receive_posted_late",
                                  (json_int_t)sres->p2p_late_recv, "messages_unmatched",
                                  (json_int_t)sres->p2p_unmatched, "not_sampled_buffer_full", (json_int_t)sres->lost));
    if (sres->late) {
        /* {comm id: {rank: times last}} -> [{comm, instances, last: [{rank, count}]}] */
        json_t *arr = json_array();
        const char *cid;
        json_t *ranks;
        json_object_foreach(sres->late, cid, ranks) {
            json_t *last = json_array();
            const char *rk;
            json_t *cnt;
            json_int_t total = 0;
            json_object_foreach(ranks, rk, cnt) {
                json_array_append_new(last, json_pack("{s:i, s:I}", "rank", atoi(rk), "count", json_integer_value(cnt)));
                total += json_integer_value(cnt);
            }
            json_array_append_new(arr, json_pack("{s:I, s:I, s:o}", "comm", (json_int_t)strtoul(cid, NULL, 10),
                                                 "instances", total, "last", last));
        }
        json_object_set_new(p->extra, "late_arrivals", arr);
        json_decref(sres->late);
    }
    if (sres->trace)
        json_object_set_new(p->extra, "samples", sres->trace);
}

/* Rank 0: job.partial_reasons, from the losses of all ranks. */
static void cf_partial_reasons(cf_profile_t *p, const uint64_t *loss, const int *fail, uint64_t samples_lost)
{
    const cf_config_t *c = &cf_g.cfg;
    if (fail[CF_FAIL_NOMEM])
        cf_profile_add_partial_reason(p, "out of memory at finalize on some rank: records left out");
    cf_losses_t l = {.threads = loss[CF_LOSS_THREADS], .records = loss[CF_LOSS_RECORDS],
                     .merge_keys = loss[CF_LOSS_MERGE_KEYS], .requests = loss[CF_LOSS_REQUESTS],
                     .max_threads = c->max_threads,
                     .table_size = c->table_size, .merge_max = c->merge_max, .max_requests = c->max_requests};
    cf_assemble_losses(p, &l);
    if (fail[CF_FAIL_MERGE])
        cf_profile_add_partial_reason(p, "more distinct records over the job than COMMFIT_MERGE_MAX=%u: some left out",
                                      c->merge_max);
    if (fail[CF_FAIL_COMMS])
        cf_profile_add_partial_reason(p, "communicators not all described (more distinct ones over the job than "
                                      "COMMFIT_MERGE_COMMS=%u, or no memory)", c->merge_comms);
    if (fail[CF_FAIL_REGIONS])
        cf_profile_add_partial_reason(p, "region names not all kept (too many regions)");
    if (samples_lost)
        cf_profile_add_partial_reason(p, "samples ran out: %llu calls chosen for sampling were not sampled "
                                      "(COMMFIT_SAMPLES=%u per process)",
                                      (unsigned long long)samples_lost, c->samples);
    if (loss[CF_LOSS_STREAMS])
        cf_profile_add_partial_reason(p, "%llu messages not sampled: more than %d message streams on a thread",
                                      (unsigned long long)loss[CF_LOSS_STREAMS], CF_CHANNELS);
}

/* Whether this rank may have calls of key that no table of it kept: a key
 * gets into a table at its first call or never (slots are never freed), so
 * a thread that dropped records and has no entry of key may have dropped
 * it, and so may the rank's own merged table. */
static int cf_rank_lacks(uint64_t key, const cf_table_t *mine)
{
    if (mine->dropped && !cf_table_find(mine, key))
        return 1;
    uint32_t n = cf_thread_count();
    for (uint32_t i = 0; i < n; i++) {
        const cf_table_t *t = &cf_thread_at(i)->table;
        if (t->dropped && !cf_table_find(t, key))
            return 1;
    }
    return 0;
}


/* The finalize's steps and their times, which COMMFIT_VERBOSE logs on
 * rank 0: where a slow end of a run goes. */
typedef struct {
    int n;
    const char *name[12];
    uint64_t ns[12];
} cf_steps_t;

static void cf_step(cf_steps_t *st, const char *name)
{
    if (st->n < (int)CF_ARRAY_LEN(st->ns)) {
        st->name[st->n] = name;
        st->ns[st->n++] = cf_clock_mono_ns();
    }
}

static void cf_steps_log(const cf_steps_t *st)
{
    char b[512];
    size_t o = 0;
    for (int i = 1; i < st->n && o < sizeof(b); i++)
        o += (size_t)snprintf(b + o, sizeof(b) - o, "%s %s %.3f s", i > 1 ? "," : "", st->name[i],
                              (double)(st->ns[i] - st->ns[i - 1]) * 1e-9);
    cf_log("rank 0: MPI_Finalize's own steps took %.3f s:%s", (double)(st->ns[st->n - 1] - st->ns[0]) * 1e-9, b);
}

/* Rank 0 builds and writes the profile alone.  The other ranks wait for it
 * here asleep, polling every 200 us, not spinning in PMPI_Finalize: on an
 * oversubscribed node, spinning ranks take the CPU that rank 0 needs. */
static void cf_quiet_wait(void)
{
    MPI_Request r;
    int done = 0;
    if (PMPI_Ibarrier(cf_g.tool_comm, &r) != MPI_SUCCESS)
        return;
    if (cf_g.world_rank == 0) {
        PMPI_Wait(&r, MPI_STATUS_IGNORE);
        return;
    }
    while (PMPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done)
        nanosleep(&(struct timespec){0, 200000}, NULL);
}

/* Adds section under key to *extra_p (made when NULL); NULL does nothing. */
static void cf_extra_put(json_t **extra_p, const char *key, json_t *section)
{
    if (!section)
        return;
    if (!*extra_p)
        *extra_p = json_object();
    if (*extra_p)
        json_object_set_new(*extra_p, key, section);
    else
        json_decref(section);
}

/* What the steps of the finalize hand on to each other (every rank; the
 * merged arrays on rank 0). */
typedef struct {
    uint64_t end_mono;
    int recording_at_end; /* recording was on when MPI_Finalize came (not paused by the program) */
    /* 1. this rank's threads */
    cf_table_t mine, elig; /* elig: calls = eligible for sampling, bytes = selected */
    uint64_t refused, req_dropped, dropped, mpi_ns, missed, streams_full, failed, unfinished;
    uint64_t loss_all[CF_LOSS_N];
    /* 2. samples */
    cf_sample_result_t sres;
    int have_samples;
    /* 3. records, transfer and sampling figures, summed over ranks */
    cf_stat_t *stats, *xstats, *estats;
    size_t nu, nx, ne;
    int overflow;
    uint32_t *missing;
    /* 4. communicators */
    cf_comm_wire_t *cw;
    uint64_t *ucids;
    size_t nuc;
    int coverflow;
    /* 5. per-rank figures (rank 0) */
    cf_rank_wire_t *all;
    /* 6. region ids of the profile's regions (rank 0) */
    unsigned *rids;
    int fail_all[CF_FAIL_N];
} cf_fin_run_t;

/* Rank 0, from the merged records: some path carries blocking
 * point-to-point calls of two sizes or more (cf_fin_t.p2p_sizes). */
static int cf_p2p_sizes(const cf_fin_run_t *m)
{
    unsigned first[4] = {0};
    for (size_t i = 0; m->stats && i < m->nu; i++) {
        uint64_t k = m->stats[i].key;
        unsigned op = cf_key_op(k), path = cf_key_path(k), bin = cf_key_bin(k) + 1;
        if (cf_key_layer(k) != CF_LAYER_MPI || op >= CF_OP_COUNT || !m->stats[i].calls ||
            strcmp(cf_op_kinds[op], "p2p") != 0 || cf_op_nonblocking(cf_op_names[op], "p2p"))
            continue;
        if (first[path] && first[path] != bin)
            return 1;
        first[path] = bin;
    }
    return 0;
}

/* The blocking collectives: every call on a communicator is eligible for
 * sampling (cf_coll_sample), so a record's eligible count is its calls. */
static const unsigned char cf_coll_sampled[CF_OP_COUNT] = {
#define CF_X(name) [CF_OP_##name] = 1,
    CF_MPI_COLL_SAMPLED(CF_X)
#undef CF_X
};
static int cf_all_eligible(uint64_t key)
{
    return cf_samples.coll && cf_key_layer(key) == CF_LAYER_MPI && cf_key_op(key) < CF_OP_COUNT &&
           cf_coll_sampled[cf_key_op(key)] && cf_key_comm(key) != CF_COMM_ID_NONE;
}

/* 1. this rank's threads into one table; 0 when some rank is out of memory
 * (every rank then gives up) */
static int cf_fin_threads(cf_fin_run_t *m)
{
    uint32_t nthreads = cf_thread_count();
    /* read once: the counts below must add up to what was loaded here */
    m->refused = cf_thread_refused();
    m->req_dropped = atomic_load(&cf_g.req_dropped);
    m->dropped = m->refused + m->req_dropped;
    /* the tables as large as the threads' keys need (a quarter full at
     * most), never more than COMMFIT_MERGE_MAX allows: a table of that size
     * is 42 MB at the default, and the pages a finalize touches cost more
     * than its work does where a page fault is dear (a virtual machine) */
    uint64_t nkeys = 0, nelig = 0;
    for (uint32_t i = 0; i < nthreads; i++) {
        const cf_thread_t *t = cf_thread_at(i);
        nkeys += t->table.used;
        for (uint32_t s = 0; s <= t->elig_mask; s++)
            nelig += t->elig[s].key != 0;
    }
    uint64_t most = (uint64_t)cf_g.cfg.merge_max * 2;
    int ok_mine = cf_table_init(&m->mine, (uint32_t)(4 * nkeys < most ? 4 * nkeys : most)) == CF_OK;
    nelig += nkeys; /* a blocking collective's record counts its calls there */
    int ok_elig = cf_table_init(&m->elig, (uint32_t)(4 * nelig < most ? 4 * nelig : most)) == CF_OK;
    int ok = ok_mine && ok_elig;
    /* a rank short of memory merges nothing and says so in the reduction
     * of the losses below, after which every rank gives up */
    for (uint32_t i = 0; ok && i < nthreads; i++) {
        cf_thread_t *t = cf_thread_at(i);
        m->mpi_ns += t->mpi_ns;
        m->dropped += t->table.dropped;
        m->missed += t->missed;
        m->streams_full += t->chan_full;
        m->failed += t->failed;
        m->unfinished += t->unfinished;
        for (uint32_t s = 0; s <= t->elig_mask; s++) {
            const cf_elig_t *e = &t->elig[s];
            cf_stat_t *dst = e->key ? cf_table_get(&m->elig, e->key) : NULL;
            if (dst) {
                dst->calls += e->eligible;
                dst->bytes += e->selected;
            }
        }
        for (uint32_t s = 0, ns = cf_table_count(&t->table); s < ns; s++) {
            cf_stat_t *src = cf_table_nth(&t->table, s);
            cf_stat_t *dst = cf_table_get(&m->mine, src->key);
            if (dst)
                cf_stat_merge(dst, src);
            cf_stat_t *e = cf_all_eligible(src->key) ? cf_table_get(&m->elig, src->key) : NULL;
            if (e)
                e->calls += src->calls;
        }
    }
    /* the requests the program never completed, booked now: a call MPI made.
     * Not where a completion may have gone unseen: recording paused at the
     * end (a resume since its post says the same of a request: cf_req_unseen),
     * or a thread the plugin refused */
    if (ok && m->recording_at_end && m->refused == 0)
        m->unfinished += cf_req_unfinished(&m->mine);
    m->dropped += m->mine.dropped;
    uint64_t records = m->dropped - m->refused - m->req_dropped;
    /* the calls the threads' tables dropped, as a spool's parts count them, and apart the keys
     * this rank's merged table had no room for */
    uint64_t loss[CF_LOSS_N + 1] = {m->refused,      records - m->mine.dropped,
                                    m->mine.dropped, m->req_dropped,
                                    m->streams_full, m->failed,
                                    m->unfinished,   !ok},
                              all[CF_LOSS_N + 1] = {0};
    /* on every rank: the failed calls' section is made only when some call
     * failed; the last count, the ranks out of memory */
    PMPI_Allreduce(loss, all, CF_LOSS_N + 1, MPI_UINT64_T, MPI_SUM, cf_g.tool_comm);
    memcpy(m->loss_all, all, sizeof(m->loss_all));
    if (all[CF_LOSS_N]) {
        if (!ok || cf_g.world_rank == 0)
            cf_log("rank %d: out of memory at finalize%s; no profile", cf_g.world_rank,
                   ok ? " on some rank" : "");
        if (ok_mine)
            cf_table_fini(&m->mine);
        if (ok_elig)
            cf_table_fini(&m->elig);
        return 0;
    }
    if (cf_g.cfg.verbose)
        cf_log("rank %d: %u threads recorded, %llu refused (COMMFIT_MAX_THREADS), %llu records dropped "
               "(COMMFIT_TABLE_SIZE), %llu requests not tracked (COMMFIT_MAX_REQUESTS), %llu completions of "
               "requests posted outside the profiler",
               cf_g.world_rank, nthreads, (unsigned long long)m->refused, (unsigned long long)records,
               (unsigned long long)m->req_dropped, (unsigned long long)m->missed);
    return 1;
}

/* 3. stats, and transfer stats, summed over ranks */
static void cf_fin_records(cf_fin_run_t *m)
{
    int xoverflow = 0, eoverflow = 0;
    m->stats = cf_merge_table(&m->mine, cf_g.cfg.merge_max, &m->nu, &m->overflow, cf_rank_lacks,
                              m->dropped > m->refused + m->req_dropped, &m->missing);
    cf_table_fini(&m->mine);
    if (m->have_samples) {
        m->xstats = cf_merge_table(&m->sres.xfer, cf_g.cfg.merge_max, &m->nx, &xoverflow, NULL, 0, NULL);
        cf_table_fini(&m->sres.xfer);
    }
    if (m->have_samples) /* agreed by all ranks */
        m->estats = cf_merge_table(&m->elig, cf_g.cfg.merge_max, &m->ne, &eoverflow, NULL, 0, NULL);
    cf_table_fini(&m->elig);
}

/* 4. communicators: union of ids (at most COMMFIT_MERGE_COMMS), then
 * their descriptions */
static void cf_fin_comms(cf_fin_run_t *m)
{
    size_t nall = atomic_load(&cf_comm_nall);
    cf_comm_t **mycomms = malloc((nall + 1) * sizeof(*mycomms));
    uint64_t *cids = malloc((nall + 1) * sizeof(uint64_t)), no_comm = 0;
    size_t ncid = 0;
    if (mycomms && cids) {
        memcpy(mycomms, atomic_load(&cf_comm_all), nall * sizeof(*mycomms));
        qsort(mycomms, nall, sizeof(*mycomms), cf_cmp_comm_id);
        for (size_t i = 0; i < nall; i++)
            cids[ncid++] = mycomms[i]->id;
    }
    m->coverflow = !cids || !mycomms;
    m->ucids = cf_union_keys(cids && mycomms ? cids : &no_comm, cids && mycomms ? ncid : 0, cf_g.cfg.merge_comms,
                             &m->nuc, &m->coverflow);
    free(cids);
    cf_comm_wire_t *cw = m->ucids ? calloc(m->nuc ? m->nuc : 1, sizeof(*cw)) : NULL;
    for (size_t i = 0, j = 0; cw && mycomms && i < m->nuc; i++) {
        cw[i].id = (uint32_t)m->ucids[i];
        /* both sorted by id */
        while (j < nall && mycomms[j]->id < cw[i].id)
            j++;
        if (j < nall && mycomms[j]->id == cw[i].id) {
            cw[i].size = mycomms[j]->size;
            cw[i].nodes = mycomms[j]->nodes;
            cw[i].instances = mycomms[j]->instances;
            cf_strlcpy(cw[i].name, mycomms[j]->name, sizeof(cw[i].name));
            cf_strlcpy(cw[i].desc, mycomms[j]->desc, sizeof(cw[i].desc));
            cf_strlcpy(cw[i].user_name, mycomms[j]->user_name, sizeof(cw[i].user_name));
        }
    }
    free(mycomms);
    if (m->ucids && cf_all_ok(cw != NULL))
        cf_reduce_bytes(cw, m->nuc, sizeof(*cw), cf_comm_op, 0);
    else {
        free(cw);
        cw = NULL;
    }
    m->cw = cw;
}

/* This rank's threads' stats of one kind together (the stat at offset
 * off in cf_thread_t): their quantile q, s, and their count. */
static uint64_t cf_rank_gap(size_t off, double q, double *s)
{
    cf_stat_t all;
    memset(&all, 0, sizeof(all));
    for (uint32_t i = 0; i < cf_thread_count(); i++) {
        const cf_stat_t *g = *(cf_stat_t *const *)((const char *)cf_thread_at(i) + off);
        if (g != NULL && g->calls > 0) {
            if (all.calls == 0)
                all.t_min = UINT64_MAX;
            cf_stat_merge(&all, g);
        }
    }
    *s = all.calls ? 1e-9 * cf_hist_quantile(all.hist, q, (double)all.t_min, (double)all.t_max) : 0;
    return all.calls;
}

/* This rank's gaps after nonblocking collectives' posts (their median)
 * and before the posts that follow them (their shortest tenth) */
static void cf_rank_post_gap(cf_rank_wire_t *me)
{
    me->post_gaps = cf_rank_gap(offsetof(cf_thread_t, post_gap), 0.5, &me->post_gap_s);
    me->post_leads = cf_rank_gap(offsetof(cf_thread_t, post_lead), 0.1, &me->post_lead_s);
}

/* 5. per-rank figures, gathered on rank 0 */
static void cf_fin_ranks(cf_fin_run_t *m)
{
    cf_rank_wire_t me = {.rank = cf_g.world_rank, .node = cf_g.node};
    gethostname(me.host, sizeof(me.host) - 1);
    me.wall_s = cf_ns_to_s((double)(m->end_mono - cf_g.init_mono_ns));
    me.mpi_s = cf_ns_to_s((double)m->mpi_ns);
    me.dropped = m->dropped;
    me.node_ranks = cf_g.node_ranks;
    me.node_cpus = cf_g.node_cpus;
    me.copy_Bps = cf_node_first() ? cf_memcpy_bandwidth() : 0;
    cf_region_step_t st = cf_region_step(me.step_region, sizeof(me.step_region));
    me.step_faults = st.faults;
    me.step_preempt = st.preempt;
    me.step_s = st.period_s;
    cf_rank_post_gap(&me);
    if (m->have_samples) {
        me.wait_s = cf_ns_to_s(m->sres.wait_ns);
        me.xfer_s = cf_ns_to_s(m->sres.xfer_ns);
    }
    m->all = cf_g.world_rank == 0 ? calloc((size_t)cf_g.world_size, sizeof(*m->all)) : NULL;
    if (cf_all_ok(cf_g.world_rank != 0 || m->all))
        PMPI_Gather(&me, (int)sizeof(me), MPI_BYTE, m->all, (int)sizeof(me), MPI_BYTE, 0, cf_g.tool_comm);
}

/* Rank 0: the framework's time after a post and before the next, the
 * median over the ranks that measured it of their figures (cf_profile.h:
 * post_gap_s, post_lead_s). */
static void cf_put_post_gap(cf_profile_t *p, const cf_rank_wire_t *all, int n)
{
    double *med = n > 0 ? malloc(2 * (size_t)n * sizeof(*med)) : NULL;
    size_t k = 0, l = 0;
    uint64_t gaps = 0, leads = 0;
    for (int i = 0; med != NULL && i < n; i++) {
        if (all[i].post_gaps > 0) {
            med[k++] = all[i].post_gap_s;
            gaps += all[i].post_gaps;
        }
        if (all[i].post_leads > 0) {
            med[n + l++] = all[i].post_lead_s;
            leads += all[i].post_leads;
        }
    }
    if (k > 0) {
        p->post_gap_s = cf_median(med, k);
        p->post_gaps = gaps;
    }
    if (l > 0) {
        p->post_lead_s = cf_median(med + n, l);
        p->post_leads = leads;
    }
    free(med);
}

/* Rank 0: the job's figures and its ranks. */
static void cf_fin_put_job(const cf_fin_run_t *m, cf_profile_t *p)
{
    p->ranks = cf_g.world_size;
    p->nodes = cf_g.nnodes;
    p->clock_hz = cf_clock.hz;
    p->partial = p->npartial_reason > 0; /* the regions' losses, if any */
    cf_library_version(p->mpi_library, sizeof(p->mpi_library));
    cf_program_info(p->program, sizeof(p->program), &p->frameworks);
    time_t t0 = (time_t)cf_g.init_wall;
    struct tm tm;
    gmtime_r(&t0, &tm);
    strftime(p->start_time, sizeof(p->start_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
    p->rank = calloc((size_t)cf_g.world_size, sizeof(*p->rank));
    for (int i = 0; p->rank && m->all && i < cf_g.world_size; i++) {
        const cf_rank_wire_t *a = &m->all[i];
        cf_rank_info_t *r = &p->rank[p->nrank++];
        r->rank = a->rank;
        r->node = a->node;
        cf_strlcpy(r->host, a->host, sizeof(r->host));
        r->wall_s = a->wall_s;
        r->mpi_s = a->mpi_s;
        r->dropped = a->dropped;
        r->wait_s = a->wait_s;
        r->xfer_s = a->xfer_s;
        r->node_ranks = a->node_ranks;
        r->node_cpus = a->node_cpus;
        if (a->step_faults >= 0 && a->step_region[0])
            (void)cf_profile_set_rank_step(p, p->nrank - 1, a->step_region, a->step_faults, a->step_preempt, a->step_s);
        if (a->copy_Bps > 0 && (!(p->memcpy_Bps > 0) || a->copy_Bps < p->memcpy_Bps))
            p->memcpy_Bps = a->copy_Bps;
        if (r->wall_s > p->wall_s)
            p->wall_s = r->wall_s;
    }
    cf_put_post_gap(p, m->all, m->all ? cf_g.world_size : 0);
    cf_assemble_oversubscription(p);
    cf_partial_reasons(p, m->loss_all, m->fail_all, m->have_samples ? m->sres.lost : 0);
    p->failed_calls = m->loss_all[CF_LOSS_FAILED];
    p->unfinished_requests = m->loss_all[CF_LOSS_UNFINISHED];
    p->comm = calloc(m->nuc ? m->nuc : 1, sizeof(*p->comm));
    for (size_t i = 0; p->comm && m->cw && i < m->nuc; i++) {
        cf_comm_info_t *c = &p->comm[p->ncomm++];
        c->id = m->cw[i].id;
        c->size = m->cw[i].size;
        c->nodes = m->cw[i].nodes;
        c->instances = m->cw[i].instances;
        cf_strlcpy(c->name, m->cw[i].name, sizeof(c->name));
        cf_strlcpy(c->desc, m->cw[i].desc, sizeof(c->desc));
        cf_strlcpy(c->user_name, m->cw[i].user_name, sizeof(c->user_name));
    }
}

/* Rank 0: the records, with their regions, missing ranks, transfer and
 * sampling figures. */
static void cf_fin_put_records(const cf_fin_run_t *m, cf_profile_t *p)
{
    const cf_stat_t *xstats = m->xstats, *estats = m->estats;
    p->rec = calloc(m->nu ? m->nu : 1, sizeof(*p->rec));
    size_t xi = 0, ei = 0;
    for (size_t i = 0; p->rec && m->stats && i < m->nu; i++) {
        const cf_stat_t *s = &m->stats[i];
        if (!s->calls)
            continue;
        unsigned op = cf_key_op(s->key), layer = cf_key_layer(s->key), parent = cf_key_comm(s->key);
        unsigned rid = cf_key_region(s->key), region = 0;
        for (size_t k = 0; rid && m->rids && k < p->nregion; k++)
            if (m->rids[k] == rid)
                region = (unsigned)k + 1;
        cf_record_t *r = cf_assemble_record(p, s, cf_layer_op_name(layer, op), cf_layer_op_kind(layer, op),
                                            layer == CF_LAYER_UCX && parent ? cf_layer_op_name(CF_LAYER_MPI, parent) : "",
                                            region, m->missing ? m->missing[i] : 0);
        /* transfer stats of the same key, both arrays sorted by key */
        while (xstats && xi < m->nx && xstats[xi].key < s->key)
            xi++;
        if (xstats && xi < m->nx && xstats[xi].key == s->key && xstats[xi].calls) {
            const cf_stat_t *x = &xstats[xi];
            r->wait_s = cf_ns_to_s((double)x->t_wait);
            r->xfer_n = x->calls;
            r->xfer_sum = cf_ns_to_s((double)x->t_sum);
            r->xfer_p50 = cf_ns_to_s(cf_hist_quantile(x->hist, 0.5, (double)x->t_min, (double)x->t_max));
            r->xfer_p99 = cf_ns_to_s(cf_hist_quantile(x->hist, 0.99, (double)x->t_min, (double)x->t_max));
        }
        while (estats && ei < m->ne && estats[ei].key < s->key)
            ei++;
        if (estats && ei < m->ne && estats[ei].key == s->key) {
            r->sample_eligible = estats[ei].calls;
            r->sample_selected = estats[ei].bytes;
        }
    }
}

static void cf_fin_free(cf_fin_run_t *m)
{
    free(m->all);
    free(m->stats);
    free(m->missing);
    free(m->xstats);
    free(m->estats);
    free(m->rids);
    free(m->cw);
    free(m->ucids);
}

void cf_runtime_finalize(void)
{
    if (atomic_load(&cf_g.state) != 1)
        return;
    /* our own PMPI calls below are not the application's */
    int on = cf_recording_pause();
    atomic_store(&cf_g.finalizing, 1);
    static cf_fin_run_t run; /* large: not on the stack */
    cf_fin_run_t *m = &run;
    m->recording_at_end = on;
    size_t nmod;
    const cf_module_t *mod = cf_module_list(&nmod);
    m->end_mono = cf_clock_mono_ns();
    cf_steps_t st = {.n = 0};
    cf_step(&st, NULL);
    /* before the merge, with recording off: none of its traffic is the
     * program's (calibration) */
    for (size_t i = 0; i < nmod; i++)
        if (mod[i].before_merge)
            mod[i].before_merge();

    cf_step(&st, "calibration");
    /* 1. this rank's threads */
    if (!cf_fin_threads(m)) {
        atomic_store(&cf_g.state, 2);
        return;
    }
    /* 2. samples: wait at collectives, one-way message times, clocks */
    cf_step(&st, "threads");
    m->have_samples = cf_samples_finalize(&m->sres) == CF_OK;
    cf_step(&st, "samples");
    /* 3. records; 4. communicators; 5. per-rank figures */
    cf_fin_records(m);
    cf_step(&st, "records");
    cf_fin_comms(m);
    cf_step(&st, "communicators");
    cf_fin_ranks(m);
    cf_step(&st, "ranks");
    /* 6. region names */
    cf_profile_t p;
    cf_profile_init(&p);
    int rlost = cf_regions_merge(cf_g.world_rank == 0 ? &p : NULL, &m->rids) != CF_OK;

    int fail[CF_FAIL_N] = {(cf_g.world_rank == 0 && !m->stats) || !m->cw, m->overflow, m->coverflow, rlost};
    PMPI_Allreduce(fail, m->fail_all, CF_FAIL_N, MPI_INT, MPI_LOR, cf_g.tool_comm);
    /* the modules' sections, in the list's order (collective) */
    cf_fin_t fin = {.failed_calls = m->loss_all[CF_LOSS_FAILED],
                    .p2p_sizes = cf_g.world_rank == 0 && cf_p2p_sizes(m)};
    json_t *sec[nmod];
    cf_step(&st, "regions");
    for (size_t i = 0; i < nmod; i++)
        sec[i] = mod[i].section ? mod[i].section(&fin) : NULL;
    cf_step(&st, "sections");

    if (cf_g.world_rank == 0) {
        cf_fin_put_job(m, &p);
        cf_fin_put_records(m, &p);
        if (m->have_samples)
            cf_profile_add_sections(&p, &m->sres);
        for (size_t i = 0; i < p.npartial_reason; i++)
            cf_log("the profile is partial: %s", p.partial_reason[i]);
        for (size_t i = 0; i < nmod; i++)
            cf_extra_put(&p.extra, mod[i].name, sec[i]);
        cf_write_profile(&p);
        if (cf_g.cfg.summary)
            cf_summary_print(&p, stderr);
        cf_profile_free(&p);
    } else {
        for (size_t i = 0; i < nmod; i++)
            json_decref(sec[i]);
    }
    cf_step(&st, "profile");
    cf_quiet_wait();
    cf_step(&st, "wait");
    if (cf_g.cfg.verbose && cf_g.world_rank == 0)
        cf_steps_log(&st);
    cf_fin_free(m);
    for (size_t i = 0; i < nmod; i++)
        if (mod[i].fini)
            mod[i].fini();
    atomic_store(&cf_g.state, 2);
}
