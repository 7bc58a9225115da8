/* plan.c - 'autosync plan': plan gradient synchronization for a model on a
 * cluster, compare it with every baseline, write the plan and a picture. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/job.h"
#include "autosync/planner.h"
#include "autosync/siteconf.h"
#include "autosync/topology.h"
#include "cli.h"

#define WHICH (CLI_IN_TOPOLOGY | CLI_IN_NETWORK | CLI_IN_NODES | CLI_IN_GPN)

static void usage(FILE *fp)
{
	char text[512];

	fprintf(fp,
		"usage: autosync plan --model NAME|FILE [options]\n"
		"       autosync plan --list [--catalog DIR]\n"
		"\n"
		"Plan as the SPANK plugin does at job start (the same job "
		"pipeline), for the\ntopology and network given here and the "
		"site config.\n\n");
	snprintf(text, sizeof(text),
		 "site config (default: %s if it\n"
		 "exists)",
		 cli_site_config_path());
	cli_help(fp, "-c, --config FILE|none", text);
	cli_help(fp, "-m, --model NAME|FILE",
		 "catalog model name or model "
		 "file (docs/model-format.md)");
	cli_help(fp, "    --catalog DIR",
		 "catalog directory (before "
		 "$AUTOSYNC_CATALOG_DIR and the installed catalog)");
	cli_help(fp, "    --list",
		 "list the catalog models with their "
		 "parameter counts");
	cli_input_usage(fp, WHICH,
			"the site's topology_xml, else\nnone: the "
			"network description alone",
			"all for a file, the job's for\nlive",
			"the --network description's, else 4");
	cli_help(fp, "-f, --framework F",
		 "generic, pytorch-ddp, horovod or "
		 "autodist (default: the model file's, else the site's "
		 "default_framework)");
	cli_help(fp, "    --calibration FILE",
		 "cost-model constants (YAML, "
		 "docs/planner.md)");
	cli_help(fp, "    --simulator FILE|none",
		 "a learned simulator (autosync train) that re-ranks the "
		 "search's best\ncandidates (default: the site's simulator)");
	cli_help(fp, "    --allow-compression",
		 "let the planner choose "
		 "fp16/bf16 gradients");
	cli_help(fp, "    --nccl-calibrate",
		 "mark the plan so that the NCCL "
		 "tuner plugin also rescales NCCL's latency constants to its "
		 "links");
	cli_help(fp, "    --budget N",
		 "search budget in simulator "
		 "evaluations (20000)");
	cli_help(fp, "    --batch-size N",
		 "per-GPU batch size (default: the "
		 "model file's)");
	cli_help(fp, "    --compute-ms MS",
		 "a measured step's forward + "
		 "backward compute; the\nlayers' times are scaled to it (for "
		 "model files\nwithout FLOPs)");
	cli_help(fp, "-b, --baseline NAME",
		 "emit that baseline instead of "
		 "searching: ddp-default, horovod-default, ps-loadbalanced, "
		 "parallax,\nallreduce-per-tensor");
	cli_help(fp, "-e, --explain",
		 "per-bucket breakdown and the inputs "
		 "the model used");
	cli_help(fp, "-t, --timeline FILE.svg",
		 "picture of the simulated "
		 "step");
	cli_help(fp, "-o, --output FILE",
		 "write the YAML plan there ('-' = "
		 "stdout, the default;\nthe report is then written as YAML "
		 "comments)");
	cli_help(fp, "    --env",
		 "print the variables every task gets "
		 "('every task: NAME=VALUE') and each local rank's "
		 "('local rank R: ...')");
	cli_help(fp, "-d, --dir DIR",
		 "the job directory the variables name "
		 "(default <jobdir>)");
	cli_help(fp, "-h, --help", "this help");
}

/* --config FILE|none, or the installed site config when it exists. */
static int load_site(const char *config, autosync_siteconf_t **site,
		     autosync_error_t *err)
{
	*site = NULL;
	if (config && !strcmp(config, "none"))
		return 0;
	if (!config && access(cli_site_config_path(), F_OK) != 0)
		return 0;
	*site = autosync_siteconf_load(config ? config : cli_site_config_path(),
				       err);
	if (*site && autosync_siteconf_note(*site))
		fprintf(stderr, "autosync plan: %s\n",
			autosync_siteconf_note(*site));
	return *site ? 0 : -1;
}

