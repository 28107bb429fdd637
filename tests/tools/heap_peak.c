/* LD_PRELOAD=heap_peak.so HEAP_PEAK_OUT=FILE COMMAND...: counts the bytes
 * the command holds in malloc's blocks (each block's usable size, from its
 * allocation to its free) and writes the largest total it reached to FILE
 * at exit ("123456\n").  Unlike the resident memory, the figure does not
 * depend on the kernel, the libraries' pages or the machine's load: the
 * same binary on the same input gives the same number on every run, so a
 * test can hold it to a ceiling.  glibc only (its __libc_ entries). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static size_t cur, peak;

static void *note(void *p)
{
    if (p != NULL) {
        size_t now = __atomic_add_fetch(&cur, malloc_usable_size(p), __ATOMIC_RELAXED);
        size_t was = __atomic_load_n(&peak, __ATOMIC_RELAXED);
        while (now > was && !__atomic_compare_exchange_n(&peak, &was, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    return p;
}

static void unnote(void *p)
{
    if (p != NULL)
        __atomic_sub_fetch(&cur, malloc_usable_size(p), __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    return note(__libc_malloc(n));
}

void *calloc(size_t n, size_t size)
{
    return note(__libc_calloc(n, size));
}

void *realloc(void *p, size_t n)
{
    /* counted as a free and a new block: realloc may move it */
    size_t old = p != NULL ? malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, n);
    if (q == NULL && !(p != NULL && n == 0))
        return NULL; /* p is as it was */
    __atomic_sub_fetch(&cur, old, __ATOMIC_RELAXED);
    return note(q);
}

void free(void *p)
{
    unnote(p);
    __libc_free(p);
}

void *memalign(size_t align, size_t n)
{
    return note(__libc_memalign(align, n));
}

void *aligned_alloc(size_t align, size_t n)
{
    return note(__libc_memalign(align, n));
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = note(__libc_memalign(align, n));
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

/* the command's own figure: not its children's (addr2line), which
 * inherit LD_PRELOAD but not the file */
static char out_path[4096];
static pid_t out_pid;

__attribute__((constructor)) static void heap_peak_start(void)
{
    const char *path = getenv("HEAP_PEAK_OUT");
    if (path == NULL || strlen(path) >= sizeof(out_path))
        return;
    strcpy(out_path, path);
    out_pid = getpid();
    unsetenv("HEAP_PEAK_OUT");
}

__attribute__((destructor)) static void heap_peak_write(void)
{
    char buf[32];
    if (out_path[0] == '\0' || getpid() != out_pid)
        return;
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    int len = snprintf(buf, sizeof(buf), "%zu\n", __atomic_load_n(&peak, __ATOMIC_RELAXED));
    if (write(fd, buf, (size_t)len) != len)
        perror("heap_peak");
    close(fd);
}
