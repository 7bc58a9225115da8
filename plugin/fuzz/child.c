/* child.c - libFuzzer target for what a planning child sends back to
 * slurmstepd (which runs as root): whatever parses names only variables
 * autosync may set and a 16-digit plan hash. Built by tests/fuzz/run.sh. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/job.h"
#include "child.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct as_child_out out;
	autosync_error_t err;

	memset(&out, 0, sizeof(out));
	if (as_child_parse_result((const char *)data, size, &out, &err) == 0) {
		if (strlen(out.plan_hash) != 16)
			abort();
		for (size_t i = 0; i < out.nenv; i++)
			if (!autosync_job_env_allowed(out.env[i].name, 0))
				abort();
		for (unsigned r = 0; r < out.nranks; r++)
			for (size_t i = 0; i < out.rank_n[r]; i++)
				if (!autosync_job_env_allowed(
					out.rank_env[r][i].name, 1))
					abort();
	}
	as_child_out_free(&out);
	return 0;
}
