/* Unit tests of the key-table reader: one synthetic format with every key
 * type, read from good and bad inputs with the exact messages; the
 * version mechanism (current and previous version, a note for the
 * previous); sizes; collecting every problem. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ykeys.h"
#include "tap.h"

struct thing {
	unsigned version;
	char *name;
	char label[8];
	int fast;
	unsigned count;
	uint64_t big;
	double ratio;
	size_t mem;
	int colour;
	int level;
	unsigned depth;
	int nitems;
};

static const char *const colours[] = {"red", "green", "blue", NULL};

static int level_conv(const char *s)
{
	return !strcmp(s, "low") ? 0 : !strcmp(s, "high") ? 1 : -1;
}

static const char *level_name(int i)
{
	return i == 0 ? "low" : i == 1 ? "high" : NULL;
}

static int items_cb(asi_yreader_t *r, yaml_node_t *v, const char *key,
		    void *base)
{
	struct thing *t = base;

	if (asi_yexpect(r, v, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	t->nitems =
	    (int)(v->data.sequence.items.top - v->data.sequence.items.start);
	return 0;
}

static const struct asi_ykey inner_keys[] = {
    {.name = "depth",
     .type = ASI_Y_UINT,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct thing, depth),
     .umin = 1,
     .umax = 64},
    {.name = NULL},
};

static const struct asi_ykey keys[] = {
    {.name = "thing",
     .type = ASI_Y_VERSION,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct thing, version),
     .umin = 1,
     .umax = 2,
     .what = "a thing file"},
    {.name = "name",
     .type = ASI_Y_STR,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct thing, name)},
    {.name = "label",
     .type = ASI_Y_BUF,
     .flags = ASI_Y_EMPTY_OK,
     .off = offsetof(struct thing, label),
     .size = 8},
    {.name = "fast", .type = ASI_Y_BOOL, .off = offsetof(struct thing, fast)},
    {.name = "count",
     .type = ASI_Y_UINT,
     .off = offsetof(struct thing, count),
     .umin = 1,
     .umax = 10},
    {.name = "big",
     .type = ASI_Y_U64,
     .off = offsetof(struct thing, big),
     .umin = 0,
     .umax = UINT64_MAX},
    {.name = "ratio",
     .type = ASI_Y_DOUBLE,
     .off = offsetof(struct thing, ratio),
     .dmin = 0,
     .dmax = 1},
    {.name = "memory",
     .type = ASI_Y_SIZE,
     .off = offsetof(struct thing, mem),
     .umin = 256ULL << 20,
     .umax = 1ULL << 40},
    {.name = "colour",
     .type = ASI_Y_ENUM,
     .off = offsetof(struct thing, colour),
     .values = colours},
    {.name = "level",
     .type = ASI_Y_ENUM,
     .off = offsetof(struct thing, level),
     .conv = level_conv,
     .name_of = level_name},
    {.name = "inner", .type = ASI_Y_MAP, .sub = inner_keys},
    {.name = "items", .type = ASI_Y_NODE, .cb = items_cb},
    {.name = NULL},
};

static int read_thing(const char *text, struct thing *t, autosync_error_t *e)
{
	asi_yreader_t r = {.errp = e};
	int rv = -1;

	memset(t, 0, sizeof(*t));
	e->text[0] = '\0';
	if (asi_yreader_load(&r, text, strlen(text), "t.yaml", 1000, 0) < 0)
		return -1;
	rv = asi_ykeys_read(&r, asi_yroot(&r), keys, t, "");
	asi_yreader_free(&r);
	return rv;
}

static void good(void)
{
	struct thing t;
	autosync_error_t e;
	char note[256];

	ok(read_thing("thing: 2\nname: x\nlabel: ''\nfast: yes\ncount: 10\n"
		      "big: 18446744073709551615\nratio: 0.5\nmemory: 1TiB\n"
		      "colour: blue\nlevel: high\ninner: {depth: 64}\n"
		      "items: [a, b, c]\n",
		      &t, &e) == 0 &&
	       t.version == 2 && !strcmp(t.name, "x") && !t.label[0] &&
	       t.fast == 1 && t.count == 10 && t.big == UINT64_MAX &&
	       t.ratio == 0.5 && t.mem == (size_t)1 << 40 && t.colour == 2 &&
	       t.level == 1 && t.depth == 64 && t.nitems == 3,
	   "every key type reads: %s", e.text);
	free(t.name);
	ok(read_thing("thing: 1\nname: y\nmemory: 4GiB\n", &t, &e) == 0 &&
	       t.version == 1 && t.mem == (size_t)4 << 30,
	   "the previous version reads: %s", e.text);
	free(t.name);
	ok(asi_yversion_note(note, sizeof(note), "t.yaml", "thing file", 1, 2,
			     "'memory' is new") != NULL &&
	       !strcmp(note, "t.yaml: thing file version 1, read as version "
			     "2: 'memory' is new"),
	   "the previous version has a note: %s", note);
	ok(asi_yversion_note(note, sizeof(note), "t.yaml", "thing file", 2, 2,
			     NULL) == NULL &&
	       !note[0],
	   "the current version has none");
}

static const struct {
	const char *text, *want;
	int err;
} bad[] = {
    {"name: x\n", "t.yaml:1: not a thing file (no 'thing: 2')", EINVAL},
    {"thing: 3\nname: x\n",
     "t.yaml:1: thing: version '3' is not supported (this autosync reads "
     "versions 1 and 2)",
     ENOTSUP},
    {"thing: 2\n", "t.yaml:1: missing key 'name'", EINVAL},
    {"thing: 2\nname: ''\n", "t.yaml:2: name: must not be empty", EINVAL},
    {"thing: 2\nname: [a]\n",
     "t.yaml:2: name: expected a single value, not a list", EINVAL},
    {"thing: 2\nname: x\nlabel: 12345678\n",
     "t.yaml:3: label: bad value '12345678' (longer than 7 bytes)", EINVAL},
    {"thing: 2\nname: x\nfast: maybe\n",
     "t.yaml:3: fast: bad value 'maybe' (expected true or false)", EINVAL},
    {"thing: 2\nname: x\ncount: 11\n",
     "t.yaml:3: count: bad value '11' (expected an integer from 1 to 10)",
     EINVAL},
    {"thing: 2\nname: x\ncount: -1\n",
     "t.yaml:3: count: bad value '-1' (expected an integer from 1 to 10)",
     EINVAL},
    {"thing: 2\nname: x\nbig: 18446744073709551616\n",
     "t.yaml:3: big: bad value '18446744073709551616' (expected an integer "
     "from 0 to 18446744073709551615)",
     EINVAL},
    {"thing: 2\nname: x\nratio: nan\n",
     "t.yaml:3: ratio: bad value 'nan' (expected a number from 0 to 1)",
     EINVAL},
    {"thing: 2\nname: x\nmemory: 2TiB\n",
     "t.yaml:3: memory: bad value '2TiB' (expected a size from 256MiB to "
     "1TiB, such as 1048576, 64MiB or 100MB)",
     EINVAL},
    {"thing: 2\nname: x\nmemory: 1 GiB\n",
     "t.yaml:3: memory: bad value '1 GiB' (expected a size from 256MiB to "
     "1TiB, such as 1048576, 64MiB or 100MB)",
     EINVAL},
    {"thing: 2\nname: x\ncolour: bleu\n",
     "t.yaml:3: colour: bad value 'bleu' (did you mean 'blue'? expected "
     "red, green or blue)",
     EINVAL},
    {"thing: 2\nname: x\nlevel: medium\n",
     "t.yaml:3: level: bad value 'medium' (expected low or high)", EINVAL},
    {"thing: 2\nname: x\ninner: {}\n", "t.yaml:3: missing key 'inner.depth'",
     EINVAL},
    {"thing: 2\nname: x\ninner: {depth: 1, dept: 2}\n",
     "t.yaml:3: unknown key 'inner.dept' (did you mean 'depth'? known: "
     "depth)",
     EINVAL},
    {"thing: 2\nname: x\ninner: 5\n",
     "t.yaml:3: inner: expected a mapping, not '5'", EINVAL},
    {"thing: 2\nname: x\nitems: {a: 1}\n",
     "t.yaml:3: items: expected a list, not a mapping", EINVAL},
    {"thing: 2\nname: x\ncolor: red\n",
     "t.yaml:3: unknown key 'color' (did you mean 'colour'? known: thing, "
     "name, label, fast, count, big, ratio, memory, colour, level, inner "
     "or items)",
     EINVAL},
    {"thing: 2\nname: x\n\"\\e[31mred\": 1\n",
     "t.yaml:3: unknown key '\\x1b[31mred' (known: thing, name, label, "
     "fast, count, big, ratio, memory, colour, level, inner or items)",
     EINVAL},
    {"thing: 2\nname: x\nname: y\n",
     "t.yaml:3: key 'name' given twice (first on line 2)", EINVAL},
    {"- a\n", "t.yaml:1: the file: expected a mapping, not a list", EINVAL},
    {"", "t.yaml:1: empty document", EINVAL},
    {"thing: 2\nname: x\ncount: [\n", NULL, EINVAL},
};

/* every problem, in order, for a reader that collects them */
struct seen {
	char text[8][AUTOSYNC_ERROR_LEN];
	int n;
};

