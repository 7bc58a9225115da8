/* plan.c - 'autosync plan': plan gradient synchronization for a model on a
 * cluster, compare it with every baseline, write the plan and a picture. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/job.h"
#include "autosync/planner.h"
#include "autosync/siteconf.h"
#include "autosync/topology.h"
#include "cli.h"

/* The site config installed with autosync. */
static const char *site_config_path(void)
{
	return AUTOSYNC_SYSCONFDIR "/autosync/autosync.yaml";
}

static void usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: autosync plan --model NAME|FILE [options]\n"
	    "\n"
	    "Plan as the SPANK plugin does at job start (the same job pipeline), "
	    "for the\n"
	    "topology and network given here and the site config.\n"
	    "\n"
	    "  -c, --config FILE|none   site config (default: %s if it exists)\n"
	    "  -m, --model NAME|FILE    catalog model name or model file "
	    "(docs/model-format.md)\n"
	    "      --catalog DIR        catalog directory (before "
	    "$AUTOSYNC_CATALOG_DIR and\n"
	    "                           the installed catalog)\n"
	    "      --list               list the catalog models with their "
	    "parameter counts\n"
	    "      --network SPEC       cluster description, e.g.\n"
	    "                           "
	    "nodes=4,gpus=8,intra=nvlink,nics=4x200Gbit/s,lat=2us\n"
	    "      --topology FILE|live node topology (hwloc or NCCL XML, or "
	    "this machine) for\n"
	    "                           the node part (default: the site's "
	    "topology_xml, else\n"
	    "                           none: the network description alone)\n"
	    "      --gpus LIST          keep only these GPUs of the topology, as a job\n"
	    "                           step on them sees it (CUDA_VISIBLE_DEVICES syntax)\n"
	    "  -N, --nodes N            nodes (overrides the spec / topology)\n"
	    "  -g, --gpus-per-node G    GPUs per node (overrides the spec / "
	    "topology)\n"
	    "  -f, --framework F        generic | pytorch-ddp | horovod | "
	    "autodist (default:\n"
	    "                           the model file's, else the site's "
	    "default_framework)\n"
	    "      --calibration FILE   cost-model constants (YAML, "
	    "docs/planner.md)\n"
	    "      --allow-compression  let the planner choose fp16/bf16 "
	    "gradients\n"
	    "      --nccl-calibrate     mark the plan so that the NCCL tuner plugin also\n"
	    "                           rescales NCCL's latency constants to its links\n"
	    "      --budget N           search budget in simulator evaluations "
	    "(20000)\n"
	    "      --batch-size N       per-GPU batch size (default: the model "
	    "file's)\n"
	    "      --compute-ms MS      a measured step's forward + backward "
	    "compute; the\n"
	    "                           layers' times are scaled to it (for "
	    "model files\n"
	    "                           without FLOPs)\n"
	    "  -b, --baseline NAME      emit that baseline instead of "
	    "searching: ddp-default,\n"
	    "                           horovod-default, ps-loadbalanced, "
	    "parallax,\n"
	    "                           allreduce-per-tensor\n"
	    "  -e, --explain            per-bucket breakdown and the inputs "
	    "the model used\n"
	    "  -t, --timeline FILE.svg  picture of the simulated step\n"
	    "  -o, --output FILE        write the YAML plan there ('-' = "
	    "stdout, the default;\n"
	    "                           the report is then written as YAML "
	    "comments)\n"
	    "      --env                print the variables every task gets "
	    "('every task:\n"
	    "                           NAME=VALUE') and each local rank's "
	    "('local rank R: ...')\n"
	    "  -d, --dir DIR            the job directory the variables name "
	    "(default <jobdir>)\n"
	    "  -h, --help\n", site_config_path());
}

