/* model.c - libFuzzer target for model files (the plugin reads users'
 * model files). Whatever parses must have a hash, tensors within the
 * documented limits and a compute source. Built by tests/fuzz/run.sh. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err;
	autosync_model_t *m;

	if (!(m = autosync_model_parse((const char *)data, size, "fuzz.yaml",
				       &err)))
		return 0;
	if (strlen(autosync_model_hash(m)) != 16 ||
	    autosync_model_ntensors(m) > AUTOSYNC_MAX_TENSORS ||
	    !autosync_model_compute_source(m))
		abort();
	for (size_t i = 0; i < autosync_model_ntensors(m); i++)
		if (!autosync_model_tensor(m, i)->name)
			abort();
	autosync_model_destroy(m);
	return 0;
}
