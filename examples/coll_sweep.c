/*
 * coll_sweep.c - time one MPI collective over a range of message sizes.
 *
 * Demonstrates how a collective's cost grows with message size on all ranks
 * of MPI_COMM_WORLD.  For each size the chosen operation is run --iters
 * times; every iteration is timed on every rank, the per-iteration maximum
 * over ranks is taken (the collective is only done when the slowest rank is
 * done), and the median of those maxima is reported together with the
 * algorithm and bus bandwidth in the nccl-tests convention (GB = 1e9 B):
 *
 *   op                     "size" (bytes)           busbw / algbw
 *   allreduce              the vector               2(p-1)/p
 *   reduce, bcast          the vector               1
 *   allgather, gather      p x block (all gathered) (p-1)/p
 *   reduce_scatter_block   p x block (the input)    (p-1)/p
 *   alltoall               p x block (send buffer)  (p-1)/p
 *   scatter                p x block (root's data)  (p-1)/p
 *   barrier                0                        -
 *
 * Reductions use MPI_FLOAT with MPI_SUM; the other operations move MPI_BYTE.
 * Every size is rounded up to a multiple of 4*p so that each block is a whole
 * number of floats.  Results are checked once per size.
 */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>

#include "ex_common.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_id {
    OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCE_SCATTER_BLOCK, OP_BCAST, OP_REDUCE,
    OP_ALLTOALL, OP_GATHER, OP_SCATTER, OP_BARRIER, OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
    "allreduce", "allgather", "reduce_scatter_block", "bcast", "reduce",
    "alltoall", "gather", "scatter", "barrier"
};

static int op_is_reduction(int op)
{
    return op == OP_ALLREDUCE || op == OP_REDUCE || op == OP_REDUCE_SCATTER_BLOCK;
}

/* nccl-tests bus bandwidth factor. */
static double busbw_factor(int op, int p)
{
    switch (op) {
    case OP_ALLREDUCE: return 2.0 * (p - 1) / p;
    case OP_BCAST:
    case OP_REDUCE: return 1.0;
    case OP_BARRIER: return 0.0;
    default: return (double)(p - 1) / p;
    }
}

/* Automatic iteration count: about AUTO_BYTES per size, within limits. */
#define AUTO_BYTES ((size_t)64 << 20)
#define AUTO_MIN_ITERS 10
#define AUTO_MAX_ITERS 500

struct options {
    int op;
    size_t min_size;
    size_t max_size;
    long iters;  /* 0 = automatic */
    long warmup;
    int sync;
    int csv;
};

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
        "Usage: %s [options]\n"
        "Sweep one MPI collective over message sizes on all ranks.\n"
        "\n"
        "  -o, --op OP         allreduce | allgather | reduce_scatter_block | bcast |\n"
        "                      reduce | alltoall | gather | scatter | barrier\n"
        "                      (default allreduce)\n"
        "  -m, --min SIZE      smallest size (default 4; rounded up to a multiple of 4*p)\n"
        "  -M, --max SIZE      largest size (default 4MiB)\n"
        "  -i, --iters N       timed iterations per size (default: automatic,\n"
        "                      %d..%d depending on size)\n"
        "  -w, --warmup N      untimed iterations per size (default 3)\n"
        "  -n, --no-sync       do not call MPI_Barrier before each timed iteration\n"
        "  -c, --csv           print CSV instead of a table\n"
        "  -h, --help          show this help\n"
        "\n"
        "SIZE is a byte count with an optional unit: K, M, G, KiB, MiB, GiB (powers\n"
        "of 1024) or kB, KB, MB, GB (powers of 1000).  Sizes double from --min to\n"
        "--max.  \"size\" follows nccl-tests: the reduced or broadcast vector, or p x\n"
        "block for allgather, alltoall, gather, scatter and reduce_scatter_block.\n"
        "time_us is the median over iterations of the slowest rank's time (CSV:\n"
        "rank_time_us, the median over iterations and ranks of each rank's own);\n"
        "algbw = size / time and busbw = algbw x factor, in GB/s (1e9 B/s).\n",
        prog, AUTO_MIN_ITERS, AUTO_MAX_ITERS);
}

