#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cf_coll.h"
#include "cf_sample.h"
#include "cf_site.h"
#include "cf_sync.h"

cf_samples_t cf_samples;

int cf_samples_init(void)
{
    uint32_t cap = cf_g.cfg.samples;
    cf_samples.mask = cf_g.cfg.sample_every - 1;
    cf_samples.cap = cap;
    if (cap == 0)
        return CF_OK;
    cf_samples.coll = calloc(cap, sizeof(cf_csample_t));
    cf_samples.sent = calloc(cap, sizeof(cf_psample_t));
    cf_samples.recvd = calloc(cap, sizeof(cf_psample_t));
    if (!cf_samples.coll || !cf_samples.sent || !cf_samples.recvd) {
        free(cf_samples.coll);
        free(cf_samples.sent);
        free(cf_samples.recvd);
        memset(&cf_samples, 0, sizeof(cf_samples));
        return CF_ERR_NOMEM;
    }
    return CF_OK;
}

void cf_samples_free(void)
{
    free(cf_samples.coll);
    free(cf_samples.sent);
    free(cf_samples.recvd);
    memset(&cf_samples, 0, sizeof(cf_samples));
}

uint64_t cf_sample_from(uint64_t seq)
{
    if (seq < CF_SAMPLE_FIRST)
        return seq;
    for (;;) {
        uint64_t p = cf_samples.mask + 1;
        if (seq >= CF_SAMPLE_CAP_FROM) {
            uint64_t o = (UINT64_C(1) << (63 - __builtin_clzll(seq))) / CF_SAMPLE_PER_OCTAVE;
            p = o > p ? o : p;
        }
        /* a block of 2p holds the pair: the octave, hence the period, is
         * the same across it (its powers of two past CF_SAMPLE_CAP_FROM
         * are multiples of 2p, or the block is the first one) */
        uint64_t w = 2 * p, b = seq & ~(w - 1), pick = b + cf_sample_mix(b) % (w - 1);
        if (pick >= seq)
            return pick; /* past the first ones: seq is */
        if (pick + 1 == seq)
            return seq;
        if (b + w < b)
            return UINT64_MAX;
        seq = b + w;
    }
}

int cf_chan_chose(cf_chan_t *ch, uint32_t seq)
{
    /* a stream's count is 32 bits, as the samples' numbers: past them it
     * stays at the last, never chosen, and nothing more is sampled */
    if (seq == UINT32_MAX) {
        ch->seq = UINT32_MAX;
        ch->next = UINT32_MAX;
        return 0;
    }
    int pick = seq == ch->next;
    uint64_t next = cf_sample_from((uint64_t)seq + 1);
    ch->next = next > UINT32_MAX ? UINT32_MAX : (uint32_t)next;
    return pick;
}

/* One more call of record key was chosen (a blocking collective: its
 * eligible count is its record's calls). */
static void cf_elig_chosen(cf_thread_t *t, uint64_t key)
{
    cf_elig_t *e = &t->elig[t->elig_last];
    if (e->key == key || (e = cf_elig_slot(t, key)))
        e->selected++;
}

void cf_coll_sample_slow(cf_thread_t *t, cf_comm_t *c, uint64_t key, int root, uint64_t seq, uint64_t t0, uint64_t t1)
{
    if (!cf_samples.coll) {
        atomic_store_explicit(&c->sample_next, UINT64_MAX, memory_order_relaxed);
        return;
    }
    /* past numbers that went by unrecorded (cf_coll_passed), seq is
     * chosen when the rule chooses it */
    uint64_t next = atomic_load_explicit(&c->sample_next, memory_order_relaxed);
    int pick = seq == next || (seq > next && cf_sample_from(seq) == seq);
    atomic_store_explicit(&c->sample_next, cf_sample_from(seq + 1), memory_order_relaxed);
    if (!pick)
        return;
    cf_elig_chosen(t, key);
    uint32_t i = atomic_fetch_add_explicit(&cf_samples.ncoll, 1, memory_order_relaxed);
    if (i >= cf_samples.cap) {
        atomic_fetch_add_explicit(&cf_samples.lost, 1, memory_order_relaxed);
        return;
    }
    cf_csample_t *s = &cf_samples.coll[i];
    s->key = key;
    s->enter = t0;
    s->leave = t1;
    s->comm_id = c->id;
    s->seq = (uint32_t)seq;
    s->root_world = root >= 0 ? cf_world_of(c, root) : -1;
    s->comm_size = c->size;
}

cf_elig_t *cf_elig_slot(cf_thread_t *t, uint64_t key)
{
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & t->elig_mask;
    for (unsigned n = 0; n < 32; n++, i = (i + 1) & t->elig_mask) {
        if (t->elig[i].key == 0)
            t->elig[i].key = key;
        if (t->elig[i].key == key) {
            t->elig_prev = t->elig_last;
            t->elig_last = i;
            return &t->elig[i];
        }
    }
    t->elig_dropped++;
    return NULL;
}

