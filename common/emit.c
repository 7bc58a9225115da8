/* emit.c - the one YAML emitting path (see emit.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "emit.h"

struct asi_emit {
	yaml_emitter_t em;
	yaml_event_t ev;
	FILE *fp;
	char stack[64]; /* 'm' mapping, 's' sequence, innermost last */
	unsigned depth;
	int err;       /* the first errno, 0 while all is well */
	char why[128]; /* what went wrong, with 'err' */
};

static void fail(asi_emit_t *e, int err, const char *why)
{
	if (e && !e->err) {
		e->err = err;
		snprintf(e->why, sizeof(e->why), "%s", why);
	}
}

static int push(asi_emit_t *e, char kind)
{
	if (e->depth == sizeof(e->stack)) {
		fail(e, EINVAL, "nested too deep");
		return -1;
	}
	e->stack[e->depth++] = kind;
	return 0;
}

static void put(asi_emit_t *e)
{
	if (!yaml_emitter_emit(&e->em, &e->ev))
		fail(e,
		     e->em.error == YAML_WRITER_ERROR	? EIO
		     : e->em.error == YAML_MEMORY_ERROR ? ENOMEM
							: EINVAL,
		     e->em.problem ? e->em.problem : "emitter error");
}

static int handler(void *data, unsigned char *buf, size_t size)
{
	asi_emit_t *e = data;

	return fwrite(buf, 1, size, e->fp) == size;
}

asi_emit_t *asi_emit_open(FILE *fp, const char *comment, autosync_error_t *errp)
{
	asi_emit_t *e;

	if (!fp) {
		errno = EINVAL;
		autosync_errprintf(errp, "emit: invalid argument");
		return NULL;
	}
	if (!(e = calloc(1, sizeof(*e))) || !yaml_emitter_initialize(&e->em)) {
		free(e);
		errno = ENOMEM;
		autosync_errprintf(errp, "emit: out of memory");
		return NULL;
	}
	e->fp = fp;
	yaml_emitter_set_output(&e->em, handler, e);
	yaml_emitter_set_width(&e->em, -1); /* never fold a line */
	/* ASCII only: a name with a bidi override or a control character is
	 * written as an escape, never as itself (plans are printed on
	 * terminals) */
	yaml_emitter_set_unicode(&e->em, 0);
	yaml_emitter_set_indent(&e->em, 2);
	yaml_emitter_set_break(&e->em, YAML_LN_BREAK);
	if (comment)
		fprintf(fp, "# %s\n", comment);
	yaml_stream_start_event_initialize(&e->ev, YAML_UTF8_ENCODING);
	put(e);
	if (!e->err) {
		yaml_document_start_event_initialize(&e->ev, NULL, NULL, NULL,
						     1);
		put(e);
	}
	return e;
}

void asi_emit_map(asi_emit_t *e, int style)
{
	if (!e || e->err || push(e, 'm') < 0)
		return;
	yaml_mapping_start_event_initialize(&e->ev, NULL, NULL, 1,
					    style == ASI_EMIT_FLOW
						? YAML_FLOW_MAPPING_STYLE
						: YAML_BLOCK_MAPPING_STYLE);
	put(e);
}

void asi_emit_seq(asi_emit_t *e, int style)
{
	if (!e || e->err || push(e, 's') < 0)
		return;
	yaml_sequence_start_event_initialize(&e->ev, NULL, NULL, 1,
					     style == ASI_EMIT_FLOW
						 ? YAML_FLOW_SEQUENCE_STYLE
						 : YAML_BLOCK_SEQUENCE_STYLE);
	put(e);
}

void asi_emit_end(asi_emit_t *e)
{
	if (!e || e->err)
		return;
	if (!e->depth) {
		fail(e, EINVAL, "an end without a start");
		return;
	}
	/* libyaml refuses a mapping that ends after a key without a value */
	if (e->stack[--e->depth] == 'm')
		yaml_mapping_end_event_initialize(&e->ev);
	else
		yaml_sequence_end_event_initialize(&e->ev);
	put(e);
}

static void scalar(asi_emit_t *e, const char *s, yaml_scalar_style_t style)
{
	if (!e || e->err)
		return;
	if (!yaml_scalar_event_initialize(&e->ev, NULL, NULL,
					  (yaml_char_t *)(s ? s : ""), -1, 1, 1,
					  style)) {
		fail(e, ENOMEM, "out of memory");
		return;
	}
	put(e);
}

/* 1: 's' is UTF-8 (what libyaml accepts) */
static int utf8_ok(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s, n = c < 0x80		  ? 0
				     : (c & 0xe0) == 0xc0 ? 1
				     : (c & 0xf0) == 0xe0 ? 2
				     : (c & 0xf8) == 0xf0 ? 3
							  : 9;
		uint32_t v = n == 0   ? c
			     : n == 1 ? (c & 0x1f)
			     : n == 2 ? (c & 0x0f)
				      : (c & 0x07);

		if (n == 9)
			return 0;
		for (unsigned i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			v = (v << 6) | (s[i] & 0x3f);
		}
		if ((n == 1 && v < 0x80) || (n == 2 && v < 0x800) ||
		    (n == 3 && (v < 0x10000 || v > 0x10ffff)) ||
		    (v >= 0xd800 && v <= 0xdfff))
			return 0;
		s += n + 1;
	}
	return 1;
}

