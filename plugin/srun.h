/*
 * srun.h - the plugin in srun: for a step whose nodes will plan, srun
 * gathers their plan hashes while they start (autosync/agree.h), so that
 * they apply a plan only when all made the same one. The nodes' side is in
 * slurmstepd.c.
 */
#ifndef AUTOSYNC_PLUGIN_SRUN_H
#define AUTOSYNC_PLUGIN_SRUN_H

#include <slurm/spank.h>

/* The variable that tells the nodes where srun gathers: set in srun's
 * environment (which srun sends with the step), taken out of the job's
 * environment by every node before its tasks start. */
#define AS_AGREE_VAR "AUTOSYNC_AGREE"

/* In slurm_spank_local_user_init, before the step launches: start the
 * gathering when the step needs it. A failure only leaves the nodes
 * without the check (logged at verbose). */
void as_srun_local_user_init(spank_t sp);

/* At srun's end: stop the gathering (long over by then) and say its
 * verdict at verbose. */
void as_srun_exit(void);

#endif