/* The slot of a stream that has one, UINT32_MAX otherwise (nothing taken). */
static uint32_t cf_chan_find(const cf_thread_t *t, uint64_t k)
{
    uint32_t mask = CF_CHANNELS - 1;
    uint32_t i = cf_chan_hash(k);
    for (unsigned n = 0; n < 32 && t->chan_key[i]; n++, i = (i + 1) & mask)
        if (t->chan_key[i] == k)
            return i;
    return UINT32_MAX;
}

cf_chan_t *cf_chan_walk(cf_thread_t *t, uint64_t k, int dir)
{
    uint32_t mask = CF_CHANNELS - 1;
    uint32_t i = cf_chan_hash(k);
    uint64_t *keys = t->chan_key;
    for (unsigned n = 0; n < 32; n++, i = (i + 1) & mask) {
        /* the slot's key read once (the first one again: an empty first
         * slot is taken here) */
        uint64_t v = keys[i];
        if (__builtin_expect(v != k, 0)) {
            if (v != 0)
                continue;
            keys[i] = k;
        }
        t->chan_last_key[dir] = k;
        t->chan_last_slot[dir] = i;
        return &t->chan[i];
    }
    t->chan_full++;
    return NULL; /* no room: this stream is not sampled on this side */
}

void cf_p2p_sample(int dir, uint64_t key, uint32_t comm_id, int src, int dst, int tag, unsigned bin, uint64_t seq,
                   uint64_t post, uint64_t done)
{
    _Atomic uint32_t *n = dir ? &cf_samples.nrecvd : &cf_samples.nsent;
    uint32_t i = atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
    if (i >= cf_samples.cap) {
        atomic_fetch_add_explicit(&cf_samples.lost, 1, memory_order_relaxed);
        return;
    }
    cf_psample_t *s = dir ? &cf_samples.recvd[i] : &cf_samples.sent[i];
    s->key = key;
    s->post = post;
    s->done = done;
    s->comm_id = comm_id;
    s->seq = (uint32_t)seq;
    s->src = src;
    s->dst = dst;
    s->tag = tag;
    s->bin = bin;
}

/* ---- at finalize ---- */

typedef enum { CF_SYNC_NXN, CF_SYNC_ROOT_FIRST, CF_SYNC_ROOT_LAST } cf_sync_kind_t;

/* Who waits for whom: bcast and scatter wait for a late root; reduce and
 * gather make the root wait for the last leaf; the rest wait for the last. */
static cf_sync_kind_t cf_sync_kind(uint64_t key)
{
    const char *n = cf_layer_op_name(CF_LAYER_MPI, cf_key_op(key));
    if (strstr(n, "Bcast") || strstr(n, "Scatter"))
        return CF_SYNC_ROOT_FIRST;
    if ((strstr(n, "Reduce") && !strstr(n, "Allreduce") && !strstr(n, "Reduce_scatter")) ||
        (strstr(n, "Gather") && !strstr(n, "Allgather")))
        return CF_SYNC_ROOT_LAST;
    return CF_SYNC_NXN;
}

static void cf_xfer_add(cf_table_t *x, uint64_t key, double xfer_ns, double wait_ns)
{
    cf_stat_t *s = cf_table_get(x, key);
    if (!s)
        return;
    cf_stat_add(s, 0, (uint64_t)(xfer_ns > 0 ? xfer_ns + 0.5 : 0));
    s->t_wait += (uint64_t)(wait_ns > 0 ? wait_ns + 0.5 : 0);
}

/* A sampled collective instance across ranks, reduced in one call: the
 * latest entry and its rank (the first of equals, as MPI_MAXLOC), the
 * root's entry, and how many ranks sampled it. */
typedef struct {
    double last, root;
    int rank, count;
} cf_inst_t;

static void cf_inst_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const cf_inst_t *a = in;
    cf_inst_t *b = inout;
    for (int i = 0; i < *len; i++) {
        if (a[i].last > b[i].last || (a[i].last == b[i].last && a[i].rank < b[i].rank)) {
            b[i].last = a[i].last;
            b[i].rank = a[i].rank;
        }
        if (a[i].root > b[i].root)
            b[i].root = a[i].root;
        b[i].count += a[i].count;
    }
}

static int cf_find_u64(const uint64_t *a, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && a[lo] == x ? (int)lo : -1;
}

/* A rank's trace rows, kept until its report goes to rank 0 (cf_reports). */
typedef struct {
    double *rows;
    uint32_t n;
} cf_rows_t;

/* Rank 0: who arrived last at each instance of the union u (ui), counted
 * per communicator; and the trace's collectives, which the ranks' reports
 * fill. */
