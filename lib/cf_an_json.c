/* The report as JSON: formats what the stages computed, computes nothing
 * of its own.  See cf_an_stage.h for the pipeline. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_advice.h"
#include "cf_an_stage.h"

typedef struct {
    int bad;
} jctx_t;

/* JSON has no infinity or NaN: those become null. */
static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* A float field at its own precision, without the digits its widening to
 * double invents (9.2155e-06, not 9.21549987e-06) */
static json_t *jflt(float v)
{
    char buf[32];
    if (!isfinite(v))
        return json_null();
    snprintf(buf, sizeof(buf), "%.7g", (double)v);
    return json_real(strtod(buf, NULL));
}

static json_t *jstr(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

static void jset(jctx_t *c, json_t *o, const char *k, json_t *v)
{
    if (json_object_set_new(o, k, v) != 0)
        c->bad = 1;
}

static void jpush(jctx_t *c, json_t *arr, json_t *v)
{
    if (json_array_append_new(arr, v) != 0)
        c->bad = 1;
}

static json_t *jpair(double lo, double hi)
{
    json_t *a = json_array();
    if (a != NULL && (json_array_append_new(a, jnum(lo)) || json_array_append_new(a, jnum(hi)))) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* What people call a communicator (cf_comm_name); none: the label of no
 * communicator at that place ("all" for a joint fit, "-" for Wait/Test). */
static const char *an_comm_name(const cf_analysis_t *a, uint32_t comm, const char *none, char *buf, size_t len)
{
    if (comm == CF_COMM_ID_NONE) {
        snprintf(buf, len, "%s", none);
        return buf;
    }
    return cf_comm_name(a->p, comm, buf, len);
}

/* The segments of a fit's line (none without a fit). */
static json_t *segments_json(jctx_t *c, const cf_an_fit_t *f)
{
    json_t *segs = json_array();
    int ok = f->fit.ok;

    for (int s = 0; ok && s < f->fit.nseg; s++) {
        const cf_segment_t *g = &f->fit.seg[s];
        json_t *j = json_object();
        jset(c, j, "size_lo", jnum(g->size_lo));
        jset(c, j, "size_hi", jnum(g->size_hi));
        jset(c, j, "alpha_s", jnum(g->alpha_s));
        jset(c, j, "bandwidth_Bps", jnum(g->bandwidth_Bps));
        jset(c, j, "alpha_ci", jpair(g->alpha_ci[0], g->alpha_ci[1]));
        jset(c, j, "bandwidth_ci", jpair(g->bandwidth_ci[0], g->bandwidth_ci[1]));
        /* Only the first segment's intercept is a startup. */
        jset(c, j, "n_half_bytes",
             jnum(s > 0 || isinf(g->bandwidth_Bps) ? NAN : g->alpha_s * g->bandwidth_Bps));
        jset(c, j, "points", json_integer(g->npoints));
        jpush(c, segs, j);
    }
    return segs;
}

/* "protocol_limits" of a fit, the declared limits its segments break at,
 * and "protocol_limits_unused_why". */
static void fit_limits_json(jctx_t *c, const cf_analysis_t *a, const cf_an_fit_t *f, json_t *o)
{
    int ok = f->fit.ok;
    json_t *lims = json_array();
    const cf_an_limits_t *pl = cf_analysis_limits(a, f->path);
    for (int j = 0; ok && pl != NULL && j < f->fit.nlimits; j++) {
        json_t *e = json_object();
        const char *nm = NULL;
        for (size_t q = 0; q < pl->n && nm == NULL; q++)
            if (pl->bytes[q] == f->fit.limit_bytes[j])
                nm = pl->name[q];
        jset(c, e, "name", jstr(nm));
        jset(c, e, "bytes", jnum(f->fit.limit_bytes[j]));
        jpush(c, lims, e);
    }
    jset(c, o, "protocol_limits", lims);
    jset(c, o, "protocol_limits_unused_why", jstr(ok ? f->fit.limits_unused_why : NULL));
}

/* The size bins of a fit; span: a nonblocking one's, no startup share or
 * verdict. */
static json_t *bins_json(jctx_t *c, const cf_an_fit_t *f, int span)
{
    json_t *bins = json_array();

    for (size_t k = 0; k < f->nbin; k++) {
        const cf_an_bin_t *b = &f->bin[k];
        json_t *j = json_object();
        jset(c, j, "size_lo", json_integer((json_int_t)(b->size_lo > INT64_MAX ? INT64_MAX : b->size_lo)));
        jset(c, j, "size_hi", json_integer((json_int_t)(b->size_hi > INT64_MAX ? INT64_MAX : b->size_hi)));
        jset(c, j, "size", jnum(b->size));
        jset(c, j, "calls", json_integer((json_int_t)b->calls));
        jset(c, j, "bytes", json_integer((json_int_t)b->bytes));
        jset(c, j, "time_s", jnum(b->time_s));
        jset(c, j, "p50_s", jnum(b->p50_s));
        jset(c, j, "duration_p50_s", jnum(b->duration_p50_s));
        jset(c, j, "p99_s", jnum(b->p99_s));
        jset(c, j, "time_source", json_string(b->time_source == CF_AN_TIME_TRANSFER ? "transfer" : "duration"));
        jset(c, j, "samples", json_integer((json_int_t)b->samples));
        jset(c, j, "coverage", jnum(b->coverage));
        jset(c, j, "in_fit", json_boolean(b->in_fit));
        jset(c, j, "outlier", json_boolean(b->outlier));
        jset(c, j, "predicted_s", jnum(b->predicted_s));
        jset(c, j, "model_error", jnum(b->model_error));
        /* the predictor's (cf_predict.h): at the size, and with the bin left out */
        jset(c, j, "prediction_s", jnum(b->prediction_s));
        jset(c, j, "prediction_source", jstr(cf_pred_source_name((cf_pred_source_t)b->prediction_source)));
        jset(c, j, "prediction_loo_s", jnum(b->prediction_loo_s));
        jset(c, j, "prediction_loo_source", jstr(cf_pred_source_name((cf_pred_source_t)b->prediction_loo_source)));
        jset(c, j, "startup_share", jnum(span ? NAN : b->startup_share));
        jset(c, j, "verdict", span ? json_null() : jstr(b->verdict));
        jpush(c, bins, j);
    }
    return bins;
}

static json_t *fit_json(jctx_t *c, const cf_analysis_t *a, const cf_an_fit_t *f)
{
    json_t *o = json_object(), *ci = json_object();
    char label[24], name[CF_COMM_NAME_LEN];
    int ok = f->fit.ok;

    jset(c, o, "kind", json_string(cf_an_kind_name(f->kind)));
    jset(c, o, "op", json_string(f->op));
    jset(c, o, "joint", json_boolean(f->joint));
    jset(c, o, "comm", json_string(cf_an_comm_label(f->comm, label, sizeof(label))));
    jset(c, o, "comm_name", json_string(an_comm_name(a, f->comm, "all", name, sizeof(name))));
    jset(c, o, "comm_size", json_integer(f->comm_size));
    jset(c, o, "path", json_string(cf_path_name((unsigned)f->path)));
    jset(c, o, "calls", json_integer((json_int_t)f->calls));
    jset(c, o, "bytes", json_integer((json_int_t)f->bytes));
    jset(c, o, "time_s", jnum(f->time_s));
    jset(c, o, "fit_ok", json_boolean(ok));
    jset(c, o, "note", jstr(f->note));
    jset(c, o, "sizes", json_integer(f->nsizes));
    jset(c, o, "alpha_s", jnum(ok ? f->fit.alpha_s : NAN));
    jset(c, o, "bandwidth_Bps", jnum(ok ? f->fit.bandwidth_Bps : NAN));
    jset(c, o, "n_half_bytes", jnum(ok ? f->fit.n_half_bytes : NAN));
    jset(c, o, "r2", jnum(ok ? f->fit.r2 : NAN));
    jset(c, ci, "alpha_s", jpair(ok ? f->fit.alpha_ci[0] : NAN, ok ? f->fit.alpha_ci[1] : NAN));
    jset(c, ci, "bandwidth_Bps",
         jpair(ok ? f->fit.bandwidth_ci[0] : NAN, ok ? f->fit.bandwidth_ci[1] : NAN));
    jset(c, o, "ci", ci);
    jset(c, o, "size_lo", jnum(ok ? f->fit.size_lo : NAN));
    jset(c, o, "size_hi", jnum(ok ? f->fit.size_hi : NAN));
    jset(c, o, "points", json_integer(ok ? f->fit.npoints : 0));
    jset(c, o, "outliers", json_integer(ok ? f->fit.noutliers : 0));
    /* A span is not a cost: no startup share or verdict on it. */
    int span = f->nonblocking;
    jset(c, o, "startup_share", jnum(span ? NAN : f->startup_share));
    jset(c, o, "startup_share_interval", jpair(span ? NAN : f->startup_lo, span ? NAN : f->startup_hi));
    jset(c, o, "verdict", span ? json_null() : json_string(f->verdict));
    jset(c, o, "leaning", span ? json_null() : jstr(f->leaning));
    jset(c, o, "uncertain_why", f->why[0] && !span ? json_string(f->why) : json_null());
    jset(c, o, "model_error_rms", jnum(f->err_rms));
    jset(c, o, "model_error_max", jnum(f->err_max));
    jset(c, o, "nonblocking", json_boolean(f->nonblocking));
    jset(c, o, "samples", json_integer((json_int_t)f->samples));
    jset(c, o, "transfer_bins", json_integer(f->transfer_bins));
    jset(c, o, "few_sample_bins", json_integer(f->few_sample_bins));
    jset(c, o, "verdict_basis", jstr(f->basis));
    jset(c, o, "below_n_half", jnum(span ? NAN : f->below_n_half));
    jset(c, o, "wait_share", jnum(f->wait_share));
    jset(c, o, "time_source",
         json_string(f->time_source == (CF_AN_TIME_DURATION | CF_AN_TIME_TRANSFER) ? "mixed"
                     : f->time_source == CF_AN_TIME_TRANSFER                       ? "transfer"
                                                                                   : "duration"));
    jset(c, o, "zero_byte_p50_s", jnum(f->zero_p50_s));
    if (f->kind == CF_AN_COLLECTIVE) {
        json_t *hop = json_object();
        jset(c, hop, "algo", jstr(f->hop_algo));
        jset(c, hop, "alpha_s", jnum(f->hop_alpha_s));
        jset(c, hop, "bandwidth_Bps", jnum(f->hop_Bps));
        jset(c, o, "per_hop", hop);
        jset(c, o, "efficiency", jnum(f->efficiency));
    }
    jset(c, o, "segments", segments_json(c, f));
    fit_limits_json(c, a, f, o);
    jset(c, o, "bins", bins_json(c, f, span));
    return o;
}

static json_t *collectives_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *arr = json_array();
    char label[24], name[CF_COMM_NAME_LEN];

    for (size_t i = 0; i < a->nfit; i++) {
        const cf_an_fit_t *f = &a->fit[i];
        const cf_an_ref_t *ref = cf_an_ref_of(a, f->path);
        if (f->kind != CF_AN_COLLECTIVE || f->nonblocking) /* a span is no bus bandwidth */
            continue;
        for (size_t k = 0; k < f->nbin; k++) {
            const cf_an_bin_t *b = &f->bin[k];
            json_t *j = json_object();
            jset(c, j, "op", json_string(f->op));
            jset(c, j, "comm", json_string(cf_an_comm_label(f->comm, label, sizeof(label))));
            jset(c, j, "comm_name", json_string(an_comm_name(a, f->comm, "all", name, sizeof(name))));
            jset(c, j, "comm_size", json_integer(f->comm_size));
            jset(c, j, "path", json_string(cf_path_name((unsigned)f->path)));
            jset(c, j, "size_lo", json_integer((json_int_t)(b->size_lo > INT64_MAX ? INT64_MAX : b->size_lo)));
            jset(c, j, "size_hi", json_integer((json_int_t)(b->size_hi > INT64_MAX ? INT64_MAX : b->size_hi)));
            jset(c, j, "size", jnum(b->size));
            jset(c, j, "calls", json_integer((json_int_t)b->calls));
            jset(c, j, "p50_s", jnum(b->p50_s));
            jset(c, j, "algbw_Bps", jnum(b->algbw_Bps));
            jset(c, j, "busbw_Bps", jnum(b->busbw_Bps));
            jset(c, j, "busbw_factor", jnum(cf_busbw_factor(f->coll, f->comm_size)));
            jset(c, j, "ideal_ring_s", jnum(b->ideal_s));
            jset(c, j, "ideal_busbw_Bps", jnum(b->ideal_busbw_Bps));
            jset(c, j, "ideal_algo", jstr(isfinite(b->ideal_s) ? cf_model_default_algo(f->coll) : NULL));
            jset(c, j, "ideal_source", jstr(isfinite(b->ideal_s) && ref ? ref->source : NULL));
            jset(c, j, "ideal_time_source", jstr(cf_pred_source_name((cf_pred_source_t)b->ideal_time_source)));
            jset(c, j, "efficiency", jnum(b->efficiency));
            jpush(c, arr, j);
        }
    }
    return arr;
}

static json_t *regions_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *arr = json_array();
    double ranks = a->p->ranks > 0 ? a->p->ranks : NAN;
    char label[24], name[CF_COMM_NAME_LEN];

    for (size_t i = 0; i < a->nregion; i++) {
        const cf_an_region_t *g = &a->region[i];
        json_t *j = json_object(), *ops = json_array();
        jset(c, j, "region", jstr(g->name));
        jset(c, j, "entries", g->entries >= 0 ? json_integer(g->entries) : json_null());
        jset(c, j, "time_s", jnum(g->time_s));
        jset(c, j, "time_per_rank_s", jnum(g->time_s / ranks));
        jset(c, j, "inclusive_s", jnum(g->inclusive_s));
        jset(c, j, "inclusive_per_rank_s", jnum(g->inclusive_s / ranks));
        jset(c, j, "share", jnum(g->share));
        for (size_t k = 0; k < g->nop; k++) {
            const cf_an_region_op_t *o = &g->op[k];
            json_t *r = json_object();
            jset(c, r, "op", json_string(o->op));
            jset(c, r, "kind", json_string(o->kind));
            jset(c, r, "comm", json_string(cf_comm_label(o->comm, label, sizeof(label))));
            jset(c, r, "comm_name", json_string(an_comm_name(a, o->comm, "-", name, sizeof(name))));
            jset(c, r, "comm_size", json_integer(o->comm_size));
            jset(c, r, "path", json_string(cf_path_name((unsigned)o->path)));
            jset(c, r, "calls", json_integer((json_int_t)o->calls));
            jset(c, r, "bytes", json_integer((json_int_t)o->bytes));
            jset(c, r, "time_s", jnum(o->time_s));
            jset(c, r, "time_per_rank_s", jnum(o->time_s / ranks));
            jset(c, r, "share", jnum(o->share));
            jpush(c, ops, r);
        }
        jset(c, j, "operations", ops);
        jpush(c, arr, j);
    }
    return arr;
}

