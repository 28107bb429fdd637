/* A figure of this process from /proc/self/status, in kB ("VmRSS:",
 * "VmHWM:"); -1 when it cannot be read.  For the test and bench programs. */
#ifndef CF_TEST_STATUS_KB_H
#define CF_TEST_STATUS_KB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0)
            kb = atol(line + n);
    if (f)
        fclose(f);
    return kb;
}

#endif
