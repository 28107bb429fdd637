/* The results of an analysis as its stages leave them, and the accessors
 * that answer for them (cf_an_access.c).  The stages (cf_an_stage.h) and
 * the runner (cf_analysis.c) write these types; the stages read each
 * other's results through the accessors, never through the runner; tools
 * get all of it through cf_analysis.h.  The fusion advice's types are here
 * beside the fit's: the stage that computes them is cf_advice.c. */
#ifndef CF_AN_RESULT_H
#define CF_AN_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cf_common.h"
#include "cf_fit.h"
#include "cf_models.h"
#include "cf_predict.h"
#include "cf_profile.h"
#include "cf_wire.h"

/* File accesses (kind io) are fitted per operation like the rest (a file
 * system has a startup and a bandwidth too) but are not network traffic:
 * never part of a path's joint fit or reference link, never judged against
 * a link model. */
typedef enum { CF_AN_P2P = 0, CF_AN_COLLECTIVE = 1, CF_AN_IO = 2 } cf_an_kind_t;
/* "p2p", "collective", "io" */
const char *cf_an_kind_name(cf_an_kind_t kind);

/* Where the bin times of a fit come from. */
#define CF_AN_TIME_DURATION 1 /* call duration (t_p50) */
#define CF_AN_TIME_TRANSFER 2 /* sampled transfer time (xfer_p50) */

/* A bin's times are transfer times when it has at least this many
 * samples (or every call was sampled), and, for messages, at least half of
 * those chosen were timed; else call durations: one transfer sampled among
 * a million calls says little about them, the first calls of a stream,
 * which sampling favours, are the coldest, and when most receives came
 * after their sends the few timed messages are the exceptions. */
#define CF_AN_MIN_SAMPLES 8
#define CF_AN_MAX_CAVEATS 12

/* The verdict where the data cannot decide between the two. */
#define CF_AN_UNCERTAIN "uncertain"

typedef struct {
    /* A link to hold collectives against instead of the p2p fits: both
     * set (alpha >= 0, B > 0) or both NaN. */
    double link_alpha_s, link_Bps;
    /* Other runs of the same program, analysed alone: the fusion advice
     * takes each candidate's median saving over this run and them, its
     * spread between the runs counted in the uncertainty (cf_advice.h,
     * "Several runs").  They must outlive this analysis.  NULL, 0: none. */
    const struct cf_analysis *const *runs;
    size_t nruns;
} cf_analysis_opts_t;


/* One message-size bin of a fit. */
typedef struct {
    uint64_t size_lo, size_hi; /* bin edges, inclusive */
    double size;               /* mean payload, bytes / calls */
    uint64_t calls, bytes;
    double time_s;             /* summed over calls and ranks */
    double p50_s;              /* median time the fit sees (transfer where sampled) */
    double duration_p50_s;     /* median call duration, wait included */
    double p99_s;              /* largest p99 of the merged records */
    uint64_t samples;          /* calls with a sampled transfer time */
    uint64_t selected;         /* point to point: messages chosen for timing (some untimed:
                                * a receive posted after its send cannot time it) */
    double coverage;           /* samples / calls */
    int time_source;           /* CF_AN_TIME_TRANSFER (enough samples) or CF_AN_TIME_DURATION */
    int in_fit;                /* 1: a point the fit kept (size > 0, not an outlier) */
    int outlier;               /* 1: a sized bin the fit left out as an outlier */
    double predicted_s;        /* fit at size; NaN without a fit */
    /* the stream's predictor (cf_predict.h) at the bin's size: what advice
     * and ideal times use (the measured median, for a bin the program
     * measured), and what it gives with this bin left out (interpolated
     * between its neighbours, the line beyond them); NaN: no prediction */
    double prediction_s, prediction_loo_s;
    int prediction_source, prediction_loo_source; /* cf_pred_source_t */
    double model_error;        /* predicted / p50 - 1; NaN without a fit */
    double startup_share;      /* alpha(size) / T(size); NaN when unknown */
    const char *verdict;
    /* collectives only, NaN otherwise */
    double algbw_Bps, busbw_Bps;
    double ideal_s, efficiency; /* ideal model time and ideal / p50 */
    double ideal_busbw_Bps;     /* busbw the ideal time would give */
    int ideal_time_source;      /* cf_pred_source_t of the link's time per hop */
} cf_an_bin_t;

