/* Unit tests of the bounded YAML loader: flow and block nesting, node
 * counts, what the pre-scan must not count, and libyaml's own errors. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/yamlload.h"
#include "tap.h"

static int load(const char *text, size_t max_nodes, autosync_error_t *err)
{
	yaml_document_t doc;

	err->text[0] = '\0';
	if (asi_yaml_load(&doc, text, strlen(text), "t.yaml", max_nodes, err) <
	    0)
		return -1;
	yaml_document_delete(&doc);
	return 0;
}

/* 'n' opening brackets, a scalar, 'n' closing ones */
static char *nested(unsigned n, const char *open, const char *close)
{
	size_t lo = strlen(open), lc = strlen(close), len = n * (lo + lc) + 8;
	char *s = malloc(len), *p = s;

	if (!s)
		bail_out("malloc");
	for (unsigned i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	*p++ = '1';
	for (unsigned i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p++ = '\n';
	*p = '\0';
	return s;
}

static unsigned depth(const char *s)
{
	unsigned long line = 0;

	return asi_yaml_flow_depth(s, strlen(s), 1000, &line);
}

int main(void)
{
	autosync_error_t err = {.text = ""};
	char *s;

	plan(NO_PLAN);
	ok(load("a: 1\nb: [1, {c: 2}]\n", 100, &err) == 0,
	   "a small document (%s)", err.text);

	s = nested(64, "[", "]");
	ok(load(s, 1000, &err) == 0, "64 levels of flow nesting load (%s)",
	   err.text);
	free(s);
	s = nested(65, "[", "]");
	errno = 0;
	ok(load(s, 1000, &err) == -1 && errno == EINVAL,
	   "65 levels are refused");
	is(err.text, "t.yaml:1: nested deeper than 64 levels",
	   "before libyaml, naming the line");
	free(s);
	s = nested(200000, "{a: ", "}");
	ok(load(s, 1u << 30, &err) == -1 &&
	       !strcmp(err.text, "t.yaml:1: nested deeper than 64 levels"),
	   "1.2 MB of nested mappings: refused by the linear pre-scan");
	free(s);

	ok(depth("a: \"[[[[\"\nb: '{{{{'\n# [[[[\nc: x[0]\nd: [1, [2]]\n") == 2,
	   "quoted scalars, comments and brackets inside plain scalars are not "
	   "nesting");
	{
		char buf[4096] = "";
		for (int i = 0; i < 70; i++)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
				 "k%d: a[\n", i);
		ok(load(buf, 1000, &err) == 0,
		   "70 plain scalars with an open bracket (%s)", err.text);
	}
	ok(depth("x:\n  - [\n    [1],\n  ]\n") == 2,
	   "a flow sequence over several lines");

	s = nested(65, "- ", "");
	ok(load(s, 1000, &err) == -1 && strstr(err.text, "t.yaml:1:") &&
	       strstr(err.text, "nested deeper than 64 levels"),
	   "65 levels of block nesting are refused (%s)", err.text);
	free(s);

	ok(load("[1, 2, 3, 4]\n", 4, &err) == -1 &&
	       !strcmp(err.text,
		       "t.yaml:1:11: more than 4 nodes, more than autosync "
		       "reads in such a file"),
	   "a node count over the bound (%s)", err.text);
	ok(load("[1, 2, 3]\n", 4, &err) == 0, "and one at it");
	ok(load("a: &x [1, 2, 3]\nb: *x\n", 11, &err) == 0,
	   "an alias counts its anchor's nodes: 11 expanded, at the bound");
	ok(load("a: &x [1, 2, 3]\nb: *x\nc: *x\n", 15, &err) == -1 &&
	       !strcmp(err.text, "t.yaml: more than 15 nodes once its "
				 "aliases are expanded (or an alias inside "
				 "its own anchor), more than autosync reads "
				 "in such a file"),
	   "one more alias: 16 expanded nodes over 15, refused (%s)", err.text);
	ok(load("a: &x [1, 2]\nb: &y [*x, *x, *x]\nc: [*y, *y, *y, *y]\n", 1000,
		&err) == 0,
	   "aliases of aliases: within the bound");
	{
		/* 10 levels of ten aliases each: 10^10 nodes from 400 bytes */
		char bomb[2048], *p = bomb;
		p += sprintf(p, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
		for (int i = 1; i < 10; i++) {
			p += sprintf(p, "a%d: &a%d [", i, i);
			for (int j = 0; j < 10; j++)
				p += sprintf(p, "%s*a%d", j ? ", " : "", i - 1);
			p += sprintf(p, "]\n");
		}
		ok(load(bomb, 1000000, &err) == -1 &&
		       strstr(err.text, "once its aliases are expanded"),
		   "a billion laughs: refused at once (%s)", err.text);
	}
	ok(load("a: &x [1, *x]\n", 1000, &err) == -1 &&
	       strstr(err.text, "alias inside its own anchor"),
	   "an alias inside its own anchor: refused (%s)", err.text);

	ok(load("a: [1, 2\n", 100, &err) == -1 &&
	       strstr(err.text, "t.yaml:2:1: not valid YAML: "),
	   "libyaml's own errors keep file, line and column (%s)", err.text);
	{
		static const struct {
			const char *text, *want;
		} dups[] = {
		    {"a: 1\nb: 2\na: 3\n",
		     "t.yaml:3: key 'a' given twice (first on line 1)"},
		    {"x:\n  - {n: 1, m: 2, n: 3}\n",
		     "t.yaml:2: key 'n' given twice (first on line 2)"},
		    {"a: 1\n\"a\": 2\n",
		     "t.yaml:2: key 'a' given twice (first on line 1)"},
		    {"a: 1\nb: {a: 1}\n[a]: 2\n", NULL},
		};
		for (size_t i = 0; i < sizeof(dups) / sizeof(dups[0]); i++) {
			yaml_document_t doc;
			int rv;
			err.text[0] = '\0';
			if (asi_yaml_load(&doc, dups[i].text,
					  strlen(dups[i].text), "t.yaml", 100,
					  &err) < 0)
				bail_out("%s", err.text);
			rv = asi_yaml_no_duplicates(&doc, "t.yaml", &err);
			yaml_document_delete(&doc);
			if (dups[i].want)
				ok(rv == -1 && errno == EINVAL &&
				       !strcmp(err.text, dups[i].want),
				   "a repeated key: %s", err.text);
			else
				ok(rv == 0, "the same key in different "
					    "mappings is no repeat");
		}
	}
	errno = 0;
	ok(asi_yaml_load(NULL, "", 0, "t.yaml", 1, &err) == -1 &&
	       errno == EINVAL,
	   "no document: EINVAL");
	return done_testing();
}
