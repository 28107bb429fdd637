/* The commfit-profile format: one definition shared by the writer (plugin)
 * and the readers (tools).  Documented in docs/profile-format.md. */
#ifndef CF_PROFILE_H
#define CF_PROFILE_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "cf_bins.h"
#include "cf_common.h"

#define CF_PROFILE_FORMAT "commfit-profile"
#define CF_PROFILE_VERSION 1


typedef struct {
    int layer;          /* cf_layer_t */
    char op[40];        /* "MPI_Allreduce", "ucp_tag_send_nbx" */
    char kind[16];      /* "p2p", "collective", "completion", "probe", "other" */
    char parent_op[40]; /* UCX layer: MPI operation active on the thread, "" if none */
    uint32_t comm;      /* communicator id (MPI layer) */
    int path;           /* cf_path_t */
    unsigned region;    /* index into regions[] + 1, 0 = none */
    uint64_t size_lo, size_hi;
    uint64_t calls, bytes;
    double t_sum, t_min, t_max, t_p50, t_p99; /* seconds */
    double wait_s;                             /* seconds waiting for other ranks (sampled calls) */
    /* transfer time of the sampled calls: duration less the wait for a late
     * partner (collectives), or one-way time on synchronized clocks (p2p) */
    uint64_t xfer_n;
    double xfer_sum, xfer_p50, xfer_p99;
    /* calls of this record the sampler considered (blocking collectives,
     * messages with a partner rank), and those its rule chose; 0 in older
     * profiles.  Coverage is xfer_n / sample_eligible. */
    uint64_t sample_eligible, sample_selected;
    /* ranks whose calls of this record may be missing: their table was full
     * when its key came (a key is kept from its first call or never), or
     * they left no records (a job that did not finish); 0: exact */
    uint32_t ranks_missing;
    /* time blocked in Wait/Test: for a nonblocking operation, the part of
     * the completion calls' time charged to its requests (a call's time
     * split evenly among the requests it completed); for a Wait/Test, the
     * part of its own time so charged.  0 in older profiles. */
    double blocked_s;
    /* nonblocking operations: the time inside the calls that posted them
     * (MPI_Iallreduce itself), summed; 0 in older profiles */
    double post_s;
} cf_record_t;

typedef struct {
    int rank, node;
    char host[64];
    double wall_s, mpi_s;
    double wait_s, xfer_s; /* over the sampled calls: waiting for others, moving data */
    uint64_t dropped;      /* records this rank could not keep */
    int node_ranks, node_cpus; /* ranks on this rank's node, CPUs they may run on; 0 when unknown */
} cf_rank_info_t;

/* A rank's minor page faults (memory the kernel mapped in afresh) per
 * entry of its outermost region with the most entries, between the first
 * entry and the last (cf_profile_rank_faults); over the same entries, the
 * process's involuntary context switches per entry and the entries'
 * period in seconds (cf_profile_rank_load; NaN: not recorded) */
typedef struct {
    float per_step;
    uint16_t region; /* 1 + its index in the profile's fault_region; 0: none */
    float preempt, step_s;
} cf_rank_faults_t;

typedef struct {
    uint32_t id;
    int size, nodes;
    uint64_t instances;               /* communicators that held this id over the run (0: not recorded) */
    char name[48];                    /* the constructor: "MPI_Comm_split", "other" */
    char desc[CF_COMM_DESC_LEN];      /* "split of world, colour 3"; "" when unknown */
    char user_name[CF_COMM_USER_LEN]; /* MPI_Comm_set_name; "" when not set */
} cf_comm_info_t;

struct cf_pair;
struct cf_callsite;

/* Frameworks whose fusion settings the advice names (job.frameworks): each
 * is seen in the process when a mapped file's path holds its marker.
 * X(id, name in the profile, marker) */
#define CF_FW_LIST(X)                                                                                                  \
    X(TORCH, "torch", "/libtorch")                                                                                     \
    X(HOROVOD, "horovod", "/horovod/")
enum {
    CF_FW_KNOWN = 1, /* the profile says which were loaded (none, maybe) */
#define CF_FW_BIT_(id, name, marker) CF_FW_BITNO_##id,
    CF_FW_BITNO_FIRST_ = 0,
    CF_FW_LIST(CF_FW_BIT_)
#undef CF_FW_BIT_
};
#define CF_FW_BIT(id) (1u << CF_FW_BITNO_##id)
/* The CF_FW_BIT() of the framework whose marker the path of a file holds
 * (a mapped file, a call site's module); 0: none, or path NULL. */
unsigned cf_fw_of_path(const char *path);

