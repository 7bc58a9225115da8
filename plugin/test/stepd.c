/*
 * stepd.c - a stand-in for slurmstepd: loads the built spank_autosync.so,
 * provides the SPANK API it calls, and drives its callbacks in the order,
 * contexts and user ids slurmstepd uses (init, options, init_post_opt as
 * root; user_init with the user's effective ids; task_init in a forked
 * task running as the user; exit as root), with hostile inputs. Runs as
 * root (else it skips): the user is 'nobody'.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "tap.h"

/* ------------------------------------------------- the SPANK API we lend */

#define MAX_ENV 256
#define MAX_OPTS 16

struct spank_handle {
	spank_context_t ctx;
	char *env[MAX_ENV + 1];
	uint32_t job, step, nnodes, nodeid, task, gtask, ntasks;
	uid_t uid;
	gid_t gid;
};

static struct spank_handle H;
static struct spank_option *opts[MAX_OPTS];
static int nopts;
static char logbuf[1 << 16];
static size_t loglen;

spank_context_t spank_context(void)
{
	return H.ctx;
}

int spank_remote(spank_t sp)
{
	return sp->ctx == S_CTX_REMOTE;
}

const char *spank_strerror(spank_err_t err)
{
	return err == ESPANK_SUCCESS ? "success" : "spank error";
}

spank_err_t spank_option_register(spank_t sp, struct spank_option *opt)
{
	(void)sp;
	if (nopts < MAX_OPTS)
		opts[nopts++] = opt;
	return ESPANK_SUCCESS;
}

static char **find(spank_t sp, const char *var)
{
	size_t n = strlen(var);

	for (int i = 0; sp->env[i]; i++)
		if (!strncmp(sp->env[i], var, n) && sp->env[i][n] == '=')
			return &sp->env[i];
	return NULL;
}

spank_err_t spank_getenv(spank_t sp, const char *var, char *buf, int len)
{
	char **e = find(sp, var);

	if (!e)
		return ESPANK_ENV_NOEXIST;
	if ((int)strlen(*e + strlen(var) + 1) >= len)
		return ESPANK_NOSPACE;
	snprintf(buf, (size_t)len, "%s", *e + strlen(var) + 1);
	return ESPANK_SUCCESS;
}

/* a variable slurmstepd fails to set (a test's choice), or NULL */
static const char *fail_setenv;

spank_err_t spank_setenv(spank_t sp, const char *var, const char *val,
			 int overwrite)
{
	char **e = find(sp, var), *nv;
	int i;

	if (fail_setenv && !strcmp(var, fail_setenv))
		return ESPANK_ERROR;
	if (e && !overwrite)
		return ESPANK_ENV_EXISTS;
	if (asprintf(&nv, "%s=%s", var, val) < 0)
		return ESPANK_ERROR;
	if (e) {
		free(*e);
		*e = nv;
		return ESPANK_SUCCESS;
	}
	for (i = 0; sp->env[i]; i++)
		;
	if (i == MAX_ENV) {
		free(nv);
		return ESPANK_NOSPACE;
	}
	sp->env[i] = nv;
	sp->env[i + 1] = NULL;
	return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char *var)
{
	char **e = find(sp, var);

	if (e) {
		free(*e);
		do
			e[0] = e[1];
		while (*e++);
	}
	return ESPANK_SUCCESS;
}

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...)
{
	va_list ap;
	spank_err_t rc = ESPANK_SUCCESS;

	va_start(ap, item);
	switch (item) {
	case S_JOB_UID:
		*va_arg(ap, uid_t *) = sp->uid;
		break;
	case S_JOB_GID:
		*va_arg(ap, gid_t *) = sp->gid;
		break;
	case S_JOB_ID:
		*va_arg(ap, uint32_t *) = sp->job;
		break;
	case S_JOB_STEPID:
		*va_arg(ap, uint32_t *) = sp->step;
		break;
	case S_JOB_NNODES:
		*va_arg(ap, uint32_t *) = sp->nnodes;
		break;
	case S_JOB_NODEID:
		*va_arg(ap, uint32_t *) = sp->nodeid;
		break;
	case S_JOB_ENV:
		*va_arg(ap, char ***) = sp->env;
		break;
	case S_TASK_ID:
		*va_arg(ap, int *) = (int)sp->task;
		break;
	case S_JOB_LOCAL_TASK_COUNT:
		*va_arg(ap, uint32_t *) = sp->ntasks;
		break;
	case S_TASK_GLOBAL_ID:
		*va_arg(ap, uint32_t *) = sp->gtask;
		break;
	default:
		rc = ESPANK_BAD_ARG;
	}
	va_end(ap);
	return rc;
}

static void logv(const char *lvl, const char *fmt, va_list ap)
{
	if (loglen < sizeof(logbuf))
		loglen += (size_t)snprintf(
		    logbuf + loglen, sizeof(logbuf) - loglen, "%s: ", lvl);
	if (loglen < sizeof(logbuf))
		loglen += (size_t)vsnprintf(logbuf + loglen,
					    sizeof(logbuf) - loglen, fmt, ap);
	if (loglen < sizeof(logbuf))
		logbuf[loglen++] = '\n';
	if (loglen >= sizeof(logbuf))
		loglen = sizeof(logbuf) - 1;
	logbuf[loglen] = '\0';
}

#define LOGFN(name, lvl)                \
	void name(const char *fmt, ...) \
	{                               \
		va_list ap;             \
		va_start(ap, fmt);      \
		logv(lvl, fmt, ap);     \
		va_end(ap);             \
	}
LOGFN(slurm_error, "error")
LOGFN(slurm_info, "info")
LOGFN(slurm_verbose, "verbose")
LOGFN(slurm_debug, "debug")
LOGFN(slurm_debug2, "debug2")
LOGFN(slurm_debug3, "debug3")
LOGFN(slurm_spank_log, "spank")

/* ----------------------------------------------------------- the steps */

