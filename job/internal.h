/* internal.h - shared by the job pipeline's sources; not installed. */
#ifndef AUTOSYNC_JOB_INTERNAL_H
#define AUTOSYNC_JOB_INTERNAL_H

#include <stddef.h>

#include "autosync/common.h"
#include "autosync/planner.h"

/* Write 'len' bytes to dir/name through a temporary file and rename(2),
 * mode 0644, never through a symbolic link. A full disk is reported as
 * such ("DIR/NAME: disk full"). */
int job_write_in(const char *dir, const char *name, const void *data,
		 size_t len, autosync_error_t *errp);

/* A learned simulator loaded for one planning run. */
struct job_simulator {
	void *dl; /* learn/'s module */
	const autosync_simulator_module_t *mod;
	void *h;
	autosync_corrector_t corr; /* what the planner is given */
};
/* Read the simulator file 'path' and load it through 'module': 1, or 0
 * with a one-line reason in why[len] (the caller plans without it). */
int job_simulator_load(struct job_simulator *s, const char *path,
		       const char *module, char *why, size_t len);
void job_simulator_unload(struct job_simulator *s);

#endif
