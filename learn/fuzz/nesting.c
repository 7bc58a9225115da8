/* nesting.c - libFuzzer target for the checks a model's bytes pass before
 * XGBoost reads them (learn/nesting.h): neither crashes, overruns or
 * recurses on any input, and a refusal always says why. Built by
 * tests/fuzz/run.sh (not by make). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "learn/nesting.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err = {.text = ""};

	if (learn_ubjson_check(data, size, "fuzz", &err) < 0 && !err.text[0])
		abort();
	err.text[0] = '\0';
	if (learn_json_check((const char *)data, size, "fuzz", &err) < 0 &&
	    !err.text[0])
		abort();
	return 0;
}
