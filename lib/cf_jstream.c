/* The pull reader of cf_jstream.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cf_jstream.h"

/* jansson's own limit on nesting, counted over the whole document */
#define CF_JIN_MAX_DEPTH 2048
#define CF_JIN_BLOCK (256 * 1024)

struct cf_jin {
    int fd;
    char *buf;
    size_t cap, len, pos; /* buf[pos, len) is read and not consumed */
    int eof, depth;
};

cf_jin_t *cf_jin_new(int fd)
{
    cf_jin_t *in = calloc(1, sizeof(*in));
    if (in == NULL || (in->buf = malloc(CF_JIN_BLOCK)) == NULL) {
        free(in);
        return NULL;
    }
    in->fd = fd;
    in->cap = CF_JIN_BLOCK;
    in->depth = 0;
    return in;
}

void cf_jin_free(cf_jin_t *in)
{
    if (in != NULL)
        free(in->buf);
    free(in);
}

void cf_jin_set_depth(cf_jin_t *in, int depth)
{
    in->depth = depth;
}

/* Makes buf[pos + k] readable: moves what is not consumed to the start,
 * grows the window when it is full, reads.  0 at the end of the file. */
static int cf_jin_have(cf_jin_t *in, size_t k)
{
    while (in->pos + k >= in->len) {
        if (in->eof)
            return 0;
        if (in->pos > 0) {
            memmove(in->buf, in->buf + in->pos, in->len - in->pos);
            in->len -= in->pos;
            in->pos = 0;
        }
        if (in->len == in->cap) {
            char *b = realloc(in->buf, in->cap * 2);
            if (b == NULL)
                return 0;
            in->buf = b;
            in->cap *= 2;
        }
        ssize_t n = read(in->fd, in->buf + in->len, in->cap - in->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            in->eof = 1;
        else
            in->len += (size_t)n;
    }
    return 1;
}

static int cf_jin_blank(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int cf_jin_peek(cf_jin_t *in)
{
    for (;;) {
        if (!cf_jin_have(in, 0))
            return -1;
        int c = (unsigned char)in->buf[in->pos];
        if (!cf_jin_blank(c))
            return c;
        in->pos++;
    }
}

int cf_jin_accept(cf_jin_t *in, int c)
{
    if (cf_jin_peek(in) != c)
        return 0;
    in->pos++;
    return 1;
}

int cf_jin_more(cf_jin_t *in, int close, int *first)
{
    if (cf_jin_accept(in, close)) {
        *first = 0;
        return 0;
    }
    if (*first) {
        *first = 0;
        return cf_jin_peek(in) < 0 ? -1 : 1;
    }
    return cf_jin_accept(in, ',') ? 1 : -1;
}

/* The length of the value at pos, found by its brackets and quotes (what
 * is inside is jansson's to check); 0 when the file ends inside it. */
static size_t cf_jin_extent(cf_jin_t *in, int *maxdepth)
{
    size_t k = 0;
    int depth = 0, str = 0, esc = 0;
    *maxdepth = 0;
    int c0 = (unsigned char)in->buf[in->pos];
    if (c0 != '{' && c0 != '[' && c0 != '"') {
        /* a number or a literal ends at a separator, a close, a blank or the end */
        while (cf_jin_have(in, k)) {
            int c = (unsigned char)in->buf[in->pos + k];
            if (c == ',' || c == ']' || c == '}' || c == ':' || cf_jin_blank(c))
                break;
            k++;
        }
        return k;
    }
    for (;; k++) {
        if (!cf_jin_have(in, k))
            return 0;
        int c = (unsigned char)in->buf[in->pos + k];
        if (str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"' && (str = 0, depth == 0))
                return k + 1;
        } else if (c == '"') {
            str = 1;
        } else if (c == '{' || c == '[') {
            if (++depth > *maxdepth)
                *maxdepth = depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            return k + 1;
        }
    }
}

json_t *cf_jin_value(cf_jin_t *in, size_t flags)
{
    json_error_t jerr;
    int maxdepth;
    if (cf_jin_peek(in) < 0)
        return NULL;
    size_t n = cf_jin_extent(in, &maxdepth);
    if (n == 0 || in->depth + maxdepth > CF_JIN_MAX_DEPTH)
        return NULL;
    json_t *v = json_loadb(in->buf + in->pos, n, flags | JSON_DECODE_ANY, &jerr);
    in->pos += n;
    return v;
}

int cf_jin_skip(cf_jin_t *in)
{
    int maxdepth;
    if (cf_jin_peek(in) < 0)
        return 0;
    size_t n = cf_jin_extent(in, &maxdepth);
    in->pos += n;
    return n > 0;
}
