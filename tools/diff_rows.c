/* commfit diff: the rows, operations of two profiles matched (diff.h). */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_bins.h"
#include "cf_common.h"

static uint64_t name_size_hash(const cf_comm_info_t *c)
{
    return cf_hash_bytes(cf_hash_str(CF_HASH_SEED, c->name), &c->size, sizeof(c->size));
}

/* A communicator that the other profile lacks (ids differ from run to run)
 * is matched by name, size and ordinal: ord[i] is how many communicators
 * before it in `self` have its name and size and are absent from `other`.
 * One pass with an index by (name, size). */
static int comm_ordinals(side_t *self, const side_t *other)
{
    const cf_profile_t *p = &self->p;
    cf_index_t x = {0, NULL};
    int *seen = calloc(p->ncomm ? p->ncomm : 1, sizeof(*seen));

    self->ord = calloc(p->ncomm ? p->ncomm : 1, sizeof(*self->ord));
    if (seen == NULL || self->ord == NULL || cf_index_init(&x, p->ncomm) != CF_OK) {
        free(seen);
        return CF_ERR_NOMEM;
    }
    for (size_t i = 0; i < p->ncomm; i++) {
        const cf_comm_info_t *c = &p->comm[i];
        size_t cur = 0, j;
        int found = 0;
        if (cf_profile_comm(&other->p, c->id) != NULL)
            continue;
        while (!found && cf_index_next(&x, name_size_hash(c), &cur, &j))
            found = p->comm[j].size == c->size && strcmp(p->comm[j].name, c->name) == 0;
        if (!found) {
            j = i;
            cf_index_put(&x, name_size_hash(c), i);
        }
        self->ord[i] = seen[j]++;
    }
    cf_index_free(&x);
    free(seen);
    return CF_OK;
}

/* The key that matches a communicator of `self` to one of `other`. */
static const char *comm_key(const side_t *self, const side_t *other, uint32_t id, char *buf,
                            size_t len)
{
    const cf_comm_info_t *c = cf_profile_comm(&self->p, id);

    if (id == CF_COMM_ID_WORLD || id == CF_COMM_ID_SELF || id == CF_COMM_ID_NONE || c == NULL ||
        cf_profile_comm(&other->p, id) != NULL)
        return cf_comm_label(id, buf, len);
    snprintf(buf, len, "%s/%d#%d", c->name, c->size, self->ord[c - self->p.comm]);
    return buf;
}

static void op_key(const side_t *self, const side_t *other, const cf_an_op_t *o, char *buf, size_t len)
{
    char ck[64];
    snprintf(buf, len, "%s|%s|%d", o->op, comm_key(self, other, o->comm, ck, sizeof(ck)), o->path);
}

int cf_diff_rows(side_t s[2], row_t **rows_p, size_t *n_p)
{
    size_t cap = cf_analysis_nops(s[0].a) + cf_analysis_nops(s[1].a), n = 0;
    row_t *rows = calloc(cap ? cap : 1, sizeof(*rows));
    cf_index_t x = {0, NULL};

    if (rows == NULL || cf_index_init(&x, cap) != CF_OK || comm_ordinals(&s[0], &s[1]) != CF_OK ||
        comm_ordinals(&s[1], &s[0]) != CF_OK) {
        cf_index_free(&x);
        free(rows);
        return CF_ERR_NOMEM;
    }
    for (int side = 0; side < 2; side++) {
        for (size_t i = 0; i < cf_analysis_nops(s[side].a); i++) {
            const cf_an_op_t *o = cf_analysis_op(s[side].a, i);
            char key[192];
            size_t r, cur = 0;
            int found = 0;
            op_key(&s[side], &s[1 - side], o, key, sizeof(key));
            while (!found && cf_index_next(&x, cf_hash_str(CF_HASH_SEED, key), &cur, &r))
                found = strcmp(rows[r].key, key) == 0;
            if (!found) {
                r = n++;
                cf_strlcpy(rows[r].key, key, sizeof(rows[0].key));
                cf_index_put(&x, cf_hash_str(CF_HASH_SEED, rows[r].key), r);
            }
            rows[r].op[side] = o;
            rows[r].adv[side] = cf_analysis_fusion_find(s[side].a, o->op, o->comm, o->path);
        }
    }
    cf_index_free(&x);
    *rows_p = rows;
    *n_p = n;
    return CF_OK;
}

double cf_diff_per_rank(const side_t *s, const cf_an_op_t *o)
{
    return o != NULL && s->p.ranks > 0 ? o->time_s / s->p.ranks : NAN;
}

/* A's predicted saving and the saving B realised, per rank on the slowest
 * rank over A's steps; NaN when A did not advise fusing or B lacks the stream. */
void cf_diff_fusion_check(const row_t *r, double *pred_p, double *real_p)
{
    const cf_advice_t *a = r->adv[0], *b = r->adv[1];

    *pred_p = *real_p = NAN;
    if (a == NULL || a->verdict == NULL || strcmp(a->verdict, "fuse") != 0)
        return;
    *pred_p = a->predicted_saving_s;
    if (b != NULL && a->steps > 0 && b->steps > 0)
        *real_p = (a->current_s / (double)a->steps - b->current_s / (double)b->steps) * (double)a->steps;
}

