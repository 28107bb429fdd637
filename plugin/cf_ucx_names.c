/* The UCX layer's operation names and kinds (cf_runtime.h), apart from the
 * layer's wrappers (cf_ucx.c): the core names an operation of any layer
 * (cf_layer_op_name) without pointing at a module.  Beside them, what the
 * generated wrappers test inline (cf_ucx_calls.h): the switch and the next
 * definition of each UCP function. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "cf_ucx_calls.h"
#include "cf_runtime.h"

const char *const cf_ucx_op_names[] = {
    "none",
#define CF_X(name, kind) #name,
    CF_UCX_OPS(CF_X)
#undef CF_X
};
const char *const cf_ucx_op_kinds[] = {
    "other",
#define CF_X(name, kind) kind,
    CF_UCX_OPS(CF_X)
#undef CF_X
};
const unsigned cf_ucx_op_count = CF_UCX_OP_COUNT;
_Static_assert(CF_UCX_OP_COUNT <= 128, "the record key holds 7 bits of operation");

/* ---- the functions the layer forwards to, resolved once (cf_ucx_calls.h) ---- */
static const char *const cf_ucx_fn_names[CF_UCX_FN_COUNT] = {
#define CF_X(name, kind) #name,
    CF_UCX_OPS(CF_X)
#undef CF_X
#define CF_X(name) #name,
    CF_UCX_HELPERS(CF_X)
#undef CF_X
};
void *_Atomic cf_ucx_fn[CF_UCX_FN_COUNT];
_Atomic int cf_ucx_on;

void *cf_ucx_resolve(unsigned i)
{
    void *f = dlsym(RTLD_NEXT, cf_ucx_fn_names[i]);
    if (!f) {
        /* components opened with RTLD_LOCAL: their libucp is not in our scope */
        void *h = dlopen("libucp.so.0", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = dlsym(h, cf_ucx_fn_names[i]);
            dlclose(h);
        }
    }
    if (f)
        atomic_store_explicit(&cf_ucx_fn[i], f, memory_order_release);
    return f;
}
