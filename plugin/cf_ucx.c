/* The UCX layer: UCP calls beneath MPI.  Placeholder: no call wrapped yet. */
#include "cf_runtime.h"

const char *const cf_ucx_op_names[] = {"none"};
const char *const cf_ucx_op_kinds[] = {"other"};
const unsigned cf_ucx_op_count = 1;
