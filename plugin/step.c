/* step.c - see step.h */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autosync/planner.h"
#include "jobfs.h"
#include "step.h"

#define PLAN_NAME "plan.yaml"
#define TOPO_NAME "nccl-topo.xml"
#define REPORT_NAME "report"
#define MAX_PLAN_BYTES (16u << 20)

static int fail(struct as_step_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct as_step_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->err, sizeof(o->err), fmt, ap);
	va_end(ap);
	return -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void skip(struct as_step_out *o, const char *name)
{
	for (size_t i = 0; i < o->nskipped; i++)
		if (!strcmp(o->skipped[i], name))
			return;
	if (o->nskipped < sizeof(o->skipped) / sizeof(o->skipped[0]))
		snprintf(o->skipped[o->nskipped++], sizeof(o->skipped[0]), "%s",
			 name);
}

/* Queue a job-wide variable. 'ours' variables (AUTOSYNC_*) always win;
 * anything else the user already set is left alone and recorded. */
static int add_env(const struct as_step_in *in, struct as_step_out *o,
		   const char *name, const char *value, int ours)
{
	if (!ours && in->has_env && in->has_env(name, in->env_arg)) {
		skip(o, name);
		return 0;
	}
	if (o->nenv == AS_MAX_JOB_ENV)
		return fail(o, "too many variables to inject");
	snprintf(o->env[o->nenv].name, sizeof(o->env[0].name), "%s", name);
	snprintf(o->env[o->nenv].value, sizeof(o->env[0].value), "%s", value);
	o->nenv++;
	return 0;
}

static void abs_path(const char *cwd, const char *path, char *out, size_t len)
{
	if (path[0] == '/' || !cwd || !cwd[0])
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s/%s", cwd, path);
}

static int load_topology(const struct as_step_in *in, struct as_step_out *o,
			 autosync_topo_t **tp)
{
	autosync_error_t err = { .text = "" };
	const char *xml = in->site ? autosync_siteconf_topology_xml(in->site) : "";
	autosync_topo_t *t;

	t = xml[0] ? autosync_topo_load_file(xml, &err)
		   : autosync_topo_load_live(&err);
	if (!t)
		return fail(o, "topology: %s", err.text);
	/* the site's own list of fabric NICs wins over the classification */
	if (in->site && autosync_siteconf_fabric_nic_count(in->site)) {
		size_t n = autosync_siteconf_fabric_nic_count(in->site);
		const char **names = calloc(n, sizeof(*names));
		int rv;

		for (size_t i = 0; names && i < n; i++)
			names[i] = autosync_siteconf_fabric_nic(in->site, i);
		rv = names ? autosync_topo_set_fabric_nics(t, names, n, &err)
			   : -1;
		if (!names)
			snprintf(err.text, sizeof(err.text), "out of memory");
		free(names);
		if (rv < 0) {
			autosync_topo_destroy(t);
			return fail(o, "topology: %s", err.text);
		}
	}
	if (autosync_topo_restrict_env(t, in->cuda_visible_devices,
				       in->step_gpus, in->job_gpus, NULL,
				       &err) < 0) {
		autosync_topo_destroy(t);
		return fail(o, "topology: %s", err.text);
	}
	*tp = t;
	return 0;
}

/* The planner's rule (autosync_model_open): a '/' or a YAML suffix makes a
 * path; those are read here, safely, never by the library. */
static int is_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(s + n - 4, ".yml"));
}

static int load_model(const struct as_step_in *in, struct as_step_out *o,
		      autosync_model_t **mp)
{
	autosync_error_t err = { .text = "" };
	const char *cat = in->site ? autosync_siteconf_catalog_dir(in->site) : "";
	size_t max = in->site ? autosync_siteconf_max_model_bytes(in->site)
			      : 16u << 20;
	char path[PATH_MAX], ferr[PATH_MAX + 128], *buf = NULL;
	size_t len = 0;
	autosync_model_t *m;

	if (!is_path(in->model)) {
		m = autosync_model_open(in->model, cat[0] ? cat : NULL, &err);
		if (!m)
			return fail(o, "model: %s", err.text);
		*mp = m;
		return 0;
	}
	/* A user's file: read here, with the user's credentials (the caller
	 * runs us as the user), bounded and never through a symlink. */
	abs_path(in->cwd, in->model, path, sizeof(path));
	if (as_read_file(path, max, (uid_t) -1, &buf, &len, ferr,
			 sizeof(ferr)) < 0)
		return fail(o, "model file %s", ferr);
	m = autosync_model_parse(buf, len, path, &err);
	free(buf);
	if (!m)
		return fail(o, "model: %s", err.text);
	*mp = m;
	return 0;
}

