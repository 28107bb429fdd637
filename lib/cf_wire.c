#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cf_wire.h"

/* ---- grouping ---- */

static int cf_wire_is_sent(const cf_record_t *r)
{
    return strcmp(r->kind, "send") == 0 || strcmp(r->kind, "rma") == 0;
}

static cf_wire_op_t *cf_wire_find(cf_wire_op_t *ops, size_t n, const char *op)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i].op, op) == 0)
            return &ops[i];
    return NULL;
}

static void cf_wire_add_bin(cf_wire_op_t *o, const cf_record_t *r)
{
    size_t i;
    for (i = 0; i < o->nbin && o->bin[i].size_lo < r->size_lo; i++)
        ;
    if (i < o->nbin && o->bin[i].size_lo == r->size_lo) {
        o->bin[i].msgs += r->calls;
        o->bin[i].bytes += r->bytes;
        return;
    }
    if (o->nbin == CF_SIZE_BINS)
        return;
    memmove(&o->bin[i + 1], &o->bin[i], (o->nbin - i) * sizeof(o->bin[0]));
    o->bin[i] = (cf_wire_bin_t){r->size_lo, r->size_hi, r->calls, r->bytes};
    o->nbin++;
}

/* Calls of the MPI operation, the sizes they cover, and the communicator
 * carrying most of them. */
static void cf_wire_mpi_side(const cf_profile_t *p, cf_wire_op_t *o)
{
    struct {
        uint32_t comm;
        int path;
        uint64_t calls;
    } seen[64];
    size_t nseen = 0;
    int first_size = -1;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (r->layer != CF_LAYER_MPI || strcmp(r->op, o->op) != 0 || !r->calls)
            continue;
        double mean = (double)r->bytes / (double)r->calls;
        if (!o->mpi_calls || r->size_lo < o->size_lo)
            o->size_lo = r->size_lo;
        if (!o->mpi_calls || r->size_hi > o->size_hi)
            o->size_hi = r->size_hi;
        if (!o->mpi_calls || mean < o->payload_lo)
            o->payload_lo = mean;
        if (!o->mpi_calls || mean > o->payload_hi)
            o->payload_hi = mean;
        o->mpi_calls += r->calls;
        o->mpi_bytes += r->bytes;
        size_t k;
        for (k = 0; k < nseen && seen[k].comm != r->comm; k++)
            ;
        if (k == nseen && nseen < CF_ARRAY_LEN(seen)) {
            seen[nseen].comm = r->comm;
            seen[nseen].path = r->path;
            seen[nseen++].calls = 0;
        }
        if (k < nseen)
            seen[k].calls += r->calls;
        const cf_comm_info_t *c = cf_profile_comm(p, r->comm);
        if (c) {
            if (first_size < 0)
                first_size = c->size;
            else if (c->size != first_size)
                o->mixed_comms = 1;
        }
    }
    size_t best = 0;
    for (size_t k = 1; k < nseen; k++)
        if (seen[k].calls > seen[best].calls)
            best = k;
    const cf_comm_info_t *c = nseen ? cf_profile_comm(p, seen[best].comm) : NULL;
    o->comm = nseen ? seen[best].comm : CF_COMM_ID_NONE;
    o->path = nseen ? seen[best].path : -1;
    o->comm_size = c && c->size > 0 ? c->size : 0;
}

static int cf_wire_cmp(const void *a, const void *b)
{
    const cf_wire_op_t *x = a, *y = b;
    if (x->msgs != y->msgs)
        return x->msgs > y->msgs ? -1 : 1;
    return strcmp(x->op, y->op);
}