/* NAME=VALUE per variable: every task's, then each local rank's. */
static void print_env(FILE *out, const char *pfx, const autosync_job_t *j)
{
	for (size_t i = 0; i < autosync_job_nenv(j); i++)
		fprintf(out, "%severy task: %s=%s\n", pfx,
			autosync_job_env(j, i)->name,
			autosync_job_env(j, i)->value);
	for (unsigned r = 0; r < autosync_job_nranks(j); r++)
		for (size_t i = 0; i < autosync_job_rank_nenv(j, r); i++)
			fprintf(out, "%slocal rank %u: %s=%s\n", pfx, r,
				autosync_job_rank_env(j, r, i)->name,
				autosync_job_rank_env(j, r, i)->value);
	for (size_t i = 0; i < autosync_job_nskipped(j); i++)
		fprintf(out, "%skept the user's %s\n", pfx,
			autosync_job_skipped(j, i));
}

static int write_atomic(const char *path, const autosync_plan_t *plan, int svg,
			autosync_error_t *err)
{
	struct cli_outfile o;
	int rv;

	if (cli_outfile_open(&o, path) < 0)
		return autosync_errprintf(err, "%s: %s", path, strerror(errno));
	rv = svg ? autosync_plan_write_svg(plan, o.fp, err)
		 : autosync_plan_write(plan, o.fp, err);
	if (cli_outfile_close(&o, rv == 0) < 0 && rv == 0)
		rv = autosync_errprintf(err, "%s: %s", path, strerror(errno));
	return rv;
}

/* a measured step compute in milliseconds: (0, 3600000] */
static int parse_ms(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0 && v <= 3600e3)) {
		fprintf(stderr,
			"autosync plan: --compute-ms: '%s' is not a "
			"time in milliseconds in (0, 3600000]\n",
			s);
		return -1;
	}
	*out = v;
	return 0;
}