static spank_f *cb_init, *cb_post, *cb_user, *cb_task, *cb_exit;
static char dir[] = "/tmp/autosync-stepd-XXXXXX";
static char site[1600], feedback[1200], runtime[1200];
static char budget_site[1600]; /* plan_budget_ms: 500 */
static uid_t user = 65534;
static gid_t group = 65534;

struct step {
	const char *model;  /* --autosync-model, NULL none */
	const char *mode;   /* --autosync, NULL none */
	const char *args;   /* plugstack arguments ("config=... strict=1") */
	const char *env[8]; /* extra NAME=VALUE in the job's environment */
	unsigned ntasks;
	const char *task_cmd; /* shell run in each task after task_init */
	/* results */
	char (*tasks)[1 << 18]; /* what each task saw and printed (the
				   last step's, in task_out) */
	int task_rc[4];		/* task_init's return */
	double user_init_ms;
};

static void set_option(const char *name, const char *val)
{
	for (int i = 0; i < nopts; i++)
		if (!strcmp(opts[i]->name, name))
			opts[i]->cb(opts[i]->val, val, 1);
}

static int split_args(const char *args, char **av, char *buf, size_t len)
{
	int ac = 0;
	char *save = NULL;

	snprintf(buf, len, "%s", args ? args : "");
	for (char *t = strtok_r(buf, " ", &save); t && ac < 8;
	     t = strtok_r(NULL, " ", &save))
		av[ac++] = t;
	av[ac] = NULL;
	return ac;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One task: forked, fully the user, task_init, then its shell command;
 * what it sees goes back through a pipe. */
static void run_task(struct step *s, unsigned t, int ac, char **av)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		bail_out("pipe");
	if ((pid = fork()) == 0) {
		char cmd[8192];
		FILE *fp;
		close(p[0]);
		H.task = t;
		H.gtask = t;
		if (setresgid(group, group, group) < 0 ||
		    setresuid(user, user, user) < 0)
			_exit(99);
		s->task_rc[t] = cb_task(&H, ac, av);
		dprintf(p[1], "rc=%d\n", s->task_rc[t]);
		for (int i = 0; H.env[i]; i++)
			if (!strncmp(H.env[i], "NCCL_", 5) ||
			    !strncmp(H.env[i], "AUTOSYNC_", 9))
				dprintf(p[1], "%s\n", H.env[i]);
		if (s->task_cmd) {
			/* the task's own work, with the environment it got */
			snprintf(cmd, sizeof(cmd), "env -i %s %s sh -c '%s'",
				 find(&H, "AUTOSYNC_REPORT")
				     ? *find(&H, "AUTOSYNC_REPORT")
				     : "X=1",
				 find(&H, "AUTOSYNC_PLAN_HASH")
				     ? *find(&H, "AUTOSYNC_PLAN_HASH")
				     : "Y=1",
				 s->task_cmd);
			if ((fp = popen(cmd, "r"))) {
				char *l = NULL;
				size_t cap = 0;
				while (getline(&l, &cap, fp) > 0)
					dprintf(p[1], "out: %s", l);
				free(l);
				pclose(fp);
			}
		}
		_exit(0);
	}
	close(p[1]);
	{
		size_t n = 0;
		ssize_t r;
		while ((r = read(p[0], s->tasks[t] + n,
				 sizeof(s->tasks[t]) - 1 - n)) > 0)
			n += (size_t)r;
		s->tasks[t][n] = '\0';
	}
	close(p[0]);
	waitpid(pid, NULL, 0);
}

static uint32_t next_job = 1000;
static char task_out[4][1 << 18];

static void run_step(struct step *s)
{
	char abuf[2048], *av[9];
	int ac = split_args(s->args ? s->args : site, av, abuf, sizeof(abuf));
	double t0;

	memset(task_out, 0, sizeof(task_out));
	s->tasks = task_out;
	memset(&H, 0, sizeof(H));
	H.job = ++next_job;
	H.step = 0;
	H.nnodes = 2;
	H.nodeid = 1;
	H.ntasks = s->ntasks;
	H.uid = user;
	H.gid = group;
	H.env[0] = strdup("PATH=/usr/bin:/bin");
	H.env[1] = strdup("SLURM_STEP_GPUS=0,1");
	H.env[2] = strdup("CUDA_VISIBLE_DEVICES=0,1");
	for (int i = 0; i < 8 && s->env[i]; i++)
		H.env[3 + i] = strdup(s->env[i]);
	loglen = 0;
	logbuf[0] = '\0';
	nopts = 0;
	H.ctx = S_CTX_REMOTE;
	cb_init(&H, ac, av);
	if (s->mode)
		set_option("autosync", s->mode);
	if (s->model)
		set_option("autosync-model", s->model);
	cb_post(&H, ac, av);
	/* user_init: slurmstepd's effective ids are the user's */
	if (setegid(group) < 0 || seteuid(user) < 0)
		bail_out("seteuid");
	t0 = now_ms();
	cb_user(&H, ac, av);
	s->user_init_ms = now_ms() - t0;
	if (seteuid(0) < 0 || setegid(0) < 0)
		bail_out("seteuid back");
	for (unsigned t = 0; t < s->ntasks && t < 4; t++)
		run_task(s, t, ac, av);
	cb_exit(&H, ac, av);
	for (int i = 0; H.env[i]; i++)
		free(H.env[i]);
}

static int has(const char *text, const char *what)
{
	return strstr(text, what) != NULL;
}

static void put(const char *name, const char *text, mode_t mode)
{
	char p[1300];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	unlink(p);
	if ((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode)) < 0 ||
	    write(fd, text, strlen(text)) < 0)
		bail_out("%s", p);
	fchmod(fd, mode);
	close(fd);
}

static int lines_of(const char *path)
{
	FILE *fp = fopen(path, "r");
	int n = 0, c;

	while (fp && (c = fgetc(fp)) != EOF)
		n += c == '\n';
	if (fp)
		fclose(fp);
	return n;
}

/* ------------------------------------------------------------ the tests */

