/*
 * dispatch.c - the autosync SPANK plugin's entry points: each of Slurm's
 * callbacks switches on spank_context() into the file of that context
 * (slurmd.c, srun.c, slurmstepd.c; options.c in all that parse options).
 * All logic lives in the libraries; these files adapt them to Slurm.
 *
 * Rules kept here (see autosync-spank(8)):
 *  - options are registered with spank_option_register() in every context
 *    that parses them, so that srun, sbatch/salloc (#SBATCH lines) and
 *    slurmstepd know them;
 *  - remote callbacks fail open: they log and return 0, unless the user
 *    asked for --autosync=required, which is reported from task_init
 *    (errors in user_init are not shown to srun users);
 *  - plugstack arguments are parsed in every callback (job_prolog and
 *    job_epilog run without slurm_spank_init).
 */
#include "config.h"

#include <slurm/spank.h>

#include "common.h"
#include "options.h"
#include "slurmd.h"
#include "slurmstepd.h"
#include "srun.h"

SPANK_PLUGIN(autosync, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	as_plugin_load_pconf(ac, av);
	if (c == S_CTX_SLURMD)
		as_slurmd_init();
	else if (c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR || c == S_CTX_REMOTE)
		as_options_register(sp);
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	as_plugin_load_pconf(ac, av);
	if (c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR) {
		as_options_apply_env(sp, 0);
	} else if (c == S_CTX_REMOTE) {
		as_options_apply_env(sp, 1);
		as_slurmstepd_init_post_opt(sp);
	}
	return 0;
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	as_plugin_load_pconf(ac, av);
	if (spank_context() == S_CTX_LOCAL)
		as_srun_local_user_init(sp);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	as_plugin_load_pconf(ac, av);
	if (spank_context() == S_CTX_REMOTE)
		as_slurmstepd_user_init(sp);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	as_plugin_load_pconf(ac, av);
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	return as_slurmstepd_task_init(sp);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	(void)sp;
	(void)ac;
	(void)av;
	if (c == S_CTX_LOCAL)
		as_srun_exit();
	else if (c == S_CTX_REMOTE)
		as_slurmstepd_exit();
	as_options_exit();
	as_plugin_exit();
	return 0;
}