static void report(FILE *out, const char *pfx, const autosync_plan_t *plan,
		   const autosync_model_t *m, int explain)
{
	autosync_plan_summary_t s;
	const autosync_cluster_t *c;
	const char *def;
	double def_t = -1;

	autosync_plan_summary(plan, &s);
	/* what the job would run without autosync */
	def = autosync_baseline_name(autosync_baseline_default(
	    autosync_framework_from_name(s.framework)));
	if (!def)
		def = "";
	c = &s.cluster;
	fprintf(out,
		"%sautosync plan for %s (%llu parameters, %zu tensors, batch "
		"%u) on "
		"%u node(s) x %u GPU(s), framework %s\n",
		pfx, CLI_Q(s.model),
		(unsigned long long)autosync_model_params(m),
		autosync_model_ntensors(m), s.batch, c->nodes, c->gpus_per_node,
		s.framework);
	fprintf(out, "%sstrategy: %s\n%sreason: %s\n", pfx, s.strategy, pfx,
		CLI_Q(s.reason));
	fprintf(out,
		"%spredicted step %.3f ms (forward %.3f, backward %.3f, "
		"optimizer %.3f, "
		"exposed communication %.3f); %zu buckets; bound %.3f ms "
		"(efficiency %.2f); plan hash %s\n",
		pfx, s.step_time * 1e3, s.fwd_time * 1e3, s.bwd_time * 1e3,
		s.opt_time * 1e3, s.exposed_comm * 1e3,
		autosync_plan_nbuckets(plan), s.bound * 1e3,
		s.step_time > 0 ? s.bound / s.step_time : 0,
		autosync_plan_hash(plan));
	/* the breakdown and the bound are the analytic model's */
	if (s.simulator_hash && s.simulator_hash[0])
		fprintf(out,
			"%slearned simulator %s: the analytic model predicts "
			"%.3f ms (efficiency %.2f against its bound)\n",
			pfx, s.simulator_hash, s.analytic_step_time * 1e3,
			s.analytic_step_time > 0
			    ? s.bound / s.analytic_step_time
			    : 0);
	fprintf(out, "%s\n%s%-22s %12s %10s  %s\n", pfx, pfx, "plan",
		"step (ms)", "vs plan", "applicable");
	fprintf(out, "%s%-22s %12.3f %10s  %s\n", pfx, "this plan",
		s.step_time * 1e3, "1.000", "yes");
	for (size_t i = 0; i < autosync_plan_nbaselines(plan); i++) {
		const autosync_plan_baseline_t *b =
		    autosync_plan_baseline(plan, i);
		fprintf(out, "%s%-22s %12.3f %9.3fx  %s\n", pfx, b->name,
			b->step_time * 1e3,
			s.step_time > 0 ? b->step_time / s.step_time : 0,
			b->applicable ? "yes" : "no");
		if (!strcmp(b->name, def))
			def_t = b->step_time;
	}
	if (def_t > 0 && s.step_time > 0)
		fprintf(out,
			"%sspeed-up over the framework's default (%s): "
			"%.3fx\n",
			pfx, def, def_t / s.step_time);
	for (size_t i = 0; i < autosync_plan_nenv(plan); i++)
		fprintf(out, "%s%s %s=%s\n", pfx,
			i ? "   " : "env:", autosync_plan_env(plan, i)->name,
			autosync_plan_env(plan, i)->value);
	if (autosync_plan_nnccl_rules(plan))
		fprintf(out,
			"%snccl: %zu rule(s) for the NCCL tuner plugin "
			"(algorithm, protocol, channels per collective and "
			"size)%s\n",
			pfx, autosync_plan_nnccl_rules(plan),
			explain ? "" : "; --explain lists them");
	if (!explain)
		return;
	if (autosync_plan_nnccl_rules(plan)) {
		fprintf(out, "%s\n%s%-14s %14s %14s  %-6s %-7s %s\n", pfx, pfx,
			"collective", "from bytes", "to bytes", "algo", "proto",
			"channels");
		for (size_t i = 0; i < autosync_plan_nnccl_rules(plan); i++) {
			const autosync_nccl_rule_t *r =
			    autosync_plan_nccl_rule(plan, i);
			char to[32] = "-", chn[16] = "NCCL's";
			if (r->max_bytes != UINT64_MAX)
				snprintf(to, sizeof(to), "%llu",
					 (unsigned long long)r->max_bytes);
			if (r->channels)
				snprintf(chn, sizeof(chn), "%u", r->channels);
			fprintf(out, "%s%-14s %14llu %14s  %-6s %-7s %s\n", pfx,
				autosync_nccl_func_name(r->func),
				(unsigned long long)r->min_bytes, to,
				autosync_nccl_algo_name(r->algo),
				autosync_nccl_proto_name(r->proto), chn);
		}
	}
	fprintf(out,
		"%s\n%sinputs: intra %s %.4g GB/s %.3g us; %u NIC(s) x %.4g "
		"GB/s, %.3g us "
		"between nodes; compute from %s\n",
		pfx, pfx, autosync_link_class_name(c->intra_class),
		c->intra_bw / 1e9, c->intra_lat * 1e6, c->nics_per_node,
		c->nic_bw / 1e9, c->inter_lat * 1e6,
		autosync_model_compute_source(m));
	fprintf(out, "%s%4s %-9s %-12s %-5s %8s %12s %10s %10s %10s %10s %9s\n",
		pfx, "id", "kind", "algorithm", "comp", "tensors", "bytes",
		"ready ms", "start ms", "end ms", "comm ms", "wait ms");
	for (size_t i = 0; i < autosync_plan_nbuckets(plan); i++) {
		const autosync_bucket_t *b = autosync_plan_bucket(plan, i);
		char kind[32];
		if (b->kind == AUTOSYNC_SYNC_PS)
			snprintf(kind, sizeof(kind), "ps/%u%s", b->servers,
				 b->local_agg ? "+agg" : "");
		else
			snprintf(kind, sizeof(kind), "allreduce");
		fprintf(out,
			"%s%4u %-9s %-12s %-5s %8zu %12.0f %10.3f %10.3f "
			"%10.3f %10.3f %9.3f"
			"  %s%s\n",
			pfx, b->id, kind,
			b->kind == AUTOSYNC_SYNC_PS
			    ? "-"
			    : autosync_algo_name(b->algo),
			autosync_compress_name(b->compress), b->ntensors,
			b->bytes, b->ready * 1e3, b->start * 1e3, b->end * 1e3,
			b->comm * 1e3, (b->start - b->ready) * 1e3,
			b->ntensors ? b->tensors[0] : "",
			b->ntensors > 1 ? " ..." : "");
	}
}

/* The job pipeline's inputs from the command line. */
struct plan_opts {
	struct cli_input in;
	const char *model, *catalog, *calib, *dir, *simulator;
	int fw, baseline; /* -1: not given */
	unsigned long budget, batch;
	double compute_ms;
	int compress, ncal;
};

/* The pipeline's warnings (what it left out and why) reach the user; its
 * info notes are the plugin's log lines, not news here. */