static void cf_collectives_json(cf_sample_result_t *res, const uint64_t *u, size_t nu, const cf_inst_t *ui)
{
    res->trace = json_pack("{s:s, s:[s,s,s,s,s,s,s], s:[]}", "time_origin",
                           "seconds since rank 0 entered MPI_Init, on rank 0's clock", "columns", "rank", "comm",
                           "seq", "op", "enter_s", "leave_s", "wait_s", "collectives");
    json_t *late = json_object();
    for (size_t i = 0; i < nu; i++) {
        if (ui[i].rank < 0)
            continue;
        char id[16], r[16];
        snprintf(id, sizeof(id), "%u", (unsigned)(u[i] >> 32));
        snprintf(r, sizeof(r), "%d", ui[i].rank);
        json_t *c = json_object_get(late, id);
        if (!c)
            json_object_set_new(late, id, c = json_object());
        json_t *v = json_object_get(c, r);
        json_object_set_new(c, r, json_integer(v ? json_integer_value(v) + 1 : 1));
    }
    res->late = late;
}

/* The sampled collective instances: their wait and transfer, who came
 * last, and this rank's trace rows (in keep).  short_of: this rank lacks
 * memory for the messages' step, agreed in the union's reduction.  Returns
 * 1 where every rank can go on to the messages, 0 where some cannot, -1
 * where the union itself failed (nothing agreed). */
static int cf_collectives(cf_sample_result_t *res, double origin_ns, cf_rows_t *keep, int short_of)
{
    uint32_t n = atomic_load(&cf_samples.ncoll);
    if (n > cf_samples.cap)
        n = cf_samples.cap;
    /* room for the union's instances before its size is known (at most the
     * cap, as the union), so that the check of memory rides on the union's
     * reduction instead of a reduction of its own */
    cf_inst_t *inst = malloc(((size_t)cf_samples.cap + 1) * sizeof(*inst));
    double *g_enter = malloc(((size_t)n + 1) * sizeof(double));
    uint64_t *ids = malloc(((size_t)n + 1) * sizeof(uint64_t)), none = 0;
    for (uint32_t i = 0; ids && i < n; i++)
        ids[i] = (uint64_t)cf_samples.coll[i].comm_id << 32 | cf_samples.coll[i].seq;
    size_t nu = 0;
    int overflow = 0, failed = short_of || !inst || !g_enter;
    uint64_t *u = cf_union_keys_flag(ids ? ids : &none, ids ? n : 0, cf_samples.cap, &nu, &overflow, &failed);
    free(ids);
    if (!u) {
        free(inst);
        free(g_enter);
        return -1;
    }
    if (failed || nu > cf_samples.cap) /* the same on every rank */
        goto out;
    for (size_t i = 0; i < nu; i++)
        inst[i] = (cf_inst_t){.last = -1e300, .root = -1e300, .rank = -1, .count = 0};
    for (uint32_t j = 0; j < n; j++) {
        const cf_csample_t *s = &cf_samples.coll[j];
        int i = cf_find_u64(u, nu, (uint64_t)s->comm_id << 32 | s->seq);
        g_enter[j] = cf_global_ns(cf_local_ns(s->enter));
        if (i < 0)
            continue;
        if (g_enter[j] > inst[i].last) {
            inst[i].last = g_enter[j];
            inst[i].rank = cf_g.world_rank;
        }
        if (s->root_world == cf_g.world_rank)
            inst[i].root = g_enter[j];
        inst[i].count++;
    }
    /* one reduction, not four: each is a turn of every rank */
    MPI_Datatype t;
    MPI_Op op;
    PMPI_Type_contiguous((int)sizeof(cf_inst_t), MPI_BYTE, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(cf_inst_op, 1, &op);
    PMPI_Allreduce(MPI_IN_PLACE, inst, (int)nu, t, op, cf_g.tool_comm);
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);

    /* the per-rank trace: the first sampled instances, global times */
    uint32_t ntrace = n < cf_g.cfg.trace ? n : cf_g.cfg.trace;
    double *tr = calloc((size_t)ntrace * 6 + 1, sizeof(double));
    uint32_t kept = 0;
    for (uint32_t j = 0; j < n; j++) {
        const cf_csample_t *s = &cf_samples.coll[j];
        int i = cf_find_u64(u, nu, (uint64_t)s->comm_id << 32 | s->seq);
        if (i < 0 || inst[i].count != s->comm_size) {
            res->coll_incomplete++;
            continue;
        }
        double enter = g_enter[j];
        double leave = cf_global_ns(cf_local_ns(s->leave));
        double late;
        switch (cf_sync_kind(s->key)) {
        case CF_SYNC_ROOT_FIRST: late = s->root_world == cf_g.world_rank ? enter : inst[i].root; break;
        case CF_SYNC_ROOT_LAST: late = s->root_world == cf_g.world_rank ? inst[i].last : enter; break;
        default: late = inst[i].last; break;
        }
        double start = late > enter ? late : enter;
        if (start > leave)
            start = leave;
        double wait = start - enter, xfer = leave - start;
        cf_xfer_add(&res->xfer, s->key, xfer, wait);
        res->wait_ns += wait;
        res->xfer_ns += xfer;
        res->coll_used++;
        if (tr && kept < ntrace) {
            double *e = &tr[(size_t)kept++ * 6];
            e[0] = (double)s->comm_id;
            e[1] = (double)s->seq;
            e[2] = (double)cf_key_op(s->key);
            e[3] = (enter - origin_ns) * 1e-9;
            e[4] = (leave - origin_ns) * 1e-9;
            e[5] = wait * 1e-9;
        }
    }

    /* the trace goes to rank 0 in this rank's report, bounded by COMMFIT_TRACE */
    keep->rows = tr;
    keep->n = tr ? kept : 0;
    if (cf_g.world_rank == 0)
        cf_collectives_json(res, u, nu, inst);
out:
    free(u);
    free(inst);
    free(g_enter);
    return !failed;
}

