#include "cf_units.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cf_units_time_forms[] =
    "a plain number of seconds, or a number with unit s, ms, us (or \u00b5s), ns; "
    "e.g. 5us, 1.5 ms, 2e-6";
const char cf_units_size_forms[] =
    "a plain number of bytes, or a number with unit B, kB (or KB, k), MB, GB, TB "
    "(decimal) or KiB, MiB, GiB, TiB (binary); e.g. 1MB, 64 KiB, 4096";
const char cf_units_rate_forms[] =
    "a plain number of bytes/s, or a number with unit B/s, kB/s, MB/s, GB/s, TB/s "
    "(bytes) or b/s, Mb/s, Gb/s, Gbit/s, Gbps (bits; 400Gb/s = 50 GB/s); "
    "e.g. 25GB/s, 100 Gbit/s, 1e9";
const char cf_units_link_forms[] =
    "a rate and a startup time with units, separated by a comma, in either order; "
    "e.g. 400Gb/s,5us or 2us,25GB/s";

/* Longest mantissa accepted; anything longer is not a plausible quantity. */
#define NUM_MAX 64

typedef struct {
    char mant[NUM_MAX]; /* digits and at most one '.' */
    long exp10;         /* written exponent, clamped */
} number_t;

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* Own scanner instead of strtod: strtod also takes "inf", "nan", hex and
 * signs, and stops at the locale's decimal point. */
static int scan_number(const char **sp, number_t *num)
{
    const char *s = *sp;
    size_t len = 0;
    int ndigits = 0, dot = 0;

    if (*s == '+')
        s++;
    for (; is_digit(*s) || (*s == '.' && !dot); s++) {
        if (*s == '.')
            dot = 1;
        else
            ndigits++;
        if (len + 1 >= NUM_MAX)
            return CF_ERR_INVALID;
        num->mant[len++] = *s;
    }
    num->mant[len] = '\0';
    if (ndigits == 0)
        return CF_ERR_INVALID;
    num->exp10 = 0;
    if ((*s == 'e' || *s == 'E') &&
        (is_digit(s[1]) || ((s[1] == '+' || s[1] == '-') && is_digit(s[2])))) {
        int neg = 0;
        s++;
        if (*s == '+' || *s == '-')
            neg = *s++ == '-';
        for (; is_digit(*s); s++)
            if (num->exp10 < 100000)
                num->exp10 = num->exp10 * 10 + (*s - '0');
        if (neg)
            num->exp10 = -num->exp10;
    }
    *sp = s;
    return CF_OK;
}

/* Folding the unit's power of ten into the exponent before one strtod call
 * keeps results correctly rounded: "5us" is exactly the double 5e-6. */
static int number_value(const number_t *num, long extra_exp10, double *value_p)
{
    const char *dp = localeconv()->decimal_point;
    size_t dplen = strlen(dp);
    char buf[NUM_MAX * 2 + 32];
    size_t o = 0;
    char *end;
    double v;

    for (const char *m = num->mant; *m; m++) {
        if (*m == '.') {
            memcpy(buf + o, dp, dplen);
            o += dplen;
        } else {
            buf[o++] = *m;
        }
    }
    snprintf(buf + o, sizeof(buf) - o, "e%ld", num->exp10 + extra_exp10);
    errno = 0;
    v = strtod(buf, &end);
    if (*end != '\0' || isnan(v))
        return CF_ERR_INVALID;
    if (isinf(v) || (errno == ERANGE && v != 0.0))
        return CF_ERR_RANGE;
    *value_p = v;
    return CF_OK;
}

/* Splits "  12.5 GB/s  " into the number and the trimmed unit text. */
static int split_quantity(const char *s, number_t *num, const char **unit_p, size_t *unit_len_p)
{
    const char *u;
    size_t ulen;
    int rc;

    if (s == NULL)
        return CF_ERR_INVALID;
    while (is_space(*s))
        s++;
    if ((rc = scan_number(&s, num)) != CF_OK)
        return rc;
    while (is_space(*s))
        s++;
    u = s;
    ulen = strlen(u);
    while (ulen > 0 && is_space(u[ulen - 1]))
        ulen--;
    *unit_p = u;
    *unit_len_p = ulen;
    return CF_OK;
}

/* Consumes word at *u when it matches; single letters stay case-sensitive
 * because b/B and m/M change the meaning. */
static int take(const char **u, const char *end, const char *word, int icase)
{
    size_t n = strlen(word);
    if ((size_t)(end - *u) < n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char a = (*u)[i], b = word[i];
        if (icase ? lower(a) != lower(b) : a != b)
            return 0;
    }
    *u += n;
    return 1;
}