int cf_wire_ops(const cf_profile_t *p, cf_wire_op_t **ops_p, size_t *n_p)
{
    size_t n = 0, cap = 0;
    cf_wire_op_t *ops = NULL;
    if (!p || !ops_p || !n_p)
        return CF_ERR_INVALID;
    *n_p = 0;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (r->layer != CF_LAYER_UCX || !r->calls)
            continue;
        cf_wire_op_t *o = cf_wire_find(ops, n, r->parent_op);
        if (!o) {
            if (n == cap) {
                size_t ncap = cap ? 2 * cap : 8;
                cf_wire_op_t *g = realloc(ops, ncap * sizeof(*g));
                if (!g) {
                    free(ops);
                    return CF_ERR_NOMEM;
                }
                ops = g;
                cap = ncap;
            }
            o = &ops[n++];
            memset(o, 0, sizeof(*o));
            o->path = -1;
            cf_strlcpy(o->op, r->parent_op, sizeof(o->op));
        }
        if (cf_wire_is_sent(r)) {
            o->msgs += r->calls;
            o->msg_bytes += r->bytes;
            cf_wire_add_bin(o, r);
        } else if (strcmp(r->kind, "recv") == 0) {
            o->recvs += r->calls;
            o->recv_bytes += r->bytes;
        }
    }
    for (size_t i = 0; i < n; i++) {
        cf_wire_op_t *o = &ops[i];
        o->coll = o->op[0] ? cf_coll_from_name(o->op) : CF_COLL_NONE;
        if (o->op[0])
            cf_wire_mpi_side(p, o);
        o->msgs_per_call = o->mpi_calls ? (double)o->msgs / (double)o->mpi_calls : NAN;
        o->bytes_per_call = o->mpi_calls ? (double)o->msg_bytes / (double)o->mpi_calls : NAN;
        o->payload = o->mpi_calls ? (double)o->mpi_bytes / (double)o->mpi_calls : NAN;
        o->msg_size_mean = o->msgs ? (double)o->msg_bytes / (double)o->msgs : NAN;
    }
    if (n)
        qsort(ops, n, sizeof(*ops), cf_wire_cmp);
    *ops_p = ops;
    *n_p = n;
    return n ? CF_OK : CF_ERR_NODATA;
}

/* ---- message-level models ---- */

typedef struct {
    cf_coll_t coll;
    const char *algo;
    const char *shape;
} cf_wire_algo_t;

static const cf_wire_algo_t cf_wire_algos[] = {
    {CF_COLL_ALLREDUCE, "ring", "2(p-1) messages of n/p"},
    {CF_COLL_ALLREDUCE, "recursive_doubling", "lg p messages of n"},
    {CF_COLL_ALLREDUCE, "rabenseifner", "2 lg p messages of n/2 down to n/p and back"},
    {CF_COLL_ALLREDUCE, "reduce_bcast", "2(p-1)/p messages of n (reduce to a root, then bcast)"},
    {CF_COLL_ALLGATHER, "ring", "p-1 messages of n/p"},
    {CF_COLL_ALLGATHER, "recursive_doubling", "lg p messages of n/p up to n/2"},
    {CF_COLL_ALLGATHER, "bruck", "ceil(lg p) messages of n/p up to n/2"},
    {CF_COLL_REDUCE_SCATTER, "ring", "p-1 messages of n/p"},
    {CF_COLL_REDUCE_SCATTER, "recursive_halving", "lg p messages of n/2 down to n/p"},
    {CF_COLL_REDUCE_SCATTER_BLOCK, "ring", "p-1 messages of n/p"},
    {CF_COLL_REDUCE_SCATTER_BLOCK, "recursive_halving", "lg p messages of n/2 down to n/p"},
    {CF_COLL_ALLTOALL, "pairwise", "p-1 messages of n/p"},
    {CF_COLL_ALLTOALL, "bruck", "ceil(lg p) messages of about n/2"},
    {CF_COLL_BCAST, "binomial", "(p-1)/p messages of n"},
    {CF_COLL_BCAST, "scatter_allgather", "(p-1)/p + (p-1) messages of n/p"},
    {CF_COLL_REDUCE, "binomial", "(p-1)/p messages of n"},
    {CF_COLL_BARRIER, "dissemination", "ceil(lg p) messages of 0 bytes"},
};

static int cf_wire_floor_lg(int p)
{
    int l = 0;
    while ((2 << l) <= p)
        l++;
    return l;
}
static int cf_wire_ceil_lg(int p)
{
    int l = 0;
    while ((1 << l) < p)
        l++;
    return l;
}

const char *cf_wire_algo_name(cf_coll_t c, int i)
{
    for (size_t k = 0; k < CF_ARRAY_LEN(cf_wire_algos); k++)
        if (cf_wire_algos[k].coll == c && i-- == 0)
            return cf_wire_algos[k].algo;
    return NULL;
}

