/* commfit model, text (model.h). */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cf_common.h"
#include "cf_fit.h"
#include "cf_units.h"

void cf_model_text(const model_opts_t *o, const model_row_t *rows)
{
    const char *formula = cf_model_formula(o->op, o->algo);
    char b1[CF_FMT_LEN], b2[CF_FMT_LEN], b3[CF_FMT_LEN];
    int p2p = o->op == CF_COLL_P2P;

    if (p2p)
        printf("%-11s%s (T = alpha + M/B)\n", "model", "p2p");
    else
        printf("%-11s%s, %s, p = %d (T = %s%s)\n", "model", cf_coll_name(o->op), o->algo, o->p,
               formula, strstr(formula, "gamma") ? "; gamma = 0" : "");
    printf("%-11salpha %s, B %s\n", "link", cf_fmt_time(o->alpha, b1, sizeof(b1)),
           cf_fmt_rate(o->B, b2, sizeof(b2)));

    for (int i = 0; i < o->nsizes; i++) {
        const model_row_t *r = &rows[i];
        char pct[32];

        if (i > 0)
            putchar('\n');
        printf("%-11s%s\n", "size", cf_fmt_size(r->n, b1, sizeof(b1)));
        printf("%-11s%-10s(startup %s + payload %s)\n", "time",
               cf_fmt_time(r->time, b1, sizeof(b1)), cf_fmt_time(r->startup, b2, sizeof(b2)),
               cf_fmt_time(r->payload, b3, sizeof(b3)));
        if (isnan(r->share))
            snprintf(pct, sizeof(pct), "n/a");
        else
            snprintf(pct, sizeof(pct), "%.1f %%", 100.0 * r->share);
        printf("%-11s%-10s-> %s\n", "startup", pct, cf_verdict(r->share));
        if (isinf(r->n_half))
            printf("%-11s%-10s(the payload time never reaches the startup)\n", "n_half",
                   "none");
        else
            printf("%-11s%-10s(startup = payload time at this size)\n", "n_half",
                   cf_fmt_size(r->n_half, b1, sizeof(b1)));
        if (r->n == 0)
            continue; /* no payload, no bandwidth figures */
        if (p2p) {
            printf("%-11s%s of %s\n", "rate", cf_fmt_rate(r->algbw, b1, sizeof(b1)),
                   cf_fmt_rate(o->B, b2, sizeof(b2)));
        } else {
            printf("%-11s%s\n", "algbw", cf_fmt_rate(r->algbw, b1, sizeof(b1)));
            printf("%-11s%s of %s (factor %.3g)\n", "busbw",
                   cf_fmt_rate(r->busbw, b1, sizeof(b1)), cf_fmt_rate(o->B, b2, sizeof(b2)),
                   r->factor);
            printf("%-11s%-10s(lower bound over all algorithms)\n", "bound",
                   cf_fmt_time(r->bound, b1, sizeof(b1)));
        }
    }
}
