/* Fusion advice: what bucket size a stream of collective calls needs on the
 * network it ran on, what that would save, and when fusing gains nothing.
 *
 * A stream is one collective operation on one communicator (MPI_Allreduce
 * on world), with payload, every region merged.  Profiles aggregate calls
 * by size bin, not as sequences, so a step is rebuilt from counts:
 *
 * Steps
 * - From regions (MPI_Pcontrol): when every call of the stream lies inside
 *   regions with a common enclosing path, the steps are the entries of the
 *   outermost enclosing region named like a step ("step", "iter", any case),
 *   else of the outermost enclosing region entered more than once.
 *   steps_source "region".
 * - Otherwise from the repeating pattern: the greatest common divisor of the
 *   per-rank call counts of the stream's size bins (a per-tensor all-reduce
 *   over 10 steps fills bins with 10, 20, 30 calls: 10 steps).  Limits: when
 *   every bin holds a multiple of k calls per step the pattern counts k times
 *   too many steps (fewer, smaller steps: the saving is underestimated); when
 *   the counts share no divisor the whole run is one step, and fusing across
 *   what were iterations is overstated.  Mark steps with regions to be sure.
 *   steps_source "pattern".
 * - Calls per step and rank = calls / (comm_size x steps), per bin; rounded
 *   to whole calls for the packing (a bin with fewer calls than steps counts
 *   as one call per step carrying its bytes).
 *
 * Time of one call of n bytes: the stream's predictor (cf_predict.h),
 * measurement first.  Its measured sizes are the stream's own bins, the
 * calibration of the stream (profile section "calibration", the
 * collective run blocking at MPI_Finalize on a duplicate of its
 * communicator) and, for a nonblocking stream, the bins of the blocking
 * operation on the same communicator (MPI_Allreduce for MPI_Iallreduce);
 * never a nonblocking span.  At a measured size the time is the median
 * measured; between measured sizes it is interpolated in log-log; beyond
 * them the line (the collective's own fit, segments included, else the
 * reference link of the path under the default algorithm, ring for
 * all-reduce) extends the nearest measured time.  Each candidate says the
 * least measured source among its buckets (time_source: measured,
 * calibration, model).  alpha_eff and B_eff are reported from the line.
 *
 * Bucketing: the order of the tensors within a step is unknown; they are
 * packed in an order that spreads sizes (largest, smallest, second largest,
 * second smallest, ...), as a network where each large weight sits next to
 * small bias and norm tensors.  Packing is DDP's: consecutive tensors join a
 * bucket while it stays within S bytes, a tensor that does not fit starts a
 * new one, a tensor of S or more goes alone.  Per step
 *
 *     T(S) = sum over buckets (t(bucket bytes)) + 2 x fused bytes / memcpy_Bps
 *
 * where fused bytes are those of buckets with more than one tensor (packed
 * and unpacked; a tensor alone is reduced in place), memcpy_Bps the copy
 * bandwidth the profile measured (no copy cost when it is unknown).
 * Candidates: powers of two from 64 KiB to 1 GiB, and DDP's 25 MiB where
 * the stream names DDP's setting (knob_ddp, cf_advice_knobs) (Horovod's 64 MiB, its documented default, and 128 MiB, its default in
 * recent code, are 2^26 and 2^27).  The recommended S is the smallest
 * whose saving exceeds its uncertainty within 5 % of the best such.
 *
 * Uncertainty of a saving T(calls as they are) - T(S): the predictor's
 * uncertainties (cf_predict.h: a median's scatter from its p50..p99
 * spread, the power law's distance from the line's shape between
 * measured sizes, 10 % per doubling or the line's rms error beyond them)
 * of the fused buckets and of the tensors they join, each alone; a
 * tensor alone in both cancels.
 *
 * Measured time (current_s), the mean per rank over the whole
 * run, is what the step waits for.  Blocking streams: the rank that
 * arrives last waits least, so its time is the transfer time: where calls
 * were sampled, the durations of all calls times the transfer share of the
 * sampled ones (transfer / (transfer + wait)); else the call duration
 * (current_source says which).  Nonblocking streams (MPI_Iallreduce ...):
 * the time blocked in Wait/Test charged to the stream (records'
 * blocked_s, current_source "blocked"), never the spans from post to
 * completion, which overlap each other and compute; share is that time
 * over the ranked MPI time.  A blocking stream's predicted time is the
 * larger of the predictor's relative saving applied to the measured time
 * and its saving per step taken off it:
 *     predicted_s = max(current_s x T(S) / T(calls as they are),
 *                       current_s - steps x (T(calls as they are) - T(S)))
 * so a gap between prediction and measurement (noise, tails the medians
 * leave out, a partner late to the call) is never counted as a saving by
 * itself: where the run measured more than the predictor, only the
 * predictor's difference is saved (a disturbed run on two TCP nodes
 * measured 9.2 ms a step against 1.2 predicted; scaled, the saving was
 * 7.6 ms a step, where 1.1 was measured without the profiler).
 *
 * A nonblocking stream costs the step more than its blocked time: the
 * posts (post_s) and the program's polls for progress (Test calls that
 * completed nothing, shared among the nonblocking streams by their posts:
 * poll_s).  current_s is their sum with the blocked time.  Posts are paid
 * per call, and so are the polls of a program that polls about once per
 * post (a hook that posts and tests): fusing pays them per bucket.  The
 * fused buckets' own time is exposed: an MPI library without a progress
 * thread (Open MPI and MPICH by default) moves a nonblocking collective
 * only inside MPI calls, and after fusing there are few of them before
 * the final wait; the last bucket, posted when the backward pass ends,
 * has nothing to hide behind in any library.  So
 *     predicted_s = (post_s [+ poll_s]) x buckets / calls
 *                   + steps x (T(S) + skew_s) [+ poll_s]
 * (the polls in the first term when they go with the posts, in the last
 * otherwise); skew_s is the ranks' mean wait per step for the last one to
 * arrive (the spread of their MPI times over the steps, at most the time
 * blocked per step), which the stream's waits hold now and the final
 * bucket's wait will hold.  T(S) here is the exposed time: where the
 * calibration timed the bucket size with calls of it posted at once
 * (in_flight), the buckets other than copies are priced at the ratio
 * measured there (cf_calib_inflight_ratio): several nonblocking
 * collectives in flight together are not what one after another is (4 of
 * 1 MiB over TCP took 1.8 times as long).  Measured on two TCP nodes, ResNet-shaped, 4 buckets of 1 MiB:
 * blocked 3.3 ms and posts 2.6 ms a step, against 65 tensors' 1.3 and 5.5
 * ms: the overlap the tensors had was lost.  The other end of the range,
 * the overlap hiding the buckets as it hides the calls now (a progress
 * thread, offload), is max(blocked_s x T(S) / T(calls as they are), steps
 * x (T(last bucket) + skew_s)) in place of steps x (T(S) + skew_s): hidden_saving_step_s
 * (with the framework's time the buckets remove, as the exposed end).
 * Time blocked beyond steps x (T(calls as they are) + skew_s), what the
 * calls take one at a time exposed (a disturbed run, a partner late, or a
 * nonblocking algorithm slower than the line it is priced on), is
 * blocked_excess_s: fused buckets would wait it out too, so it is added
 * to every predicted_s and never counted as a saving (the blocking rule's
 * max, in the same terms).  The polls' time beyond their calls times
 * their median duration (poll_excess_s: a poll descheduled on a busy
 * machine, or progress work inside it, which the buckets' exposed time
 * holds) goes with the polls: fewer calls, fewer polls.  The polls' tails:
 * the part that is load stays whatever the buckets (the CPU taken from the
 * thread is taken elsewhere in the step), and keeping it whole is added
 * to S's uncertainty (load x (1 - buckets / calls) / steps), so "fuse"
 * holds at that end too.  Where the profile has the processes'
 * involuntary context switches per step (step_preempt, over the step
 * region's entries, with its period), load is what the preemptions that
 * land in the stream's polls add, each at most the longest poll, where
 * they come at times that do not depend on the polls: the highest rank's
 * rate of them (per second, at the upper end of its count N over the
 * steps, N + 2 sqrt(N + 1) + 1) times poll_s (poll_load_s; the rest is
 * progress work).  That is an estimate under that assumption, not a
 * bound: preemptions drawn by the polls themselves (a thread the same
 * packets wake, a library that yields the CPU in its progress loop) land
 * in them more often; where every one of them did, the load would be
 * step_preempt x steps x the longest poll.  Without those figures all of
 * the tails count as load.  On two TCP nodes (ResNet-20, overlapped, 65
 * posts a step, the corpus case veth-torch-resnet20-overlap-gap-2) the
 * processes were preempted about 2 times in a step of 24 ms: load about 43
 * us of the tails' 371 us a step, where the trainer's own clocks read at
 * most 68 us a step off the CPU in those polls (docs/fusion.md has the
 * measurements).
 * "fuse" rests on the exposed end; where only the hidden end saves, the
 * verdict is "uncertain", saying both.  A nonblocking stream's
 * saving_step_s is per step in measured time, current_s - predicted_s
 * over the steps, and the framework's time the buckets remove (below:
 * "Time outside MPI"), with T(S)'s uncertainty.  predicted_saving_s =
 * current_s - predicted_s; the JSON's model_saving_s is the predictor's
 * own difference, steps x (T(calls as they are) - T(S)); saving_step_s
 * and saving_uncertainty_step_s those per step of the advised (else the
 * best) S.  extrapolated: those buckets' times come from the line beyond
 * every measured size.
 *
 * Refaults: a nonblocking collective takes memory per call in flight (Open
 * MPI's libnbc: a bucket's bytes for an all-reduce in place), and a
 * program whose malloc hands memory back between steps faults it in again
 * each time.  The calibration's sets, timed inside MPI_Finalize on a heap
 * that no longer moves, mostly do not.  Where the ranks fault in at least
 * CF_ADV_REFAULT_SHARE of the stream's pages a step (step_faults), every
 * candidate pays for the share of the stream's pages the ranks refaulted
 * (at most all), less those the calibration's set faulted, at the
 * calibration's fresh-page cost (page_fault_s: 1.3 to 1.8 us a page
 * measured on one VM, 9 to 11 on another): refault_s, added to its
 * exposed time and half of it to its uncertainty.  One bucket a step
 * pays half of them, uncertain by as much: a C loop of one 2 MiB block a
 * round faulted none (glibc serves a block freed alone from its heap),
 * but in a trainer the step's own frees trim that heap: one bucket of 1.1
 * MB saved 1.1 ms a step less than its price without refaults (of 2.6 ms
 * for all its pages), one of 3.3 MB about its price (+-2.3 ms).  The
 * calls as they are pay their own refaults in their measured time; their
 * small blocks, served from the heap, mostly do not (the allocator's
 * variables left the per-tensor exchange as it was and the buckets' 1.8
 * ms faster).  Without
 * page_fault_s (no sets, an older profile) it is NaN and the report says
 * the price leaves it out.  A blocking stream's are stated, not priced:
 * one call at a time refaults at most one bucket's temporary buffer a
 * step, and whether it does is the run's heap (resnet20's 1 MiB buckets
 * took 0.81 to 2.42 ms a step over four runs, 0.71 to 0.89 with the heap
 * kept); its candidates carry those pages and their cost, and its price
 * is the kept heap's, which the memory line's variables give.
 *
 * When advice is given: only for a stream that repeats per step (at least
 * two steps, from regions or a pattern) and carries at least 1 % of the
 * ranked MPI time (a nonblocking stream only in profiles that charge
 * Wait/Test to requests); otherwise no verdict, and the reason says what
 * to do.
 *
 * Verdicts: "fuse" when a candidate's saving exceeds both its uncertainty
 * and 5 % of the time, its MPI part no loss (cf_advice_eligible); "no
 * gain" when the stream already makes at most one
 * call per step, when even the saving plus its uncertainty is under 5 %,
 * or when the startups and the framework's time per call (call_gap_s),
 * all that fusing can save, are under 5 % (the
 * reason and `why` give the numbers); otherwise "uncertain", with what
 * would settle it: buckets beyond the measured sizes (the calibration
 * budget that would measure them, 32 T(S) rounded up, in `why`: "budget:
 * COMMFIT_CALIBRATE=30s"), else more steps.  No verdict
 * (NULL) without any measured size or line.
 *
 * Time outside MPI: a framework that issues the calls one by one (Python
 * bindings, a loop over tensors) pays some microseconds between them,
 * which fusing saves as well.  Where the sampled calls of a blocking
 * stream hold at least 8 consecutive pairs on one rank, the stream makes
 * at least CF_ADV_GAP_CALLS calls a step (with fewer, half the pairs or
 * more span the step's compute) and their median gap is under their
 * median duration (back to back), that gap is
 * call_gap_s and framework_saving_s what the advised buckets save of it;
 * predicted_saving_s stays MPI time alone, and the verdict adds the gap
 * once per call a candidate removes (saving_step_s, and the reference
 * time per step, hold it: the step pays it as it pays the MPI time).
 * A nonblocking stream's posts have compute between them; its call_gap_s
 * is the profile's post_gap_s, the time from a post to the completion
 * call after it (a hook's poll), where at least 8 were measured and it is
 * under the stream's MPI time per post (post_s + poll_s over its calls):
 * back to back.  The bindings' time before each post cannot be told from
 * the computation between hooks; what is measured is a bound of it: the
 * profile's post_lead_s, the shortest tenth of the times from the
 * completion call after a marked post to the next post (tensors that
 * autograd produces together, a layer's weight and bias, have nothing but
 * the hooks between them), which holds the hook's own work (a copy into
 * its bucket) too, and which buckets do not save.  The advice prints it
 * beside the saving as "at most" (cf_advice_lead_step); the verdict does
 * not count it.
 *
 * Several runs: one run's saving moves with that run (its per-tensor
 * calls ran 20 % faster or slower than the next run's, on the same
 * machine), and its uncertainty, from the spread within the run, cannot
 * see that.  Given other runs of the program (commfit report A B ...),
 * each stream (same operation, communicator, path, communicator size,
 * calls per step) is judged over the runs that have it with a verdict:
 * every candidate's saving is its median over them, and half the range
 * between them joins the median uncertainty in quadrature.
 *   - every run advises "fuse": the trusted rule above on the medians,
 *     "fuse" into its candidate (the saving and the predicted run time
 *     are the medians; the rest, such as the copies and the hidden end,
 *     this run's); else "no gain" where the best median saves beyond its
 *     uncertainty but under 5 %, "uncertain" where it does not;
 *   - some runs advise "fuse", some not: "uncertain", naming how many;
 *   - none does, or not every run prices a size: this run's advice and
 *     figures stand.
 * runs counts the runs; run_spread_step_s is NaN where this run's stand.
 *
 * DDP: bucket_cap_mb = S / 2^20 (DDP counts MiB); Horovod:
 * HOROVOD_FUSION_THRESHOLD = S in bytes. */
