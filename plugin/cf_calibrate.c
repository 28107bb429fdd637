/* Calibration at the end of the run.  A Hockney line fitted to the few
 * sizes a program uses is a poor guide to the fused sizes fusion advice
 * prices; the way out is to measure the path and the collective at those
 * sizes, as NetPIPE, the OSU benchmarks or nccl-tests do.  commfit is
 * inside the job, so at MPI_Finalize it measures:
 *
 *   - links: a ping-pong sweep (8 B to 4 MiB, powers of two and their
 *     1.5x) between one pair of world ranks per path class in the job
 *     (intra-node, inter-node), the other ranks asleep in a test loop;
 *   - collectives: for each collective operation with a payload the
 *     program ran on a communicator of the whole world, the same
 *     operation at the fused bucket sizes advice weighs: the blocking one
 *     for blocking calls, the nonblocking one (posted, then waited for)
 *     for nonblocking and persistent calls;
 *   - in flight: for a nonblocking stream that repeats per step, each
 *     bucket size below its bytes per step with as many calls posted at
 *     once as such buckets fill a step, then one MPI_Waitall: an
 *     overlapped trainer's fused buckets are all still running at its
 *     final wait, and several nonblocking collectives in flight together
 *     do not take what one after another does.  Measured first, before
 *     any other sweep, on buffers mapped apart from malloc: what the
 *     library allocates per call meets the heap as the program left it
 *     (glibc's thresholds move with what a process frees, and a heap
 *     that hands the memory back faults it in afresh for every set of
 *     calls: the minor page faults of each set are counted);
 *   - a fresh page's cost: where there are such sets, rank 0 maps and
 *     touches fresh pages, the price of each page the program's heap
 *     hands back and faults in again (a few microseconds on bare metal,
 *     ten on some virtual machines), for buckets whose memory the
 *     calibration's sets, after the program, did not refault.
 *
 * All within a time budget (COMMFIT_CALIBRATE) on a duplicate of the
 * plugin's own communicator whose errors return instead of aborting.
 * Rank 0 makes the plan and broadcasts it; each later decision rests on
 * values every rank holds alike (a broadcast, or an allreduce carrying
 * rank 0's clock), so all ranks take the same branch and none is left
 * waiting.  Recording is paused by then (cf_recording_pause: every wrapper
 * passes through), so no record, matrix entry, call site or sample sees
 * a calibration message.  Buffers live only while their size is
 * measured. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <jansson.h>

#include "cf_calibrate.h"
#include "cf_region.h"
#include "cf_runtime.h"


#define CAL_AUTO_SHARE 0.01 /* of the run's wall time */
#define CAL_AUTO_MAX_S 0.5
#define CAL_MIN_BUDGET_S 0.01 /* below, nothing is measured: runs of a second or less, */
                              /* times the ranks per core of an oversubscribed node */
#define CAL_LINK_MIN 8u
#define CAL_LINK_MAX (4u << 20)
#define CAL_COLL_MIN (64u << 10)
#define CAL_COLL_MIN_NB 8u /* a nonblocking stream's own sizes: its spans are no call times */
#define CAL_COLL_TOP (UINT64_C(1) << 40) /* no bucket plan goes beyond */
#define CAL_MAXSIZES 64
#define CAL_MAXSTREAMS 256
#define CAL_PP_WARM_SMALL 5 /* warm-up round trips below 64 KiB, */
#define CAL_PP_WARM_LARGE 2 /* and from there */
#define CAL_PP_MIN 5        /* timed round trips per size */
#define CAL_PP_MAX 100
#define CAL_COLL_MIN_REPS 3
#define CAL_COLL_MAX_SMALL 20 /* repetitions up to 1 MiB, */
#define CAL_COLL_MAX_LARGE 5  /* and beyond */
#define CAL_TAG 0x4346        /* the communicator is ours alone: any tag does */
#define CAL_INFLIGHT_MAX 16   /* calls posted at once, at most */
#define CAL_PF_PAGES 64       /* a fresh page's cost: pages mapped and touched a repetition, */
#define CAL_PF_REPS 7         /* repetitions, the median kept */

/* the operations measured, in the order they are measured: the blocking
 * ones, then their nonblocking forms (posted, then waited for at once),
 * since a nonblocking collective runs its own algorithm (Open MPI's
 * libnbc, not the tuned blocking one) and costs what it costs */
enum {
    K_ALLREDUCE,
    K_RS_BLOCK,
    K_RS,
    K_ALLGATHER,
    K_BCAST,
    K_REDUCE,
    K_NB, /* the first nonblocking kind: K_NB + the blocking one */
    K_N = 2 * K_NB
};
static const char *const KIND_NAME[K_N] = {
    "MPI_Allreduce",  "MPI_Reduce_scatter_block",  "MPI_Reduce_scatter",  "MPI_Allgather",  "MPI_Bcast",  "MPI_Reduce",
    "MPI_Iallreduce", "MPI_Ireduce_scatter_block", "MPI_Ireduce_scatter", "MPI_Iallgather", "MPI_Ibcast", "MPI_Ireduce"};
/* the bucket sizes of the frameworks: DDP's default, Horovod's two */
static const uint64_t FRAMEWORK_BYTES[] = {26214400u, 64u << 20, 128u << 20};

/* what the calibration sent, per rank, summed on rank 0 */
enum { N_MSGS, N_MSG_BYTES, N_COLL, N_COLL_BYTES, N_CONTROL, N_FAILED, N_COUNT };
/* why a sweep stopped */
enum { STOP_NONE, STOP_BUDGET, STOP_CAP, STOP_NOMEM, STOP_ERROR };

typedef struct {
    MPI_Comm comm; /* duplicate of cf_g.tool_comm, errors returned */
    int me, n;
    uint64_t t0_ns; /* this rank's start */
    uint64_t count[N_COUNT];
} cal_t;

typedef struct {
    uint64_t bytes;   /* as measured */
    uint64_t nominal; /* the size of the list, which bytes rounds down to whole floats per rank */
    uint32_t reps;
    uint32_t calls; /* in flight: calls posted at once, timed together; 0: one call */
    double best_s, p50_s;
    double trial_s; /* links: NetPIPE's figure (trial_best); 0 for collectives */
    double faults;  /* in flight: minor page faults of a set (median of the reps, most on a rank) */
} cal_point_t;

typedef struct {
    int32_t n, stop;
    uint64_t stop_bytes; /* the first size not measured */
    cal_point_t pt[CAL_MAXSIZES];
} cal_series_t;

