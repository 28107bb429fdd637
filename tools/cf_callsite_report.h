/* commfit report --by-callsite: the profile's call sites, as mpiP shows
 * them, with function, file and line from the binaries' DWARF (addr2line,
 * one run per module); symbol + offset, then module + offset, where there
 * is none or the binary is gone. */
#ifndef CF_TOOLS_CALLSITE_H
#define CF_TOOLS_CALLSITE_H

#include <stdio.h>

#include <jansson.h>

#include "cf_profile.h"

/* Each returns CF_OK, or an error after a message on stderr. */
int cf_callsite_text(FILE *out, const cf_profile_t *p);
int cf_callsite_csv(FILE *out, const cf_profile_t *p);
/* Sets "callsites" of root: null when the profile has none. */
int cf_callsite_json(json_t *root, const cf_profile_t *p);

#endif
