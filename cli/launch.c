/* launch.c - 'autosync launch [--plan FILE | --model NAME] -- CMD ARGS...':
 * apply a plan without the SPANK plugin (mpirun, containers, Kubernetes
 * pods), then exec the command. The job pipeline (autosync/job.h) decides
 * the environment exactly as in the plugin; this adds what only a wrapper
 * knows: the local rank and node count from the launchers' variables, a
 * private job directory, and the NCCL plugin directory. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/job.h"
#include "autosync/siteconf.h"
#include "cli.h"
#include "common/text.h"

#define WHICH (CLI_IN_TOPOLOGY | CLI_IN_NETWORK | CLI_IN_NODES)

struct opts {
	struct cli_input in; /* nodes 0 = from the environment */
	const char *plan_file, *model, *catalog, *config, *dir, *plugin_dir;
	int local_rank; /* -1 = from the environment */
	int plugins;	/* AUTOSYNC_JOB_TUNER | AUTOSYNC_JOB_PROFILER */
	int compress;	/* the job allows lossy compression */
	FILE *log;	/* messages; NULL = quiet */
	FILE *explain;	/* the plan summary; NULL = not */
};

static void usage(FILE *fp)
{
	char text[512];

	fprintf(fp,
		"usage: autosync launch [options] -- COMMAND [ARGS...]\n"
		"\n"
		"Plan (or load a plan), set the environment the SPANK plugin "
		"would set for\nthis rank, point NCCL at autosync's tuner and "
		"profiler plugins, and exec\nCOMMAND. Without a plan or model "
		"the command runs unchanged.\n\n");
	cli_help(fp, "-p, --plan FILE",
		 "use this plan (autosync plan -o "
		 "FILE)");
	cli_help(fp, "-m, --model NAME|FILE",
		 "plan for this model at "
		 "start-up");
	cli_help(fp, "    --catalog DIR",
		 "catalog directory (default: the "
		 "site's catalog_dir, $AUTOSYNC_CATALOG_DIR, the installed "
		 "catalog)");
	snprintf(text, sizeof(text),
		 "site config (default: %s if it "
		 "exists)",
		 cli_site_config_path());
	cli_help(fp, "-c, --config FILE|none", text);
	cli_input_usage(fp, WHICH, "the site's topology_xml, else live",
			"the job's GPUs from CUDA_VISIBLE_DEVICES, "
			"SLURM_STEP_GPUS, SLURM_JOB_GPUS",
			"SLURM_NNODES, SLURM_JOB_NUM_NODES, "
			"OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE, "
			"PET_NNODES, WORLD_SIZE / LOCAL_WORLD_SIZE, else 1");
	cli_help(fp, "-d, --dir DIR",
		 "private directory for the plan, NCCL "
		 "topology and report (default $TMPDIR/autosync-launch-UID-"
		 "JOB-RANK; a later launch removes the user's older than "
		 "keep_job_files, at least a day)");
	cli_help(fp, "    --local-rank R",
		 "this process's local rank "
		 "(default: LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, "
		 "MPI_LOCALRANKID, SLURM_LOCALID, PMIX_LOCAL_RANK)");
	snprintf(text, sizeof(text),
		 "where the NCCL plugins are (default "
		 "$AUTOSYNC_NCCL_PLUGIN_DIR, the site's nccl_plugin_dir when "
		 "it enables them, or %s)",
		 AUTOSYNC_LIBDIR);
	cli_help(fp, "    --plugin-dir DIR", text);
	cli_help(fp, "    --allow-compression",
		 "allow lossy gradient compression (default: "
		 "$AUTOSYNC_COMPRESSION, as the SPANK plugin sets it)");
	cli_help(fp, "    --no-tuner", "do not set NCCL_TUNER_PLUGIN");
	cli_help(fp, "    --no-profiler", "do not set NCCL_PROFILER_PLUGIN");
	cli_help(fp, "-s, --strict",
		 "fail instead of running the command "
		 "without autosync");
	cli_help(fp, "-e, --explain", "print the plan summary on stderr");
	cli_help(fp, "-q, --quiet", "no messages");
	cli_help(fp, "-h, --help", "this help");
}

static void say(const struct opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->log)
		return;
	va_start(ap, fmt);
	fputs("autosync: ", o->log);
	vfprintf(o->log, fmt, ap);
	fputc('\n', o->log);
	va_end(ap);
}