static json_t *late_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *arr = json_array();
    char label[24], name[CF_COMM_NAME_LEN];

    for (size_t i = 0; i < a->nlate; i++) {
        const cf_an_late_t *l = &a->late[i];
        json_t *j = json_object(), *last = json_array();
        jset(c, j, "comm", json_string(cf_comm_label(l->comm, label, sizeof(label))));
        jset(c, j, "comm_name", json_string(an_comm_name(a, l->comm, "-", name, sizeof(name))));
        jset(c, j, "comm_size", json_integer(l->comm_size));
        jset(c, j, "instances", json_integer((json_int_t)l->instances));
        for (size_t k = 0; k < l->nlast; k++) {
            json_t *r = json_object();
            jset(c, r, "rank", json_integer(l->last[k].rank));
            jset(c, r, "count", json_integer((json_int_t)l->last[k].count));
            jset(c, r, "share",
                 jnum(l->instances > 0 ? (double)l->last[k].count / (double)l->instances : NAN));
            jpush(c, last, r);
        }
        jset(c, j, "last", last);
        jpush(c, arr, j);
    }
    return arr;
}

static json_t *jsize(uint64_t v)
{
    return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

static json_t *hop_json(jctx_t *c, const cf_an_hop_t *h)
{
    json_t *o = json_object();
    int ok = h->fit.ok;
    jset(c, o, "path", json_string(cf_path_name((unsigned)h->path)));
    jset(c, o, "messages", jsize(h->msgs));
    jset(c, o, "bytes", jsize(h->bytes));
    jset(c, o, "sizes", json_integer(h->nsizes));
    jset(c, o, "alpha_s", jnum(ok ? h->fit.alpha_s : NAN));
    jset(c, o, "bandwidth_Bps", jnum(ok ? h->fit.bandwidth_Bps : NAN));
    jset(c, o, "n_half_bytes", jnum(ok ? h->fit.n_half_bytes : NAN));
    jset(c, o, "r2", jnum(ok ? h->fit.r2 : NAN));
    jset(c, o, "size_lo", jnum(ok ? h->fit.size_lo : NAN));
    jset(c, o, "size_hi", jnum(ok ? h->fit.size_hi : NAN));
    jset(c, o, "segments", json_integer(ok ? h->fit.nseg : 0));
    jset(c, o, "note", jstr(h->note));
    return o;
}

static json_t *wire_coll_json(jctx_t *c, const cf_analysis_t *a, const cf_an_wire_t *w)
{
    json_t *o = json_object(), *bins = json_array();
    const cf_wire_infer_t *inf = &w->inf;
    const cf_wire_model_t *m = &inf->expected;
    double n = w->w.payload;
    char label[24], name[CF_COMM_NAME_LEN], advice[CF_AN_ADVICE_LEN];

    jset(c, o, "op", json_string(w->w.op));
    jset(c, o, "comm", json_string(cf_an_comm_label(w->w.comm, label, sizeof(label))));
    jset(c, o, "comm_name", json_string(an_comm_name(a, w->w.comm, "all", name, sizeof(name))));
    jset(c, o, "comm_size", json_integer(w->w.comm_size));
    jset(c, o, "mixed_comms", json_boolean(w->w.mixed_comms));
    jset(c, o, "path", w->w.path >= 0 ? json_string(cf_path_name((unsigned)w->w.path)) : json_null());
    jset(c, o, "size_lo", jsize(w->w.size_lo));
    jset(c, o, "size_hi", jsize(w->w.size_hi));
    jset(c, o, "payload_bytes", jnum(n));
    jset(c, o, "payload_lo_bytes", jnum(w->w.payload_lo));
    jset(c, o, "payload_hi_bytes", jnum(w->w.payload_hi));
    jset(c, o, "mpi_calls", jsize(w->w.mpi_calls));
    jset(c, o, "share", jnum(w->share));
    jset(c, o, "wire_messages_per_call_per_rank", jnum(w->w.msgs_per_call));
    jset(c, o, "wire_bytes_per_call_per_rank", jnum(w->w.bytes_per_call));
    jset(c, o, "message_size", jnum(w->msg_size));
    jset(c, o, "message_share_of_payload", jnum(n > 0 ? w->msg_size / n : NAN));
    for (size_t k = 0; k < w->w.nbin; k++) {
        const cf_wire_bin_t *b = &w->w.bin[k];
        json_t *j = json_object();
        jset(c, j, "size_lo", jsize(b->size_lo));
        jset(c, j, "size_hi", jsize(b->size_hi));
        jset(c, j, "size", jnum(b->msgs ? (double)b->bytes / (double)b->msgs : NAN));
        jset(c, j, "messages_per_call_per_rank",
             jnum(w->w.mpi_calls ? (double)b->msgs / (double)w->w.mpi_calls : NAN));
        jpush(c, bins, j);
    }
    jset(c, o, "message_bins", bins);
    jset(c, o, "inferred_algorithm", jstr(w->inferred ? inf->algo : NULL));
    jset(c, o, "closest_algorithm", jstr(w->inferred ? inf->closest : NULL));
    jset(c, o, "distance", jnum(w->inferred ? inf->distance : NAN));
    jset(c, o, "model", jstr(w->inferred ? m->shape : NULL));
    jset(c, o, "expected_messages", jnum(w->inferred ? m->msgs : NAN));
    jset(c, o, "expected_bytes_per_call_per_rank", jnum(w->inferred ? m->bytes * n : NAN));
    jset(c, o, "expected_message_size_lo", jnum(w->inferred ? m->size_lo * n : NAN));
    jset(c, o, "expected_message_size_hi", jnum(w->inferred ? m->size_hi * n : NAN));
    jset(c, o, "match", json_boolean(w->inferred && inf->algo != NULL));
    jset(c, o, "model_s", jnum(w->model_s));
    jset(c, o, "measured_s", jnum(w->measured_s));
    jset(c, o, "best_algorithm", jstr(w->best_algo));
    jset(c, o, "best_model_s", jnum(w->best_s));
    {
        json_t *l = json_object();
        jset(c, l, "source", jstr(w->cost_source));
        jset(c, l, "alpha_s", jnum(w->cost_alpha_s));
        jset(c, l, "bandwidth_Bps", jnum(w->cost_Bps));
        jset(c, o, "cost_link", l);
    }
    jset(c, o, "excess", jnum(w->excess));
    jset(c, o, "saving_per_rank_s", jnum(w->saving_s));
    jset(c, o, "advice", jstr(cf_analysis_wire_advice(a, w, advice, sizeof(advice))));
    jset(c, o, "note", jstr(w->note));
    return o;
}

static json_t *wire_other_json(jctx_t *c, const cf_an_wire_t *w)
{
    json_t *o = json_object();
    jset(c, o, "op", w->w.op[0] ? json_string(w->w.op) : json_null());
    jset(c, o, "mpi_calls", jsize(w->w.mpi_calls));
    jset(c, o, "messages", jsize(w->w.msgs));
    jset(c, o, "bytes", jsize(w->w.msg_bytes));
    jset(c, o, "receives", jsize(w->w.recvs));
    jset(c, o, "receive_bytes", jsize(w->w.recv_bytes));
    jset(c, o, "wire_messages_per_call_per_rank", jnum(w->w.msgs_per_call));
    jset(c, o, "message_size", jnum(w->msg_size));
    jset(c, o, "note", jstr(w->note));
    return o;
}

/* Whole numbers of bytes as integers. */
static json_t *jbytes(double v)
{
    return isfinite(v) && v >= 0 && v < 9.2e18 ? json_integer((json_int_t)llround(v)) : json_null();
}

/* The advised (else the best) bucket size's saving per step and the
 * uncertainty it was held against (cf_predict.h), the hidden end of a
 * nonblocking stream's, and the runs it stands on (cf_advice.h, "Several
 * runs": their spread is in the uncertainty). */
static void advice_saving_json(jctx_t *c, json_t *o, const cf_advice_t *ad)
{
    jset(c, o, "saving_step_s", jnum(ad->saving_step_s));
    jset(c, o, "saving_uncertainty_step_s", jnum(ad->saving_unc_step_s));
    jset(c, o, "hidden_saving_step_s", jnum(ad->hidden_saving_step_s));
    jset(c, o, "hidden_saving_uncertainty_step_s", jnum(ad->hidden_saving_unc_step_s));
    jset(c, o, "runs", json_integer(ad->runs));
    jset(c, o, "saving_run_spread_step_s", jnum(ad->run_spread_step_s));
}

/* The ranks' page faults a step and what the advice makes of them
 * (cf_advice.h, "Refaults"). */
static void advice_memory_json(jctx_t *c, json_t *o, const cf_advice_t *ad)
{
    char note[CF_ADV_NOTE_LEN];

    jset(c, o, "step_page_faults", jnum(ad->step_faults));
    jset(c, o, "step_preemptions", jnum(ad->step_preempt));
    /* the calibration's fresh page, and the advised (else the best)
     * buckets' refaults at it: priced (nonblocking), or stated beside a
     * price that leaves them out (blocking: one bucket's temporary buffer) */
    jset(c, o, "page_fault_s", jnum(ad->page_fault_s));
    jset(c, o, "refault_pages_per_step", jnum(ad->refault_pages));
    jset(c, o, "refault_step_s", jnum((double)ad->refault_pages * ad->page_fault_s));
    jset(c, o, "refault_priced", isfinite(ad->refault_pages) ? json_boolean(ad->nonblocking) : json_null());
    /* the advice is the buckets with the heap kept (cf_advice_keeps_heap) */
    jset(c, o, "heap_kept", json_boolean(cf_advice_keeps_heap(ad)));
    /* cf_advice_refaulted: null where not recorded */
    for (int k = 0; k < 2; k++) {
        int r = cf_advice_refaulted(ad, k);
        jset(c, o, k ? "in_flight_refaulted" : "step_refaulted", r < 0 ? json_null() : json_boolean(r));
    }
    /* the text's memory line, for the HTML (cf_advice_memory_note) */
    jset(c, o, "memory_note", cf_advice_memory_note(ad, note, sizeof(note)) ? json_string(note) : json_null());
    /* and its outside-MPI line (cf_advice_outside_note) */
    jset(c, o, "outside_mpi_note", cf_advice_outside_note(ad, note, sizeof(note)) ? json_string(note) : json_null());
    /* its line on the two ends of the price (cf_advice_hidden_note) */
    jset(c, o, "hidden_note", cf_advice_hidden_note(ad, note, sizeof(note)) ? json_string(note) : json_null());
    /* its in-flight lines (cf_advice_in_flight_notes) */
    {
        char lines[CF_ADV_IN_FLIGHT_LINES][CF_ADV_NOTE_LEN];
        int n = cf_advice_in_flight_notes(ad, lines);
        json_t *arr = json_array();
        for (int k = 0; k < n; k++)
            json_array_append_new(arr, json_string(lines[k]));
        jset(c, o, "in_flight_notes", arr);
    }
    /* its disturbed line, label included (cf_advice_disturbed_note) */
    jset(c, o, "disturbed_note", cf_advice_disturbed_note(ad, note, sizeof(note)) ? json_string(note) : json_null());
    /* and its polls' tails line (cf_advice_polls_note) */
    jset(c, o, "polls_note", cf_advice_polls_note(ad, note, sizeof(note)) ? json_string(note) : json_null());
}

/* One stream's fusion advice (cf_advice.h). */
static json_t *advice_json(jctx_t *c, const cf_analysis_t *a, const cf_advice_t *ad)
{
    json_t *o = json_object(), *model = json_object(), *cands = json_array();
    char label[24], name[CF_COMM_NAME_LEN];
    int has_model = ad->model_source[0] != '\0';

    if (o == NULL || model == NULL || cands == NULL) {
        json_decref(o);
        json_decref(model);
        json_decref(cands);
        return NULL;
    }
    jset(c, o, "op", json_string(ad->op));
    jset(c, o, "comm", json_string(cf_comm_label(ad->comm, label, sizeof(label))));
    jset(c, o, "comm_size", json_integer(ad->comm_size));
    jset(c, o, "path", json_string(cf_path_name((unsigned)ad->path)));
    jset(c, o, "nonblocking", json_boolean(ad->nonblocking));
    jset(c, o, "verdict", jstr(ad->verdict));
    jset(c, o, "reason", jstr(ad->reason));
    jset(c, o, "share", jnum(ad->share));
    jset(c, o, "bucket_bytes", jbytes(ad->bucket_bytes));
    jset(c, o, "current_s", jnum(ad->current_s));
    jset(c, o, "current_source", jstr(ad->current_source));
    /* nonblocking: what current_s is made of (cf_advice.h) */
    jset(c, o, "post_s", ad->nonblocking ? jnum(ad->post_s) : json_null());
    jset(c, o, "blocked_s", ad->nonblocking ? jnum(ad->blocked_s) : json_null());
    jset(c, o, "poll_s", ad->nonblocking ? jnum(ad->poll_s) : json_null());
    jset(c, o, "polls_with_posts", ad->nonblocking ? json_boolean(ad->polls_with_posts) : json_null());
    jset(c, o, "predicted_s", jnum(ad->predicted_s));
    jset(c, o, "predicted_saving_s", jnum(ad->predicted_saving_s));
    jset(c, o, "call_gap_s", jnum(ad->call_gap_s));
    jset(c, o, "call_gap_pairs", json_integer((json_int_t)ad->call_gap_pairs));
    jset(c, o, "framework_saving_s", jnum(ad->framework_saving_s));
    jset(c, o, "post_lead_s", ad->nonblocking ? jflt(ad->post_lead_s) : json_null());
    jset(c, o, "post_leads", ad->nonblocking ? json_integer((json_int_t)ad->post_leads) : json_null());
    jset(c, o, "framework_lead_step_s", jnum(cf_advice_lead_step(ad)));
    jset(c, o, "ddp_bucket_cap_mb", ad->knob_ddp ? jnum(ad->bucket_bytes / 1048576.0) : json_null());
    jset(c, o, "horovod_fusion_threshold", ad->knob_horovod ? jbytes(ad->bucket_bytes) : json_null());
    jset(c, o, "calls_from", jstr(ad->caller));
    {
        char how[CF_ADV_NOTE_LEN];
        jset(c, o, "fuse_how",
             ad->bucket_bytes > 0 ? json_string(cf_advice_how(ad, 0, how, sizeof(how))) : json_null());
    }
    jset(c, o, "steps", json_integer((json_int_t)ad->steps));
    jset(c, o, "steps_source", jstr(ad->steps_source));
    jset(c, o, "steps_region", ad->steps_region[0] ? json_string(ad->steps_region) : json_null());
    jset(c, o, "calls", json_integer((json_int_t)ad->calls));
    jset(c, o, "calls_per_step", jnum(ad->calls_per_step));
    jset(c, o, "bytes_per_step", jnum(ad->bytes_per_step));
    jset(c, o, "buckets_per_step", jnum(ad->buckets_per_step));
    jset(c, o, "model_current_step_s", jnum(ad->model_current_s));
    jset(c, o, "model_step_s", jnum(ad->model_s));
    /* The saving the model alone gives, without the measured time's scale. */
    jset(c, o, "model_saving_s",
               jnum(isfinite(ad->model_s) ? (ad->model_current_s - ad->model_s) * (double)ad->steps
                    : ad->verdict != NULL ? 0.0 : NAN));
    jset(c, o, "best_saving_share", jnum(ad->best_saving_share));
    advice_saving_json(c, o, ad);
    /* the advised buckets in flight together against one at a time, as
     * the calibration measured them (null: not measured) */
    jset(c, o, "measured_over_model", jnum(ad->measured_over_model));
    jset(c, o, "disturbed", isfinite(ad->measured_over_model) ? json_boolean(ad->disturbed) : json_null());
    jset(c, o, "blocked_excess_s", ad->nonblocking ? jnum(ad->blocked_excess_s) : json_null());
    jset(c, o, "poll_excess_s", ad->nonblocking ? jnum(ad->poll_excess_s) : json_null());
    jset(c, o, "poll_load_s", ad->nonblocking ? jflt(ad->poll_load_s) : json_null());
    jset(c, o, "in_flight_ratio", jnum(ad->inflight_ratio));
    jset(c, o, "in_flight_calls", isfinite(ad->inflight_ratio) ? json_integer(ad->inflight_calls) : json_null());
    jset(c, o, "in_flight_page_faults", isfinite(ad->inflight_ratio) ? jnum(ad->inflight_faults) : json_null());
    advice_memory_json(c, o, ad);
    jset(c, o, "arrival_skew_step_s", ad->nonblocking ? jnum(ad->skew_s) : json_null());
    jset(c, o, "why", ad->why[0] ? json_string(ad->why) : json_null());
    jset(c, o, "extrapolated", json_boolean(ad->extrapolated));
    jset(c, model, "source", jstr(has_model ? ad->model_source : NULL));
    jset(c, model, "alpha_s", jnum(has_model ? ad->alpha_s : NAN));
    jset(c, model, "bandwidth_Bps", jnum(has_model ? ad->bandwidth_Bps : NAN));
    jset(c, model, "startup_share", jnum(ad->startup_share));
    jset(c, model, "memcpy_Bps", jnum(ad->memcpy_Bps));
    jset(c, model, "tensors_per_step", json_integer((json_int_t)ad->tensors));
    jset(c, model, "current_step_uncertainty_s", jnum(ad->model_current_unc_s));
    jset(c, model, "current_time_source", jstr(cf_pred_source_name((cf_pred_source_t)ad->current_pred_source)));
    jset(c, o, "model", model);
    for (size_t k = 0; has_model && k < ad->ncand; k++) {
        const cf_adv_cand_t *cd = &ad->cand[k];
        json_t *j = json_object();
        if (j == NULL) {
            c->bad = 1;
            break;
        }
        jset(c, j, "bucket_bytes", jbytes(cd->bucket_bytes));
        jset(c, j, "name", jstr(cd->name));
        jset(c, j, "buckets_per_step", jnum(cd->buckets));
        jset(c, j, "fused_bytes_per_step", jnum(cd->fused_bytes));
        jset(c, j, "copy_step_s", jnum(cd->copy_s));
        jset(c, j, "model_step_s", jnum(cd->model_s));
        jset(c, j, "uncertainty_step_s", jnum(cd->unc_s));
        /* the least measured of its buckets' times: "measured", "calibration", "model" */
        jset(c, j, "time_source", jstr(cf_pred_source_name((cf_pred_source_t)cd->source)));
        jset(c, j, "predicted_s", jnum(cf_advice_cand_predicted_s(ad, cd)));
        /* as the verdict judges it, this profile's (cf_advice_cand_saving) */
        double unc, sv = cf_advice_cand_saving(ad, cd, &unc);
        jset(c, j, "saving_step_s", jnum(sv));
        jset(c, j, "saving_uncertainty_step_s", jnum(unc));
        if (ad->nonblocking) {
            jset(c, j, "in_flight_ratio", jnum(cd->inflight_ratio));
            jset(c, j, "exposed_step_s", jnum(cd->exposed_s));
        }
        jset(c, j, "refault_pages_per_step", jnum(cd->refault_pages));
        jset(c, j, "refault_step_s", jnum(cd->refault_s));
        jpush(c, cands, j);
    }
    jset(c, o, "candidates", cands);
    jset(c, o, "comm_name", json_string(an_comm_name(a, ad->comm, "-", name, sizeof(name))));
    return o;
}

/* null without UCX records */
static json_t *wire_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *o, *coll, *other, *hops, *tr;

    if (a->nwire == 0 && a->nhop == 0)
        return json_null();
    o = json_object();
    coll = json_array();
    other = json_array();
    hops = json_array();
    for (size_t i = 0; i < a->nwire; i++) {
        if (a->wire[i].collective)
            jpush(c, coll, wire_coll_json(c, a, &a->wire[i]));
        else
            jpush(c, other, wire_other_json(c, &a->wire[i]));
    }
    for (size_t i = 0; i < a->nhop; i++)
        jpush(c, hops, hop_json(c, &a->hop[i]));
    tr = cf_wire_transports(a->p);
    jset(c, o, "collectives", coll);
    jset(c, o, "other", other);
    jset(c, o, "hop_fits", hops);
    jset(c, o, "transports", tr != NULL ? json_deep_copy(tr) : json_object());
    return o;
}