typedef struct cf_an_fit {
    cf_an_kind_t kind;
    const char *op;     /* MPI name (the profile's); "p2p" for the joint fit of a path */
    int joint;          /* 1: every blocking point-to-point operation of the path */
    int nonblocking;    /* times are spans from post to completion */
    uint32_t comm;      /* CF_COMM_ID_NONE for a joint fit */
    int comm_size;      /* ranks of comm (largest one for a joint fit); 0: unknown */
    int path;           /* cf_path_t */
    cf_coll_t coll;     /* model; CF_COLL_P2P for point to point */
    uint64_t calls, bytes;
    double time_s;      /* summed over calls and ranks */
    double wait_s;
    double wait_share;  /* wait / duration of the sampled calls; NaN: not measured */
    int time_source;    /* CF_AN_TIME_* bits over the bins */
    uint64_t samples;   /* sampled transfer times over all bins */
    int transfer_bins;  /* bins whose medians are transfer times */
    int few_sample_bins; /* bins with samples too few to use: durations instead */
    cf_fit_t fit;       /* fit.ok: numbers valid */
    const char *note;   /* NULL, "not enough size range", "no payload" */
    int nsizes;         /* distinct nonzero sizes */
    double startup_share;
    double startup_lo, startup_hi; /* the share under the ends of the 95 % intervals */
    const char *verdict; /* "startup-bound", "bandwidth-bound", "uncertain", "undetermined" */
    const char *leaning; /* uncertain: the side the estimate falls on; else NULL */
    const char *why;    /* uncertain: why, one phrase; "" otherwise (cf_an_no_why: most fits) */
    double err_rms, err_max; /* |predicted / measured - 1| over the fitted bins */
    const char *basis;  /* "fit", "model" (reference link), "no payload", NULL */
    double n_half_bytes; /* of the fit, or of the reference model (basis "model") */
    double below_n_half; /* share of calls smaller than n_half; NaN when unknown */
    double zero_p50_s;   /* median duration of zero-byte calls; NaN: none */
    /* collectives: the fit inverted under the ring model (default
     * algorithm where there is no ring); NaN when it cannot be */
    const char *hop_algo;
    double hop_alpha_s, hop_Bps;
    double efficiency;  /* collectives: ideal / measured over all calls; NaN: no reference */
    cf_an_bin_t *bin;   /* ascending sizes */
    size_t nbin;
} cf_an_fit_t;

/* The protocol limits the MPI library declared for a path (profile
 * section "protocol"), which its point-to-point fits break at. */
/* as many as a fit can break at: more would be listed but never used */
#define CF_AN_MAX_LIMITS CF_FIT_MAX_LIMITS
typedef struct {
    size_t n;
    double bytes[CF_AN_MAX_LIMITS];
    char name[CF_AN_MAX_LIMITS][48]; /* the control variable: "btl_vader_eager_limit" */
    /* declared but not used: why (static string), else NULL */
    const char *unused_why;
} cf_an_limits_t;

struct cf_advice;

