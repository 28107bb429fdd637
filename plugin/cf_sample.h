/* Deterministic sampling of collective instances and point-to-point
 * messages, for the wait/transfer split and one-way message times.
 *
 * Every rank samples the same instances without talking: a collective by
 * its sequence number on the communicator, a message by its sequence number
 * in its stream (communicator, sender, receiver, tag, size bin), which MPI's
 * non-overtaking rule makes identical on both sides.  The size bin is that of
 * the message itself, which the receiver knows from the status when it
 * counts the message (at completion), so a receive posted for any source
 * or a larger count does not matter; every size bin gets its own first
 * samples.  Collectives stay per communicator: the payload a rank records
 * for one instance can differ between ranks (v-variants, rooted calls), so
 * a per-bin count would not name the same instance everywhere.  Samples go
 * to fixed buffers; when one is full the rest is not sampled (and the
 * profile says so, in job.partial_reasons). */
#ifndef CF_SAMPLE_H
#define CF_SAMPLE_H

#include <jansson.h>
#include "cf_runtime.h"

#define CF_SAMPLE_FIRST 64 /* the first instances of every stream are all sampled */

typedef struct {
    uint64_t key;          /* the stats key of the call */
    uint64_t enter, leave; /* ticks */
    uint32_t comm_id, seq;
    int32_t root_world; /* -1 for collectives without a root */
    int32_t comm_size;
} cf_csample_t;

typedef struct {
    uint64_t key;
    uint64_t post, done; /* ticks; done is 0 on the sending side */
    uint32_t comm_id, seq;
    int32_t src, dst, tag; /* world ranks */
    uint32_t bin;          /* size bin of the message */
} cf_psample_t;

typedef struct {
    cf_csample_t *coll;
    cf_psample_t *sent, *recvd;
    uint32_t cap;
    _Atomic uint32_t ncoll, nsent, nrecvd;
    _Atomic uint64_t lost; /* sampled but no room */
    uint64_t mask;         /* sample 1 in mask + 1 after the first ones */
} cf_samples_t;

CF_HIDDEN extern cf_samples_t cf_samples;

/* The rule, per stream: its first CF_SAMPLE_FIRST calls, then two
 * consecutive calls in each block of 2P consecutive sequence numbers
 * (blocks aligned to 2P), at the offset a mix of the block's first number
 * gives: 1 in P, in pairs, whose gap is the program's time between two
 * calls (cf_advice.c's call_gap_s).  P is mask + 1 and,
 * past CF_SAMPLE_CAP_FROM calls of a stream, at least its octave /
 * CF_SAMPLE_PER_OCTAVE: a stream of millions of calls (NetPIPE repeats 2.4
 * M messages of one size) would otherwise fill the buffers before later
 * sizes are reached, and one sample would stand for a million calls of
 * those.  Below it, streams keep their hundreds of samples, among which
 * the first ones (a size's warm-up) weigh little.  Deterministic in the
 * sequence number, so every rank picks the same instances; a pair per
 * block at a mixed offset, so that a stride cannot alias with the program's own
 * period (a training step of 50 all-reduces, weights and biases
 * alternating, sampled every 16th would time only the weights), and the
 * count chosen is exact (no runs or gaps of a coin's).  A stream keeps the
 * next number it chooses: a call compares its number to it, and only a
 * chosen call (or one the count passed unrecorded) works out the next. */
#define CF_SAMPLE_CAP_FROM 4096
#define CF_SAMPLE_PER_OCTAVE 32
/* splitmix64's finalizer: every bit of seq reaches the low bits */
static inline uint64_t cf_sample_mix(uint64_t seq)
{
    uint64_t z = seq * UINT64_C(0x9E3779B97F4A7C15);
    z ^= z >> 29;
    z *= UINT64_C(0xBF58476D1CE4E5B9);
    return z ^ (z >> 32);
}
/* The first sequence number from seq on that the rule chooses (cf_sample.c). */
CF_HIDDEN uint64_t cf_sample_from(uint64_t seq);

/* Whether message number ch->seq of a stream is chosen, and the count moved
 * on; the next choice is worked out out of line, after a chosen one. */
CF_HIDDEN int cf_chan_chose(cf_chan_t *ch, uint32_t seq);
CF_HOT int cf_chan_pick(cf_chan_t *ch)
{
    uint32_t seq = ch->seq;
    ch->seq = seq + 1;
    return __builtin_expect(seq >= ch->next, 0) ? cf_chan_chose(ch, seq) : 0;
}

