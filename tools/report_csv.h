/* commfit report --format csv (report_csv.c), to stdout. */
#ifndef CF_TOOLS_REPORT_CSV_H
#define CF_TOOLS_REPORT_CSV_H

#include "cf_analysis.h"

/* One row per fit and per size bin (column "row": fit or bin), then the
 * wire and hop rows of a profile with UCX records. */
void cf_report_csv(const cf_analysis_t *a);

/* --matrix: every pair as src,dst,messages,bytes,comm,comm_name,source.
 * CF_OK, or an error after a message on stderr. */
int cf_report_csv_matrix(const cf_analysis_t *a);

#endif
