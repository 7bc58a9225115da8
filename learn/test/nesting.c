/* nesting.c - a model's bytes checked before XGBoost reads them
 * (learn/nesting.h): what passes, what is refused and how it says so. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/nesting.h"
#include "tap.h"

/* "ok" or the reason for n bytes of UBJSON */
static const char *ubj(const char *b, size_t n)
{
	static char why[AUTOSYNC_ERROR_LEN + 8];
	autosync_error_t e = {.text = ""};

	if (learn_ubjson_check(b, n, "f", &e) == 0)
		return "ok";
	snprintf(why, sizeof(why), "%s", e.text);
	return why;
}
#define UBJ(lit) ubj(lit, sizeof(lit) - 1)

static const char *json(const char *b)
{
	static char why[AUTOSYNC_ERROR_LEN + 8];
	autosync_error_t e = {.text = ""};

	if (learn_json_check(b, strlen(b), "f.json", &e) == 0)
		return "ok";
	snprintf(why, sizeof(why), "%s", e.text);
	return why;
}

/* '{' then a key "a" holding d - 1 nested arrays: d levels */
static char *nested(size_t d, size_t *n, int js)
{
	char *b = malloc(2 * d + 8), *p = b;

	if (!b)
		bail_out("out of memory");
	p += sprintf(p, js ? "{\"a\":" : "{i\001a");
	for (size_t i = 1; i < d; i++)
		*p++ = '[';
	for (size_t i = 1; i < d; i++)
		*p++ = ']';
	*p++ = '}';
	*p = '\0';
	*n = (size_t)(p - b);
	return b;
}

static void test_ubjson(void)
{
	size_t n;
	char *b;

	is(UBJ("{}"), "ok", "an empty object");
	is(UBJ("{i\001aSi\002hiU\001bT}"), "ok", "keys, a string, a bool");
	is(UBJ("{i\001a[$d#i\002\0\0\0\0\0\0\0\0}"), "ok",
	   "a typed array of two float32 ends with its count");
	is(UBJ("{i\001a[$d#i\002\0\0\0\0\0\0\0\0]}"),
	   "f: a key cut or of a bad length at byte 18 of the model",
	   "a counted container has no closing marker");
	is(UBJ("{#i\002i\001aZi\001b[#U\001L\0\0\0\0\0\0\0\001"), "ok",
	   "counted object and array");
	is(UBJ("{i\001a[$S#i\002i\001xi\001y}"), "ok",
	   "a typed array of strings");
	is(UBJ("{i\001a[$T#L\177\377\377\377\377\377\377\377}"), "ok",
	   "a huge typed array of values without payload: no loop");
	is(UBJ("[]"), "f: not an object at byte 1 of the model",
	   "the model is an object");
	is(UBJ("{i\001a[$d#i\003\0\0\0\0\0\0\0\0]}"),
	   "f: a typed array longer than the file at byte 10 of the model",
	   "a typed array's count past the end");
	is(UBJ("{i\001a[$d#L\177\377\377\377\377\377\377\377]}"),
	   "f: a typed array longer than the file at byte 17 of the model",
	   "a huge count: no overflow");
	is(UBJ("{i\001aSi\011hi}"),
	   "f: a string cut or of a bad length at byte 7 of the model",
	   "a string's length past the end");
	is(UBJ("{i\001aSi\377hi}"),
	   "f: a string cut or of a bad length at byte 5 of the model",
	   "a negative string length");
	is(UBJ("{i\001a[#i\377]}"),
	   "f: a container's count cut or negative at byte 6 of the model",
	   "a negative count");
	is(UBJ("{i\011aT}"),
	   "f: a key cut or of a bad length at byte 3 of the model",
	   "a key's length past the end");
	is(UBJ("{i\001a[$N#i\001]}"),
	   "f: a container of no valid type at byte 6 of the model",
	   "no-op as a type");
	is(UBJ("{i\001a[$d]}"),
	   "f: a typed container without a count at byte 7 of the model",
	   "a type without a count");
	is(UBJ("{i\001a[T"), "f: a container not closed at byte 6 of the model",
	   "an unclosed container");
	is(UBJ("{i\001al\0\0}"),
	   "f: a value cut by the end of the file at byte 5 of the model",
	   "an int32 cut by the end");
	is(UBJ("{i\001aX}"), "f: not a UBJSON marker at byte 5 of the model",
	   "an unknown marker");
	is(UBJ("{}}"), "f: bytes after the model at byte 2 of the model",
	   "bytes after the object");
	is(UBJ(""), "f: a value missing at byte 0 of the model", "nothing");

	b = nested(LEARN_MAX_DEPTH, &n, 0);
	is(ubj(b, n), "ok", "%d levels", LEARN_MAX_DEPTH);
	free(b);
	b = nested(LEARN_MAX_DEPTH + 1, &n, 0);
	is(ubj(b, n), "f: nested deeper than 32 levels at byte 36 of the model",
	   "%d levels: refused", LEARN_MAX_DEPTH + 1);
	free(b);
	b = nested(200000, &n, 0);
	is(ubj(b, n), "f: nested deeper than 32 levels at byte 36 of the model",
	   "200,000 levels: refused without recursion");
	free(b);
}

static void test_json(void)
{
	size_t n;
	char *b;

	b = nested(LEARN_MAX_DEPTH, &n, 1);
	is(json(b), "ok", "JSON: %d levels", LEARN_MAX_DEPTH);
	free(b);
	b = nested(LEARN_MAX_DEPTH + 1, &n, 1);
	is(json(b), "f.json:1: nested deeper than 32 levels",
	   "JSON: %d levels refused", LEARN_MAX_DEPTH + 1);
	free(b);
	b = nested(200000, &n, 1);
	is(json(b), "f.json:1: nested deeper than 32 levels",
	   "JSON: 200,000 levels refused");
	free(b);
	is(json("{\"a\":\n\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\"[[\"}"),
	   "ok", "JSON: brackets in a string are text, an escaped quote too");
	{
		char deep[200] = "{\n\"x\\\\\":";
		size_t k = strlen(deep);
		for (int i = 0; i < 40; i++)
			deep[k++] = '[';
		deep[k] = '\0';
		is(json(deep), "f.json:2: nested deeper than 32 levels",
		   "JSON: an escaped backslash ends before the quote; the "
		   "line is counted");
	}
}

int main(void)
{
	test_ubjson();
	test_json();
	done_testing();
}
