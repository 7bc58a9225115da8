/*
 * common.h - what every Slurm context of the SPANK plugin shares: the
 * plugstack arguments, the site config and the log. dispatch.c switches on
 * spank_context() into one file per context (slurmd.c, srun.c,
 * slurmstepd.c); options.c holds the job's options in all of them.
 */
#ifndef AUTOSYNC_PLUGIN_COMMON_H
#define AUTOSYNC_PLUGIN_COMMON_H

#include "autosync/siteconf.h"
#include "pconf.h"

#define AS_MSG_MAX 1024

/* Parse the plugstack arguments (the words after the plugin's path in
 * plugstack.conf). Called from every callback: contexts such as
 * job_prolog run without slurm_spank_init. */
void as_plugin_load_pconf(int ac, char **av);

/* The parsed arguments, or NULL when they are bad (then
 * as_plugin_pconf_error() says why, in one line). */
const struct as_pconf *as_plugin_pconf(void);
const char *as_plugin_pconf_error(void);

/* The site config, read once per process (the path comes from the
 * plugstack's config=): NULL when none is configured or it is broken (then
 * as_plugin_site_error() says why). The plugin owns it until
 * as_plugin_exit(). */
autosync_siteconf_t *as_plugin_site(void);
const char *as_plugin_site_error(void);

/* How long job directories stay after their step (the site config's
 * keep_job_files, default a day). */
long as_plugin_keep_seconds(void);

/* Log one message (AUTOSYNC_LOG_* levels), escaped: user-side contexts
 * (srun, sbatch) keep routine messages at verbose, since slurm_info()
 * there reaches the user's terminal; in slurmd and slurmstepd info goes to
 * the log. */
void as_plugin_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* At slurm_spank_exit: the site config goes, the arguments are forgotten. */
void as_plugin_exit(void);

#endif
