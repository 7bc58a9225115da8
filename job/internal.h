/* internal.h - shared by the job pipeline's sources; not installed. */
#ifndef AUTOSYNC_JOB_INTERNAL_H
#define AUTOSYNC_JOB_INTERNAL_H

#include <stddef.h>

#include "autosync/common.h"

/* Write 'len' bytes to dir/name through a temporary file and rename(2),
 * mode 0644, never through a symbolic link. A full disk is reported as
 * such ("DIR/NAME: disk full"). */
int job_write_in(const char *dir, const char *name, const void *data,
		 size_t len, autosync_error_t *errp);

/* The agreement's lines (agree.c), parsed strictly; exposed for the fuzz
 * target. A node's report: 0, or -1 when 'line' (no newline) is not one;
 * 'hash' is then a valid plan hash or "-". */
struct job_agree_report {
	char token[40];
	unsigned job, step, node;
	char hash[72];
};
int job_agree_parse_report(const char *line, struct job_agree_report *r);
/* srun's verdict for a node whose hash is 'hash': an enum
 * autosync_agree_verdict, or -1 when 'line' is not a verdict. */
int job_agree_parse_verdict(const char *line, const char *hash);
/* The spec the nodes get: 0, or -1 with errno EINVAL. */
struct job_agree_spec {
	char port[8];
	char token[40];
	int gather_ms;
};
int job_agree_parse_spec(const char *spec, struct job_agree_spec *s,
			 autosync_error_t *errp);

#endif
