/* Size bins, time histograms and the record key: the units every layer of
 * commfit counts in.  Bins are log-linear, computed with one count-leading-
 * zeros, so recording is constant time and merging is addition. */
#ifndef CF_BINS_H
#define CF_BINS_H

#include <stdint.h>
#include "cf_common.h"

/* ---- message-size bins: bin 0 holds 0 bytes, bin k holds [2^(k-1), 2^k) ---- */
#define CF_SIZE_BINS 65

static inline unsigned cf_size_bin(uint64_t bytes)
{
    return bytes ? 64u - (unsigned)__builtin_clzll(bytes) : 0u;
}
/* Bins past the last (a key read from a file) are held to it. */
static inline uint64_t cf_size_bin_lo(unsigned bin)
{
    return bin == 0 ? 0 : (uint64_t)1 << (bin < CF_SIZE_BINS ? bin - 1 : CF_SIZE_BINS - 2);
}
/* Inclusive upper bound of a bin. */
static inline uint64_t cf_size_bin_hi(unsigned bin)
{
    return bin == 0 ? 0 : bin >= 64 ? UINT64_MAX : ((uint64_t)1 << bin) - 1;
}

/* ---- time histogram: 8 sub-buckets per power of two (<= 6.25 % wide) ---- */
#define CF_HIST_SUB_BITS 3
#define CF_HIST_SUB (1u << CF_HIST_SUB_BITS)
#define CF_HIST_N 304 /* ticks up to 2^40 (about 18 min at 1 GHz) */

/* Below CF_HIST_SUB a bucket per tick; above, with s = msb - CF_HIST_SUB_BITS,
 * bucket (msb - CF_HIST_SUB_BITS + 1) * CF_HIST_SUB + the CF_HIST_SUB_BITS bits
 * under the msb, which is s * CF_HIST_SUB + (ticks >> s): the shifted value
 * keeps its leading bit, worth CF_HIST_SUB.  ticks | CF_HIST_SUB makes s 0
 * below CF_HIST_SUB, where the same sum is ticks: no branch, one clz. */
static inline unsigned cf_hist_bin(uint64_t ticks)
{
    unsigned s = 63u - CF_HIST_SUB_BITS - (unsigned)__builtin_clzll(ticks | CF_HIST_SUB);
    unsigned idx = s * CF_HIST_SUB + (unsigned)(ticks >> s);
    return idx < CF_HIST_N ? idx : CF_HIST_N - 1;
}
uint64_t cf_hist_bin_lo(unsigned idx);
uint64_t cf_hist_bin_width(unsigned idx);
/* Value at quantile q (0..1) of a histogram, as the midpoint of its bucket,
 * clamped to [min, max] so that single-valued data comes back exactly. */
double cf_hist_quantile(const uint32_t *hist, double q, double min, double max);

/* ---- record key ----
 * One 64-bit word, the same on every rank for the same thing:
 *   bits  0-6   size bin
 *   bits  7-8   path class
 *   bit   9     layer (0 MPI, 1 UCX)
 *   bits 10-18  operation index within the layer
 *   bits 19-31  region id (0: outside any region)
 *   bits 32-63  communicator id (MPI layer) / parent MPI operation (UCX layer)
 */
/* Communicator ids: world and self are fixed, the others are a hash of the
 * world ranks of their group and their creation order among equal groups. */
#define CF_COMM_ID_NONE 0u
#define CF_COMM_ID_WORLD 1u
#define CF_COMM_ID_SELF 2u
/* How a communicator was made ("split of world, colour 3") and the name the
 * program gave it (MPI_Comm_set_name; MPI_MAX_OBJECT_NAME is 64 in Open MPI
 * and MPICH), with their terminating NUL. */
#define CF_COMM_DESC_LEN 96
#define CF_COMM_USER_LEN 64

typedef enum { CF_PATH_SELF = 0, CF_PATH_INTRA = 1, CF_PATH_INTER = 2 } cf_path_t;
typedef enum { CF_LAYER_MPI = 0, CF_LAYER_UCX = 1 } cf_layer_t;
#define CF_REGION_BITS 13
#define CF_REGION_MASK ((1u << CF_REGION_BITS) - 1)

static inline uint64_t cf_key_make(unsigned layer, unsigned op, uint32_t comm, unsigned path,
                                   unsigned region, unsigned bin)
{
    return (uint64_t)bin | (uint64_t)path << 7 | (uint64_t)layer << 9 | (uint64_t)(op & 511u) << 10 |
           (uint64_t)(region & CF_REGION_MASK) << 19 | (uint64_t)comm << 32;
}
static inline unsigned cf_key_bin(uint64_t k) { return (unsigned)(k & 127u); }
static inline unsigned cf_key_path(uint64_t k) { return (unsigned)(k >> 7 & 3u); }
static inline unsigned cf_key_layer(uint64_t k) { return (unsigned)(k >> 9 & 1u); }
static inline unsigned cf_key_op(uint64_t k) { return (unsigned)(k >> 10 & 511u); }
static inline unsigned cf_key_region(uint64_t k) { return (unsigned)(k >> 19 & CF_REGION_MASK); }
static inline uint32_t cf_key_comm(uint64_t k) { return (uint32_t)(k >> 32); }

const char *cf_path_name(unsigned path);
int cf_path_from_name(const char *name);

