/* Stage "overlap": what overlapping a nonblocking operation with other work
 * hid.  In a profile that charges completion calls to the requests they
 * completed (records' blocked_s), a nonblocking operation's ranked time is
 * the time the program was blocked on it in Wait/Test.  Held against the
 * same calls run blocking, that says how much of the exchange the overlap
 * hid:
 *
 *     hidden = 1 - (posts + blocked) / blocking,  in [0, 1]
 *
 * blocking is, per size bin of the operation, its calls times the time of
 * one blocking call of that size: the blocking operation's own median on
 * the same communicator and path where the program measured that size (an
 * MPI_Allreduce bin beside the MPI_Iallreduce one), else its fit where the
 * size lies within the sizes it was fitted on, else the reference link of
 * the path under the collective's default algorithm (point to point: the
 * link itself).  Without any of them, hidden is unknown.
 *
 * Open MPI (and most libraries without a progress thread) moves a
 * nonblocking collective only inside MPI calls: posted, it waits for the
 * next call, and a program that makes none between the post and the Wait
 * hides almost nothing.  The sentence says so when little is hidden and the
 * program does not poll (few Test calls that completed nothing).  Blocked
 * far longer than the same calls take blocking, the operation waits for its
 * partners (a late sender, imbalance), and the sentence says that instead:
 * fusing does not shorten that wait.  Where the stream has fusion advice,
 * the sentence adds what fewer calls still save (startup per call, posts,
 * and the polls where the advice pays them per call), which the advice
 * prices with the blocked excess kept in every prediction (cf_advice.h).
 * See cf_an_stage.h for the pipeline. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_an_stage.h"
#include "cf_predict.h"
#include "cf_units.h"

#define CF_AN_HIDDEN_LITTLE 0.2 /* below this share hidden, the overlap hides "little" */
#define CF_AN_POLLS_FEW 1.0     /* fewer unsuccessful Tests per nonblocking call: "does not poll" */
#define CF_AN_WAITING_FACTOR 2.0 /* blocked more than this many times the blocking calls: waiting for partners */

static int f_polls_few(double per_call)
{
    return !(per_call >= CF_AN_POLLS_FEW);
}

void cf_an_overlap_build(cf_analysis_t *a)
{
    double polls = 0, posted = 0;

    if (!a->charged)
        return;
    /* Test calls that completed nothing: no payload, nothing charged */
    for (size_t i = 0; i < a->p->nrec; i++) {
        const cf_record_t *r = &a->p->rec[i];
        if (cf_an_is_poll(r))
            polls += (double)r->calls;
    }
    for (size_t k = 0; k < a->nop; k++)
        if (a->op[k].nonblocking)
            posted += (double)a->op[k].calls;
    for (size_t k = 0; k < a->nop; k++) {
        cf_an_op_t *o = &a->op[k];
        const cf_an_fit_t *f = o->fit;
        cf_an_line_t line;
        cf_predictor_t pr;
        double sum = 0;
        int used[4] = {0, 0, 0, 0}, missing = 0;

        if (!o->nonblocking || f == NULL || strcmp(o->kind, "io") == 0)
            continue;
        o->polls_per_call = posted > 0 ? polls / posted : NAN;
        /* the blocking operation's predictor: its own bins, the calibration
         * of the stream, beyond them its fit or the reference link */
        cf_an_predictor(a, f, &line, &pr);
        for (size_t b = 0; b < f->nbin; b++) {
            cf_pred_t out;
            double t = cf_pred_at(&pr, f->bin[b].size, &out);
            if (!(t > 0) || out.source == CF_PRED_NONE) {
                missing++;
                continue;
            }
            sum += (double)f->bin[b].calls * t;
            used[out.source & 3] = 1;
        }
        if (missing || !(sum > 0))
            continue;
        o->blocking_s = sum;
        o->hidden = fmax(0.0, fmin(1.0, 1.0 - o->time_s / sum));
        o->blocking_source = used[CF_PRED_MODEL]
                                 ? (used[CF_PRED_MEASURED] || used[CF_PRED_CALIBRATION] ? "measured where it could be, the model beyond"
                                                                                        : "the model on the reference link")
                             : used[CF_PRED_CALIBRATION] ? (used[CF_PRED_MEASURED] ? "measured and calibration" : "calibration")
                                                         : "measured";
        o->blocking_measured = !used[CF_PRED_MODEL];
    }
}

