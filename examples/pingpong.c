/*
 * pingpong.c - point-to-point ping-pong sweep between rank 0 and rank 1.
 *
 * Demonstrates the classic latency/bandwidth measurement: for message sizes
 * doubling from --min to --max (or --sizes N log-spaced ones), rank 0 sends a message to rank 1, which sends
 * it straight back.  Half the median round-trip time is reported together
 * with the resulting bandwidth, so the table follows T = alpha + M/B.
 * Three communication styles are available: blocking (MPI_Send/MPI_Recv),
 * nonblocking (MPI_Isend/MPI_Irecv/MPI_Waitall) and persistent
 * (MPI_Send_init/MPI_Recv_init/MPI_Start/MPI_Wait).
 *
 * Ranks other than 0 and 1 take no part in the sweep; they wait in a
 * nonblocking barrier that they poll with short sleeps, so they do not steal
 * CPU time from the measuring pair on oversubscribed nodes.
 *
 * Rank 1 needs no iteration counts: every ping from rank 0 carries either
 * TAG_PING (another one follows) or TAG_LAST (final round trip of a size).
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include "ex_common.h"

#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_PING = 1, TAG_LAST = 2, TAG_PONG = 3 };
enum { MODE_BLOCKING, MODE_NONBLOCKING, MODE_PERSISTENT };

static const char *const mode_names[] = { "blocking", "nonblocking", "persistent" };

/* Automatic iteration count: about AUTO_BYTES moved one way per size, kept
 * within [AUTO_MIN_ITERS, AUTO_MAX_ITERS]; a size also stops early once it
 * has used AUTO_SIZE_SECONDS (and at least AUTO_MIN_ITERS round trips). */
#define AUTO_BYTES ((size_t)256 << 20)
#define AUTO_MIN_ITERS 50
#define AUTO_MAX_ITERS 10000
#define AUTO_SIZE_SECONDS 0.2

struct options {
    size_t min_size;
    size_t max_size;
    long iters;   /* 0 = automatic */
    long warmup;  /* -1 = automatic */
    int mode;
    int csv;
    long nsizes;  /* 0: sizes double; N: N log-spaced sizes from min to max */
};

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
        "Usage: %s [options]\n"
        "Ping-pong sweep between rank 0 and rank 1 (other ranks idle).\n"
        "\n"
        "  -m, --min SIZE      smallest message size (default 1)\n"
        "  -M, --max SIZE      largest message size (default 4MiB)\n"
        "  -n, --sizes N       N log-spaced sizes from --min to --max (default: sizes double)\n"
        "  -i, --iters N       timed round trips per size (default: automatic,\n"
        "                      %d..%d depending on size, at most ~%.2f s per size)\n"
        "  -w, --warmup N      untimed round trips per size (default: iters/10, >= 2)\n"
        "  -o, --mode MODE     blocking | nonblocking | persistent (default blocking)\n"
        "  -c, --csv           print CSV instead of a table\n"
        "  -h, --help          show this help\n"
        "\n"
        "SIZE is a byte count with an optional unit: K, M, G, KiB, MiB, GiB (powers\n"
        "of 1024) or kB, KB, MB, GB (powers of 1000).  Sizes double from --min to\n"
        "--max unless --sizes is given.  Time is half the median round trip;\n"
        "bandwidth is in MB/s (1e6 B/s).\n",
        prog, AUTO_MIN_ITERS, AUTO_MAX_ITERS, AUTO_SIZE_SECONDS);
}

/* Returns 0 to run, 1 to exit successfully (help), -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o, int verbose)
{
    static const struct option longopts[] = {
        { "min", required_argument, NULL, 'm' },
        { "sizes", required_argument, NULL, 'n' },
        { "max", required_argument, NULL, 'M' },
        { "iters", required_argument, NULL, 'i' },
        { "warmup", required_argument, NULL, 'w' },
        { "mode", required_argument, NULL, 'o' },
        { "csv", no_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    o->min_size = 1;
    o->max_size = (size_t)4 << 20;
    o->iters = 0;
    o->nsizes = 0;
    o->warmup = -1;
    o->mode = MODE_BLOCKING;
    o->csv = 0;

    opterr = verbose;
    int c;
    while ((c = getopt_long(argc, argv, "m:M:n:i:w:o:ch", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'm': bad = parse_size(optarg, &o->min_size) != 0 || o->min_size == 0; break;
        case 'M': bad = parse_size(optarg, &o->max_size) != 0 || o->max_size == 0; break;
        case 'i': bad = parse_long(optarg, 1, &o->iters) != 0; break;
        case 'n': bad = parse_long(optarg, 2, &o->nsizes) != 0; break;
        case 'w': bad = parse_long(optarg, 0, &o->warmup) != 0; break;
        case 'o':
            if (strcmp(optarg, "blocking") == 0) o->mode = MODE_BLOCKING;
            else if (strcmp(optarg, "nonblocking") == 0) o->mode = MODE_NONBLOCKING;
            else if (strcmp(optarg, "persistent") == 0) o->mode = MODE_PERSISTENT;
            else bad = 1;
            break;
        case 'c': o->csv = 1; break;
        case 'h':
            if (verbose) usage(stdout, argv[0]);
            return 1;
        default:
            if (verbose) usage(stderr, argv[0]);
            return -1;
        }
        if (bad) {
            if (verbose)
                fprintf(stderr, "%s: invalid value '%s' for --%s\n", argv[0], optarg,
                        long_name(longopts, c));
            return -1;
        }
    }
    if (optind < argc) {
        if (verbose) fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
        return -1;
    }
    if (o->min_size > o->max_size || o->max_size > (size_t)INT32_MAX) {
        if (verbose) fprintf(stderr, "%s: need 1 <= --min <= --max <= 2^31-1\n", argv[0]);
        return -1;
    }
    return 0;
}

/* The size after s, the step-th of the sweep: double, or the next of
 * nsizes log-spaced sizes (rounded; equal ones are skipped).  Past the
 * last, max_size + 1. */
