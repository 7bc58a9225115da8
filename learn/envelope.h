/* learn/envelope.h - the binary simulator file: one header line, then
 * XGBoost's UBJSON model. Not installed; learn/ and its fuzz target only.
 *
 *   autosync-simulator 1 ubj LENGTH HASH\n
 *   LENGTH bytes of UBJSON
 *
 * LENGTH is decimal, HASH the 16 hex digits of autosync_hash_hex() over
 * the UBJSON bytes. XGBoost's UBJSON reader trusts the lengths inside the
 * model (a cut or changed file can crash it), so the bytes are checked
 * against the header, then walked (nesting.h), before XGBoost sees them. */
#ifndef AUTOSYNC_LEARN_ENVELOPE_H
#define AUTOSYNC_LEARN_ENVELOPE_H

#include <stddef.h>

#include "autosync/common.h"

#define LEARN_ENVELOPE_MAGIC "autosync-simulator "
/* the header's longest form, its newline and NUL included */
#define LEARN_ENVELOPE_MAX 64

/* The header line for 'len' bytes of UBJSON at 'body' into hdr[]; its
 * length. */
size_t learn_envelope_header(const void *body, size_t len,
			     char hdr[LEARN_ENVELOPE_MAX]);

/*
 * The UBJSON inside a file's bytes: 1 with '*body'/'*blen' set when 'buf'
 * is a binary simulator file whose length and hash match its header, 0
 * when it does not start with LEARN_ENVELOPE_MAGIC (another format), -1
 * with EINVAL and a one-line reason naming 'name' in 'errp' otherwise.
 */
int learn_envelope_open(const void *buf, size_t len, const char *name,
			const void **body, size_t *blen,
			autosync_error_t *errp);

#endif
