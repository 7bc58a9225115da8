/* nesting.c - see nesting.h. UBJSON as XGBoost writes and reads it
 * (ubjson.org, draft 12): markers Z N T F i U I l L d D C S H [ {, optimized
 * containers "$TYPE#COUNT" and "#COUNT", object keys as a length and bytes
 * without a marker. Walked with an explicit stack, never recursively. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "nesting.h"

struct level {
	uint8_t close; /* ']' or '}' */
	uint8_t type;  /* of every element ("$"), or 0 */
	int obj;
	int64_t left; /* elements still to come, -1: until 'close' */
};

struct reader {
	const uint8_t *start, *p, *end;
	const char *name;
	autosync_error_t *errp;
};

static int bad(struct reader *r, const char *why)
{
	errno = EINVAL;
	return autosync_errprintf(r->errp, "%s: %s at byte %zu of the model",
				  r->name, why, (size_t)(r->p - r->start));
}

static int need(const struct reader *r, uint64_t n)
{
	return (uint64_t)(r->end - r->p) >= n;
}

/* bytes of a fixed-size value's payload; -1 for S and H (a length
 * follows), -2 for a container, -3 for no marker of UBJSON */
static int payload(uint8_t m)
{
	switch (m) {
	case 'Z':
	case 'N':
	case 'T':
	case 'F':
		return 0;
	case 'i':
	case 'U':
	case 'C':
		return 1;
	case 'I':
		return 2;
	case 'l':
	case 'd':
		return 4;
	case 'L':
	case 'D':
		return 8;
	case 'S':
	case 'H':
		return -1;
	case '[':
	case '{':
		return -2;
	default:
		return -3;
	}
}

/* a length or count: an integer marker and its big-endian value, never
 * negative; -1 when it is not that */
static int64_t length(struct reader *r)
{
	uint64_t v = 0;
	int size;

	if (!need(r, 1))
		return -1;
	switch (*r->p) {
	case 'i':
	case 'U':
		size = 1;
		break;
	case 'I':
		size = 2;
		break;
	case 'l':
		size = 4;
		break;
	case 'L':
		size = 8;
		break;
	default:
		return -1;
	}
	if (!need(r, (uint64_t)size + 1))
		return -1;
	for (int i = 1; i <= size; i++)
		v = v << 8 | r->p[i];
	if (*r->p != 'U' && (v >> (8 * size - 1)) & 1)
		return -1; /* negative */
	r->p += size + 1;
	return (int64_t)v;
}

/* skip a string's length and bytes */
static int skip_string(struct reader *r)
{
	int64_t n = length(r);

	if (n < 0 || !need(r, (uint64_t)n))
		return -1;
	r->p += n;
	return 0;
}

/* a container's header after its marker, pushed as *l; typed arrays of
 * fixed-size values are skipped whole */
static int open_container(struct reader *r, uint8_t m, struct level *l)
{
	int64_t count = -1;

	l->close = m == '[' ? ']' : '}';
	l->obj = m == '{';
	l->type = 0;
	if (need(r, 1) && *r->p == '$') {
		r->p++;
		if (!need(r, 1) || payload(*r->p) < -1 || *r->p == 'N')
			return bad(r, "a container of no valid type");
		l->type = *r->p++;
		if (!need(r, 1) || *r->p != '#')
			return bad(r, "a typed container without a count");
	}
	if (need(r, 1) && *r->p == '#') {
		r->p++;
		if ((count = length(r)) < 0)
			return bad(r, "a container's count cut or negative");
	}
	l->left = count;
	if (l->type && !l->obj && payload(l->type) >= 0) {
		uint64_t size = (uint64_t)payload(l->type);
		if (size && (uint64_t)count > (uint64_t)(r->end - r->p) / size)
			return bad(r, "a typed array longer than the file");
		r->p += size * (uint64_t)count;
		l->left = 0;
	}
	return 0;
}

/* one value of marker m (already read) */
static int value(struct reader *r, uint8_t m, struct level *st, unsigned *depth)
{
	int size = payload(m);

	if (size >= 0) {
		if (!need(r, (uint64_t)size))
			return bad(r, "a value cut by the end of the file");
		r->p += size;
		return 0;
	}
	if (size == -1)
		return skip_string(r) ? bad(r, "a string cut or of a bad "
					       "length")
				      : 0;
	if (size == -3)
		return bad(r, "not a UBJSON marker");
	if (*depth == LEARN_MAX_DEPTH) {
		char why[48];
		snprintf(why, sizeof(why), "nested deeper than %d levels",
			 LEARN_MAX_DEPTH);
		return bad(r, why);
	}
	if (open_container(r, m, &st[*depth]) < 0)
		return -1;
	(*depth)++;
	return 0;
}

int learn_ubjson_check(const void *buf, size_t len, const char *name,
		       autosync_error_t *errp)
{
	struct reader r = {buf, buf, (const uint8_t *)buf + len, name, errp};
	struct level st[LEARN_MAX_DEPTH];
	unsigned depth = 0;
	int started = 0;

	for (;;) {
		struct level *t = depth ? &st[depth - 1] : NULL;
		uint8_t m;

		if (!t && started)
			break;
		started = 1;
		if (t && t->left == 0) {
			depth--;
			continue;
		}
		if (t && t->left < 0) {
			if (!need(&r, 1))
				return bad(&r, "a container not closed");
			if (*r.p == t->close) {
				r.p++;
				depth--;
				continue;
			}
		} else if (t) {
			t->left--;
		}
		if (t && t->obj && skip_string(&r) < 0)
			return bad(&r, "a key cut or of a bad length");
		if (t && t->type) {
			m = t->type;
		} else {
			if (!need(&r, 1))
				return bad(&r, "a value missing");
			m = *r.p++;
		}
		if (!t && m != '{')
			return bad(&r, "not an object");
		if (value(&r, m, st, &depth) < 0)
			return -1;
	}
	if (r.p != r.end)
		return bad(&r, "bytes after the model");
	return 0;
}

int learn_json_check(const char *buf, size_t len, const char *name,
		     autosync_error_t *errp)
{
	unsigned depth = 0;
	unsigned long line = 1;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (c == '\n') {
			line++;
		} else if (c == '"') {
			/* a string: brackets inside are text */
			for (i++; i < len && buf[i] != '"'; i++)
				if (buf[i] == '\\')
					i++;
				else if (buf[i] == '\n')
					line++;
		} else if (c == '[' || c == '{') {
			if (++depth > LEARN_MAX_DEPTH) {
				errno = EINVAL;
				return autosync_errprintf(
				    errp,
				    "%s:%lu: nested deeper than %d levels",
				    name, line, LEARN_MAX_DEPTH);
			}
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
	}
	return 0;
}