static void test_normal(void)
{
	struct step s = {.model = "resnet50",
			 .ntasks = 2,
			 .task_cmd =
			     "printf \"0.25\\n0.5\\n\" > \"$AUTOSYNC_REPORT\""};
	int before = lines_of(feedback);

	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(s.tasks[0], "NCCL_IB_HCA==mlx5_0:1") &&
	       has(s.tasks[1], "NCCL_IB_HCA==mlx5_1:1"),
	   "a planned step: every task its plan and its own NIC");
	ok(has(s.tasks[0], "AUTOSYNC_PLAN=/tmp/autosync-stepd-") &&
	       has(logbuf, "autosync: job "),
	   "the job directory under the runtime dir; logged");
	ok(lines_of(feedback) == before + 1, "one feedback record at exit");
	{
		FILE *fp = fopen(feedback, "r");
		char l[65536] = "", last[65536] = "";
		while (fp && fgets(l, sizeof(l), fp))
			snprintf(last, sizeof(last), "%s", l);
		if (fp)
			fclose(fp);
		ok(has(last, "\"measured_count\": 2") &&
		       has(last, "\"uid\": 65534") &&
		       has(last, "\"model\": \"resnet50\""),
		   "it holds the task's two step times and the job's identity");
		ok(has(last, "{\"version\": 3, ") &&
		       has(last, "\"user_influenced\": [\"measured_step_s\", "
				 "\"measured_count\", \"measured_mean_s\"]}"),
		   "format 3; the step times (the job's report) are marked as "
		   "the user's, nothing else of a catalog model's plan");
	}
	diag("user_init took %.1f ms", s.user_init_ms);
	/* one task for the two GPUs (torchrun under srun): no rank's NIC */
	s.ntasks = 1;
	s.task_cmd = NULL;
	run_step(&s);
	ok(has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(s.tasks[0], "NCCL_TOPO_FILE=") &&
	       !has(s.tasks[0], "NCCL_IB_HCA"),
	   "one task for 2 GPUs: the plan and topology file, no per-rank NIC");
}

/* the last line of the feedback log */
static void last_record(char *last, size_t len)
{
	FILE *fp = fopen(feedback, "r");
	char l[65536];

	last[0] = '\0';
	while (fp && fgets(l, sizeof(l), fp))
		snprintf(last, len, "%s", l);
	if (fp)
		fclose(fp);
}

/* A report that names its plan (the PyTorch adapter's): recorded when it
 * is this step's, dropped when the steps ran with another plan. */
static void test_report_plan(void)
{
	struct step s = {.model = "resnet50", .ntasks = 1};
	static char last[65536];

	s.task_cmd = "printf \"plan_hash %s\\n0.25\\n0.5\\n\" "
		     "\"$AUTOSYNC_PLAN_HASH\" > \"$AUTOSYNC_REPORT\"";
	run_step(&s);
	last_record(last, sizeof(last));
	ok(has(last, "\"measured_count\": 2"),
	   "a report of this step's plan: its two steps recorded");
	s.task_cmd = "printf \"plan_hash 0123456789abcdef\\n0.25\\n\" "
		     "> \"$AUTOSYNC_REPORT\"";
	run_step(&s);
	last_record(last, sizeof(last));
	ok(has(last, "\"measured_count\": 0") &&
	       has(logbuf, "the report's steps ran with plan 0123456789abcdef, "
			   "not this step's "),
	   "a report of another plan: logged, not recorded");
}

/* A broken site config with strict=1: a step that names no model hears
 * nothing; values that came only from the environment warn, never
 * refuse; a model named by an option is refused (strict). */
static void unasked_broken(void)
{
	char args[1400];
	struct step s = {.ntasks = 1, .args = args};

	put("broken.yaml", "default_mode: [off\n", 0644);
	snprintf(args, sizeof(args), "config=%s/broken.yaml strict=1", dir);
	s.env[0] = "AUTOSYNC_MODE=auto";
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && !has(logbuf, "running without"),
	   "broken config + strict, AUTOSYNC_MODE=auto, no model: runs, "
	   "not warned");
	s.env[1] = "AUTOSYNC_MODEL=resnet50";
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && has(logbuf, "site config: ") &&
	       has(logbuf, "running without"),
	   "the same with AUTOSYNC_MODEL: a warning, the step runs");
	s.env[0] = "AUTOSYNC_MODE=required";
	s.env[1] = "AUTOSYNC_MODEL=resnet50";
	run_step(&s);
	ok(has(s.tasks[0], "rc=0"),
	   "AUTOSYNC_MODE=required from the environment: never a refusal");
	s.env[0] = s.env[1] = NULL;
	s.mode = "auto";
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && !has(logbuf, "running without"),
	   "--autosync=auto, no model: runs, not warned");
	s.model = "resnet50";
	run_step(&s);
	ok(has(s.tasks[0], "rc=-1") && has(logbuf, "site config: "),
	   "--autosync-model by an option, strict: refused, the reason named");
	s.mode = NULL;
	s.env[0] = "AUTOSYNC_MODE=required";
	run_step(&s);
	ok(has(s.tasks[0], "rc=-1") && has(logbuf, "site config: "),
	   "the same with AUTOSYNC_MODE=required in the environment: still "
	   "refused (strict)");
	s.env[0] = NULL;
	s.mode = "auto";
	/* a mode the cluster does not allow */
	put("noauto.yaml", "allowed_modes: [off, required, plan]\n", 0644);
	snprintf(args, sizeof(args), "config=%s/noauto.yaml", dir);
	s.model = NULL;
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && !has(logbuf, "not allowed"),
	   "--autosync=auto not allowed, no model: not warned");
	s.model = "resnet50";
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && has(logbuf, "not allowed"),
	   "--autosync=auto not allowed, a model: warned, runs");
	s.mode = NULL;
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && !has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(logbuf, "--autosync=auto (what --autosync-model means) is "
			   "not allowed"),
	   "auto not allowed, --autosync-model alone: not planned, warned");
}