static json_t *job_json(jctx_t *c, const cf_profile_t *p)
{
    json_t *job = json_object();
    jset(c, job, "ranks", json_integer(p->ranks));
    jset(c, job, "nodes", json_integer(p->nodes));
    jset(c, job, "wall_s", jnum(p->wall_s));
    jset(c, job, "partial", json_boolean(p->partial));
    jset(c, job, "oversubscribed", p->oversubscribed < 0 ? json_null() : json_boolean(p->oversubscribed));
    jset(c, job, "mpi_library", json_string(p->mpi_library));
    jset(c, job, "start_time", json_string(p->start_time));
    return job;
}

static json_t *mpi_time_json(jctx_t *c, const cf_analysis_t *a)
{
    const cf_an_ranks_t *rk = &a->ranks;
    json_t *mt = json_object();
    jset(c, mt, "ranked_s", jnum(a->total_s));
    jset(c, mt, "nonblocking_spans_s", jnum(a->span_s));
    jset(c, mt, "waits_charged", json_boolean(a->charged));
    jset(c, mt, "total_s", jnum(rk->mpi_total_s));
    jset(c, mt, "mean_s", jnum(rk->mpi_mean_s));
    jset(c, mt, "min_s", jnum(rk->mpi_min_s));
    jset(c, mt, "max_s", jnum(rk->mpi_max_s));
    jset(c, mt, "min_rank", json_integer(rk->min_rank));
    jset(c, mt, "max_rank", json_integer(rk->max_rank));
    jset(c, mt, "wall_mean_s", jnum(rk->wall_mean_s));
    jset(c, mt, "fraction_of_wall", jnum(rk->mpi_fraction));
    jset(c, mt, "imbalance", jnum(rk->imbalance));
    return mt;
}

