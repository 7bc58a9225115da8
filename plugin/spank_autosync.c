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
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "args.h"
#include "autosync/agree.h"
#include "autosync/common.h"
#include "autosync/feedback.h"
#include "autosync/job.h"
#include "autosync/siteconf.h"
#include "child.h"
#include "common/readfile.h"
#include "common/text.h"
#include "pconf.h"

SPANK_PLUGIN(autosync, 1);

#define MSG_MAX 1024
/* Job directories live here unless the site config names runtime_dir. */
#define RUNTIME_DIR "/run/autosync"
/* The planning child's address space (it plans one model). */
/* What a job may report of its steps. */
#define REPORT_MAX_BYTES (64u << 20)

static struct autosync_context {
	struct as_pconf pconf;
	int pconf_ok; /* plugstack arguments parsed cleanly */
	char pconf_err[MSG_MAX];
	struct as_args args;
	int explain;		   /* --autosync-explain */
	autosync_siteconf_t *site; /* loaded once per process */
	int site_tried;
	char site_err[MSG_MAX];
	int mode;      /* effective mode, remote */
	int plan_step; /* 1: this step is planned (not batch/extern) */
	uint32_t job_id, step, nnodes, nodeid;
	uid_t uid;
	gid_t gid;
	char jobdir[PATH_MAX];
	int planned; /* 'out' holds a plan and what to inject */
	struct as_child_out out;
	char node[64];
	char deferred[MSG_MAX]; /* a problem to report in task_init */
	int deferred_fatal;	/* 1: fail the tasks (required mode) */
	int injected;		/* user_init set the task environment */
	/* the nodes' agreement on one plan (autosync/agree.h) */
	char agree_spec[AUTOSYNC_AGREE_SPEC_MAX]; /* remote: from srun */
	autosync_agree_t *agree;		  /* srun: the gathering */
	pthread_t agree_thread;
	int agree_verdict; /* srun: what the gathering decided */
	double agree_ms;   /* remote: how long the agreement took */
} context = {.args = {.mode = AS_MODE_UNSET}, .mode = AS_MODE_UNSET};

static int cb_mode(int val, const char *optarg, int remote);
static int cb_model(int val, const char *optarg, int remote);
static int cb_explain(int val, const char *optarg, int remote);
static int cb_compression(int val, const char *optarg, int remote);
static autosync_siteconf_t *site(void);

static struct spank_option options[] = {
    {"autosync", "auto|off|required|PLAN",
     "[autosync] plan gradient synchronization for this job: auto "
     "(default when given without a value), off, required (fail the step "
     "if no plan can be made) or the path of a plan file",
     2, 0, (spank_opt_cb_f)cb_mode},
    {"autosync-model", "NAME|PATH",
     "[autosync] the model being trained: a catalog name (e.g. "
     "resnet50, bert-large) or the path of a model file; implies "
     "--autosync=auto",
     1, 0, (spank_opt_cb_f)cb_model},
    {"autosync-compression", "yes|no",
     "[autosync] allow lossy gradient compression (fp16/bf16, PowerSGD) "
     "when the plan predicts it pays; default no",
     2, 0, (spank_opt_cb_f)cb_compression},
    {"autosync-explain", NULL,
     "[autosync] print a summary of the chosen plan on the job's "
     "standard error (from its first task)",
     0, 1, (spank_opt_cb_f)cb_explain},
    SPANK_OPTIONS_TABLE_END};

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

	char q[MSG_MAX];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* messages carry users' file names and YAML text: nothing in them
	 * may start a line of its own or steer a terminal */
	asi_quote(msg, q, sizeof(q));
	switch (level) {
	case AUTOSYNC_LOG_ERROR:
		slurm_error("%s", q);
		break;
	case AUTOSYNC_LOG_WARNING:
	case AUTOSYNC_LOG_INFO:
		if (user_side)
			slurm_verbose("%s", q);
		else
			slurm_info("%s", q);
		break;
	default:
		slurm_debug("%s", q);
		break;
	}
}

