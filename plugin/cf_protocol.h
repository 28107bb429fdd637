/* The library's protocol limits (cf_protocol.c). */
#ifndef CF_PROTOCOL_H
#define CF_PROTOCOL_H

#include <jansson.h>
#include "cf_common.h"

/* The "protocol" section: {"source", "limits": [{"name", "bytes", "path",
 * "what"}]} with the limits found among the list's control variables
 * (none under a library that declares none); NULL when the tool interface
 * cannot start.  Local, not collective: call on rank 0 before
 * PMPI_Finalize. */
CF_HIDDEN json_t *cf_protocol_section(void);

#endif