/* Returns 0 to run, 1 to exit successfully (help), -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o, int verbose)
{
    static const struct option longopts[] = {
        { "op", required_argument, NULL, 'o' },
        { "min", required_argument, NULL, 'm' },
        { "max", required_argument, NULL, 'M' },
        { "iters", required_argument, NULL, 'i' },
        { "warmup", required_argument, NULL, 'w' },
        { "no-sync", no_argument, NULL, 'n' },
        { "csv", no_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    o->op = OP_ALLREDUCE;
    o->min_size = 4;
    o->max_size = (size_t)4 << 20;
    o->iters = 0;
    o->warmup = 3;
    o->sync = 1;
    o->csv = 0;

    opterr = verbose;
    int c;
    while ((c = getopt_long(argc, argv, "o:m:M:i:w:nch", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'o': {
            int k;
            for (k = 0; k < OP_COUNT; k++)
                if (strcmp(optarg, op_names[k]) == 0)
                    break;
            bad = k == OP_COUNT;
            o->op = k;
            break;
        }
        case 'm': bad = parse_size(optarg, &o->min_size) != 0 || o->min_size == 0; break;
        case 'M': bad = parse_size(optarg, &o->max_size) != 0 || o->max_size == 0; break;
        case 'i': bad = parse_long(optarg, 1, &o->iters) != 0; break;
        case 'w': bad = parse_long(optarg, 0, &o->warmup) != 0; break;
        case 'n': o->sync = 0; break;
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
    if (o->min_size > o->max_size || o->max_size > (size_t)INT32_MAX / 2) {
        if (verbose) fprintf(stderr, "%s: need 1 <= --min <= --max <= 1GiB\n", argv[0]);
        return -1;
    }
    return 0;
}

static long auto_iters(size_t size)
{
    size_t n = size ? AUTO_BYTES / size : AUTO_MAX_ITERS;
    if (n < AUTO_MIN_ITERS) n = AUTO_MIN_ITERS;
    if (n > AUTO_MAX_ITERS) n = AUTO_MAX_ITERS;
    return (long)n;
}

/* Byte sent by rank src to rank dst at offset i of its block. */
static unsigned char pat(int src, int dst, size_t i)
{
    return (unsigned char)((unsigned)src * 31u + (unsigned)dst * 7u + (unsigned)(i * 3u) + 1u);
}

/* Float contributed by rank r at global index i: small integers, exact sums. */
static float fval(int r, size_t i)
{
    return (float)((r + 1) * (int)(i % 7 + 1));
}

struct sweep {
    int op, rank, p;
    size_t bytes;   /* nccl-tests size */
    size_t block;   /* bytes per rank's block = bytes / p */
    void *sbuf, *rbuf;
};

/* Fill the input buffers (and clear the outputs) for one size. */
static void prepare(const struct sweep *w)
{
    unsigned char *s = w->sbuf, *r = w->rbuf;
    float *sf = w->sbuf;
    size_t n = w->bytes;
    switch (w->op) {
    case OP_ALLREDUCE:
    case OP_REDUCE:
    case OP_REDUCE_SCATTER_BLOCK:
        for (size_t i = 0; i < n / 4; i++)
            sf[i] = fval(w->rank, i);
        memset(r, 0, n);
        break;
    case OP_BCAST:
        for (size_t i = 0; i < n; i++)
            s[i] = w->rank == 0 ? pat(0, 0, i) : 0;
        break;
    case OP_ALLGATHER:
    case OP_GATHER:
        for (size_t i = 0; i < w->block; i++)
            s[i] = pat(w->rank, 0, i);
        memset(r, 0, n);
        break;
    case OP_ALLTOALL:
    case OP_SCATTER:
        for (int d = 0; d < w->p; d++)
            for (size_t i = 0; i < w->block; i++)
                s[(size_t)d * w->block + i] = pat(w->rank, d, i);
        memset(r, 0, n);
        break;
    default:
        break;
    }
}