/* One line of the cost ranking: every MPI operation per (op, comm, path). */
typedef struct {
    const char *op, *kind; /* the profile's strings: the analysis holds 60 000 rows of a large job */
    uint32_t comm;
    int comm_size;
    int path;
    int nonblocking;    /* posted, then completed in Wait/Test */
    uint64_t calls, bytes;
    uint32_t ranks_missing; /* the most ranks any of its records may lack (0: exact) */
    /* summed over ranks: what the operation cost.  Where the profile charges
     * completion calls to the requests they completed (records' blocked_s,
     * cf_analysis_charged), a nonblocking operation's time is the time the
     * program was blocked in Wait/Test on it, and a completion call's the
     * rest of its time (polls that completed nothing); otherwise a
     * nonblocking operation's time is its span (not ranked) and a completion
     * call's its whole time. */
    double time_s;
    double span_s;      /* nonblocking: post to completion, summed; overlaps other work */
    double charged_s;   /* completion calls: the part of their time charged to requests */
    double post_s, blocked_s; /* nonblocking, charged: time_s = post_s + blocked_s */
    int waits_charged;  /* the profile charges completion calls (cf_analysis_charged) */
    double share;       /* of the summed time of all ranked operations; NaN for an unranked span */
    /* nonblocking, charged: the same calls run blocking (the blocking
     * operation's own measurement, else the model on the reference link),
     * and the share of it the overlap hid, 1 - time_s / blocking_s in
     * [0, 1]; NaN when unknown.  blocking_source says which: "measured
     * MPI_Allreduce", "model on the reference link"; NULL: unknown. */
    double blocking_s, hidden;
    const char *blocking_source;
    int blocking_measured; /* blocking_s rests on measurements (the program's or the calibration's) alone */
    double polls_per_call; /* Test calls that completed nothing, per call of it (all streams); NaN: unknown */
    const cf_an_fit_t *fit; /* its own fit; NULL when not fitted */
    const struct cf_advice *fusion; /* its fusion advice (cf_advice.h); NULL: none */
} cf_an_op_t;

typedef struct {
    size_t n;                  /* ranks listed in the profile */
    double mpi_total_s, mpi_mean_s, mpi_min_s, mpi_max_s;
    int min_rank, max_rank;
    double wall_mean_s;
    double mpi_fraction;       /* mean MPI time / mean wall time; NaN: unknown */
    double imbalance;          /* max / mean - 1; NaN: unknown */
} cf_an_ranks_t;

/* The link collectives are held against on one path (cf_an_links.c). */
typedef struct {
    /* "link", "calibration", "p2p best case", "p2p fit", "ucx hop fit" or NULL (none) */
    const char *source;
    double alpha_s, bandwidth_Bps; /* link, or the overall line of the fit */
    const cf_fit_t *fit;       /* the fit it comes from (own_fit, the joint p2p fit, the UCX hop fit) */
    const struct cf_an_fit *joint; /* the joint p2p fit of the path; NULL: none */
    char why[160];             /* why its numbers are uncertain; "" when they are not */
    /* one-way time per message: the sizes measured (calibration or best
     * case), the fit beyond them (cf_predict.h) */
    cf_predictor_t pred;
    cf_fit_t own_fit;          /* fit of the calibration's or the best-case times */
    /* the program's own joint fit of the path, beside it; NaN: none */
    double program_alpha_s, program_Bps, program_err_rms;
} cf_an_ref_t;

/* Where the ranked MPI time goes: each operation's time split by its
 * startup share; operations without payload, those not fitted (wait,
 * probe, too few sizes without a link), those whose verdict is
 * uncertain and file I/O apart.  Shares of the ranked total.  A fitted or
 * uncertain collective whose instances were sampled first gives up the
 * share its sampled instances waited for the last rank (waiting,
 * cf_an_wait_split): the startup and payload split, and uncertain, are of
 * the rest. */
typedef struct {
    double startup, payload, no_payload, unexplained;
    double waiting;   /* inside fitted or uncertain collectives, waiting for the last rank */
    double uncertain; /* operations whose verdict is uncertain: not split */
    double io;        /* file I/O (kind io): not network startup or payload */
    double blocked;   /* blocked in Wait/Test on nonblocking operations (charged profiles) */
} cf_an_breakdown_t;

typedef struct cf_analysis cf_analysis_t;

CF_HIDDEN const cf_profile_t *cf_analysis_profile(const cf_analysis_t *a);
/* Fits: joint p2p fits first (by path), then the others by time, largest first. */
CF_HIDDEN size_t cf_analysis_nfits(const cf_analysis_t *a);
CF_HIDDEN const cf_an_fit_t *cf_analysis_fit(const cf_analysis_t *a, size_t i);
/* The hash of a stream (operation, communicator, path), by which fits,
 * ranking rows, advice and records are indexed. */
CF_HIDDEN uint64_t cf_stream_hash(const char *op, uint32_t comm, int path);
/* op "p2p" with CF_COMM_ID_NONE finds the joint fit of a path; NULL: none. */
CF_HIDDEN const cf_an_fit_t *cf_analysis_find(const cf_analysis_t *a, const char *op,
                                              uint32_t comm, int path);