static size_t next_size(const struct options *o, size_t s, size_t step)
{
    if (o->nsizes == 0)
        return s * 2;
    for (; step < (size_t)o->nsizes; step++) {
        double f = (double)step / (double)(o->nsizes - 1);
        size_t n = (size_t)llround((double)o->min_size * pow((double)o->max_size / (double)o->min_size, f));
        if (n > s)
            return n < o->max_size ? n : o->max_size;
    }
    return o->max_size + 1;
}

static long auto_iters(size_t size)
{
    size_t n = AUTO_BYTES / size;
    if (n < AUTO_MIN_ITERS) n = AUTO_MIN_ITERS;
    if (n > AUTO_MAX_ITERS) n = AUTO_MAX_ITERS;
    return (long)n;
}

static unsigned char pattern(int rank, size_t i)
{
    return (unsigned char)((i * (rank ? 13u : 7u) + (rank ? 5u : 1u)) & 0xffu);
}

static void fill(unsigned char *buf, size_t n, int rank)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = pattern(rank, i);
}

static int check(const unsigned char *buf, size_t n, int from_rank)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pattern(from_rank, i))
            return -1;
    return 0;
}

/*
 * Rank 0 side of one size: warmup + timed round trips.  Stores the timed
 * round-trip times in rtt[] and returns how many were done.
 */