/* messages: sends travel to their receiver, which pairs them by channel and
 * sequence number and computes receive completion - send post for the
 * receives posted before the send */
/* the tag of the samples' messages on the profiler's own communicator */
#define CF_SAMPLES_TAG 4243
typedef struct {
    uint64_t key;
    double post; /* global ns */
    uint32_t comm_id, seq;
    int32_t src, tag;
    uint32_t bin, pad;
} cf_wire_send_t;

/* a message's place: its stream (channel and size bin), then its number in it */
typedef struct {
    uint32_t comm;
    int32_t src, tag;
    uint32_t bin, seq;
} cf_msg_id_t;

static int cf_cmp_msg(cf_msg_id_t a, cf_msg_id_t b)
{
    if (a.comm != b.comm)
        return a.comm < b.comm ? -1 : 1;
    if (a.src != b.src)
        return a.src < b.src ? -1 : 1;
    if (a.tag != b.tag)
        return a.tag < b.tag ? -1 : 1;
    if (a.bin != b.bin)
        return a.bin < b.bin ? -1 : 1;
    return a.seq < b.seq ? -1 : a.seq > b.seq;
}

static cf_msg_id_t cf_send_id(const cf_wire_send_t *x)
{
    return (cf_msg_id_t){x->comm_id, x->src, x->tag, x->bin, x->seq};
}

static cf_msg_id_t cf_recv_id(const cf_psample_t *x)
{
    return (cf_msg_id_t){x->comm_id, x->src, x->tag, x->bin, x->seq};
}

static int cf_cmp_send(const void *a, const void *b)
{
    return cf_cmp_msg(cf_send_id(a), cf_send_id(b));
}

static int cf_cmp_recv(const void *a, const void *b)
{
    return cf_cmp_msg(cf_recv_id(a), cf_recv_id(b));
}