/* Cost ranking, largest time first. */
CF_HIDDEN size_t cf_analysis_nops(const cf_analysis_t *a);
CF_HIDDEN const cf_an_op_t *cf_analysis_op(const cf_analysis_t *a, size_t i);
/* The ranking's row of (op, comm, path); NULL: none. */
CF_HIDDEN const cf_an_op_t *cf_analysis_op_find(const cf_analysis_t *a, const char *op,
                                                uint32_t comm, int path);
CF_HIDDEN double cf_analysis_total_s(const cf_analysis_t *a); /* sum over the ranking */
CF_HIDDEN const cf_an_ranks_t *cf_analysis_ranks(const cf_analysis_t *a);
CF_HIDDEN const cf_an_ref_t *cf_analysis_ref(const cf_analysis_t *a, int path);
/* The protocol limits of a path (cf_path_t); never NULL for a valid path. */
CF_HIDDEN const cf_an_limits_t *cf_analysis_limits(const cf_analysis_t *a, int path);
CF_HIDDEN const cf_an_breakdown_t *cf_analysis_breakdown(const cf_analysis_t *a);
/* Nonblocking spans (post to completion), summed over ranks: kept out of
 * the ranking, whose shares are of cf_analysis_total_s. */
CF_HIDDEN double cf_analysis_span_s(const cf_analysis_t *a);
/* 1 when the profile charges completion calls to the operations whose
 * requests they completed (records' blocked_s); 0 for older profiles. */
CF_HIDDEN int cf_analysis_charged(const cf_analysis_t *a);
/* What limits every number of the report (oversubscription, partial
 * profile, samples that ran out), one sentence each, most severe first. */
CF_HIDDEN size_t cf_analysis_ncaveats(const cf_analysis_t *a);
CF_HIDDEN const char *cf_analysis_caveat(const cf_analysis_t *a, size_t i);

/* MPI time by region (MPI_Pcontrol): records carry their innermost open
 * region, so a region's own time leaves out the regions nested in it;
 * inclusive_s adds them. */
typedef struct {
    const char *op, *kind; /* the profile's strings */
    uint32_t comm;
    int comm_size, path;
    uint64_t calls, bytes;
    double time_s;  /* summed over ranks */
    double share;   /* of the region's own time */
} cf_an_region_op_t;

typedef struct {
    const char *name;    /* region path ("step/allreduce"); NULL: outside every region */
    long long entries;   /* times entered (maximum over ranks); -1: unknown */
    double time_s;       /* summed over ranks, calls whose innermost region this is */
    double inclusive_s;  /* with the regions nested inside */
    double share;        /* time_s of all recorded MPI time */
    cf_an_region_op_t *op; /* largest time first */
    size_t nop;
} cf_an_region_t;

/* Regions in the profile's (sorted) order, then the time outside regions
 * when there is any; none when the profile has no regions. */
CF_HIDDEN size_t cf_analysis_nregions(const cf_analysis_t *a);
CF_HIDDEN const cf_an_region_t *cf_analysis_region(const cf_analysis_t *a, size_t i);

/* Which ranks arrived last at the sampled instances of a communicator's
 * collectives (the profile's late_arrivals). */
typedef struct {
    int rank;
    unsigned long long count;
} cf_an_last_t;

typedef struct {
    uint32_t comm;
    int comm_size;              /* 0: unknown */
    unsigned long long instances; /* sampled instances */
    cf_an_last_t *last;         /* most often last first */
    size_t nlast;
} cf_an_late_t;

CF_HIDDEN size_t cf_analysis_nlate(const cf_analysis_t *a);
CF_HIDDEN const cf_an_late_t *cf_analysis_late(const cf_analysis_t *a, size_t i);

/* Fusion advice (cf_advice.h) for every collective stream with payload,
 * largest measured time first. */