#ifndef CF_ADVICE_H
#define CF_ADVICE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cf_an_result.h"
#include "cf_common.h"

#define CF_ADV_DDP_BYTES 26214400.0       /* 25 MiB */
#define CF_ADV_HOROVOD_BYTES 67108864.0   /* 64 MiB, Horovod's documented default */
#define CF_ADV_HOROVOD_NEW_BYTES 134217728.0 /* 128 MiB, its default in recent code */
#define CF_ADV_NEAR_BEST 0.05             /* recommend the smallest S within 5 % of the best */
#define CF_ADV_MIN_GAIN 0.05              /* fuse only when saving >= 5 % */
#define CF_ADV_MIN_SHARE 0.01             /* advise only streams of >= 1 % of the MPI time */
#define CF_ADV_MAX_MISFIT 0.25            /* nor on a fit that misses its bins by more (rms) */
#define CF_ADV_GAP_CALLS 3.0              /* a blocking stream's call gap is measured from this many calls a step */
#define CF_ADV_DISTURBED 2.0              /* a blocking stream measured this many times its predictor */
/* a calibration point this many times the program's largest measured size
 * scaled up by the bytes (the most a linear cost grows): measured on a
 * disturbed machine, no ground for "no gain" */
#define CF_ADV_CAL_SLOW 4.0
/* page faults of at least this share of the pages of the bytes at stake
 * (cf_advice_refaulted): the program's allocator hands back what MPI takes
 * per call (the report says so, and how to keep it) */
