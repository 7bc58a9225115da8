/* agree.c - libFuzzer target for the lines of the nodes' agreement
 * (autosync/agree.h): what a node sends srun, what srun answers, and the
 * spec a node reads from the job's environment. All three come from
 * processes or variables the job controls. Built by tests/fuzz/run.sh. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/agree.h"
#include "job/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[AUTOSYNC_AGREE_LINE_MAX + 1];
	struct job_agree_report r;
	struct job_agree_spec s;
	autosync_error_t err;
	int v;

	/* the readers hand over at most one line without its newline */
	if (size > AUTOSYNC_AGREE_LINE_MAX)
		size = AUTOSYNC_AGREE_LINE_MAX;
	memcpy(line, data, size);
	line[size] = '\0';
	if (job_agree_parse_report(line, &r) == 0 &&
	    (strlen(r.hash) < 1 || strlen(r.hash) > 64 ||
	     strlen(r.token) != 32 ||
	     (strcmp(r.hash, "-") &&
	      strspn(r.hash, "0123456789abcdefghijklmnopqrstuvwxyz") !=
		  strlen(r.hash))))
		abort();
	v = job_agree_parse_verdict(line, "0123456789abcdef");
	if (v != -1 && v != AUTOSYNC_AGREE_SAME && v != AUTOSYNC_AGREE_DIFFER &&
	    v != AUTOSYNC_AGREE_INCOMPLETE)
		abort();
	if (v == AUTOSYNC_AGREE_SAME && strcmp(line, "same 0123456789abcdef"))
		abort(); /* only its own hash lets a node apply its plan */
	if (job_agree_parse_spec(line, &s, &err) == 0 &&
	    (strlen(s.token) != 32 || s.gather_ms < 1 ||
	     s.gather_ms > AUTOSYNC_AGREE_GATHER_MAX_MS || atoi(s.port) < 1 ||
	     atoi(s.port) > 65535))
		abort();
	return 0;
}
