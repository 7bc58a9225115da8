/* learn/nesting.h - a model's bytes checked before XGBoost reads them.
 * Not installed; learn/ and its fuzz target only.
 *
 * XGBoost's JSON and UBJSON readers recurse once per nesting level and
 * its UBJSON reader trusts the lengths inside the model: a file nested
 * 200,000 levels deep, or whose lengths point past its end, crashes the
 * process that loads it (the plugin's planning child among them). The
 * models XGBoost writes are 7 levels deep. */
#ifndef AUTOSYNC_LEARN_NESTING_H
#define AUTOSYNC_LEARN_NESTING_H

#include <stddef.h>

#include "autosync/common.h"

/* deeper than any model XGBoost writes, shallow enough for its stack */
#define LEARN_MAX_DEPTH 32

/*
 * 0 when 'buf' is one well-formed UBJSON object filling 'len' bytes (every
 * length inside the buffer, every container closed) nested at most
 * LEARN_MAX_DEPTH deep; -1 with EINVAL and a reason naming 'name' and the
 * byte offset in 'errp' otherwise.
 */
int learn_ubjson_check(const void *buf, size_t len, const char *name,
		       autosync_error_t *errp);

/*
 * 0 when the JSON text 'buf' nests arrays and objects at most
 * LEARN_MAX_DEPTH deep (anything else is left to XGBoost's reader, which
 * says what is wrong); -1 with EINVAL and a reason naming 'name' and the
 * line otherwise.
 */
int learn_json_check(const char *buf, size_t len, const char *name,
		     autosync_error_t *errp);

#endif
