/*
 * record.h - the end of a planned step in slurmstepd: one feedback record
 * from this node (the plan's side from the planning child, the job's
 * measurements from its report file, the identity from Slurm), appended to
 * the site's feedback log and kept beside the plan; then the job directory
 * keeps or loses its files as the site says.
 */
#ifndef AUTOSYNC_PLUGIN_RECORD_H
#define AUTOSYNC_PLUGIN_RECORD_H

#include <stdint.h>
#include <sys/types.h>

/* What the step knows of itself; the strings are the caller's. */
struct as_record_step {
	uint32_t job, step;
	uid_t uid;
	const char *node;   /* slurmd's name for this node */
	const char *jobdir; /* the step's directory; "" = none */
	const char *record; /* the planning child's part of the record */
};

/* Write the step's record. Problems are logged, never fatal. */
void as_record_write(const struct as_record_step *s);

/* The job directory stays for the site's keep_job_files from now
 * (without the report, which the record now holds), or goes at once; its
 * hold ('hold', autosync_jobdir_hold(), or -1) is given up either way. */
void as_record_leave_jobdir(const char *jobdir, int hold);

#endif