static void job_log(int level, const char *msg, void *arg)
{
	const struct opts *o = arg;

	if (level <= AUTOSYNC_LOG_INFO)
		say(o, "%s", msg);
}

/* ---------------------------------------------- the launchers' variables */

/* The local rank: the first of these that is set, else -1 (a per-node
 * launcher such as torchrun, wrapped whole, starts every rank of the node:
 * none of them is this process). A per-node launcher's own numbering
 * (torchrun's LOCAL_RANK) comes before Slurm's: its workers all inherit the
 * task's SLURM_LOCALID. */
static int local_rank(void)
{
	static const char *const vars[] = {
	    "LOCAL_RANK",      "OMPI_COMM_WORLD_LOCAL_RANK",
	    "MPI_LOCALRANKID", "SLURM_LOCALID",
	    "PMIX_LOCAL_RANK",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long v = cli_env_num(vars[i]);
		if (v >= 0)
			return (int)v;
	}
	return -1;
}

/* A key shared by the ranks of one job on one node, for the directory. */
static void job_key(char *buf, size_t len)
{
	static const char *const ids[] = {
	    "SLURM_JOB_ID",	   "PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid",
	    "TORCHELASTIC_RUN_ID", "HOSTNAME",
	};
	const char *v = NULL;
	size_t i, o = 0;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]) && !v; i++)
		if (getenv(ids[i]) && *getenv(ids[i]))
			v = getenv(ids[i]);
	if (!v || !strcmp(ids[i - 1], "HOSTNAME")) {
		snprintf(buf, len, "p%ld", (long)getppid());
		return;
	}
	for (i = 0; v[i] && o + 1 < len && o < 48; i++)
		buf[o++] = (v[i] >= 'a' && v[i] <= 'z') ||
				   (v[i] >= 'A' && v[i] <= 'Z') ||
				   (v[i] >= '0' && v[i] <= '9') || v[i] == '-'
			       ? v[i]
			       : '_';
	buf[o] = '\0';
	if (getenv("SLURM_STEP_ID") && o + 1 < len)
		o += (size_t)snprintf(buf + o, len - o, ".%.12s",
				      getenv("SLURM_STEP_ID"));
	/* Slurm nodes may share /tmp (one-host test clusters) */
	if (getenv("SLURMD_NODENAME") && o + 1 < len)
		snprintf(buf + o, len - o, "-%.32s", getenv("SLURMD_NODENAME"));
}

/* One directory per local rank: every rank writes its plan files whole,
 * never two writers in one directory. */
static int make_dir(const struct opts *o, const autosync_siteconf_t *site,
		    int rank, char *out, size_t len, autosync_error_t *err)
{
	long keep = site ? autosync_siteconf_keep_job_files(site) : 0;
	const char *base = getenv("TMPDIR");
	char name[160], key[80];

	if (o->dir && o->dir[0]) {
		char abs[2 * PATH_MAX + 2], cwd[PATH_MAX], parent[sizeof(abs)];
		const char *slash;

		if (o->dir[0] != '/') {
			if (!getcwd(cwd, sizeof(cwd)))
				return autosync_errprintf(err, "getcwd: %s",
							  strerror(errno));
			snprintf(abs, sizeof(abs), "%s/%s", cwd, o->dir);
		} else {
			snprintf(abs, sizeof(abs), "%s", o->dir);
		}
		slash = strrchr(abs, '/');
		snprintf(parent, sizeof(parent), "%.*s",
			 (int)(slash == abs ? 1 : slash - abs), abs);
		return autosync_jobdir_create(parent, slash + 1, getuid(),
					      getgid(), out, len, err);
	}
	if (!base || base[0] != '/')
		base = "/tmp";
	/* launch execs the command, so its directories outlive it: earlier
	 * launches' go here, once older than the site's keep_job_files (at
	 * least a day) and no longer held by the command they became */
	(void)autosync_jobdir_prune(base, "autosync-launch-", getuid(),
				    keep > 86400 ? keep : 86400, 16, 4096);
	job_key(key, sizeof(key));
	snprintf(name, sizeof(name), "autosync-launch-%ld-%s-%d",
		 (long)getuid(), key, rank);
	return autosync_jobdir_create(base, name, getuid(), getgid(), out, len,
				      err);
}

/* --------------------------------------------------------- the pipeline */