/* The step's period, mean over the ranks that recorded it; NaN: none. */
static double step_period(const cf_profile_t *p)
{
    double sum = 0.0, v;
    int n = 0;

    for (size_t i = 0; i < p->nrank; i++) {
        cf_profile_rank_load(p, i, &v);
        if (isfinite(v) && v > 0) {
            sum += v;
            n++;
        }
    }
    return n > 0 ? sum / n : NAN;
}

int cf_diff_settle(const side_t s[2], const row_t *r, cf_diff_settle_t *st)
{
    double total[2];

    memset(st, 0, sizeof(*st));
    for (int k = 0; k < 2; k++) {
        const cf_advice_t *ad = r->adv[k];
        /* a stream without a repeating step (the advice's "no repeating
         * step found") has no per-step figures */
        if (ad == NULL || ad->steps < 2 || !isfinite(ad->calls_per_step) || !isfinite(ad->current_s))
            return 0;
        st->calls_step[k] = ad->calls_per_step;
        st->bytes_step[k] = ad->bytes_per_step;
        st->mpi_step[k] = ad->current_s / (double)ad->steps;
        st->fw_step[k] = isfinite(ad->call_gap_s) ? cf_advice_framework_step(ad, ad->calls_per_step) : NAN;
        st->step_s[k] = step_period(&s[k].p);
    }
    if (fabs(st->calls_step[0] - st->calls_step[1]) < 1.0)
        return 0;
    for (int k = 0; k < 2; k++) {
        const cf_advice_t *ad = r->adv[k], *other = r->adv[1 - k];
        if (!isfinite(st->fw_step[k]) && isfinite(st->fw_step[1 - k]) && !ad->nonblocking &&
            ad->calls_per_step < CF_ADV_GAP_CALLS) {
            st->fw_step[k] = cf_advice_framework_step(other, ad->calls_per_step);
            st->gap_borrowed[k] = 1;
        }
    }
    st->with_framework = isfinite(st->fw_step[0]) && isfinite(st->fw_step[1]);
    int more = st->calls_step[0] > st->calls_step[1] ? 0 : 1;
    st->lead_s = st->lead_step = NAN;
    st->lead_side = -1;
    if (r->adv[more]->nonblocking && isfinite(r->adv[more]->post_lead_s)) {
        st->lead_side = more;
        st->lead_s = r->adv[more]->post_lead_s;
        st->lead_step = st->lead_s * fabs(st->calls_step[0] - st->calls_step[1]);
    }
    for (int k = 0; k < 2; k++)
        total[k] = st->mpi_step[k] + (st->with_framework ? st->fw_step[k] : 0.0);
    st->saving_step = total[0] - total[1];
    st->saving_share = total[0] > 0 ? st->saving_step / total[0] : NAN;
    return 1;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The same stream, run again: calls per step within half a call and bytes
 * per step within 1 % on both sides, and the framework's time counted
 * alike. */
static int same_runs(const cf_diff_settle_t *a, const cf_diff_settle_t *b)
{
    for (int k = 0; k < 2; k++)
        if (!(fabs(a->calls_step[k] - b->calls_step[k]) < 0.5) ||
            !(fabs(a->bytes_step[k] - b->bytes_step[k]) <= 0.01 * a->bytes_step[k]))
            return 0;
    return a->with_framework == b->with_framework;
}

int cf_diff_spread(const cf_diff_more_t *m, const row_t *r, const cf_diff_settle_t *first, cf_diff_spread_t *sp)
{
    double v[CF_DIFF_PAIRS];
    cf_diff_settle_t st;

    memset(sp, 0, sizeof(*sp));
    if (m == NULL || m->n == 0)
        return 0;
    v[sp->n++] = first->saving_step;
    for (size_t k = 0; k < m->n && sp->n < CF_DIFF_PAIRS; k++) {
        const row_t *o = NULL;
        for (size_t i = 0; i < m->nrows[k] && o == NULL; i++)
            if (strcmp(m->rows[k][i].key, r->key) == 0)
                o = &m->rows[k][i];
        if (o != NULL && cf_diff_settle(&m->s[2 * k], o, &st) && isfinite(st.saving_step) && same_runs(first, &st))
            v[sp->n++] = st.saving_step;
        else
            sp->missing++;
    }
    qsort(v, sp->n, sizeof(v[0]), cmp_double);
    sp->lo = v[0];
    sp->hi = v[sp->n - 1];
    sp->median = sp->n % 2 ? v[sp->n / 2] : 0.5 * (v[sp->n / 2 - 1] + v[sp->n / 2]);
    return 1;
}

const cf_an_op_t *cf_diff_either(const row_t *r)
{
    return r->op[0] != NULL ? r->op[0] : r->op[1];
}
