/* rules.c - libFuzzer target for the NCCL tuner's rules file (read inside
 * every NCCL process of a job). Whatever parses has rules within their
 * documented ranges. Built by tests/fuzz/run.sh. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "tunerules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct as_tune_table t;
	char err[256];
	int n;

	t.n = 0;
	n = as_tune_parse_rules((const char *)data, size, &t, err, sizeof(err));
	if (n > 0 && (size_t)n != t.n)
		abort();
	for (size_t i = 0; n > 0 && i < t.n; i++)
		if (t.r[i].min_bytes >= t.r[i].max_bytes || t.r[i].algo < 0 ||
		    t.r[i].nchannels > 64)
			abort();
	return 0;
}
