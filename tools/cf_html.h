/* commfit report --format html: one self-contained page.
 *
 * The page carries the report's JSON (cf_analysis_to_json), the text of the
 * header, VERDICT and FUSION ADVICE exactly as the text report prints them,
 * and, under "html", what the charts draw that the JSON does not list
 * point by point: the fitted model evaluated along each fit's sizes, per
 * segment (cf_fit_predict), and MPI time per rank aggregated for large
 * jobs.  The page's script only draws these numbers; it fits nothing.
 * Chart.js (found by configure) and the page's own script and style are
 * inlined; a Content-Security-Policy forbids every load from outside. */
#ifndef CF_TOOLS_HTML_H
#define CF_TOOLS_HTML_H

#include <stdio.h>

#include "cf_analysis.h"

/* 1 when the build has the charting library to inline. */
int cf_html_available(void);

/* Writes the page for analysis a of the profile at path.  CF_OK,
 * CF_ERR_NOMEM, CF_ERR_IO. */
int cf_report_html(FILE *out, const cf_analysis_t *a, const char *path);

/* Ranks drawn one by one up to this many; beyond, quantiles, a histogram
 * and the ranks at both ends. */
#define CF_HTML_RANKS_ALL 64
#define CF_HTML_RANKS_EDGE 8
/* Fits drawn, in the report's order (joint fits, then by time). */
#define CF_HTML_MAX_FITS 48
/* The communication matrix drawn as at most this many blocks of ranks a side. */
#define CF_HTML_MATRIX_CELLS 128
/* Heat maps of single communicators (and of the UCX share), the busiest first. */
#define CF_HTML_MATRIX_MAPS 8

#endif
