/*
 * dp_train.c - communication pattern of data-parallel (DDP-style) training.
 *
 * Demonstrates the gradient exchange of synchronous data-parallel SGD.  Every
 * rank holds a full copy of a model given as a list of parameter tensors
 * (a preset or --layers).  Each step runs a simulated forward pass (busy
 * compute), a backward pass that produces the gradients tensor by tensor in
 * reverse layer order, averages the gradients over all ranks with
 * MPI_Allreduce (SUM, then scale by 1/p) and applies an SGD update.
 *
 * The exchange can be done
 *   - one blocking MPI_Allreduce per tensor after the backward pass
 *     (--bucket 0, the default),
 *   - one MPI_Allreduce per bucket of consecutive tensors of up to --bucket
 *     bytes, as PyTorch DDP does (a tensor larger than the bucket goes alone),
 *   - with --nonblocking, one MPI_Iallreduce per tensor or bucket issued as
 *     soon as the backward pass has produced it, overlapping with the rest of
 *     the backward pass, and a final MPI_Waitall.
 *
 * Gradients live in one flat array in layer order, so a bucket is a
 * contiguous slice that is reduced in place.  Gradient values are small
 * multiples of 2^-10, so their sums are exact in float in any order: the
 * final parameter checksum is the same for every --bucket/--nonblocking
 * choice (it depends only on the model, the number of ranks and --steps).
 *
 * With --region each step is enclosed in MPI_Pcontrol(1, "step") ...
 * MPI_Pcontrol(-1, "step") and the gradient exchange in an "allreduce"
 * region.  Without a profiler that listens to MPI_Pcontrol this does nothing.
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
#include <time.h>

#define LEARNING_RATE 0.0078125f /* 2^-7 */

struct options {
    const char *model;   /* preset name, or "custom" */
    const char *layers;  /* --layers list, or NULL */
    long steps;
    double compute_us;
    size_t bucket_bytes; /* 0 = per tensor */
    int nonblocking;
    double poll_us;      /* 0 = no progress polling during compute */
    int region;
    int verbose;
};

struct model {
    size_t ntensors;
    size_t *count;   /* elements per tensor, layer order */
    size_t *offset;  /* offset of each tensor in the flat arrays */
    size_t total;    /* elements */
};

struct bucket {
    size_t first, last; /* tensor range [first, last], layer order */
    size_t offset, count;
};

/* ---------------------------------------------------------------- presets */

static int model_add(struct model *m, size_t n)
{
    size_t *c = realloc(m->count, (m->ntensors + 1) * sizeof *c);
    if (!c)
        return -1;
    m->count = c;
    m->count[m->ntensors++] = n;
    m->total += n;
    return 0;
}

/* A small CNN for 32x32 images: four 3x3 conv+BN blocks and two FC layers.
 * 16 tensors, 1,440,298 parameters (5.8 MB), from 40 B to 4 MiB. */
static int preset_small(struct model *m)
{
    static const size_t ch[] = { 3, 32, 64, 128, 256 };
    int rc = 0;
    for (int i = 1; i <= 4; i++) {
        rc |= model_add(m, 9 * ch[i - 1] * ch[i]); /* conv weight */
        rc |= model_add(m, ch[i]);                 /* bn weight */
        rc |= model_add(m, ch[i]);                 /* bn bias */
    }
    rc |= model_add(m, 256 * 4 * 4 * 256);         /* fc1 weight */
    rc |= model_add(m, 256);                       /* fc1 bias */
    rc |= model_add(m, 256 * 10);                  /* fc2 weight */
    rc |= model_add(m, 10);                        /* fc2 bias */
    return rc;
}

/* Many small tensors, as in a narrow MLP with normalization after every
 * layer: 64 blocks of a 16x16 weight with its bias, and a 64-wide layer
 * with its scale and shift.  384 tensors from 16 B to 1 kB, 92 kB in all:
 * one allreduce per tensor pays startup almost only. */
static int preset_tiny(struct model *m)
{
    int rc = 0;
    for (int i = 0; i < 64; i++) {
        rc |= model_add(m, 16 * 16); /* weight */
        rc |= model_add(m, 16);      /* bias */
        rc |= model_add(m, 16);      /* norm scale */
        rc |= model_add(m, 64);      /* projection */
        rc |= model_add(m, 4);       /* its bias */
        rc |= model_add(m, 4);       /* norm shift */
    }
    return rc;
}

