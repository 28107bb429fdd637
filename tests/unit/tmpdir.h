/* A temporary directory for a cmocka group of tests: made in setup (under
 * $TMPDIR or /tmp), removed with its contents in teardown. */
#ifndef CF_TEST_TMPDIR_H
#define CF_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

static char tmpdir[256];

static int tmpdir_setup(const char *name)
{
    snprintf(tmpdir, sizeof(tmpdir), "%s/cf-test-%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd);
}

#endif
