#include <stdlib.h>
#include <string.h>
#include "cf_bins.h"

uint64_t cf_hist_bin_lo(unsigned idx)
{
    if (idx < CF_HIST_SUB)
        return idx;
    unsigned msb = idx / CF_HIST_SUB + CF_HIST_SUB_BITS - 1;
    return (uint64_t)(CF_HIST_SUB + idx % CF_HIST_SUB) << (msb - CF_HIST_SUB_BITS);
}

uint64_t cf_hist_bin_width(unsigned idx)
{
    if (idx < CF_HIST_SUB)
        return 1;
    unsigned msb = idx / CF_HIST_SUB + CF_HIST_SUB_BITS - 1;
    return (uint64_t)1 << (msb - CF_HIST_SUB_BITS);
}

double cf_hist_quantile(const uint32_t *hist, double q, double min, double max)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < CF_HIST_N; i++)
        total += hist[i];
    if (total == 0)
        return 0.0;
    /* the smallest value with at least q of the samples at or below it */
    uint64_t rank = (uint64_t)(q * (double)total + 0.999999);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    double v = max;
    for (unsigned i = 0; i < CF_HIST_N; i++) {
        seen += hist[i];
        if (seen >= rank) {
            v = (double)cf_hist_bin_lo(i) + (double)(cf_hist_bin_width(i) - 1) / 2.0;
            break;
        }
    }
    if (v < min)
        v = min;
    if (v > max)
        v = max;
    return v;
}

void cf_stat_merge(cf_stat_t *dst, const cf_stat_t *src)
{
    if (src->calls == 0)
        return;
    if (dst->calls == 0 || src->t_min < dst->t_min)
        dst->t_min = src->t_min;
    if (src->t_max > dst->t_max)
        dst->t_max = src->t_max;
    dst->calls += src->calls;
    dst->bytes += src->bytes;
    dst->t_sum += src->t_sum;
    dst->t_wait += src->t_wait;
    dst->t_post += src->t_post;
    for (unsigned i = 0; i < CF_HIST_N; i++) {
        uint64_t c = (uint64_t)dst->hist[i] + src->hist[i];
        dst->hist[i] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    }
}

size_t cf_keys_union(const uint64_t *a, size_t na, const uint64_t *b, size_t nb, uint64_t *out, size_t cap,
                     int *overflow_p)
{
    size_t i = 0, j = 0, n = 0;
    while ((i < na || j < nb) && n < cap) {
        if (j >= nb || (i < na && a[i] < b[j]))
            out[n++] = a[i++];
        else if (i >= na || b[j] < a[i])
            out[n++] = b[j++];
        else {
            out[n++] = a[i++];
            j++;
        }
    }
    if (i < na || j < nb)
        *overflow_p = 1;
    return n;
}

static const char *const cf_path_names[] = {"self", "intra-node", "inter-node"};

const char *cf_path_name(unsigned path)
{
    return path < CF_ARRAY_LEN(cf_path_names) ? cf_path_names[path] : "unknown";
}

int cf_path_from_name(const char *name)
{
    for (unsigned i = 0; i < CF_ARRAY_LEN(cf_path_names); i++)
        if (strcmp(name, cf_path_names[i]) == 0)
            return (int)i;
    return CF_ERR_INVALID;
}

int cf_table_init(cf_table_t *t, uint32_t cap)
{
    uint32_t c = 16;
    while (c < cap)
        c <<= 1;
    cf_stat_t *slots = calloc(c, sizeof(*slots));
    uint32_t *order = malloc(c * sizeof(*order));
    if (!slots || !order) {
        free(slots);
        free(order);
        return CF_ERR_NOMEM;
    }
    t->cap = c;
    t->used = 0;
    t->dropped = 0;
    t->slots = slots;
    t->order = order;
    return CF_OK;
}

void cf_table_fini(cf_table_t *t)
{
    free(t->slots);
    free(t->order);
    t->slots = NULL;
    t->order = NULL;
    t->cap = t->used = 0;
}
