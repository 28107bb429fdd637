/* Names a program gives (MPI_Comm_set_name, MPI_Pcontrol regions) as text
 * that reports can show: printable ASCII and valid UTF-8 kept, anything
 * else (control characters, C1 controls, bytes that are not UTF-8) made
 * '?'.  The JSON writer refuses strings that are not UTF-8. */
#ifndef CF_TEXT_H
#define CF_TEXT_H

#include <stddef.h>
#include "cf_common.h"

/* Bytes of the character at s that a report can show (1 to 4); 0 when s
 * starts with a control character or with bytes that are not UTF-8. */
CF_HIDDEN size_t cf_text_char(const char *s);

/* src into dst (len bytes, NUL-terminated, cut at a character): what
 * cf_text_char takes kept, every other byte '?'. */
CF_HIDDEN void cf_text_copy(char *dst, size_t len, const char *src);

/* 1 when the n bytes at s are characters cf_text_char takes. */
CF_HIDDEN int cf_text_printable(const char *s, size_t n);

#endif
