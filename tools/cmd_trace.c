/* commfit trace PROFILE > trace.json: the sampled collective instances and
 * point-to-point messages in the Chrome Trace Event format (open in
 * Perfetto or chrome://tracing), on the synchronized clock.  Each rank has
 * a track of collective instances, each a slice with its waiting part
 * nested inside, so late arrivals line up; and a track of the messages it
 * received, each an arrow from the send's post on the sender's message
 * track to the receive, so it shows who waited for whom. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cf_profile.h"
#include "commfit.h"

static void cf_trace_usage(FILE *out)
{
    fprintf(out, "usage: commfit trace [-o FILE] PROFILE\n"
                 "  writes the sampled collective instances as Chrome Trace Event JSON\n"
                 "  (stdout by default); open it in https://ui.perfetto.dev or chrome://tracing\n"
                 "  -o, --output FILE  write to FILE instead of stdout\n");
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_str(FILE *out, const char *v)
{
    fputc('"', out);
    for (; *v; v++) {
        unsigned char ch = (unsigned char)*v;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

/* Flow from a message's send (ph "s") to its receive ("f"). */
static void put_flow(FILE *out, char ph, size_t id, long long tid, double ts_s)
{
    fprintf(out, ",\n{\"name\":\"message\",\"cat\":\"p2p\",\"ph\":\"%c\",%s\"id\":%zu,\"pid\":0,"
                 "\"tid\":%lld,\"ts\":%.15g}",
            ph, ph == 'f' ? "\"bp\":\"e\"," : "", id, tid, ts_s * 1e6);
}

/* One complete ("X") event; the events are written as they are read, so
 * that memory does not grow with the trace. */
static void put_event(FILE *out, int *first, const char *name, const char *cat, long long rank,
                      double ts_s, double dur_s)
{
    fputs(*first ? "\n" : ",\n", out);
    *first = 0;
    fputs("{\"name\":", out);
    put_str(out, name);
    fprintf(out, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%lld,\"ts\":%.15g,\"dur\":%.15g", cat,
            rank, ts_s * 1e6, dur_s * 1e6);
}

/* What the walks over the samples share. */
typedef struct {
    FILE *out;
    const cf_profile_t *p;
    int *first;
    size_t bad, nmsg;
} trace_t;

/* One sampled collective instance: its slice, and its wait inside it. */
static int trace_instance(json_t *e, void *ctx)
{
    trace_t *t = ctx;
    FILE *out = t->out;
    json_int_t rank, comm, seq;
    const char *op;
    double enter, leave, wait;
    if (json_unpack(e, "[I, I, I, s, F, F, F]", &rank, &comm, &seq, &op, &enter, &leave, &wait) != 0 ||
        !isfinite(enter) || !isfinite(leave) || !isfinite(wait)) {
        t->bad++;
        return CF_OK;
    }
    char label[24], name[CF_COMM_NAME_LEN];
    cf_comm_label((uint32_t)comm, label, sizeof(label));
    cf_comm_name(t->p, (uint32_t)comm, name, sizeof(name));
    put_event(out, t->first, op, "mpi", (long long)rank, enter, leave - enter);
    fprintf(out, ",\"args\":{\"comm\":\"%s\",\"comm_name\":", label);
    put_str(out, name);
    fprintf(out, ",\"seq\":%lld,\"wait_us\":%.15g}}", (long long)seq, wait * 1e6);
    if (wait > 0) {
        put_event(out, t->first, "waiting for others", "wait", (long long)rank, enter, wait);
        fputc('}', out);
    }
    return CF_OK;
}