int cf_wire_model(cf_coll_t c, const char *algo, int p, cf_wire_model_t *m_p)
{
    const cf_wire_algo_t *a = NULL;
    if (!algo || !m_p)
        return CF_ERR_INVALID;
    for (size_t k = 0; k < CF_ARRAY_LEN(cf_wire_algos) && !a; k++)
        if (cf_wire_algos[k].coll == c && strcmp(cf_wire_algos[k].algo, algo) == 0)
            a = &cf_wire_algos[k];
    if (!a)
        return CF_ERR_INVALID;
    if (p < 2)
        return CF_ERR_RANGE;
    double P = p, lg = cf_wire_floor_lg(p), clg = cf_wire_ceil_lg(p);
    double p2 = (double)(1 << (int)lg), r = P - p2; /* ranks beyond the largest power of two */
    cf_wire_model_t m = {.algo = a->algo, .shape = a->shape};
    switch (c) {
    case CF_COLL_ALLREDUCE:
        if (!strcmp(algo, "ring")) {
            m.msgs = 2 * (P - 1);
            m.bytes = 2 * (P - 1) / P;
            m.size_lo = m.size_hi = 1 / P;
        } else if (!strcmp(algo, "recursive_doubling")) {
            /* the r extra ranks fold into partners first and get the result back */
            m.msgs = (2 * r + p2 * lg) / P;
            m.bytes = m.msgs;
            m.size_lo = m.size_hi = 1;
        } else if (!strcmp(algo, "rabenseifner")) {
            /* with r extra ranks: 2r halves exchanged and r reduced halves sent
             * before, r whole results sent after (Open MPI's redscat_allgather) */
            m.msgs = (4 * r + p2 * 2 * lg) / P;
            m.bytes = (2.5 * r + 2 * (p2 - 1)) / P;
            m.size_lo = 1 / p2;
            m.size_hi = r > 0 ? 1 : 0.5;
        } else {
            m.msgs = 2 * (P - 1) / P;
            m.bytes = m.msgs;
            m.size_lo = m.size_hi = 1;
        }
        break;
    case CF_COLL_ALLGATHER:
    case CF_COLL_REDUCE_SCATTER:
    case CF_COLL_REDUCE_SCATTER_BLOCK:
        m.bytes = (P - 1) / P;
        m.size_lo = 1 / P;
        if (!strcmp(algo, "ring")) {
            m.msgs = P - 1;
            m.size_hi = 1 / P;
        } else {
            m.msgs = clg;
            m.size_hi = 0.5;
        }
        break;
    case CF_COLL_ALLTOALL:
        if (!strcmp(algo, "pairwise")) {
            m.msgs = P - 1;
            m.bytes = (P - 1) / P;
            m.size_lo = m.size_hi = 1 / P;
        } else {
            m.msgs = clg;
            m.bytes = clg / 2;
            m.size_lo = m.size_hi = 0.5;
        }
        break;
    case CF_COLL_BCAST:
        if (!strcmp(algo, "binomial")) {
            m.msgs = (P - 1) / P;
            m.bytes = m.msgs;
            m.size_lo = m.size_hi = 1;
        } else {
            m.msgs = (P - 1) / P + (P - 1);
            m.bytes = 2 * (P - 1) / P;
            m.size_lo = 1 / P;
            m.size_hi = 0.5;
        }
        break;
    case CF_COLL_REDUCE:
        m.msgs = (P - 1) / P;
        m.bytes = m.msgs;
        m.size_lo = m.size_hi = 1;
        break;
    case CF_COLL_BARRIER:
        m.msgs = clg;
        break;
    default:
        return CF_ERR_INVALID;
    }
    *m_p = m;
    return CF_OK;
}

/* ---- inference ---- */

static double cf_wire_distance(const cf_wire_model_t *m, double msgs, double bytes)
{
    double d = fabs(log(msgs / m->msgs));
    if (m->bytes > 0)
        d += bytes > 0 ? fabs(log(bytes / m->bytes)) : INFINITY;
    else
        d += bytes > 0 ? INFINITY : 0; /* a barrier moves no payload */
    return d;
}

int cf_wire_infer(const cf_wire_op_t *o, cf_wire_infer_t *inf_p)
{
    if (!o || !inf_p)
        return CF_ERR_INVALID;
    if (!o->mpi_calls || !o->msgs || o->comm_size < 2)
        return CF_ERR_NODATA;
    if (o->coll == CF_COLL_NONE || !cf_wire_algo_name(o->coll, 0))
        return CF_ERR_UNSUPPORTED;
    double msgs = o->msgs_per_call;
    /* bytes per call as a multiple of n; a barrier has n = 0 */
    double bytes = o->payload > 0 ? o->bytes_per_call / o->payload : o->bytes_per_call;
    cf_wire_infer_t inf = {.distance = INFINITY, .second = INFINITY, .p = o->comm_size};
    const char *name;
    for (int i = 0; (name = cf_wire_algo_name(o->coll, i)) != NULL; i++) {
        cf_wire_model_t m;
        if (cf_wire_model(o->coll, name, o->comm_size, &m) != CF_OK || m.msgs <= 0)
            continue;
        double d = cf_wire_distance(&m, msgs, bytes);
        if (d < inf.distance) {
            inf.second = inf.distance;
            inf.distance = d;
            inf.expected = m;
            inf.closest = m.algo;
        } else if (d < inf.second) {
            inf.second = d;
        }
    }
    if (!inf.closest)
        return CF_ERR_UNSUPPORTED;
    /* a match must be close, and closer than any other model */
    inf.algo = inf.distance <= CF_WIRE_MATCH && inf.second > inf.distance ? inf.closest : NULL;
    *inf_p = inf;
    return CF_OK;
}

