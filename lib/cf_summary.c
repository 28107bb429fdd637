#include <stdlib.h>
#include <string.h>
#include "cf_summary.h"

typedef struct {
    const char *op;
    uint32_t comm;
    uint64_t calls, bytes;
    double time;
} cf_sum_row_t;

static int cf_row_cmp(const void *a, const void *b)
{
    double x = ((const cf_sum_row_t *)a)->time, y = ((const cf_sum_row_t *)b)->time;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void cf_fmt_secs(double s, char *buf, size_t len)
{
    if (s >= 1)
        snprintf(buf, len, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else if (s >= 1e-6)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else
        snprintf(buf, len, "%.3g ns", s * 1e9);
}

void cf_summary_print(const cf_profile_t *p, FILE *out)
{
    cf_sum_row_t *rows = calloc(p->nrec ? p->nrec : 1, sizeof(*rows));
    size_t n = 0;
    double total = 0, mpi = 0;
    if (!rows)
        return;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (r->layer != 0)
            continue;
        size_t j;
        for (j = 0; j < n; j++)
            if (rows[j].comm == r->comm && strcmp(rows[j].op, r->op) == 0)
                break;
        if (j == n)
            rows[n++] = (cf_sum_row_t){.op = r->op, .comm = r->comm};
        rows[j].calls += r->calls;
        rows[j].bytes += r->bytes;
        rows[j].time += r->t_sum;
        total += r->t_sum;
    }
    for (size_t i = 0; i < p->nrank; i++)
        mpi += p->rank[i].mpi_s;
    qsort(rows, n, sizeof(*rows), cf_row_cmp);
    fprintf(out, "commfit: %d ranks on %d node%s, %.3g s wall, %.1f %% of rank time in MPI%s\n", p->ranks, p->nodes,
            p->nodes == 1 ? "" : "s", p->wall_s,
            p->wall_s > 0 && p->nrank ? 100.0 * mpi / (p->wall_s * (double)p->nrank) : 0.0,
            p->partial ? " (partial profile)" : "");
    fprintf(out, "commfit: %-24s %-10s %12s %14s %12s %7s\n", "operation", "comm", "calls", "bytes", "time", "share");
    for (size_t i = 0; i < n && i < 10; i++) {
        char t[32], label[24];
        cf_fmt_secs(rows[i].time, t, sizeof(t));
        fprintf(out, "commfit: %-24s %-10s %12llu %14llu %12s %6.1f%%\n", rows[i].op,
                cf_comm_label(rows[i].comm, label, sizeof(label)), (unsigned long long)rows[i].calls,
                (unsigned long long)rows[i].bytes, t, total > 0 ? 100.0 * rows[i].time / total : 0.0);
    }
    free(rows);
}
