/* commfit model --json (model.h). */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cf_common.h"
#include "cf_fit.h"

/* JSON has no infinity or NaN: those become null. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *row_json(const model_opts_t *o, const model_row_t *r)
{
    json_t *j = json_object();
    if (j == NULL)
        return NULL;
    if (json_object_set_new(j, "op", json_string(cf_coll_name(o->op))) ||
        json_object_set_new(j, "ranks", json_integer(o->p)) ||
        json_object_set_new(j, "algo", json_string(o->algo)) ||
        json_object_set_new(j, "alpha_s", num(o->alpha)) ||
        json_object_set_new(j, "bandwidth_Bps", num(o->B)) ||
        json_object_set_new(j, "size_bytes", num(r->n)) ||
        json_object_set_new(j, "time_s", num(r->time)) ||
        json_object_set_new(j, "startup_s", num(r->startup)) ||
        json_object_set_new(j, "payload_s", num(r->payload)) ||
        json_object_set_new(j, "startup_share", num(r->share)) ||
        json_object_set_new(j, "n_half_bytes", num(r->n_half)) ||
        json_object_set_new(j, "verdict", json_string(cf_verdict(r->share))) ||
        json_object_set_new(j, "algbw_Bps", num(r->algbw)) ||
        json_object_set_new(j, "busbw_Bps", num(r->busbw)) ||
        json_object_set_new(j, "busbw_factor", num(r->factor)) ||
        json_object_set_new(j, "lower_bound_s", num(r->bound))) {
        json_decref(j);
        return NULL;
    }
    return j;
}

int cf_model_json(const model_opts_t *o, const model_row_t *rows)
{
    json_t *root;
    char *text;

    if (o->nsizes == 1) {
        root = row_json(o, &rows[0]);
    } else {
        root = json_array();
        for (int i = 0; root != NULL && i < o->nsizes; i++) {
            json_t *j = row_json(o, &rows[i]);
            if (j == NULL || json_array_append_new(root, j) != 0) {
                json_decref(root);
                root = NULL;
            }
        }
    }
    if (root == NULL)
        return -1;
    text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    json_decref(root);
    if (text == NULL)
        return -1;
    puts(text);
    free(text);
    return 0;
}
