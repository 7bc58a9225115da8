/* slurmstepd.c - see slurmstepd.h */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autosync/agree.h"
#include "autosync/common.h"
#include "autosync/job.h"
#include "child.h"
#include "common.h"
#include "common/text.h"
#include "options.h"
#include "record.h"
#include "slurmstepd.h"
#include "srun.h"

/* Job directories live here unless the site config names runtime_dir. */
#define RUNTIME_DIR "/run/autosync"
/* Slurm's special step ids (slurm.h): only real job steps are planned. */
#define STEP_SPECIAL_MIN 0xfffffff0u

static struct step {
	int mode;      /* effective mode (enum as_mode) */
	int plan_step; /* 1: this step is planned (not batch/extern) */
	uint32_t job_id, step, nnodes, nodeid;
	uid_t uid;
	gid_t gid;
	char jobdir[PATH_MAX];
	int jobdir_hold; /* held while the step runs (jobfs), or -1 */
	char node[64];
	int planned; /* 'out' holds a plan and what to inject */
	struct as_child_out out;
	char deferred[AS_MSG_MAX]; /* a problem to report in task_init */
	int deferred_fatal;	   /* 1: fail the tasks (required mode) */
	/* the nodes' agreement on one plan (autosync/agree.h) */
	char agree_spec[AUTOSYNC_AGREE_SPEC_MAX]; /* from srun */
	double agree_ms; /* how long the agreement took */
} st = {.mode = AS_MODE_UNSET, .jobdir_hold = -1};

/* Remember a problem for task_init: in required mode the tasks fail with
 * it, otherwise rank 0 prints it once as a warning and the step runs as
 * if autosync were not there. */