CF_HIDDEN void cf_coll_sample_slow(cf_thread_t *t, cf_comm_t *c, uint64_t key, int root, uint64_t seq, uint64_t t0,
                                   uint64_t t1);
/* The key of a message stream (communicator, peer's world rank, tag,
 * direction, size bin) in the thread's stream table, and its first slot. */
static inline uint64_t cf_chan_key(uint32_t comm_id, int peer_world, int tag, int dir, unsigned bin)
{
    uint64_t k = ((uint64_t)comm_id << 32) ^ ((uint64_t)(uint32_t)peer_world << 1) ^
                 ((uint64_t)(uint32_t)tag * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(bin + 1) * 0xC2B2AE3D27D4EB4Full) ^
                 (uint64_t)dir;
    return k | UINT64_C(1) << 63; /* never 0, the empty marker */
}
static inline uint32_t cf_chan_hash(uint64_t k)
{
    return (uint32_t)((k * 0xff51afd7ed558ccdull) >> 40) & (CF_CHANNELS - 1);
}
/* cf_chan_of a stream not in the last slot of its direction nor in its
 * first one: the probe, which takes the slot if new (cf_sample.c). */
CF_HIDDEN cf_chan_t *cf_chan_walk(cf_thread_t *t, uint64_t k, int dir);
/* A message stream's count, NULL when the table has no room for it (not
 * sampled on this side).  Most codes talk to the same partner again and
 * again: the last stream of each direction is remembered; a stream seen
 * before is most often at its first slot.  Both inline, the rest out of
 * line. */
CF_HOT cf_chan_t *cf_chan_of(cf_thread_t *t, uint32_t comm_id, int peer_world, int tag, int dir, unsigned bin)
{
    uint64_t k = cf_chan_key(comm_id, peer_world, tag, dir, bin);
    if (t->chan_last_key[dir] == k)
        return &t->chan[t->chan_last_slot[dir]];
    uint32_t i = cf_chan_hash(k);
    if (__builtin_expect(t->chan_key[i] != k, 0))
        return cf_chan_walk(t, k, dir);
    t->chan_last_key[dir] = k;
    t->chan_last_slot[dir] = i;
    return &t->chan[i];
}
CF_HIDDEN void cf_p2p_sample(int dir, uint64_t key, uint32_t comm_id, int src, int dst, int tag, unsigned bin,
                             uint64_t seq, uint64_t post, uint64_t done);
CF_HIDDEN cf_elig_t *cf_elig_slot(cf_thread_t *t, uint64_t key);

/* One more call of record key was considered for sampling (and chosen or
 * not).  Calls repeat their record, or alternate between two (the sends
 * and the receives of an exchange): the last two records looked up are
 * kept, and checked in turn, with no stores while the two alternate. */
CF_HOT void cf_elig_note(cf_thread_t *t, uint64_t key, int selected)
{
    cf_elig_t *e = &t->elig[t->elig_last];
    if (__builtin_expect(e->key != key, 0)) {
        e = &t->elig[t->elig_prev];
        if (e->key != key && !(e = cf_elig_slot(t, key)))
            return;
    }
    e->eligible++;
    /* a branch, not an add: the two adds together are made one vector add,
     * longer than the add and the test of a choice that is rarely made */
    if (__builtin_expect(selected != 0, 0))
        e->selected++;
}

/* A blocking collective returned.  Every one with a communicator is
 * eligible: its record's calls are its eligible count (cf_merge.c), and
 * only a chosen one is noted. */
/* Counts an instance on c, its number in *seq_p: whether the rule chooses
 * it.  Collectives on one communicator are issued in one order (MPI
 * rule), so the sequence number needs no atomic increment. */
CF_HOT int cf_coll_count(cf_comm_t *c, uint64_t *seq_p)
{
    uint64_t seq = atomic_load_explicit(&c->seq, memory_order_relaxed);
    atomic_store_explicit(&c->seq, seq + 1, memory_order_relaxed);
    *seq_p = seq;
    return seq >= atomic_load_explicit(&c->sample_next, memory_order_relaxed);
}
CF_HOT void cf_coll_sample(cf_thread_t *t, cf_comm_t *c, uint64_t key, int root, uint64_t t0, uint64_t t1)
{
    uint64_t seq;
    if (c && __builtin_expect(cf_coll_count(c, &seq), 0))
        cf_coll_sample_slow(t, c, key, root, seq, t0, t1);
}

