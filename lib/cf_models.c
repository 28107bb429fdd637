#include "cf_models.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static const struct {
    const char *name;
    cf_bus_kind_t bus;
    const char *default_algo;
} colls[] = {
#define CF_COLL_ROW_(id, name, bus, algo) {name, bus, algo},
    CF_COLL_LIST(CF_COLL_ROW_)
#undef CF_COLL_ROW_
};

/* Every cost in docs/models.md is a sum of the same few terms, so one row of
 * multipliers describes an algorithm:
 *   A = a_p1 (p-1) + a_lg lg p + a_1
 *   C = c_pp (p-1)/p + c_lg lg p + c_1
 *   G = g_pp (p-1)/p + g_lg lg p */
typedef struct {
    cf_coll_t coll;
    const char *name;
    double a_p1, a_lg, a_1;
    double c_pp, c_lg, c_1;
    double g_pp, g_lg;
    const char *formula;
} algo_t;

/* The first row of each collective is its default (checked by the tests
 * against CF_COLL_LIST). */
static const algo_t algos[] = {
    {CF_COLL_ALLREDUCE, "ring", 2, 0, 0, 2, 0, 0, 1, 0,
     "2(p-1) alpha + 2(p-1)/p n/B + (p-1)/p n gamma"},
    {CF_COLL_ALLREDUCE, "recursive_doubling", 0, 1, 0, 0, 1, 0, 0, 1,
     "lg p (alpha + n/B + n gamma)"},
    {CF_COLL_ALLREDUCE, "rabenseifner", 0, 2, 0, 2, 0, 0, 1, 0,
     "2 lg p alpha + 2(p-1)/p n/B + (p-1)/p n gamma"},

    {CF_COLL_ALLGATHER, "ring", 1, 0, 0, 1, 0, 0, 0, 0, "(p-1) alpha + (p-1)/p n/B"},
    {CF_COLL_ALLGATHER, "recursive_doubling", 0, 1, 0, 1, 0, 0, 0, 0, "lg p alpha + (p-1)/p n/B"},
    {CF_COLL_ALLGATHER, "bruck", 0, 1, 0, 1, 0, 0, 0, 0, "lg p alpha + (p-1)/p n/B"},

    {CF_COLL_REDUCE_SCATTER, "ring", 1, 0, 0, 1, 0, 0, 1, 0,
     "(p-1) alpha + (p-1)/p n (1/B + gamma)"},
    {CF_COLL_REDUCE_SCATTER, "pairwise", 1, 0, 0, 1, 0, 0, 1, 0,
     "(p-1) alpha + (p-1)/p n (1/B + gamma)"},
    {CF_COLL_REDUCE_SCATTER, "recursive_halving", 0, 1, 0, 1, 0, 0, 1, 0,
     "lg p alpha + (p-1)/p n (1/B + gamma)"},

    {CF_COLL_REDUCE_SCATTER_BLOCK, "ring", 1, 0, 0, 1, 0, 0, 1, 0,
     "(p-1) alpha + (p-1)/p n (1/B + gamma)"},
    {CF_COLL_REDUCE_SCATTER_BLOCK, "pairwise", 1, 0, 0, 1, 0, 0, 1, 0,
     "(p-1) alpha + (p-1)/p n (1/B + gamma)"},
    {CF_COLL_REDUCE_SCATTER_BLOCK, "recursive_halving", 0, 1, 0, 1, 0, 0, 1, 0,
     "lg p alpha + (p-1)/p n (1/B + gamma)"},

    {CF_COLL_BCAST, "binomial", 0, 1, 0, 0, 1, 0, 0, 0, "lg p (alpha + n/B)"},
    {CF_COLL_BCAST, "scatter_allgather", 1, 1, 0, 2, 0, 0, 0, 0,
     "(lg p + p-1) alpha + 2(p-1)/p n/B"},

    {CF_COLL_REDUCE, "binomial", 0, 1, 0, 0, 1, 0, 0, 1, "lg p (alpha + n/B + n gamma)"},

    {CF_COLL_GATHER, "binomial", 0, 1, 0, 1, 0, 0, 0, 0, "lg p alpha + (p-1)/p n/B"},
    {CF_COLL_SCATTER, "binomial", 0, 1, 0, 1, 0, 0, 0, 0, "lg p alpha + (p-1)/p n/B"},

    /* docs/models.md rounds the pairwise payload to n b; a rank's own block
     * never travels, and (p-1)/p keeps busbw of the model equal to B. */
    {CF_COLL_ALLTOALL, "pairwise", 1, 0, 0, 1, 0, 0, 0, 0, "(p-1) alpha + (p-1)/p n/B"},
    {CF_COLL_ALLTOALL, "bruck", 0, 1, 0, 0, 0.5, 0, 0, 0, "lg p alpha + (n/2) lg p /B"},

    {CF_COLL_BARRIER, "dissemination", 0, 1, 0, 0, 0, 0, 0, 0, "lg p alpha"},

    {CF_COLL_SCAN, "recursive_doubling", 0, 1, 0, 0, 1, 0, 0, 1, "lg p (alpha + n/B + n gamma)"},
    {CF_COLL_EXSCAN, "recursive_doubling", 0, 1, 0, 0, 1, 0, 0, 1,
     "lg p (alpha + n/B + n gamma)"},

    {CF_COLL_P2P, "direct", 0, 0, 1, 0, 0, 1, 0, 0, "alpha + n/B"},
};

