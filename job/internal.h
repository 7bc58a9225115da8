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

#endif