/* rank 0's plan, broadcast as bytes */
typedef struct {
    double budget_s;
    double min_budget_s; /* under it nothing is measured (min_budget) */
    double share;        /* ranks per core on rank 0's node, 1 when not more */
    uint64_t cap; /* COMMFIT_CALIBRATE_MAX_BYTES */
    int32_t npairs;
    int32_t pair[2][2], pair_path[2];
    uint64_t upper[K_N]; /* the largest plausible bucket per operation, 0 = not measured */
    uint64_t step[K_N];  /* nonblocking kinds: the most bytes per step of a stream, 0 = no in-flight sweep */
} cal_plan_t;

/* a collective stream of the program (rank 0's records) */
typedef struct {
    unsigned op;
    uint32_t comm;
    int size, world, kind;
    uint64_t bytes;
    uint64_t steps; /* the calls' repeating pattern: the gcd of its records' counts */
    uint64_t outer; /* entries of the outermost region around every call; UINT64_MAX: none */
    uint64_t calls;
} cal_stream_t;

static double cal_elapsed(const cal_t *x) { return (double)(cf_clock_mono_ns() - x->t0_ns) * 1e-9; }

static int cal_rc(cal_t *x, int rc)
{
    if (rc != MPI_SUCCESS)
        x->count[N_FAILED] = 1;
    return rc;
}

/* ---- control calls, counted ---- */

/* Element-wise maximum of v over the ranks, into v: the decisions' inputs. */
static void cal_agree(cal_t *x, double *v, int n)
{
    x->count[N_CONTROL]++;
    if (cal_rc(x, PMPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, x->comm)) != MPI_SUCCESS)
        v[n - 1] = 1; /* the last input is always the error flag */
}

/* A broadcast from root that the ranks wait out asleep, so that a pair
 * measuring a link has the CPUs of an oversubscribed node to itself. */