static json_t *breakdown_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *bd = json_object();
    jset(c, bd, "startup", jnum(a->split.startup));
    jset(c, bd, "payload", jnum(a->split.payload));
    jset(c, bd, "no_payload", jnum(a->split.no_payload));
    jset(c, bd, "unexplained", jnum(a->split.unexplained));
    jset(c, bd, "uncertain", jnum(a->split.uncertain));
    jset(c, bd, "io", jnum(a->split.io));
    jset(c, bd, "blocked", jnum(a->split.blocked));
    jset(c, bd, "waiting", jnum(a->split.waiting));
    return bd;
}

static json_t *ranks_json(jctx_t *c, const cf_profile_t *p)
{
    json_t *ranks = json_array();
    for (size_t i = 0; i < p->nrank; i++) {
        const cf_rank_info_t *r = &p->rank[i];
        json_t *j = json_object();
        jset(c, j, "rank", json_integer(r->rank));
        jset(c, j, "node", json_integer(r->node));
        jset(c, j, "host", json_string(r->host));
        jset(c, j, "wall_s", jnum(r->wall_s));
        jset(c, j, "mpi_s", jnum(r->mpi_s));
        jset(c, j, "wait_s", jnum(r->wait_s));
        jset(c, j, "transfer_s", jnum(r->xfer_s));
        jpush(c, ranks, j);
    }
    return ranks;
}

