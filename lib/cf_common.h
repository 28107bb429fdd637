/* Shared definitions for every part of commfit: status codes and helpers. */
#ifndef CF_COMMON_H
#define CF_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Internal symbols stay out of the plugin's dynamic symbol table. */
#define CF_HIDDEN __attribute__((visibility("hidden")))

/* Status codes: 0 is success, errors are negative. */
typedef enum {
    CF_OK = 0,
    CF_ERR_INVALID = -1,     /* malformed argument or input */
    CF_ERR_NOMEM = -2,       /* allocation failed or budget exhausted */
    CF_ERR_IO = -3,          /* file could not be read or written */
    CF_ERR_FORMAT = -4,      /* profile is truncated, corrupt or not a profile */
    CF_ERR_VERSION = -5,     /* profile version not understood */
    CF_ERR_RANGE = -6,       /* value out of its accepted range */
    CF_ERR_NODATA = -7,      /* not enough data for the requested analysis */
    CF_ERR_UNSUPPORTED = -8  /* feature not available on this build or machine */
} cf_status_t;

const char *cf_status_str(int status);
/* Copies a string, always terminated, truncated to len - 1 characters. */
size_t cf_strlcpy(char *dst, const char *src, size_t len);
/* The blocking operation an MPI operation stands for: MPI_Iallreduce,
 * MPI_Allreduce_init, MPI_Allreduce_c and MPI_Iallreduce_c -> MPI_Allreduce,
 * MPI_Isend -> MPI_Send (for the names of communication calls: MPI_Init is
 * no nonblocking MPI_nit).  buf gets it (op itself when it is blocking);
 * returns 1 when it differs from op, 0 otherwise (or when it does not fit). */
int cf_blocking_op_name(const char *op, char *buf, size_t len);
/* 1 when op, of the profile's kind ("p2p", "collective", "io", "rma"), is a
 * nonblocking or persistent call (MPI_Isend, MPI_Send_init, MPI_Iallreduce,
 * MPI_File_iread, MPI_Rput), 0 otherwise. */
int cf_op_nonblocking(const char *op, const char *kind);

/* Makes the path in buf absolute (prefixes the working directory) when it
 * is relative and the result fits len; leaves it as it is otherwise. */
void cf_path_absolute(char *buf, size_t len);

#define CF_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* An open-addressing index from 64-bit hashes to positions in an array
 * the caller owns: lookups walk a hash's probe sequence and compare the
 * items themselves, so that the tools stay linear in the size of a
 * profile (thousands of communicators, records, fits).  A zeroed index is
 * empty and valid: nothing is found in it. */
typedef struct {
    size_t mask;  /* slots - 1 */
    size_t *slot; /* position + 1; 0: empty */
} cf_index_t;

/* Room for n positions; CF_ERR_NOMEM on failure (the index stays empty). */
int cf_index_init(cf_index_t *x, size_t n);
void cf_index_put(cf_index_t *x, uint64_t h, size_t pos);
/* The next position stored under h or a colliding hash: *cursor starts at
 * 0; returns 0 when there is none. */
int cf_index_next(const cf_index_t *x, uint64_t h, size_t *cursor, size_t *pos);
void cf_index_free(cf_index_t *x);
/* FNV-1a of n bytes, continuing from h (start with CF_HASH_SEED). */
#define CF_HASH_SEED 0xcbf29ce484222325ull
uint64_t cf_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t cf_hash_str(uint64_t h, const char *s);

/* Greatest common divisor (gcd(a, 0) = a): the steps of a stream whose
 * every size bin repeats once a step, read by the advice from a profile and
 * by the calibration from the plugin's records. */
static inline uint64_t cf_gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* qsort order of doubles, ascending (NaN compares equal to everything). */
int cf_cmp_double(const void *pa, const void *pb);
/* The median of v[0..n-1], which it sorts; the mean of the middle two for
 * an even n; NaN for none. */
double cf_median(double *v, size_t n);

/* splitmix64's finalizer: every bit of x reaches every bit of the result */
static inline uint64_t cf_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#endif
