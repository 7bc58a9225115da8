/*
 * emit.h - the one way autosync writes YAML (internal: not installed), over
 * libyaml's emitter: quoting and escaping are libyaml's, so what is written
 * reads back as what was meant, in autosync's readers and in others.
 *
 * Numbers are written so that YAML 1.1 readers (PyYAML) read them as
 * numbers: a float always has a dot before its exponent ("1.0e-06", never
 * "1e-06", which PyYAML reads as a string); infinities and NaN are never
 * written (the writer fails with EINVAL instead).
 *
 * Usage: every call after a failure does nothing; asi_emit_close() says
 * whether all went well.
 *
 *	asi_emit_t *e = asi_emit_open(fp, "a comment line", &err);
 *	asi_emit_map(e, ASI_EMIT_BLOCK);
 *	asi_emit_key(e, "hash"), asi_emit_str(e, h);
 *	asi_emit_key(e, "step_time"), asi_emit_num(e, 0.25, 9);
 *	asi_emit_end(e);
 *	if (asi_emit_close(e, &err) < 0) ...
 */
#ifndef AUTOSYNC_EMIT_H
#define AUTOSYNC_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "autosync/common.h"

typedef struct asi_emit asi_emit_t;

enum { ASI_EMIT_BLOCK = 0, ASI_EMIT_FLOW = 1 };

/*
 * Start one YAML document on 'fp' (borrowed; written to, never closed).
 * 'comment' (may be NULL) is written first as "# comment". Lines are never
 * folded. Returns NULL with ENOMEM (and errp) when out of memory.
 */
asi_emit_t *asi_emit_open(FILE *fp, const char *comment,
			  autosync_error_t *errp);

/* Start a mapping or a sequence (ASI_EMIT_BLOCK or ASI_EMIT_FLOW); end the
 * innermost one with asi_emit_end(). */
void asi_emit_map(asi_emit_t *e, int style);
void asi_emit_seq(asi_emit_t *e, int style);
void asi_emit_end(asi_emit_t *e);

/* A mapping key (plain when it can be, quoted otherwise). */
void asi_emit_key(asi_emit_t *e, const char *key);
/* A string value, always double-quoted so that it stays a string ("1",
 * "no", "" included). Bytes that are not UTF-8 become U+FFFD. NULL is "". */
void asi_emit_str(asi_emit_t *e, const char *s);
/* A word of autosync's own vocabulary (ring, allreduce, true), plain. */
void asi_emit_word(asi_emit_t *e, const char *w);
void asi_emit_uint(asi_emit_t *e, uint64_t v);
void asi_emit_int(asi_emit_t *e, int64_t v);
/* A number with 'digits' significant digits (as %.*g), as a YAML 1.1
 * float or integer; not finite: the emitter fails (EINVAL). */
void asi_emit_num(asi_emit_t *e, double v, int digits);
/* An integral number of bytes and the like (as %.0f). */
void asi_emit_whole(asi_emit_t *e, double v);
/* A plain scalar formatted with printf (hexadecimal ids and the like). */
void asi_emit_fmt(asi_emit_t *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * End the document, flush, free 'e' (NULL is fine). 0, or -1 with errno
 * (EINVAL: a value that cannot be written, such as a NaN; EIO: a write
 * error; ENOMEM) and "what: why" in errp, 'what' naming the file kind.
 */
int asi_emit_close(asi_emit_t *e, const char *what, autosync_error_t *errp);

/*
 * 'v' with 'digits' significant digits into 'buf' as YAML 1.1 (and JSON)
 * read a number: "%.*g", with ".0" put before an exponent that has no dot
 * ("1.0e-06"). Returns 0, or -1 (EINVAL) when 'v' is not finite or 'len'
 * is too small.
 */
int asi_fmt_num(double v, int digits, char *buf, size_t len);

#endif
