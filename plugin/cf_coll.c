/* The collectives the core and the modules merge with at finalize:
 * reductions over fixed-size arrays through cf_g.tool_comm, so that the
 * cost is a reduction tree, not a receive loop at rank 0. */
#include <stdlib.h>
#include <string.h>
#include "cf_coll.h"

/* ---- union of sorted key lists: buffer = [count | overflow bit, keys...] ---- */
#define CF_OVERFLOW (1ull << 63)
static uint32_t cf_union_cap;

static void cf_union_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint64_t *a = in, *b = inout;
    uint64_t *tmp = malloc((cf_union_cap + 1) * sizeof(uint64_t));
    for (int l = 0; l < *len; l++, a += cf_union_cap + 1, b += cf_union_cap + 1) {
        uint64_t na = a[0] & ~CF_OVERFLOW, nb = b[0] & ~CF_OVERFLOW;
        int over = ((a[0] | b[0]) & CF_OVERFLOW) != 0;
        if (!tmp) {
            b[0] |= CF_OVERFLOW;
            continue;
        }
        size_t n = cf_keys_union(a + 1, na, b + 1, nb, tmp, cf_union_cap, &over);
        memcpy(b + 1, tmp, n * sizeof(uint64_t));
        b[0] = n | (over ? CF_OVERFLOW : 0);
    }
    free(tmp);
}

static int cf_cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

int cf_all_ok(int ok)
{
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, cf_g.tool_comm);
    return all;
}

/* The union's first reduction, per rank: its count of distinct keys
 * (summed, and their largest and smallest), a fingerprint of them (its
 * largest and smallest), whether it had no memory, whether it cut its
 * keys at the cap, and the caller's flag.  Smallest values travel as the
 * largest of their complements, so one element-wise op does it all. */
enum { UH_SUM, UH_MAX, UH_NMIN, UH_HMAX, UH_HMIN, UH_NOMEM, UH_CUT, UH_FLAG, UH_N };

static void cf_uhead_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint64_t *a = in, *b = inout;
    for (int l = 0; l < *len; l++, a += UH_N, b += UH_N) {
        b[UH_SUM] += a[UH_SUM];
        for (int k = UH_MAX; k <= UH_HMIN; k++)
            b[k] = a[k] > b[k] ? a[k] : b[k];
        for (int k = UH_NOMEM; k < UH_N; k++)
            b[k] |= a[k];
    }
}

uint64_t *cf_union_keys_flag(uint64_t *keys, size_t n, uint32_t cap, size_t *n_p, int *overflow_p, int *flag)
{
    /* Room for cap keys before the union's size is known, so that one
     * reduction sums the counts, tells whether every rank holds the same
     * keys, and carries the ranks short of memory and the flags: each
     * collective is a turn of every rank, dear where ranks share cores.
     * Only the pages the union fills are touched. */
    uint64_t *buf = calloc((size_t)cap + 1, sizeof(uint64_t));
    size_t m = 0;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    if (buf != NULL) {
        qsort(keys, n, sizeof(uint64_t), cf_cmp_u64);
        for (size_t i = 0; i < n && m < cap; i++)
            if (m == 0 || keys[i] != buf[m]) {
                buf[1 + m++] = keys[i];
                h = cf_mix64(h ^ cf_mix64(keys[i]));
            }
    }
    int cut = n > m && m == cap;
    uint64_t head[UH_N] = {[UH_SUM] = m,      [UH_MAX] = m,         [UH_NMIN] = ~(uint64_t)m,
                           [UH_HMAX] = h,     [UH_HMIN] = ~h,        [UH_NOMEM] = buf == NULL,
                           [UH_CUT] = cut,    [UH_FLAG] = flag && *flag};
    MPI_Datatype t;
    MPI_Op op;
    PMPI_Type_contiguous(UH_N, MPI_UINT64_T, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(cf_uhead_op, 1, &op);
    PMPI_Allreduce(MPI_IN_PLACE, head, 1, t, op, cf_g.tool_comm);
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);
    if (flag)
        *flag = head[UH_FLAG] != 0;
    if (head[UH_NOMEM]) {
        free(buf);
        *n_p = 0;
        *overflow_p = 1;
        return NULL;
    }
    /* every rank holds the same keys (their count and fingerprint agree,
     * and none was cut at the cap): the union is this rank's own, and the
     * reduction that would merge them is left out (SPMD programs' records,
     * the world's sampled collectives) */
    if (head[UH_MAX] == ~head[UH_NMIN] && head[UH_HMAX] == ~head[UH_HMIN] && !head[UH_CUT]) {
        *n_p = m;
        *overflow_p = 0;
        memmove(buf, buf + 1, m * sizeof(uint64_t));
        return buf;
    }
    /* the union holds at most the sum of the ranks' counts: the reduction
     * moves that many words, not cap (a few hundred bytes for a few
     * records, not cap words through every step) */
    if (head[UH_SUM] < cap)
        cap = (uint32_t)head[UH_SUM];
    buf[0] = m | (cut ? CF_OVERFLOW : 0); /* m is within the sum */
    cf_union_cap = cap;
    PMPI_Type_contiguous((int)cap + 1, MPI_UINT64_T, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(cf_union_op, 1, &op);
    PMPI_Allreduce(MPI_IN_PLACE, buf, 1, t, op, cf_g.tool_comm);
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);
    *n_p = buf[0] & ~CF_OVERFLOW;
    *overflow_p = (buf[0] & CF_OVERFLOW) != 0;
    memmove(buf, buf + 1, *n_p * sizeof(uint64_t));
    return buf;
}