static void collect(const char *msg, void *arg)
{
	struct seen *s = arg;

	if (s->n < 8)
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s", msg);
	s->n++;
}

static void collecting(void)
{
	static const char text[] = "thing: 2\nname: x\ncount: 0\ncolour: red\n"
				   "colour: blue\nshade: 3\nfast: 2\n";
	struct seen s = {.n = 0};
	autosync_error_t e = {.text = ""};
	asi_yreader_t r = {
	    .errp = &e, .problem = collect, .arg = &s, .collect = 1};
	struct thing t;

	memset(&t, 0, sizeof(t));
	ok(asi_yreader_load(&r, text, strlen(text), "t.yaml", 100, 0) == 0,
	   "collecting: a repeated key does not stop the load");
	ok(asi_ykeys_read(&r, asi_yroot(&r), keys, &t, "") < 0 && s.n == 4 &&
	       r.nproblems == 4,
	   "every problem is reported (%d)", s.n);
	is(s.text[0],
	   "t.yaml:3: count: bad value '0' (expected an integer from 1 to 10)",
	   "first");
	is(s.text[1], "t.yaml:5: key 'colour' given twice (first on line 4)",
	   "second");
	ok(!strncmp(s.text[2], "t.yaml:6: unknown key 'shade' (known: ", 38),
	   "third: %s", s.text[2]);
	is(s.text[3], "t.yaml:7: fast: bad value '2' (expected true or false)",
	   "fourth");
	is(e.text, s.text[0], "the error buffer keeps the first");
	ok(t.colour == 0 && t.version == 2, "what was right was read");
	free(t.name);
	asi_yreader_free(&r);
}