CF_HIDDEN size_t cf_analysis_nfusion(const cf_analysis_t *a);
CF_HIDDEN const struct cf_advice *cf_analysis_fusion(const cf_analysis_t *a, size_t i);
/* The advice of one stream; NULL: none. */
CF_HIDDEN const struct cf_advice *cf_analysis_fusion_find(const cf_analysis_t *a, const char *op,
                                                          uint32_t comm, int path);

/* the candidates, exactly: powers of two from 2^16 to 2^30 and DDP's 25
 * MiB (a profile of 10 000 communicators holds as many streams' arrays) */
#define CF_ADV_MAX_CAND 16
#define CF_ADV_WHY_LEN 200

/* One candidate bucket size, per step of one rank. */
typedef struct {
    double bucket_bytes;     /* S */
    const char
        *name; /* "DDP default (25 MiB)", "Horovod default (128 MiB)" or NULL (not named: knob_ddp, knob_horovod) */
    double buckets;          /* calls per step after fusion */
    double fused_bytes;      /* bytes in buckets of more than one tensor */
    double copy_s;           /* pack and unpack time */
    double model_s;          /* T(S), copy included */
    double unc_s;            /* uncertainty of T(S): the sum over its buckets' (cf_predict.h) */
    double saving_unc_s;     /* of T(calls as they are) - T(S): the fused buckets' and their
                              * tensors' alone (a tensor alone in both cancels) */
    int source;              /* cf_pred_source_t: the least measured of its buckets' */
    double last_s;           /* T of the packing's last bucket: a nonblocking stream waits for all of it */
    /* nonblocking: its buckets in flight together against one at a time
     * (cf_calib_inflight_ratio); NaN: not measured, the buckets priced one
     * at a time */
    double inflight_ratio;
    int inflight_calls;    /* the calls the calibration posted at once */
    float inflight_faults; /* the minor page faults of that set; NaN: not recorded (in int's padding) */
    double exposed_s;   /* T(S) with its buckets in flight: (model_s - copy_s) x ratio + copy_s + refault_s */
    /* nonblocking, where the program refaults its memory every step: the
     * pages of its buckets' bytes that MPI's per-call buffers would fault
     * in again, beyond those the calibration's set faulted (half of them
     * for one bucket a step), at the calibration's fresh-page cost
     * (cf_advice.h, "Refaults"); 0: none to price, NaN: not measured */
    double refault_pages, refault_s;
} cf_adv_cand_t;

