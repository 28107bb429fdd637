/* The library's protocol limits (cf_protocol.c). */
#ifndef CF_PROTOCOL_H
#define CF_PROTOCOL_H

#include "cf_module.h"

/* The "protocol" section on rank 0: {"source", "limits": [{"name", "bytes",
 * "path", "what"}]} with the limits found among the list's control
 * variables (none under a library that declares none); NULL when the tool
 * interface cannot start, on the other ranks and with COMMFIT_PROTOCOL=0.
 * Local, not collective: read before PMPI_Finalize. */
CF_HIDDEN json_t *cf_protocol_section(const cf_fin_t *f);

#endif
