/* Unit tests of the one YAML emitting path (common/emit.c): numbers as
 * YAML 1.1 reads them, strings that read back byte for byte through
 * libyaml, and the failures (not finite, unbalanced, write errors). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/emit.h"
#include "tap.h"

static void test_numbers(void)
{
	static const struct {
		double v;
		int digits;
		const char *want;
	} t[] = {
	    {1e-6, 9, "1.0e-06"},
	    {5e-06, 9, "5.0e-06"},
	    {2.4e11, 9, "2.4e+11"},
	    {1.25e10, 9, "1.25e+10"},
	    {1e300, 9, "1.0e+300"},
	    {-3e-7, 6, "-3.0e-07"},
	    {0.264994804, 9, "0.264994804"},
	    {0, 9, "0"},
	    {42, 6, "42"},
	    {1.5e-06, 9, "1.5e-06"},
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		buf[0] = '\0';
		ok(asi_fmt_num(t[i].v, t[i].digits, buf, sizeof(buf)) == 0 &&
		       !strcmp(buf, t[i].want),
		   "%.*g is written %s (got %s)", t[i].digits, t[i].v,
		   t[i].want, buf);
	}
	errno = 0;
	ok(asi_fmt_num(INFINITY, 9, buf, sizeof(buf)) < 0 && errno == EINVAL,
	   "infinity is never written");
	ok(asi_fmt_num(NAN, 9, buf, sizeof(buf)) < 0 && errno == EINVAL,
	   "NaN is never written");
	ok(asi_fmt_num(1e-6, 9, buf, 7) < 0, "a buffer too small fails");
}

/* Emit one mapping {k: s} and read the value back with libyaml. */
static char *round_trip(const char *s, char **text)
{
	char *buf = NULL, *got = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	asi_emit_t *e = asi_emit_open(fp, "a comment", NULL);
	yaml_parser_t p;
	yaml_document_t d;

	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "k"), asi_emit_str(e, s);
	asi_emit_end(e);
	if (asi_emit_close(e, "test", NULL) < 0) {
		fclose(fp);
		free(buf);
		return NULL;
	}
	fclose(fp);
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (unsigned char *)buf, len);
	if (yaml_parser_load(&p, &d)) {
		yaml_node_t *root = yaml_document_get_root_node(&d);
		if (root && root->type == YAML_MAPPING_NODE &&
		    root->data.mapping.pairs.top -
			    root->data.mapping.pairs.start ==
			1) {
			yaml_node_t *v = yaml_document_get_node(
			    &d, root->data.mapping.pairs.start->value);
			if (v->type == YAML_SCALAR_NODE)
				got = strdup((char *)v->data.scalar.value);
		}
		yaml_document_delete(&d);
	}
	yaml_parser_delete(&p);
	*text = buf;
	return got;
}

static void test_strings(void)
{
	static const char *const t[] = {
	    "plain",
	    "",
	    "no",
	    "1",
	    "1e-06",
	    "true",
	    "~",
	    "null",
	    "quote \" and backslash \\",
	    "tab\there",
	    "new\nline",
	    "bell\x07 esc\x1b del\x7f",
	    "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87",
	    "bidi \xe2\x80\xae override",
	    "- [a], {b}: #c",
	    " lead and trail ",
	    "a very long string that goes on and on past eighty columns, "
	    "which libyaml would fold if its width were not unlimited",
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *text = NULL, *got = round_trip(t[i], &text);

		ok(got && !strcmp(got, t[i]),
		   "string %zu reads back as written", i);
		const char *nl = text ? strchr(text + 16, '\n') : NULL;

		ok(text && !strncmp(text, "# a comment\nk: \"", 16) && nl &&
		       nl[1] == '\0',
		   "string %zu: double-quoted, on one line", i);
		free(got);
		free(text);
	}
	{
		char *text = NULL,
		     *got = round_trip("bad \xff\xfe utf8 \xc3", &text);
		is(got, "bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd",
		   "bytes that are not UTF-8 become U+FFFD");
		free(got);
		free(text);
	}
}

static void test_structure(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	autosync_error_t err = {""};
	asi_emit_t *e = asi_emit_open(fp, NULL, &err);

	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "n"), asi_emit_num(e, 1e-6, 9);
	asi_emit_key(e, "w"), asi_emit_whole(e, 26214400);
	asi_emit_key(e, "i"), asi_emit_int(e, -1);
	asi_emit_key(e, "x"), asi_emit_fmt(e, "0x%04x", 0x10de);
	asi_emit_key(e, "s"), asi_emit_seq(e, ASI_EMIT_FLOW);
	asi_emit_uint(e, 1), asi_emit_uint(e, 2);
	asi_emit_end(e);
	asi_emit_key(e, "e"), asi_emit_seq(e, ASI_EMIT_FLOW), asi_emit_end(e);
	asi_emit_key(e, "m"), asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "k"), asi_emit_word(e, "ring");
	asi_emit_end(e);
	asi_emit_end(e);
	ok(asi_emit_close(e, "test", &err) == 0, "a document (%s)", err.text);
	fclose(fp);
	is(buf,
	   "n: 1.0e-06\nw: 26214400\ni: -1\nx: 0x10de\ns: [1, 2]\ne: []\n"
	   "m:\n  k: ring\n",
	   "block and flow layout");
	free(buf);

	buf = NULL;
	fp = open_memstream(&buf, &len);
	e = asi_emit_open(fp, NULL, NULL);
	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "bad"), asi_emit_num(e, NAN, 9);
	asi_emit_key(e, "later"), asi_emit_str(e, "ignored");
	asi_emit_end(e);
	errno = 0;
	ok(asi_emit_close(e, "plan_write", &err) < 0 && errno == EINVAL,
	   "a NaN fails the document");
	is(err.text, "plan_write: a number that is not finite", "and says why");
	fclose(fp);
	free(buf);

	buf = NULL;
	fp = open_memstream(&buf, &len);
	e = asi_emit_open(fp, NULL, NULL);
	asi_emit_map(e, ASI_EMIT_BLOCK);
	ok(asi_emit_close(e, "t", &err) < 0 && errno == EINVAL,
	   "a mapping not ended fails (%s)", err.text);
	fclose(fp);
	free(buf);

	buf = NULL;
	fp = open_memstream(&buf, &len);
	e = asi_emit_open(fp, NULL, NULL);
	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "k");
	asi_emit_end(e);
	ok(asi_emit_close(e, "t", &err) < 0 && errno == EINVAL,
	   "a key without a value fails (%s)", err.text);
	fclose(fp);
	free(buf);

	fp = fopen("/dev/full", "w");
	if (fp) {
		e = asi_emit_open(fp, NULL, NULL);
		asi_emit_map(e, ASI_EMIT_BLOCK);
		asi_emit_key(e, "k"), asi_emit_str(e, "v");
		asi_emit_end(e);
		ok(asi_emit_close(e, "t", &err) < 0 && errno == EIO,
		   "a full disk fails with EIO (%s)", err.text);
		fclose(fp);
	}
	ok(asi_emit_open(NULL, NULL, &err) == NULL && errno == EINVAL,
	   "no file: EINVAL");
	ok(asi_emit_close(NULL, "t", NULL) < 0, "closing NULL fails");
}

int main(void)
{
	plan(NO_PLAN);
	test_numbers();
	test_strings();
	test_structure();
	return done_testing();
}
