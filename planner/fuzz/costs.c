/* costs.c - libFuzzer target for calibration files (the site's cost
 * constants, read at every job start): a refusal says why and leaves the
 * constants as they were; what parses is finite and parses again to the
 * same constants. Built by tests/fuzz/run.sh (not by make). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err = {.text = ""};
	autosync_costs_t k, before, again;
	const double *v = (const double *)&k;

	autosync_costs_default(&k);
	before = k;
	if (autosync_costs_parse(&k, (const char *)data, size, "fuzz.yaml",
				 &err) < 0) {
		if (!err.text[0] || memcmp(&k, &before, sizeof(k)))
			abort();
		return 0;
	}
	/* the struct is doubles only (planner.h) */
	for (size_t i = 0; i < sizeof(k) / sizeof(double); i++)
		if (!isfinite(v[i]))
			abort();
	autosync_costs_default(&again);
	if (autosync_costs_parse(&again, (const char *)data, size, "fuzz.yaml",
				 &err) < 0 ||
	    memcmp(&k, &again, sizeof(k)))
		abort();
	return 0;
}
