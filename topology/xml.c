/* xml.c - see xml.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xml.h"

struct xparser {
	const char *p, *end;
	unsigned line;
	unsigned nodes;
	const char *what;
	autosync_error_t *errp;
};

static int fail(struct xparser *x, const char *msg)
{
	errno = EINVAL;
	return autosync_errprintf(x->errp, "%s: line %u: %s", x->what, x->line,
				  msg);
}

static void adv(struct xparser *x, size_t n)
{
	for (size_t i = 0; i < n && x->p < x->end; i++, x->p++)
		if (*x->p == '\n')
			x->line++;
}

static int starts(const struct xparser *x, const char *s)
{
	size_t l = strlen(s);

	return (size_t)(x->end - x->p) >= l && !memcmp(x->p, s, l);
}

static void skip_ws(struct xparser *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' ||
				 *x->p == '\r' || *x->p == '\n'))
		adv(x, 1);
}

/* skip to just after 'term'; -1 if it never comes */
static int skip_past(struct xparser *x, const char *term)
{
	while (x->p < x->end) {
		if (starts(x, term)) {
			adv(x, strlen(term));
			return 0;
		}
		adv(x, 1);
	}
	return -1;
}

static int name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       c == ':' || (unsigned char)c >= 0x80;
}

static int name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static char *read_name(struct xparser *x)
{
	const char *s = x->p;
	char *n;

	if (x->p >= x->end || !name_start(*x->p))
		return NULL;
	while (x->p < x->end && name_char(*x->p))
		x->p++;
	if (!(n = malloc((size_t)(x->p - s) + 1)))
		return NULL;
	memcpy(n, s, (size_t)(x->p - s));
	n[x->p - s] = '\0';
	return n;
}

static void put_utf8(char **o, unsigned long c)
{
	char *d = *o;

	if (c < 0x80) {
		*d++ = (char)c;
	} else if (c < 0x800) {
		*d++ = (char)(0xc0 | (c >> 6));
		*d++ = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		*d++ = (char)(0xe0 | (c >> 12));
		*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*d++ = (char)(0x80 | (c & 0x3f));
	} else {
		*d++ = (char)(0xf0 | (c >> 18));
		*d++ = (char)(0x80 | ((c >> 12) & 0x3f));
		*d++ = (char)(0x80 | ((c >> 6) & 0x3f));
		*d++ = (char)(0x80 | (c & 0x3f));
	}
	*o = d;
}

/* decode entities of s[0..len) into a new string; NULL on a bad entity */
static char *decode(const char *s, size_t len, int *bad)
{
	char *out = malloc(len + 1), *o = out;
	size_t i = 0;

	*bad = 0;
	if (!out)
		return NULL;
	while (i < len) {
		if (s[i] != '&') {
			if (s[i] == '<') {
				*bad = 1;
				free(out);
				return NULL;
			}
			*o++ = s[i++];
			continue;
		}
		{
			static const struct {
				const char *e;
				char c;
			} ents[] = {
			    {"&amp;", '&'},  {"&lt;", '<'},    {"&gt;", '>'},
			    {"&quot;", '"'}, {"&apos;", '\''},
			};
			size_t k;

			for (k = 0; k < 5; k++) {
				size_t el = strlen(ents[k].e);

				if (len - i >= el &&
				    !memcmp(s + i, ents[k].e, el)) {
					*o++ = ents[k].c;
					i += el;
					break;
				}
			}
			if (k < 5)
				continue;
		}
		if (len - i >= 4 && s[i + 1] == '#') {
			size_t j = i + 2;
			int hex = 0;
			unsigned long c = 0;
			int digits = 0;

			if (s[j] == 'x') {
				hex = 1;
				j++;
			}
			for (; j < len && s[j] != ';' && digits < 8;
			     j++, digits++) {
				char ch = s[j];
				int v;

				if (ch >= '0' && ch <= '9')
					v = ch - '0';
				else if (hex && ch >= 'a' && ch <= 'f')
					v = ch - 'a' + 10;
				else if (hex && ch >= 'A' && ch <= 'F')
					v = ch - 'A' + 10;
				else
					break;
				c = c * (hex ? 16 : 10) + (unsigned long)v;
			}
			if (j < len && s[j] == ';' && digits > 0 && c > 0 &&
			    c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff)) {
				put_utf8(&o, c);
				i = j + 1;
				continue;
			}
		}
		*bad = 1;
		free(out);
		return NULL;
	}
	*o = '\0';
	return out;
}

