/* The UCX layer's operation names and kinds (cf_runtime.h), apart from the
 * layer's wrappers (cf_ucx.c): the core names an operation of any layer
 * (cf_layer_op_name) without pointing at a module. */
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
