/* options.c - see options.h */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/common.h"
#include "common.h"
#include "common/text.h"
#include "options.h"

static struct {
	struct as_args args;
	int explain;
} opts = {.args = {.mode = AS_MODE_UNSET}};

static int cb_value(int val, const char *optarg, int remote);
static int cb_explain(int val, const char *optarg, int remote);

/* The options that carry a value, with their environment fallbacks; an
 * option's 'val' in the table below is its index here. */
static const struct value_option {
	const char *option; /* as messages name it */
	const char *env;
	const char *bare; /* the value of the option given without one */
	int (*set)(struct as_args *, const char *, int, const char *, char *,
		   size_t);
} values[] = {
    {"--autosync", "AUTOSYNC_MODE", "auto", as_args_set_mode},
    {"--autosync-model", "AUTOSYNC_MODEL", NULL, as_args_set_model},
    {"--autosync-compression", "AUTOSYNC_COMPRESSION", NULL,
     as_args_set_compression},
};

#define NVALUES (int)(sizeof(values) / sizeof(values[0]))

static struct spank_option options[] = {
    {"autosync", "auto|off|required|PLAN",
     "[autosync] plan gradient synchronization for this job: auto "
     "(default when given without a value), off, required (fail the step "
     "if no plan can be made) or the path of a plan file",
     2, 0, (spank_opt_cb_f)cb_value},
    {"autosync-model", "NAME|PATH",
     "[autosync] the model being trained: a catalog name (e.g. "
     "resnet50, bert-large) or the path of a model file; implies "
     "--autosync=auto",
     1, 1, (spank_opt_cb_f)cb_value},
    {"autosync-compression", "yes|no",
     "[autosync] allow lossy gradient compression (fp16/bf16, PowerSGD) "
     "when the plan predicts it pays; default no",
     2, 2, (spank_opt_cb_f)cb_value},
    {"autosync-explain", NULL,
     "[autosync] print a summary of the chosen plan on the job's "
     "standard error (from its first task)",
     0, 1, (spank_opt_cb_f)cb_explain},
    SPANK_OPTIONS_TABLE_END};

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
	as_plugin_log(AUTOSYNC_LOG_INFO, "%s (ignored in slurmstepd)", err);
	return 0;
}

static int cb_value(int val, const char *optarg, int remote)
{
	char err[AS_MSG_MAX];

	if (val < 0 || val >= NVALUES)
		return 0;
	return option_result(values[val].set(&opts.args,
					     optarg ? optarg : values[val].bare,
					     AS_SRC_OPTION, values[val].option,
					     err, sizeof(err)),
			     err, remote);
}

static int cb_explain(int val, const char *optarg, int remote)
{
	(void)optarg;
	(void)remote;
	opts.explain = val;
	return 0;
}

void as_options_register(spank_t sp)
{
	for (int i = 0; options[i].name; i++) {
		spank_err_t rc = spank_option_register(sp, &options[i]);
		if (rc != ESPANK_SUCCESS)
			as_plugin_log(AUTOSYNC_LOG_ERROR,
				      "autosync: spank_option_register(%s): %s",
				      options[i].name, spank_strerror(rc));
	}
}

void as_options_apply_env(spank_t sp, int remote)
{
	char val[PATH_MAX], err[AS_MSG_MAX], q[AS_MSG_MAX];

	for (int i = 0; i < NVALUES; i++) {
		const char *v = NULL;

		if (remote) {
			if (spank_getenv(sp, values[i].env, val, sizeof(val)) ==
			    ESPANK_SUCCESS)
				v = val;
		} else {
			v = getenv(values[i].env);
		}
		if (!v || values[i].set(&opts.args, v, AS_SRC_ENV,
					values[i].env, err, sizeof(err)) == 0)
			continue;
		if (!remote)
			slurm_info("%s (ignored)",
				   asi_quote(err, q, sizeof(q)));
		else
			as_plugin_log(AUTOSYNC_LOG_WARNING, "%s (ignored)",
				      err);
	}
}

const struct as_args *as_options_args(void)
{
	return &opts.args;
}

int as_options_explain(void)
{
	return opts.explain;
}

void as_options_exit(void)
{
	memset(&opts, 0, sizeof(opts));
	opts.args.mode = AS_MODE_UNSET;
}