char *cf_analysis_overlap_line(const cf_analysis_t *a, const cf_an_op_t *o, char *buf, size_t len)
{
    char label[CF_COMM_NAME_LEN], t1[CF_FMT_LEN], t2[CF_FMT_LEN], t3[CF_FMT_LEN], t4[CF_FMT_LEN], bname[40];
    char spent[192];
    const cf_profile_t *p = a->p;
    int ranks = p->ranks > 0 ? p->ranks : 1;

    if (!a->charged || !o->nonblocking || strcmp(o->kind, "io") == 0)
        return NULL;
    if (!cf_blocking_op_name(o->op, bname, sizeof(bname)))
        bname[0] = '\0';
    cf_comm_name(p, o->comm, label, sizeof(label));
    /* what the program spent in MPI on it: its posts and its waits */
    if (o->post_s > 0)
        snprintf(spent, sizeof(spent), "%s per rank in MPI (posting %s, blocked in Wait/Test %s)",
                 cf_fmt_time(o->time_s / ranks, t1, sizeof(t1)), cf_fmt_time(o->post_s / ranks, t3, sizeof(t3)),
                 cf_fmt_time(o->blocked_s / ranks, t4, sizeof(t4)));
    else
        snprintf(spent, sizeof(spent), "blocked %s per rank in Wait/Test", cf_fmt_time(o->time_s / ranks, t1, sizeof(t1)));
    if (!isfinite(o->hidden)) {
        snprintf(buf, len,
                 "%s on %s: %s; how much the overlap hid is uncertain: no measurement or reference link "
                 "prices the same calls run blocking (a run with %s at these sizes, or --link RATE,TIME, "
                 "would settle it)",
                 o->op, label, spent, bname[0] ? bname : "the blocking call");
        return buf;
    }
    int n = snprintf(buf, len,
                     "%s on %s: %s, where the same calls run blocking would take %s (%s): the overlap hid "
                     "%.0f%% of the exchange",
                     o->op, label, spent, cf_fmt_time(o->blocking_s / ranks, t2, sizeof(t2)), o->blocking_source,
                     100.0 * o->hidden);
    if (n < 0 || (size_t)n >= len)
        return buf;
    if (o->time_s > CF_AN_WAITING_FACTOR * o->blocking_s && o->blocking_measured) {
        /* what fewer calls save, only where the fusion advice prices it,
         * and the polls only where it pays them per call */
        const cf_advice_t *ad = o->fusion;
        int priced = ad != NULL && ad->verdict != NULL && ad->model_source[0] != '\0';
        snprintf(buf + n, len - (size_t)n,
                 "; it blocked %.0f times what the calls take blocking, so it waits for its partners (a late "
                 "sender, work out of balance), not for the transfer: balance the work before it. Fusing or "
                 "overlapping more does not shorten that wait%s%s%s",
                 o->time_s / o->blocking_s,
                 priced ? "; fewer calls save only their own time (startup per call, posting" : "",
                 priced && ad->polls_with_posts ? " and the polls that go with the posts" : "",
                 priced ? "), which FUSION ADVICE prices with the wait kept" : "");
    } else if (o->hidden < CF_AN_HIDDEN_LITTLE && f_polls_few(o->polls_per_call))
        /* point-to-point: a message under the eager limit leaves in its
         * post; a larger one, as a collective, moves only when MPI runs,
         * so fewer, larger messages would not help it there */
        snprintf(buf + n, len - (size_t)n,
                 "; the program does not call MPI_Test between post and wait, and %s: %scall MPI_Test during "
                 "the work between post and wait, or %s",
                 strstr(p->mpi_library, "MPICH") != NULL
                     ? "MPICH advances nonblocking operations only inside MPI calls unless its progress thread is on"
                     : "the library advances nonblocking operations only inside MPI calls (Open MPI runs no "
                       "progress thread by default)",
                 strcmp(o->kind, "p2p") == 0 ? "a message over the eager limit moves only then: "
                                             : "fuse them into fewer, larger calls, ",
                 strstr(p->mpi_library, "MPICH") != NULL
                     ? "set MPIR_CVAR_ASYNC_PROGRESS=1 (MPICH's progress thread; needs MPI_THREAD_MULTIPLE)"
                     : "drive progress from a thread of the program's own that calls MPI_Test");
    else if (o->hidden < CF_AN_HIDDEN_LITTLE)
        snprintf(buf + n, len - (size_t)n,
                 "; little is hidden although the program polls: the exchange itself takes longer than the "
                 "work it overlaps, so fewer, larger calls or fewer bytes would help");
    return buf;
}