/* The record's node comes from slurmstepd (its own SLURMD_NODENAME, else
 * the host name), never from the job's environment. */
/* slurmstepd refuses one of the plan's variables: none of the others
 * stays either, and the step runs as without autosync */
static void test_half_env(void)
{
	struct step s = {.model = "resnet50", .ntasks = 1};

	fail_setenv = "NCCL_TOPO_FILE";
	run_step(&s);
	fail_setenv = NULL;
	ok(has(s.tasks[0], "rc=0") && !has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       !has(s.tasks[0], "AUTOSYNC_PLAN_HASH=") &&
	       has(logbuf, "cannot set NCCL_TOPO_FILE"),
	   "a plan variable that cannot be set: none of the plan's stays, "
	   "the step runs, the reason said");
}

static void test_forged_node(void)
{
	struct step s = {.model = "resnet50",
			 .ntasks = 1,
			 .env = {"SLURMD_NODENAME=forged-node"},
			 .task_cmd =
			     "printf \"0.25\\n\" > \"$AUTOSYNC_REPORT\""};
	char last[65536];

	run_step(&s);
	last_record(last, sizeof(last));
	ok(has(last, "\"node\": \"") && !has(last, "forged-node"),
	   "SLURMD_NODENAME in the job's environment does not name the "
	   "record's node");
}

static void test_unasked(void)
{
	char args[1400];
	struct step s = {.ntasks = 1, .args = args};

	/* a topology that does not exist: touching it would warn */
	put("badtopo.yaml",
	    "topology_xml: /nonexistent/topo.xml\ndefault_mode: auto\n", 0644);
	snprintf(args, sizeof(args), "config=%s/badtopo.yaml strict=1", dir);
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && has(s.tasks[0], "AUTOSYNC_MODE=auto") &&
	       !has(s.tasks[0], "AUTOSYNC_PLAN="),
	   "default_mode auto + strict, no model: runs, AUTOSYNC_MODE only");
	ok(!has(logbuf, "topology") && !has(logbuf, "error"),
	   "no topology work, no warning, no error");
	s.args = NULL;
	run_step(&s);
	ok(!has(s.tasks[0], "AUTOSYNC_"),
	   "no option, site default off: nothing at all");
	unasked_broken();
}

