/* A pull reader over a JSON text in a file: the structure ({ "key": ..., [
 * ..., ]) read a token at a time, each value the caller asks for parsed on
 * its own by jansson.  A reader walks a large array element by element and
 * holds one element's tree at a time, never the whole document's.  Only
 * the window of the file holding the current value is kept in memory. */
#ifndef CF_JSTREAM_H
#define CF_JSTREAM_H

#include <jansson.h>

typedef struct cf_jin cf_jin_t;

/* Reads fd (not closed by cf_jin_free); NULL when out of memory. */
cf_jin_t *cf_jin_new(int fd);
void cf_jin_free(cf_jin_t *in);

/* The next byte that is not white space, not consumed; -1 at the end of
 * the file or on a read error. */
int cf_jin_peek(cf_jin_t *in);

/* Consumes c after white space: 1; 0 (nothing consumed) when the next
 * byte is not c. */
int cf_jin_accept(cf_jin_t *in, int c);

/* Inside an array or object opened with '[' or '{' (close: ']' or '}'):
 * 1 when another member follows (its separator consumed), 0 at the close
 * (consumed), -1 on anything else.  *first starts at 1. */
int cf_jin_more(cf_jin_t *in, int close, int *first);

/* The next whole value (object, array, string, number, literal), parsed
 * with flags (JSON_DECODE_ANY is added); NULL when it is not valid JSON,
 * when the file ends inside it, or when it nests deeper than jansson
 * would read the whole document. */
json_t *cf_jin_value(cf_jin_t *in, size_t flags);

/* Consumes the next value without parsing it (a document already checked):
 * 1; 0 when the file ends inside it. */
int cf_jin_skip(cf_jin_t *in);

/* How many arrays and objects enclose the value cf_jin_value reads next
 * (1: a member of the top object), set by the caller as it descends, so
 * that jansson's limit on nesting counts the whole document. */
void cf_jin_set_depth(cf_jin_t *in, int depth);

#endif
