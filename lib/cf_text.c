/* Showable text (cf_text.h). */
#include "cf_text.h"

size_t cf_text_char(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n;
    unsigned cp;
    if (u[0] >= 0x20 && u[0] < 0x7f)
        return 1;
    if (u[0] >= 0xc2 && u[0] <= 0xdf)
        n = 2, cp = u[0] & 0x1fu;
    else if (u[0] >= 0xe0 && u[0] <= 0xef)
        n = 3, cp = u[0] & 0x0fu;
    else if (u[0] >= 0xf0 && u[0] <= 0xf4)
        n = 4, cp = u[0] & 0x07u;
    else
        return 0; /* a control, DEL, a continuation byte, or no UTF-8 lead */
    for (size_t i = 1; i < n; i++) {
        if ((u[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (u[i] & 0x3fu);
    }
    /* overlong forms, surrogates, past U+10FFFF, and the C1 controls */
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ||
        (cp >= 0x80 && cp <= 0x9f))
        return 0;
    return n;
}

void cf_text_copy(char *dst, size_t len, const char *src)
{
    size_t o = 0;
    if (len == 0)
        return;
    while (*src) {
        size_t n = cf_text_char(src);
        if (n == 0) {
            if (o + 1 >= len)
                break;
            dst[o++] = '?';
            src++;
            continue;
        }
        if (o + n >= len)
            break;
        for (size_t i = 0; i < n; i++)
            dst[o++] = src[i];
        src += n;
    }
    dst[o] = '\0';
}

int cf_text_printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = cf_text_char(s + i);
        if (k == 0 || i + k > n)
            return 0;
        i += k;
    }
    return 1;
}
