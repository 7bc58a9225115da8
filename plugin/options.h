/*
 * options.h - the job's options as Slurm sees them: the spank_option table
 * (--autosync, --autosync-model, --autosync-compression,
 * --autosync-explain), registered in srun, sbatch/salloc and slurmstepd,
 * and their AUTOSYNC_* environment fallbacks. The values themselves are
 * checked by args.c.
 */
#ifndef AUTOSYNC_PLUGIN_OPTIONS_H
#define AUTOSYNC_PLUGIN_OPTIONS_H

#include <slurm/spank.h>

#include "args.h"

/* Register every option, in every context that parses them, even when the
 * plugin is disabled: scripts that use them must keep being accepted
 * while an admin fixes the configuration. Failures are logged. */
void as_options_register(spank_t sp);

/* Apply the AUTOSYNC_MODE / _MODEL / _COMPRESSION fallbacks, below any
 * option: from srun's own environment ('remote' 0) or the job's (1). A bad
 * value is ignored with a message, never a refusal. */
void as_options_apply_env(spank_t sp, int remote);

/* The options of this process's job; the plugin owns them. */
const struct as_args *as_options_args(void);

/* 1 when --autosync-explain was given. */
int as_options_explain(void);

/* At slurm_spank_exit: back to "nothing given". */
void as_options_exit(void);

#endif
