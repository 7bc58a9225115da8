/* envelope.c - libFuzzer target for the binary simulator file's header
 * (learn/envelope.h): what it accepts holds exactly the bytes its header
 * names and hashes, and a header written for them is accepted again.
 * Built by tests/fuzz/run.sh (not by make). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "learn/envelope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err;
	const void *body = NULL, *b2 = NULL;
	size_t blen = 0, b2len = 0, hlen;
	char hdr[LEARN_ENVELOPE_MAX];
	uint8_t *again;
	int r = learn_envelope_open(data, size, "fuzz", &body, &blen, &err);

	if (r < 0 && !err.text[0])
		abort(); /* a refusal always says why */
	if (r <= 0)
		return 0;
	if ((const uint8_t *)body < data || blen > size ||
	    (const uint8_t *)body + blen != data + size)
		abort();
	/* the same bytes behind a header of ours: accepted, same body */
	hlen = learn_envelope_header(body, blen, hdr);
	if (hlen >= LEARN_ENVELOPE_MAX || !(again = malloc(hlen + blen + 1)))
		abort();
	memcpy(again, hdr, hlen);
	memcpy(again + hlen, body, blen);
	if (learn_envelope_open(again, hlen + blen, "fuzz", &b2, &b2len,
				&err) != 1 ||
	    b2len != blen || memcmp(b2, body, blen))
		abort();
	free(again);
	return 0;
}
