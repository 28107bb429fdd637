/* The merge of spooled parts, case after case in one process, for
 * tests/tools/fuzz_merge.sh:  fuzz_merge OUTDIR SPOOL...
 * Each spool is merged as `commfit merge` does; a profile that comes out is
 * written to OUTDIR/<n>.json and read back with the profile's own reader,
 * which must take it.  Every allocation of the merge (malloc, calloc and
 * realloc are wrapped at link time) is held to what the spool's files
 * justify: 8 times their bytes, and 1 MiB.  Prints one line per case
 * ("<n> <rc> <spool>"); exits 1 at the first case that breaks a rule. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cf_profile.h"
#include "cf_spool.h"

static size_t fuzz_limit = (size_t)-1, fuzz_largest;
static const char *fuzz_case = "";

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);

static void fuzz_check(size_t n)
{
    if (n > fuzz_largest)
        fuzz_largest = n;
    if (n > fuzz_limit) {
        fprintf(stderr, "FAIL: %s: an allocation of %zu bytes, more than the files justify (%zu)\n", fuzz_case, n,
                fuzz_limit);
        exit(1);
    }
}

void *__wrap_malloc(size_t n)
{
    fuzz_check(n);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    if (m && n > (size_t)-1 / m)
        fuzz_check((size_t)-1);
    fuzz_check(n * m);
    return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    fuzz_check(n);
    return __real_realloc(p, n);
}

/* Bytes of the regular files in dir and its subdirectories (one level). */
static uint64_t fuzz_bytes(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    uint64_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[4200];
        struct stat st;
        if (e->d_name[0] == '.' || snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
            lstat(path, &st) != 0)
            continue;
        if (S_ISREG(st.st_mode))
            n += (uint64_t)st.st_size;
        else if (S_ISDIR(st.st_mode) && depth == 0)
            n += fuzz_bytes(path, 1);
    }
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz_merge OUTDIR SPOOL...\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        char err[600], note[128], out[4200];
        cf_profile_t p;
        fuzz_case = argv[i];
        uint64_t bytes = fuzz_bytes(argv[i], 0);
        fuzz_limit = (size_t)(8 * bytes + (1u << 20));
        fuzz_largest = 0;
        int rc = cf_spool_merge(argv[i], 0, &p, NULL, note, sizeof(note), err, sizeof(err));
        fuzz_limit = (size_t)-1;
        if (rc == CF_OK) {
            snprintf(out, sizeof(out), "%s/%d.json", argv[1], i - 1);
            if (cf_profile_write(&p, out, err, sizeof(err)) != CF_OK) {
                fprintf(stderr, "FAIL: %s: the merged profile cannot be written: %s\n", argv[i], err);
                return 1;
            }
            cf_profile_free(&p);
            if (cf_profile_read(out, &p, err, sizeof(err)) != CF_OK) {
                fprintf(stderr, "FAIL: %s: the reader refuses the merged profile %s: %s\n", argv[i], out, err);
                return 1;
            }
            cf_profile_free(&p);
        }
        printf("%d %d %zu %llu %s\n", i - 1, rc, fuzz_largest, (unsigned long long)bytes, argv[i]);
    }
    return 0;
}