#define CF_ADV_REFAULT_SHARE 0.25
#define CF_ADV_PAGE_BYTES 4096.0 /* the pages the plugin's fault counts are of (x86-64, aarch64's 4 KiB) */

/* Advice for every collective stream with payload whose communicator size
 * is known, largest measured time first.  *adv_p is NULL when n is 0.
 * CF_OK, CF_ERR_INVALID, CF_ERR_NOMEM. */
CF_HIDDEN int cf_advice_run(const cf_analysis_t *a, cf_advice_t **adv_p, size_t *n_p);
CF_HIDDEN void cf_advice_free(cf_advice_t *adv, size_t n);

/* Per-step time of tensors of the given sizes (bytes, per rank) in buckets
 * of S bytes: the packing and T(S) above, with call times t(n) = alpha +
 * n / B (B may be INFINITY) and copies at memcpy_Bps (<= 0 or NaN: free).
 * S <= 0 leaves every tensor alone.  Sizes are taken in the given order.
 * buckets_p, fused_p, copy_p may be NULL.  NaN on bad input. */
CF_HIDDEN double cf_advice_step_time(const double *sizes, size_t n, double S, double alpha_s,
                                     double Bps, double memcpy_Bps, double *buckets_p,
                                     double *fused_p, double *copy_p);