/* Decimal or binary multiplier prefix.  Lowercase m is never mega. */
static void take_prefix(const char **u, const char *end, int *exp10_p, int *exp2_p)
{
    static const char letters[] = "kmgtp";
    const char *s = *u;
    int idx = -1;

    *exp10_p = 0;
    *exp2_p = 0;
    if (s >= end)
        return;
    if (*s == 'M') {
        idx = 1;
    } else if (*s != 'm') {
        const char *hit = strchr(letters, lower(*s)); /* *s is not NUL: s < end */
        if (hit != NULL)
            idx = (int)(hit - letters);
    }
    if (idx < 0)
        return;
    s++;
    if (s < end && (*s == 'i' || *s == 'I')) {
        *exp2_p = 10 * (idx + 1);
        s++;
    } else {
        *exp10_p = 3 * (idx + 1);
    }
    *u = s;
}

int cf_parse_time(const char *s, double *seconds_p)
{
    static const struct {
        const char *name;
        int exp10;
    } units[] = {
        {"s", 0},       {"sec", 0},   {"secs", 0}, {"second", 0},
        {"seconds", 0}, {"ms", -3},   {"msec", -3}, {"us", -6},
        {"usec", -6},   {"\u00b5s", -6}, {"\u03bcs", -6}, {"ns", -9},
        {"nsec", -9},
    };
    number_t num;
    const char *u;
    size_t ulen;
    int rc;
    double v = 0;

    if ((rc = split_quantity(s, &num, &u, &ulen)) != CF_OK)
        return rc;
    if (ulen == 0)
        rc = number_value(&num, 0, &v);
    else {
        rc = CF_ERR_INVALID;
        for (size_t i = 0; i < CF_ARRAY_LEN(units); i++) {
            const char *p = u;
            if (strlen(units[i].name) == ulen && take(&p, u + ulen, units[i].name, 1)) {
                rc = number_value(&num, units[i].exp10, &v);
                break;
            }
        }
    }
    if (rc != CF_OK)
        return rc;
    *seconds_p = v;
    return CF_OK;
}

int cf_parse_size(const char *s, double *bytes_p)
{
    number_t num;
    const char *u, *end;
    size_t ulen;
    int rc, e10, e2;
    double v;

    if ((rc = split_quantity(s, &num, &u, &ulen)) != CF_OK)
        return rc;
    end = u + ulen;
    take_prefix(&u, end, &e10, &e2);
    /* A bare prefix ("4k") is bytes; a lowercase b would be bits, which is
     * never how a message size is meant. */
    if (u < end && !take(&u, end, "bytes", 1) && !take(&u, end, "byte", 1) &&
        !take(&u, end, "B", 0))
        return CF_ERR_INVALID;
    if (u != end)
        return CF_ERR_INVALID;
    if ((rc = number_value(&num, e10, &v)) != CF_OK)
        return rc;
    v = ldexp(v, e2);
    if (isinf(v))
        return CF_ERR_RANGE;
    *bytes_p = v;
    return CF_OK;
}

/* unit_required: a plain number is rejected, for --link where the unit is
 * what tells the rate from the time. */
static int parse_rate(const char *s, int unit_required, double *Bps_p)
{
    number_t num;
    const char *u, *end;
    size_t ulen;
    int rc, e10 = 0, e2 = 0, bits = 0;
    double v;

    if ((rc = split_quantity(s, &num, &u, &ulen)) != CF_OK)
        return rc;
    end = u + ulen;
    if (ulen == 0) {
        if (unit_required)
            return CF_ERR_INVALID;
    } else {
        take_prefix(&u, end, &e10, &e2);
        if (take(&u, end, "bytes", 1) || take(&u, end, "byte", 1) || take(&u, end, "B", 0))
            bits = 0;
        else if (take(&u, end, "bits", 1) || take(&u, end, "bit", 1) || take(&u, end, "b", 0))
            bits = 1;
        else
            return CF_ERR_INVALID;
        if (!take(&u, end, "/sec", 1) && !take(&u, end, "/s", 1) && !take(&u, end, "ps", 1))
            return CF_ERR_INVALID;
        if (u != end)
            return CF_ERR_INVALID;
    }
    if ((rc = number_value(&num, e10, &v)) != CF_OK)
        return rc;
    v = ldexp(v, e2 - (bits ? 3 : 0));
    if (isinf(v))
        return CF_ERR_RANGE;
    /* Everything divides by the bandwidth. */
    if (v == 0.0)
        return CF_ERR_RANGE;
    *Bps_p = v;
    return CF_OK;
}

int cf_parse_rate(const char *s, double *bytes_per_s_p)
{
    return parse_rate(s, 0, bytes_per_s_p);
}

static int has_unit(const char *s)
{
    number_t num;
    const char *u;
    size_t ulen;
    return split_quantity(s, &num, &u, &ulen) == CF_OK && ulen > 0;
}