static void defer(int fatal, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void defer(int fatal, const char *fmt, ...)
{
	va_list ap;

	if (st.deferred[0])
		return; /* the first cause is the one to report */
	va_start(ap, fmt);
	vsnprintf(st.deferred, sizeof(st.deferred), fmt, ap);
	va_end(ap);
	st.deferred_fatal = fatal;
	as_plugin_log(AUTOSYNC_LOG_INFO, "%s", st.deferred);
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

/* ------------------------------------------------------ the step's mode */

/* The step names a model or a plan file (only such a step is ever
 * planned), or asked for --autosync=required by an option (it fails
 * without a model anyway): only such a step hears of a problem. */
static int named_step(void)
{
	const struct as_args *a = as_options_args();

	return a->model[0] || st.mode == AS_MODE_PLAN ||
	       (st.mode == AS_MODE_REQUIRED && a->mode_src == AS_SRC_OPTION);
}

/* A problem fails the step only when the step asked by an option (a value
 * that came only from the environment is a warning, never a refusal) and
 * either asked for required or the site is strict. */
static int fatal_for(int strict)
{
	const struct as_args *a = as_options_args();

	if (st.mode == AS_MODE_REQUIRED && a->mode_src == AS_SRC_OPTION)
		return 1;
	return strict &&
	       (a->mode_src == AS_SRC_OPTION || a->model_src == AS_SRC_OPTION);
}

/* The site's default mode for the step's partition. */
static int site_default(spank_t sp, autosync_siteconf_t *s)
{
	char partition[128];

	if (!s)
		return AS_MODE_OFF;
	if (spank_getenv(sp, "SLURM_JOB_PARTITION", partition,
			 sizeof(partition)) != ESPANK_SUCCESS)
		partition[0] = '\0';
	return autosync_siteconf_default_mode(s, partition[0] ? partition
							      : NULL) ==
		       AUTOSYNC_SITE_MODE_AUTO
		   ? AS_MODE_AUTO
		   : AS_MODE_OFF;
}

/* The mode from the options, the plugstack arguments and the site config.
 * Returns 1 when it is not off. */
static int decide_mode(spank_t sp)
{
	static const int bit[] = {
	    [AS_MODE_AUTO] = AUTOSYNC_ALLOW_AUTO,
	    [AS_MODE_REQUIRED] = AUTOSYNC_ALLOW_REQUIRED,
	    [AS_MODE_PLAN] = AUTOSYNC_ALLOW_PLAN,
	};
	const struct as_args *a = as_options_args();
	const struct as_pconf *pc = as_plugin_pconf();
	autosync_siteconf_t *s;

	st.mode = as_args_effective_mode(a, AS_MODE_OFF);
	if (!pc) {
		if (st.mode != AS_MODE_OFF && named_step())
			defer(fatal_for(0), "%s; running without autosync",
			      as_plugin_pconf_error());
		return 0;
	}
	s = as_plugin_site();
	if (pc->config[0] && !s) {
		if (st.mode != AS_MODE_OFF && named_step())
			defer(fatal_for(pc->strict),
			      "%s; running without autosync",
			      as_plugin_site_error());
		return 0;
	}
	st.mode = as_args_effective_mode(a, site_default(sp, s));
	if (st.mode == AS_MODE_OFF)
		return 0;
	/* what the job chose is checked (a model alone means auto), the
	 * site's own default is not */
	if ((a->mode_src != AS_SRC_NONE || a->model[0]) &&
	    !autosync_siteconf_mode_allowed(s, bit[st.mode])) {
		if (named_step())
			defer(0,
			      "autosync: --autosync=%s%s is not allowed on "
			      "this cluster; running without autosync",
			      as_mode_name(st.mode),
			      a->mode_src == AS_SRC_NONE
				  ? " (what --autosync-model means)"
				  : "");
		return 0;
	}
	return 1;
}

/* Who the step is, read once. Returns 0 when Slurm does not say. */
static int gather_ids(spank_t sp)
{
	const struct as_args *a = as_options_args();

	if (spank_get_item(sp, S_JOB_ID, &st.job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &st.step) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &st.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &st.gid) != ESPANK_SUCCESS) {
		defer(fatal_for(0), "autosync: cannot read the step's ids; "
				    "running without autosync");
		return 0;
	}
	if (spank_get_item(sp, S_JOB_NNODES, &st.nnodes) != ESPANK_SUCCESS)
		st.nnodes = 0;
	if (spank_get_item(sp, S_JOB_NODEID, &st.nodeid) != ESPANK_SUCCESS)
		st.nodeid = 0;
	/* The batch script and the extern step only pass the options on (to
	 * the sruns inside); real steps that name a model or a plan are
	 * planned. A step that names neither is never planned, warned or
	 * failed, whatever the site's default mode and strictness: it only
	 * carries AUTOSYNC_MODE for the adapters. */
	st.plan_step = st.step < STEP_SPECIAL_MIN && st.nnodes > 0 &&
		       (st.mode == AS_MODE_PLAN || a->model[0]);
	if (st.mode == AS_MODE_REQUIRED && !a->model[0] &&
	    a->mode_src == AS_SRC_OPTION && st.step < STEP_SPECIAL_MIN)
		defer(1, "autosync: --autosync=required needs a model "
			 "(--autosync-model=NAME or the path of a model file)");
	return 1;
}

/* Whether this step is autosync's, decided once per step. Returns 0 when
 * there is nothing to do, 1 when there is. */
static int step_mode(spank_t sp)
{
	if (st.mode != AS_MODE_UNSET)
		return st.mode != AS_MODE_OFF;
	if (!decide_mode(sp) || !gather_ids(sp)) {
		st.mode = AS_MODE_OFF;
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------ the job directory */

/* Made as root, in a directory root owns (the default, made when missing)
 * or the site's runtime_dir; the user gets it (0700) and the planning
 * child writes into it as the user. In a shared /tmp its name is random.
 * It is held while the step runs; directories kept past their steps go, a
 * bounded number per step start, never one a running step holds. */
static void make_jobdir(void)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s = as_plugin_site();
	const char *rd = s ? autosync_siteconf_runtime_dir(s) : "";
	char base[PATH_MAX], name[128];
	int base_ok;

	snprintf(base, sizeof(base), "%s", rd[0] ? rd : RUNTIME_DIR);
	snprintf(name, sizeof(name), "autosync-%u-%u.%u.%u", (unsigned)st.uid,
		 st.job_id, st.step, st.nodeid);
	base_ok = rd[0] ? 0 : autosync_jobdir_base(base, &err);
	if (base_ok == 0)
		(void)autosync_jobdir_prune(base, "autosync-", (uid_t)-1,
					    as_plugin_keep_seconds(), 16, 4096);
	if (base_ok < 0 ||
	    autosync_jobdir_create(base, name, st.uid, st.gid, st.jobdir,
				   sizeof(st.jobdir), &err) < 0) {
		st.jobdir[0] = '\0';
		defer(fatal_for(0),
		      "autosync: job directory: %s; running without autosync",
		      err.text);
		return;
	}
	if ((st.jobdir_hold = autosync_jobdir_hold(st.jobdir, 0)) < 0)
		as_plugin_log(AUTOSYNC_LOG_INFO,
			      "autosync: job %u step %u: holding %s: %s",
			      st.job_id, st.step, st.jobdir, strerror(errno));
}

void as_slurmstepd_init_post_opt(spank_t sp)
{
	if (step_mode(sp) && st.plan_step)
		make_jobdir();
}

/* ----------------------------------------------------- the agreement */

/* Every step's nodes take srun's variable out of the job's environment
 * (the tasks never see it); only real steps keep it for the agreement. */
static void agree_take(spank_t sp)
{
	const struct as_pconf *pc = as_plugin_pconf();

	st.agree_spec[0] = '\0';
	if (spank_getenv(sp, AS_AGREE_VAR, st.agree_spec,
			 sizeof(st.agree_spec)) != ESPANK_SUCCESS)
		st.agree_spec[0] = '\0';
	else
		(void)spank_unsetenv(sp, AS_AGREE_VAR);
	if (!pc || !pc->agree)
		st.agree_spec[0] = '\0';
}

/* Why the nodes run without a plan, from srun's verdict 'v'. */
static void agree_failed(int rc, const char *v, const char *why, int fatal)
{
	char h0[72], h1[72];
	unsigned n0, n1;

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
		      why[0] ? why : v);
}

/* Report this node's plan hash ("-": none) and hear srun's verdict.
 * Returns 1 when the plan may be applied, 0 when every node runs without
 * it (the reason deferred, fatal when 'fatal'). Without srun's variable (one
 * node, agree=no, or an srun without the plugin) the plan is applied
 * unchecked, as every node plans from the same inputs. */
static int agree(spank_t sp, const char *hash, int fatal)
{
	autosync_error_t err = {.text = ""};
	char host[64], v[AUTOSYNC_AGREE_LINE_MAX] = "";
	uint32_t job = 0, step = 0, nodeid = 0;
	struct timespec t0, t1;
	int rc;

	if (!st.agree_spec[0])
		return 1;
	st.agree_spec[sizeof(st.agree_spec) - 1] = '\0';
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
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = autosync_agree_join(host, st.agree_spec, job, step, nodeid,
					 hash, v, sizeof(v), &err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		st.agree_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			      (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	}
	if (rc == AUTOSYNC_AGREE_SAME)
		return 1;
	if (strcmp(hash, "-"))
		agree_failed(rc, v, err.text, fatal);
	/* else no plan here anyway: its own reason is deferred */
	return 0;
}

/* ------------------------------------------------------------ planning */

/* The node's name as slurmd knows it: slurmstepd's own environment (the
 * job cannot change it), else the host name. */
static void node_name(void)
{
	const char *n = getenv("SLURMD_NODENAME");

	if (n && n[0])
		snprintf(st.node, sizeof(st.node), "%s", n);
	else if (gethostname(st.node, sizeof(st.node)) < 0)
		snprintf(st.node, sizeof(st.node), "unknown");
	st.node[sizeof(st.node) - 1] = '\0';
}

/* Plan this step on this node in a child process (child.h): the job
 * pipeline runs as the user within the site's budget; the files go to the
 * job directory. 0, or -1 with a one-line reason in 'err'. */
static int plan(spank_t sp, autosync_error_t *err)
{
	const struct as_args *a = as_options_args();
	autosync_siteconf_t *s = as_plugin_site();
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
	    .site = s,
	    .model = a->model,
	    .compress = a->compress,
	    .plan_file = st.mode == AS_MODE_PLAN ? a->plan_path : NULL,
	    .nnodes = st.nnodes,
	    .ntasks = ntasks,
	    .cwd = cwd,
	    .jobdir = st.jobdir,
	    .env = env,
	    .uid = st.uid,
	    .gid = st.gid,
	    .deadline_ms = s ? autosync_siteconf_plan_budget_ms(s) : 1000,
	    .max_memory =
		s ? autosync_siteconf_plan_memory(s) : (size_t)4 << 30,
	};
	return as_child_plan(&in, &st.out, err);
}

/* What every task of an autosync step sees, planned or not: the mode, the
 * model and the compression the job allows, for the adapters. */
static int set_job_env(spank_t sp)
{
	const struct as_args *a = as_options_args();

	if (set_env(sp, "AUTOSYNC_MODE",
		    st.mode == AS_MODE_PLAN ? a->plan_path
					    : as_mode_name(st.mode)) < 0)
		return -1;
	if (a->model[0] && set_env(sp, "AUTOSYNC_MODEL", a->model) < 0)
		return -1;
	if (a->compress && set_env(sp, "AUTOSYNC_COMPRESSION", "yes") < 0)
		return -1;
	return 0;
}

/* The agreed plan into the step's environment, and one log line. */
static void apply(spank_t sp)
{
	const struct as_args *a = as_options_args();
	char agreed[64] = "";

	st.planned = 1;
	if (st.agree_spec[0])
		snprintf(agreed, sizeof(agreed),
			 ", the nodes agreed in %.1f ms", st.agree_ms);
	for (size_t i = 0; i < st.out.nwarnings; i++)
		as_plugin_log(AUTOSYNC_LOG_WARNING,
			      "autosync: job %u step %u node %s: %s", st.job_id,
			      st.step, st.node, st.out.warnings[i]);
	for (size_t i = 0; i < st.out.nenv; i++)
		if (set_env(sp, st.out.env[i].name, st.out.env[i].value) < 0) {
			/* half a plan is no plan: what was set goes again,
			 * and the step runs as without autosync */
			while (i-- > 0)
				(void)spank_unsetenv(sp, st.out.env[i].name);
			st.planned = 0;
			return;
		}
	as_plugin_log(AUTOSYNC_LOG_INFO,
		      "autosync: job %u step %u node %s: plan %s, topology %s, "
		      "model %s, planned in %.1f ms (%.1f ms with loading)%s",
		      st.job_id, st.step, st.node, st.out.plan_hash,
		      st.out.topo_hash[0] ? st.out.topo_hash : "-",
		      a->model[0] ? a->model : "(plan file)", st.out.plan_ms,
		      st.out.total_ms, agreed);
}

void as_slurmstepd_user_init(spank_t sp)
{
	autosync_error_t err = {.text = ""};
	const struct as_pconf *pc = as_plugin_pconf();
	int fatal;

	agree_take(sp);
	/* not asked for: the step sees nothing of autosync; a node without
	 * a plan tells srun, so that the others do not apply theirs */
	if (!step_mode(sp) || set_job_env(sp) < 0 || !st.plan_step ||
	    !st.jobdir[0]) {
		(void)agree(sp, "-", 0);
		return;
	}
	fatal = fatal_for(pc ? pc->strict : 0);
	node_name();
	if (plan(sp, &err) < 0) {
		defer(fatal, "autosync: %s; running without autosync",
		      err.text);
		(void)agree(sp, "-", 0);
		return;
	}
	if (agree(sp, st.out.plan_hash, fatal))
		apply(sp);
}

/* ----------------------------------------------------------- the tasks */

/* Write 'text' to the task's stderr a line at a time, each escaped. */
static void print_lines(const char *text)
{
	char line[AS_MSG_MAX], q[AS_MSG_MAX];

	while (text && *text) {
		size_t n = strcspn(text, "\n");
		snprintf(line, sizeof(line), "%.*s",
			 (int)(n < sizeof(line) ? n : sizeof(line) - 1), text);
		dprintf(STDERR_FILENO, "%s\n", asi_quote(line, q, sizeof(q)));
		text += n + (text[n] == '\n');
	}
}

int as_slurmstepd_task_init(spank_t sp)
{
	uint32_t gtid = 0, ltid = 0;
	char q[AS_MSG_MAX];
	int first;

	first = spank_get_item(sp, S_TASK_GLOBAL_ID, &gtid) == ESPANK_SUCCESS &&
		gtid == 0;
	if (st.deferred[0]) {
		asi_quote(st.deferred, q, sizeof(q));
		if (st.deferred_fatal) {
			slurm_error("%s", q);
			return -1;
		}
		/* one warning per step, from its first task, on the user's
		 * stderr */
		if (first)
			dprintf(STDERR_FILENO, "%s\n", q);
		return 0;
	}
	if (!st.planned)
		return 0;
	/* the task's NIC: local rank r drives GPU r of the allocation */
	if (st.out.nranks &&
	    spank_get_item(sp, S_TASK_ID, &ltid) == ESPANK_SUCCESS) {
		unsigned r = ltid % st.out.nranks;
		for (size_t i = 0; i < st.out.rank_n[r]; i++)
			(void)spank_setenv(sp, st.out.rank_env[r][i].name,
					   st.out.rank_env[r][i].value, 1);
	}
	if (as_options_explain() && first)
		print_lines(st.out.summary);
	return 0;
}

void as_slurmstepd_exit(void)
{
	if (st.planned) {
		struct as_record_step s = {
		    .job = st.job_id,
		    .step = st.step,
		    .uid = st.uid,
		    .node = st.node,
		    .jobdir = st.jobdir,
		    .record = st.out.record,
		};
		as_record_write(&s);
	}
	if (st.jobdir[0])
		as_record_leave_jobdir(st.jobdir, st.jobdir_hold);
	else if (st.jobdir_hold >= 0)
		close(st.jobdir_hold);
	as_child_out_free(&st.out);
	memset(&st, 0, sizeof(st));
	st.mode = AS_MODE_UNSET;
	st.jobdir_hold = -1;
}