typedef struct cf_advice {
    const char *op; /* the profile's string */
    uint32_t comm;
    int comm_size, path;
    cf_coll_t coll;
    uint8_t nonblocking : 1;      /* time is post to completion, overlapping compute */
    uint8_t polls_with_posts : 1; /* nonblocking: the program polls about once per post (0.5 to 2 a post) */
    /* the advised (else the best) buckets lie beyond twice the largest
     * size the collective's fit saw */
    uint8_t extrapolated : 1;
    /* blocking: measured_over_model (below) says the run was disturbed */
    uint8_t disturbed : 1;
    /* the frameworks whose setting fuses this operation, as the text names them:
     * DDP's bucket_cap_mb (all-reduce), Horovod's HOROVOD_FUSION_THRESHOLD
     * (all-reduce, all-gather), where the job loaded them or the profile does
     * not say, and the stream's call sites, where the profile has them, show
     * the framework's files making most of its calls (cf_advice_knobs, caller) */
    uint8_t knob_ddp : 1, knob_horovod : 1;
    /* the frameworks whose default bucket is priced and named among the
     * candidates: those that fuse the operation and that the job loaded (or
     * may have), whoever makes the calls */
    uint8_t named_ddp : 1, named_horovod : 1;
    /* the profile has call sites of the stream, which say who makes its
     * calls (caller); without them a setting named rests on what the job
     * loaded alone, and the text says so */
    uint8_t callers_seen : 1;
    /* and of the frameworks the job loaded that fuse the operation, the one
     * whose files make the most of its calls (1: Horovod, 0: PyTorch) and
     * its share in percent, in 6 bits: the share where its setting is not
     * named (at most 50), 100 less the share where it is (0: all) */
    uint8_t share_horovod : 1, fw_pct6 : 6;
    /* the runs that have the stream: 1, this profile alone; more where other
     * runs of the program were given (cf_analysis_opts_t.runs), as
     * run_spread_step_s below is */
    uint16_t runs;
    /* nonblocking: the times post_lead_s below rests on (in these bytes) */
    uint32_t post_leads;
    uint64_t calls, bytes;    /* summed over ranks */
    double share;             /* of the ranked MPI time */

    uint64_t steps;           /* 0: unknown */
    const char *steps_source; /* "region", "pattern" */
    const char *steps_region; /* region path that counts the steps; "" for pattern */
    double calls_per_step;    /* per rank */
    double bytes_per_step;    /* per rank */
    size_t tensors;           /* whole calls per step the packing works on */

    /* the line beyond the measured sizes: "collective fit", "MPI_Allreduce fit" (the
     * blocking twin of a nonblocking stream), "<reference source>, <algo> model"; "": none */
    char model_source[64];
    double alpha_s, bandwidth_Bps; /* alpha_eff, B_eff of the model's overall line */
    double startup_share;     /* of T(calls as they are) under the model */
    double memcpy_Bps;        /* NaN: unknown, no copy cost */

    double current_s;         /* measured, mean per rank, whole run */
    const char *current_source; /* "transfer", "duration", "mixed", "blocked" */
    /* nonblocking: current_s = post_s + blocked_s + poll_s, per rank (whole
     * run); 0 for a blocking stream */
    double post_s;            /* inside the calls that posted it */
    double blocked_s;         /* blocked in Wait/Test on its requests */
    double poll_s;            /* its share, by posts, of Test calls that completed nothing */
    /* nonblocking: the refaults of the advised (else the best) buckets
     * (cf_adv_cand_t; their time: times page_fault_s) */
    float refault_pages;
    /* nonblocking: the profile's post_lead_s (a poll to the next post:
     * the bindings before a post, with the hook's own work and any
     * computation between), where at least 8 were measured; NaN: unknown
     * (cf_advice_lead_step) */
    float post_lead_s;
    /* the ranks' mean wait per step for the last to arrive (their MPI
     * times' spread over the steps, at most blocked_s per step; 0 for a
     * part of the world), which the fused buckets' final wait pays */
    double skew_s;
    /* blocking: the median time between consecutive calls of the stream on
     * one rank (sampled pairs, seq and seq + 1), where they are issued back
     * to back (the gap under the calls' median duration): the framework's
     * cost per call outside MPI, which fusing saves too; nonblocking: the
     * profile's post_gap_s (a post to the completion call after it), under
     * the stream's MPI time per post; NaN: unknown or not back to back.
     * call_gap_pairs: the gaps it rests on.  framework_saving_s: that gap
     * times the calls the advised buckets remove, per rank over the run
     * (NaN unless "fuse") */
    double call_gap_s;
    uint32_t call_gap_pairs;
    /* nonblocking: the part of poll_excess_s load can hold (cf_advice.h,
     * "The polls' tails"); NaN: unknown, all of it (in call_gap_pairs'
     * padding) */
    float poll_load_s;
    double framework_saving_s;
    double model_current_s;   /* T per step of the calls as they are */
    double model_current_unc_s; /* its uncertainty */
    int current_pred_source;  /* cf_pred_source_t of the calls as they are */
    /* half the range between the runs of the saving per step of the advised
     * (else the best) buckets, counted in saving_unc_step_s, where the
     * verdict and saving are the runs' medians; NaN where they are this
     * profile's (one run, none advises fusion, or not every run prices a
     * size) */
    float run_spread_step_s;

    const char *verdict;      /* "fuse", "no gain", "uncertain", NULL without a model */
    const char *reason;       /* why, one phrase */
    double bucket_bytes;      /* recommended S; NaN unless "fuse" */
    double buckets_per_step;  /* of the recommended S; NaN unless "fuse" */
    double model_s;           /* T(S) per step; NaN unless "fuse" */
    double predicted_s;       /* whole run, mean per rank */
    double predicted_saving_s;
    double best_saving_share; /* of the best candidate, of cf_advice_ref_step; NaN without a model */
    double saving_step_s;     /* T(calls as they are) - T(S) of the advised, else the best S, and the
                               * framework's time it removes (cf_advice_cand_saving) */
    double saving_unc_step_s; /* its uncertainty (cf_adv_cand_t.saving_unc_s) */
    /* nonblocking: the saving per step of the advised S (else of the one
     * `why` names) if the overlap hid its buckets as it hides the calls
     * now, the other end of the range whose exposed end the verdict rests
     * on; NaN for a blocking stream */
    double hidden_saving_step_s;
    double hidden_saving_unc_step_s; /* its uncertainty (hidden_saving) */
    /* blocking: the measured time per step over the predictor's for the
     * calls as they are (current_s / steps / model_current_s); over
     * CF_ADV_DISTURBED beyond its uncertainty, the run was disturbed (load,
     * a partner late) and only the predictor's saving is counted */
    double measured_over_model;
    /* nonblocking: blocked_s beyond steps x (the calls as they are, one at a
     * time, exposed + skew_s), kept in predicted_s, never a saving; its
     * measured_over_model is blocked_s over that time */
    double blocked_excess_s;
    /* nonblocking: the part of poll_s beyond the polls' calls times their
     * median duration (a busy machine's tails), kept in predicted_s, never
     * a saving */
    double poll_excess_s;
    double inflight_ratio; /* nonblocking "fuse": of the advised buckets (cf_adv_cand_t); NaN: not measured */
    int inflight_calls;
    float inflight_faults;
    /* "uncertain", "no gain": the numbers behind the reason, CF_ADV_WHY_LEN
     * bytes held with the candidates; "" for a stream without a model */
    char *why;
    /* the file whose code made most of the stream's calls, by its call
     * sites' innermost frame (the MPI function's caller: mpi4py's module,
     * a framework's library, the program), the profile's string; NULL
     * where the profile has no call sites of the stream, or the calls come
     * from code in no file */
    const char *caller;
    /* the ranks' minor page faults per step (mean over the ranks that
     * recorded them for the stream's step region); NaN: not recorded, or
     * steps not from a region */
    float step_faults;
    float page_fault_s; /* the calibration's fresh page; NaN: not measured */
    /* DDP's bucket_cap_mb is bucket_bytes / 2^20, Horovod's
     * HOROVOD_FUSION_THRESHOLD bucket_bytes */

    /* ascending S, at most CF_ADV_MAX_CAND; NULL (ncand 0) for a stream
     * without a model, which most streams of a large job are */
    cf_adv_cand_t *cand;
    uint32_t ncand;
    /* over the steps of step_faults, the processes' involuntary context
     * switches per step (the scheduler taking a CPU from one of their
     * threads), mean over the ranks; NaN: not recorded (in ncand's
     * padding) */
    float step_preempt;
} cf_advice_t;