static long run_rank0(const struct options *o, unsigned char *sbuf, unsigned char *rbuf,
                      int size, long warmup, long iters, int stop_early, double *rtt)
{
    MPI_Request req[2];
    MPI_Request ps[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL }; /* PING, LAST */
    MPI_Request pr = MPI_REQUEST_NULL;

    if (o->mode == MODE_PERSISTENT) {
        MPI_Send_init(sbuf, size, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD, &ps[0]);
        MPI_Send_init(sbuf, size, MPI_BYTE, 1, TAG_LAST, MPI_COMM_WORLD, &ps[1]);
        MPI_Recv_init(rbuf, size, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, &pr);
    }

    long done = 0;
    double size_start = 0.0;
    for (long k = 0; k < warmup + iters; k++) {
        long timed = k - warmup;
        int last = (k == warmup + iters - 1);
        if (!last && stop_early && timed >= AUTO_MIN_ITERS - 1
            && MPI_Wtime() - size_start > AUTO_SIZE_SECONDS)
            last = 1;
        int tag = last ? TAG_LAST : TAG_PING;

        double t0 = MPI_Wtime();
        if (timed == 0)
            size_start = t0;
        switch (o->mode) {
        case MODE_BLOCKING:
            MPI_Send(sbuf, size, MPI_BYTE, 1, tag, MPI_COMM_WORLD);
            MPI_Recv(rbuf, size, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            break;
        case MODE_NONBLOCKING:
            MPI_Irecv(rbuf, size, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, &req[0]);
            MPI_Isend(sbuf, size, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req[1]);
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
            break;
        default:
            MPI_Start(&pr);
            MPI_Start(&ps[last]);
            MPI_Wait(&ps[last], MPI_STATUS_IGNORE);
            MPI_Wait(&pr, MPI_STATUS_IGNORE);
            break;
        }
        double t1 = MPI_Wtime();
        if (timed >= 0)
            rtt[done++] = t1 - t0;
        if (last)
            break;
    }

    if (o->mode == MODE_PERSISTENT) {
        MPI_Request_free(&ps[0]);
        MPI_Request_free(&ps[1]);
        MPI_Request_free(&pr);
    }
    return done;
}

/* Rank 1 side of one size: echo until a TAG_LAST ping arrives. */
static void run_rank1(const struct options *o, unsigned char *sbuf, unsigned char *rbuf, int size)
{
    MPI_Request req, ps = MPI_REQUEST_NULL, pr = MPI_REQUEST_NULL;
    MPI_Status st;

    if (o->mode == MODE_PERSISTENT) {
        MPI_Send_init(sbuf, size, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD, &ps);
        MPI_Recv_init(rbuf, size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &pr);
    }
    for (;;) {
        switch (o->mode) {
        case MODE_BLOCKING:
            MPI_Recv(rbuf, size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Send(sbuf, size, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD);
            break;
        case MODE_NONBLOCKING:
            MPI_Irecv(rbuf, size, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
            MPI_Waitall(1, &req, &st);
            MPI_Isend(sbuf, size, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD, &req);
            MPI_Waitall(1, &req, MPI_STATUSES_IGNORE);
            break;
        default:
            MPI_Start(&pr);
            MPI_Wait(&pr, &st);
            MPI_Start(&ps);
            MPI_Wait(&ps, MPI_STATUS_IGNORE);
            break;
        }
        if (st.MPI_TAG == TAG_LAST)
            break;
    }
    if (o->mode == MODE_PERSISTENT) {
        MPI_Request_free(&ps);
        MPI_Request_free(&pr);
    }
}

/* Wait in a barrier without spinning a CPU core. */
static void idle_barrier(int active)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (active) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    const struct timespec nap = { 0, 1000000L }; /* 1 ms */
    int flag = 0;
    for (;;) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            break;
        nanosleep(&nap, NULL);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    struct options o;
    int rc = parse_args(argc, argv, &o, rank == 0);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "%s: needs at least 2 ranks\n", argv[0]);
        MPI_Finalize();
        return EXIT_FAILURE;
    }

    int errors = 0;
    if (rank <= 1) {
        unsigned char *sbuf = malloc(o.max_size);
        unsigned char *rbuf = malloc(o.max_size);
        long max_iters = o.iters > 0 ? o.iters : AUTO_MAX_ITERS;
        double *rtt = rank == 0 ? malloc((size_t)max_iters * sizeof *rtt) : NULL;
        if (!sbuf || !rbuf || (rank == 0 && !rtt)) {
            fprintf(stderr, "%s: rank %d: out of memory\n", argv[0], rank);
            MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        }
        fill(sbuf, o.max_size, rank);
        memset(rbuf, 0, o.max_size);

        if (rank == 0) {
            if (o.csv) {
                printf("bytes,iters,half_rtt_us,bandwidth_MBps\n");
            } else {
                printf("# pingpong: mode=%s ranks=%d (0<->1)\n", mode_names[o.mode], nprocs);
                printf("# half_rtt_us = median round trip / 2; MB/s = bytes / half_rtt (1 MB = 1e6 B)\n");
                printf("%12s %7s %14s %14s\n", "bytes", "iters", "half_rtt_us", "MB/s");
            }
            fflush(stdout);
        }

        for (size_t s = o.min_size, step = 0; s <= o.max_size; s = next_size(&o, s, ++step)) {
            int size = (int)s;
            if (rank == 0) {
                long iters = o.iters > 0 ? o.iters : auto_iters(s);
                long warmup = o.warmup >= 0 ? o.warmup : (iters / 10 > 2 ? iters / 10 : 2);
                memset(rbuf, 0, s);
                long n = run_rank0(&o, sbuf, rbuf, size, warmup, iters, o.iters == 0, rtt);
                if (check(rbuf, s, 1) != 0) {
                    fprintf(stderr, "%s: rank 0: wrong data received at %zu bytes\n", argv[0], s);
                    errors++;
                }
                double half_us = median(rtt, n) * 0.5e6;
                double mbps = half_us > 0.0 ? (double)s / half_us : 0.0;
                if (o.csv)
                    printf("%zu,%ld,%.3f,%.2f\n", s, n, half_us, mbps);
                else
                    printf("%12zu %7ld %14.3f %14.2f\n", s, n, half_us, mbps);
                fflush(stdout);
            } else {
                memset(rbuf, 0, s);
                run_rank1(&o, sbuf, rbuf, size);
                if (check(rbuf, s, 0) != 0) {
                    fprintf(stderr, "%s: rank 1: wrong data received at %zu bytes\n", argv[0], s);
                    errors++;
                }
            }
            if (s > SIZE_MAX / 2)
                break;
        }
        free(sbuf);
        free(rbuf);
        free(rtt);
    }

    idle_barrier(rank <= 1);
    MPI_Finalize();
    return errors ? EXIT_FAILURE : EXIT_SUCCESS;
}