static int cf_cmp_dst(const void *a, const void *b)
{
    const cf_psample_t *x = a, *y = b;
    return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Whether a receive record's completion is the end of the call itself. */
static int cf_blocking_recv(uint64_t key)
{
    const char *name = cf_layer_op_name(CF_LAYER_MPI, cf_key_op(key));
    if (name == NULL || strncmp(name, "MPI_", 4) != 0)
        return 0;
    return !(name[4] == 'I' && name[5] >= 'a' && name[5] <= 'z') && strstr(name, "_init") == NULL &&
           strcmp(name, "MPI_Start") != 0 && strcmp(name, "MPI_Startall") != 0;
}

/* The sampled messages this rank received go to rank 0 for commfit trace,
 * the first COMMFIT_TRACE of them: rows of CF_MSG_FIELDS doubles. */
#define CF_MSG_FIELDS 10

/* Rank 0: the trace's messages, which the ranks' reports fill. */
static void cf_messages_json(cf_sample_result_t *res)
{
    if (res->trace == NULL)
        res->trace = json_pack("{s:s}", "time_origin", "seconds since rank 0 entered MPI_Init, on rank 0's clock");
    json_object_set_new(res->trace, "message_columns",
                        json_pack("[s,s,s,s,s,s,s,s,s,s,s]", "src", "dst", "comm", "tag", "size_lo", "send_op",
                                  "recv_op", "send_post_s", "recv_post_s", "recv_done_s", "receive_late"));
    json_object_set_new(res->trace, "messages", json_array());
}

/* The messages' buffers, taken before the collectives' union so that
 * their check of memory rides on it. */
typedef struct {
    int *scount; /* samples to each rank */
    MPI_Request *rq;
    cf_wire_send_t *out;
} cf_msg_bufs_t;

static int cf_msg_bufs(cf_msg_bufs_t *b)
{
    uint32_t ns = atomic_load(&cf_samples.nsent);
    if (ns > cf_samples.cap)
        ns = cf_samples.cap;
    b->scount = calloc((size_t)cf_g.world_size, sizeof(int));
    b->rq = calloc((size_t)cf_g.world_size, sizeof(MPI_Request));
    b->out = malloc(((size_t)ns + 1) * sizeof(*b->out));
    return b->scount && b->rq && b->out;
}

/* The sampled messages, with the buffers b (freed here); ok: every rank
 * has its buffers (agreed). */
static void cf_messages(cf_sample_result_t *res, double origin_ns, cf_rows_t *keep, cf_msg_bufs_t *b, int ok)
{
    int p = cf_g.world_size;
    uint32_t ns = atomic_load(&cf_samples.nsent), nr = atomic_load(&cf_samples.nrecvd);
    if (ns > cf_samples.cap)
        ns = cf_samples.cap;
    if (nr > cf_samples.cap)
        nr = cf_samples.cap;
    /* scount: samples to each rank; then, from the reduction, how many
     * this rank receives */
    int *scount = b->scount, nrecv = 0, nto = 0;
    MPI_Request *rq = b->rq;
    cf_wire_send_t *out = b->out, *in = NULL;
    if (!ok)
        goto out;
    qsort(cf_samples.sent, ns, sizeof(cf_psample_t), cf_cmp_dst);
    for (uint32_t i = 0; i < ns; i++) {
        const cf_psample_t *s = &cf_samples.sent[i];
        out[i] = (cf_wire_send_t){.key = s->key, .post = cf_global_ns(cf_local_ns(s->post)), .comm_id = s->comm_id,
                                  .seq = s->seq, .src = s->src, .tag = s->tag, .bin = s->bin};
        if (s->dst >= 0 && s->dst < p)
            scount[s->dst]++;
    }
    /* A rank sends its samples to the few ranks it sent messages to, not
     * an all-to-all (P steps with every rank taking part, each a turn of
     * the scheduler on an oversubscribed node): a reduction tells each
     * rank how many samples come to it, then they come as messages. */
    PMPI_Reduce_scatter_block(scount, &nrecv, 1, MPI_INT, MPI_SUM, cf_g.tool_comm);
    in = malloc(((size_t)nrecv + 1) * sizeof(cf_wire_send_t));
    if (!cf_all_ok(in != NULL))
        goto out;
    /* out is sorted by destination: its runs go out in rank order */
    size_t off = 0;
    while (off < ns && cf_samples.sent[off].dst < 0)
        off++;
    for (int r = 0; r < p; off += (size_t)scount[r++])
        if (scount[r] > 0)
            PMPI_Isend(out + off, scount[r] * (int)sizeof(cf_wire_send_t), MPI_BYTE, r, CF_SAMPLES_TAG,
                       cf_g.tool_comm, &rq[nto++]);
    size_t nin = 0;
    while (nin < (size_t)nrecv) {
        MPI_Status st;
        int n = 0;
        if (PMPI_Probe(MPI_ANY_SOURCE, CF_SAMPLES_TAG, cf_g.tool_comm, &st) != MPI_SUCCESS ||
            PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n <= 0 || n % (int)sizeof(cf_wire_send_t) != 0 ||
            nin + (size_t)n / sizeof(cf_wire_send_t) > (size_t)nrecv)
            break; /* not seen: the counts are the sum of these very sends */
        PMPI_Recv(in + nin, n, MPI_BYTE, st.MPI_SOURCE, CF_SAMPLES_TAG, cf_g.tool_comm, MPI_STATUS_IGNORE);
        nin += (size_t)n / sizeof(cf_wire_send_t);
    }
    for (int i = 0; i < nto; i++) /* not Waitall: MPICH's MPI_STATUSES_IGNORE is no array GCC can bound */
        PMPI_Wait(&rq[i], MPI_STATUS_IGNORE);
    qsort(in, nin, sizeof(*in), cf_cmp_send);
    qsort(cf_samples.recvd, nr, sizeof(cf_psample_t), cf_cmp_recv);
    size_t i = 0, j = 0;
    uint32_t ntrace = nr < cf_g.cfg.trace ? nr : cf_g.cfg.trace, kept = 0;
    double *rows = calloc((size_t)ntrace * CF_MSG_FIELDS + 1, sizeof(double));
    while (i < nin && j < nr) {
        const cf_psample_t *r = &cf_samples.recvd[j];
        int c = cf_cmp_msg(cf_send_id(&in[i]), cf_recv_id(r));
        if (c < 0) {
            i++;
            res->p2p_unmatched++;
        } else if (c > 0) {
            j++;
            res->p2p_unmatched++;
        } else {
            double rpost = cf_global_ns(cf_local_ns(r->post)), done = cf_global_ns(cf_local_ns(r->done));
            double one_way = done - in[i].post;
            /* the receiver waited for a late sender as long as the send came after its post */
            double wait = in[i].post - rpost;
            /* A receive posted after the send cannot tell when the message
             * arrived: done - its own post is only the local match (90 ns
             * for a 1 KiB ping-pong on shared memory whose send outlasts the
             * reply), done - the send's post holds the receiver's delay.
             * Only a receive already waiting times the message. */
            if (rows != NULL && kept < ntrace) {
                double *e = &rows[(size_t)kept++ * CF_MSG_FIELDS];
                e[0] = in[i].src;
                e[1] = r->comm_id;
                e[2] = r->tag;
                e[3] = r->bin;
                e[4] = cf_key_op(in[i].key);
                e[5] = cf_key_op(r->key);
                e[6] = (in[i].post - origin_ns) * 1e-9;
                e[7] = (rpost - origin_ns) * 1e-9;
                e[8] = (done - origin_ns) * 1e-9;
                e[9] = rpost > in[i].post;
            }
            if (rpost > in[i].post) {
                res->p2p_late_recv++;
            } else {
                if (one_way < 0)
                    one_way = 0;
                cf_xfer_add(&res->xfer, r->key, one_way, wait);
                /* the sender's record gets the time too, unless it is the same
                 * record (MPI_Sendrecv on both sides), or the receive was
                 * nonblocking: its completion is seen only when the program
                 * waits, after whatever it did in between (its own sends), so
                 * the time is the receive's span, not the message's */
                if (in[i].key != r->key && cf_blocking_recv(r->key))
                    cf_xfer_add(&res->xfer, in[i].key, one_way, 0);
            }
            res->p2p_matched++;
            i++;
            j++;
        }
    }
    res->p2p_unmatched += (nin - i) + (nr - j);
    keep->rows = rows;
    keep->n = rows ? kept : 0;
    if (cf_g.world_rank == 0)
        cf_messages_json(res);
out:
    free(scount);
    free(rq);
    free(out);
    free(in);
}

/* Each rank's report to rank 0, one message: its counts and its clock,
 * then its trace rows (ncoll of 6 doubles, nmsg of CF_MSG_FIELDS).  One
 * message a rank replaces the counts' reduction, the clocks' gather and a
 * gather of counts and one of rows for each trace: on an oversubscribed
 * node each collective is a turn of every rank. */
#define CF_REPORT_TAG 4244
typedef struct {
    uint64_t counts[6]; /* as cf_report_counts orders them */
    double clock[4];    /* offset at init and at finalize, error, time between (ns) */
    uint32_t ncoll, nmsg;
    uint32_t short_of, pad; /* rows kept that did not come (no memory to send them) */
} cf_report_t;

static void cf_report_counts(const cf_sample_result_t *res, uint64_t c[6])
{
    c[0] = res->coll_used;
    c[1] = res->coll_incomplete;
    c[2] = res->p2p_matched;
    c[3] = res->p2p_unmatched;
    c[4] = res->lost;
    c[5] = res->p2p_late_recv;
}

/* Rank 0's running sums over the reports, and the clock section's parts. */
typedef struct {
    uint64_t sums[6];
    double max_off, max_drift, max_err;
    json_t *clocks;
} cf_report_sum_t;

/* Rank 0: rank r's report h, with its rows of collectives (crows, h->ncoll
 * of them) and of messages (mrows, h->nmsg); NULL: none. */
static void cf_report_take(cf_sample_result_t *res, cf_report_sum_t *sum, int r, const cf_report_t *h,
                           const double *crows, const double *mrows)
{
    for (int k = 0; k < 6; k++)
        sum->sums[k] += h->counts[k];
    const double *a = h->clock;
    double drift = a[3] > 0 ? (a[1] - a[0]) / a[3] : 0;
    sum->max_off = fmax(sum->max_off, fmax(fabs(a[0]), fabs(a[1])));
    sum->max_drift = fmax(sum->max_drift, fabs(drift));
    sum->max_err = fmax(sum->max_err, a[2]);
    json_array_append_new(sum->clocks, json_pack("{s:i, s:f, s:f, s:f, s:f}", "rank", r, "offset_init_s", a[0] * 1e-9,
                                                 "offset_final_s", a[1] * 1e-9, "drift", drift, "error_s",
                                                 a[2] * 1e-9));
    json_t *coll = json_object_get(res->trace, "collectives"), *msgs = json_object_get(res->trace, "messages");
    for (uint32_t k = 0; coll && crows && k < h->ncoll; k++) {
        const double *e = &crows[(size_t)k * 6];
        json_array_append_new(coll, json_pack("[i, I, I, s, f, f, f]", r, (json_int_t)e[0], (json_int_t)e[1],
                                              cf_layer_op_name(CF_LAYER_MPI, (unsigned)e[2]), e[3], e[4], e[5]));
    }
    for (uint32_t k = 0; msgs && mrows && k < h->nmsg; k++) {
        const double *e = &mrows[(size_t)k * CF_MSG_FIELDS];
        json_array_append_new(msgs, json_pack("[I, i, I, I, I, s, s, f, f, f, b]", (json_int_t)e[0], r,
                                              (json_int_t)e[1], (json_int_t)e[2],
                                              (json_int_t)cf_size_bin_lo((unsigned)e[3]),
                                              cf_layer_op_name(CF_LAYER_MPI, (unsigned)e[4]),
                                              cf_layer_op_name(CF_LAYER_MPI, (unsigned)e[5]), e[6], e[7], e[8],
                                              e[9] != 0));
    }
}

/* The reports: every rank's goes to rank 0, which takes them in rank
 * order into rbuf, of rcap bytes.  rows_max: the rows of each kind a
 * report may carry, rank 0's (its buffer's) for every rank, agreed with
 * the origin's broadcast; 0: none.  Returns 0 where rows some rank kept did
 * not all reach rank 0 (its trace is then left out), 1 otherwise. */
static int cf_reports(cf_sample_result_t *res, cf_rows_t *coll, cf_rows_t *msg, void *rbuf, size_t rcap,
                      uint32_t rows_max)
{
    cf_report_t h = {.clock = {cf_sync.init.offset_ns, cf_sync.fin.offset_ns,
                               fmax(cf_sync.init.err_ns, cf_sync.fin.err_ns),
                               cf_sync.fin.local_ns - cf_sync.init.local_ns}};
    cf_report_counts(res, h.counts);
    /* a rank's own COMMFIT_TRACE and COMMFIT_SAMPLES may be larger than
     * rank 0's: never more rows than its buffer holds */
    h.ncoll = coll->n < rows_max ? coll->n : rows_max;
    h.nmsg = msg->n < rows_max ? msg->n : rows_max;
    size_t nrow = (size_t)h.ncoll * 6 + (size_t)h.nmsg * CF_MSG_FIELDS;
    if (cf_g.world_rank != 0) {
        unsigned char *out = nrow ? malloc(sizeof(h) + nrow * sizeof(double)) : NULL;
        if (out == NULL) { /* no rows, or no memory for them: the counts and the clock alone */
            h.short_of = nrow > 0;
            h.ncoll = h.nmsg = 0;
            PMPI_Send(&h, (int)sizeof(h), MPI_BYTE, 0, CF_REPORT_TAG, cf_g.tool_comm);
            return 1;
        }
        memcpy(out, &h, sizeof(h));
        memcpy(out + sizeof(h), coll->rows, (size_t)h.ncoll * 6 * sizeof(double));
        memcpy(out + sizeof(h) + (size_t)h.ncoll * 6 * sizeof(double), msg->rows,
               (size_t)h.nmsg * CF_MSG_FIELDS * sizeof(double));
        PMPI_Send(out, (int)(sizeof(h) + nrow * sizeof(double)), MPI_BYTE, 0, CF_REPORT_TAG, cf_g.tool_comm);
        free(out);
        return 1;
    }
    cf_report_sum_t sum = {.clocks = json_array()};
    int whole = 1;
    cf_report_take(res, &sum, 0, &h, coll->rows, msg->rows);
    for (int r = 1; r < cf_g.world_size; r++) {
        cf_report_t in;
        MPI_Status st;
        int n = 0;
        void *buf = rbuf ? rbuf : (void *)&in;
        PMPI_Recv(buf, rbuf ? (int)rcap : (int)sizeof(in), MPI_BYTE, r, CF_REPORT_TAG, cf_g.tool_comm, &st);
        if (PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS || n < (int)sizeof(in)) {
            whole = 0; /* not seen: every rank sends its header */
            continue;
        }
        memcpy(&in, buf, sizeof(in));
        size_t rows = (size_t)in.ncoll * 6 + (size_t)in.nmsg * CF_MSG_FIELDS;
        int ok = rbuf && in.ncoll <= rows_max && in.nmsg <= rows_max && (size_t)n <= rcap &&
                 (size_t)n == sizeof(in) + rows * sizeof(double);
        whole = whole && (ok || rows == 0) && !in.short_of;
        if (!ok)
            in.ncoll = in.nmsg = 0;
        const double *crows = ok ? (const double *)((unsigned char *)rbuf + sizeof(in)) : NULL;
        cf_report_take(res, &sum, r, &in, crows, crows ? crows + (size_t)in.ncoll * 6 : NULL);
    }
    res->coll_used = sum.sums[0];
    res->coll_incomplete = sum.sums[1];
    res->p2p_matched = sum.sums[2];
    res->p2p_unmatched = sum.sums[3];
    res->lost = sum.sums[4];
    res->p2p_late_recv = sum.sums[5];
    res->clock = json_pack("{s:s, s:s, s:f, s:f, s:f, s:o}", "timer", cf_clock_timer_name(), "method",
                           "min-RTT ping-pong down a binomial tree at init and finalize, linear interpolation",
                           "max_abs_offset_s", sum.max_off * 1e-9, "max_drift", sum.max_drift, "est_error_s",
                           sum.max_err * 1e-9, "ranks", sum.clocks);
    return whole;
}

int cf_samples_finalize(cf_sample_result_t *res)
{
    memset(res, 0, sizeof(*res));
    int ok = cf_table_init(&res->xfer, cf_g.cfg.table_size * 2) == CF_OK;
    /* the sample buffers exist on every rank or on none (agreed at init) */
    if (!cf_all_ok(ok)) {
        if (ok)
            cf_table_fini(&res->xfer);
        return CF_ERR_NOMEM;
    }
    cf_sync_rate();
    cf_sync_measure(&cf_sync.fin);
    /* rank 0's buffer for one rank's report, the largest there can be (a
     * rank keeps no more rows of each kind than COMMFIT_TRACE nor than its
     * samples): the broadcast of the time origin (rank 0's local time at
     * init, on its own, reference, clock) says whether the ranks send rows */
    size_t rows_max = cf_g.cfg.trace < cf_samples.cap ? cf_g.cfg.trace : cf_samples.cap;
    size_t rcap = sizeof(cf_report_t) + rows_max * (6 + CF_MSG_FIELDS) * sizeof(double);
    void *rbuf = NULL;
    double head[2] = {cf_sync.init.local_ns, (double)rows_max};
    if (cf_g.world_rank == 0 && cf_g.world_size > 1 && (rcap > INT_MAX || (rbuf = malloc(rcap)) == NULL))
        head[1] = 0;
    PMPI_Bcast(head, 2, MPI_DOUBLE, 0, cf_g.tool_comm);
    cf_rows_t coll = {0}, msg = {0};
    if (cf_samples.coll) {
        cf_msg_bufs_t mb;
        int mok = cf_msg_bufs(&mb), agreed = cf_collectives(res, head[0], &coll, !mok);
        cf_messages(res, head[0], &msg, &mb, agreed < 0 ? cf_all_ok(mok) : agreed);
    }
    res->lost = atomic_load(&cf_samples.lost);
    int whole = cf_reports(res, &coll, &msg, rbuf, rcap, (uint32_t)head[1]);
    if ((!whole || (head[1] == 0 && rows_max > 0)) && res->trace) {
        /* some rank's rows did not come (rank 0 had no room for them, a
         * rank none to send them): no trace rather than a part of it */
        json_decref(res->trace);
        res->trace = NULL;
    }
    free(rbuf);
    free(coll.rows);
    free(msg.rows);
    return CF_OK;
}

void cf_memo_fill(cf_thread_t *t, cf_site_t *s, cf_comm_t *c, MPI_Datatype type, int64_t count, int dest, int tag,
                  uint64_t key, uint64_t nb, int world, unsigned need)
{
    cf_memo_t m = {.comm = c, .type = (uintptr_t)type, .count = count, .dest = dest, .tag = tag, .key = key,
                   .nb = nb, .world = world, .chan = CF_MEMO_NONE, .peer = CF_MEMO_NONE};
    if (cf_g.cfg.site_depth != 1 || !c)
        return;
    /* a live memo that this call did not match: the site's calls vary (a
     * halo exchange's neighbours in turn, sizes in turn), and a refill at
     * each would cost every such call the lookups below; refilled at one of
     * the site's calls in CF_MEMO_REFILL (cf_site.h), a site whose calls
     * changed for good takes its new memo within as many calls */
    if (s->one.memo.gen == atomic_load_explicit(&cf_memo_gen, memory_order_relaxed) &&
        (s->calls & (CF_MEMO_REFILL - 1)) != 0)
        return;
    /* what the full path found or took for this call; anything it could not
     * (a table without room) keeps the calls on the full path */
    m.rec = (cf_stat_t *)cf_table_find(&t->table, key);
    if (!m.rec && (need & CF_MEMO_REC))
        return;
    int msg = world >= 0 && (need & CF_MEMO_MSG);
    if (msg && t->peer) {
        uint64_t k = (uint64_t)cf_key_comm(key) << 32 | ((uint32_t)world + 1);
        if (t->peer[t->peer_last].key != k)
            return;
        m.peer = (uint16_t)t->peer_last;
    }
    if (msg && cf_samples.sent) {
        uint32_t i = cf_chan_find(t, cf_chan_key(cf_key_comm(key), world, tag, 0, cf_key_bin(key)));
        if (i == UINT32_MAX)
            return;
        m.chan = (uint16_t)i;
    }
    /* the generation before the region: a region changed since is either
     * seen here or moves the generation past the one kept */
    m.gen = atomic_load_explicit(&cf_memo_gen, memory_order_acquire);
    if (cf_key_region(key) != (atomic_load_explicit(&cf_g.region, memory_order_acquire) & CF_REGION_MASK))
        return;
    s->one.memo = m;
}

/* The slot of a new matrix peer, for cf_peer_count (cf_sample.h): the
 * table is filled on the hot path here and read at finalize by the matrix
 * module (cf_matrix.c). */
uint32_t cf_peer_slot(cf_thread_t *t, uint64_t key)
{
    uint32_t mask = CF_PEERS - 1, i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 54) & mask;
    for (unsigned n = 0; n < 64; n++, i = (i + 1) & mask) {
        if (t->peer[i].key == 0)
            t->peer[i].key = key;
        if (t->peer[i].key == key) {
            t->peer_last = i;
            return i;
        }
    }
    return UINT32_MAX;
}