/* --config FILE|none, or the installed site config when it exists. */
static int load_site(const char *config, autosync_siteconf_t **site,
		     autosync_error_t *err)
{
	*site = NULL;
	if (config && !strcmp(config, "none"))
		return 0;
	if (!config && access(site_config_path(), F_OK) != 0)
		return 0;
	*site = autosync_siteconf_load(config ? config : site_config_path(),
				       err);
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
	char tmp[PATH_MAX];
	FILE *fp;
	int rv;
	struct stat st;

	/* Only a regular file is replaced through rename(2): a device such
	 * as /dev/null or a FIFO is written in place (renaming over it as
	 * root would replace /dev/null with a regular file). */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(fp = fopen(path, "w")))
			return autosync_errprintf(err, "%s: %s", path,
						  strerror(errno));
		rv = svg ? autosync_plan_write_svg(plan, fp, err)
			 : autosync_plan_write(plan, fp, err);
		if (fclose(fp) != 0 && rv == 0)
			rv = autosync_errprintf(err, "%s: %s", path,
						strerror(errno));
		return rv;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return autosync_errprintf(err, "%s: name too long", path);
	}
	if (!(fp = fopen(tmp, "w")))
		return autosync_errprintf(err, "%s: %s", tmp, strerror(errno));
	rv = svg ? autosync_plan_write_svg(plan, fp, err)
		 : autosync_plan_write(plan, fp, err);
	if (fclose(fp) != 0 && rv == 0)
		rv = autosync_errprintf(err, "%s: %s", tmp, strerror(errno));
	if (rv == 0 && rename(tmp, path) < 0)
		rv = autosync_errprintf(err, "%s: %s", path, strerror(errno));
	if (rv < 0)
		unlink(tmp);
	return rv;
}