/* Parse the plugstack arguments; called from every callback. */
static void load_pconf(int ac, char **av)
{
	context.pconf_ok =
	    as_pconf_parse(&context.pconf, ac, av, context.pconf_err,
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

	(void)val;
	return option_result(
	    as_args_set_mode(&context.args, optarg ? optarg : "auto",
			     AS_SRC_OPTION, "--autosync", err, sizeof(err)),
	    err, remote);
}

static int cb_model(int val, const char *optarg, int remote)
{
	char err[MSG_MAX];

	(void)val;
	return option_result(
	    as_args_set_model(&context.args, optarg, AS_SRC_OPTION,
			      "--autosync-model", err, sizeof(err)),
	    err, remote);
}

static int cb_compression(int val, const char *optarg, int remote)
{
	char err[MSG_MAX];

	(void)val;
	return option_result(
	    as_args_set_compression(&context.args, optarg, AS_SRC_OPTION,
				    "--autosync-compression", err, sizeof(err)),
	    err, remote);
}

static int cb_explain(int val, const char *optarg, int remote)
{
	(void)optarg;
	(void)remote;
	context.explain = val;
	return 0;
}

/* Environment fallbacks, lower precedence than any option. A bad value
 * from the environment is ignored with a warning, never a refusal: a
 * stray variable must not stop every srun and sbatch. */
static int apply_env(spank_t sp, int remote)
{
	static const struct {
		const char *var;
		int (*set)(struct as_args *, const char *, int, const char *,
			   char *, size_t);
	} env[] = {
	    {"AUTOSYNC_MODE", as_args_set_mode},
	    {"AUTOSYNC_MODEL", as_args_set_model},
	    {"AUTOSYNC_COMPRESSION", as_args_set_compression},
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
			char q[MSG_MAX];
			if (!remote)
				slurm_info("%s (ignored)",
					   asi_quote(err, q, sizeof(q)));
			else
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
		else if (context.pconf.config[0] && !site())
			/* logged once, when slurmd loads the plugin; steps
			 * then stay out of the way */
			plog(AUTOSYNC_LOG_ERROR,
			     "%s; autosync is disabled on "
			     "this node until it is fixed",
			     context.site_err);
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

/* Slurm's special step ids (slurm.h): only real job steps are planned. */
#define STEP_SPECIAL_MIN 0xfffffff0u

/* ------------------------------------------------ srun: the agreement */

/* The agreement's variable: how the nodes find srun's gathering. Set in
 * srun's environment (which srun sends with the step), taken out of the
 * job's environment by every node before its tasks start. */
#define AGREE_VAR "AUTOSYNC_AGREE"

static void *agree_main(void *arg)
{
	(void)arg;
	context.agree_verdict = autosync_agree_run(context.agree, NULL);
	return NULL;
}

/* The thread takes no signal: srun's own threads handle them. */
static int agree_thread_start(void)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&context.agree_thread, NULL, agree_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* In srun, before the step launches: when its nodes will plan (a model or
 * a plan file, more than one node), gather their plan hashes while they
 * start, so that they apply a plan only when all have the same one. A
 * failure here only leaves the nodes without the check, as before. */
static void agree_start(spank_t sp)
{
	autosync_error_t err = {.text = ""};
	char spec[AUTOSYNC_AGREE_SPEC_MAX];
	uint32_t nnodes = 0, job = 0, step = 0;
	int mode = as_args_effective_mode(&context.args, AS_MODE_OFF);

	unsetenv(AGREE_VAR); /* never another step's */
	if (!context.pconf_ok || !context.pconf.agree || mode == AS_MODE_OFF ||
	    !(context.args.model[0] || mode == AS_MODE_PLAN))
		return;
	if (spank_get_item(sp, S_JOB_NNODES, &nnodes) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    nnodes < 2)
		return;
	/* the window covers the slowest node's planning budget */
	int budget = site() ? autosync_siteconf_plan_budget_ms(site()) : 1000;
	int gather = budget + 4000;

	if (gather > AUTOSYNC_AGREE_GATHER_MAX_MS)
		gather = AUTOSYNC_AGREE_GATHER_MAX_MS;
	if (!(context.agree = autosync_agree_create(nnodes, job, step, &err)) ||
	    autosync_agree_set_windows(context.agree, gather, 600000, &err) <
		0 ||
	    (context.pconf.agree_ports[0] &&
	     autosync_agree_set_ports(
		 context.agree, context.pconf.agree_ports[0],
		 context.pconf.agree_ports[1], &err) < 0) ||
	    autosync_agree_listen(context.agree, spec, sizeof(spec), &err) <
		0 ||
	    setenv(AGREE_VAR, spec, 1) < 0 || agree_thread_start() != 0) {
		plog(AUTOSYNC_LOG_INFO,
		     "autosync: the nodes cannot agree through srun (%s); they "
		     "plan unchecked",
		     err.text[0] ? err.text : strerror(errno));
		unsetenv(AGREE_VAR);
		autosync_agree_destroy(context.agree);
		context.agree = NULL;
		return;
	}
	plog(AUTOSYNC_LOG_INFO,
	     "autosync: gathering the %u nodes' plan hashes on port %d",
	     (unsigned)nnodes, atoi(spec));
}

/* At srun's end: the gathering is over long since, or is stopped now. */
static void agree_finish(void)
{
	if (!context.agree)
		return;
	autosync_agree_stop(context.agree);
	pthread_join(context.agree_thread, NULL);
	if (context.agree_verdict > AUTOSYNC_AGREE_NONE)
		plog(AUTOSYNC_LOG_INFO, "autosync: the nodes' plans: %s",
		     autosync_agree_verdict_line(context.agree));
	autosync_agree_destroy(context.agree);
	context.agree = NULL;
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	load_pconf(ac, av);
	if (spank_context() == S_CTX_LOCAL)
		agree_start(sp);
	return 0;
}

/* --------------------------------------------- slurmstepd: the agreement */

/* Every step's nodes take srun's variable out of the job's environment
 * (the tasks never see it); only real steps keep it for the agreement. */
static void agree_take(spank_t sp)
{
	context.agree_spec[0] = '\0';
	if (spank_getenv(sp, AGREE_VAR, context.agree_spec,
			 sizeof(context.agree_spec)) != ESPANK_SUCCESS)
		context.agree_spec[0] = '\0';
	else
		(void)spank_unsetenv(sp, AGREE_VAR);
	if (!context.pconf_ok || !context.pconf.agree)
		context.agree_spec[0] = '\0';
}

/* Report this node's plan hash ("-": none) and hear srun's verdict.
 * Returns 1 when the plan may be applied, 0 when every node runs without
 * it (the reason deferred, fatal when 'fatal'). Without srun's variable (one
 * node, agree=no, or an srun without the plugin) the plan is applied
 * unchecked, as every node plans from the same inputs. */
static int agree(spank_t sp, const char *hash, int fatal)
{
	autosync_error_t err = {.text = ""};
	char host[64], v[AUTOSYNC_AGREE_LINE_MAX], h0[72], h1[72];
	uint32_t job = 0, step = 0, nodeid = 0;
	unsigned n0, n1;
	int rc;

	if (!context.agree_spec[0])
		return 1;
	context.agree_spec[sizeof(context.agree_spec) - 1] = '\0';
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS ||
	    step >= STEP_SPECIAL_MIN)
		return 1; /* not a step srun gathers for */
	/* srun's address for its own messages from the nodes (an IP
	 * address, set by srun in the step's environment) */
	if (spank_getenv(sp, "SLURM_SRUN_COMM_HOST", host, sizeof(host)) !=
	    ESPANK_SUCCESS) {
		rc = autosync_errprintf(&err, "no SLURM_SRUN_COMM_HOST");
	} else {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = autosync_agree_join(host, context.agree_spec, job, step,
					 nodeid, hash, v, sizeof(v), &err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		context.agree_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
				   (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	}
	if (rc == AUTOSYNC_AGREE_SAME)
		return 1;
	if (!strcmp(hash, "-"))
		return 0; /* no plan here anyway: its own reason is deferred */
	if (rc == AUTOSYNC_AGREE_DIFFER &&
	    sscanf(v, "differ %u %71s %u %71s", &n0, h0, &n1, h1) == 4 &&
	    (!strcmp(h0, "-") || !strcmp(h1, "-")))
		defer(fatal,
		      "autosync: node %u of this step has no plan; every node "
		      "runs without autosync",
		      !strcmp(h0, "-") ? n0 : n1);
	else if (rc == AUTOSYNC_AGREE_DIFFER &&
		 sscanf(v, "differ %u %71s %u %71s", &n0, h0, &n1, h1) == 4)
		defer(fatal,
		      "autosync: nodes %u and %u of this step made different "
		      "plans (%s, %s); every node runs without autosync",
		      n0, n1, h0, h1);
	else if (rc == AUTOSYNC_AGREE_INCOMPLETE &&
		 sscanf(v, "incomplete %u %u", &n0, &n1) == 2)
		defer(fatal,
		      "autosync: only %u of the step's %u nodes reported a "
		      "plan in time; every node runs without autosync",
		      n0, n1);
	else
		defer(fatal,
		      "autosync: cannot agree on the plan with srun (%s); "
		      "running without autosync",
		      err.text[0] ? err.text : v);
	return 0;
}

/* The site config, read once per process; NULL when none is configured or
 * it is broken (then site_err says why). */
static autosync_siteconf_t *site(void)
{
	autosync_error_t err = {.text = ""};

	if (context.site_tried || !context.pconf_ok || !context.pconf.config[0])
		return context.site;
	context.site_tried = 1;
	if (!(context.site =
		  autosync_siteconf_load(context.pconf.config, &err)))
		snprintf(context.site_err, sizeof(context.site_err),
			 "autosync: site config: %s", err.text);
	return context.site;
}

/* how long job directories stay after their step (site config) */
static long keep_seconds(void)
{
	return site() ? autosync_siteconf_keep_job_files(site()) : 86400;
}

/* The step names a model or a plan file (only such a step is ever
 * planned), or asked for --autosync=required by an option (it fails
 * without a model anyway): only such a step hears of a problem. */
static int named_step(void)
{
	return context.args.model[0] || context.mode == AS_MODE_PLAN ||
	       (context.mode == AS_MODE_REQUIRED &&
		context.args.mode_src == AS_SRC_OPTION);
}

/* A problem fails the step only when the step asked by an option (a value
 * that came only from the environment is a warning, never a refusal) and
 * either asked for required or the site is strict. */
static int fatal_for(int strict)
{
	if (context.mode == AS_MODE_REQUIRED)
		return context.args.mode_src == AS_SRC_OPTION;
	return strict && (context.args.mode_src == AS_SRC_OPTION ||
			  context.args.model_src == AS_SRC_OPTION);
}

/* Work out, in slurmstepd, whether this step is autosync's and who it is
 * for. Returns 0 when there is nothing to do, 1 when there is. */
static int remote_mode(spank_t sp)
{
	char partition[128];
	int site_default = AS_MODE_OFF;
	autosync_siteconf_t *s;

	if (context.mode != AS_MODE_UNSET)
		return context.mode != AS_MODE_OFF;
	context.mode = as_args_effective_mode(&context.args, AS_MODE_OFF);
	if (!context.pconf_ok) {
		if (context.mode != AS_MODE_OFF && named_step())
			defer(fatal_for(0), "%s; running without autosync",
			      context.pconf_err);
		context.mode = AS_MODE_OFF;
		return 0;
	}
	s = site();
	if (context.pconf.config[0] && !s) {
		if (context.mode != AS_MODE_OFF && named_step())
			defer(fatal_for(context.pconf.strict),
			      "%s; running without autosync", context.site_err);
		context.mode = AS_MODE_OFF;
		return 0;
	}
	if (s) {
		if (spank_getenv(sp, "SLURM_JOB_PARTITION", partition,
				 sizeof(partition)) != ESPANK_SUCCESS)
			partition[0] = '\0';
		site_default = autosync_siteconf_default_mode(
				   s, partition[0] ? partition : NULL) ==
				       AUTOSYNC_SITE_MODE_AUTO
				   ? AS_MODE_AUTO
				   : AS_MODE_OFF;
	}
	context.mode = as_args_effective_mode(&context.args, site_default);
	if (context.mode == AS_MODE_OFF)
		return 0;
	{
		static const int bit[] = {
		    [AS_MODE_AUTO] = AUTOSYNC_ALLOW_AUTO,
		    [AS_MODE_REQUIRED] = AUTOSYNC_ALLOW_REQUIRED,
		    [AS_MODE_PLAN] = AUTOSYNC_ALLOW_PLAN,
		};
		if (context.args.mode_src != AS_SRC_NONE &&
		    !autosync_siteconf_mode_allowed(s, bit[context.mode])) {
			if (named_step())
				defer(0,
				      "autosync: --autosync=%s is not allowed "
				      "on this "
				      "cluster; running without autosync",
				      as_mode_name(context.mode));
			context.mode = AS_MODE_OFF;
			return 0;
		}
	}
	if (spank_get_item(sp, S_JOB_ID, &context.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &context.step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &context.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &context.gid) != ESPANK_SUCCESS) {
		defer(fatal_for(0),
		      "autosync: cannot read the step's ids; running without "
		      "autosync");
		context.mode = AS_MODE_OFF;
		return 0;
	}
	if (spank_get_item(sp, S_JOB_NNODES, &context.nnodes) != ESPANK_SUCCESS)
		context.nnodes = 0;
	if (spank_get_item(sp, S_JOB_NODEID, &context.nodeid) != ESPANK_SUCCESS)
		context.nodeid = 0;
	/* The batch script and the extern step only pass the options on (to
	 * the sruns inside); real steps that name a model or a plan are
	 * planned. A step that names neither is never planned, warned or
	 * failed, whatever the site's default mode and strictness: it only
	 * carries AUTOSYNC_MODE for the adapters. */
	context.plan_step =
	    context.step < STEP_SPECIAL_MIN && context.nnodes > 0 &&
	    (context.mode == AS_MODE_PLAN || context.args.model[0]);
	if (context.mode == AS_MODE_REQUIRED && !context.args.model[0] &&
	    context.args.mode_src == AS_SRC_OPTION &&
	    context.step < STEP_SPECIAL_MIN)
		defer(1, "autosync: --autosync=required needs a model "
			 "(--autosync-model=NAME or the path of a model file)");
	return 1;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();
	autosync_error_t err = {.text = ""};
	char base[PATH_MAX], name[128];
	const char *rd;

	load_pconf(ac, av);
	if (c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR)
		return apply_env(sp, 0);
	if (c != S_CTX_REMOTE)
		return 0;
	(void)apply_env(sp, 1);
	if (!remote_mode(sp) || !context.plan_step)
		return 0;
	/* The job directory is made here, as root, in a directory root
	 * owns (the default, made when missing) or the site's runtime_dir;
	 * the user gets it (0700) and the planning child writes into it as
	 * the user. In a shared /tmp its name is random. */
	rd = site() ? autosync_siteconf_runtime_dir(site()) : "";
	snprintf(base, sizeof(base), "%s", rd[0] ? rd : RUNTIME_DIR);
	snprintf(name, sizeof(name), "autosync-%u-%u.%u.%u",
		 (unsigned)context.uid, context.job_id, context.step,
		 context.nodeid);
	/* directories kept past their steps: the old ones go, a bounded
	 * number per step start */
	int base_ok = rd[0] ? 0 : autosync_jobdir_base(base, &err);

	if (base_ok == 0)
		(void)autosync_jobdir_prune(base, "autosync-", (uid_t)-1,
					    keep_seconds(), 16, 4096);
	if (base_ok < 0 ||
	    autosync_jobdir_create(base, name, context.uid, context.gid,
				   context.jobdir, sizeof(context.jobdir),
				   &err) < 0) {
		context.jobdir[0] = '\0';
		defer(fatal_for(0),
		      "autosync: job directory: %s; running without autosync",
		      err.text);
	}
	return 0;
}

/* The node's name as slurmd knows it: slurmstepd's own environment (the
 * job cannot change it), else the host name. */
static void node_name(void)
{
	const char *n = getenv("SLURMD_NODENAME");

	if (n && n[0])
		snprintf(context.node, sizeof(context.node), "%s", n);
	else if (gethostname(context.node, sizeof(context.node)) < 0)
		snprintf(context.node, sizeof(context.node), "unknown");
	context.node[sizeof(context.node) - 1] = '\0';
}

/* Plan this step on this node in a child process (child.h): the job
 * pipeline runs as the user within the site's budget; the files go to the
 * job directory. 0, or -1 with a one-line reason in 'err'. */
static int plan_step(spank_t sp, autosync_error_t *err)
{
	char **env = NULL, cwd[PATH_MAX];
	struct as_child_in in;
	uint32_t ntasks = 0;

	if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS)
		env = NULL;
	if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) !=
	    ESPANK_SUCCESS)
		ntasks = 0;
	if (spank_getenv(sp, "PWD", cwd, sizeof(cwd)) != ESPANK_SUCCESS)
		cwd[0] = '\0';
	in = (struct as_child_in){
	    .site = site(),
	    .model = context.args.model,
	    .compress = context.args.compress,
	    .plan_file =
		context.mode == AS_MODE_PLAN ? context.args.plan_path : NULL,
	    .nnodes = context.nnodes,
	    .ntasks = ntasks,
	    .cwd = cwd,
	    .jobdir = context.jobdir,
	    .env = env,
	    .uid = context.uid,
	    .gid = context.gid,
	    .deadline_ms =
		site() ? autosync_siteconf_plan_budget_ms(site()) : 1000,
	    .max_memory = site() ? autosync_siteconf_plan_memory(site())
				 : (size_t)4 << 30,
	};
	return as_child_plan(&in, &context.out, err);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	autosync_error_t err = {.text = ""};
	char agreed[64] = "";
	int fatal;

	load_pconf(ac, av);
	agree_take(sp);
	if (!remote_mode(sp)) {
		(void)agree(sp, "-", 0);
		return 0; /* not asked for: the step sees nothing of autosync */
	}
	fatal = fatal_for(context.pconf.strict);

	if (set_env(sp, "AUTOSYNC_MODE",
		    context.mode == AS_MODE_PLAN
			? context.args.plan_path
			: as_mode_name(context.mode)) < 0)
		goto no_plan;
	if (context.args.model[0] &&
	    set_env(sp, "AUTOSYNC_MODEL", context.args.model) < 0)
		goto no_plan;
	if (context.args.compress &&
	    set_env(sp, "AUTOSYNC_COMPRESSION", "yes") < 0)
		goto no_plan;
	context.injected = 1;
	if (!context.plan_step || !context.jobdir[0])
		goto no_plan;

	node_name();
	if (plan_step(sp, &err) < 0) {
		defer(fatal, "autosync: %s; running without autosync",
		      err.text);
		(void)agree(sp, "-", 0);
		return 0;
	}
	if (!agree(sp, context.out.plan_hash, fatal))
		return 0;
	context.planned = 1;
	if (context.agree_spec[0])
		snprintf(agreed, sizeof(agreed),
			 ", the nodes agreed in %.1f ms", context.agree_ms);
	for (size_t i = 0; i < context.out.nwarnings; i++)
		plog(AUTOSYNC_LOG_WARNING,
		     "autosync: job %u step %u node %s: %s", context.job_id,
		     context.step, context.node, context.out.warnings[i]);
	for (size_t i = 0; i < context.out.nenv; i++)
		if (set_env(sp, context.out.env[i].name,
			    context.out.env[i].value) < 0)
			break;
	plog(AUTOSYNC_LOG_INFO,
	     "autosync: job %u step %u node %s: plan %s, topology %s, model "
	     "%s, planned in %.1f ms (%.1f ms with loading)%s",
	     context.job_id, context.step, context.node, context.out.plan_hash,
	     context.out.topo_hash[0] ? context.out.topo_hash : "-",
	     context.args.model[0] ? context.args.model : "(plan file)",
	     context.out.plan_ms, context.out.total_ms, agreed);
	return 0;
no_plan:
	(void)agree(sp, "-", 0); /* the others must not apply theirs */
	return 0;
}

/* Write 'text' to the task's stderr a line at a time, each escaped. */
static void print_lines(const char *text)
{
	char line[MSG_MAX], q[MSG_MAX];

	while (text && *text) {
		size_t n = strcspn(text, "\n");
		snprintf(line, sizeof(line), "%.*s",
			 (int)(n < sizeof(line) ? n : sizeof(line) - 1), text);
		dprintf(STDERR_FILENO, "%s\n", asi_quote(line, q, sizeof(q)));
		text += n + (text[n] == '\n');
	}
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	uint32_t gtid = 0, ltid = 0;
	int first;

	load_pconf(ac, av);
	first = spank_get_item(sp, S_TASK_GLOBAL_ID, &gtid) == ESPANK_SUCCESS &&
		gtid == 0;
	if (context.deferred[0]) {
		if (context.deferred_fatal) {
			char q[MSG_MAX];
			slurm_error("%s",
				    asi_quote(context.deferred, q, sizeof(q)));
			return -1;
		}
		/* One warning per step, from its first task, on the user's
		 * stderr. */
		if (first) {
			char q[MSG_MAX];
			dprintf(STDERR_FILENO, "%s\n",
				asi_quote(context.deferred, q, sizeof(q)));
		}
		return 0;
	}
	if (!context.planned)
		return 0;
	/* the task's NIC: local rank r drives GPU r of the allocation */
	if (context.out.nranks &&
	    spank_get_item(sp, S_TASK_ID, &ltid) == ESPANK_SUCCESS) {
		unsigned r = ltid % context.out.nranks;
		for (size_t i = 0; i < context.out.rank_n[r]; i++)
			(void)spank_setenv(sp, context.out.rank_env[r][i].name,
					   context.out.rank_env[r][i].value, 1);
	}
	if (context.explain && first)
		print_lines(context.out.summary);
	return 0;
}

/* The job's measurements: its report file, opened as root through the job
 * directory's handle (no path the user could swap), only when the user
 * alone owns it, read as it streams. A report that cannot be used is
 * logged, never silently dropped. */
static void read_report(autosync_feedback_rec_t *r)
{
	autosync_error_t err = {.text = ""};
	char msg[PATH_MAX + 128];
	int dfd, fd, cut = 0;

	dfd = open(context.jobdir,
		   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	fd = asi_open_file(dfd, AUTOSYNC_JOB_REPORT_FILE, 0, ASI_READ_NOFOLLOW,
			   context.uid, msg, sizeof(msg));
	close(dfd);
	if (fd < 0) {
		if (errno != ENOENT)
			plog(AUTOSYNC_LOG_INFO,
			     "autosync: job %u step %u: "
			     "report %s: %s",
			     context.job_id, context.step, context.jobdir, msg);
		return;
	}
	if (autosync_feedback_read_report(fd, REPORT_MAX_BYTES, r, &cut, &err) <
		0 ||
	    cut)
		plog(AUTOSYNC_LOG_INFO,
		     "autosync: job %u step %u: report in "
		     "%s: %s",
		     context.job_id, context.step, context.jobdir, err.text);
	close(fd);
}

/* At the end of a planned step: one feedback record from this node, with
 * what the job reported through AUTOSYNC_REPORT. The plan's side comes
 * from the planning child and is parsed (checked) again here; the job's
 * identity comes from Slurm. */
static void finish_step(void)
{
	autosync_error_t err = {.text = ""};
	autosync_feedback_rec_t *r;
	const char *log = site() ? autosync_siteconf_feedback_path(site()) : "";
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096], *line = NULL;
	size_t len = 0;

	if (!context.out.record || !(r = calloc(1, sizeof(*r))))
		return;
	if (autosync_feedback_parse_part(
		context.out.record, strlen(context.out.record),
		AUTOSYNC_FEEDBACK_PART_PLAN, r, &err) < 0) {
		plog(AUTOSYNC_LOG_ERROR,
		     "autosync: feedback: the planning "
		     "child's record: %s",
		     err.text);
		free(r);
		return;
	}
	r->time = (int64_t)time(NULL);
	r->job = context.job_id;
	r->step = context.step;
	r->uid = (uint32_t)context.uid;
	r->user[0] = '\0';
	if (getpwuid_r(context.uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 &&
	    pwp)
		snprintf(r->user, sizeof(r->user), "%s", pw.pw_name);
	snprintf(r->node, sizeof(r->node), "%s", context.node);
	snprintf(r->source, sizeof(r->source), "plugin");
	read_report(r);
	/* steps the job says ran with another plan are not this one's */
	if (r->report_plan_hash[0] &&
	    strcmp(r->report_plan_hash, r->plan_hash)) {
		plog(AUTOSYNC_LOG_INFO,
		     "autosync: job %u step %u: the report's steps ran with "
		     "plan %s, not this step's %s: not recorded",
		     context.job_id, context.step, r->report_plan_hash,
		     r->plan_hash);
		r->nmeasured = 0;
		r->measured_count = 0;
		r->measured_mean = 0;
	}
	/* the report is a file the job writes */
	if (r->measured_count)
		r->influenced |= AUTOSYNC_FEEDBACK_F_MEASUREMENTS;
	if (autosync_feedback_format(r, &line, &len, &err) < 0)
		plog(AUTOSYNC_LOG_ERROR, "autosync: feedback: %s", err.text);
	else if (log[0] &&
		 autosync_feedback_append(
		     log, line, len,
		     autosync_siteconf_feedback_max_bytes(site()),
		     autosync_siteconf_feedback_keep(site()), &err) < 0)
		plog(AUTOSYNC_LOG_ERROR, "autosync: feedback: %s", err.text);
	/* the step's own record, beside its plan, for the user */
	if (line && context.jobdir[0] && keep_seconds() > 0 &&
	    autosync_jobdir_write(context.jobdir, AUTOSYNC_JOB_FEEDBACK_FILE,
				  line, len, &err) < 0)
		plog(AUTOSYNC_LOG_INFO, "autosync: job %u step %u: %s",
		     context.job_id, context.step, err.text);
	free(line);
	free(r);
}

/* At the end of a step: the job directory stays for the site's time (the
 * report, which the record now holds, goes), or goes at once. */
static void leave_jobdir(void)
{
	if (keep_seconds() > 0)
		autosync_jobdir_unlink(context.jobdir,
				       AUTOSYNC_JOB_REPORT_FILE);
	else
		autosync_jobdir_remove(context.jobdir);
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_LOCAL)
		agree_finish();
	if (spank_context() == S_CTX_REMOTE) {
		if (context.planned)
			finish_step();
		if (context.jobdir[0])
			leave_jobdir();
	}
	as_child_out_free(&context.out);
	autosync_siteconf_destroy(context.site);
	memset(&context, 0, sizeof(context));
	context.args.mode = AS_MODE_UNSET;
	context.mode = AS_MODE_UNSET;
	return 0;
}