/* predicted_s of a candidate: the run's time, per rank on the slowest
 * rank, with its buckets (the rule above); NaN without a model. */
CF_HIDDEN double cf_advice_cand_predicted_s(const cf_advice_t *ad, const cf_adv_cand_t *cd);
/* A candidate's saving per step as the verdict judges it (T(calls as they
 * are) - T(S); nonblocking, in measured time; both with the framework's
 * time it removes, cf_advice_cand_framework) with its uncertainty, and
 * the time per step it is judged against (the calls' MPI time and the
 * framework's, call_gap_s once per call); NaN without a model. */
CF_HIDDEN double cf_advice_cand_saving(const cf_advice_t *ad, const cf_adv_cand_t *cd, double *unc_p);
CF_HIDDEN double cf_advice_ref_step(const cf_advice_t *ad);
/* The part of that saving that is the framework's time outside MPI:
 * call_gap_s once per call the candidate removes; 0 where no gap was
 * measured. */
CF_HIDDEN double cf_advice_cand_framework(const cf_advice_t *ad, const cf_adv_cand_t *cd);
/* The framework's time per step of n calls: the measured gap (call_gap_s)
 * once per call; 0 where no gap was measured. */
CF_HIDDEN double cf_advice_framework_step(const cf_advice_t *ad, double n);
/* The saving the rules judge a candidate by, of its saving per step sv
 * of which fw is the framework's time: sv where its MPI part is no loss,
 * else that loss, so that no rule advises a candidate whose MPI time
 * rises on the gap's strength alone (one measured median, without an
 * uncertainty of its own). */