/* The reference link of each path that has one. */
static json_t *references_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *refs = json_array();
    for (int path = 0; path < CF_AN_NPATH; path++) {
        const cf_an_ref_t *ref = &a->ref[path];
        json_t *j;
        if (ref->source == NULL)
            continue;
        j = json_object();
        jset(c, j, "path", json_string(cf_path_name((unsigned)path)));
        jset(c, j, "source", json_string(ref->source));
        jset(c, j, "alpha_s", jnum(ref->alpha_s));
        jset(c, j, "bandwidth_Bps", jnum(ref->bandwidth_Bps));
        jset(c, j, "uncertain_why", ref->why[0] ? json_string(ref->why) : json_null());
        /* the program's own joint fit of the path, beside the link used */
        jset(c, j, "program_fit", cf_an_ref_program_json(ref));
        jpush(c, refs, j);
    }
    return refs;
}

/* What the library declared, per path, and whether it was used. */
static json_t *protocol_limits_json(jctx_t *c, const cf_analysis_t *a)
{
    json_t *pls = json_array();
    for (int path = 0; path < CF_AN_NPATH; path++) {
        const cf_an_limits_t *pl = &a->limits[path];
        json_t *e, *arr;
        if (pl->n == 0 && pl->unused_why == NULL)
            continue;
        e = json_object();
        arr = json_array();
        jset(c, e, "path", json_string(cf_path_name((unsigned)path)));
        for (size_t q = 0; q < pl->n; q++) {
            json_t *l = json_object();
            jset(c, l, "name", json_string(pl->name[q]));
            jset(c, l, "bytes", jnum(pl->bytes[q]));
            jpush(c, arr, l);
        }
        jset(c, e, "limits", arr);
        jset(c, e, "unused_why", jstr(pl->unused_why));
        jpush(c, pls, e);
    }
    return pls;
}

