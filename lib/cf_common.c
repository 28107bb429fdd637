#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cf_common.h"

const char *cf_status_str(int status)
{
    switch (status) {
    case CF_OK: return "success";
    case CF_ERR_INVALID: return "invalid argument";
    case CF_ERR_NOMEM: return "out of memory";
    case CF_ERR_IO: return "input/output error";
    case CF_ERR_FORMAT: return "malformed profile";
    case CF_ERR_VERSION: return "unsupported profile version";
    case CF_ERR_RANGE: return "value out of range";
    case CF_ERR_NODATA: return "not enough data";
    case CF_ERR_UNSUPPORTED: return "not supported";
    }
    return "unknown status";
}

size_t cf_strlcpy(char *dst, const char *src, size_t len)
{
    size_t n = strlen(src);
    if (len) {
        size_t k = n < len - 1 ? n : len - 1;
        memcpy(dst, src, k);
        dst[k] = 0;
    }
    return n;
}

int cf_blocking_op_name(const char *op, char *buf, size_t len)
{
    size_t n = strlen(op);
    if (len == 0 || n >= len) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    memcpy(buf, op, n + 1);
    if (strncmp(buf, "MPI_", 4) != 0)
        return 0;
    if (n > 2 && strcmp(buf + n - 2, "_c") == 0)
        buf[n -= 2] = '\0';
    if (n > 5 && strcmp(buf + n - 5, "_init") == 0)
        buf[n -= 5] = '\0';
    if (buf[4] == 'I' && buf[5] >= 'a' && buf[5] <= 'z') {
        memmove(buf + 4, buf + 5, n - 4);
        buf[4] = (char)(buf[4] - 'a' + 'A');
    }
    return strcmp(buf, op) != 0;
}

int cf_op_nonblocking(const char *op, const char *kind)
{
    if (strcmp(kind, "io") == 0) /* MPI_File_iread... */
        return strncmp(op, "MPI_File_i", 10) == 0;
    if (strcmp(kind, "rma") == 0) /* MPI_Rput... */
        return op[0] != '\0' && strncmp(op, "MPI_R", 5) == 0 && op[5] >= 'a' && op[5] <= 'z';
    if (strcmp(kind, "p2p") != 0 && strcmp(kind, "collective") != 0)
        return 0;
    return (strncmp(op, "MPI_I", 5) == 0 && op[5] >= 'a' && op[5] <= 'z') ||
           strstr(op, "_init") != NULL;
}

int cf_index_init(cf_index_t *x, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    x->slot = calloc(cap, sizeof(*x->slot));
    x->mask = x->slot != NULL ? cap - 1 : 0;
    return x->slot != NULL ? CF_OK : CF_ERR_NOMEM;
}

void cf_index_put(cf_index_t *x, uint64_t h, size_t pos)
{
    size_t s = (size_t)h & x->mask;
    if (x->slot == NULL)
        return;
    while (x->slot[s] != 0)
        s = (s + 1) & x->mask;
    x->slot[s] = pos + 1;
}

int cf_index_next(const cf_index_t *x, uint64_t h, size_t *cursor, size_t *pos)
{
    size_t s;
    if (x->slot == NULL || *cursor > x->mask)
        return 0;
    s = ((size_t)h + *cursor) & x->mask;
    if (x->slot[s] == 0)
        return 0;
    *pos = x->slot[s] - 1;
    (*cursor)++;
    return 1;
}

void cf_index_free(cf_index_t *x)
{
    free(x->slot);
    x->slot = NULL;
    x->mask = 0;
}

uint64_t cf_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t cf_hash_str(uint64_t h, const char *s)
{
    return cf_hash_bytes(h, s, strlen(s));
}

int cf_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

double cf_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), cf_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void cf_path_absolute(char *buf, size_t len)
{
    char cwd[4096];
    size_t n = strlen(buf);
    if (!n || buf[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        return;
    size_t c = strlen(cwd);
    if (c + n + 2 > len)
        return;
    memmove(buf + c + 1, buf, n + 1);
    memcpy(buf, cwd, c);
    buf[c] = '/';
}
