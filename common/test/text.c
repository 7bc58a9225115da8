/* Unit tests of the shared text helpers: the boolean dialect, "did you
 * mean", and the quoting of untrusted text. */
#include "config.h"

#include <string.h>

#include "common/text.h"
#include "tap.h"

static void test_bool(void)
{
	static const char *const yes[] = {"1",	"true", "TRUE", "yes",
					  "on", "y",	"Y"};
	static const char *const no[] = {"0", "false", "No", "off", "n"};
	static const char *const bad[] = {"", "2", "yep", "t", "nil", " true"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ok(asi_parse_bool(yes[i]) == 1, "'%s' is true", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ok(asi_parse_bool(no[i]) == 0, "'%s' is false", no[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(asi_parse_bool(bad[i]) == -1, "'%s' is neither", bad[i]);
	ok(asi_parse_bool(NULL) == -1, "NULL is neither");
}

static void test_suggest(void)
{
	static const char *const models[] = {
	    "resnet50", "resnet101", "bert-large", "bert-base",
	    "gpt2",	"gpt2-xl",   "vgg16"};
	static const char *const fw[] = {"generic", "pytorch-ddp", "horovod",
					 "autodist"};
	const size_t nm = sizeof(models) / sizeof(models[0]);
	char buf[128];

	is(asi_suggest("resnet05", models, nm), "resnet50", "a swapped pair");
	is(asi_suggest("bert_large", models, nm), "bert-large", "_ for -");
	is(asi_suggest("GPT2", models, nm), "gpt2", "a name in the wrong case");
	is(asi_suggest("vgg19", models, nm), "vgg16", "one letter off");
	ok(asi_suggest("alexnet", models, nm) == NULL,
	   "nothing close: no suggestion");
	ok(asi_suggest("gpt2", models, nm) == NULL,
	   "an exact match needs no suggestion");
	is(asi_suggest("pytorch-dpp", fw, 4), "pytorch-ddp", "framework typo");
	ok(asi_suggest(NULL, fw, 4) == NULL, "NULL word");
	{
		static const char *const cmds[] = {"topo", "plan", "bench",
						   "launch"};
		is(asi_suggest("plna", cmds, 4), "plan",
		   "two neighbours swapped in a short word: one edit");
		is(asi_suggest("lanuch", cmds, 4), "launch",
		   "... in a longer one");
		ok(asi_suggest("pnla", cmds, 4) == NULL,
		   "two edits in a short word: no suggestion");
	}
	is(asi_list(fw, 4, buf, sizeof(buf)),
	   "generic, pytorch-ddp, horovod or autodist",
	   "a list of valid values");
	is(asi_list(fw, 1, buf, sizeof(buf)), "generic", "a list of one");
}

static void test_quote(void)
{
	char b[64], small[16];

	is(asi_quote("plain text", b, sizeof(b)), "plain text",
	   "plain text is kept");
	is(asi_quote("a\nb\tc", b, sizeof(b)), "a\\x0ab\\x09c",
	   "newline and tab escaped");
	is(asi_quote("\x1b[31mred", b, sizeof(b)), "\\x1b[31mred",
	   "escape sequence defused");
	is(asi_quote("x\xc2\x85y", b, sizeof(b)), "x\\u{0085}y",
	   "C1 control (NEL) escaped");
	is(asi_quote("a\xe2\x80\xae"
		     "b",
		     b, sizeof(b)),
	   "a\\u{202e}b", "bidi override escaped");
	is(asi_quote("a\xe2\x81\xa6"
		     "b",
		     b, sizeof(b)),
	   "a\\u{2066}b", "bidi isolate escaped");
	is(asi_quote("a\xe2\x80\x8b"
		     "b",
		     b, sizeof(b)),
	   "a\\u{200b}b", "zero-width space escaped");
	is(asi_quote("caf\xc3\xa9 \xe6\x97\xa5", b, sizeof(b)),
	   "caf\xc3\xa9 \xe6\x97\xa5", "ordinary UTF-8 is kept");
	is(asi_quote("\xff\xc3", b, sizeof(b)), "\\xff\\xc3",
	   "bytes that are not UTF-8 escaped");
	is(asi_quote("\xc0\xaf", b, sizeof(b)), "\\xc0\\xaf",
	   "an overlong form escaped");
	is(asi_quote(NULL, b, sizeof(b)), "", "NULL is empty");
	is(asi_quote("0123456789abcdefghij", small, sizeof(small)), "0123...",
	   "a long value is cut");
	ok(strlen(asi_quote("\x01\x01\x01\x01\x01\x01\x01\x01", small,
			    sizeof(small))) < sizeof(small),
	   "escapes never overflow");
}

static void test_in_list(void)
{
	ok(asi_name_in_list("NCCL_ALGO,NCCL_PROTO", "NCCL_PROTO") &&
	       asi_name_in_list("NCCL_ALGO,NCCL_PROTO", "NCCL_ALGO"),
	   "a name in the list, first or last");
	ok(!asi_name_in_list("NCCL_ALGO_X,NCCL_PROTOCOL", "NCCL_ALGO") &&
	       !asi_name_in_list("NCCL_ALGO_X,NCCL_PROTOCOL", "NCCL_PROTO"),
	   "a prefix of an entry is not in it");
	ok(!asi_name_in_list(NULL, "NCCL_ALGO") &&
	       !asi_name_in_list("", "NCCL_ALGO") &&
	       !asi_name_in_list("A,,B", "") && !asi_name_in_list("A", NULL),
	   "no list, an empty list, an empty or no name: not in it");
}

static void test_utf8(void)
{
	static const struct {
		const char *s;
		size_t len;
		int valid;
		const char *what;
	} v[] = {
	    {"plain", 5, 1, "ASCII"},
	    {"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", 14, 1,
	     "two-, three- and four-byte sequences"},
	    {"a\0b", 3, 1, "a NUL byte is a character"},
	    {"", 0, 1, "nothing"},
	    {"\xc3\xa9", 1, 0, "a sequence cut by the length"},
	    {"\xe6\x97", 2, 0, "a sequence cut at the end"},
	    {"\x80x", 2, 0, "a continuation byte first"},
	    {"\xc0\xaf", 2, 0, "an overlong form"},
	    {"\xed\xa0\x80", 3, 0, "a surrogate"},
	    {"\xf4\x90\x80\x80", 4, 0, "past U+10FFFF"},
	    {"\xff", 1, 0, "0xff"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ok(asi_utf8_valid(v[i].s, v[i].len) == v[i].valid, "utf8: %s",
		   v[i].what);
}

static void test_trim(void)
{
	char a[] = " \t x y \t", b[] = "", c[] = "   ";

	is(asi_trim(a), "x y", "trim: blanks around go, those inside stay");
	is(asi_trim(b), "", "trim: empty");
	is(asi_trim(c), "", "trim: blanks only");
}

int main(void)
{
	plan(NO_PLAN);
	test_trim();
	test_bool();
	test_suggest();
	test_quote();
	test_in_list();
	test_utf8();
	return done_testing();
}