/* Beneath MPI: the UCX messages posted under one MPI operation (the
 * grouping of cf_wire_ops), with, for collectives, the algorithm they
 * reveal and what it costs against the others on the reference link. */
typedef struct {
    cf_wire_op_t w;            /* messages, calls and sizes (per rank: ratios) */
    int collective;            /* w.coll is a collective */
    double msg_size;           /* mean message size; NaN: none.  msg_size / w.payload is the
                                * message as a share of n, whatever mix of sizes was called */
    int inferred;              /* inf is valid (a model exists and the data sufficed) */
    cf_wire_infer_t inf;       /* inf.algo NULL: no model matches; inf.closest the nearest */
    const char *note;          /* why there is no inference or match, or what limits it; NULL */
    /* Per call, call-weighted over the size bins of the busiest stream:
     * the inferred algorithm and the one (of cf_models.h) that would cost
     * least at these sizes, both on the per-hop link below (NaN without
     * one), and what was measured (median per bin, transfer time where
     * sampled). */
    double model_s, best_s, measured_s;
    const char *best_algo;
    /* The per-hop link of those costs: a --link when given; else the
     * collective's own fit inverted under the inferred algorithm
     * ("collective fit": the alpha and B its steps really took); else the
     * reference link of the path ("p2p fit", "ucx hop fit"). */
    const char *cost_source;
    double cost_alpha_s, cost_Bps;
    double excess;             /* model_s / best_s */
    double saving_s;           /* (model - best) over the run, per rank */
    double share;              /* of all recorded MPI time, the MPI operation's row */
} cf_an_wire_t;