void asi_emit_str(asi_emit_t *e, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	char *fixed;
	size_t k = 0;

	if (!e || e->err)
		return;
	if (utf8_ok(p)) {
		scalar(e, (const char *)p, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
		return;
	}
	/* every byte outside ASCII becomes U+FFFD (3 bytes) at worst */
	if (!(fixed = malloc(strlen((const char *)p) * 3 + 1))) {
		fail(e, ENOMEM, "out of memory");
		return;
	}
	while (*p) {
		unsigned char one[5] = {0};
		size_t n = *p < 0x80		 ? 1
			   : (*p & 0xe0) == 0xc0 ? 2
			   : (*p & 0xf0) == 0xe0 ? 3
			   : (*p & 0xf8) == 0xf0 ? 4
						 : 0;

		if (n && strnlen((const char *)p, n) == n) {
			memcpy(one, p, n);
			if (utf8_ok(one)) {
				memcpy(fixed + k, p, n);
				k += n;
				p += n;
				continue;
			}
		}
		memcpy(fixed + k, "\xef\xbf\xbd", 3);
		k += 3;
		p++;
	}
	fixed[k] = '\0';
	scalar(e, fixed, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	free(fixed);
}

void asi_emit_key(asi_emit_t *e, const char *key)
{
	scalar(e, key, YAML_ANY_SCALAR_STYLE);
}

void asi_emit_word(asi_emit_t *e, const char *w)
{
	scalar(e, w, YAML_PLAIN_SCALAR_STYLE);
}

void asi_emit_uint(asi_emit_t *e, uint64_t v)
{
	asi_emit_fmt(e, "%" PRIu64, v);
}

void asi_emit_int(asi_emit_t *e, int64_t v)
{
	asi_emit_fmt(e, "%" PRId64, v);
}

int asi_fmt_num(double v, int digits, char *buf, size_t len)
{
	char tmp[64], *x;
	int n;

	if (!isfinite(v) || !buf || digits < 1 || digits > 17) {
		errno = EINVAL;
		return -1;
	}
	n = snprintf(tmp, sizeof(tmp), "%.*g", digits, v);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		errno = EINVAL;
		return -1;
	}
	/* "1e-06" is a string to YAML 1.1: it wants "1.0e-06" */
	if ((x = strchr(tmp, 'e')) && !memchr(tmp, '.', (size_t)(x - tmp))) {
		memmove(x + 2, x, strlen(x) + 1);
		memcpy(x, ".0", 2);
		n += 2;
	}
	if ((size_t)n >= len) {
		errno = EINVAL;
		return -1;
	}
	memcpy(buf, tmp, (size_t)n + 1);
	return 0;
}

void asi_emit_num(asi_emit_t *e, double v, int digits)
{
	char b[64];

	if (!e || e->err)
		return;
	if (asi_fmt_num(v, digits, b, sizeof(b)) < 0) {
		fail(e, EINVAL, "a number that is not finite");
		return;
	}
	scalar(e, b, YAML_PLAIN_SCALAR_STYLE);
}

void asi_emit_whole(asi_emit_t *e, double v)
{
	if (!e || e->err)
		return;
	if (!isfinite(v)) {
		fail(e, EINVAL, "a number that is not finite");
		return;
	}
	asi_emit_fmt(e, "%.0f", v);
}

void asi_emit_fmt(asi_emit_t *e, const char *fmt, ...)
{
	char b[128];
	va_list ap;
	int n;

	if (!e || e->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(b)) {
		fail(e, EINVAL, "a value too long for a plain scalar");
		return;
	}
	scalar(e, b, YAML_PLAIN_SCALAR_STYLE);
}

int asi_emit_close(asi_emit_t *e, const char *what, autosync_error_t *errp)
{
	int err;
	char why[128];

	if (!e) {
		errno = EINVAL;
		return autosync_errprintf(errp, "%s: invalid argument",
					  what ? what : "emit");
	}
	if (!e->err && e->depth)
		fail(e, EINVAL, "a mapping or sequence not ended");
	if (!e->err) {
		yaml_document_end_event_initialize(&e->ev, 1);
		put(e);
	}
	if (!e->err) {
		yaml_stream_end_event_initialize(&e->ev);
		put(e);
	}
	if (!e->err && !yaml_emitter_flush(&e->em))
		fail(e, EIO, "write error");
	if (!e->err && (fflush(e->fp) != 0 || ferror(e->fp)))
		fail(e, EIO, "write error");
	err = e->err;
	snprintf(why, sizeof(why), "%s", e->why);
	yaml_emitter_delete(&e->em);
	free(e);
	if (err) {
		errno = err;
		return autosync_errprintf(errp, "%s: %s", what ? what : "emit",
					  why);
	}
	return 0;
}