static void run_op(const struct sweep *w)
{
    int n = (int)w->bytes, b = (int)w->block;
    switch (w->op) {
    case OP_ALLREDUCE:
        MPI_Allreduce(w->sbuf, w->rbuf, n / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_REDUCE:
        MPI_Reduce(w->sbuf, w->rbuf, n / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        break;
    case OP_REDUCE_SCATTER_BLOCK:
        MPI_Reduce_scatter_block(w->sbuf, w->rbuf, b / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case OP_BCAST:
        MPI_Bcast(w->sbuf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case OP_ALLGATHER:
        MPI_Allgather(w->sbuf, b, MPI_BYTE, w->rbuf, b, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case OP_GATHER:
        MPI_Gather(w->sbuf, b, MPI_BYTE, w->rbuf, b, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case OP_ALLTOALL:
        MPI_Alltoall(w->sbuf, b, MPI_BYTE, w->rbuf, b, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case OP_SCATTER:
        MPI_Scatter(w->sbuf, b, MPI_BYTE, w->rbuf, b, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    default:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

/* Check this rank's output after the last iteration.  Returns 0 if right. */
static int verify(const struct sweep *w)
{
    const unsigned char *s = w->sbuf, *r = w->rbuf;
    const float *rf = w->rbuf;
    float ranks_sum = (float)(w->p * (w->p + 1) / 2);
    switch (w->op) {
    case OP_ALLREDUCE:
    case OP_REDUCE:
        if (w->op == OP_REDUCE && w->rank != 0)
            return 0;
        for (size_t i = 0; i < w->bytes / 4; i++)
            if (rf[i] != ranks_sum * (float)(i % 7 + 1))
                return -1;
        return 0;
    case OP_REDUCE_SCATTER_BLOCK:
        for (size_t j = 0; j < w->block / 4; j++) {
            size_t i = (size_t)w->rank * (w->block / 4) + j;
            if (rf[j] != ranks_sum * (float)(i % 7 + 1))
                return -1;
        }
        return 0;
    case OP_BCAST:
        for (size_t i = 0; i < w->bytes; i++)
            if (s[i] != pat(0, 0, i))
                return -1;
        return 0;
    case OP_ALLGATHER:
    case OP_GATHER:
    case OP_ALLTOALL:
        if (w->op == OP_GATHER && w->rank != 0)
            return 0;
        for (int k = 0; k < w->p; k++)
            for (size_t i = 0; i < w->block; i++)
                if (r[(size_t)k * w->block + i] != pat(k, w->op == OP_ALLTOALL ? w->rank : 0, i))
                    return -1;
        return 0;
    case OP_SCATTER:
        for (size_t i = 0; i < w->block; i++)
            if (r[i] != pat(0, w->rank, i))
                return -1;
        return 0;
    default:
        return 0;
    }
}

static size_t round_up(size_t v, size_t unit)
{
    return (v + unit - 1) / unit * unit;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    struct options o;
    int rc = parse_args(argc, argv, &o, rank == 0);
    if (rc != 0) {
        MPI_Finalize();
        return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }

    const size_t unit = 4 * (size_t)p;
    const size_t cap = round_up(o.max_size, unit);
    const long max_iters = o.iters > 0 ? o.iters : AUTO_MAX_ITERS;
    struct sweep w = { .op = o.op, .rank = rank, .p = p };
    w.sbuf = malloc(cap);
    w.rbuf = malloc(cap);
    double *t = malloc((size_t)max_iters * sizeof *t);
    double *tmax = malloc((size_t)max_iters * sizeof *tmax);
    /* every rank's time of every iteration, on rank 0: the per-rank median
     * is what a profiler on each rank sees as the call's duration */
    double *tall = rank == 0 ? malloc((size_t)max_iters * (size_t)p * sizeof *tall) : NULL;
    if (!w.sbuf || !w.rbuf || !t || !tmax || (rank == 0 && !tall)) {
        fprintf(stderr, "%s: rank %d: out of memory\n", argv[0], rank);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    const char *dtype = o.op == OP_BARRIER ? "none" : op_is_reduction(o.op) ? "float" : "byte";
    const size_t tsize = op_is_reduction(o.op) ? 4 : 1;

    if (rank == 0) {
        if (o.csv) {
            printf("op,ranks,bytes,count,iters,time_us,algbw_GBps,busbw_GBps,rank_time_us\n");
        } else {
            printf("# coll_sweep: op=%s ranks=%d dtype=%s sync=%s busbw_factor=%.4f\n",
                   op_names[o.op], p, dtype, o.sync ? "barrier" : "none",
                   busbw_factor(o.op, p));
            printf("# time_us = median over iterations of max over ranks; GB/s = 1e9 B/s\n");
            printf("%12s %11s %6s %12s %11s %11s\n",
                   "bytes", "count", "iters", "time_us", "algbw_GB/s", "busbw_GB/s");
        }
        fflush(stdout);
    }

    int errors = 0;
    size_t prev = 0;
    for (size_t s = o.min_size; s <= o.max_size; s *= 2) {
        size_t bytes = o.op == OP_BARRIER ? 0 : round_up(s, unit);
        if (bytes == prev && s != o.min_size)
            continue;
        prev = bytes;
        w.bytes = bytes;
        w.block = bytes / (size_t)p;
        long iters = o.iters > 0 ? o.iters : auto_iters(bytes);

        prepare(&w);
        for (long k = 0; k < o.warmup; k++)
            run_op(&w);
        for (long k = 0; k < iters; k++) {
            if (o.sync)
                MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            run_op(&w);
            t[k] = MPI_Wtime() - t0;
        }
        if (verify(&w) != 0) {
            fprintf(stderr, "%s: rank %d: wrong %s result at %zu bytes\n",
                    argv[0], rank, op_names[o.op], bytes);
            errors++;
        }
        MPI_Reduce(t, tmax, (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Gather(t, (int)iters, MPI_DOUBLE, tall, (int)iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);

        if (rank == 0) {
            double sec = median(tmax, iters);
            double algbw = sec > 0.0 ? (double)bytes / sec / 1e9 : 0.0;
            double busbw = algbw * busbw_factor(o.op, p);
            size_t count = bytes / tsize;
            if (o.csv)
                printf("%s,%d,%zu,%zu,%ld,%.3f,%.4f,%.4f,%.3f\n", op_names[o.op], p, bytes, count,
                       iters, sec * 1e6, algbw, busbw, median(tall, iters * p) * 1e6);
            else
                printf("%12zu %11zu %6ld %12.3f %11.4f %11.4f\n", bytes, count, iters,
                       sec * 1e6, algbw, busbw);
            fflush(stdout);
        }
        if (o.op == OP_BARRIER || s > SIZE_MAX / 2)
            break;
    }

    int total_errors = 0;
    MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total_errors)
        fprintf(stderr, "%s: %d rank/size results were wrong\n", argv[0], total_errors);

    free(w.sbuf);
    free(w.rbuf);
    free(t);
    free(tmax);
    free(tall);
    MPI_Finalize();
    return (rank == 0 && total_errors) ? EXIT_FAILURE : EXIT_SUCCESS;
}