static int plan_job(const struct opts *o, const autosync_siteconf_t *site,
		    const char *dir, int one_rank, autosync_job_t *j,
		    autosync_error_t *err)
{
	char cwd[PATH_MAX];

	autosync_job_set_log(j, job_log, (void *)o);
	/* not one rank: the node's launcher, whose workers share what it
	 * gets, so no rank's NIC or path choice is anyone's */
	return (!one_rank && autosync_job_set_tasks_per_node(j, 1, err) < 0) ||
		       autosync_job_set_site(j, site, err) < 0 ||
		       cli_simulator_module(j, err) < 0 ||
		       autosync_job_set_model(j, o->model, err) < 0 ||
		       (o->catalog &&
			autosync_job_set_catalog_dir(j, o->catalog, err) < 0) ||
		       autosync_job_set_plan_file(j, o->plan_file, err) < 0 ||
		       autosync_job_set_compression(j, o->compress, err) < 0 ||
		       (cli_launch_nodes(&o->in) &&
			autosync_job_set_nodes(j, cli_launch_nodes(&o->in),
					       err) < 0) ||
		       cli_input_to_job(&o->in, j, 0, err) < 0 ||
		       (getcwd(cwd, sizeof(cwd)) &&
			autosync_job_set_cwd(j, cwd, err) < 0) ||
		       autosync_job_set_nccl_plugins(
			   j, cli_plugin_dir(o->plugin_dir, site), o->plugins,
			   err) < 0 ||
		       autosync_job_set_dir(j, dir, err) < 0 ||
		       autosync_job_run(j, err) < 0 ||
		       autosync_job_write_files(j, err) < 0
		   ? -1
		   : 0;
}

/* Set this process's environment: every task's variables, this local
 * rank's and AUTOSYNC_LOCAL_RANK (rank -1: a per-node launcher, the
 * task's only). */
static void apply(const struct opts *o, const autosync_job_t *j, int rank)
{
	char num[24];

	for (size_t i = 0; i < autosync_job_nenv(j); i++)
		setenv(autosync_job_env(j, i)->name,
		       autosync_job_env(j, i)->value, 1);
	if (rank < 0)
		return;
	if (autosync_job_nranks(j) > 1 &&
	    (unsigned)rank >= autosync_job_nranks(j))
		say(o,
		    "local rank %d but %u GPU(s) here: using GPU %u's "
		    "settings",
		    rank, autosync_job_nranks(j),
		    (unsigned)rank % autosync_job_nranks(j));
	for (size_t i = 0; i < autosync_job_rank_nenv(j, (unsigned)rank); i++)
		setenv(autosync_job_rank_env(j, (unsigned)rank, i)->name,
		       autosync_job_rank_env(j, (unsigned)rank, i)->value, 1);
	for (size_t i = 0; i < autosync_job_nskipped(j); i++) {
		const char *n = autosync_job_skipped(j, i);
		if (!strncmp(n, "NCCL_", 5) && strstr(n, "_PLUGIN"))
			say(o, "kept the user's %s=%s", n, getenv(n));
	}
	snprintf(num, sizeof(num), "%d", rank);
	setenv("AUTOSYNC_LOCAL_RANK", num, 1);
}

static int prepare(const struct opts *o, autosync_error_t *err)
{
	autosync_siteconf_t *site = NULL;
	autosync_job_t *j = NULL;
	char dir[PATH_MAX];
	int rank = o->local_rank >= 0 ? o->local_rank : local_rank(), rv = -1;

	if (cli_load_site(o->config, &site, err) < 0 ||
	    make_dir(o, site, rank < 0 ? 0 : rank, dir, sizeof(dir), err) < 0 ||
	    !(j = autosync_job_create(err)))
		goto out;
	/* held across exec: a later launch never prunes it while the
	 * command this one becomes still runs */
	(void)autosync_jobdir_hold(dir, 1);
	if (plan_job(o, site, dir, rank >= 0, j, err) < 0) {
		char hint[2304];
		size_t l = strlen(err->text);

		cli_model_hint(o->model,
			       o->catalog ? o->catalog
			       : site	  ? autosync_siteconf_catalog_dir(site)
					  : NULL,
			       hint, sizeof(hint));
		/* the message keeps what fits of the hint */
		if (l + 1 < sizeof(err->text)) {
			size_t n = strlen(hint);
			if (n > sizeof(err->text) - l - 1)
				n = sizeof(err->text) - l - 1;
			memcpy(err->text + l, hint, n);
			err->text[l + n] = '\0';
		}
		goto out;
	}
	/* one GPU here: its rank is this process's, whatever the launcher */
	apply(o, j, rank < 0 && autosync_job_nranks(j) == 1 ? 0 : rank);
	if (o->explain)
		fputs(autosync_job_summary(j), o->explain);
	rv = 0;
out:
	autosync_job_destroy(j);
	autosync_siteconf_destroy(site);
	return rv;
}