/* ResNet-50 (ImageNet): the 161 parameter tensors in torchvision order,
 * 25,557,032 parameters (102 MB), from 256 B to 9.4 MB. */
static int preset_resnet50(struct model *m)
{
    static const int blocks[4] = { 3, 4, 6, 3 };
    int rc = 0;
    size_t in = 64;
    rc |= model_add(m, 7 * 7 * 3 * 64);  /* conv1 */
    rc |= model_add(m, 64);              /* bn1 */
    rc |= model_add(m, 64);
    for (int stage = 0; stage < 4; stage++) {
        size_t w = (size_t)64 << stage, out = 4 * w;
        for (int b = 0; b < blocks[stage]; b++) {
            rc |= model_add(m, in * w);      /* conv1 1x1 */
            rc |= model_add(m, w);
            rc |= model_add(m, w);
            rc |= model_add(m, 9 * w * w);   /* conv2 3x3 */
            rc |= model_add(m, w);
            rc |= model_add(m, w);
            rc |= model_add(m, w * out);     /* conv3 1x1 */
            rc |= model_add(m, out);
            rc |= model_add(m, out);
            if (b == 0) {                    /* downsample */
                rc |= model_add(m, in * out);
                rc |= model_add(m, out);
                rc |= model_add(m, out);
            }
            in = out;
        }
    }
    rc |= model_add(m, 2048 * 1000);         /* fc */
    rc |= model_add(m, 1000);
    return rc;
}

/* BERT-base (uncased): the 199 parameter tensors of the encoder with
 * embeddings and pooler, 109,482,240 parameters (438 MB). */
static int preset_bert(struct model *m)
{
    const size_t h = 768, ff = 3072;
    int rc = 0;
    rc |= model_add(m, 30522 * h);   /* word embeddings */
    rc |= model_add(m, 512 * h);     /* position embeddings */
    rc |= model_add(m, 2 * h);       /* token type embeddings */
    rc |= model_add(m, h);           /* embedding LayerNorm */
    rc |= model_add(m, h);
    for (int l = 0; l < 12; l++) {
        for (int k = 0; k < 3; k++) {  /* query, key, value */
            rc |= model_add(m, h * h);
            rc |= model_add(m, h);
        }
        rc |= model_add(m, h * h);     /* attention output */
        rc |= model_add(m, h);
        rc |= model_add(m, h);         /* LayerNorm */
        rc |= model_add(m, h);
        rc |= model_add(m, h * ff);    /* intermediate */
        rc |= model_add(m, ff);
        rc |= model_add(m, ff * h);    /* output */
        rc |= model_add(m, h);
        rc |= model_add(m, h);         /* LayerNorm */
        rc |= model_add(m, h);
    }
    rc |= model_add(m, h * h);         /* pooler */
    rc |= model_add(m, h);
    return rc;
}

/* Parse "1000,64,64,...".  Returns 0 on success. */
static int parse_layers(struct model *m, const char *list)
{
    const char *p = list;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno != 0 || v == 0 || v > (unsigned long long)INT32_MAX)
            return -1;
        if (model_add(m, (size_t)v) != 0)
            return -1;
        if (*end == '\0')
            return 0;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

static int build_model(struct model *m, const struct options *o)
{
    int rc;
    memset(m, 0, sizeof *m);
    if (o->layers)
        rc = parse_layers(m, o->layers);
    else if (strcmp(o->model, "small") == 0)
        rc = preset_small(m);
    else if (strcmp(o->model, "tiny") == 0)
        rc = preset_tiny(m);
    else if (strcmp(o->model, "resnet50") == 0)
        rc = preset_resnet50(m);
    else if (strcmp(o->model, "bert") == 0)
        rc = preset_bert(m);
    else
        rc = -1;
    if (rc != 0 || m->ntensors == 0 || m->total > (size_t)INT32_MAX)
        return -1;
    m->offset = malloc(m->ntensors * sizeof *m->offset);
    if (!m->offset)
        return -1;
    size_t off = 0;
    for (size_t t = 0; t < m->ntensors; t++) {
        m->offset[t] = off;
        off += m->count[t];
    }
    return 0;
}

