/* The calls that returned an error (cf_fail, cf_runtime.h, counts them
 * per thread by operation and error class), summed over the ranks into
 * the profile's "failed_calls" section. */
#include <stdio.h>
#include <stdlib.h>
#include "cf_coll.h"
#include "cf_failed.h"
#include "cf_output.h"

/* The profile's "failed_calls" section: the calls that returned an error,
 * summed over ranks by operation and error class, [{op, class, calls}]
 * (op "other": beyond the kinds a thread keeps, CF_FAILS).  Collective:
 * the union of (op, class) keys, then their counts reduced to rank 0. */
json_t *cf_failed_section(const cf_fin_t *fin)
{
    if (!fin->failed_calls)
        return NULL; /* agreed: the sum over the ranks */
    uint32_t nthreads = cf_thread_count();
    uint64_t *keys = malloc(((size_t)nthreads * CF_FAILS + 1) * sizeof(uint64_t)), none = 0;
    size_t n = 0, nu = 0;
    int overflow = 0;
    for (uint32_t i = 0; keys && i < nthreads; i++)
        for (unsigned j = 0; j < CF_FAILS; j++) {
            const cf_fail_t *f = &cf_thread_at(i)->fail[j];
            if (f->calls) /* nonzero: op 0 class 0 is a key too */
                keys[n++] = UINT64_C(1) << 40 | (uint64_t)f->op << 16 | f->cls;
        }
    uint64_t *u = cf_union_keys(keys ? keys : &none, keys ? n : 0, (uint32_t)cf_g.world_size * CF_FAILS + CF_FAILS,
                                &nu, &overflow);
    free(keys);
    uint64_t *calls = u ? calloc(nu ? nu : 1, sizeof(uint64_t)) : NULL;
    if (!u || !cf_all_ok(calls != NULL)) {
        free(u);
        free(calls);
        return NULL;
    }
    for (uint32_t i = 0; i < nthreads; i++)
        for (unsigned j = 0; j < CF_FAILS; j++) {
            const cf_fail_t *f = &cf_thread_at(i)->fail[j];
            uint64_t k = UINT64_C(1) << 40 | (uint64_t)f->op << 16 | f->cls;
            for (size_t m = 0; f->calls && m < nu; m++)
                if (u[m] == k)
                    calls[m] += f->calls;
        }
    if (cf_g.world_rank == 0)
        PMPI_Reduce(MPI_IN_PLACE, calls, (int)nu, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    else
        PMPI_Reduce(calls, NULL, (int)nu, MPI_UINT64_T, MPI_SUM, 0, cf_g.tool_comm);
    json_t *arr = cf_g.world_rank == 0 ? json_array() : NULL;
    for (size_t m = 0; arr && m < nu; m++) {
        unsigned op = (unsigned)(u[m] >> 16 & 0xffffu), cls = (unsigned)(u[m] & 0xffffu);
        char buf[32];
        const char *cname = cf_error_class_name((int)cls);
        if (!cname) {
            snprintf(buf, sizeof(buf), op ? "class %u" : "other", cls);
            cname = buf;
        }
        json_array_append_new(arr, json_pack("{s:s, s:s, s:I}", "op", op && op < CF_OP_COUNT ? cf_op_names[op] : "other",
                                             "class", cname, "calls", (json_int_t)calls[m]));
    }
    free(u);
    free(calls);
    return arr;
}