/* One sampled message: a tick at the send's post, the receive, an arrow. */
static int trace_message(json_t *e, void *ctx)
{
    trace_t *t = ctx;
    FILE *out = t->out;
    const cf_profile_t *p = t->p;
    json_int_t src, dst, comm, tag, size;
    const char *sop, *rop;
    double spost, rpost, rdone;
    int late;
    if (json_unpack(e, "[I, I, I, I, I, s, s, F, F, F, b]", &src, &dst, &comm, &tag, &size, &sop, &rop, &spost,
                    &rpost, &rdone, &late) != 0 ||
        !isfinite(spost) || !isfinite(rpost) || !isfinite(rdone) || src < 0 || dst < 0 || src >= p->ranks ||
        dst >= p->ranks || rdone < rpost) {
        t->bad++;
        return CF_OK;
    }
    char label[24], name[96], cname[CF_COMM_NAME_LEN];
    cf_comm_label((uint32_t)comm, label, sizeof(label));
    cf_comm_name(p, (uint32_t)comm, cname, sizeof(cname));
    long long stid = (long long)src + p->ranks, rtid = (long long)dst + p->ranks;
    /* The send is known by its post only: a tick on the sender's track. */
    snprintf(name, sizeof(name), "%s to %lld", sop, (long long)dst);
    put_event(out, t->first, name, "p2p", stid, spost, 1e-9);
    fputs("}", out);
    /* A blocking receive is the span the program waited in it; a
     * nonblocking one only its completion (the span overlaps other work). */
    int nonblocking = strncmp(rop, "MPI_I", 5) == 0;
    double ts = nonblocking ? rdone - 1e-9 : rpost, dur = nonblocking ? 1e-9 : rdone - rpost;
    snprintf(name, sizeof(name), "%s from %lld", rop, (long long)src);
    put_event(out, t->first, name, "p2p", rtid, ts, dur > 1e-9 ? dur : 1e-9);
    fprintf(out, ",\"args\":{\"comm\":\"%s\",\"comm_name\":", label);
    put_str(out, cname);
    fprintf(out, ",\"tag\":%lld,\"size_bin_bytes\":%lld,\"one_way_us\":%.15g,\"receive_posted_after_send\":%s}}",
            (long long)tag, (long long)size, (rdone - spost) * 1e6, late ? "true" : "false");
    put_flow(out, 's', t->nmsg, stid, spost);
    put_flow(out, 'f', t->nmsg, rtid, ts + (dur > 2e-9 ? dur / 2 : 0));
    t->nmsg++;
    return CF_OK;
}

int cf_cmd_trace(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *outpath = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outpath = optarg; break;
        case 'h': cf_trace_usage(stdout); return 0;
        default: cf_trace_usage(stderr); return CF_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cf_trace_usage(stderr);
        return CF_EXIT_USAGE;
    }
    const char *path = argv[optind];
    cf_profile_t p;
    char err[512];
    /* the samples, the bulk of the file, are read one at a time as they are written */
    static const char *const unread[] = {"samples", NULL};
    if (cf_profile_read_without(path, unread, &p, err, sizeof(err)) != CF_OK) {
        fprintf(stderr, "commfit trace: %s: %s\n", path, err);
        return CF_EXIT_USAGE;
    }
    if (cf_profile_each(path, "samples", "collectives", NULL, NULL) != CF_OK) {
        fprintf(stderr, "commfit trace: %s: no sampled instances (the job ran with COMMFIT_TRACE=0 or "
                        "COMMFIT_SAMPLES=0)\n", path);
        cf_profile_free(&p);
        return CF_EXIT_USAGE;
    }
    FILE *out = outpath ? fopen(outpath, "w") : stdout;
    if (!out) {
        fprintf(stderr, "commfit trace: cannot write %s\n", outpath);
        cf_profile_free(&p);
        return 1;
    }
    int first = 1;
    fputs("{\"traceEvents\":[", out);
    for (size_t i = 0; i < p.nrank; i++) {
        char name[96];
        snprintf(name, sizeof(name), "rank %d (%s)", p.rank[i].rank, p.rank[i].host);
        fputs(first ? "\n" : ",\n", out);
        first = 0;
        fprintf(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":",
                p.rank[i].rank);
        put_str(out, name);
        fputs("}}", out);
    }
    /* every rank's message track, below its own */
    for (size_t i = 0; i < p.nrank; i++) {
        char name[112];
        snprintf(name, sizeof(name), "rank %d (%s) messages received", p.rank[i].rank, p.rank[i].host);
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%lld,\"args\":{\"name\":",
                (long long)p.rank[i].rank + p.ranks);
        put_str(out, name);
        fputs("}}", out);
        fprintf(out, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,"
                     "\"args\":{\"sort_index\":%lld}}",
                p.rank[i].rank, 2LL * p.rank[i].rank);
        fprintf(out, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":%lld,"
                     "\"args\":{\"sort_index\":%lld}}",
                (long long)p.rank[i].rank + p.ranks, 2LL * p.rank[i].rank + 1);
    }
    trace_t t = {out, &p, &first, 0, 0};
    int rc = cf_profile_each(path, "samples", "collectives", trace_instance, &t);
    if (rc == CF_OK && (rc = cf_profile_each(path, "samples", "messages", trace_message, &t)) == CF_ERR_NODATA)
        rc = CF_OK;
    if (rc != CF_OK)
        fprintf(stderr, "commfit trace: %s: %s while reading the samples again\n", path, cf_status_str(rc));
    size_t bad = t.bad;
    if (bad)
        fprintf(stderr, "commfit trace: %s: %zu malformed instances or messages skipped\n", path, bad);
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":", out);
    put_str(out, path);
    fprintf(out, ",\"ranks\":%d}}\n", p.ranks);
    rc = rc != CF_OK;
    if (ferror(out) || fflush(out) != 0)
        rc = 1;
    if (outpath && fclose(out) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "commfit trace: write error\n");
    cf_profile_free(&p);
    return rc;
}