void topo_xml_free(struct xnode *n)
{
	while (n) {
		struct xnode *next = n->next;

		topo_xml_free(n->first);
		for (unsigned i = 0; i < n->nattrs; i++) {
			free(n->attrs[i].name);
			free(n->attrs[i].value);
		}
		free(n->attrs);
		free(n->name);
		free(n);
		n = next;
	}
}

const char *topo_xml_attr(const struct xnode *n, const char *name)
{
	for (unsigned i = 0; n && i < n->nattrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return n->attrs[i].value;
	return NULL;
}

/* skip prolog / misc items; 1 when at '<' of an element, 0 at end, -1 error */
static int skip_misc(struct xparser *x)
{
	for (;;) {
		skip_ws(x);
		if (x->p >= x->end)
			return 0;
		if (starts(x, "<?")) {
			if (skip_past(x, "?>") < 0)
				return fail(
				    x, "unterminated processing instruction");
		} else if (starts(x, "<!--")) {
			adv(x, 4);
			if (skip_past(x, "-->") < 0)
				return fail(x, "unterminated comment");
		} else if (starts(x, "<!DOCTYPE")) {
			int depth = 0;

			while (x->p < x->end && !(*x->p == '>' && depth == 0)) {
				if (*x->p == '[')
					depth++;
				else if (*x->p == ']' && depth > 0)
					depth--;
				adv(x, 1);
			}
			if (x->p >= x->end)
				return fail(x, "unterminated DOCTYPE");
			adv(x, 1);
		} else if (*x->p == '<') {
			return 1;
		} else {
			return fail(
			    x,
			    "text outside the root element (not an XML file?)");
		}
	}
}

static int parse_attrs(struct xparser *x, struct xnode *n, int *selfclose)
{
	for (;;) {
		char *name, *value;
		const char *vs;
		char q;
		int bad;

		skip_ws(x);
		if (x->p >= x->end)
			return fail(x, "truncated element (missing '>')");
		if (*x->p == '>') {
			adv(x, 1);
			*selfclose = 0;
			return 0;
		}
		if (starts(x, "/>")) {
			adv(x, 2);
			*selfclose = 1;
			return 0;
		}
		if (!(name = read_name(x)))
			return fail(x, "bad attribute name");
		skip_ws(x);
		if (x->p >= x->end || *x->p != '=') {
			free(name);
			return fail(x, "attribute without '='");
		}
		adv(x, 1);
		skip_ws(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\'')) {
			free(name);
			return fail(x, "attribute value without quotes");
		}
		q = *x->p;
		adv(x, 1);
		vs = x->p;
		while (x->p < x->end && *x->p != q)
			adv(x, 1);
		if (x->p >= x->end) {
			free(name);
			return fail(x, "truncated attribute value");
		}
		value = decode(vs, (size_t)(x->p - vs), &bad);
		adv(x, 1);
		if (!value) {
			free(name);
			return bad ? fail(x, "bad character or entity in an "
					     "attribute value")
				   : fail(x, "out of memory");
		}
		if (topo_xml_attr(n, name)) {
			free(name);
			free(value);
			return fail(x, "attribute given twice");
		}
		if (n->nattrs >= XML_MAX_ATTRS) {
			free(name);
			free(value);
			return fail(x, "too many attributes");
		}
		if (n->nattrs % 8 == 0) {
			struct xattr *a =
			    realloc(n->attrs, (n->nattrs + 8) * sizeof(*a));

			if (!a) {
				free(name);
				free(value);
				return fail(x, "out of memory");
			}
			n->attrs = a;
		}
		n->attrs[n->nattrs].name = name;
		n->attrs[n->nattrs].value = value;
		n->nattrs++;
		if (x->p < x->end &&
		    !(*x->p == ' ' || *x->p == '\t' || *x->p == '\r' ||
		      *x->p == '\n' || *x->p == '>' || *x->p == '/'))
			return fail(x, "no blank between attributes");
	}
}

/* The element being read and how deep it is. */
struct xtree {
	struct xnode *root, *cur;
	unsigned depth;
};

/* A comment, CDATA section or processing instruction at x->p, skipped:
 * 1, 0 when there is none, -1 when it is not terminated. */