static void sizes(void)
{
	static const struct {
		const char *s;
		uint64_t want;
	} v[] = {
	    {"1", 1},
	    {"1B", 1},
	    {"2K", 2000},
	    {"2KB", 2000},
	    {"3KiB", 3072},
	    {"5M", 5000000},
	    {"5MiB", 5u << 20},
	    {"7G", 7000000000ULL},
	    {"7GiB", 7ULL << 30},
	    {"1T", 1000000000000ULL},
	    {"1TB", 1000000000000ULL},
	    {"1TiB", 1ULL << 40},
	    {"1024GiB", 1ULL << 40},
	};
	static const char *const badv[] = {
	    "",
	    "MiB",
	    "-1",
	    "1.5GiB",
	    "1 MiB",
	    "1mib",
	    "1PiB",
	    "0x10",
	    "99999999999999999999",
	    "20000000TiB",
	};
	char b[32];
	uint64_t x;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ok(asi_parse_size(v[i].s, 0, UINT64_MAX, &x) == 0 &&
		       x == v[i].want,
		   "size '%s'", v[i].s);
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++) {
		errno = 0;
		ok(asi_parse_size(badv[i], 0, UINT64_MAX, &x) < 0 &&
		       errno == EINVAL,
		   "not a size: '%s'", badv[i]);
	}
	errno = 0;
	ok(asi_parse_size("2TiB", 1, 1ULL << 40, &x) < 0 && errno == ERANGE,
	   "past the maximum: ERANGE");
	is(asi_format_size(4ULL << 30, b, sizeof(b)), "4GiB", "4GiB");
	is(asi_format_size(100000000, b, sizeof(b)), "100MB", "100MB");
	is(asi_format_size(1, b, sizeof(b)), "1", "1");
	is(asi_format_size(1ULL << 40, b, sizeof(b)), "1TiB", "1TiB");
}

int main(void)
{
	plan(NO_PLAN);
	good();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct thing t;
		autosync_error_t e;
		errno = 0;
		ok(read_thing(bad[i].text, &t, &e) < 0 && errno == bad[i].err &&
		       (!bad[i].want || !strcmp(e.text, bad[i].want)),
		   "bad %zu: %s", i, e.text);
		if (bad[i].want && strcmp(e.text, bad[i].want))
			diag("want: %s", bad[i].want);
		free(t.name);
	}
	collecting();
	sizes();
	done_testing();
}