typedef struct {
    int version;
    int ranks, nodes;
    double wall_s;
    int partial;
    char **partial_reason; /* why partial: short sentences */
    size_t npartial_reason;
    int oversubscribed; /* -1 unknown (older profile), 0, 1 */
    int ranks_per_node_max, cpus_per_node_min; /* 0 when unknown */
    uint64_t failed_calls; /* calls that returned an error: not traffic */
    /* nonblocking operations the program never completed (freed active, or
     * pending at MPI_Finalize), each booked as a call without its completion */
    uint64_t unfinished_requests;
    char mpi_library[128];
    char start_time[32]; /* ISO 8601 UTC */
    double clock_hz;     /* tick rate the plugin measured, informative */
    double memcpy_Bps;   /* copy bandwidth measured at init, for pack costs */
    char program[64];    /* rank 0's executable, its file name; "" unknown */
    unsigned frameworks; /* CF_FW_KNOWN and the CF_FW_BIT()s of those rank 0 loaded; 0 unknown */
    /* the framework's time outside MPI from a nonblocking collective's post
     * to the completion call that follows it with no MPI call between: the
     * median over the ranks of their medians, s, and the gaps measured (0:
     * none, post_gap_s then unset) */
    double post_gap_s;
    uint64_t post_gaps;
    /* and from a completion call that measured such a gap to the next
     * post, with no MPI call between: the bindings before a post, the
     * hook's own work and any computation between; the median over the
     * ranks of their shortest tenth (10th percentile), s, and the times
     * measured (0: none, post_lead_s then unset) */
    double post_lead_s;
    uint64_t post_leads;
    cf_rank_info_t *rank;
    size_t nrank;
    cf_comm_info_t *comm;
    size_t ncomm;
    cf_index_t comm_index; /* by id, built by the reader (empty: cf_profile_comm scans) */
    cf_record_t *rec;
    size_t nrec;
    char **region; /* region names */
    size_t nregion;
    /* parallel to rank, where some rank recorded its faults per step
     * (NULL, 0: none did; entries past nrank_faults hold none) */
    cf_rank_faults_t *rank_faults;
    size_t nrank_faults;
    char **fault_region; /* their regions' names, each once */
    size_t nfault_region;
    json_t *extra; /* further sections (clock, papi, samples...) kept as they are */
    /* The matrix's pairs as the stream reader read them (extra's "matrix"
     * then holds its other members, "pairs" null): 32 bytes a pair, not a
     * tree of seven values.  matrix_cols 4 or 6, the columns every pair
     * had; 0: the matrix, if any, is in extra as it is. */
    struct cf_pair *matrix_pair;
    size_t matrix_npair;
    int matrix_cols;
    /* The call sites as the stream reader read them (extra's "callsites"
     * then holds depth, lost_calls and complete, "sites" null), each
     * string once in site_strings; nsite 0: the section, if any, is in
     * extra as it is. */
    struct cf_callsite *site;
    size_t nsite;
    json_t *site_strings;
} cf_profile_t;

void cf_profile_init(cf_profile_t *p);
/* Rank index i's figures per step of region (cf_rank_faults_t): its
 * faults, and its involuntary context switches and the step's period (NaN:
 * not recorded).  CF_OK, CF_ERR_NOMEM (nothing set). */
int cf_profile_set_rank_step(cf_profile_t *p, size_t i, const char *region, double faults, double preempt,
                             double step_s);
/* Rank index i's faults per step, its region's name in *region_p; NaN
 * (and NULL) where not recorded. */
double cf_profile_rank_faults(const cf_profile_t *p, size_t i, const char **region_p);
/* Rank index i's involuntary context switches per step; its step period
 * in *step_s_p.  NaN where not recorded. */