/*
 * Group tensors into buckets in backward (reverse layer) order, DDP style:
 * consecutive tensors are added while the bucket stays within cap bytes; a
 * tensor that does not fit starts a new bucket, and one larger than cap goes
 * alone.  cap == 0 gives one bucket per tensor.  Buckets are returned in the
 * order they become ready.
 */
static size_t make_buckets(const struct model *m, size_t cap, struct bucket *b)
{
    size_t nb = 0, cur_bytes = 0;
    int open = 0;
    for (size_t i = m->ntensors; i-- > 0;) {
        size_t bytes = m->count[i] * sizeof(float);
        if (open && (cap == 0 || cur_bytes + bytes > cap)) {
            nb++;
            open = 0;
        }
        if (!open) {
            b[nb].last = i;
            cur_bytes = 0;
            open = 1;
        }
        b[nb].first = i;
        cur_bytes += bytes;
        if (cur_bytes >= cap) {
            nb++;
            open = 0;
        }
    }
    if (open)
        nb++;
    for (size_t k = 0; k < nb; k++) {
        b[k].offset = m->offset[b[k].first];
        b[k].count = m->offset[b[k].last] + m->count[b[k].last] - b[k].offset;
    }
    return nb;
}

/* ------------------------------------------------------------- options */

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
        "Usage: %s [options]\n"
        "Data-parallel training loop: compute, backward pass, gradient allreduce.\n"
        "\n"
        "  -m, --model NAME      small | tiny | resnet50 | bert (default small)\n"
        "                          small:     16 tensors,  1.44 M params (5.8 MB)\n"
        "                          tiny:     384 tensors,  23.0 k params (92 kB)\n"
        "                          resnet50: 161 tensors,  25.6 M params (102 MB)\n"
        "                          bert:     199 tensors,   109 M params (438 MB)\n"
        "  -l, --layers LIST     comma-separated tensor sizes in floats, in layer\n"
        "                        order (overrides --model), e.g. 1000,64,64,250000\n"
        "  -s, --steps N         training steps (default 10)\n"
        "  -c, --compute-us X    busy compute per step in microseconds: 1/3 forward,\n"
        "                        2/3 backward split over tensors by size (default 5000)\n"
        "  -b, --bucket SIZE     0: one allreduce per tensor (default); otherwise pack\n"
        "                        consecutive tensors into buckets of up to SIZE bytes\n"
        "                        (e.g. 25MiB, 1MB) and allreduce each bucket\n"
        "  -n, --nonblocking     MPI_Iallreduce each tensor/bucket as soon as the\n"
        "                        backward pass produces it, then MPI_Waitall\n"
        "  -p, --poll-us X       with --nonblocking, call MPI_Testall every X us of\n"
        "                        compute to progress the reductions (default 100;\n"
        "                        0: progress only in MPI_Waitall)\n"
        "  -r, --region          mark MPI_Pcontrol regions \"step\" and \"allreduce\"\n"
        "                        (with --nonblocking \"allreduce\" spans the backward\n"
        "                        pass it overlaps and the final MPI_Waitall)\n"
        "  -v, --verbose         print the buckets and every step's time\n"
        "  -h, --help            show this help\n"
        "\n"
        "SIZE is a byte count with an optional unit: K, M, G, KiB, MiB, GiB (powers\n"
        "of 1024) or kB, KB, MB, GB (powers of 1000).  Gradients are summed with\n"
        "MPI_SUM on MPI_FLOAT and scaled by 1/p.  The checksum of the final\n"
        "parameters does not depend on --bucket or --nonblocking.\n",
        prog);
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !(v >= 0.0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

/* Returns 0 to run, 1 to exit successfully (help), -1 on a usage error. */
static int parse_args(int argc, char **argv, struct options *o, int verbose)
{
    static const struct option longopts[] = {
        { "model", required_argument, NULL, 'm' },
        { "layers", required_argument, NULL, 'l' },
        { "steps", required_argument, NULL, 's' },
        { "compute-us", required_argument, NULL, 'c' },
        { "bucket", required_argument, NULL, 'b' },
        { "nonblocking", no_argument, NULL, 'n' },
        { "poll-us", required_argument, NULL, 'p' },
        { "region", no_argument, NULL, 'r' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    o->model = "small";
    o->layers = NULL;
    o->steps = 10;
    o->compute_us = 5000.0;
    o->bucket_bytes = 0;
    o->nonblocking = 0;
    o->poll_us = 100.0;
    o->region = 0;
    o->verbose = 0;

    opterr = verbose;
    int c;
    while ((c = getopt_long(argc, argv, "m:l:s:c:b:np:rvh", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'm':
            o->model = optarg;
            bad = strcmp(optarg, "small") != 0 && strcmp(optarg, "tiny") != 0 && strcmp(optarg, "resnet50") != 0
                  && strcmp(optarg, "bert") != 0;
            break;
        case 'l': o->layers = optarg; break;
        case 's': bad = parse_long(optarg, 1, &o->steps) != 0; break;
        case 'c': bad = parse_double(optarg, &o->compute_us) != 0; break;
        case 'b': bad = parse_size(optarg, &o->bucket_bytes) != 0; break;
        case 'n': o->nonblocking = 1; break;
        case 'p': bad = parse_double(optarg, &o->poll_us) != 0; break;
        case 'r': o->region = 1; break;
        case 'v': o->verbose = 1; break;
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
    if (o->layers)
        o->model = "custom";
    return 0;
}

/* --------------------------------------------------------------- compute */

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Outstanding nonblocking reductions, progressed while computing. */
struct inflight {
    MPI_Request *req;
    int issued;      /* requests [0, issued) were started */
    int pending;     /* some of them may not be complete */
    double poll_us;  /* 0: no polling */
    double next_poll;
    double comm_us;  /* time spent inside MPI calls */
};

static volatile double compute_sink;

/* Busy "compute" until the monotonic clock reaches deadline_us. */
static void compute_until(double deadline_us, struct inflight *f)
{
    double x = compute_sink;
    double t = now_us();
    while (t < deadline_us) {
        for (int k = 0; k < 64; k++)
            x = x * 0.999999 + 1e-6;
        t = now_us();
        if (f && f->pending && f->poll_us > 0.0 && t >= f->next_poll) {
            int done = 0;
            MPI_Testall(f->issued, f->req, &done, MPI_STATUSES_IGNORE);
            f->pending = !done;
            double t2 = now_us();
            f->comm_us += t2 - t;
            t = t2;
            f->next_poll = t + f->poll_us;
        }
    }
    compute_sink = x;
}

/* Gradient of tensor elements [off, off+n) at this rank and step: small
 * multiples of 2^-10 in [-8, 8] x 2^-10, different per rank, step, index. */
static void produce_gradient(float *g, size_t off, size_t n, int rank, long step)
{
    unsigned k = (unsigned)((off * 13u + (size_t)rank * 7u + (size_t)step * 3u) % 17u);
    for (size_t i = 0; i < n; i++) {
        g[off + i] = (float)((int)k - 8) * (1.0f / 1024.0f);
        k += 13u;
        if (k >= 17u)
            k -= 17u;
    }
}

static void init_params(float *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        w[i] = (float)((int)((i * 7u) % 101u) - 50) * (1.0f / 256.0f);
}

static double checksum(const float *w, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)w[i] * (double)(1 + i % 7);
    return s;
}

static void fmt_bytes(char *buf, size_t len, double bytes)
{
    if (bytes >= 1e9) snprintf(buf, len, "%.2f GB", bytes / 1e9);
    else if (bytes >= 1e6) snprintf(buf, len, "%.2f MB", bytes / 1e6);
    else if (bytes >= 1e3) snprintf(buf, len, "%.2f kB", bytes / 1e3);
    else snprintf(buf, len, "%.0f B", bytes);
}

/* ------------------------------------------------------------------ main */

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

    struct model m;
    if (build_model(&m, &o) != 0) {
        if (rank == 0)
            fprintf(stderr, "%s: invalid --layers list (positive integers, total < 2^31)\n",
                    argv[0]);
        MPI_Finalize();
        return EXIT_FAILURE;
    }

    struct bucket *bk = malloc(m.ntensors * sizeof *bk);
    int *ready = malloc(m.ntensors * sizeof *ready); /* bucket completed by tensor, or -1 */
    float *w = malloc(m.total * sizeof *w);
    float *g = malloc(m.total * sizeof *g);
    MPI_Request *req = malloc(m.ntensors * sizeof *req);
    double *step_s = malloc((size_t)(o.steps + 1) * sizeof *step_s);
    double *step_max = malloc((size_t)(o.steps + 1) * sizeof *step_max);
    /* per step this rank's comm time, then the least over the ranks */
    double *comm_s = malloc((size_t)o.steps * sizeof *comm_s);
    double *comm_min = malloc((size_t)o.steps * sizeof *comm_min);
    if (!bk || !ready || !w || !g || !req || !step_s || !step_max || !comm_s || !comm_min) {
        fprintf(stderr, "%s: rank %d: out of memory (%zu parameters)\n", argv[0], rank, m.total);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    size_t nb = make_buckets(&m, o.bucket_bytes, bk);
    for (size_t t = 0; t < m.ntensors; t++)
        ready[t] = -1;
    for (size_t k = 0; k < nb; k++)
        ready[bk[k].first] = (int)k;
    init_params(w, m.total);
    memset(g, 0, m.total * sizeof *g);

    if (rank == 0) {
        char tot[32], smin[32], smax[32];
        size_t cmin = SIZE_MAX, cmax = 0;
        for (size_t k = 0; k < nb; k++) {
            if (bk[k].count < cmin) cmin = bk[k].count;
            if (bk[k].count > cmax) cmax = bk[k].count;
        }
        fmt_bytes(tot, sizeof tot, (double)m.total * 4.0);
        fmt_bytes(smin, sizeof smin, (double)cmin * 4.0);
        fmt_bytes(smax, sizeof smax, (double)cmax * 4.0);
        printf("# dp_train: model=%s tensors=%zu params=%zu (%s) ranks=%d\n",
               o.model, m.ntensors, m.total, tot, p);
        if (o.bucket_bytes)
            printf("# exchange: %s per bucket, bucket=%zu B -> %zu buckets/step (%s .. %s)\n",
                   o.nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce", o.bucket_bytes, nb,
                   smin, smax);
        else
            printf("# exchange: %s per tensor -> %zu calls/step (%s .. %s)\n",
                   o.nonblocking ? "MPI_Iallreduce" : "MPI_Allreduce", nb, smin, smax);
        printf("# steps=%ld compute=%.0f us/step%s region=%s\n", o.steps, o.compute_us,
               o.nonblocking ? (o.poll_us > 0.0 ? " overlap=testall" : " overlap=waitall-only")
                             : "",
               o.region ? "on" : "off");
        if (o.verbose)
            for (size_t k = 0; k < nb; k++)
                printf("#   bucket %3zu: tensors %zu..%zu, %zu floats (%zu B)\n",
                       k, bk[k].first, bk[k].last, bk[k].count, bk[k].count * 4);
        fflush(stdout);
    }

    const double fwd_us = o.compute_us / 3.0;
    const double bwd_us = o.compute_us - fwd_us;
    const float inv_p = 1.0f / (float)p;
    struct inflight fl = { .req = req, .poll_us = o.poll_us };

    MPI_Barrier(MPI_COMM_WORLD);
    for (long step = 0; step < o.steps; step++) {
        double t_step = now_us(), comm0 = fl.comm_us;
        if (o.region)
            MPI_Pcontrol(1, "step");

        /* forward */
        compute_until(now_us() + fwd_us, NULL);

        /* backward: tensors in reverse order, compute proportional to size */
        double t_bwd = now_us();
        size_t done_elems = 0;
        if (o.nonblocking) {
            if (o.region)
                MPI_Pcontrol(1, "allreduce");
            fl.issued = 0;
            fl.pending = 0;
            fl.next_poll = 0.0;
        }
        for (size_t t = m.ntensors; t-- > 0;) {
            done_elems += m.count[t];
            double deadline = t_bwd + bwd_us * (double)done_elems / (double)m.total;
            compute_until(deadline, o.nonblocking ? &fl : NULL);
            produce_gradient(g, m.offset[t], m.count[t], rank, step);
            if (o.nonblocking && ready[t] >= 0) {
                const struct bucket *b = &bk[ready[t]];
                double t0 = now_us();
                MPI_Iallreduce(MPI_IN_PLACE, g + b->offset, (int)b->count, MPI_FLOAT,
                               MPI_SUM, MPI_COMM_WORLD, &req[fl.issued++]);
                double t1 = now_us();
                fl.comm_us += t1 - t0;
                fl.pending = 1;
                if (fl.next_poll == 0.0)
                    fl.next_poll = t1 + o.poll_us;
            }
        }

        /* gradient exchange */
        if (o.nonblocking) {
            double t0 = now_us();
            MPI_Waitall(fl.issued, req, MPI_STATUSES_IGNORE);
            fl.comm_us += now_us() - t0;
        } else {
            if (o.region)
                MPI_Pcontrol(1, "allreduce");
            for (size_t k = 0; k < nb; k++) {
                double t0 = now_us();
                MPI_Allreduce(MPI_IN_PLACE, g + bk[k].offset, (int)bk[k].count, MPI_FLOAT,
                              MPI_SUM, MPI_COMM_WORLD);
                fl.comm_us += now_us() - t0;
            }
        }
        if (o.region)
            MPI_Pcontrol(-1, "allreduce");

        /* SGD update with the averaged gradient */
        for (size_t i = 0; i < m.total; i++)
            w[i] -= LEARNING_RATE * (g[i] * inv_p);

        if (o.region)
            MPI_Pcontrol(-1, "step");
        step_s[step] = (now_us() - t_step) * 1e-6;
        comm_s[step] = (fl.comm_us - comm0) * 1e-6;
    }

    /* Report: step times (max over ranks), comm time (mean over ranks, and
     * the late rank's) and the checksum, which every rank must agree on. */
    double cs = checksum(w, m.total);
    step_s[o.steps] = cs;
    MPI_Reduce(step_s, step_max, (int)o.steps + 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double mine[2] = { fl.comm_us * 1e-6, -cs }, sums[2] = { 0.0, 0.0 };
    double cs_min = 0.0;
    MPI_Reduce(&mine[0], &sums[0], 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mine[1], &cs_min, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    /* the late rank's comm time: per step the rank that waited least, the
     * last to arrive, whose exchange the step waits for (the others' longer
     * time is their wait for it) */
    MPI_Reduce(comm_s, comm_min, (int)o.steps, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);

    int status = EXIT_SUCCESS;
    if (rank == 0) {
        double total = 0.0, tmin = step_max[0], tmax = step_max[0];
        for (long s = 0; s < o.steps; s++) {
            total += step_max[s];
            if (step_max[s] < tmin) tmin = step_max[s];
            if (step_max[s] > tmax) tmax = step_max[s];
            if (o.verbose)
                printf("step %4ld: %10.3f ms\n", s, step_max[s] * 1e3);
        }
        double comm = sums[0] / p;
        printf("time/step: %.3f ms mean, %.3f ms min, %.3f ms max (slowest rank)\n",
               total / (double)o.steps * 1e3, tmin * 1e3, tmax * 1e3);
        printf("comm time: %.3f ms total, %.3f ms/step, %.1f%% of run (mean over ranks)\n",
               comm * 1e3, comm / (double)o.steps * 1e3,
               total > 0.0 ? 100.0 * comm / total : 0.0);
        double late = 0.0;
        for (long s = 0; s < o.steps; s++)
            late += comm_min[s];
        printf("comm time, late rank: %.3f ms/step median, %.3f ms/step mean (per step the rank that "
               "waited least)\n",
               median(comm_min, o.steps) * 1e3, late / (double)o.steps * 1e3);
        int agree = (step_max[o.steps] == -cs_min);
        printf("checksum: %.6e (%s)\n", step_max[o.steps],
               agree ? "all ranks agree" : "RANKS DISAGREE");
        if (!agree)
            status = EXIT_FAILURE;
    }

    free(bk);
    free(ready);
    free(w);
    free(g);
    free(req);
    free(step_s);
    free(step_max);
    free(comm_s);
    free(comm_min);
    free(m.count);
    free(m.offset);
    MPI_Finalize();
    return status;
}