CF_HIDDEN double cf_advice_eligible(double sv, double fw);
/* The trusted rule: of n candidates saving sv[c] per step (uncertainty
 * unc[c]; NaN: not priced) against a reference time ref per step (a
 * candidate's time is ref - sv[c]), the fastest that saves beyond its
 * uncertainty and CF_ADV_MIN_GAIN of ref, then the smallest (first)
 * beyond its uncertainty within CF_ADV_NEAR_BEST of it; (size_t)-1: none.
 * One run's advice (cf_advice.c) and that over several runs
 * (cf_advice_runs.c) both decide by it. */
CF_HIDDEN size_t cf_advice_pick(const double *sv, const double *unc, size_t n, double ref);
/* Makes ad "fuse" into cd (one of ad->cand), saving sv per step with
 * uncertainty unc. */
CF_HIDDEN void cf_advice_set_fuse(cf_advice_t *ad, const cf_adv_cand_t *cd, double sv, double unc);
/* The same stream as ad in another run's analysis r: operation,
 * communicator, path, communicator size and calls per step; NULL where
 * r has none. */
CF_HIDDEN const cf_advice_t *cf_advice_same_stream(const cf_analysis_t *r, const cf_advice_t *ad);
/* Several runs (above): ad, of this run, combined with the same stream in
 * the other runs' analyses; a stream no other run has is left alone. */