double cf_profile_rank_load(const cf_profile_t *p, size_t i, double *step_s_p);
void cf_profile_free(cf_profile_t *p);
/* Appends a reason for partial (printf format); sets partial. */
int cf_profile_add_partial_reason(cf_profile_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const cf_comm_info_t *cf_profile_comm(const cf_profile_t *p, uint32_t id);
/* Name of a communicator for reports: "world", "self" or "c<id hex>". */
const char *cf_comm_label(uint32_t id, char *buf, size_t len);
/* What people call it: "world", "self", the MPI_Comm_set_name name, else how
 * it was made and its size ("split of world, colour 3, 8 ranks"), else the
 * label.  len: CF_COMM_NAME_LEN is enough. */
#define CF_COMM_NAME_LEN (CF_COMM_DESC_LEN + 32)
const char *cf_comm_name(const cf_profile_t *p, uint32_t id, char *buf, size_t len);

/* The communication matrix (section "matrix"): messages and bytes each
 * world rank sent to each other, per communicator, one entry per pair
 * that communicated: by point-to-point calls (source CF_PAIR_MPI), and the
 * sends the UCX layer saw beneath collectives (CF_PAIR_UCX).  Profiles
 * older than the communicator column give comm CF_COMM_ID_NONE. */
enum { CF_PAIR_MPI = 0, CF_PAIR_UCX = 1 };
typedef struct cf_pair {
    int src, dst;
    uint64_t msgs, bytes;
    uint32_t comm;
    int source;
} cf_pair_t;

/* The pairs of p's matrix, in the profile's order (by sender); *pairs_p
 * NULL and *n_p 0 when the profile has no matrix (older profiles).
 * CF_OK; CF_ERR_FORMAT with err set (a rank outside the job, a pair that is
 * not [src, dst, messages, bytes] or that followed by comm and source);
 * CF_ERR_NOMEM.  Free *pairs_p.  lost_p (may be NULL): the messages that
 * did not fit the plugin's tables. */
int cf_profile_matrix(const cf_profile_t *p, cf_pair_t **pairs_p, size_t *n_p, uint64_t *lost_p, char *err,
                      size_t errlen);

/* The profile's "matrix" section as a tree, as the file has it (a new
 * reference); NULL when there is none or out of memory. */
json_t *cf_profile_matrix_json(const cf_profile_t *p);

/* One communicator's share of the matrix (of one source): pairs[first ..
 * first + n) after cf_matrix_groups. */
typedef struct {
    uint32_t comm;
    int source;
    size_t first, n;
    uint64_t msgs, bytes;
} cf_pair_group_t;

/* Sorts pairs by source, communicator, then bytes (most first), and gives
 * their groups per (source, communicator), the most bytes first, in
 * *groups_p (free it; NULL when n is 0).  CF_OK or CF_ERR_NOMEM. */
int cf_matrix_groups(cf_pair_t *pairs, size_t n, cf_pair_group_t **groups_p, size_t *ng_p);

/* Call sites (section "callsites"): per (operation, communicator, stack
 * of return addresses) the calls, bytes and time, the addresses as module
 * and offset (the link-time address, what addr2line takes).  Strings point
 * into the profile and live as long as it. */
#define CF_CALLSITE_FRAMES 8
typedef struct {
    const char *module; /* NULL: not in a module (or not known) */
    uint64_t offset;
    const char *symbol; /* dynamic symbol holding the address, NULL if none */
    uint64_t symbol_offset;
} cf_site_frame_t;
typedef struct cf_callsite {
    unsigned id;
    const char *op;
    uint32_t comm;
    uint64_t calls, bytes;
    double time_s, min_s, max_s;
    int ranks;
    size_t nframe;
    cf_site_frame_t frame[CF_CALLSITE_FRAMES];
} cf_callsite_t;
typedef struct {
    int depth;           /* 0: the profile has no call sites (off, or older) */
    uint64_t lost_calls; /* calls that found the plugin's tables full */
    int complete;
    size_t n;
    cf_callsite_t *site; /* in the profile's order: most time first */
} cf_callsites_t;
/* CF_OK (cs->depth 0 when there is no section); CF_ERR_FORMAT with err
 * set; CF_ERR_NOMEM.  Free cs->site. */
int cf_profile_callsites(const cf_profile_t *p, cf_callsites_t *cs, char *err, size_t errlen);
/* The same sites one at a time, in the profile's order, without a copy of
 * the section: fn(site, arg) for each until it returns nonzero.  CF_OK
 * (none: no section), CF_ERR_FORMAT as cf_profile_callsites (fn may have
 * seen the sites before the bad one). */
int cf_profile_callsites_each(const cf_profile_t *p, int (*fn)(const cf_callsite_t *, void *), void *arg, char *err,
                              size_t errlen);
/* The number of call sites (0: no section, or one that cannot be read)
 * and site i of them, in that order: the profile's own, or read into *tmp
 * (NULL: i out of range, or a bad site). */
size_t cf_profile_ncallsites(const cf_profile_t *p);
const cf_callsite_t *cf_profile_callsite(const cf_profile_t *p, size_t i, cf_callsite_t *tmp);

/* Calls fn on each element of the array section.member of the profile at
 * path ("samples", "collectives"), in the file's order, one element's tree
 * at a time: for a section cf_profile_read_without left out.  CF_OK;
 * CF_ERR_NODATA when there is no such array (fn is not called; fn NULL
 * only asks whether there is); CF_ERR_IO, CF_ERR_FORMAT; or what fn
 * returned when not CF_OK (the walk stops there). */
int cf_profile_each(const char *path, const char *section, const char *member, int (*fn)(json_t *e, void *ctx),
                    void *ctx);

json_t *cf_profile_to_json(const cf_profile_t *p);
/* Atomic write: temp file in the same directory, then rename. */
int cf_profile_write(const cf_profile_t *p, const char *path, char *err, size_t errlen);
/* On error, err holds a one-line description of the problem (without the file name). */
int cf_profile_read(const char *path, cf_profile_t *p_out, char *err, size_t errlen);
/* cf_profile_read, reading a profile in bounded memory: the large arrays
 * element by element into the compact arrays above, and the sections
 * named in skip (NULL-terminated, may be NULL) checked but not kept in
 * extra: "samples", which only `commfit trace` reads, is the largest. */
int cf_profile_read_without(const char *path, const char *const *skip, cf_profile_t *p_out, char *err,
                            size_t errlen);
int cf_profile_from_json(json_t *root, cf_profile_t *p_out, char *err, size_t errlen);

#endif