uint64_t *cf_union_keys(uint64_t *keys, size_t n, uint32_t cap, size_t *n_p, int *overflow_p)
{
    return cf_union_keys_flag(keys, n, cap, n_p, overflow_p, NULL);
}

/* ---- reduction of stats, element-wise ---- */
static void cf_stat_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    cf_stat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        b[i].key = a[i].key ? a[i].key : b[i].key;
        cf_stat_merge(&b[i], &a[i]);
    }
}

int cf_reduce_bytes(void *buf, size_t n, size_t elem, MPI_User_function *fn, int root)
{
    MPI_Datatype t;
    MPI_Op op;
    PMPI_Type_contiguous((int)elem, MPI_BYTE, &t);
    PMPI_Type_commit(&t);
    PMPI_Op_create(fn, 1, &op);
    int rc = MPI_SUCCESS;
    /* in pieces, so the temporary buffers MPI allocates stay small */
    size_t chunk = (1u << 20) / elem + 1;
    for (size_t off = 0; off < n && rc == MPI_SUCCESS; off += chunk) {
        int cnt = (int)(n - off < chunk ? n - off : chunk);
        char *p = (char *)buf + off * elem;
        if (cf_g.world_rank == root)
            rc = PMPI_Reduce(MPI_IN_PLACE, p, cnt, t, op, root, cf_g.tool_comm);
        else
            rc = PMPI_Reduce(p, NULL, cnt, t, op, root, cf_g.tool_comm);
    }
    PMPI_Op_free(&op);
    PMPI_Type_free(&t);
    return rc;
}

cf_stat_t *cf_merge_table(cf_table_t *mine, uint32_t cap, size_t *n_p, int *overflow_p,
                          int (*lacks)(uint64_t key, const cf_table_t *mine), int dropping, uint32_t **missing_p)
{
    if (missing_p)
        *missing_p = NULL;
    uint64_t *keys = malloc(((size_t)mine->used + 1) * sizeof(uint64_t));
    size_t nkeys = 0, nu = 0;
    for (uint32_t s = 0; keys && s < mine->used; s++)
        keys[nkeys++] = cf_table_nth(mine, s)->key;
    /* every rank must take part even when it has no memory left */
    uint64_t none = 0;
    /* any: whether some rank dropped records (asked only with missing_p) */
    int any = dropping;
    uint64_t *ukeys = cf_union_keys_flag(keys ? keys : &none, keys ? nkeys : 0, cap, &nu, overflow_p, &any);
    free(keys);
    cf_stat_t *stats = calloc(nu ? nu : 1, sizeof(cf_stat_t));
    if (!cf_all_ok(stats && ukeys)) {
        free(stats);
        free(ukeys);
        *overflow_p = 1;
        *n_p = 0;
        return NULL;
    }
    for (size_t i = 0; stats && ukeys && i < nu; i++) {
        cf_stat_t *s = cf_table_get(mine, ukeys[i]);
        if (s)
            stats[i] = *s;
        stats[i].key = ukeys[i];
    }
    /* records some rank could not keep: which ranks, per record */
    any = any && missing_p;
    uint32_t *miss = any ? calloc(nu ? nu : 1, sizeof(uint32_t)) : NULL;
    if (any && cf_all_ok(miss != NULL)) {
        for (size_t i = 0; dropping && i < nu; i++)
            miss[i] = lacks(ukeys[i], mine) != 0;
        for (size_t off = 0; off < nu; off += 1u << 20) {
            int cnt = (int)(nu - off < (1u << 20) ? nu - off : 1u << 20);
            if (cf_g.world_rank == 0)
                PMPI_Reduce(MPI_IN_PLACE, miss + off, cnt, MPI_UINT32_T, MPI_SUM, 0, cf_g.tool_comm);
            else
                PMPI_Reduce(miss + off, NULL, cnt, MPI_UINT32_T, MPI_SUM, 0, cf_g.tool_comm);
        }
        if (cf_g.world_rank == 0)
            *missing_p = miss;
        else
            free(miss);
    } else
        free(miss);
    free(ukeys);
    if (stats)
        cf_reduce_bytes(stats, nu, sizeof(cf_stat_t), cf_stat_op, 0);
    if (cf_g.world_rank != 0) {
        free(stats);
        stats = NULL;
    }
    *n_p = nu;
    return stats;
}
