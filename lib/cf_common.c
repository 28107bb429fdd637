#include <string.h>
#include <unistd.h>
#include "cf_common.h"

const char *cf_status_str(int status)
{
    switch (status) {
    case CF_OK: return "success";
    case CF_ERR_INVALID: return "invalid argument";
    case CF_ERR_NOMEM: return "out of memory";
    case CF_ERR_IO: return "input/output error";
    case CF_ERR_FORMAT: return "malformed profile";
    case CF_ERR_VERSION: return "unsupported profile version";
    case CF_ERR_RANGE: return "value out of range";
    case CF_ERR_NODATA: return "not enough data";
    case CF_ERR_UNSUPPORTED: return "not supported";
    }
    return "unknown status";
}

size_t cf_strlcpy(char *dst, const char *src, size_t len)
{
    size_t n = strlen(src);
    if (len) {
        size_t k = n < len - 1 ? n : len - 1;
        memcpy(dst, src, k);
        dst[k] = 0;
    }
    return n;
}

void cf_path_absolute(char *buf, size_t len)
{
    char cwd[4096];
    size_t n = strlen(buf);
    if (!n || buf[0] == '/' || !getcwd(cwd, sizeof(cwd)))
        return;
    size_t c = strlen(cwd);
    if (c + n + 2 > len)
        return;
    memmove(buf + c + 1, buf, n + 1);
    memcpy(buf, cwd, c);
    buf[c] = '/';
}