static int coll_valid(cf_coll_t c)
{
    return (int)c >= 0 && c < CF_COLL_COUNT;
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive, '-' equal to '_': "Recursive-Doubling" works. */
static int name_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a == '-' ? '_' : lower(*a), y = *b == '-' ? '_' : lower(*b);
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* ceil(log2 p): rounds are whole. */
static int ceil_lg(int p)
{
    int lg = 0;
    while (lg < 31 && (1 << lg) < p)
        lg++;
    return lg;
}

static int has_suffix(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

cf_coll_t cf_coll_from_name(const char *s)
{
    /* Variants with the payload convention of their base (docs/models.md). */
    static const struct {
        const char *name;
        cf_coll_t c;
    } variants[] = {
        {"allgatherv", CF_COLL_ALLGATHER}, {"gatherv", CF_COLL_GATHER},
        {"scatterv", CF_COLL_SCATTER},     {"alltoallv", CF_COLL_ALLTOALL},
        {"alltoallw", CF_COLL_ALLTOALL},
    };
    char buf[64], *name;
    size_t len = 0;
    int mpi = 0;

    if (s == NULL)
        return CF_COLL_NONE;
    for (; s[len]; len++) {
        if (len + 1 >= sizeof(buf))
            return CF_COLL_NONE;
        buf[len] = lower(s[len]);
    }
    buf[len] = '\0';
    name = buf;
    if (strncmp(name, "mpi_", 4) == 0 || strncmp(name, "pmpi_", 5) == 0) {
        mpi = 1;
        name += name[0] == 'p' ? 5 : 4;
        len = strlen(name);
        /* MPI-4 large-count (_c) and persistent (_init) forms */
        if (has_suffix(name, len, "_c"))
            name[len -= 2] = '\0';
        if (has_suffix(name, len, "_init"))
            name[len -= 5] = '\0';
    } else if (name_eq(name, "sendrecv")) {
        return CF_COLL_P2P;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int c = 0; c < CF_COLL_COUNT; c++) {
            if (c == CF_COLL_P2P)
                continue;
            if (name_eq(name, colls[c].name))
                return (cf_coll_t)c;
        }
        for (size_t i = 0; i < CF_ARRAY_LEN(variants); i++)
            if (name_eq(name, variants[i].name))
                return variants[i].c;
        /* Nonblocking MPI_I<coll>; no blocking collective starts with i. */
        if (pass == 0 && mpi && name[0] == 'i')
            name++;
        else
            break;
    }
    if (!mpi && name_eq(name, colls[CF_COLL_P2P].name))
        return CF_COLL_P2P;
    return CF_COLL_NONE;
}

const char *cf_coll_name(cf_coll_t c)
{
    return coll_valid(c) ? colls[c].name : NULL;
}

int cf_coll_is_collective(cf_coll_t c)
{
    return coll_valid(c) && c != CF_COLL_P2P;
}

double cf_busbw_factor(cf_coll_t c, int p)
{
    if (!coll_valid(c) || p < 1)
        return NAN;
    switch (colls[c].bus) {
    case CF_BUS_2P: return 2.0 * (p - 1) / p;
    case CF_BUS_P: return (double)(p - 1) / p;
    case CF_BUS_1: return 1.0;
    }
    return NAN;
}

const char *cf_model_algo_name(cf_coll_t c, int i)
{
    if (!coll_valid(c) || i < 0)
        return NULL;
    for (size_t k = 0; k < CF_ARRAY_LEN(algos); k++)
        if (algos[k].coll == c && i-- == 0)
            return algos[k].name;
    return NULL;
}

const char *cf_model_default_algo(cf_coll_t c)
{
    return coll_valid(c) ? colls[c].default_algo : NULL;
}

static const algo_t *find_algo(cf_coll_t c, const char *algo)
{
    if (!coll_valid(c))
        return NULL;
    if (algo == NULL || name_eq(algo, "default"))
        algo = colls[c].default_algo;
    for (size_t k = 0; k < CF_ARRAY_LEN(algos); k++)
        if (algos[k].coll == c && name_eq(algo, algos[k].name))
            return &algos[k];
    return NULL;
}

const char *cf_model_formula(cf_coll_t c, const char *algo)
{
    const algo_t *a = find_algo(c, algo);
    return a ? a->formula : NULL;
}

const char *cf_model_algo_canonical(cf_coll_t c, const char *algo)
{
    const algo_t *a = find_algo(c, algo);
    return a ? a->name : NULL;
}

int cf_model_coeffs(cf_coll_t c, const char *algo, int p, double *A_p, double *C_p, double *G_p)
{
    const algo_t *a = find_algo(c, algo);
    double pm1, ppm, lg;

    if (a == NULL)
        return CF_ERR_INVALID;
    if (p < 1)
        return CF_ERR_RANGE;
    pm1 = p - 1;
    ppm = (double)(p - 1) / p;
    lg = ceil_lg(p);
    /* (p-1) alpha and 2(p-1)/p n/B: the products stay exact for the usual
     * p, so the worked examples of docs/models.md come out to the last bit. */
    *A_p = a->a_p1 * pm1 + a->a_lg * lg + a->a_1;
    *C_p = a->c_pp * ppm + a->c_lg * lg + a->c_1;
    *G_p = a->g_pp * ppm + a->g_lg * lg;
    return CF_OK;
}

static int bad_link(double n, double alpha, double B)
{
    return !(n >= 0) || !(alpha >= 0) || !(B > 0) || isinf(n) || isinf(alpha);
}

/* x n / B, with 0 for an unbounded B or no payload. */
static double payload(double x, double n, double B)
{
    return (x == 0 || n == 0 || isinf(B)) ? 0.0 : x * n / B;
}

double cf_model_time(cf_coll_t c, const char *algo, int p, double n, double alpha, double B,
                     double gamma)
{
    double A, C, G;

    if (bad_link(n, alpha, B) || !(gamma >= 0) || isinf(gamma) ||
        cf_model_coeffs(c, algo, p, &A, &C, &G) != CF_OK)
        return NAN;
    return A * alpha + payload(C, n, B) + (G == 0 || gamma == 0 ? 0.0 : G * n * gamma);
}

double cf_model_lower_bound(cf_coll_t c, int p, double n, double alpha, double B)
{
    double lg, ppm;

    if (!coll_valid(c) || p < 1 || bad_link(n, alpha, B))
        return NAN;
    lg = ceil_lg(p);
    ppm = (double)(p - 1) / p;
    switch (c) {
    case CF_COLL_ALLREDUCE: return lg * alpha + payload(2 * ppm, n, B);
    case CF_COLL_ALLGATHER:
    case CF_COLL_REDUCE_SCATTER:
    case CF_COLL_REDUCE_SCATTER_BLOCK:
    case CF_COLL_GATHER:
    case CF_COLL_SCATTER:
    case CF_COLL_ALLTOALL: return lg * alpha + payload(ppm, n, B);
    case CF_COLL_BCAST:
    case CF_COLL_REDUCE:
    case CF_COLL_SCAN:
    case CF_COLL_EXSCAN: return lg * alpha + (p > 1 ? payload(1, n, B) : 0.0);
    case CF_COLL_BARRIER: return lg * alpha;
    case CF_COLL_P2P: return alpha + payload(1, n, B);
    default: return NAN;
    }
}

double cf_model_n_half(cf_coll_t c, const char *algo, int p, double alpha, double B)
{
    double A, C, G;

    if (bad_link(0, alpha, B) || cf_model_coeffs(c, algo, p, &A, &C, &G) != CF_OK)
        return NAN;
    if (A * alpha == 0)
        return 0.0;
    if (C == 0 || isinf(B))
        return INFINITY;
    return A * alpha * B / C;
}

int cf_model_per_hop(cf_coll_t c, const char *algo, int p, double a_c, double B_c,
                     double *alpha_p, double *B_p)
{
    double A, C, G;
    int rc;

    if (bad_link(0, a_c, B_c))
        return CF_ERR_INVALID;
    if ((rc = cf_model_coeffs(c, algo, p, &A, &C, &G)) != CF_OK)
        return rc;
    if (A == 0)
        return CF_ERR_RANGE;
    *alpha_p = a_c / A;
    *B_p = C == 0 ? INFINITY : C * B_c;
    return CF_OK;
}