static void test_hostile_models(void)
{
	char path[1300];
	struct step s = {.model = path, .ntasks = 1};
	struct {
		const char *what, *setup, *want;
	} cases[] = {
	    {"a symlink to /etc/shadow", "ln -sf /etc/shadow \"$0\"",
	     "is a symbolic link"},
	    {"a FIFO", "rm -f \"$0\"; mkfifo -m 0666 \"$0\"",
	     "not a regular file"},
	    {"/dev/zero", "rm -f \"$0\"; ln -s /dev/zero \"$0\"",
	     "is a symbolic link"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char cmd[3000];
		snprintf(path, sizeof(path), "%s/m%zu.yaml", dir, i);
		snprintf(cmd, sizeof(cmd), "sh -c '%s' '%s'", cases[i].setup,
			 path);
		if (system(cmd) != 0)
			bail_out("%s", cmd);
		run_step(&s);
		ok(has(logbuf, cases[i].want) && has(s.tasks[0], "rc=0") &&
		       !has(s.tasks[0], "AUTOSYNC_PLAN="),
		   "model file %s: refused (%s), the step runs without a plan",
		   cases[i].what, cases[i].want);
	}
	snprintf(path, sizeof(path), "/dev/zero");
	run_step(&s);
	ok(has(logbuf, "not a regular file") && s.user_init_ms < 60000,
	   "/dev/zero itself: refused at once, not read");
	/* 100 bytes that would expand into two million tensors: refused at
	 * once; 200,000 (each its own layer) are allowed and take seconds */
	put("huge.yaml",
	    "autosync_model: 1\nname: huge\ntensors:\n"
	    "  - {name: w, shape: [4], dtype: float32, repeat: 2000000}\n",
	    0644);
	snprintf(path, sizeof(path), "%s/huge.yaml", dir);
	run_step(&s);
	ok(has(logbuf, "tensors exceed the limit of 200000") &&
	       has(s.tasks[0], "rc=0"),
	   "a repeat past the tensor limit: refused before expanding "
	   "(user_init %.0f ms)",
	   s.user_init_ms);
	put("huge.yaml",
	    "autosync_model: 1\nname: huge\ntensors:\n"
	    "  - {name: w, layer: l, shape: [4], dtype: float32, "
	    "repeat: 200000}\n",
	    0644);
	s.args = budget_site;
	run_step(&s);
	s.args = NULL;
	ok(has(logbuf, "did not finish within the site's budget of 500 ms") &&
	       has(s.tasks[0], "rc=0"),
	   "a model that takes seconds: stopped at the budget, the step runs "
	   "(user_init %.0f ms)",
	   s.user_init_ms);
	/* 40 KB of flow nesting: quadratic in libyaml, refused before it */
	{
		static char deep[40100];
		size_t n = (size_t)snprintf(
		    deep, sizeof(deep), "autosync_model: 1\nname: d\nextra: ");
		while (n < sizeof(deep) - 2)
			deep[n++] = '[';
		deep[n++] = '\n';
		deep[n] = '\0';
		put("deep.yaml", deep, 0644);
	}
	snprintf(path, sizeof(path), "%s/deep.yaml", dir);
	run_step(&s);
	ok(has(logbuf, "deep.yaml:3: nested deeper than 64 levels") &&
	       has(s.tasks[0], "rc=0") && !has(s.tasks[0], "AUTOSYNC_PLAN="),
	   "40 KB of nested brackets: refused before libyaml parses them, the "
	   "step runs (user_init %.0f ms)",
	   s.user_init_ms);
	/* a key that tries to forge a log line */
	put("forge.yaml",
	    "autosync_model: 1\nname: x\n\"a\\nslurmstepd: error: "
	    "\\e[31mforged\": 1\n"
	    "tensors:\n  - {name: w, shape: [4], dtype: float32}\n",
	    0644);
	snprintf(path, sizeof(path), "%s/forge.yaml", dir);
	run_step(&s);
	ok(!has(logbuf, "\nslurmstepd: error:") && !strchr(logbuf, '\x1b') &&
	       has(logbuf, "\\x0aslurmstepd"),
	   "text from a model file reaches the log escaped, on one line");
}

static void test_hostile_env(void)
{
	struct step s = {.model = "resnet50",
			 .ntasks = 1,
			 .env = {"AUTOSYNC_MODE=sometimes"}};
	char plan[1300], cmd[4000];

	run_step(&s);
	ok(has(logbuf, "invalid AUTOSYNC_MODE value 'sometimes'") &&
	       has(s.tasks[0], "AUTOSYNC_PLAN="),
	   "a bad AUTOSYNC_MODE in the job's environment: ignored, planned");
	/* a shared plan file that would load code into every job using it */
	struct step ok1 = {
	    .model = "resnet50",
	    .ntasks = 1,
	    .task_cmd = "cat \"$(dirname \"$AUTOSYNC_REPORT\")/plan.yaml\""};
	run_step(&ok1);
	snprintf(plan, sizeof(plan), "%s/evil-plan.yaml", dir);
	{
		FILE *fp = fopen(plan, "w");
		const char *p = ok1.tasks[0];
		while (fp && (p = strstr(p, "out: "))) {
			const char *nl = strchr(p, '\n');
			if (!strncmp(p + 5, "hash:", 5)) { /* accept the edit */
				p = nl ? nl + 1 : p + 5;
				continue;
			}
			if (!strncmp(p + 5, "env:", 4))
				fprintf(fp, "env:\n  \"LD_PRELOAD\": "
					    "\"/tmp/evil.so\"\n");
			else
				fprintf(fp, "%.*s\n",
					(int)(nl ? nl - p - 5
						 : (long)strlen(p + 5)),
					p + 5);
			p = nl ? nl + 1 : p + strlen(p);
		}
		if (fp)
			fclose(fp);
	}
	chmod(plan, 0644);
	snprintf(cmd, sizeof(cmd), "%s", plan);
	struct step ev = {.mode = cmd, .ntasks = 1};
	run_step(&ev);
	ok(!has(ev.tasks[0], "LD_PRELOAD") && has(logbuf, "LD_PRELOAD") &&
	       has(ev.tasks[0], "rc=0"),
	   "a plan file that sets LD_PRELOAD: refused, named, the step runs");
}

/* srun's side of the agreement, played by the test: answers one node's
 * report with 'same HASH' (its own hash echoed) or a fixed line. */
struct fake_srun {
	int fd;
	const char *reply; /* NULL: echo 'same HASH' */
	char got[256];
	pthread_t th;
};

static void *fake_srun_main(void *arg)
{
	struct fake_srun *f = arg;
	char out[300];
	const char *h;
	ssize_t n;
	int c;

	if ((c = accept(f->fd, NULL, NULL)) < 0)
		return NULL;
	n = read(c, f->got, sizeof(f->got) - 1);
	f->got[n > 0 ? n : 0] = '\0';
	h = strrchr(f->got, ' ');
	if (f->reply)
		snprintf(out, sizeof(out), "%s\n", f->reply);
	else
		snprintf(out, sizeof(out), "same %s", h ? h + 1 : "?\n");
	(void)!write(c, out, strlen(out));
	close(c);
	return NULL;
}

/* listen on loopback; the spec a node needs in 'spec' */
static void fake_srun_start(struct fake_srun *f, const char *reply, char *spec,
			    size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);

	memset(f, 0, sizeof(*f));
	f->reply = reply;
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if ((f->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(f->fd, 4) < 0 ||
	    getsockname(f->fd, (struct sockaddr *)&sa, &sl) < 0 ||
	    pthread_create(&f->th, NULL, fake_srun_main, f))
		bail_out("fake srun");
	snprintf(spec, len,
		 "AUTOSYNC_AGREE=%d 0123456789abcdef0123456789abcdef 500",
		 ntohs(sa.sin_port));
}

static void fake_srun_end(struct fake_srun *f)
{
	shutdown(f->fd, SHUT_RDWR);
	pthread_join(f->th, NULL);
	close(f->fd);
}

/* The nodes' agreement (autosync/agree.h) from one node's side: srun's
 * variable is the job's, so it is read like any hostile input. */
static void test_agree(void)
{
	struct fake_srun f;
	char spec[128];

	fake_srun_start(&f, NULL, spec, sizeof(spec));
	struct step same = {.model = "resnet50",
			    .ntasks = 1,
			    .env = {spec, "SLURM_SRUN_COMM_HOST=127.0.0.1"}};
	run_step(&same);
	fake_srun_end(&f);
	ok(!strncmp(f.got, "autosync-agree 1 0123456789abcdef0123456789abcdef ",
		    50) &&
	       has(f.got, " 0 1 ") && has(same.tasks[0], "AUTOSYNC_PLAN=") &&
	       !has(same.tasks[0], "AUTOSYNC_AGREE") &&
	       has(logbuf, ", the nodes agreed in "),
	   "srun says 'same': the node reported job, step, node id and "
	   "hash, applies its plan; the task never sees srun's variable");

	fake_srun_start(&f, "differ 0 aaaa 1 bbbb", spec, sizeof(spec));
	struct step differ = {.model = "resnet50",
			      .ntasks = 1,
			      .env = {spec, "SLURM_SRUN_COMM_HOST=127.0.0.1"}};
	run_step(&differ);
	fake_srun_end(&f);
	ok(!has(differ.tasks[0], "AUTOSYNC_PLAN=") &&
	       !has(differ.tasks[0], "NCCL_IB_HCA") &&
	       has(differ.tasks[0], "rc=0") &&
	       has(logbuf, "autosync: nodes 0 and 1 of this step made "
			   "different plans (aaaa, bbbb); every node runs "
			   "without autosync"),
	   "srun says 'differ': no plan, the step runs, the reason logged");

	struct step garbage = {.model = "resnet50",
			       .ntasks = 1,
			       .env = {"AUTOSYNC_AGREE=12 zz 5\n",
				       "SLURM_SRUN_COMM_HOST=127.0.0.1"}};
	run_step(&garbage);
	ok(!has(garbage.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(garbage.tasks[0], "rc=0") &&
	       has(logbuf, "cannot agree on the plan with srun (agree: bad "
			   "spec '12 zz 5\\x0a'); running without autosync"),
	   "a forged spec: no plan, the step runs, the value escaped");

	struct step nohost = {.model = "resnet50",
			      .ntasks = 1,
			      .env = {"AUTOSYNC_AGREE=1 "
				      "0123456789abcdef0123456789abcdef 5"}};
	run_step(&nohost);
	ok(!has(nohost.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(logbuf, "(no SLURM_SRUN_COMM_HOST)"),
	   "no srun address: no plan");

	char args[1700];
	snprintf(args, sizeof(args), "%s agree=no", site);
	struct step off = {.model = "resnet50",
			   .ntasks = 1,
			   .args = args,
			   .env = {"AUTOSYNC_AGREE=12 zz 5"}};
	run_step(&off);
	ok(has(off.tasks[0], "AUTOSYNC_PLAN=") &&
	       !has(off.tasks[0], "AUTOSYNC_AGREE"),
	   "agree=no: the plan applied unchecked; the variable still "
	   "removed");
}

static void test_hostile_reports(void)
{
	struct {
		const char *what, *cmd, *want;
	} cases[] = {
	    {"a symlink to /etc/shadow",
	     "ln -s /etc/shadow \"$AUTOSYNC_REPORT\"", "is a symbolic link"},
	    {"a FIFO", "mkfifo \"$AUTOSYNC_REPORT\"", "not a regular file"},
	    {"garbage", "printf \"fast\\n\" > \"$AUTOSYNC_REPORT\"",
	     "not a step time in seconds"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct step s = {
		    .model = "resnet50", .ntasks = 1, .task_cmd = cases[i].cmd};
		run_step(&s);
		ok(has(logbuf, cases[i].want) && !has(logbuf, "root:"),
		   "a report that is %s: not read, said (%s)", cases[i].what,
		   cases[i].want);
	}
}

static void test_jobdirs(const char *fixtures)
{
	char shared[1300], args[1600], pre[1400], conf[1400];
	struct step s = {.model = "resnet50", .ntasks = 1, .args = args};
	FILE *fp;

	/* a shared, sticky runtime dir where another user planted the
	 * predictable name of the next job's directory first */
	snprintf(shared, sizeof(shared), "%s/shared", dir);
	mkdir(shared, 01777);
	chmod(shared, 01777);
	snprintf(pre, sizeof(pre), "%s/autosync-%u-%u.0.1", shared,
		 (unsigned)user, next_job + 1);
	mkdir(pre, 0777);
	snprintf(conf, sizeof(conf), "%s/shared.yaml", dir);
	if (!(fp = fopen(conf, "w")))
		bail_out("%s", conf);
	fprintf(fp,
		"catalog_dir: %s/planner/catalog\n"
		"topology_xml: %s/hwloc-juwels-booster-4xA100-4xHDR.xml\n"
		"plan_budget_ms: 5000\nruntime_dir: %s\n",
		getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".",
		fixtures, shared);
	fclose(fp);
	chmod(conf, 0644);
	snprintf(args, sizeof(args), "config=%s", conf);
	run_step(&s);
	strncat(pre, "/plan.yaml", sizeof(pre) - strlen(pre) - 1);
	ok(has(s.tasks[0], "AUTOSYNC_PLAN=") && !has(s.tasks[0], pre) &&
	       has(s.tasks[0], "autosync-65534-"),
	   "a shared runtime dir with the name planted by another user: the "
	   "step is planned in a directory with a random name");
}

/* a site config in the test directory: the common lines, then 'lines' */
static void site_conf(const char *name, const char *fixtures,
		      unsigned budget_ms, const char *lines, char *args,
		      size_t len)
{
	char p[1300];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(fp = fopen(p, "w")))
		bail_out("%s", p);
	fprintf(fp,
		"topology_xml: %s/hwloc-juwels-booster-4xA100-4xHDR.xml\n"
		"plan_budget_ms: %u\n%s",
		fixtures, budget_ms, lines);
	fclose(fp);
	chmod(p, 0644);
	snprintf(args, len, "config=%s", p);
}

/* kill every child of this process but the killer, after 'ms' */
static pid_t killer(unsigned ms)
{
	pid_t parent = getpid(), k = fork();
	char path[64], buf[512];

	if (k != 0)
		return k;
	usleep(ms * 1000);
	for (int pid = 2; pid < 4194304; pid++) {
		FILE *fp;
		char *rp;
		int ppid;
		if (pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (!(fp = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), fp) && (rp = strrchr(buf, ')')) &&
		    sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == parent)
			kill(pid, SIGKILL);
		fclose(fp);
	}
	_exit(0);
}

/* Faults where every job must still run: the log cannot be written, the
 * disk is full, the planning child is killed, the simulator's constants or
 * the catalog are corrupt. */
/* the job directory a task was given (from its AUTOSYNC_PLAN) */
static void jobdir_of(const char *task, char *out, size_t len)
{
	const char *p = strstr(task, "AUTOSYNC_PLAN=");
	size_t n;

	out[0] = '\0';
	if (!p)
		return;
	p += 14;
	n = strcspn(p, "\n");
	if (n >= len)
		return;
	memcpy(out, p, n);
	out[n] = '\0';
	if (strrchr(out, '/'))
		*strrchr(out, '/') = '\0';
}

static int exists_in(const char *d, const char *name)
{
	char p[1400];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", d, name);
	return lstat(p, &st) == 0;
}

/* The plan and the step's own record outlive the step for the site's
 * time; older directories go when a later step starts. */
static void test_keep(void)
{
	struct step s = {.model = "resnet50",
			 .ntasks = 1,
			 .task_cmd =
			     "printf \"0.125\\n\" > \"$AUTOSYNC_REPORT\""};
	char jd[1400], old[1300], young[1300], target[1300], link[1300];
	struct timespec ts[2] = {{.tv_sec = time(NULL) - 3 * 86400},
				 {.tv_sec = time(NULL) - 3 * 86400}};
	struct stat st;
	FILE *fp;

	run_step(&s);
	jobdir_of(s.tasks[0], jd, sizeof(jd));
	ok(jd[0] && exists_in(jd, "plan.yaml") &&
	       exists_in(jd, "feedback.json") && !exists_in(jd, "report") &&
	       stat(jd, &st) == 0 && st.st_uid == user &&
	       (st.st_mode & 0777) == 0700,
	   "after the step: the user's job directory keeps plan.yaml and "
	   "feedback.json, the report is gone");
	snprintf(old, sizeof(old), "%s/feedback.json", jd);
	if ((fp = fopen(old, "r"))) {
		char l[65536] = "";
		if (!fgets(l, sizeof(l), fp))
			l[0] = '\0';
		fclose(fp);
		ok(has(l, "\"measured_count\": 1") &&
		       has(l, "\"strategy\": \"") && has(l, "\"uid\": 65534"),
		   "the step's own record: its strategy and measurement");
	} else {
		ok(0, "the step's own record: %s", old);
	}
	/* older than the site's day: removed at the next step start; a
	 * link named like one is not followed */
	snprintf(old, sizeof(old), "%s/autosync-4242-1.0.0", runtime);
	snprintf(young, sizeof(young), "%s/autosync-4242-2.0.0", runtime);
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/autosync-4242-3.0.0", runtime);
	mkdir(old, 0700);
	mkdir(young, 0700);
	mkdir(target, 0700);
	put("target/precious", "x\n", 0644);
	snprintf(jd, sizeof(jd), "%s/plan.yaml", old);
	if ((fp = fopen(jd, "w")))
		fclose(fp);
	if (symlink(target, link) < 0)
		bail_out("symlink");
	utimensat(AT_FDCWD, old, ts, 0);
	utimensat(AT_FDCWD, link, ts, AT_SYMLINK_NOFOLLOW);
	run_step(&s);
	ok(!exists_in(runtime, "autosync-4242-1.0.0") &&
	       exists_in(runtime, "autosync-4242-2.0.0"),
	   "a directory older than keep_job_files is removed at a step start, "
	   "a younger one stays");
	ok(exists_in(target, "precious"),
	   "a link in the runtime dir is not followed");
	unlink(link);
}

static void test_faults(const char *fixtures)
{
	const char *src =
	    getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".";
	char args[1600], lines[4000], p[1300], model[1300];
	struct step s = {.model = "resnet50",
			 .ntasks = 1,
			 .args = args,
			 .task_cmd =
			     "[ -z \"$AUTOSYNC_REPORT\" ] || "
			     "printf \"0.25\\n\" > \"$AUTOSYNC_REPORT\""};

	/* the feedback log's directory is a file */
	put("notadir", "x\n", 0644);
	snprintf(
	    lines, sizeof(lines),
	    "catalog_dir: %s/planner/catalog\n"
	    "runtime_dir: %s\nfeedback:\n  path: %s/notadir/feedback.jsonl\n",
	    src, runtime, dir);
	site_conf("f1.yaml", fixtures, 500, lines, args, sizeof(args));
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(logbuf, "autosync: feedback: ") && has(logbuf, "notadir"),
	   "an unwritable feedback log: the step is planned and runs, the "
	   "lost record is logged");

	/* a full disk under the runtime directory and the log */
	snprintf(p, sizeof(p), "%s/full", dir);
	mkdir(p, 0755);
	{
		char cmd[4200];
		snprintf(cmd, sizeof(cmd),
			 "mount -t tmpfs -o size=64k,mode=0755 "
			 "autosync-full %s 2>/dev/null && dd if=/dev/zero "
			 "of=%s/fill "
			 "bs=4k 2>/dev/null; mkdir -p %s/run; true",
			 p, p, p);
		if (system(cmd) != 0 || !has(p, "full"))
			diag("%s", cmd);
	}
	snprintf(model, sizeof(model), "%s/full/run", dir);
	{
		struct stat st;
		int mounted = stat(model, &st) == 0;
		char fill[1400];
		snprintf(fill, sizeof(fill), "%s/full/fill", dir);
		mounted =
		    mounted && stat(fill, &st) == 0 && st.st_size >= 32768;
		if (!mounted) {
			skip(1, "no tmpfs to fill (mount refused here)");
		} else {
			snprintf(
			    lines, sizeof(lines),
			    "catalog_dir: %s/planner/catalog\nruntime_dir: "
			    "%s/full/run\n"
			    "feedback:\n  path: %s/full/feedback.jsonl\n",
			    src, dir, dir);
			site_conf("f2.yaml", fixtures, 500, lines, args,
				  sizeof(args));
			run_step(&s);
			ok(has(s.tasks[0], "rc=0") &&
			       !has(s.tasks[0], "AUTOSYNC_PLAN=") &&
			       has(logbuf, "disk full"),
			   "a full disk: the step runs without autosync, one "
			   "warning "
			   "says the disk is full");
			snprintf(fill, sizeof(fill), "umount %s/full", dir);
			if (system(fill) != 0)
				diag("%s failed", fill);
		}
	}

	/* the planning child killed (the OOM killer, an admin) mid-plan */
	put("slow.yaml",
	    "autosync_model: 1\nname: slow\ntensors:\n"
	    "  - {name: w, layer: l, shape: [4], dtype: float32, "
	    "repeat: 200000}\n",
	    0644);
	snprintf(lines, sizeof(lines),
		 "catalog_dir: %s/planner/catalog\n"
		 "runtime_dir: %s\n",
		 src, runtime);
	site_conf("f3.yaml", fixtures, 5000, lines, args, sizeof(args));
	{
		struct step k = {.model = model, .ntasks = 1, .args = args};
		pid_t kp;
		snprintf(model, sizeof(model), "%s/slow.yaml", dir);
		kp = killer(300);
		run_step(&k);
		waitpid(kp, NULL, 0);
		ok(has(k.tasks[0], "rc=0") &&
		       !has(k.tasks[0], "AUTOSYNC_PLAN=") &&
		       has(logbuf, "the planning child died of signal 9"),
		   "a planning child killed mid-plan: the step runs without "
		   "autosync, the death is logged (user_init %.0f ms)",
		   k.user_init_ms);
	}

	/* corrupt cost constants */
	put("cal.yaml", "launch: fast\n", 0644);
	snprintf(lines, sizeof(lines),
		 "catalog_dir: %s/planner/catalog\n"
		 "runtime_dir: %s\ncalibration: %s/cal.yaml\n",
		 src, runtime, dir);
	site_conf("f4.yaml", fixtures, 500, lines, args, sizeof(args));
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && !has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(logbuf, "cal.yaml:1"),
	   "corrupt simulator constants: the step runs, the warning names the "
	   "file and line");

	/* a corrupt catalog model */
	snprintf(p, sizeof(p), "%s/cat", dir);
	mkdir(p, 0755);
	put("cat/resnet50.yaml",
	    "autosync_model: 1\nname: resnet50\ntensors: 12\n", 0644);
	snprintf(lines, sizeof(lines), "catalog_dir: %s/cat\nruntime_dir: %s\n",
		 dir, runtime);
	site_conf("f5.yaml", fixtures, 500, lines, args, sizeof(args));
	run_step(&s);
	ok(has(s.tasks[0], "rc=0") && !has(s.tasks[0], "AUTOSYNC_PLAN=") &&
	       has(logbuf, "resnet50.yaml:3"),
	   "a corrupt catalog model: the step runs, the warning names the file "
	   "and line");
}

static void load_plugin(const char *so)
{
	void *h = dlopen(so, RTLD_NOW | RTLD_GLOBAL);

	if (!h)
		bail_out("dlopen %s: %s", so, dlerror());
	cb_init = (spank_f *)dlsym(h, "slurm_spank_init");
	cb_post = (spank_f *)dlsym(h, "slurm_spank_init_post_opt");
	cb_user = (spank_f *)dlsym(h, "slurm_spank_user_init");
	cb_task = (spank_f *)dlsym(h, "slurm_spank_task_init");
	cb_exit = (spank_f *)dlsym(h, "slurm_spank_exit");
	if (!cb_init || !cb_post || !cb_user || !cb_task || !cb_exit)
		bail_out("the plugin lacks a callback");
}

int main(void)
{
	const char *b = getenv("AUTOSYNC_BUILDDIR"),
		   *src = getenv("AUTOSYNC_SRCDIR");
	const char *fx = getenv("AUTOSYNC_FIXTURES");
	char so[1200], fixtures[1200], p[1300];
	FILE *fp;

	plan(NO_PLAN);
	if (geteuid() != 0) {
		skip(1, "runs as root (slurmstepd does)");
		return done_testing();
	}
	snprintf(so, sizeof(so), "%s/plugin/.libs/spank_autosync.so",
		 b ? b : ".");
	snprintf(fixtures, sizeof(fixtures), "%s",
		 fx && *fx ? fx : "tests/fixtures/topologies");
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	chmod(dir, 0755);
	{
		/* the site's files as a site keeps them, readable by the
		 * job's user (the planning child runs as the user), wherever
		 * the source tree is (a checkout under a private directory) */
		char cmd[4000];
		snprintf(cmd, sizeof(cmd),
			 "mkdir -p %s/src/planner %s/fixtures && "
			 "cp -r '%s/planner/catalog' %s/src/planner/ && "
			 "cp '%s/hwloc-juwels-booster-4xA100-4xHDR.xml' "
			 "%s/fixtures/ && "
			 "chmod -R a+rX %s/src %s/fixtures",
			 dir, dir, src ? src : ".", dir, fixtures, dir, dir,
			 dir);
		if (system(cmd) != 0)
			bail_out("%s", cmd);
		snprintf(fixtures, sizeof(fixtures), "%s/fixtures", dir);
		snprintf(p, sizeof(p), "%s/src", dir);
		setenv("AUTOSYNC_SRCDIR", p, 1);
		src = getenv("AUTOSYNC_SRCDIR");
	}
	snprintf(runtime, sizeof(runtime), "%s/run", dir);
	mkdir(runtime, 0755);
	snprintf(feedback, sizeof(feedback), "%s/feedback.jsonl", dir);
	snprintf(p, sizeof(p), "%s/site.yaml", dir);
	if (!(fp = fopen(p, "w")))
		bail_out("%s", p);
	fprintf(
	    fp,
	    "catalog_dir: %s/planner/catalog\n"
	    "topology_xml: %s/hwloc-juwels-booster-4xA100-4xHDR.xml\n"
	    "plan_budget_ms: 5000\nruntime_dir: %s\nfeedback:\n  path: %s\n",
	    src ? src : ".", fixtures, runtime, feedback);
	fclose(fp);
	chmod(p, 0644);
	snprintf(site, sizeof(site), "config=%s", p);
	/* the budget's own test: 500 ms (the others plan with 5 s, so that a
	 * loaded machine under ASan does not make a normal plan late) */
	site_conf("budget.yaml", fixtures, 500, "", budget_site,
		  sizeof(budget_site));
	load_plugin(so);
	test_normal();
	test_report_plan();
	test_unasked();
	test_forged_node();
	test_half_env();
	test_hostile_models();
	test_hostile_env();
	test_agree();
	test_hostile_reports();
	test_jobdirs(fixtures);
	test_faults(fixtures);
	test_keep();
	{
		char cmd[1400];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