static int skip_markup(struct xparser *x)
{
	if (starts(x, "<!--")) {
		adv(x, 4);
		if (skip_past(x, "-->") < 0)
			return fail(x, "unterminated comment");
		return 1;
	}
	if (starts(x, "<![CDATA[")) {
		if (skip_past(x, "]]>") < 0)
			return fail(x, "unterminated CDATA");
		return 1;
	}
	if (starts(x, "<?")) {
		if (skip_past(x, "?>") < 0)
			return fail(x, "unterminated processing instruction");
		return 1;
	}
	return 0;
}

/* A closing tag at x->p: 1 when it closed the root, 0, or -1. */
static int close_tag(struct xparser *x, struct xtree *t)
{
	char *name;
	int same;

	adv(x, 2);
	if (!(name = read_name(x)))
		return fail(x, "bad closing tag");
	same = t->cur && !strcmp(name, t->cur->name);
	free(name);
	if (!same)
		return fail(x, "closing tag does not match the open element");
	skip_ws(x);
	if (x->p >= x->end || *x->p != '>')
		return fail(x, "truncated closing tag");
	adv(x, 1);
	t->cur = t->cur->parent;
	t->depth--;
	return !t->cur;
}

/* An element at x->p, added under the open one: 1 when it was a
 * self-closed root, 0, or -1. */
static int open_tag(struct xparser *x, struct xtree *t)
{
	struct xnode *n;
	int selfclose = 0;

	adv(x, 1);
	if (++x->nodes > XML_MAX_NODES)
		return fail(x, "too many elements");
	if (t->depth >= XML_MAX_DEPTH)
		return fail(x, "elements nested too deeply");
	if (!(n = calloc(1, sizeof(*n))))
		return fail(x, "out of memory");
	n->line = x->line;
	if (!(n->name = read_name(x))) {
		free(n);
		return fail(x, "bad element name");
	}
	n->parent = t->cur;
	if (t->cur) {
		if (t->cur->last)
			t->cur->last->next = n;
		else
			t->cur->first = n;
		t->cur->last = n;
	} else {
		t->root = n;
	}
	if (parse_attrs(x, n, &selfclose) < 0)
		return -1;
	if (selfclose)
		return !t->cur;
	t->cur = n;
	t->depth++;
	return 0;
}

/* The root element and everything in it; text content is ignored. */
static int read_elements(struct xparser *x, struct xtree *t)
{
	int r;

	for (;;) {
		if (x->p >= x->end)
			return fail(x, "truncated: missing closing tags");
		if (*x->p != '<') {
			adv(x, 1);
			continue;
		}
		if ((r = skip_markup(x)) < 0)
			return -1;
		if (r > 0)
			continue;
		r = starts(x, "</") ? close_tag(x, t) : open_tag(x, t);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
}

struct xnode *topo_xml_parse(const char *buf, size_t len, const char *what,
			     autosync_error_t *errp)
{
	struct xparser x = {
	    .p = buf, .end = buf + len, .line = 1, .what = what, .errp = errp};
	struct xtree t = {0};
	int r;

	if (!buf) {
		errno = EINVAL;
		autosync_errprintf(errp, "%s: no data", what);
		return NULL;
	}
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		x.p += 3;
	if (memchr(buf, '\0', len)) {
		fail(&x, "binary data (NUL byte): not an XML file");
		return NULL;
	}
	if ((r = skip_misc(&x)) <= 0) {
		if (r == 0)
			fail(&x, "no root element (empty or not an XML file)");
		return NULL;
	}
	if (read_elements(&x, &t) < 0)
		goto err;
	/* after the root: only misc */
	if ((r = skip_misc(&x)) != 0) {
		if (r > 0)
			fail(&x, "more than one root element");
		goto err;
	}
	return t.root;
err:
	topo_xml_free(t.root);
	return NULL;
}

int topo_xml_root_name(const char *buf, size_t len, char *out, size_t outlen)
{
	struct xparser x = {
	    .p = buf, .end = buf + len, .line = 1, .what = "", .errp = NULL};
	char *name;

	if (outlen)
		out[0] = '\0';
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		x.p += 3;
	if (skip_misc(&x) != 1)
		return -1;
	adv(&x, 1);
	if (!(name = read_name(&x)))
		return -1;
	snprintf(out, outlen, "%s", name);
	free(name);
	return 0;
}
