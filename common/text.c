/* text.c - see text.h */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text.h"

char *asi_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

int asi_parse_bool(const char *s)
{
	static const char *const t[] = {"1", "true", "yes", "on", "y"};
	static const char *const f[] = {"0", "false", "no", "off", "n"};

	for (size_t i = 0; s && i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcasecmp(s, t[i]))
			return 1;
		if (!strcasecmp(s, f[i]))
			return 0;
	}
	return -1;
}

static int same(char x, char y)
{
	return tolower((unsigned char)x) == tolower((unsigned char)y);
}

/* Edit distance, case-blind, of words up to 64 bytes: insertions,
 * deletions, substitutions and swaps of two neighbours ("plna" is one
 * edit from "plan"; optimal string alignment). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d[65][65];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t best =
			    d[i - 1][j - 1] + !same(a[i - 1], b[j - 1]);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) &&
			    same(a[i - 2], b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

const char *asi_suggest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	size_t bestd = SIZE_MAX, len = word ? strlen(word) : 0;
	size_t limit = len < 6 ? 1 : len / 3;

	for (size_t i = 0; word && i < n; i++) {
		size_t d;
		if (!cands[i])
			continue;
		d = distance(word, cands[i]);
		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
	}
	/* an exact match is no typo; a different case is */
	return bestd <= limit && best && strcmp(best, word) ? best : NULL;
}

char *asi_list(const char *const *cands, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s",
				      i == 0	   ? ""
				      : i + 1 == n ? " or "
						   : ", ",
				      cands[i]);
	return buf;
}

/* The code point of the UTF-8 sequence at s (its length in *n), or -1
 * when it is not valid UTF-8. */
static long utf8(const unsigned char *s, size_t *n)
{
	long c;
	size_t k;

	if (s[0] < 0x80) {
		*n = 1;
		return s[0];
	}
	if ((s[0] & 0xe0) == 0xc0)
		k = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		k = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		k = 4, c = s[0] & 0x07;
	else
		return -1;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and values past U+10FFFF */
	if ((k == 2 && c < 0x80) || (k == 3 && c < 0x800) ||
	    (k == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return -1;
	*n = k;
	return c;
}

int asi_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0, n; i < len; i += n) {
		/* the sequence's length from its first byte, before utf8()
		 * reads the rest */
		size_t k = p[i] < 0x80	  ? 1
			   : p[i] >= 0xf0 ? 4
			   : p[i] >= 0xe0 ? 3
					  : 2;
		if (k > len - i || utf8(p + i, &n) < 0)
			return 0;
	}
	return 1;
}

/* Characters that must not reach a terminal or log as they are. */
static int hidden(long c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) ||
	       (c >= 0x200b && c <= 0x200f) || /* zero-width, LRM, RLM */
	       (c >= 0x202a && c <= 0x202e) || /* bidi embed/override */
	       (c >= 0x2066 && c <= 0x2069) || /* bidi isolates */
	       c == 0x061c || c == 0xfeff;     /* ALM, BOM */
}

char *asi_quote(const char *val, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)(val ? val : "");
	const size_t keep = len > 12 ? len - 12 : 0; /* room for \u{XXXXX}... */
	size_t o = 0;

	if (!len)
		return buf;
	while (*p) {
		size_t n = 1;
		long c = utf8(p, &n);

		if (o >= keep) {
			snprintf(buf + o, len - o, "...");
			return buf;
		}
		if (c < 0)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", *p);
		else if (hidden(c) && c < 0x80)
			o += (size_t)snprintf(buf + o, len - o, "\\x%02lx", c);
		else if (hidden(c))
			o +=
			    (size_t)snprintf(buf + o, len - o, "\\u{%04lx}", c);
		else {
			memcpy(buf + o, p, n);
			o += n;
		}
		p += n;
	}
	buf[o] = '\0';
	return buf;
}

int asi_name_in_list(const char *list, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	for (const char *p = list; n && p && *p;) {
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}