CF_HIDDEN void cf_advice_runs(cf_advice_t *ad, const cf_analysis_t *const *runs, size_t nruns);
/* The rule of several runs on its figures: n runs of which fuse advise
 * fusion; per candidate (nc of them) the median saving per step sv and its
 * uncertainty unc (the runs' spread included; NaN where some run does not
 * price it), against the median reference time ref.  *best_p: the
 * candidate saving the most ((size_t)-1: none priced); *pick_p: the one
 * advised (CF_RUNS_FUSE), else (size_t)-1. */
enum {
    CF_RUNS_OWN,      /* no run fuses, or no size priced by all: this run's advice stands */
    CF_RUNS_FUSE,     /* every run fuses and the medians pass cf_advice_pick */
    CF_RUNS_DISAGREE, /* some runs fuse, some do not: "uncertain" */
    CF_RUNS_NO_GAIN,  /* every run fuses, the best median is beyond its uncertainty but under 5 % */
    CF_RUNS_WITHIN    /* every run fuses, the best median is within its uncertainty: "uncertain" */
};
CF_HIDDEN int cf_advice_runs_rule(size_t n, size_t fuse, const double *sv, const double *unc, size_t nc, double ref,
                                  size_t *pick_p, size_t *best_p);

/* Whether the program's allocator faulted in afresh at least
 * CF_ADV_REFAULT_SHARE of the pages at stake: in_flight, the advised
 * buckets' calibration set (of its calls' bytes); else the ranks' steps
 * (of the stream's bytes a step).  -1: not recorded. */
CF_HIDDEN int cf_advice_refaulted(const cf_advice_t *ad, int in_flight);

/* Whether the advised buckets' saving assumes the heap kept: a blocking
 * stream advised to fuse whose ranks refault a step's memory (their price
 * is the calibration's kept block, cf_advice.h "Refaults"), so the advice
 * is the bucket with CF_ADV_KEEP_HEAP. */
CF_HIDDEN int cf_advice_keeps_heap(const cf_advice_t *ad);
#define CF_ADV_KEEP_HEAP "MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=1073741824"

/* The memory line of the text report and the HTML (JSON memory_note), after
 * "memory: ", without newline: where the ranks refault a quarter of the
 * stream's pages a step or more (cf_advice_refaulted), what it costs and
 * what keeps the heap.  1 when written, 0 where there is none. */
CF_HIDDEN int cf_advice_memory_note(const cf_advice_t *ad, char *buf, size_t len);
#define CF_ADV_NOTE_LEN 1024
/* At most what an advised ("fuse") nonblocking stream's buckets save per
 * step of the framework's time before each post, which the saving does not
 * price: the measured lead (post_lead_s) times the posts they remove; NaN
 * elsewhere or without a lead. */