static void summarise(const struct as_step_in *in, struct as_step_out *o,
		      const autosync_plan_t *plan)
{
	autosync_plan_summary_t s;
	const char *best = NULL;
	double best_t = 0;
	size_t off = 0, len = sizeof(o->summary);
	char *b = o->summary;

	if (autosync_plan_summary(plan, &s) < 0)
		return;
#define P(...) (off += (size_t) snprintf(b + off, off < len ? len - off : 0, __VA_ARGS__))
	P("autosync: plan for %s on %u node(s) x %u GPU(s), framework %s\n",
	  s.model, s.cluster.nodes, s.cluster.gpus_per_node, s.framework);
	P("autosync:   strategy %s: predicted step %.3f ms (forward %.3f, "
	  "backward %.3f, exposed communication %.3f), %zu bucket(s)\n",
	  s.strategy, s.step_time * 1e3, s.fwd_time * 1e3, s.bwd_time * 1e3,
	  s.exposed_comm * 1e3, s.nbuckets);
	for (size_t i = 0; i < s.nbaselines; i++) {
		const char *name;
		double t;
		int app;
		if (autosync_plan_baseline(plan, i, &name, &t, &app) == 0 && app &&
		    (!best || t < best_t)) {
			best = name;
			best_t = t;
		}
	}
	if (best && s.step_time > 0)
		P("autosync:   best applicable baseline %s: %.3f ms (plan is "
		  "%.3fx faster)\n", best, best_t * 1e3, best_t / s.step_time);
	P("autosync:   plan %s (hash %s), topology %s\n", o->plan_path,
	  o->plan_hash, o->topo_hash[0] ? o->topo_hash : "-");
	P("autosync:   sets");
	for (size_t i = 0; i < o->nenv; i++)
		if (strncmp(o->env[i].name, "AUTOSYNC_", 9))
			P(" %s=%s", o->env[i].name, o->env[i].value);
	for (size_t i = 0; i < o->nenv; i++)
		if (!strncmp(o->env[i].name, "AUTOSYNC_", 9) &&
		    strcmp(o->env[i].name, "AUTOSYNC_INJECTED"))
			P(" %s", o->env[i].name);
	P("\n");
	if (o->nranks)
		for (unsigned r = 0; r < o->nranks && r < 8; r++) {
			P("autosync:   local rank %u:", r);
			for (size_t i = 0; i < o->rank_nenv[r]; i++)
				P(" %s=%s", o->rank_env[r][i].name,
				  o->rank_env[r][i].value);
			P("\n");
		}
	if (o->nskipped) {
		P("autosync:   kept the user's");
		for (size_t i = 0; i < o->nskipped; i++)
			P(" %s", o->skipped[i]);
		P("\n");
	}
	(void) in;
#undef P
	if (off >= len)
		b[len - 1] = '\0';
}

