/* Parsing and printing of times, sizes and rates.
 *
 * Decimal prefixes are decimal (1 MB = 1e6 B, 1 GB/s = 1e9 B/s); binary
 * prefixes only when written (KiB = 1024 B).  Rates accept bits (b, bit)
 * and bytes (B, byte): 400Gb/s is 50e9 B/s.  A plain number is the base
 * unit: seconds, bytes, bytes per second.  Parsing does not depend on the
 * process locale, so the plugin may parse inside any application. */
#ifndef CF_UNITS_H
#define CF_UNITS_H

#include <stddef.h>
#include "cf_common.h"

/* All return CF_OK, CF_ERR_INVALID (empty, negative, NaN, unknown unit,
 * trailing text) or CF_ERR_RANGE (overflow; a zero rate). */
CF_HIDDEN int cf_parse_time(const char *s, double *seconds_p);
CF_HIDDEN int cf_parse_size(const char *s, double *bytes_p);
CF_HIDDEN int cf_parse_rate(const char *s, double *bytes_per_s_p);
/* "400Gb/s,5us" or "5us,400Gb/s": one rate and one time, both with units. */
CF_HIDDEN int cf_parse_link(const char *s, double *bytes_per_s_p, double *alpha_s_p);

/* Human text listing the accepted forms, for error messages. */
CF_HIDDEN extern const char cf_units_time_forms[];
CF_HIDDEN extern const char cf_units_size_forms[];
CF_HIDDEN extern const char cf_units_rate_forms[];
CF_HIDDEN extern const char cf_units_link_forms[];

/* Three significant digits with a decimal unit: "45.0 us", "5.04 us",
 * "1.00 MB", "125 kB", "25.0 GB/s".  Infinity prints as "inf", NaN as "n/a".
 * Return buf (truncated output when len is too small). */
CF_HIDDEN char *cf_fmt_time(double seconds, char *buf, size_t len);
CF_HIDDEN char *cf_fmt_size(double bytes, char *buf, size_t len);
CF_HIDDEN char *cf_fmt_rate(double Bps, char *buf, size_t len);
/* A share as a percentage with one decimal, "12.5%" ("+12.5%" with sign,
 * for a change); "-" where v is not finite. */
CF_HIDDEN char *cf_fmt_pct(double v, int sign, char *buf, size_t len);

/* Big enough for any cf_fmt_* result. */
#define CF_FMT_LEN 32

#endif