/* Above this excess an algorithm "costs notably more" than the best one. */
#define CF_AN_WIRE_EXCESS 1.25

/* Per-hop fit of the UCX sends of one path (cf_wire_hop_fit). */
typedef struct {
    int path;
    uint64_t msgs, bytes;      /* sends on the path, all ranks */
    int nsizes;                /* size bins with sends (a zero-byte one included) */
    cf_fit_t fit;
    const char *note;          /* "not enough size range" when !fit.ok */
} cf_an_hop_t;

/* Rows in cf_wire_ops order (most messages first); none without UCX records. */
CF_HIDDEN size_t cf_analysis_nwire(const cf_analysis_t *a);
CF_HIDDEN const cf_an_wire_t *cf_analysis_wire(const cf_analysis_t *a, size_t i);
/* Paths with UCX sends, ascending. */
CF_HIDDEN size_t cf_analysis_nhops(const cf_analysis_t *a);
CF_HIDDEN const cf_an_hop_t *cf_analysis_hop(const cf_analysis_t *a, size_t i);
/* Label for reports: "world", "self", "c1a2b3c4", "all" for a joint fit. */
CF_HIDDEN const char *cf_an_comm_label(uint32_t comm, char *buf, size_t len);

/* What the later stages make of the results: sentences (cf_an_verdict.c,
 * cf_an_overlap.c), a call's time (cf_an_links.c), the JSON (cf_an_json.c). */
/* The report's headline: where the recorded MPI time goes, one sentence
 * without newline (startup or bandwidth dominates only when the fitted
 * operations explain a real part of it).  Returns buf. */
CF_HIDDEN char *cf_analysis_headline(const cf_analysis_t *a, char *buf, size_t len);
/* Nonblocking operations, charged: what the overlap hid, one sentence
 * without newline; NULL when o is not such an operation. */
CF_HIDDEN char *cf_analysis_overlap_line(const cf_analysis_t *a, const cf_an_op_t *o, char *buf, size_t len);

/* Time of one call of n bytes of a fit's operation: its own fit where it
 * has one, else the reference link of its path under the operation's model
 * (default algorithm: ring for all-reduce); NaN when there is neither.
 * startup_p (may be NULL) receives the startup part. */
CF_HIDDEN double cf_analysis_call_time(const cf_analysis_t *a, const cf_an_fit_t *f, double n,
                                       double *startup_p);

/* One sentence when a collective's inferred algorithm costs at least
 * CF_AN_WIRE_EXCESS times the best one at its sizes (with the Open MPI
 * setting that selects the better one when the library is Open MPI);
 * NULL otherwise. */
CF_HIDDEN const char *cf_analysis_wire_advice(const cf_analysis_t *a, const cf_an_wire_t *w, char *buf,
                                              size_t len);

/* One sentence on what to do about an operation, from its verdict (and,
 * for collectives, from its fusion advice when there is one); buf of
 * CF_AN_ADVICE_LEN holds the longest. */
#define CF_AN_ADVICE_LEN 1024
CF_HIDDEN char *cf_analysis_advice(const cf_an_op_t *op, char *buf, size_t len);
/* The share of a fitted (or uncertain) collective's time its sampled
 * instances spent waiting for the last rank to arrive, which the breakdown
 * sets apart from startup and payload; 0 for anything else.  Point-to-point
 * waits are not set apart: only a receive posted before its message is
 * timed (a late receiver is not), so their share speaks for those alone. */
CF_HIDDEN double cf_an_wait_split(const cf_an_fit_t *f);
/* A message size as a share of the payload n: "n", "n/4", "0.38 n"; "?" for NaN. */
CF_HIDDEN const char *cf_an_fmt_share_n(double frac, char *buf, size_t len);

/* The report as JSON (format "commfit-report", version 1); NULL when out
 * of memory.  Non-finite numbers are null.  "wire" is null without UCX
 * records. */
CF_HIDDEN json_t *cf_analysis_to_json(const cf_analysis_t *a);

#endif