/* ---- per-hop fit ---- */

int cf_wire_hop_points(const cf_profile_t *p, int path, cf_point_t *pts, size_t max, size_t *n_p)
{
    /* per size bin: calls, bytes, and the call-weighted sum of medians */
    double calls[CF_SIZE_BINS] = {0}, bytes[CF_SIZE_BINS] = {0}, tsum[CF_SIZE_BINS] = {0};
    size_t n = 0;
    if (!p || !n_p || (!pts && max))
        return CF_ERR_INVALID;
    for (size_t i = 0; i < p->nrec; i++) {
        const cf_record_t *r = &p->rec[i];
        if (r->layer != CF_LAYER_UCX || r->path != path || strcmp(r->kind, "send") != 0 || !r->calls)
            continue;
        unsigned b = cf_size_bin(r->size_lo);
        if (b >= CF_SIZE_BINS)
            continue;
        calls[b] += (double)r->calls;
        bytes[b] += (double)r->bytes;
        tsum[b] += (double)r->calls * r->t_p50;
    }
    for (unsigned b = 0; b < CF_SIZE_BINS; b++) {
        if (calls[b] <= 0)
            continue;
        if (n < max)
            pts[n] = (cf_point_t){bytes[b] / calls[b], tsum[b] / calls[b], calls[b]};
        n++;
    }
    *n_p = n < max ? n : max;
    return n ? CF_OK : CF_ERR_NODATA;
}

int cf_wire_hop_fit(const cf_profile_t *p, int path, cf_fit_t *fit_p)
{
    cf_point_t pts[CF_SIZE_BINS];
    size_t n = 0;
    int rc = cf_wire_hop_points(p, path, pts, CF_SIZE_BINS, &n);
    if (rc != CF_OK) {
        if (fit_p)
            memset(fit_p, 0, sizeof(*fit_p));
        return rc;
    }
    return cf_fit_hockney(pts, n, fit_p);
}

/* Open MPI 4.1 coll/tuned algorithm numbers. */
static const struct {
    cf_coll_t coll;
    const char *algo;
    const char *param;
    int id;
} cf_wire_ompi[] = {
    {CF_COLL_ALLREDUCE, "recursive_doubling", "allreduce", 3},
    {CF_COLL_ALLREDUCE, "ring", "allreduce", 4},
    {CF_COLL_ALLREDUCE, "rabenseifner", "allreduce", 6},
    {CF_COLL_ALLGATHER, "bruck", "allgather", 2},
    {CF_COLL_ALLGATHER, "recursive_doubling", "allgather", 3},
    {CF_COLL_ALLGATHER, "ring", "allgather", 4},
    {CF_COLL_REDUCE_SCATTER, "recursive_halving", "reduce_scatter", 2},
    {CF_COLL_REDUCE_SCATTER, "ring", "reduce_scatter", 3},
    {CF_COLL_ALLTOALL, "pairwise", "alltoall", 2},
    {CF_COLL_ALLTOALL, "bruck", "alltoall", 3},
    {CF_COLL_BCAST, "binomial", "bcast", 6},
    {CF_COLL_BCAST, "scatter_allgather", "bcast", 8},
};

const char *cf_wire_ompi_setting(cf_coll_t c, const char *algo, char *buf, size_t len)
{
    for (size_t k = 0; algo && buf && len && k < CF_ARRAY_LEN(cf_wire_ompi); k++)
        if (cf_wire_ompi[k].coll == c && strcmp(cf_wire_ompi[k].algo, algo) == 0) {
            snprintf(buf, len, "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_%s_algorithm %d",
                     cf_wire_ompi[k].param, cf_wire_ompi[k].id);
            return buf;
        }
    return NULL;
}

json_t *cf_wire_transports(const cf_profile_t *p)
{
    json_t *ucx = p && p->extra ? json_object_get(p->extra, "ucx") : NULL;
    json_t *t = ucx ? json_object_get(ucx, "transports") : NULL;
    return json_is_object(t) ? t : NULL;
}