/* Every communicator of the profile, as reports name it. */
static json_t *communicators_json(jctx_t *c, const cf_profile_t *p)
{
    json_t *comms = json_array();
    char label[24], name[CF_COMM_NAME_LEN];
    for (size_t i = 0; i < p->ncomm; i++) {
        const cf_comm_info_t *ci = &p->comm[i];
        json_t *j = json_object();
        jset(c, j, "comm", json_string(cf_comm_label(ci->id, label, sizeof(label))));
        jset(c, j, "comm_name", json_string(cf_comm_name(p, ci->id, name, sizeof(name))));
        jset(c, j, "made_by", json_string(ci->name));
        jset(c, j, "description", ci->desc[0] ? json_string(ci->desc) : json_null());
        jset(c, j, "user_name", ci->user_name[0] ? json_string(ci->user_name) : json_null());
        jset(c, j, "size", json_integer(ci->size));
        jset(c, j, "nodes", json_integer(ci->nodes));
        jpush(c, comms, j);
    }
    return comms;
}

/* One row of the cost ranking. */
static json_t *operation_json(jctx_t *c, const cf_analysis_t *a, const cf_an_op_t *o)
{
    const cf_profile_t *p = a->p;
    json_t *j = json_object();
    char label[24], name[CF_COMM_NAME_LEN], advice[CF_AN_ADVICE_LEN];

    jset(c, j, "op", json_string(o->op));
    jset(c, j, "kind", json_string(o->kind));
    jset(c, j, "comm", json_string(cf_comm_label(o->comm, label, sizeof(label))));
    jset(c, j, "comm_name", json_string(an_comm_name(a, o->comm, "-", name, sizeof(name))));
    jset(c, j, "comm_size", json_integer(o->comm_size));
    jset(c, j, "path", json_string(cf_path_name((unsigned)o->path)));
    jset(c, j, "nonblocking", json_boolean(o->nonblocking));
    jset(c, j, "calls", json_integer((json_int_t)o->calls));
    jset(c, j, "ranks_missing", json_integer(o->ranks_missing));
    jset(c, j, "bytes", json_integer((json_int_t)o->bytes));
    jset(c, j, "time_s", jnum(o->time_s));
    jset(c, j, "time_per_rank_s", jnum(p->ranks > 0 ? o->time_s / p->ranks : NAN));
    jset(c, j, "share", jnum(o->share));
    jset(c, j, "startup_share", jnum(o->fit && !o->nonblocking ? o->fit->startup_share : NAN));
    if (o->nonblocking) {
        char line[768];
        jset(c, j, "span_s", jnum(o->span_s));
        jset(c, j, "post_s", jnum(o->post_s));
        jset(c, j, "blocked_s", jnum(o->blocked_s));
        jset(c, j, "blocking_s", jnum(o->blocking_s));
        jset(c, j, "hidden", jnum(o->hidden));
        jset(c, j, "blocking_source", jstr(o->blocking_source));
        jset(c, j, "overlap", jstr(cf_analysis_overlap_line(a, o, line, sizeof(line))));
    }
    if (strcmp(o->kind, "completion") == 0)
        jset(c, j, "charged_s", jnum(o->charged_s));
    /* A span is not a cost: no verdict on it. */
    jset(c, j, "verdict", jstr(o->fit && !o->nonblocking ? o->fit->verdict : NULL));
    jset(c, j, "uncertain_why", o->fit && o->fit->why[0] && !o->nonblocking ? json_string(o->fit->why)
                                                                            : json_null());
    jset(c, j, "wait_share", jnum(o->fit ? o->fit->wait_share : NAN));
    jset(c, j, "advice", json_string(cf_analysis_advice(o, advice, sizeof(advice))));
    return j;
}