static void cal_bcast_asleep(cal_t *x, void *buf, size_t len, int root)
{
    MPI_Request req;
    int done = 0;
    struct timespec nap = {0, 500000}; /* a wake-up takes a CPU from the pair */
    x->count[N_CONTROL]++;
    if (cal_rc(x, PMPI_Ibcast(buf, (int)len, MPI_BYTE, root, x->comm, &req)) != MPI_SUCCESS)
        return;
    while (!done && cal_rc(x, PMPI_Test(&req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS)
        if (!done)
            nanosleep(&nap, NULL);
}

/* Zeroed buffers mapped apart from malloc: a calibration buffer freed
 * through malloc would move glibc's dynamic thresholds (a freed mapped
 * chunk raises them to its size), and with them whether the library's
 * own per-call buffers, measured next, fault in afresh.  NULL: none. */
static void *cal_map(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void cal_unmap(void *p, size_t n)
{
    if (p != NULL)
        munmap(p, n ? n : 1);
}

/* minor page faults of the process so far */
static double cal_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_minflt : 0;
}

/* Seconds to fault in one fresh anonymous page: CAL_PF_PAGES mapped,
 * touched a byte a page and unmapped, the median per page of
 * CAL_PF_REPS repetitions.  NaN where the memory is not there. */
static double cal_page_fault_s(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = CAL_PF_PAGES * page;
    double t[CAL_PF_REPS];
    for (int r = 0; r < CAL_PF_REPS; r++) {
        volatile char *p = cal_map(len);
        if (p == NULL)
            return NAN;
        uint64_t t0 = cf_ticks();
        for (size_t i = 0; i < len; i += page)
            p[i] = 1;
        t[r] = (double)cf_ticks_to_ns(cf_ticks() - t0) * 1e-9 / CAL_PF_PAGES;
        cal_unmap((void *)p, len);
    }
    qsort(t, CAL_PF_REPS, sizeof(t[0]), cf_cmp_double);
    return t[CAL_PF_REPS / 2];
}

/* The best and the median of t[0..n), times scale. */
static void point_set(cal_point_t *p, uint64_t bytes, double *t, int n, double scale)
{
    qsort(t, (size_t)n, sizeof(*t), cf_cmp_double);
    p->bytes = p->nominal = bytes;
    p->reps = (uint32_t)n;
    p->best_s = t[0] * scale;
    p->p50_s = (t[(n - 1) / 2] + t[n / 2]) / 2 * scale;
    p->trial_s = 0;
}

/* NetPIPE's figure of a size: the best of CAL_TRIALS trials, each the mean
 * of its consecutive share of the n round trips in t (in the order they
 * ran), so that a trial another process delayed is passed over, and one
 * slow round trip among many fast ones counts as NetPIPE counts it.  With
 * fewer round trips than trials, each is a trial: the best. */
#define CAL_TRIALS 5
static double trial_best(const double *t, int n)
{
    int k = n < CAL_TRIALS ? n : CAL_TRIALS;
    double best = 0;
    for (int j = 0; j < k; j++) {
        int lo = j * n / k, hi = (j + 1) * n / k;
        double sum = 0;
        for (int i = lo; i < hi; i++)
            sum += t[i];
        if (j == 0 || sum / (hi - lo) < best)
            best = sum / (hi - lo);
    }
    return best;
}

/* Ascending: the powers of two from 8 B to 4 MiB and their 1.5x. */
static int link_sizes(uint64_t *out)
{
    int n = 0;
    for (uint64_t p = CAL_LINK_MIN; p <= CAL_LINK_MAX; p *= 2) {
        out[n++] = p;
        if (p * 3 / 2 < CAL_LINK_MAX)
            out[n++] = p * 3 / 2;
    }
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The smallest size measured for kind k: a blocking stream's own sizes
 * are the program's measurements, a nonblocking one's are not. */
static uint64_t coll_floor(int k) { return k >= K_NB ? CAL_COLL_MIN_NB : CAL_COLL_MIN; }

/* The largest size measured for a stream of upper bytes per rank over the
 * run: the smallest power of two at or above it, no bucket it could fill
 * being larger. */
static uint64_t coll_top(int k, uint64_t upper)
{
    uint64_t top = coll_floor(k);
    while (top < upper && top < CAL_COLL_TOP)
        top *= 2;
    return top;
}

/* Ascending: the powers of two from kind k's floor to coll_top, and the
 * frameworks' bucket sizes up to it (a 688-byte stream needs no 25 MiB
 * measurement: none of its buckets holds more than its bytes). */
static int coll_sizes(int k, uint64_t upper, uint64_t *out)
{
    int n = 0;
    uint64_t top = coll_top(k, upper);
    for (uint64_t s = coll_floor(k); s <= top; s *= 2)
        out[n++] = s;
    for (size_t i = 0; i < CF_ARRAY_LEN(FRAMEWORK_BYTES); i++) {
        int have = 0;
        for (int j = 0; j < n; j++)
            have |= out[j] == FRAMEWORK_BYTES[i];
        if (!have && FRAMEWORK_BYTES[i] <= top)
            out[n++] = FRAMEWORK_BYTES[i];
    }
    qsort(out, (size_t)n, sizeof(*out), cmp_u64);
    return n;
}

/* ---- links ----
 * Rank a leads, rank b echoes.  a's tag says what a message is: a ping
 * of the current size (echoed), the move to the next size, or the end,
 * so that a can stop at any round trip when its time is up and b never
 * needs to be told a count in advance. */
enum { TAG_PING = CAL_TAG, TAG_NEXT, TAG_END };

static int cal_send_tag(cal_t *x, const void *buf, uint64_t bytes, int to, int tag)
{
    x->count[N_MSGS]++;
    x->count[N_MSG_BYTES] += bytes;
    return cal_rc(x, PMPI_Send(buf, (int)bytes, MPI_BYTE, to, tag, x->comm));
}

/* Rank b: echoes the pings of each size until the end. */
static void link_echo(cal_t *x, int a, char *buf, char *rbuf, size_t blen, const uint64_t *sizes, int ns)
{
    MPI_Status st;
    for (int i = 0; i < ns;) {
        /* a size over the buffer is never pinged: only the end comes */
        int n = (int)(sizes[i] < blen ? sizes[i] : blen);
        if (cal_rc(x, PMPI_Recv(rbuf, n, MPI_BYTE, a, MPI_ANY_TAG, x->comm, &st)) != MPI_SUCCESS)
            return;
        if (st.MPI_TAG == TAG_END)
            return;
        if (st.MPI_TAG == TAG_NEXT)
            i++;
        else if (cal_send_tag(x, buf, sizes[i], a, TAG_PING) != MPI_SUCCESS)
            return;
    }
}

/* Rank a at size s: warm-up round trips, then up to timed ones, stopping
 * at the deadline, or past the size's share (soft) once it has the
 * minimum; a reason to stop, or STOP_NONE with the point set. */
static int link_size(cal_t *x, int b, char *buf, char *rbuf, uint64_t s, int warm, int timed, double soft, double deadline,
                     cal_point_t *pt)
{
    double rt[CAL_PP_MAX];
    int n = 0;
    for (int r = 0; r < warm + timed; r++) {
        uint64_t t0 = cf_ticks();
        if (cal_send_tag(x, buf, s, b, TAG_PING) != MPI_SUCCESS ||
            cal_rc(x, PMPI_Recv(rbuf, (int)s, MPI_BYTE, b, TAG_PING, x->comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            return STOP_ERROR;
        if (r >= warm)
            rt[n++] = (double)cf_ticks_to_ns(cf_ticks() - t0) * 1e-9;
        double now = cal_elapsed(x);
        if (now > deadline && n < CAL_PP_MIN)
            return STOP_BUDGET;
        if (now > deadline || (now > soft && n >= CAL_PP_MIN))
            break;
    }
    double trial = trial_best(rt, n) * 0.5;
    point_set(pt, s, rt, n, 0.5);
    pt->trial_s = trial;
    return STOP_NONE;
}

/* Rank a: the sweep, ascending.  A size is started when its minimum of
 * round trips fits what is left at the last size's best round trip
 * scaled by size (the deadline cuts it short otherwise); its round trips
 * fill half of its even share of what is left at the last median (on a
 * loaded machine the median, not the best, is what they cost); the
 * first size, with nothing to go by, has as many as that share allows. */
static void link_lead(cal_t *x, int b, char *buf, char *rbuf, const uint64_t *sizes, int ns, uint64_t cap, double deadline,
                      cal_series_t *res)
{
    int i;
    for (i = 0; i < ns; i++) {
        uint64_t s = sizes[i];
        const cal_point_t *prev = res->n ? &res->pt[res->n - 1] : NULL;
        double scale = prev ? 2 * (double)s / (double)prev->bytes : 0;
        double est = prev ? prev->best_s * scale : 0, cost = prev ? prev->p50_s * scale : 0;
        double left = deadline - cal_elapsed(x), fit = cost > 0 ? left / (ns - i) / cost / 2 : CAL_PP_MAX;
        int warm = s < (64u << 10) ? CAL_PP_WARM_SMALL : CAL_PP_WARM_LARGE;
        int timed = fit < CAL_PP_MIN ? CAL_PP_MIN : fit > CAL_PP_MAX ? CAL_PP_MAX : (int)fit;
        int stop = s > cap ? STOP_CAP
                   : left <= 0 || (warm + CAL_PP_MIN) * est > left
                       ? STOP_BUDGET
                       : link_size(x, b, buf, rbuf, s, warm, timed, deadline - left + left / (ns - i) / 2, deadline,
                                   &res->pt[res->n]);
        if (stop != STOP_NONE) {
            res->stop = stop;
            res->stop_bytes = s;
            break;
        }
        res->n++;
        if (i + 1 < ns && cal_send_tag(x, NULL, 0, b, TAG_NEXT) != MPI_SUCCESS)
            return;
    }
    cal_send_tag(x, NULL, 0, b, TAG_END); /* after an error too: b must not wait for ever */
}

/* NetPIPE's sweep between world ranks a and b until rank a's clock
 * reaches deadline (seconds since its start).  The result is rank a's,
 * broadcast to every rank. */
static void cal_link(cal_t *x, int a, int b, double deadline, uint64_t cap, cal_series_t *res)
{
    memset(res, 0, sizeof(*res));
    if (x->me == a || x->me == b) {
        uint64_t sizes[CAL_MAXSIZES];
        int ns = link_sizes(sizes), peer = x->me == a ? b : a, peer_ok = 0;
        size_t blen = cap < CAL_LINK_MAX ? (size_t)cap : CAL_LINK_MAX;
        /* a send and a receive buffer apart, as NetPIPE and programs have
         * them (one buffer for both halves what the caches must hold, and
         * measured 1-2 MiB over TCP 30 % faster than NetPIPE); the send
         * half written once, so that it is not the kernel's one zero page */
        char *buf = cal_map(2 * blen), *rbuf = buf ? buf + blen : NULL;
        int ok = buf != NULL;
        if (ok)
            memset(buf, 0x5a, blen);
        /* both have their buffer, or neither measures */
        x->count[N_MSGS]++;
        x->count[N_MSG_BYTES] += sizeof(ok);
        if (cal_rc(x, PMPI_Sendrecv(&ok, 1, MPI_INT, peer, TAG_END, &peer_ok, 1, MPI_INT, peer, TAG_END, x->comm,
                                    MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            ok = 0;
        if (!ok || !peer_ok) {
            res->stop = STOP_NOMEM;
            res->stop_bytes = sizes[0];
        } else if (x->me == a)
            link_lead(x, b, buf, rbuf, sizes, ns, cap, deadline, res);
        else
            link_echo(x, a, buf, rbuf, blen, sizes, ns);
        cal_unmap(buf, 2 * blen);
    }
    cal_bcast_asleep(x, res, sizeof(*res), a);
}

/* ---- collectives ---- */

/* Kind k (nonblocking) at elems floats posted into *rq; the operations
 * that split the buffer among the ranks take elems / n each. */
static int coll_post(cal_t *x, int k, void *sb, void *rb, int elems, const int *counts, MPI_Request *rq)
{
    int per = elems / x->n;
    switch (k) {
    case K_NB + K_ALLREDUCE:
        return PMPI_Iallreduce(MPI_IN_PLACE, rb, elems, MPI_FLOAT, MPI_SUM, x->comm, rq);
    case K_NB + K_RS_BLOCK:
        return PMPI_Ireduce_scatter_block(sb, rb, per, MPI_FLOAT, MPI_SUM, x->comm, rq);
    case K_NB + K_RS:
        return PMPI_Ireduce_scatter(sb, rb, counts, MPI_FLOAT, MPI_SUM, x->comm, rq);
    case K_NB + K_ALLGATHER:
        return PMPI_Iallgather(sb, per, MPI_FLOAT, rb, per, MPI_FLOAT, x->comm, rq);
    case K_NB + K_BCAST:
        return PMPI_Ibcast(rb, elems, MPI_FLOAT, 0, x->comm, rq);
    default:
        return PMPI_Ireduce(sb, rb, elems, MPI_FLOAT, MPI_SUM, 0, x->comm, rq);
    }
}

/* The operation of kind k at elems floats (a multiple of the size for
 * the operations that split the buffer among the ranks).  A nonblocking
 * kind is waited for at once, or, calls > 1, posted calls times, the
 * i-th on the i-th sl and rl bytes of sb and rb, then waited for
 * together. */
static int coll_run(cal_t *x, int k, char *sb, size_t sl, char *rb, size_t rl, int elems, const int *counts,
                    int calls)
{
    int per = elems / x->n, rc = MPI_SUCCESS, posted = 0;
    MPI_Request rq[CAL_INFLIGHT_MAX];
    MPI_Status st[CAL_INFLIGHT_MAX]; /* MPICH's MPI_STATUSES_IGNORE is no array GCC can bound */
    switch (k) {
    case K_ALLREDUCE:
        return PMPI_Allreduce(MPI_IN_PLACE, rb, elems, MPI_FLOAT, MPI_SUM, x->comm);
    case K_RS_BLOCK:
        return PMPI_Reduce_scatter_block(sb, rb, per, MPI_FLOAT, MPI_SUM, x->comm);
    case K_RS:
        return PMPI_Reduce_scatter(sb, rb, counts, MPI_FLOAT, MPI_SUM, x->comm);
    case K_ALLGATHER:
        return PMPI_Allgather(sb, per, MPI_FLOAT, rb, per, MPI_FLOAT, x->comm);
    case K_BCAST:
        return PMPI_Bcast(rb, elems, MPI_FLOAT, 0, x->comm);
    case K_REDUCE:
        return PMPI_Reduce(sb, rb, elems, MPI_FLOAT, MPI_SUM, 0, x->comm);
    default:
        while (rc == MPI_SUCCESS && posted < calls) {
            rc = coll_post(x, k, sb + (size_t)posted * sl, rb + (size_t)posted * rl, elems, counts, &rq[posted]);
            posted += rc == MPI_SUCCESS;
        }
        /* what was posted completes, even after a failed post */
        int wrc = posted ? PMPI_Waitall(posted, rq, st) : MPI_SUCCESS;
        return rc != MPI_SUCCESS ? rc : wrc;
    }
}

/* One timed repetition: a barrier, the operation (calls of it in flight);
 * every rank gets the slowest rank's duration in v[0], rank 0's clock in
 * v[1] and, calls > 1, the most minor page faults a rank took in v[2]. */
static void coll_rep(cal_t *x, int k, char *sb, size_t sl, char *rb, size_t rl, int elems, const int *counts,
                     int calls, uint64_t bytes, double v[4])
{
    x->count[N_CONTROL]++;
    int rc = cal_rc(x, PMPI_Barrier(x->comm));
    double f0 = calls > 1 ? cal_faults() : 0;
    uint64_t t0 = cf_ticks();
    if (rc == MPI_SUCCESS)
        rc = cal_rc(x, coll_run(x, k, sb, sl, rb, rl, elems, counts, calls));
    v[0] = (double)cf_ticks_to_ns(cf_ticks() - t0) * 1e-9;
    v[2] = calls > 1 ? cal_faults() - f0 : 0;
    x->count[N_COLL] += (uint64_t)calls;
    x->count[N_COLL_BYTES] += bytes * (uint64_t)calls;
    v[1] = x->me == 0 ? cal_elapsed(x) : 0;
    v[3] = rc != MPI_SUCCESS;
    cal_agree(x, v, 4);
}

/* Repetitions of size bytes (calls of it in flight at once) until the
 * size's share of the time is used: at least CAL_COLL_MIN_REPS, or none
 * when they cannot all end by the operation's deadline at the last one's
 * pace (its first repetitions pay for the pages of its buffers).  Returns
 * a reason to stop, STOP_NONE when the size was measured. */
static int coll_size(cal_t *x, int k, uint64_t bytes, int calls, int elems, const int *counts, double share,
                     double deadline, cal_point_t *pt)
{
    int b = k % K_NB;
    /* all-reduces in place, as a framework all-reduces its fusion buffer
     * (DDP, Horovod, torch.distributed) */
    size_t sl = b == K_BCAST || b == K_ALLREDUCE ? 0 : b == K_ALLGATHER ? bytes / (uint64_t)x->n : bytes;
    size_t rl = b == K_RS || b == K_RS_BLOCK ? bytes / (uint64_t)x->n : bytes;
    /* each call its own buffers, as each bucket of a trainer; the
     * warm-up touches them; mapped apart from malloc (cal_map) */
    size_t sn = sl * (size_t)calls, rn = rl * (size_t)calls;
    char *sb = cal_map(sn), *rb = cal_map(rn);
    double t[CAL_COLL_MAX_SMALL], f[CAL_COLL_MAX_SMALL], v[4] = {x->me == 0 ? cal_elapsed(x) : 0, 0, 0, !sb || !rb};
    int maxr = bytes * (uint64_t)calls <= (1u << 20) ? CAL_COLL_MAX_SMALL : CAL_COLL_MAX_LARGE, n = 0,
        stop = STOP_NONE;
    cal_agree(x, v, 4); /* v[3]: some rank has no memory */
    if (v[3]) {
        cal_unmap(sb, sn);
        cal_unmap(rb, rn);
        return STOP_NOMEM;
    }
    double start = v[0];
    coll_rep(x, k, sb, sl, rb, rl, elems, counts, calls, bytes, v); /* warm-up */
    if (!v[3] && v[1] + CAL_COLL_MIN_REPS * v[0] > deadline)
        stop = STOP_BUDGET; /* at the warm-up's pace, which paid for the pages */
    while (stop == STOP_NONE && !v[3]) {
        coll_rep(x, k, sb, sl, rb, rl, elems, counts, calls, bytes, v);
        if (v[3])
            break;
        f[n] = v[2];
        t[n++] = v[0];
        if (n < CAL_COLL_MIN_REPS && v[1] + (CAL_COLL_MIN_REPS - n) * v[0] > deadline)
            stop = STOP_BUDGET;
        else if (n >= CAL_COLL_MIN_REPS && (n >= maxr || v[1] - start + v[0] > share))
            break;
    }
    cal_unmap(sb, sn);
    cal_unmap(rb, rn);
    if (v[3])
        return STOP_ERROR;
    if (stop == STOP_NONE) {
        point_set(pt, bytes, t, n, 1);
        pt->calls = calls > 1 ? (uint32_t)calls : 0;
        qsort(f, (size_t)n, sizeof(*f), cf_cmp_double);
        pt->faults = calls > 1 ? (f[(n - 1) / 2] + f[n / 2]) / 2 : 0;
    }
    return stop;
}

/* Calls in flight for buckets of s bytes in a step of step bytes: as
 * many as such buckets fill it, at most CAL_INFLIGHT_MAX; 0 where one
 * holds it all.  step 0: one call (the one-by-one sweep). */
static int inflight_calls(uint64_t s, uint64_t step)
{
    if (step == 0)
        return 1;
    if (s < CAL_COLL_MIN || s >= step)
        return 0;
    uint64_t c = (step + s - 1) / s;
    return c > CAL_INFLIGHT_MAX ? CAL_INFLIGHT_MAX : (int)c;
}

/* One size of the sweep: the budget's estimate from the last size
 * measured, then the size.  Returns a reason to stop. */
static int coll_next(cal_t *x, int k, uint64_t bytes, int calls, int elems, int *counts, double share_of,
                     double deadline, cal_series_t *res)
{
    /* the last size's median scaled by its bytes in flight, for its
     * warm-up and the minimum of repetitions, twice over: from 64 KiB to
     * 25 MiB a loaded machine's memory, not the link, sets the pace (a
     * size that still overruns is abandoned) */
    double est[3] = {x->me == 0 ? cal_elapsed(x) : 0, 0, 0};
    cal_agree(x, est, 3);
    const cal_point_t *prev = res->n ? &res->pt[res->n - 1] : NULL;
    double prev_bytes = prev ? (double)prev->bytes * (prev->calls ? prev->calls : 1) : 1;
    double need = prev ? 2 * (CAL_COLL_MIN_REPS + 1) * prev->p50_s * (double)bytes * calls / prev_bytes : 0;
    if (est[2])
        return STOP_ERROR;
    if (est[0] + need > deadline)
        return STOP_BUDGET;
    for (int r = 0; r < x->n; r++)
        counts[r] = elems / x->n;
    return coll_size(x, k, bytes, calls, elems, counts, (deadline - est[0]) / share_of, deadline, &res->pt[res->n]);
}

/* Kind k at its sizes up to upper, ascending, until rank 0's clock reaches
 * its share of what is left until end: 1 / kinds_left of it.  step: 0 for
 * one call at a time; else the in-flight sweep of a stream of step bytes
 * per step (inflight_calls). */
static void cal_collective(cal_t *x, int k, uint64_t upper, uint64_t step, const cal_plan_t *plan, double end,
                           int kinds_left, cal_series_t *res)
{
    uint64_t sizes[CAL_MAXSIZES];
    int ns = coll_sizes(k, upper, sizes);
    int *counts = malloc((size_t)x->n * sizeof(int));
    double v[2] = {x->me == 0 ? cal_elapsed(x) : 0, !counts};
    memset(res, 0, sizeof(*res));
    cal_agree(x, v, 2);
    if (v[1]) {
        res->stop = STOP_NOMEM;
        res->stop_bytes = sizes[0];
        free(counts);
        return;
    }
    double deadline = v[0] + (end - v[0]) / kinds_left;
    for (int i = 0; i < ns; i++) {
        /* a whole number of floats, per rank where the buffer is split */
        int b = k % K_NB, split = b == K_RS || b == K_RS_BLOCK || b == K_ALLGATHER, stop = STOP_NONE;
        int elems = (int)(sizes[i] / 4 / (split ? (uint64_t)x->n : 1)) * (split ? x->n : 1);
        int calls = inflight_calls(sizes[i], step);
        uint64_t bytes = (uint64_t)elems * 4;
        if (calls == 0 || elems == 0)
            continue; /* one bucket a step, or under a float per rank: nothing to measure */
        if (sizes[i] * (uint64_t)calls > plan->cap)
            stop = STOP_CAP;
        else
            stop = coll_next(x, k, bytes, calls, elems, counts, ns - i, deadline, res);
        if (stop != STOP_NONE) {
            res->stop = stop;
            res->stop_bytes = sizes[i];
            break;
        }
        res->pt[res->n++].nominal = sizes[i];
    }
    free(counts);
}

/* ---- the plan (rank 0) ---- */

/* The operation measured for a recorded one, or -1: the blocking one
 * for a blocking call (MPI_Allreduce_c -> MPI_Allreduce), the
 * nonblocking one for a nonblocking or persistent call (MPI_Iallreduce,
 * MPI_Allreduce_init -> MPI_Iallreduce). */
static int kind_of(const char *name)
{
    char b[64];
    if (strncmp(name, "MPI_", 4) != 0 || strlen(name) >= sizeof(b))
        return -1;
    int nb = (name[4] == 'I' && name[5] >= 'a' && name[5] <= 'z') || strstr(name, "_init") != NULL;
    cf_blocking_op_name(name, b, sizeof(b));
    for (int k = 0; k < K_NB; k++)
        if (strcmp(b, KIND_NAME[k]) == 0)
            return nb ? K_NB + k : k;
    return -1;
}

static const cf_comm_t *comm_by_id(uint32_t id)
{
    size_t n = atomic_load(&cf_comm_nall);
    cf_comm_t **all = atomic_load(&cf_comm_all);
    for (size_t i = 0; all && i < n; i++)
        if (all[i]->id == id)
            return all[i];
    return NULL;
}

/* The program's collective streams with a payload, from rank 0's tables:
 * bytes summed per (operation, communicator).  Returns how many; *more_p
 * counts those beyond max. */
static size_t find_streams(cal_stream_t *st, size_t max, size_t *more_p)
{
    size_t n = 0;
    uint32_t nt = cf_thread_count();
    *more_p = 0;
    for (uint32_t i = 0; i < nt; i++) {
        const cf_table_t *tb = &cf_thread_at(i)->table;
        for (uint32_t s = 0, ns = cf_table_count(tb); s < ns; s++) {
            const cf_stat_t *e = cf_table_nth(tb, s);
            if (cf_key_layer(e->key) != CF_LAYER_MPI || !e->calls)
                continue;
            unsigned op = cf_key_op(e->key);
            uint32_t comm = cf_key_comm(e->key);
            int k = op < CF_OP_COUNT ? kind_of(cf_op_names[op]) : -1;
            if (k < 0)
                continue;
            size_t j = 0;
            while (j < n && !(st[j].op == op && st[j].comm == comm))
                j++;
            if (j == n) {
                if (n == max) {
                    ++*more_p;
                    continue;
                }
                const cf_comm_t *c = comm_by_id(comm);
                st[n] = (cal_stream_t){.op = op, .comm = comm, .kind = k, .size = c ? c->size : 0};
                st[n].world = c && !c->inter && c->size == cf_g.world_size;
                n++;
            }
            st[j].bytes += e->bytes;
            st[j].steps = cf_gcd_u64(st[j].steps, e->calls);
            /* the outermost region around its calls, if one holds them all */
            uint64_t outer = cf_region_outer_entries(cf_key_region(e->key));
            if (outer == 0 || (st[j].calls && outer != st[j].outer))
                st[j].outer = UINT64_MAX; /* a call outside regions, or in another */
            else if (!st[j].calls)
                st[j].outer = outer;
            st[j].calls += e->calls;
        }
    }
    return n;
}

/* A stream's steps: the entries of the outermost region around all its
 * calls, else the repeating pattern of its records' counts (their gcd,
 * which a step holding k calls of every size multiplies by k). */
static uint64_t cal_steps(const cal_stream_t *s)
{
    return s->outer != UINT64_MAX && s->outer >= 2 ? s->outer : s->steps;
}

/* One pair per path class: intra-node (rank 0 and another rank of its
 * node, else the first two ranks sharing a node), inter-node (rank 0 and
 * the first rank on another node). */
static void find_pairs(cal_plan_t *p)
{
    const int *node = cf_g.world_node;
    int n = cf_g.world_size, a = -1, b = -1;
    for (int i = 0; i < n && a < 0; i++)
        for (int j = i + 1; j < n && a < 0; j++)
            if (node[i] == node[j])
                a = i, b = j;
    if (a >= 0) {
        p->pair[p->npairs][0] = a;
        p->pair[p->npairs][1] = b;
        p->pair_path[p->npairs++] = CF_PATH_INTRA;
    }
    for (int j = 1; j < n; j++)
        if (node[j] != node[0]) {
            p->pair[p->npairs][0] = 0;
            p->pair[p->npairs][1] = j;
            p->pair_path[p->npairs++] = CF_PATH_INTER;
            break;
        }
}

/* ---- the section (rank 0) ---- */

/* "2 MiB", "96 KiB", "12 B" */
static void fmt_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%llu B", (unsigned long long)b);
}

static const char *stop_why(int stop)
{
    switch (stop) {
    case STOP_BUDGET:
        return "budget";
    case STOP_CAP:
        return "memory (over COMMFIT_CALIBRATE_MAX_BYTES)";
    case STOP_NOMEM:
        return "memory (allocation failed)";
    default:
        return "error (a call failed)";
    }
}

/* A reason for skipped; *incomplete_p is set unless it is the memory
 * bound, which leaves sizes out by design. */
static void skip(json_t *skipped, int *incomplete_p, int stop, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void skip(json_t *skipped, int *incomplete_p, int stop, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    json_array_append_new(skipped, json_string(buf));
    if (stop != STOP_CAP)
        *incomplete_p = 1;
}

/* The sizes up to top (0: all): a stream lists those it could fill. */
static json_t *sizes_json(const cal_series_t *s, uint64_t top)
{
    json_t *arr = json_array();
    for (int i = 0; i < s->n; i++) {
        const cal_point_t *p = &s->pt[i];
        if (top && p->nominal > top)
            continue;
        json_t *e = json_pack("{s:I, s:i, s:f, s:f}", "bytes", (json_int_t)p->bytes, "reps", (int)p->reps, "best_s",
                              p->best_s, "p50_s", p->p50_s);
        if (e != NULL && p->trial_s > 0)
            json_object_set_new(e, "trial_s", json_real(p->trial_s));
        if (e != NULL && p->calls > 0) {
            json_object_set_new(e, "calls", json_integer(p->calls));
            json_object_set_new(e, "page_faults", json_integer((json_int_t)p->faults));
        }
        json_array_append_new(arr, e);
    }
    return arr;
}

static const char *path_name(int path) { return path == CF_PATH_INTER ? "inter-node" : "intra-node"; }

/* ---- the whole ---- */

/* Rank 0's plan: the budget from the run's length, the pairs, the
 * streams' upper bounds. */
static void make_plan(cal_plan_t *p, cal_stream_t *st, size_t *nst_p, size_t *more_p)
{
    double wall = (double)(cf_clock_mono_ns() - cf_g.init_mono_ns) * 1e-9;
    memset(p, 0, sizeof(*p));
    p->budget_s = cf_g.cfg.calibrate_s;
    if (p->budget_s < 0)
        p->budget_s = CAL_AUTO_SHARE * wall < CAL_AUTO_MAX_S ? CAL_AUTO_SHARE * wall : CAL_AUTO_MAX_S;
    /* Where ranks outnumber cores, every agreement between sizes waits for
     * each rank's turn on a core: 64 ranks on 2 cores spent 0.056 s of a
     * 0.013 s budget on them and measured nothing.  The floor grows with
     * the ranks a core carries. */
    p->share = cf_g.node_cpus > 0 && cf_g.node_ranks > cf_g.node_cpus ? (double)cf_g.node_ranks / cf_g.node_cpus : 1;
    p->min_budget_s = CAL_MIN_BUDGET_S * p->share;
    p->cap = cf_g.cfg.calibrate_max_bytes;
    *nst_p = 0;
    *more_p = 0;
    if (p->budget_s <= 0 || cf_g.world_size < 2)
        return;
    find_pairs(p);
    *nst_p = st ? find_streams(st, CAL_MAXSTREAMS, more_p) : 0;
    for (size_t i = 0; i < *nst_p; i++) {
        if (!st[i].world)
            continue;
        if (st[i].bytes > p->upper[st[i].kind])
            p->upper[st[i].kind] = st[i].bytes;
        /* a nonblocking stream that repeats: its fused buckets in flight */
        uint64_t steps = cal_steps(&st[i]), step = steps >= 2 ? st[i].bytes / steps : 0;
        if (st[i].kind >= K_NB && step > CAL_COLL_MIN && step > p->step[st[i].kind])
            p->step[st[i].kind] = step;
    }
}

/* A stream's entry in collectives, and what its sweeps left out. */
static void stream_json(const cal_plan_t *plan, const cal_series_t *coll, const cal_series_t *inflight,
                        const cal_stream_t *st, json_t *jc, json_t *skipped, int *incomplete)
{
    const char *op = cf_op_names[st->op], *kind = KIND_NAME[st->kind];
    char b[32];
    if (!st->world) {
        skip(skipped, incomplete, STOP_CAP, "%s on comm %u: not the whole world (%d of %d ranks)", op, st->comm,
             st->size, cf_g.world_size);
        return;
    }
    const cal_series_t *s = &coll[st->kind];
    uint64_t want[CAL_MAXSIZES];
    int nw = coll_sizes(st->kind, st->bytes, want);
    uint64_t pow2 = coll_top(st->kind, st->bytes);
    json_t *e = json_pack("{s:s, s:s, s:I, s:i, s:s, s:s, s:b, s:o}", "op", kind, "for_op", op, "comm",
                          (json_int_t)st->comm, "comm_size", st->size, "on", "world duplicate", "datatype",
                          "MPI_FLOAT", "in_place", st->kind % K_NB == K_ALLREDUCE, "sizes", sizes_json(s, pow2));
    if (s->stop != STOP_NONE && s->stop != STOP_CAP && s->stop_bytes <= want[nw - 1]) {
        fmt_bytes(s->stop_bytes, b, sizeof(b));
        skip(skipped, incomplete, s->stop, "%s for %s on comm %u: sizes from %s not measured: %s", kind, op,
             st->comm, b, stop_why(s->stop));
    }
    /* what the bound leaves out, whether or not the budget reached it */
    for (int w = 0; w < nw; w++)
        if (want[w] > plan->cap) {
            fmt_bytes(want[w], b, sizeof(b));
            skip(skipped, incomplete, STOP_CAP, "%s for %s on comm %u: sizes from %s not measured: %s", kind, op,
                 st->comm, b, stop_why(STOP_CAP));
            break;
        }
    uint64_t step = plan->step[st->kind];
    if (st->kind >= K_NB && step > 0 && e != NULL) {
        const cal_series_t *f = &inflight[st->kind];
        json_object_set_new(e, "in_flight_step_bytes", json_integer((json_int_t)step));
        json_object_set_new(e, "in_flight", sizes_json(f, 0));
        if (f->stop != STOP_NONE) {
            fmt_bytes(f->stop_bytes, b, sizeof(b));
            skip(skipped, incomplete, f->stop, "%s for %s on comm %u in flight: sizes from %s not measured: %s",
                 kind, op, st->comm, b, stop_why(f->stop));
        }
    } else if (st->kind >= K_NB && e != NULL && !(cal_steps(st) >= 2 && st->bytes / cal_steps(st) > CAL_COLL_MIN)) {
        skip(skipped, incomplete, STOP_CAP,
             "%s for %s on comm %u in flight: not measured: %s", kind, op, st->comm,
             cal_steps(st) >= 2 ? "a step holds one bucket of 64 KiB or less" : "its calls repeat in no pattern of steps");
    }
    json_array_append_new(jc, e);
}

static json_t *section(const cal_plan_t *plan, const cal_series_t *links, const cal_series_t *coll,
                       const cal_series_t *inflight, const cal_stream_t *st, size_t nst, size_t more,
                       const uint64_t *sum, double elapsed, double page_fault_s)
{
    json_t *sec = json_object(), *skipped = json_array(), *jl = json_array(), *jc = json_array();
    int incomplete = 0;
    char b[32];
    if (cf_g.world_size < 2)
        skip(skipped, &incomplete, STOP_NONE, "one rank: no link or collective to measure");
    else if (plan->budget_s < plan->min_budget_s && plan->share > 1)
        skip(skipped, &incomplete, STOP_NONE,
             "everything: a budget of %.3g s is under the %.3g s a calibration needs where %.3g ranks share each core",
             plan->budget_s, plan->min_budget_s, plan->share);
    else if (plan->budget_s < plan->min_budget_s)
        skip(skipped, &incomplete, STOP_NONE, "everything: a budget of %.3g s is under the %g s a calibration needs",
             plan->budget_s, plan->min_budget_s);
    for (int i = 0; i < plan->npairs; i++) {
        const cal_series_t *s = &links[i];
        const char *path = path_name(plan->pair_path[i]);
        json_array_append_new(jl, json_pack("{s:s, s:[i,i], s:s, s:o}", "path", path, "ranks", plan->pair[i][0],
                                            plan->pair[i][1], "method", "ping-pong", "sizes", sizes_json(s, 0)));
        if (s->stop != STOP_NONE && s->stop != STOP_CAP) {
            fmt_bytes(s->stop_bytes, b, sizeof(b));
            skip(skipped, &incomplete, s->stop, "%s link: sizes from %s not measured: %s", path, b,
                 stop_why(s->stop));
        }
        if (plan->cap < CAL_LINK_MAX) {
            uint64_t sizes[CAL_MAXSIZES];
            int ns = link_sizes(sizes), w = 0;
            while (w < ns && sizes[w] <= plan->cap)
                w++;
            fmt_bytes(sizes[w], b, sizeof(b));
            skip(skipped, &incomplete, STOP_CAP, "%s link: sizes from %s not measured: %s", path, b,
                 stop_why(STOP_CAP));
        }
    }
    for (size_t i = 0; i < nst; i++)
        stream_json(plan, coll, inflight, &st[i], jc, skipped, &incomplete);
    if (more)
        skip(skipped, &incomplete, STOP_NONE, "%zu collective streams beyond the first %d not considered", more,
             CAL_MAXSTREAMS);
    if (sum[N_FAILED])
        skip(skipped, &incomplete, STOP_NONE, "a calibration call returned an error on %llu ranks",
             (unsigned long long)sum[N_FAILED]);
    json_object_set_new(sec, "version", json_integer(1));
    json_object_set_new(sec, "budget_s", json_real(plan->budget_s));
    json_object_set_new(sec, "elapsed_s", json_real(elapsed));
    json_object_set_new(sec, "complete", json_boolean(!incomplete));
    json_object_set_new(sec, "skipped", skipped);
    json_object_set_new(sec, "messages",
                        json_pack("{s:I, s:I, s:I, s:I, s:I}", "sent", (json_int_t)sum[N_MSGS], "bytes",
                                  (json_int_t)sum[N_MSG_BYTES], "collective_calls", (json_int_t)sum[N_COLL],
                                  "collective_bytes", (json_int_t)sum[N_COLL_BYTES], "control_calls",
                                  (json_int_t)sum[N_CONTROL]));
    if (isfinite(page_fault_s))
        json_object_set_new(sec, "page_fault_s", json_real(page_fault_s));
    json_object_set_new(sec, "links", jl);
    json_object_set_new(sec, "collectives", jc);
    return sec;
}

static json_t *cf_calibrate(void)
{
    cal_t x = {.me = cf_g.world_rank, .n = cf_g.world_size};
    cal_plan_t plan;
    cal_stream_t *st = x.me == 0 ? calloc(CAL_MAXSTREAMS, sizeof(*st)) : NULL;
    size_t nst = 0, more = 0;
    uint64_t sum[N_COUNT] = {0};
    json_t *sec = NULL;

    if (x.me == 0)
        make_plan(&plan, st, &nst, &more);
    PMPI_Bcast(&plan, (int)sizeof(plan), MPI_BYTE, 0, cf_g.tool_comm);
    if (plan.budget_s <= 0) {
        free(st);
        return NULL;
    }
    if (plan.budget_s < plan.min_budget_s) {
        /* a few collectives and a sweep's first size would be all of it */
        if (x.me == 0) {
            uint64_t none[N_COUNT] = {[N_CONTROL] = (uint64_t)x.n}; /* the plan's broadcast */
            plan.npairs = 0;
            sec = section(&plan, NULL, NULL, NULL, NULL, 0, 0, none, 0, NAN);
        }
        free(st);
        return sec;
    }
    x.count[N_CONTROL] = 1; /* the plan's broadcast */
    /* fatal errors on the duplicate would abort by themselves */
    PMPI_Comm_dup(cf_g.tool_comm, &x.comm);
    PMPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
    cal_series_t *links = calloc(2, sizeof(*links)), *coll = calloc(2 * K_N, sizeof(*coll));
    cal_series_t *inflight = coll ? coll + K_N : NULL;
    double v[2] = {0, !links || !coll};
    cal_agree(&x, v, 2);
    /* every rank is here (the last ones to reach MPI_Finalize included):
     * the budget's clock starts, on every rank about together */
    x.t0_ns = cf_clock_mono_ns();
    int go = !v[1] && x.n > 1, one = 0, sets = 0;
    for (int k = 0; k < K_N; k++) {
        one += plan.upper[k] > 0;
        sets += plan.upper[k] > 0 && plan.step[k] > 0;
    }
    /* half the budget for the links where there are collectives, the rest
     * in equal shares per sweep; the in-flight sweeps first, on the heap
     * as the program left it (see the top), then the links, then one call
     * at a time */
    double link_share = one + sets ? plan.budget_s / 2 : plan.budget_s, sets_end = link_share * sets / (one + sets);
    for (int k = 0, done = 0; go && k < K_N; k++)
        if (plan.upper[k] > 0 && plan.step[k] > 0)
            cal_collective(&x, k, plan.upper[k], plan.step[k], &plan, sets_end, sets - done++, &inflight[k]);
    /* the price of a fresh page, for the buckets where the program's heap
     * refaults them (the sets' memory in flight; a blocking call's
     * temporary buffer): rank 0 alone, the others wait for it in the
     * agreement below, or, without sets, in the final reduction */
    double page_fault_s = go && sets && x.me == 0 ? cal_page_fault_s() : NAN;
    double off[2] = {x.me == 0 ? cal_elapsed(&x) : 0, 0};
    if (go && sets)
        cal_agree(&x, off, 2);
    for (int i = 0; go && i < plan.npairs; i++)
        cal_link(&x, plan.pair[i][0], plan.pair[i][1], off[0] + link_share * (i + 1) / plan.npairs, plan.cap,
                 &links[i]);
    for (int k = 0, done = 0; go && k < K_N; k++)
        if (plan.upper[k] > 0)
            cal_collective(&x, k, plan.upper[k], 0, &plan, plan.budget_s, one - done++, &coll[k]);
    if (go && !sets && one && x.me == 0)
        page_fault_s = cal_page_fault_s();
    x.count[N_CONTROL]++; /* this reduction */
    PMPI_Reduce(x.count, sum, N_COUNT, MPI_UINT64_T, MPI_SUM, 0, x.comm);
    PMPI_Comm_free(&x.comm);
    if (x.me == 0) {
        if (!go && x.n > 1) {
            sum[N_FAILED]++; /* no memory for the results on some rank */
            plan.npairs = 0;
            nst = 0;
        }
        sec = section(&plan, links, coll, inflight, st, nst, more, sum, cal_elapsed(&x), page_fault_s);
    }
    free(links);
    free(coll);
    free(st);
    return sec;
}

/* measured before the merge, its section put in the profile after it */
static json_t *cf_calibration;

void cf_calibrate_run(void)
{
    cf_calibration = cf_calibrate();
}

json_t *cf_calibrate_section(const cf_fin_t *f)
{
    json_t *sec = cf_calibration;
    (void)f;
    cf_calibration = NULL;
    return sec;
}
