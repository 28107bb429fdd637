/* commfit report, CSV: one row per fit and per size bin, wire and hop rows
 * beneath them; or the matrix, one row per pair (report_csv.h). */
#include "report_csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf_common.h"
#include "cf_profile.h"
#include "cf_wire.h"

static void csv_num(double v)
{
    if (isfinite(v))
        printf(",%.9g", v);
    else
        fputs(",", stdout);
}

static void csv_str(const char *s)
{
    putchar(',');
    if (s == NULL)
        return;
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; s++) {
        if (*s == '"')
            putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void csv_key(const cf_analysis_t *a, const char *row, const cf_an_fit_t *f)
{
    char label[24], name[CF_COMM_NAME_LEN];
    fputs(row, stdout);
    csv_str(cf_an_kind_name(f->kind));
    csv_str(f->op);
    csv_str(cf_an_comm_label(f->comm, label, sizeof(label)));
    csv_str(f->joint ? "all" : cf_comm_name(cf_analysis_profile(a), f->comm, name, sizeof(name)));
    printf(",%d", f->comm_size);
    csv_str(cf_path_name((unsigned)f->path));
}

/* The wire columns of a row that has none. */
#define CSV_NO_WIRE ",,,,,,"
/* time_source .. uncertain_why of a row that has none. */
#define CSV_NO_QUALITY ",,,,,"

/* Rows "wire" (collectives beneath MPI) and "hop" (per-hop fits of the UCX
 * sends of a path); columns that do not apply are empty. */

/* alpha_s .. bandwidth_ci_hi of a fit; empty cells when there is none */
static void csv_fit_params(const cf_fit_t *ft)
{
    double v[8] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    if (ft) {
        double w[8] = {ft->alpha_s,     ft->bandwidth_Bps, ft->n_half_bytes,    ft->r2,
                       ft->alpha_ci[0], ft->alpha_ci[1],   ft->bandwidth_ci[0], ft->bandwidth_ci[1]};
        memcpy(v, w, sizeof(v));
    }
    for (int j = 0; j < 8; j++)
        csv_num(v[j]);
}

static void csv_wire(const cf_analysis_t *a)
{
    char label[24], name[CF_COMM_NAME_LEN];

    for (size_t i = 0; i < cf_analysis_nwire(a); i++) {
        const cf_an_wire_t *w = cf_analysis_wire(a, i);
        int ok = w->inferred;
        if (!w->collective)
            continue;
        fputs("wire", stdout);
        csv_str("collective");
        csv_str(w->w.op);
        csv_str(cf_an_comm_label(w->w.comm, label, sizeof(label)));
        csv_str(w->w.comm == CF_COMM_ID_NONE ? "all"
                                             : cf_comm_name(cf_analysis_profile(a), w->w.comm, name, sizeof(name)));
        printf(",%d", w->w.comm_size);
        csv_str(w->w.path >= 0 ? cf_path_name((unsigned)w->w.path) : NULL);
        printf(",%llu,%llu", (unsigned long long)w->w.size_lo, (unsigned long long)w->w.size_hi);
        csv_num(w->w.payload);
        printf(",%llu,%llu", (unsigned long long)w->w.mpi_calls, (unsigned long long)w->w.mpi_bytes);
        for (int j = 0; j < 15; j++) /* time_s .. wait_share */
            csv_num(NAN);
        csv_str(w->note);
        for (int j = 0; j < 4; j++) /* algbw_Bps .. efficiency */
            csv_num(NAN);
        csv_num(w->w.msgs_per_call);
        csv_num(w->w.bytes_per_call);
        csv_num(w->msg_size);
        csv_str(ok ? w->inf.algo : NULL);
        csv_num(ok ? w->inf.expected.msgs : NAN);
        csv_str(ok ? (w->inf.algo != NULL ? "true" : "false") : NULL);
        fputs(CSV_NO_QUALITY, stdout);
        putchar('\n');
    }
    for (size_t i = 0; i < cf_analysis_nhops(a); i++) {
        const cf_an_hop_t *h = cf_analysis_hop(a, i);
        const cf_fit_t *ft = &h->fit;
        int ok = ft->ok;
        printf("hop,ucx,send,,,");
        csv_str(cf_path_name((unsigned)h->path));
        csv_num(ok ? ft->size_lo : NAN);
        csv_num(ok ? ft->size_hi : NAN);
        csv_num(NAN);
        printf(",%llu,%llu", (unsigned long long)h->msgs, (unsigned long long)h->bytes);
        for (int j = 0; j < 3; j++) /* time_s, p50_s, predicted_s */
            csv_num(NAN);
        csv_fit_params(ok ? ft : NULL);
        for (int j = 0; j < 4; j++) /* startup_share .. wait_share */
            csv_num(NAN);
        csv_str(h->note);
        for (int j = 0; j < 4; j++)
            csv_num(NAN);
        fputs(CSV_NO_WIRE, stdout);
        fputs(CSV_NO_QUALITY, stdout);
        putchar('\n');
    }
}

void cf_report_csv(const cf_analysis_t *a)
{
    printf("row,kind,op,comm,comm_name,comm_size,path,size_lo,size_hi,size,calls,bytes,time_s,p50_s,"
           "predicted_s,alpha_s,bandwidth_Bps,n_half_bytes,r2,alpha_ci_lo,alpha_ci_hi,"
           "bandwidth_ci_lo,bandwidth_ci_hi,startup_share,verdict,verdict_basis,wait_share,note,"
           "algbw_Bps,busbw_Bps,ideal_s,efficiency,wire_messages_per_call,wire_bytes_per_call,"
           "message_size,inferred_algorithm,expected_messages,match,time_source,samples,coverage,"
           "model_error,uncertain_why\n");
    for (size_t i = 0; i < cf_analysis_nfits(a); i++) {
        const cf_an_fit_t *f = cf_analysis_fit(a, i);
        const cf_fit_t *ft = &f->fit;
        int ok = ft->ok;

        csv_key(a, "fit", f);
        csv_num(ok ? ft->size_lo : NAN);
        csv_num(ok ? ft->size_hi : NAN);
        csv_num(NAN);
        printf(",%llu,%llu", (unsigned long long)f->calls, (unsigned long long)f->bytes);
        csv_num(f->time_s);
        csv_num(NAN);
        csv_num(NAN);
        csv_fit_params(ok ? ft : NULL);
        csv_num(f->startup_share);
        csv_str(f->verdict);
        csv_str(f->basis);
        csv_num(f->wait_share);
        csv_str(f->note);
        csv_num(NAN);
        csv_num(NAN);
        csv_num(NAN);
        csv_num(f->efficiency);
        fputs(CSV_NO_WIRE, stdout);
        csv_str(f->time_source == (CF_AN_TIME_DURATION | CF_AN_TIME_TRANSFER) ? "mixed"
                : f->time_source == CF_AN_TIME_TRANSFER                       ? "transfer"
                                                                              : "duration");
        printf(",%llu", (unsigned long long)f->samples);
        csv_num(f->calls > 0 ? (double)f->samples / (double)f->calls : NAN);
        csv_num(f->err_rms); /* a fit's row: the rms error over its kept bins */
        csv_str(f->why[0] ? f->why : NULL);
        putchar('\n');
        for (size_t k = 0; k < f->nbin; k++) {
            const cf_an_bin_t *b = &f->bin[k];
            csv_key(a, "bin", f);
            printf(",%llu,%llu", (unsigned long long)b->size_lo, (unsigned long long)b->size_hi);
            csv_num(b->size);
            printf(",%llu,%llu", (unsigned long long)b->calls, (unsigned long long)b->bytes);
            csv_num(b->time_s);
            csv_num(b->p50_s);
            csv_num(b->predicted_s);
            for (int j = 0; j < 8; j++)
                csv_num(NAN);
            csv_num(b->startup_share);
            csv_str(b->verdict);
            csv_str(f->basis);
            csv_num(NAN);
            csv_str(b->in_fit ? NULL : b->outlier ? "outlier: not in fit" : "not in fit");
            csv_num(b->algbw_Bps);
            csv_num(b->busbw_Bps);
            csv_num(b->ideal_s);
            csv_num(b->efficiency);
            fputs(CSV_NO_WIRE, stdout);
            csv_str(b->time_source == CF_AN_TIME_TRANSFER ? "transfer" : "duration");
            printf(",%llu", (unsigned long long)b->samples);
            csv_num(b->coverage);
            csv_num(b->model_error);
            csv_str(NULL);
            putchar('\n');
        }
    }
    csv_wire(a);
}

int cf_report_csv_matrix(const cf_analysis_t *a)
{
    const cf_profile_t *p = cf_analysis_profile(a);
    cf_pair_t *pairs;
    size_t n;
    char err[256], label[32], name[CF_COMM_NAME_LEN];
    int rc = cf_profile_matrix(p, &pairs, &n, NULL, err, sizeof(err));

    if (rc != CF_OK) {
        fprintf(stderr, "commfit report: %s\n", rc == CF_ERR_FORMAT ? err : cf_status_str(rc));
        return rc;
    }
    printf("src,dst,messages,bytes,comm,comm_name,source\n");
    for (size_t i = 0; i < n; i++) {
        printf("%d,%d,%llu,%llu", pairs[i].src, pairs[i].dst, (unsigned long long)pairs[i].msgs,
               (unsigned long long)pairs[i].bytes);
        csv_str(pairs[i].comm == CF_COMM_ID_NONE ? "all" : cf_comm_label(pairs[i].comm, label, sizeof(label)));
        csv_str(pairs[i].comm == CF_COMM_ID_NONE ? "all" : cf_comm_name(p, pairs[i].comm, name, sizeof(name)));
        printf(",%s\n", pairs[i].source == CF_PAIR_UCX ? "ucx" : "mpi");
    }
    free(pairs);
    return CF_OK;
}