static void fill_record(autosync_feedback_rec_t *r, const autosync_plan_t *plan,
			const struct as_step_out *o)
{
	autosync_plan_summary_t s;

	if (autosync_plan_summary(plan, &s) < 0)
		return;
	snprintf(r->source, sizeof(r->source), "plugin");
	r->nodes = s.cluster.nodes;
	r->gpus_per_node = s.cluster.gpus_per_node;
	snprintf(r->model, sizeof(r->model), "%s", s.model ? s.model : "");
	snprintf(r->model_hash, sizeof(r->model_hash), "%s",
		 s.model_hash ? s.model_hash : "");
	snprintf(r->topo_hash, sizeof(r->topo_hash), "%s", o->topo_hash);
	snprintf(r->plan_hash, sizeof(r->plan_hash), "%s", o->plan_hash);
	snprintf(r->framework, sizeof(r->framework), "%s",
		 s.framework ? s.framework : "");
	snprintf(r->strategy, sizeof(r->strategy), "%s",
		 s.strategy ? s.strategy : "");
	(void) autosync_cluster_format(&s.cluster, r->cluster, sizeof(r->cluster));
	r->scale = 1;
	r->predicted = s.step_time;
	for (size_t i = 0; i < s.nbuckets && r->nbuckets < AUTOSYNC_FEEDBACK_MAX_BUCKETS; i++) {
		const autosync_bucket_t *b = autosync_plan_bucket(plan, i);
		autosync_feedback_bucket_t *fb = &r->buckets[r->nbuckets++];
		if (!b)
			break;
		snprintf(fb->kind, sizeof(fb->kind), "%s",
			 b->kind == AUTOSYNC_SYNC_PS ? "ps" : "allreduce");
		snprintf(fb->algo, sizeof(fb->algo), "%s",
			 b->kind == AUTOSYNC_SYNC_PS ? "" : autosync_algo_name(b->algo));
		snprintf(fb->compress, sizeof(fb->compress), "%s",
			 autosync_compress_name(b->compress));
		fb->servers = b->kind == AUTOSYNC_SYNC_PS ? b->servers : 0;
		fb->tensors = (unsigned) b->ntensors;
		fb->bytes = b->bytes;
	}
	for (size_t i = 0; i < s.nbaselines && r->nbaselines < AUTOSYNC_FEEDBACK_MAX_BASELINES; i++) {
		const char *name;
		double t;
		int app;
		if (autosync_plan_baseline(plan, i, &name, &t, &app) == 0) {
			snprintf(r->baselines[r->nbaselines].name,
				 sizeof(r->baselines[0].name), "%s", name);
			r->baselines[r->nbaselines++].predicted = t;
		}
	}
}

/* The plan (or, when 'plan' is NULL, the NCCL topology XML) as text in a
 * malloc'ed buffer. */