/* ---- statistics of one key ---- */
typedef struct {
    uint64_t key;
    uint64_t calls;
    uint64_t bytes;
    uint64_t t_sum, t_min, t_max; /* clock ticks */
    uint64_t t_wait;              /* the sampler's transfer table: ns waiting for other ranks (sampled
                                   * instances); the records' table: ns blocked in Wait/Test charged
                                   * at completion (cf_record_t.blocked_s) */
    uint64_t t_post;              /* nonblocking operations: ns inside the calls that posted them */
    uint32_t hist[CF_HIST_N];
} cf_stat_t;

/* One more call in a bucket; a full one stays full.  On x86 a compare
 * with UINT32_MAX and an add of its carry, both on the bucket in memory:
 * two instructions, where GCC makes the C below a load, a compare, a set,
 * an add and a store. */
static inline void cf_hist_inc(uint32_t *bucket)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __asm__("cmpl $-1, %0\n\tadcl $0, %0" : "+m"(*bucket) : : "cc");
#else
    *bucket += *bucket != UINT32_MAX;
#endif
}

/* Branch-free where it can be (the hot path's record update): the record
 * had n calls, lo is the minimum to keep (UINT64_MAX before the first). */
static inline void cf_stat_add_to(cf_stat_t *s, uint64_t n, uint64_t lo, uint64_t bytes, uint64_t ticks)
{
    unsigned b = cf_hist_bin(ticks);
    s->calls = n + 1;
    s->bytes += bytes;
    s->t_sum += ticks;
    s->t_min = ticks < lo ? ticks : lo;
    if (ticks > s->t_max)
        s->t_max = ticks;
    cf_hist_inc(&s->hist[b]);
}
/* The first call's time is the minimum, a full bucket stays full. */
static inline void cf_stat_add(cf_stat_t *s, uint64_t bytes, uint64_t ticks)
{
    uint64_t n = s->calls;
    cf_stat_add_to(s, n, n ? s->t_min : UINT64_MAX, bytes, ticks);
}
/* The same for a record that has calls already (those a call site's memo
 * holds): no first call to tell apart. */
static inline void cf_stat_add_more(cf_stat_t *s, uint64_t bytes, uint64_t ticks)
{
    cf_stat_add_to(s, s->calls, s->t_min, bytes, ticks);
}
/* dst += src; both describe the same key. */
void cf_stat_merge(cf_stat_t *dst, const cf_stat_t *src);

/* Union of two sorted, duplicate-free key lists into out (cap entries at
 * most): the step of the cross-rank merge.  Returns the count; sets
 * *overflow_p when keys did not fit (it never clears it). */
size_t cf_keys_union(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out, size_t cap,
                     int *overflow_p);

/* ---- fixed-capacity table of stats, open addressing ---- */
#define CF_TABLE_PROBE 64
typedef struct {
    uint32_t cap;     /* power of two */
    uint32_t used;
    uint64_t dropped; /* records lost because the table was full */
    cf_stat_t *slots;
    /* the filled slots in the order they filled: a walk reads the used
     * records, not every slot (a slot is 1.3 kB; a walk of the whole table
     * faulted in every page of it) */
    uint32_t *order;
} cf_table_t;

int cf_table_init(cf_table_t *t, uint32_t cap);
void cf_table_fini(cf_table_t *t);
/* Slot of key, inserted if absent; NULL (and dropped++) when full.  Key 0 is the empty marker: operation
 * indices start at 1 so that no real key is 0. */
static inline cf_stat_t *cf_table_get(cf_table_t *t, uint64_t key)
{
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
    /* a bounded probe: a nearly full table costs a drop, not a long walk on
     * every call (keys are only ever placed within this distance) */
    uint32_t limit = t->cap < CF_TABLE_PROBE ? t->cap : CF_TABLE_PROBE;
    for (uint32_t n = 0; n < limit; n++, i = (i + 1) & mask) {
        cf_stat_t *s = &t->slots[i];
        if (s->key == key)
            return s;
        if (s->key == 0) {
            /* keep one slot free so lookups of absent keys terminate */
            if (t->used + 1 >= t->cap)
                break;
            s->key = key;
            t->order[t->used] = i;
            /* a walk from another thread (the spool's refresh) reads
             * order[] below the count it loads */
            __atomic_store_n(&t->used, t->used + 1, __ATOMIC_RELEASE);
            return s;
        }
    }
    t->dropped++;
    return NULL;
}

/* The records filled so far, and the k-th of them (k < that count), in
 * the order they filled; safe against a concurrent insert by the owner. */
static inline uint32_t cf_table_count(const cf_table_t *t) { return __atomic_load_n(&t->used, __ATOMIC_ACQUIRE); }
static inline cf_stat_t *cf_table_nth(const cf_table_t *t, uint32_t k) { return &t->slots[t->order[k]]; }

/* Slot of key, NULL when absent (nothing inserted).  Keys are never removed,
 * so an absent key's probe meets an empty slot or the probe limit. */
static inline const cf_stat_t *cf_table_find(const cf_table_t *t, uint64_t key)
{
    uint32_t mask = t->cap - 1;
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & mask;
    uint32_t limit = t->cap < CF_TABLE_PROBE ? t->cap : CF_TABLE_PROBE;
    for (uint32_t n = 0; n < limit && t->slots[i].key; n++, i = (i + 1) & mask)
        if (t->slots[i].key == key)
            return &t->slots[i];
    return NULL;
}

#endif
