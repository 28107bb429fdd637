/* The template module (cf_null.c), built into the test library only. */
#ifndef CF_NULL_H
#define CF_NULL_H

#include "cf_module.h"

CF_HIDDEN void cf_null_init(void);
CF_HIDDEN void cf_null_thread_init(cf_thread_t *t);
CF_HIDDEN json_t *cf_null_section(const cf_fin_t *f);
CF_HIDDEN void cf_null_fini(void);
CF_HIDDEN void cf_null_abort(int errorcode);

#endif