/* A blocking collective passed through unrecorded (recording switched off
 * on this rank, or a thread beyond the budget): its instance still counts,
 * or this rank's sequence numbers would name other instances than its
 * peers' do. */
static inline void cf_coll_passed(MPI_Comm comm)
{
    if (atomic_load_explicit(&cf_g.state, memory_order_relaxed) != 1)
        return;
    cf_comm_t *c = cf_comm_find(comm);
    if (c)
        atomic_fetch_add_explicit(&c->seq, 1, memory_order_relaxed);
}

CF_HOT int cf_world_of(const cf_comm_t *c, int rank)
{
    return c && c->world && rank >= 0 && rank < c->size ? c->world[rank] : -1;
}

/* The slot of a new matrix peer (cf_sample.c). */
CF_HIDDEN uint32_t cf_peer_slot(cf_thread_t *t, uint64_t key);

/* One message of bytes to world rank peer on communicator comm_id, for the
 * communication matrix (flag: 0, or CF_PEER_UCX): most codes send to the
 * same partner again and again (the last slot). */
CF_HOT void cf_peer_count(cf_thread_t *t, uint32_t comm_id, int peer, uint32_t flag, uint64_t bytes)
{
    uint64_t k = (uint64_t)comm_id << 32 | (((uint32_t)peer + 1) | flag);
    uint32_t i = t->peer_last;
    if (t->peer == NULL)
        return;
    if (t->peer[i].key != k && (i = cf_peer_slot(t, k)) == UINT32_MAX) {
        t->peer_full++;
        return;
    }
    cf_peer_t *p = &t->peer[i];
    p->msgs++;
    CF_OPAQUE(p);
    p->bytes += bytes;
}

/* A message of bytes was sent to world rank peer (posted at t_post), under
 * record key.  note = 0 leaves the call uncounted in the record's eligible
 * calls (MPI_Sendrecv counts its call once, on the receiving side). */
CF_HOT void cf_p2p_sent(cf_thread_t *t, uint32_t comm_id, int peer, int tag, uint64_t key, uint64_t bytes,
                               uint64_t t_post, int note)
{
    if (peer < 0)
        return;
    cf_peer_count(t, comm_id, peer, 0, bytes);
    if (!cf_samples.sent)
        return;
    unsigned bin = cf_size_bin(bytes);
    cf_chan_t *ch = cf_chan_of(t, comm_id, peer, tag, 0, bin);
    int pick = ch && cf_chan_pick(ch);
    if (note)
        cf_elig_note(t, key, pick);
    if (pick)
        cf_p2p_sample(0, key, comm_id, cf_g.world_rank, peer, tag, bin, ch->seq - 1, t_post, 0);
}

/* A message of bytes (from the status) from world rank src completed a
 * receive posted at t_post. */
CF_HOT void cf_p2p_received(cf_thread_t *t, uint32_t comm_id, int src, int tag, uint64_t key, uint64_t bytes,
                                   uint64_t t_post, uint64_t t_done)
{
    if (src < 0 || !cf_samples.recvd)
        return;
    unsigned bin = cf_size_bin(bytes);
    cf_chan_t *ch = cf_chan_of(t, comm_id, src, tag, 1, bin);
    int pick = ch && cf_chan_pick(ch);
    cf_elig_note(t, key, pick);
    if (pick)
        cf_p2p_sample(1, key, comm_id, src, cf_g.world_rank, tag, bin, ch->seq - 1, t_post, t_done);
}

CF_HIDDEN int cf_samples_init(void);
CF_HIDDEN void cf_samples_free(void);

/* Results of the analysis at finalize, for the profile (rank 0). */
typedef struct {
    cf_table_t xfer;    /* per key: calls = samples, t_sum/hist = transfer, t_wait = wait (ns) */
    double wait_ns, xfer_ns; /* this rank's totals over sampled calls */
    uint64_t coll_used, coll_incomplete, p2p_matched, p2p_unmatched, lost;
    uint64_t p2p_late_recv; /* matched, but the receive was posted after the send: not timed */
    json_t *late;     /* rank 0: last arrivals per communicator */
    json_t *trace;    /* rank 0: sampled instances with times, for commfit trace */
    json_t *clock;    /* rank 0: the clock section */
} cf_sample_result_t;

/* Collective over world: clocks at finalize, instances, messages. */
CF_HIDDEN int cf_samples_finalize(cf_sample_result_t *res);

#endif
