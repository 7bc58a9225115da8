/* envelope.c - see envelope.h */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "autosync/planner.h"
#include "envelope.h"

#define FORMAT "1 ubj"

size_t learn_envelope_header(const void *body, size_t len,
			     char hdr[LEARN_ENVELOPE_MAX])
{
	char hex[17];

	autosync_hash_hex(body, len, hex);
	/* 19 + 6 + at most 20 digits + 1 + 16 + newline: fits */
	return (size_t)snprintf(hdr, LEARN_ENVELOPE_MAX,
				LEARN_ENVELOPE_MAGIC FORMAT " %zu %s\n", len,
				hex);
}

static int bad(autosync_error_t *errp, const char *name, const char *why)
{
	errno = EINVAL;
	return autosync_errprintf(errp, "%s: %s", name, why);
}

/* "DIGITS " at *p (no sign, no leading zero but "0", at most 18 digits,
 * so that the value cannot overflow): the value, *p past the space; -1
 * when it is not that */
static long long digits(const char **p, const char *end)
{
	const char *s = *p;
	long long v = 0;
	int n = 0;

	while (s < end && *s >= '0' && *s <= '9' && n < 18) {
		v = v * 10 + (*s++ - '0');
		n++;
	}
	if (!n || s >= end || *s != ' ' || (n > 1 && **p == '0'))
		return -1;
	*p = s + 1;
	return v;
}

int learn_envelope_open(const void *buf, size_t len, const char *name,
			const void **body, size_t *blen, autosync_error_t *errp)
{
	static const char usage[] =
	    "a bad header (expected '" LEARN_ENVELOPE_MAGIC FORMAT
	    " LENGTH HASH')";
	const size_t magic = sizeof(LEARN_ENVELOPE_MAGIC) - 1;
	const char *s = buf, *nl, *p, *end;
	char hex[17], why[128];
	long long n;

	if (!buf || len < magic || memcmp(s, LEARN_ENVELOPE_MAGIC, magic))
		return 0;
	end = s + (len < LEARN_ENVELOPE_MAX ? len : LEARN_ENVELOPE_MAX);
	if (!(nl = memchr(s, '\n', (size_t)(end - s))))
		return bad(errp, name, usage);
	p = s + magic;
	if ((size_t)(nl - p) < sizeof(FORMAT) || *p < '0' || *p > '9')
		return bad(errp, name, usage);
	if (memcmp(p, FORMAT " ", sizeof(FORMAT))) {
		/* its version and kind: up to the second space (the line
		 * ends in a newline, so the search stops) */
		size_t v = strcspn(p, " \n");
		if (p[v] == ' ')
			v += 1 + strcspn(p + v + 1, " \n");
		snprintf(why, sizeof(why),
			 "format '%.*s' (this autosync reads '" FORMAT "')",
			 (int)(v < 16 ? v : 16), p);
		return bad(errp, name, why);
	}
	p += sizeof(FORMAT);
	if ((n = digits(&p, nl)) < 0 || nl - p != 16 ||
	    strspn(p, "0123456789abcdef") < 16)
		return bad(errp, name, usage);
	*body = nl + 1;
	*blen = len - (size_t)(nl + 1 - s);
	if ((unsigned long long)n != *blen) {
		snprintf(why, sizeof(why),
			 "%zu bytes after the header, which says %lld (cut "
			 "or changed since it was written)",
			 *blen, n);
		return bad(errp, name, why);
	}
	autosync_hash_hex(*body, *blen, hex);
	if (memcmp(hex, p, 16))
		return bad(errp, name,
			   "its bytes do not match the hash in its header "
			   "(changed since it was written)");
	return 1;
}
