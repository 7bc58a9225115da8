/*
 * spank_autosync.c - the autosync SPANK plugin: option registration, the
 * dispatch of Slurm's callbacks, and the step-side injection. All logic
 * lives in the libraries; this file adapts them to slurmstepd.
 *
 * Rules kept here (see autosync-spank(8)):
 *  - options are registered with spank_option_register() in every context
 *    so that srun, sbatch/salloc (#SBATCH lines) and slurmstepd know them;
 *  - remote callbacks fail open: they log and return 0, unless the user
 *    asked for --autosync=required, which is reported from task_init
 *    (errors in user_init are not shown to srun users);
 *  - plugstack arguments are parsed in every callback (job_prolog and
 *    job_epilog run without slurm_spank_init).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "args.h"
#include "autosync/common.h"
#include "autosync/siteconf.h"
#include "pconf.h"

SPANK_PLUGIN(autosync, 1);

#define MSG_MAX 1024

static struct autosync_context {
	struct as_pconf pconf;
	int pconf_ok;          /* plugstack arguments parsed cleanly */
	char pconf_err[MSG_MAX];
	struct as_args args;
	char deferred[MSG_MAX]; /* a problem to report in task_init */
	int deferred_fatal;     /* 1: fail the tasks (required mode) */
	int injected;           /* user_init set the task environment */
} context = { .args = { .mode = AS_MODE_UNSET } };

static int cb_mode(int val, const char *optarg, int remote);
static int cb_model(int val, const char *optarg, int remote);

static struct spank_option options[] = {
	{ "autosync", "auto|off|required|PLAN",
	  "[autosync] plan gradient synchronization for this job: auto "
	  "(default when given without a value), off, required (fail the step "
	  "if no plan can be made) or the path of a plan file",
	  2, 0, (spank_opt_cb_f) cb_mode },
	{ "autosync-model", "NAME|PATH",
	  "[autosync] the model being trained: a catalog name (e.g. "
	  "resnet50, bert-large) or the path of a model file; implies "
	  "--autosync=auto",
	  1, 0, (spank_opt_cb_f) cb_model },
	SPANK_OPTIONS_TABLE_END
};

/* slurm_info() in srun/sbatch reaches the user's terminal: keep routine
 * messages at verbose there; in slurmd/slurmstepd info goes to the log. */