static int render(const autosync_plan_t *plan, const autosync_topo_t *topo,
		  char **text, size_t *len, autosync_error_t *err)
{
	FILE *fp = open_memstream(text, len);
	int rc;

	if (!fp)
		return autosync_errprintf(err, "%s", strerror(errno));
	rc = plan ? autosync_plan_write(plan, fp, err)
		  : autosync_topo_write_nccl_xml(topo, fp, err);
	if (fclose(fp) != 0 && rc == 0)
		rc = autosync_errprintf(err, "%s", strerror(errno));
	if (rc < 0) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

int as_step_plan(const struct as_step_in *in, struct as_step_out *o)
{
	autosync_error_t err = { .text = "" };
	autosync_topo_t *topo = NULL;
	autosync_model_t *model = NULL;
	autosync_planner_t *p = NULL;
	autosync_plan_t *plan = NULL;
	autosync_cluster_t c;
	autosync_costs_t k;
	char *text = NULL, injected[1024] = "", path[PATH_MAX + 64];
	size_t tlen = 0;
	double t0 = 0;
	int rv = -1, fw;
	unsigned budget;

	if (load_topology(in, o, &topo) < 0)
		goto out;
	snprintf(o->topo_hash, sizeof(o->topo_hash), "%s", autosync_topo_hash(topo));

	if (in->plan_file) {
		/* --autosync=PATH: validate the user's plan instead of planning */
		char ferr[PATH_MAX + 128], *buf = NULL;
		size_t len = 0;
		abs_path(in->cwd, in->plan_file, path, sizeof(path));
		if (as_read_file(path, MAX_PLAN_BYTES, (uid_t) -1, &buf, &len,
				 ferr, sizeof(ferr)) < 0) {
			fail(o, "plan file %s", ferr);
			goto out;
		}
		plan = autosync_plan_parse(buf, len, path, &err);
		free(buf);
		if (!plan) {
			fail(o, "plan file: %s", err.text);
			goto out;
		}
	} else {
		if (!in->model || !in->model[0]) {
			fail(o, "no model named (use --autosync-model=NAME or a "
				"path to a model file)");
			goto out;
		}
		if (load_model(in, o, &model) < 0)
			goto out;
		autosync_cluster_default(&c);
		autosync_siteconf_apply_network(in->site, &c);
		if (autosync_cluster_from_topo(&c, topo, in->nnodes ? in->nnodes : 1,
					       &err) < 0) {
			fail(o, "topology: %s", err.text);
			goto out;
		}
		autosync_costs_default(&k);
		if (in->site && autosync_siteconf_calibration(in->site)[0] &&
		    autosync_costs_load(&k, autosync_siteconf_calibration(in->site),
					&err) < 0) {
			fail(o, "calibration: %s", err.text);
			goto out;
		}
		fw = autosync_framework_from_name(autosync_model_framework(model));
		if (fw < 0)
			fw = autosync_framework_from_name(
				in->site ? autosync_siteconf_framework(in->site)
					 : "pytorch-ddp");
		if (fw < 0)
			fw = AUTOSYNC_FW_PYTORCH_DDP;
		/* the budget is for the search itself: reading the node's
		 * topology and the model files is not planning */
		t0 = now_ms();
		if (!(p = autosync_planner_create(&err)) ||
		    autosync_planner_set_cluster(p, &c, &err) < 0 ||
		    autosync_planner_set_model(p, model, &err) < 0 ||
		    autosync_planner_set_costs(p, &k, &err) < 0 ||
		    autosync_planner_set_framework(p, fw, &err) < 0) {
			fail(o, "planner: %s", err.text);
			goto out;
		}
		autosync_planner_nccl_calibrate(
		    p, in->site && autosync_siteconf_nccl_calibrate(in->site));
		if (!(plan = autosync_plan(p, &err))) {
			fail(o, "planner: %s", err.text);
			goto out;
		}
	}
	o->plan_ms = t0 > 0 ? now_ms() - t0 : 0;
	budget = in->site ? autosync_siteconf_plan_budget_ms(in->site) : 50;
	if (o->plan_ms > budget) {
		fail(o, "planning took %.0f ms, over the site's budget of %u ms",
		     o->plan_ms, budget);
		goto out;
	}
	snprintf(o->plan_hash, sizeof(o->plan_hash), "%s", autosync_plan_hash(plan));

	/* What the tasks get. Paths are known before the files exist, and
	 * the files are written last so that the plan can list the
	 * variables that were left to the user. */
	snprintf(o->plan_path, sizeof(o->plan_path), "%s/%s", in->jobdir,
		 PLAN_NAME);
	if (add_env(in, o, "AUTOSYNC_PLAN", o->plan_path, 1) < 0 ||
	    add_env(in, o, "AUTOSYNC_PLAN_HASH", o->plan_hash, 1) < 0 ||
	    add_env(in, o, "AUTOSYNC_TOPO_HASH", o->topo_hash, 1) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/%s", in->jobdir, REPORT_NAME);
	if (add_env(in, o, "AUTOSYNC_REPORT", path, 1) < 0)
		goto out;
	if (autosync_topo_ngpus(topo) > 0) {
		snprintf(path, sizeof(path), "%s/%s", in->jobdir, TOPO_NAME);
		if (add_env(in, o, "NCCL_TOPO_FILE", path, 0) < 0)
			goto out;
	}
	/* autosync's NCCL tuner and profiler, where the site enables them
	 * and they are installed */
	{
		const char *dir = in->nccl_plugin_dir;
		static const struct {
			const char *var, *file;
		} plugins[] = {
			{ "NCCL_TUNER_PLUGIN", "libnccl-tuner-autosync.so" },
			{ "NCCL_PROFILER_PLUGIN", "libnccl-profiler-autosync.so" },
		};
		if (!dir && in->site && autosync_siteconf_nccl_plugins(in->site))
			dir = autosync_siteconf_nccl_plugin_dir(in->site);
		for (size_t i = 0; dir && dir[0] && i < 2; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, plugins[i].file);
			if (access(path, R_OK) == 0 &&
			    add_env(in, o, plugins[i].var, path, 0) < 0)
				goto out;
		}
	}
	/* the plan's NCCL hints and framework variables */
	for (size_t i = 0;; i++) {
		const char *name, *value;
		if (autosync_plan_env(plan, i, &name, &value) < 0)
			break;
		if (add_env(in, o, name, value, 0) < 0)
			goto out;
	}
	/* per local rank: the nearest NIC and the paths NCCL may use */
	o->nranks = autosync_topo_ngpus(topo);
	if (o->nranks == 0 && autosync_topo_nnics(topo) > 0)
		o->nranks = 1; /* GPU-less node: rank 0 gets the first fabric NIC */
	if (o->nranks > AS_MAX_LOCAL_RANKS)
		o->nranks = AS_MAX_LOCAL_RANKS;
	for (unsigned r = 0; r < o->nranks; r++) {
		size_t n = 0, kept = 0;
		autosync_env_t e[AS_MAX_RANK_ENV];
		if (autosync_topo_rank_env(topo, r, e, AS_MAX_RANK_ENV, &n, &err) < 0) {
			if (errno == EINVAL && autosync_topo_ngpus(topo) == 0) {
				o->nranks = 0;
				break;
			}
			fail(o, "NIC choice: %s", err.text);
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			if (in->has_env && in->has_env(e[i].name, in->env_arg)) {
				skip(o, e[i].name);
				continue;
			}
			o->rank_env[r][kept++] = e[i];
		}
		o->rank_nenv[r] = kept;
	}
	/* Tell later steps (nested sruns inherit the environment) which
	 * variables were ours, so that they are replaced and not mistaken
	 * for the user's. */
	{
		size_t off = 0;
		for (size_t i = 0; i < o->nenv; i++)
			if (strncmp(o->env[i].name, "AUTOSYNC_", 9))
				off += (size_t) snprintf(injected + off,
							 off < sizeof(injected) ? sizeof(injected) - off : 0,
							 "%s%s", off ? "," : "", o->env[i].name);
		for (unsigned r = 0; r < o->nranks; r++)
			for (size_t i = 0; i < o->rank_nenv[r]; i++)
				if (!strstr(injected, o->rank_env[r][i].name))
					off += (size_t) snprintf(injected + off,
								 off < sizeof(injected) ? sizeof(injected) - off : 0,
								 "%s%s", off ? "," : "",
								 o->rank_env[r][i].name);
		if (off && add_env(in, o, "AUTOSYNC_INJECTED", injected, 1) < 0)
			goto out;
	}

	/* the plan file (with what was left to the user), and the NCCL
	 * topology of this node's allocation */
	{
		const char *names[sizeof(o->skipped) / sizeof(o->skipped[0])];
		for (size_t i = 0; i < o->nskipped; i++)
			names[i] = o->skipped[i];
		if (autosync_plan_set_skipped_env(plan, names, o->nskipped,
						  &err) < 0) {
			fail(o, "plan: %s", err.text);
			goto out;
		}
	}
	if (render(plan, NULL, &text, &tlen, &err) < 0) {
		fail(o, "plan: %s", err.text);
		goto out;
	}
	if (as_write_in(in->jobdir, PLAN_NAME, text, tlen, o->err,
			sizeof(o->err)) < 0)
		goto out;
	free(text);
	text = NULL;
	if (autosync_topo_ngpus(topo) > 0) {
		if (render(NULL, topo, &text, &tlen, &err) < 0) {
			fail(o, "NCCL topology: %s", err.text);
			goto out;
		}
		if (as_write_in(in->jobdir, TOPO_NAME, text, tlen, o->err,
				sizeof(o->err)) < 0)
			goto out;
	}
	fill_record(&o->rec, plan, o);
	summarise(in, o, plan);
	rv = 0;
out:
	free(text);
	autosync_plan_destroy(plan);
	autosync_planner_destroy(p);
	autosync_model_destroy(model);
	autosync_topo_destroy(topo);
	return rv;
}

int as_step_parse_report(const char *buf, autosync_feedback_rec_t *rec,
			 char *err, size_t errlen)
{
	const char *p = buf;
	unsigned line = 0;
	double sum = 0;

	rec->nmeasured = 0;
	rec->measured_count = 0;
	rec->measured_mean = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t) (nl - p) : strlen(p);
		char tmp[64], *end;
		double v;

		line++;
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
			n--;
		while (n && (*p == ' ' || *p == '\t')) {
			p++;
			n--;
		}
		if (n && *p != '#') {
			if (n >= sizeof(tmp)) {
				snprintf(err, errlen, "line %u: too long", line);
				return -1;
			}
			memcpy(tmp, p, n);
			tmp[n] = '\0';
			errno = 0;
			v = strtod(tmp, &end);
			if (errno || *end || !isfinite(v) || v <= 0 || v > 1e6) {
				snprintf(err, errlen, "line %u: not a step time in "
					 "seconds: '%.32s'", line, tmp);
				return -1;
			}
			if (rec->nmeasured < AUTOSYNC_FEEDBACK_MAX_MEASURED)
				rec->measured[rec->nmeasured++] = v;
			rec->measured_count++;
			sum += v;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	if (rec->measured_count)
		rec->measured_mean = sum / (double) rec->measured_count;
	return (int) (rec->measured_count > 0x7fffffff ? 0x7fffffff
						       : rec->measured_count);
}