CF_HIDDEN double cf_advice_lead_step(const cf_advice_t *ad);
/* The line of an advised ("fuse") stream on the framework's time outside
 * MPI that its buckets save (framework_saving_s), or, for a nonblocking
 * stream without it, that it is not priced, with the bound of that time
 * where a lead was measured (cf_advice_lead_step): the text report's and,
 * through the JSON's outside_mpi_note, the HTML's.  1 when written, 0
 * where none. */
CF_HIDDEN int cf_advice_outside_note(const cf_advice_t *ad, char *buf, size_t len);
/* The line under an advised ("fuse") nonblocking stream on the two ends
 * of its price: exposed (the verdict's, with the ranks' wait for the
 * last) and hidden as the overlap hides the calls now; the text report's
 * and, through the JSON's hidden_note, the HTML's ("uncertain" says both
 * ends in its why).  1 when written, 0 where none. */
CF_HIDDEN int cf_advice_hidden_note(const cf_advice_t *ad, char *buf, size_t len);
/* The lines under an advised ("fuse") nonblocking stream of two buckets
 * a step or more on its buckets in flight together: their price against
 * one at a time (the calibration's set), or that it is not priced, and
 * the memory MPI takes per bucket; the text report's and, through the
 * JSON's in_flight_notes, the HTML's.  Returns how many (0 to
 * CF_ADV_IN_FLIGHT_LINES). */
#define CF_ADV_IN_FLIGHT_LINES 2
CF_HIDDEN int cf_advice_in_flight_notes(const cf_advice_t *ad, char note[CF_ADV_IN_FLIGHT_LINES][CF_ADV_NOTE_LEN]);
/* The line of a run that measured more than its calls' own time (a
 * nonblocking stream's blocked_excess_s, a disturbed run), with its label
 * ("disturbed: ", "blocked beyond the calls' time: "), and what the advice
 * does with it: the text report's and, through the JSON's disturbed_note,
 * the HTML's.  1 when written, 0 where none. */
CF_HIDDEN int cf_advice_disturbed_note(const cf_advice_t *ad, char *buf, size_t len);
/* The line on a nonblocking stream's polls' tails (poll_excess_s, where
 * they are a tenth of the polls or more and the polls go with the posts),
 * after "polls beyond their median: ": how the buckets pay them and the
 * part load holds (poll_load_s): the text report's and, through the JSON's
 * polls_note, the HTML's.  1 when written, 0 where none. */
CF_HIDDEN int cf_advice_polls_note(const cf_advice_t *ad, char *buf, size_t len);

/* The frameworks whose setting fuses a stream of collective coll (knob_ddp:
 * PyTorch DDP's bucket_cap_mb, all-reduce; knob_horovod: Horovod's
 * HOROVOD_FUSION_THRESHOLD, all-reduce and all-gather), among those the
 * job loaded (frameworks: cf_profile_t's; without CF_FW_KNOWN, an older
 * profile or a job that did not finish, any may be): the named defaults
 * priced are theirs alone (named_ddp, named_horovod), and so are the
 * settings printed (knob_ddp, knob_horovod) until the stream's call sites
 * narrow those to the frameworks whose files make most of its calls. */
CF_HIDDEN void cf_advice_knobs(cf_advice_t *ad, cf_coll_t coll, unsigned frameworks);
/* How to get the advised buckets: the frameworks' settings ("PyTorch DDP:
 * bucket_cap_mb=0.5   Horovod: HOROVOD_FUSION_THRESHOLD=524288"), or,
 * where no framework fuses the operation or makes its calls, what the
 * program would do, with the file that makes most of the calls; brief
 * (1): the summary line's short form.  The text, JSON (fuse_how) and HTML. */
CF_HIDDEN char *cf_advice_how(const cf_advice_t *ad, int brief, char *buf, size_t len);

/* One line for the end-of-run summary and the report, without newline. */
CF_HIDDEN char *cf_advice_line(const cf_advice_t *adv, char *buf, size_t len);

#endif