static int parse_uint(const char *s, const char *what, unsigned long max,
		      unsigned long *out)
{
	char *end;
	unsigned long v;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > max || *s == '-') {
		fprintf(
		    stderr,
		    "autosync plan: %s: '%s' is not an integer in [1, %lu]\n",
		    what, s, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* a measured step compute in milliseconds: (0, 3600000] */
static int parse_ms(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0 && v <= 3600e3)) {
		fprintf(stderr, "autosync plan: --compute-ms: '%s' is not a "
			"time in milliseconds in (0, 3600000]\n", s);
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
		pfx, s.model, (unsigned long long)autosync_model_params(m),
		autosync_model_ntensors(m), s.batch, c->nodes, c->gpus_per_node,
		s.framework);
	fprintf(out, "%sstrategy: %s\n%sreason: %s\n", pfx, s.strategy, pfx,
		s.reason);
	fprintf(out,
		"%spredicted step %.3f ms (forward %.3f, backward %.3f, "
		"optimizer %.3f, "
		"exposed communication %.3f); %zu buckets; bound %.3f ms "
		"(efficiency %.2f); plan hash %s\n",
		pfx, s.step_time * 1e3, s.fwd_time * 1e3, s.bwd_time * 1e3,
		s.opt_time * 1e3, s.exposed_comm * 1e3,
		autosync_plan_nbuckets(plan),
		s.bound * 1e3, s.step_time > 0 ? s.bound / s.step_time : 0,
		autosync_plan_hash(plan));
	fprintf(out, "%s\n%s%-22s %12s %10s  %s\n", pfx, pfx, "plan",
		"step (ms)", "vs plan", "applicable");
	fprintf(out, "%s%-22s %12.3f %10s  %s\n", pfx, "this plan",
		s.step_time * 1e3, "1.000", "yes");
	for (size_t i = 0; i < autosync_plan_nbaselines(plan); i++) {
		const autosync_plan_baseline_t *b = autosync_plan_baseline(plan, i);
		fprintf(out, "%s%-22s %12.3f %9.3fx  %s\n", pfx, b->name,
			b->step_time * 1e3,
			s.step_time > 0 ? b->step_time / s.step_time : 0,
			b->applicable ? "yes" : "no");
		if (!strcmp(b->name, def))
			def_t = b->step_time;
	}
	if (def_t > 0 && s.step_time > 0)
		fprintf(out, "%sspeed-up over the framework's default (%s): "
			"%.3fx\n", pfx, def, def_t / s.step_time);
	for (size_t i = 0; i < autosync_plan_nenv(plan); i++)
		fprintf(out, "%s%s %s=%s\n", pfx, i ? "   " : "env:",
			autosync_plan_env(plan, i)->name,
			autosync_plan_env(plan, i)->value);
	if (autosync_plan_nnccl_rules(plan))
		fprintf(out, "%snccl: %zu rule(s) for the NCCL tuner plugin "
			"(algorithm, protocol, channels per collective and "
			"size)%s\n", pfx, autosync_plan_nnccl_rules(plan),
			explain ? "" : "; --explain lists them");
	if (!explain)
		return;
	if (autosync_plan_nnccl_rules(plan)) {
		fprintf(out, "%s\n%s%-14s %14s %14s  %-6s %-7s %s\n", pfx, pfx,
			"collective", "from bytes", "to bytes", "algo",
			"proto", "channels");
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
	const char *model, *catalog, *network, *topo, *keep, *fwname, *calib;
	const char *baseline, *dir;
	unsigned long nodes, gpus, budget, batch;
	double compute_ms;
	int compress, ncal;
};

static int setup_job(autosync_job_t *j, const struct plan_opts *o,
		     const autosync_siteconf_t *site, autosync_error_t *err)
{
	int fw = -1, b = -1;
	char cwd[PATH_MAX];

	if (o->fwname && (fw = autosync_framework_from_name(o->fwname)) < 0) {
		errno = EINVAL;
		return autosync_errprintf(err, "--framework: unknown framework "
					  "'%s'", o->fwname);
	}
	if (o->baseline &&
	    (b = autosync_baseline_from_name(o->baseline)) < 0) {
		errno = EINVAL;
		return autosync_errprintf(err, "--baseline: unknown baseline "
					  "'%s'", o->baseline);
	}
	if (autosync_job_set_site(j, site, err) < 0 ||
	    autosync_job_set_model(j, o->model, err) < 0 ||
	    (o->catalog && autosync_job_set_catalog_dir(j, o->catalog, err) < 0) ||
	    (getcwd(cwd, sizeof(cwd)) && autosync_job_set_cwd(j, cwd, err) < 0) ||
	    (o->network && autosync_job_set_network(j, o->network, err) < 0) ||
	    (o->nodes && autosync_job_set_nodes(j, (unsigned) o->nodes, err) < 0) ||
	    autosync_job_set_gpus_per_node(j, (unsigned) o->gpus, err) < 0 ||
	    autosync_job_set_framework(j, fw, err) < 0 ||
	    (o->calib && autosync_job_set_calibration(j, o->calib, err) < 0) ||
	    autosync_job_set_compression(j, o->compress, err) < 0 ||
	    (o->ncal && autosync_job_set_nccl_calibrate(j, 1, err) < 0) ||
	    autosync_job_set_budget(j, o->budget, err) < 0 ||
	    autosync_job_set_batch(j, (unsigned) o->batch, err) < 0 ||
	    autosync_job_set_step_compute(j, o->compute_ms / 1e3, err) < 0 ||
	    autosync_job_set_baseline(j, b, err) < 0 ||
	    (o->dir && autosync_job_set_dir(j, o->dir, err) < 0))
		return -1;
	/* a topology file describes some machine, not this process's
	 * allocation: every GPU of it unless --gpus says otherwise */
	if (o->topo) {
		if (autosync_job_set_topology(j, o->topo, err) < 0 ||
		    (!o->keep && strcmp(o->topo, "live") &&
		     autosync_job_set_gpus(j, "all", err) < 0))
			return -1;
	} else if (!(site && autosync_siteconf_topology_xml(site)[0]) &&
		   autosync_job_set_topology(j, "none", err) < 0) {
		return -1;
	}
	return o->keep ? autosync_job_set_gpus(j, o->keep, err) : 0;
}

int autosync_cmd_plan(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"config", required_argument, NULL, 'c'},
	    {"catalog", required_argument, NULL, 'C'},
	    {"list", no_argument, NULL, 'L'},
	    {"network", required_argument, NULL, 'n'},
	    {"topology", required_argument, NULL, 'T'},
	    {"gpus", required_argument, NULL, 'G'},
	    {"nodes", required_argument, NULL, 'N'},
	    {"gpus-per-node", required_argument, NULL, 'g'},
	    {"framework", required_argument, NULL, 'f'},
	    {"calibration", required_argument, NULL, 'k'},
	    {"allow-compression", no_argument, NULL, 'z'},
	    {"nccl-calibrate", no_argument, NULL, 'K'},
	    {"budget", required_argument, NULL, 'B'},
	    {"batch-size", required_argument, NULL, 'S'},
	    {"compute-ms", required_argument, NULL, 'M'},
	    {"baseline", required_argument, NULL, 'b'},
	    {"explain", no_argument, NULL, 'e'},
	    {"timeline", required_argument, NULL, 't'},
	    {"output", required_argument, NULL, 'o'},
	    {"env", no_argument, NULL, 'E'},
	    {"dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct plan_opts o = {0};
	const char *config = NULL, *svg = NULL, *output = "-";
	int explain = 0, env = 0, list = 0, opt, rc = 1;
	autosync_error_t err = {""};
	autosync_siteconf_t *site = NULL;
	autosync_job_t *j = NULL;
	const autosync_plan_t *plan;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "m:c:N:g:f:b:et:o:d:h", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'm':
			o.model = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'C':
			o.catalog = optarg;
			break;
		case 'L':
			list = 1;
			break;
		case 'n':
			o.network = optarg;
			break;
		case 'T':
			o.topo = optarg;
			break;
		case 'G':
			o.keep = optarg;
			break;
		case 'N':
			if (parse_uint(optarg, "--nodes", 65536, &o.nodes) < 0)
				return 2;
			break;
		case 'g':
			if (parse_uint(optarg, "--gpus-per-node", 1024,
				       &o.gpus) < 0)
				return 2;
			break;
		case 'f':
			o.fwname = optarg;
			break;
		case 'k':
			o.calib = optarg;
			break;
		case 'z':
			o.compress = 1;
			break;
		case 'K':
			o.ncal = 1;
			break;
		case 'B':
			if (parse_uint(optarg, "--budget", 100000000,
				       &o.budget) < 0)
				return 2;
			break;
		case 'S':
			if (parse_uint(optarg, "--batch-size", 1u << 24,
				       &o.batch) < 0)
				return 2;
			break;
		case 'M':
			if (parse_ms(optarg, &o.compute_ms) < 0)
				return 2;
			break;
		case 'b':
			o.baseline = optarg;
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
		case 'E':
			env = 1;
			break;
		case 'd':
			o.dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "autosync plan: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (list) {
		char **names = NULL;
		size_t n = 0;
		if (autosync_catalog_list(o.catalog, &names, &n, &err) < 0) {
			fprintf(stderr, "autosync plan: %s\n", err.text);
			return 1;
		}
		for (size_t i = 0; i < n; i++) {
			autosync_model_t *mm =
			    autosync_model_open(names[i], o.catalog, &err);
			if (mm)
				printf("%-20s %15llu parameters %7zu tensors\n",
				       names[i],
				       (unsigned long long)
					   autosync_model_params(mm),
				       autosync_model_ntensors(mm));
			else
				printf("%-20s error: %s\n", names[i], err.text);
			autosync_model_destroy(mm);
		}
		autosync_catalog_free(names);
		return 0;
	}
	if (!o.model) {
		fprintf(stderr, "autosync plan: --model is required\n");
		usage(stderr);
		return 2;
	}
	if (o.baseline && autosync_baseline_from_name(o.baseline) < 0) {
		fprintf(stderr,
			"autosync plan: --baseline: unknown baseline '%s'\n",
			o.baseline);
		return 2;
	}
	if (o.fwname && autosync_framework_from_name(o.fwname) < 0) {
		fprintf(stderr,
			"autosync plan: --framework: unknown framework '%s'\n",
			o.fwname);
		return 2;
	}
	if (o.network) {
		autosync_cluster_t c;
		autosync_cluster_default(&c);
		if (autosync_cluster_update(&c, o.network, &err) < 0) {
			fprintf(stderr, "autosync plan: --network: %s\n",
				err.text);
			return 2;
		}
	}
	if (load_site(config, &site, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", err.text);
		return 1;
	}
	if (o.keep && !o.topo &&
	    !(site && autosync_siteconf_topology_xml(site)[0])) {
		fprintf(stderr, "autosync plan: --gpus needs --topology (or "
			"the site config's topology_xml)\n");
		rc = 2;
		goto out;
	}
	if (!(j = autosync_job_create(&err)) ||
	    setup_job(j, &o, site, &err) < 0 || autosync_job_run(j, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", err.text);
		goto out;
	}
	plan = autosync_job_plan(j);
	if (!strcmp(output, "-")) {
		report(stdout, "# ", plan, autosync_job_model(j), explain);
		if (env)
			print_env(stdout, "# ", j);
		if (autosync_plan_write(plan, stdout, &err) < 0) {
			fprintf(stderr, "autosync plan: %s\n", err.text);
			goto out;
		}
	} else {
		report(stdout, "", plan, autosync_job_model(j), explain);
		if (env)
			print_env(stdout, "", j);
		if (write_atomic(output, plan, 0, &err) < 0) {
			fprintf(stderr, "autosync plan: %s\n", err.text);
			goto out;
		}
	}
	if (svg && write_atomic(svg, plan, 1, &err) < 0) {
		fprintf(stderr, "autosync plan: %s\n", err.text);
		goto out;
	}
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	autosync_job_destroy(j);
	autosync_siteconf_destroy(site);
	return rc;
}