static void plan_log(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= AUTOSYNC_LOG_WARNING)
		fprintf(stderr, "autosync plan: %s\n", CLI_Q(msg));
}

static int setup_job(autosync_job_t *j, const struct plan_opts *o,
		     const autosync_siteconf_t *site, autosync_error_t *err)
{
	char cwd[PATH_MAX];

	autosync_job_set_log(j, plan_log, NULL);
	if (autosync_job_set_site(j, site, err) < 0 ||
	    autosync_job_set_model(j, o->model, err) < 0 ||
	    (o->catalog &&
	     autosync_job_set_catalog_dir(j, o->catalog, err) < 0) ||
	    (getcwd(cwd, sizeof(cwd)) &&
	     autosync_job_set_cwd(j, cwd, err) < 0) ||
	    autosync_job_set_framework(j, o->fw, err) < 0 ||
	    (o->calib && autosync_job_set_calibration(j, o->calib, err) < 0) ||
	    (o->simulator &&
	     autosync_job_set_simulator(j, o->simulator, err) < 0) ||
	    cli_simulator_module(j, err) < 0 ||
	    autosync_job_set_compression(j, o->compress, err) < 0 ||
	    (o->ncal && autosync_job_set_nccl_calibrate(j, 1, err) < 0) ||
	    autosync_job_set_budget(j, o->budget, err) < 0 ||
	    autosync_job_set_batch(j, (unsigned)o->batch, err) < 0 ||
	    autosync_job_set_step_compute(j, o->compute_ms / 1e3, err) < 0 ||
	    autosync_job_set_baseline(j, o->baseline, err) < 0 ||
	    (o->dir && autosync_job_set_dir(j, o->dir, err) < 0))
		return -1;
	/* without --topology: the site's topology_xml, else none (the
	 * network description alone); a topology file describes some
	 * machine, not this process's allocation: all its GPUs unless --gpus
	 * says otherwise */
	if (!o->in.topology &&
	    !(site && autosync_siteconf_topology_xml(site)[0]) &&
	    autosync_job_set_topology(j, "none", err) < 0)
		return -1;
	return cli_input_to_job(&o->in, j, 1, err);
}

