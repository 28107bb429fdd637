/* commfit report --format json: the analysis' JSON (cf_analysis_to_json),
 * with the call sites when asked, dumped as it is written (report_json.h). */
#include "report_json.h"

#include <stdio.h>

#include <jansson.h>

#include "cf_callsite_report.h"
#include "cf_common.h"

int cf_report_json(const cf_analysis_t *a, int by_callsite)
{
    json_t *root = cf_analysis_to_json(a);
    int rc;

    if (root == NULL)
        return CF_ERR_NOMEM;
    if (by_callsite && (rc = cf_callsite_json(root, cf_analysis_profile(a))) != CF_OK) {
        json_decref(root);
        return rc;
    }
    /* written as it is dumped: not one string of the whole report beside the tree */
    rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) == 0 &&
                 putchar('\n') != EOF
             ? CF_OK
             : CF_ERR_IO;
    json_decref(root);
    return rc;
}
