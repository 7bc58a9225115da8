/*
 * slurmstepd.h - the plugin in slurmstepd, where a step is planned: whether
 * the step is autosync's and whose it is (gathered once, in
 * init_post_opt), its job directory, the planning child (child.h), the
 * nodes' agreement through srun (srun.h), the task environment, and the
 * record at the step's end (record.h). Everything fails open: a problem is
 * deferred to task_init, where it fails the tasks only under
 * --autosync=required (errors in user_init do not reach srun users), and
 * is otherwise one warning from the first task.
 */
#ifndef AUTOSYNC_PLUGIN_SLURMSTEPD_H
#define AUTOSYNC_PLUGIN_SLURMSTEPD_H

#include <slurm/spank.h>

/* Decide the step's mode and, for a planned step, make its job
 * directory (as root, then the user's). */
void as_slurmstepd_init_post_opt(spank_t sp);

/* Plan on this node, agree with the other nodes, set the environment. */
void as_slurmstepd_user_init(spank_t sp);

/* Per task: the deferred problem (-1 fails the task), the task's own
 * variables, the plan's summary for --autosync-explain. */
int as_slurmstepd_task_init(spank_t sp);

/* The step's record, its job directory, and the state forgotten. */
void as_slurmstepd_exit(void);

#endif
