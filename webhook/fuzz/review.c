/* review.c - libFuzzer target for the webhook's AdmissionReview reader:
 * any body gets a decision and, unless refused, a response that is JSON
 * with the request's uid and allowed true, and a log line that is JSON.
 * Built by tests/fuzz/run.sh (the corpus: tests/fixtures/k8s). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "webhook/mutate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aswh_config c;
	char *resp = NULL, *log = NULL;
	json_t *r, *l;
	int d;

	aswh_config_default(&c);
	d = aswh_review(&c, (const char *)data, size, &resp, &log);
	if (!log || !(l = json_loads(log, 0, NULL)))
		abort(); /* every decision is logged as JSON */
	json_decref(l);
	if (d == ASWH_BAD_REQUEST) {
		if (resp)
			abort();
	} else {
		if (!resp || !(r = json_loads(resp, 0, NULL)))
			abort();
		/* never a denial, whatever the body */
		if (!json_is_true(json_object_get(
			json_object_get(r, "response"), "allowed")))
			abort();
		json_decref(r);
	}
	free(resp);
	free(log);
	return 0;
}