json_t *cf_analysis_to_json(const cf_analysis_t *a)
{
    const cf_profile_t *p = a->p;
    jctx_t c = {0};
    json_t *root = json_object(), *ops = json_array(), *fits = json_array();

    jset(&c, root, "format", json_string("commfit-report"));
    jset(&c, root, "version", json_integer(1));
    jset(&c, root, "job", job_json(&c, p));
    {
        json_t *cv = json_array();
        for (size_t i = 0; i < a->ncaveat; i++)
            jpush(&c, cv, json_string(a->caveat[i]));
        jset(&c, root, "caveats", cv);
    }
    {
        char h[512];
        jset(&c, root, "headline", json_string(cf_analysis_headline(a, h, sizeof(h))));
    }
    jset(&c, root, "mpi_time", mpi_time_json(&c, a));
    jset(&c, root, "breakdown", breakdown_json(&c, a));
    jset(&c, root, "ranks", ranks_json(&c, p));
    jset(&c, root, "references", references_json(&c, a));
    jset(&c, root, "protocol_limits", protocol_limits_json(&c, a));
    jset(&c, root, "communicators", communicators_json(&c, p));
    for (size_t k = 0; k < a->nop; k++)
        jpush(&c, ops, operation_json(&c, a, &a->op[k]));
    jset(&c, root, "operations", ops);
    for (size_t i = 0; i < a->nfit; i++)
        jpush(&c, fits, fit_json(&c, a, &a->fit[i]));
    jset(&c, root, "fits", fits);
    jset(&c, root, "collectives", collectives_json(&c, a));
    {
        json_t *adv = json_array();
        for (size_t i = 0; i < a->nfusion; i++)
            jpush(&c, adv, advice_json(&c, a, &a->fusion[i]));
        jset(&c, root, "advice", adv);
    }
    jset(&c, root, "regions", regions_json(&c, a));
    jset(&c, root, "late_arrivals", late_json(&c, a));
    jset(&c, root, "wire", wire_json(&c, a));
    {
        /* the communication matrix as the profile has it (null: not recorded) */
        json_t *m = cf_profile_matrix_json(p);
        jset(&c, root, "matrix", m != NULL ? m : json_null());
    }

    if (c.bad || root == NULL) {
        json_decref(root);
        return NULL;
    }
    return root;
}
