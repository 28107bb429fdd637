/* The end-of-run summary that rank 0 prints, from the profile it wrote. */
#ifndef CF_SUMMARY_H
#define CF_SUMMARY_H

#include <stdio.h>
#include "cf_profile.h"

void cf_summary_print(const cf_profile_t *p, FILE *out);

#endif
