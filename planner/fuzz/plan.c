/* plan.c - libFuzzer target for the plan file reader (the plugin reads
 * user-supplied plans: --autosync=PATH). Whatever parses must write, parse
 * back and write the same bytes, and take a derived NCCL table. Built by
 * tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,undefined (not
 * by make). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *text(const autosync_plan_t *p, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);

	if (!fp)
		abort();
	if (autosync_plan_write(p, fp, NULL) < 0)
		abort();
	fclose(fp);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err;
	autosync_plan_t *p, *q;
	char *a, *b;
	size_t la, lb;

	if (size > 65536)
		return 0;
	if (!(p = autosync_plan_parse((const char *)data, size, "fuzz.yaml",
				      &err)))
		return 0;
	a = text(p, &la);
	if (!(q = autosync_plan_parse(a, la, "again.yaml", &err)))
		abort(); /* what autosync writes, autosync reads */
	b = text(q, &lb);
	if (la != lb || memcmp(a, b, la))
		abort();
	if (autosync_plan_derive_nccl(q, NULL, &err) < 0)
		abort();
	free(a);
	free(b);
	autosync_plan_destroy(p);
	autosync_plan_destroy(q);
	return 0;
}