static int list_models(const char *catalog)
{
	autosync_error_t err = {""};
	char **names = NULL;
	size_t n = 0;

	if (autosync_catalog_list(catalog, &names, &n, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", CLI_Q(err.text));
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		autosync_model_t *mm =
		    autosync_model_open(names[i], catalog, &err);
		if (mm)
			printf("%-20s %15llu parameters %7zu tensors\n",
			       names[i],
			       (unsigned long long)autosync_model_params(mm),
			       autosync_model_ntensors(mm));
		else
			printf("%-20s error: %s\n", names[i], err.text);
		autosync_model_destroy(mm);
	}
	autosync_catalog_free(names);
	return 0;
}

enum {
	OPT_CATALOG = CLI_OPT_OWN,
	OPT_LIST,
	OPT_CALIB,
	OPT_SIMULATOR,
	OPT_COMPRESS,
	OPT_NCAL,
	OPT_BUDGET,
	OPT_BATCH,
	OPT_COMPUTE,
	OPT_ENV,
};

int autosync_cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"model", required_argument, NULL, 'm'},
	    {"catalog", required_argument, NULL, OPT_CATALOG},
	    {"list", no_argument, NULL, OPT_LIST},
	    CLI_TOPOLOGY_OPTIONS,
	    CLI_NETWORK_OPTIONS,
	    CLI_NODES_OPTIONS,
	    CLI_GPN_OPTIONS,
	    {"framework", required_argument, NULL, 'f'},
	    {"calibration", required_argument, NULL, OPT_CALIB},
	    {"simulator", required_argument, NULL, OPT_SIMULATOR},
	    {"allow-compression", no_argument, NULL, OPT_COMPRESS},
	    {"nccl-calibrate", no_argument, NULL, OPT_NCAL},
	    {"budget", required_argument, NULL, OPT_BUDGET},
	    {"batch-size", required_argument, NULL, OPT_BATCH},
	    {"compute-ms", required_argument, NULL, OPT_COMPUTE},
	    {"baseline", required_argument, NULL, 'b'},
	    {"explain", no_argument, NULL, 'e'},
	    {"timeline", required_argument, NULL, 't'},
	    {"output", required_argument, NULL, 'o'},
	    {"env", no_argument, NULL, OPT_ENV},
	    {"dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct plan_opts o = {.fw = -1, .baseline = -1};
	const char *config = NULL, *svg = NULL, *output = "-";
	int explain = 0, env = 0, list = 0, opt, r, rc = 1;
	autosync_error_t err = {""};
	autosync_siteconf_t *site = NULL;
	autosync_job_t *j = NULL;
	const autosync_plan_t *plan;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv,
				  ":c:m:" CLI_TOPOLOGY_SHORT CLI_NODES_SHORT
				  "f:b:et:o:d:h",
				  opts, NULL)) != -1) {
		if ((r = cli_input_option("plan", WHICH, opt, optarg, &o.in)) <
		    0)
			return 2;
		if (r)
			continue;
		switch (opt) {
		case 'm':
			o.model = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case OPT_CATALOG:
			o.catalog = optarg;
			break;
		case OPT_LIST:
			list = 1;
			break;
		case 'f':
			if ((o.fw = cli_framework("plan", "--framework",
						  optarg)) < 0)
				return 2;
			break;
		case OPT_CALIB:
			o.calib = optarg;
			break;
		case OPT_SIMULATOR:
			o.simulator = optarg;
			break;
		case OPT_COMPRESS:
			o.compress = 1;
			break;
		case OPT_NCAL:
			o.ncal = 1;
			break;
		case OPT_BUDGET:
			if (cli_uint("plan", "--budget", optarg, 1, 100000000,
				     &o.budget) < 0)
				return 2;
			break;
		case OPT_BATCH:
			if (cli_uint("plan", "--batch-size", optarg, 1,
				     1u << 24, &o.batch) < 0)
				return 2;
			break;
		case OPT_COMPUTE:
			if (parse_ms(optarg, &o.compute_ms) < 0)
				return 2;
			break;
		case 'b':
			if ((o.baseline = cli_baseline("plan", "--baseline",
						       optarg)) < 0)
				return 2;
			break;
		case 'e':
			explain = 1;
			break;
		case 't':
			svg = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_ENV:
			env = 1;
			break;
		case 'd':
			o.dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option("plan", opt, argv, opts);
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"autosync plan: unexpected argument '%s'\n"
			"Try 'autosync help plan'.\n",
			argv[optind]);
		return 2;
	}
	if (list)
		return list_models(o.catalog);
	if (!o.model) {
		fprintf(stderr, "autosync plan: --model is required\n"
				"Try 'autosync help plan'.\n");
		return 2;
	}
	if (load_site(config, &site, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", CLI_Q(err.text));
		return 1;
	}
	if ((rc = cli_input_check(
		 "plan", &o.in, site && autosync_siteconf_topology_xml(site)[0],
		 " (or the site config's topology_xml)")) ||
	    (rc = cli_check_model("plan", o.model,
				  o.catalog ? o.catalog
				  : site ? autosync_siteconf_catalog_dir(site)
					 : NULL)))
		goto out;
	rc = 1;
	if (!(j = autosync_job_create(&err)) ||
	    setup_job(j, &o, site, &err) < 0 || autosync_job_run(j, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", CLI_Q(err.text));
		goto out;
	}
	plan = autosync_job_plan(j);
	if (autosync_model_format_version(autosync_job_model(j)) &&
	    autosync_model_format_version(autosync_job_model(j)) <
		AUTOSYNC_MODEL_VERSION)
		fprintf(stderr,
			"autosync plan: the model file is format %u, read as "
			"format %d\n",
			autosync_model_format_version(autosync_job_model(j)),
			AUTOSYNC_MODEL_VERSION);
	if (!strcmp(output, "-")) {
		report(stdout, "# ", plan, autosync_job_model(j), explain);
		if (env)
			print_env(stdout, "# ", j);
		if (autosync_plan_write(plan, stdout, &err) < 0) {
			fprintf(stderr, "autosync plan: %s\n", CLI_Q(err.text));
			goto out;
		}
	} else {
		report(stdout, "", plan, autosync_job_model(j), explain);
		if (env)
			print_env(stdout, "", j);
		if (write_atomic(output, plan, 0, &err) < 0) {
			fprintf(stderr, "autosync plan: %s\n", CLI_Q(err.text));
			goto out;
		}
	}
	if (svg && write_atomic(svg, plan, 1, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", CLI_Q(err.text));
		goto out;
	}
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	autosync_job_destroy(j);
	autosync_siteconf_destroy(site);
	return rc;
}
