/* commfit report, text (report_text.c): what `commfit report` prints by
 * default, and its top, which the HTML page shows too. */
#ifndef CF_TOOLS_REPORT_TEXT_H
#define CF_TOOLS_REPORT_TEXT_H

#include <stdio.h>

#include "cf_analysis.h"

/* The text report's header, VERDICT and FUSION ADVICE. */
void cf_report_text_top(FILE *out, const cf_analysis_t *a, const char *path);

/* The whole text report of the profile at path to stdout: the top, then the
 * tables; with by_region, matrix, by_callsite their tables too.  CF_OK, or
 * an error after a message on stderr. */
int cf_report_text(const cf_analysis_t *a, const char *path, int by_region, int matrix, int by_callsite);

#endif