static void plog(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void plog(int level, const char *fmt, ...)
{
	char msg[MSG_MAX];
	spank_context_t c = spank_context();
	int user_side = (c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	switch (level) {
	case AUTOSYNC_LOG_ERROR:
		slurm_error("%s", msg);
		break;
	case AUTOSYNC_LOG_WARNING:
	case AUTOSYNC_LOG_INFO:
		if (user_side)
			slurm_verbose("%s", msg);
		else
			slurm_info("%s", msg);
		break;
	default:
		slurm_debug("%s", msg);
		break;
	}
}

/* Parse the plugstack arguments; called from every callback. */
static void load_pconf(int ac, char **av)
{
	context.pconf_ok = as_pconf_parse(&context.pconf, ac, av,
					  context.pconf_err,
					  sizeof(context.pconf_err)) == 0;
}

/* Option callbacks: validation happens on the user's side (remote == 0),
 * where a non-zero return refuses the job with our message. In slurmstepd
 * a value that got past validation is only logged. Idempotent: Slurm calls
 * them twice per option for srun steps. */
static int option_result(int rc, const char *err, int remote)
{
	if (rc == 0)
		return 0;
	if (!remote) {
		slurm_error("%s", err);
		return -1;
	}
	plog(AUTOSYNC_LOG_INFO, "%s (ignored in slurmstepd)", err);
	return 0;
}

static int cb_mode(int val, const char *optarg, int remote)
{
	char err[MSG_MAX];

	(void) val;
	return option_result(as_args_set_mode(&context.args,
					      optarg ? optarg : "auto",
					      AS_SRC_OPTION, "--autosync", err,
					      sizeof(err)),
			     err, remote);
}

static int cb_model(int val, const char *optarg, int remote)
{
	char err[MSG_MAX];

	(void) val;
	return option_result(as_args_set_model(&context.args, optarg,
					       AS_SRC_OPTION, "--autosync-model",
					       err, sizeof(err)),
			     err, remote);
}

/* Environment fallbacks, lower precedence than any option. On the user's
 * side a bad value refuses the job like a bad option would; in slurmstepd
 * it is ignored with a warning. */
static int apply_env(spank_t sp, int remote)
{
	static const struct {
		const char *var;
		int (*set)(struct as_args *, const char *, int, const char *,
			   char *, size_t);
	} env[] = {
		{ "AUTOSYNC_MODE", as_args_set_mode },
		{ "AUTOSYNC_MODEL", as_args_set_model },
	};
	char val[PATH_MAX], err[MSG_MAX];

	for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		const char *v = NULL;

		if (remote) {
			if (spank_getenv(sp, env[i].var, val, sizeof(val)) ==
			    ESPANK_SUCCESS)
				v = val;
		} else {
			v = getenv(env[i].var);
		}
		if (!v)
			continue;
		if (env[i].set(&context.args, v, AS_SRC_ENV, env[i].var, err,
			       sizeof(err)) < 0) {
			if (!remote) {
				slurm_error("%s", err);
				return -1;
			}
			plog(AUTOSYNC_LOG_WARNING, "%s (ignored)", err);
		}
	}
	return 0;
}

/* Remember a problem for task_init: in required mode the tasks fail with
 * it, otherwise rank 0 prints it once as a warning and the step runs as
 * if autosync were not there. */
static void defer(int fatal, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void defer(int fatal, const char *fmt, ...)
{
	va_list ap;

	if (context.deferred[0])
		return; /* the first cause is the one to report */
	va_start(ap, fmt);
	vsnprintf(context.deferred, sizeof(context.deferred), fmt, ap);
	va_end(ap);
	context.deferred_fatal = fatal;
	plog(AUTOSYNC_LOG_INFO, "%s", context.deferred);
}

static int set_env(spank_t sp, const char *var, const char *val)
{
	spank_err_t rc = spank_setenv(sp, var, val, 1);

	if (rc != ESPANK_SUCCESS) {
		defer(0, "autosync: cannot set %s: %s", var,
		      spank_strerror(rc));
		return -1;
	}
	return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	load_pconf(ac, av);
	if (c == S_CTX_SLURMD) {
		plog(AUTOSYNC_LOG_INFO, "autosync: version %s",
		     autosync_version());
		if (!context.pconf_ok)
			plog(AUTOSYNC_LOG_ERROR,
			     "%s; autosync is disabled on this node",
			     context.pconf_err);
		return 0;
	}
	if (c != S_CTX_LOCAL && c != S_CTX_ALLOCATOR && c != S_CTX_REMOTE)
		return 0;
	/* Register even when disabled: scripts that use the options must
	 * keep being accepted while an admin fixes the configuration. */
	for (int i = 0; options[i].name; i++) {
		spank_err_t rc = spank_option_register(sp, &options[i]);
		if (rc != ESPANK_SUCCESS)
			plog(AUTOSYNC_LOG_ERROR,
			     "autosync: spank_option_register(%s): %s",
			     options[i].name, spank_strerror(rc));
	}
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	load_pconf(ac, av);
	if (c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR)
		return apply_env(sp, 0);
	if (c == S_CTX_REMOTE)
		(void) apply_env(sp, 1);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	autosync_error_t err = { .text = "" };
	autosync_siteconf_t *site = NULL;
	int site_default = AS_MODE_OFF, mode, fatal;
	char partition[128];

	load_pconf(ac, av);
	mode = as_args_effective_mode(&context.args, AS_MODE_OFF);
	fatal = mode == AS_MODE_REQUIRED || (context.pconf_ok && context.pconf.strict);
	if (!context.pconf_ok) {
		if (mode != AS_MODE_UNSET && mode != AS_MODE_OFF)
			defer(fatal, "%s; running without autosync",
			      context.pconf_err);
		return 0;
	}
	if (context.pconf.config[0]) {
		site = autosync_siteconf_load(context.pconf.config, &err);
		if (!site) {
			if (mode != AS_MODE_OFF)
				defer(fatal,
				      "autosync: site config: %s; running "
				      "without autosync", err.text);
			return 0;
		}
		if (spank_getenv(sp, "SLURM_JOB_PARTITION", partition,
				 sizeof(partition)) != ESPANK_SUCCESS)
			partition[0] = '\0';
		site_default = autosync_siteconf_default_mode(
				       site, partition[0] ? partition : NULL) ==
				       AUTOSYNC_SITE_MODE_AUTO
			       ? AS_MODE_AUTO
			       : AS_MODE_OFF;
	}
	mode = as_args_effective_mode(&context.args, site_default);
	if (mode == AS_MODE_OFF || mode == AS_MODE_UNSET)
		goto out; /* not asked for: the step sees nothing of autosync */

	if (set_env(sp, "AUTOSYNC_MODE",
		    mode == AS_MODE_PLAN ? context.args.plan_path
					 : as_mode_name(mode)) < 0)
		goto out;
	if (context.args.model[0] &&
	    set_env(sp, "AUTOSYNC_MODEL", context.args.model) < 0)
		goto out;
	context.injected = 1;
out:
	autosync_siteconf_destroy(site);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	uint32_t gtid = 0;

	load_pconf(ac, av);
	if (!context.deferred[0])
		return 0;
	if (context.deferred_fatal) {
		slurm_error("%s", context.deferred);
		return -1;
	}
	/* One warning per step, from its first task, on the user's stderr. */
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &gtid) == ESPANK_SUCCESS &&
	    gtid == 0)
		dprintf(STDERR_FILENO, "%s\n", context.deferred);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void) sp;
	(void) ac;
	(void) av;
	memset(&context, 0, sizeof(context));
	context.args.mode = AS_MODE_UNSET;
	return 0;
}