int cf_parse_link(const char *s, double *bytes_per_s_p, double *alpha_s_p)
{
    char part[2][128];
    const char *comma;
    double rate = 0.0, alpha = 0.0;
    int have_rate = 0, have_alpha = 0;

    if (s == NULL || (comma = strchr(s, ',')) == NULL || strchr(comma + 1, ',') != NULL)
        return CF_ERR_INVALID;
    if ((size_t)(comma - s) >= sizeof(part[0]) || strlen(comma + 1) >= sizeof(part[1]))
        return CF_ERR_INVALID;
    memcpy(part[0], s, (size_t)(comma - s));
    part[0][comma - s] = '\0';
    strcpy(part[1], comma + 1);

    for (int i = 0; i < 2; i++) {
        double v;
        if (!has_unit(part[i]))
            return CF_ERR_INVALID;
        if (!have_alpha && cf_parse_time(part[i], &v) == CF_OK) {
            alpha = v;
            have_alpha = 1;
        } else if (!have_rate) {
            int rc = parse_rate(part[i], 1, &v);
            if (rc != CF_OK)
                return rc;
            rate = v;
            have_rate = 1;
        } else {
            return CF_ERR_INVALID;
        }
    }
    if (!have_rate || !have_alpha)
        return CF_ERR_INVALID;
    *bytes_per_s_p = rate;
    *alpha_s_p = alpha;
    return CF_OK;
}

typedef struct {
    double factor;
    const char *name;
} scale_t;

static double round3(double x)
{
    double f;
    if (x == 0.0)
        return 0.0;
    f = pow(10.0, 2.0 - floor(log10(x)));
    return round(x * f) / f;
}

/* scales ascend; integral_base prints whole numbers of the base unit
 * without decimals ("512 B", not "512.00 B" or "8.00 B"). */
static char *fmt3(double v, const scale_t *sc, size_t nsc, int integral_base, char *buf,
                  size_t len)
{
    const char *sign = "";
    size_t k = 0;
    double a, x, r;
    int decimals;

    if (buf == NULL || len == 0)
        return buf;
    if (isnan(v)) {
        snprintf(buf, len, "n/a");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, len, "%sinf", v < 0 ? "-" : "");
        return buf;
    }
    if (v < 0)
        sign = "-";
    a = fabs(v);
    if (a == 0.0) {
        snprintf(buf, len, "0 %s", sc[integral_base ? 0 : nsc - 1].name);
        return buf;
    }
    while (k + 1 < nsc && a >= sc[k + 1].factor)
        k++;
    x = a / sc[k].factor;
    r = round3(x);
    /* 999.6 us must read 1.00 ms, not 1000 us. */
    if (r >= 1000.0 && k + 1 < nsc) {
        k++;
        x = a / sc[k].factor;
        r = round3(x);
    }
    /* Beyond what a unit reads well (a corrupt profile, a denormal): three
     * significant digits in scientific form, never a rounding to 0 whose
     * logarithm would overflow the decimals. */
    if (!(r >= 1e-3) || r >= 1e6) {
        snprintf(buf, len, "%s%.3g %s", sign, x, sc[k].name);
        return buf;
    }
    if (r >= 100.0)
        decimals = 0;
    else if (r >= 10.0)
        decimals = 1;
    else if (r >= 1.0)
        decimals = 2;
    else {
        decimals = 2 - (int)floor(log10(r));
        if (decimals > 12)
            decimals = 12;
    }
    if (integral_base && k == 0 && x == floor(x)) {
        r = x;
        decimals = 0;
    }
    snprintf(buf, len, "%s%.*f %s", sign, decimals, r, sc[k].name);
    return buf;
}

char *cf_fmt_time(double seconds, char *buf, size_t len)
{
    static const scale_t sc[] = {{1e-9, "ns"}, {1e-6, "us"}, {1e-3, "ms"}, {1.0, "s"}};
    return fmt3(seconds, sc, CF_ARRAY_LEN(sc), 0, buf, len);
}

char *cf_fmt_size(double bytes, char *buf, size_t len)
{
    static const scale_t sc[] = {{1.0, "B"}, {1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}};
    return fmt3(bytes, sc, CF_ARRAY_LEN(sc), 1, buf, len);
}

char *cf_fmt_rate(double Bps, char *buf, size_t len)
{
    static const scale_t sc[] = {
        {1.0, "B/s"}, {1e3, "kB/s"}, {1e6, "MB/s"}, {1e9, "GB/s"}, {1e12, "TB/s"}};
    return fmt3(Bps, sc, CF_ARRAY_LEN(sc), 1, buf, len);
}

char *cf_fmt_pct(double v, int sign, char *buf, size_t len)
{
    if (isfinite(v))
        snprintf(buf, len, sign ? "%+.1f%%" : "%.1f%%", 100.0 * v);
    else
        snprintf(buf, len, "-");
    return buf;
}