static void run(char **cmd)
{
	execvp(cmd[0], cmd);
	fprintf(stderr, "autosync: launch: %s: %s\n", CLI_Q(cmd[0]),
		strerror(errno));
}

enum {
	OPT_CATALOG = CLI_OPT_OWN,
	OPT_LOCAL_RANK,
	OPT_PLUGIN_DIR,
	OPT_NO_TUNER,
	OPT_NO_PROFILER,
	OPT_COMPRESS,
};

int autosync_cmd_launch(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"plan", required_argument, NULL, 'p'},
	    {"model", required_argument, NULL, 'm'},
	    {"catalog", required_argument, NULL, OPT_CATALOG},
	    {"config", required_argument, NULL, 'c'},
	    CLI_TOPOLOGY_OPTIONS,
	    CLI_NETWORK_OPTIONS,
	    CLI_NODES_OPTIONS,
	    {"dir", required_argument, NULL, 'd'},
	    {"local-rank", required_argument, NULL, OPT_LOCAL_RANK},
	    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
	    {"no-tuner", no_argument, NULL, OPT_NO_TUNER},
	    {"no-profiler", no_argument, NULL, OPT_NO_PROFILER},
	    {"allow-compression", no_argument, NULL, OPT_COMPRESS},
	    {"strict", no_argument, NULL, 's'},
	    {"explain", no_argument, NULL, 'e'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct opts o = {.local_rank = -1,
			 .plugins = AUTOSYNC_JOB_TUNER | AUTOSYNC_JOB_PROFILER,
			 .log = stderr};
	autosync_error_t err = {.text = ""};
	int c, r, strict = 0;
	unsigned long v;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv,
				"+:p:m:c:" CLI_TOPOLOGY_SHORT CLI_NODES_SHORT
				"d:seqh",
				longopts, NULL)) != -1) {
		if ((r = cli_input_option("launch", WHICH, c, optarg, &o.in)) <
		    0)
			return 2;
		if (r)
			continue;
		switch (c) {
		case 'p':
			o.plan_file = optarg;
			break;
		case 'm':
			o.model = optarg;
			break;
		case OPT_CATALOG:
			o.catalog = optarg;
			break;
		case 'c':
			o.config = optarg;
			break;
		case 'd':
			o.dir = optarg;
			break;
		case OPT_LOCAL_RANK:
			if (cli_uint("launch", "--local-rank", optarg, 0,
				     1UL << 20, &v) < 0)
				return 2;
			o.local_rank = (int)v;
			break;
		case OPT_PLUGIN_DIR:
			o.plugin_dir = optarg;
			break;
		case OPT_NO_TUNER:
			o.plugins &= ~AUTOSYNC_JOB_TUNER;
			break;
		case OPT_NO_PROFILER:
			o.plugins &= ~AUTOSYNC_JOB_PROFILER;
			break;
		case OPT_COMPRESS:
			o.compress = 1;
			break;
		case 's':
			strict = 1;
			break;
		case 'e':
			o.explain = stderr;
			break;
		case 'q':
			o.log = NULL;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option("launch", c, argv, longopts);
		}
	}
	if (cli_input_check("launch", &o.in, 1, ""))
		return 2;
	/* the SPANK plugin passes the job's --autosync-compression on */
	if (!o.compress && getenv("AUTOSYNC_COMPRESSION") &&
	    asi_parse_bool(getenv("AUTOSYNC_COMPRESSION")) == 1)
		o.compress = 1;
	if (optind >= argc) {
		fprintf(stderr, "autosync launch: no command (autosync launch "
				"[options] -- COMMAND ARGS...)\n");
		return 2;
	}
	if (o.plan_file && o.model) {
		fprintf(stderr, "autosync launch: --plan and --model exclude "
				"each other\n");
		return 2;
	}
	if (!o.plan_file && !o.model) {
		/* nothing to plan: the command runs as given */
		say(&o, "launch: no --plan or --model; running the command "
			"unchanged");
		run(argv + optind);
		return 127;
	}
	if (prepare(&o, &err) < 0) {
		if (strict) {
			fprintf(stderr, "autosync: %s\n", CLI_Q(err.text));
			return 1;
		}
		say(&o, "%s; running without autosync", err.text);
	}
	run(argv + optind);
	return 127;
}
