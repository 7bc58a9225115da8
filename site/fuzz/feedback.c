/* feedback.c - libFuzzer target for feedback records (read back from a
 * log that jobs influence, then used for training). A record that parses
 * formats to one line that parses to the same line again. Built by
 * tests/fuzz/run.sh. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/feedback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r)),
				*q = calloc(1, sizeof(*q));
	autosync_error_t err;
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;

	if (!r || !q)
		abort();
	if (autosync_feedback_parse((const char *)data, size, r, &err) == 0) {
		if (autosync_feedback_format(r, &a, &la, &err) < 0)
			abort(); /* what autosync reads, it can write */
		if (autosync_feedback_parse(a, la, q, &err) < 0 ||
		    autosync_feedback_format(q, &b, &lb, &err) < 0 ||
		    la != lb || memcmp(a, b, la))
			abort();
	}
	free(a);
	free(b);
	free(r);
	free(q);
	return 0;
}
