/* envelope.c - the binary simulator file's header (learn/envelope.h):
 * what it accepts, what it refuses and how it says so. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/envelope.h"
#include "tap.h"

/* hdr and body opened as one file; "ok BODY" or "R REASON" in why[] */
static void open_it(const char *hdr, const char *body, char *why, size_t n)
{
	autosync_error_t e = {.text = ""};
	size_t hl = strlen(hdr), bl = strlen(body);
	char *buf = malloc(hl + bl + 1);
	const void *b = NULL;
	size_t blen = 0;
	int r;

	if (!buf)
		bail_out("out of memory");
	memcpy(buf, hdr, hl);
	memcpy(buf + hl, body, bl + 1);
	r = learn_envelope_open(buf, hl + bl, "f", &b, &blen, &e);
	if (r == 1)
		snprintf(why, n, "ok %.*s", (int)blen, (const char *)b);
	else
		snprintf(why, n, "%d %s", r, e.text);
	free(buf);
}

#define H "autosync-simulator 1 ubj "
/* FNV-1a as autosync_hash_hex gives it, of "hello" and of "" */
#define HELLO "005a0d15131ec7a1"
#define BAD                                                              \
	"-1 f: a bad header (expected 'autosync-simulator 1 ubj LENGTH " \
	"HASH')"

int main(void)
{
	char hdr[LEARN_ENVELOPE_MAX], why[256], big[LEARN_ENVELOPE_MAX + 8];
	size_t hl = learn_envelope_header("hello", 5, hdr);

	is(hdr, H "5 " HELLO "\n", "the header: length and hash of the body");
	ok(hl == strlen(hdr), "its length is returned (%zu)", hl);
	open_it(hdr, "hello", why, sizeof(why));
	is(why, "ok hello", "a header of ours: the body");
	open_it(H "5 " HELLO "\n", "hellO", why, sizeof(why));
	is(why,
	   "-1 f: its bytes do not match the hash in its header (changed "
	   "since it was written)",
	   "a changed byte: refused");
	open_it(H "5 " HELLO "\n", "hell", why, sizeof(why));
	is(why,
	   "-1 f: 4 bytes after the header, which says 5 (cut or changed "
	   "since it was written)",
	   "a cut body: refused");
	open_it(H "5 " HELLO "\n", "hello!", why, sizeof(why));
	is(why,
	   "-1 f: 6 bytes after the header, which says 5 (cut or changed "
	   "since it was written)",
	   "bytes added: refused");
	learn_envelope_header("", 0, hdr);
	open_it(hdr, "", why, sizeof(why));
	is(why, "ok ", "an empty body is the header's business, not ours");
	open_it("{\"learner\": {}}", "", why, sizeof(why));
	is(why, "0 ", "JSON: not this format (0, no message)");
	open_it("autosync-simulato", "", why, sizeof(why));
	is(why, "0 ", "a cut magic: not this format");
	open_it("autosync-simulator 2 ubj 5 " HELLO "\n", "hello", why,
		sizeof(why));
	is(why, "-1 f: format '2 ubj' (this autosync reads '1 ubj')",
	   "another version: named");
	open_it("autosync-simulator 1 json 5 " HELLO "\n", "hello", why,
		sizeof(why));
	is(why, "-1 f: format '1 json' (this autosync reads '1 ubj')",
	   "another kind: named");
	static const char *const bad[] = {
	    H "05 " HELLO "\n",			  /* a leading zero */
	    H "+5 " HELLO "\n",			  /* a sign */
	    H "5 " HELLO " \n",			  /* a space after the hash */
	    H "5 005A0D15131EC7A1\n",		  /* upper case */
	    H "5 005a0d15131ec7a\n",		  /* 15 digits */
	    H "5  " HELLO "\n",			  /* two spaces */
	    H "99999999999999999999 " HELLO "\n", /* 20 digits */
	    H "9999999999999999999 " HELLO "\n",  /* 19: beyond 18 */
	    "autosync-simulator x\n",
	    "autosync-simulator \n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		open_it(bad[i], "hello", why, sizeof(why));
		is(why, BAD, "a bad header %zu: refused", i);
	}
	/* no newline within the header's longest form */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, H, strlen(H));
	open_it(big, "\nhello", why, sizeof(why));
	is(why, BAD, "a header line too long: refused");
	return done_testing();
}
