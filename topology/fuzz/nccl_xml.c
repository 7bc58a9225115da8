/* nccl_xml.c - libFuzzer target for the NCCL topology XML reader (the
 * bounded XML parser and the model built from it) and the writers. Built
 * by tests/fuzz/run.sh with clang and hwloc (not by make). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../topo_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err;
	struct autosync_topo *t;
	FILE *null;

	if (size > 65536)
		return 0;
	t = topo_load_nccl("fuzz", (const char *)data, size, &err);
	if (!t)
		return 0;
	if ((null = fopen("/dev/null", "w"))) {
		autosync_env_t env[8];
		size_t n;

		(void)autosync_topo_write_nccl_xml(t, null, &err);
		(void)autosync_topo_write_yaml(t, null, &err);
		(void)autosync_topo_write_text(t, null, &err);
		for (unsigned r = 0; r < autosync_topo_ngpus(t) || r == 0; r++)
			(void)autosync_topo_rank_env(t, r, env, 8, &n, &err);
		fclose(null);
	}
	(void)autosync_topo_restrict(t, "1,0", "0-3", &err);
	autosync_topo_destroy(t);
	return 0;
}
