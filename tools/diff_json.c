/* commfit diff --format json (diff.h). */
#include "diff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cf_advice.h"
#include "cf_common.h"

static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *pair(json_t *a, json_t *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "a", a);
    json_object_set_new(o, "b", b);
    return o;
}

static json_t *jcalls(const cf_an_op_t *o)
{
    return o != NULL ? json_integer((json_int_t)o->calls) : json_null();
}

static json_t *jfit(const cf_an_op_t *o, int alpha)
{
    if (o == NULL || o->fit == NULL || !o->fit->fit.ok)
        return json_null();
    return jnum(alpha ? o->fit->fit.alpha_s : o->fit->fit.bandwidth_Bps);
}

static json_t *jside(const side_t *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(s->path));
    json_object_set_new(o, "ranks", json_integer(s->p.ranks));
    json_object_set_new(o, "nodes", json_integer(s->p.nodes));
    json_object_set_new(o, "wall_s", jnum(s->p.wall_s));
    json_object_set_new(o, "mpi_mean_s", jnum(cf_analysis_ranks(s->a)->mpi_mean_s));
    return o;
}

int cf_diff_json(side_t s[2], const row_t *rows, size_t n, const cf_diff_more_t *m)
{
    json_t *root = json_object(), *ops = json_array();
    char label[24], *text;

    json_object_set_new(root, "format", json_string("commfit-diff"));
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "a", jside(&s[0]));
    json_object_set_new(root, "b", jside(&s[1]));
    /* the further pairs, for the spread of each settled stream's saving */
    json_t *more = json_array();
    for (size_t k = 0; m != NULL && k < m->n; k++)
        json_array_append_new(more, pair(jside(&m->s[2 * k]), jside(&m->s[2 * k + 1])));
    json_object_set_new(root, "more_pairs", more);
    for (size_t i = 0; i < n; i++) {
        const row_t *r = &rows[i];
        const cf_an_op_t *o = cf_diff_either(r);
        json_t *j = json_object();
        double ta = cf_diff_per_rank(&s[0], r->op[0]), tb = cf_diff_per_rank(&s[1], r->op[1]), pred, real;
        json_object_set_new(j, "op", json_string(o->op));
        json_object_set_new(j, "kind", json_string(o->kind));
        json_object_set_new(j, "comm", pair(r->op[0] ? json_string(cf_comm_label(r->op[0]->comm, label, sizeof(label))) : json_null(),
                                            r->op[1] ? json_string(cf_comm_label(r->op[1]->comm, label, sizeof(label))) : json_null()));
        json_object_set_new(j, "comm_size", json_integer(o->comm_size));
        json_object_set_new(j, "path", json_string(cf_path_name((unsigned)o->path)));
        json_object_set_new(j, "calls", pair(jcalls(r->op[0]), jcalls(r->op[1])));
        json_object_set_new(j, "calls_per_step", pair(jnum(r->adv[0] ? r->adv[0]->calls_per_step : NAN),
                                                      jnum(r->adv[1] ? r->adv[1]->calls_per_step : NAN)));
        json_object_set_new(j, "steps", pair(r->adv[0] ? json_integer((json_int_t)r->adv[0]->steps) : json_null(),
                                             r->adv[1] ? json_integer((json_int_t)r->adv[1]->steps) : json_null()));
        json_object_set_new(j, "time_per_rank_s", pair(jnum(ta), jnum(tb)));
        json_object_set_new(j, "delta_s", jnum((isfinite(tb) ? tb : 0) - (isfinite(ta) ? ta : 0)));
        json_object_set_new(j, "delta_share", jnum(isfinite(ta) && ta > 0 && isfinite(tb) ? (tb - ta) / ta : NAN));
        json_object_set_new(j, "alpha_s", pair(jfit(r->op[0], 1), jfit(r->op[1], 1)));
        json_object_set_new(j, "bandwidth_Bps", pair(jfit(r->op[0], 0), jfit(r->op[1], 0)));
        cf_diff_fusion_check(r, &pred, &real);
        if (isfinite(pred)) {
            json_t *f = json_object();
            const cf_advice_t *aa = r->adv[0], *ab = r->adv[1];
            json_object_set_new(f, "bucket_bytes", jnum(aa->bucket_bytes));
            json_object_set_new(f, "buckets_per_step", jnum(aa->buckets_per_step));
            json_object_set_new(f, "current_s", pair(jnum(aa->current_s), jnum(ab ? ab->current_s : NAN)));
            json_object_set_new(f, "predicted_saving_s", jnum(pred));
            json_object_set_new(f, "realised_saving_s", jnum(real));
            json_object_set_new(f, "realised_share", jnum(pred > 0 ? real / pred : NAN));
            json_object_set_new(j, "fusion", f);
        } else {
            json_object_set_new(j, "fusion", json_null());
        }
        cf_diff_settle_t st;
        if (cf_diff_settle(s, r, &st)) {
            json_t *e = json_object();
            json_object_set_new(e, "a_verdict", r->adv[0]->verdict ? json_string(r->adv[0]->verdict) : json_null());
            json_object_set_new(e, "calls_per_step", pair(jnum(st.calls_step[0]), jnum(st.calls_step[1])));
            json_object_set_new(e, "bytes_per_step", pair(jnum(st.bytes_step[0]), jnum(st.bytes_step[1])));
            json_object_set_new(e, "mpi_step_s", pair(jnum(st.mpi_step[0]), jnum(st.mpi_step[1])));
            json_object_set_new(e, "framework_step_s", pair(jnum(st.fw_step[0]), jnum(st.fw_step[1])));
            json_object_set_new(e, "step_period_s", pair(jnum(st.step_s[0]), jnum(st.step_s[1])));
            json_object_set_new(e, "saving_step_s", jnum(st.saving_step));
            json_object_set_new(e, "saving_share", jnum(st.saving_share));
            json_object_set_new(e, "with_framework", json_boolean(st.with_framework));
            json_object_set_new(e, "framework_gap_borrowed",
                                pair(json_boolean(st.gap_borrowed[0]), json_boolean(st.gap_borrowed[1])));
            json_object_set_new(e, "framework_lead_step_s", jnum(st.lead_step));
            cf_diff_spread_t sp;
            if (cf_diff_spread(m, r, &st, &sp)) {
                json_t *ov = json_object();
                json_object_set_new(ov, "pairs", json_integer((json_int_t)sp.n));
                json_object_set_new(ov, "pairs_without", json_integer((json_int_t)sp.missing));
                json_object_set_new(ov, "saving_step_median_s", jnum(sp.median));
                json_object_set_new(ov, "saving_step_min_s", jnum(sp.lo));
                json_object_set_new(ov, "saving_step_max_s", jnum(sp.hi));
                json_object_set_new(e, "over_pairs", ov);
            } else {
                json_object_set_new(e, "over_pairs", json_null());
            }
            json_object_set_new(e, "framework_lead_side",
                                st.lead_side < 0 ? json_null() : json_string(st.lead_side ? "b" : "a"));
            json_object_set_new(j, "measured_per_step", e);
        } else {
            json_object_set_new(j, "measured_per_step", json_null());
        }
        json_array_append_new(ops, j);
    }
    json_object_set_new(root, "operations", ops);
    text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(root);
    if (text == NULL)
        return CF_ERR_NOMEM;
    puts(text);
    free(text);
    return CF_OK;
}
