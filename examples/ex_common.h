/* Option parsing shared by the example programs. */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Parse "123", "4KiB", "25MB", ... into bytes.  Returns 0 on success. */
static inline int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno != 0 || s[0] == '-')
        return -1;
    unsigned long long mult = 1;
    if (*end != '\0') {
        static const struct { const char *suffix; unsigned long long mult; } units[] = {
            { "B", 1ULL },
            { "K", 1ULL << 10 }, { "k", 1ULL << 10 }, { "KiB", 1ULL << 10 },
            { "M", 1ULL << 20 }, { "MiB", 1ULL << 20 },
            { "G", 1ULL << 30 }, { "GiB", 1ULL << 30 },
            { "kB", 1000ULL }, { "KB", 1000ULL },
            { "MB", 1000000ULL }, { "GB", 1000000000ULL },
        };
        size_t i;
        for (i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcmp(end, units[i].suffix) == 0)
                break;
        if (i == sizeof units / sizeof units[0])
            return -1;
        mult = units[i].mult;
    }
    if (v > SIZE_MAX / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

static inline int parse_long(const char *s, long lo, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < lo)
        return -1;
    *out = v;
    return 0;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1], n >= 1; sorts v. */
static inline double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline const char *long_name(const struct option *opts, int c)
{
    for (; opts->name != NULL; opts++)
        if (opts->val == c)
            return opts->name;
    return "?";
}

#endif
