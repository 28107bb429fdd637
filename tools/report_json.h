/* commfit report --format json (report_json.c), to stdout. */
#ifndef CF_TOOLS_REPORT_JSON_H
#define CF_TOOLS_REPORT_JSON_H

#include "cf_analysis.h"

/* The report's JSON, with "callsites" when by_callsite.  CF_OK,
 * CF_ERR_NOMEM, CF_ERR_IO, or an error of the call sites after a message. */
int cf_report_json(const cf_analysis_t *a, int by_callsite);

#endif
