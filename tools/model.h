/* commfit model: its options and rows (cmd_model.c parses and computes
 * them) and its two formats, text (model_text.c) and JSON (model_json.c). */
#ifndef CF_TOOLS_MODEL_H
#define CF_TOOLS_MODEL_H

#include "cf_models.h"

#define MAX_SIZES 256

typedef struct {
    double alpha, B;
    cf_coll_t op;
    const char *algo; /* canonical */
    int p;
    double n[MAX_SIZES];
    int nsizes;
    int json;
} model_opts_t;

typedef struct {
    double n, time, startup, payload, share, n_half, algbw, busbw, factor, bound;
} model_row_t;

/* To stdout. */
void cf_model_text(const model_opts_t *o, const model_row_t *rows);
/* To stdout; 0, or -1 when out of memory. */
int cf_model_json(const model_opts_t *o, const model_row_t *rows);

#endif
