/* job.c - the job pipeline (autosync/job.h): inputs, then one phase per
 * function: topology, model or plan file, cluster, search, environment,
 * summary; files last. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "autosync/job.h"
#include "common/readfile.h"
#include "common/text.h"
#include "internal.h"

#define MAX_RANK_ENV 8
#define NO_DIR "<jobdir>"

struct var {
	char *name, *value;
};

struct autosync_job {
	/* inputs */
	const autosync_siteconf_t *site;
	autosync_siteconf_t *defaults; /* when no site config is given */
	char *model_spec, *catalog_dir, *plan_file, *cwd, *topo_src, *gpus;
	char *network, *calibration, *dir, *plugin_dir;
	char *simulator, *sim_module; /* NULL: the site's */
	int plugins, plugins_set;
	int baseline;
	unsigned nodes, gpus_per_node, tasks;
	int fw, compress, ncal;
	unsigned long budget;
	autosync_getenv_f getenv;
	void *env_arg;
	autosync_log_f log;
	void *log_arg;
	int ran;
	/* what the run made */
	char *inherited; /* AUTOSYNC_INJECTED of the job's environment */
	autosync_topo_t *topo;
	autosync_model_t *model;
	autosync_plan_t *plan;
	double plan_ms;
	size_t nenv;
	struct var env[AUTOSYNC_JOB_MAX_ENV];
	autosync_var_t env_view[AUTOSYNC_JOB_MAX_ENV];
	unsigned nranks;
	size_t *rank_n;		   /* [nranks] */
	autosync_env_t *rank_env;  /* [nranks][MAX_RANK_ENV] */
	autosync_var_t *rank_view; /* [nranks][MAX_RANK_ENV] */
	size_t nskipped;
	int autotune;	     /* HOROVOD_AUTOTUNE: no HOROVOD_ variable set */
	unsigned batch;	     /* 0: the model file's */
	double step_compute; /* s, 0: none */
	char *skipped[AUTOSYNC_JOB_MAX_ENV + MAX_RANK_ENV];
	char topo_hash[17];
	char *summary;
};

static const char *env_getenv(const char *name, void *arg)
{
	(void)arg;
	return getenv(name);
}

autosync_job_t *autosync_job_create(autosync_error_t *errp)
{
	autosync_job_t *j = calloc(1, sizeof(*j));

	if (!j || !(j->defaults = autosync_siteconf_create(errp))) {
		free(j);
		errno = ENOMEM;
		autosync_errprintf(errp, "job: out of memory");
		return NULL;
	}
	j->site = j->defaults;
	j->baseline = -1;
	j->fw = -1;
	j->ncal = -1;
	j->getenv = env_getenv;
	return j;
}

static void free_outputs(autosync_job_t *j)
{
	for (size_t i = 0; i < j->nenv; i++) {
		free(j->env[i].name);
		free(j->env[i].value);
	}
	j->nenv = 0;
	for (size_t i = 0; i < j->nskipped; i++)
		free(j->skipped[i]);
	j->nskipped = 0;
	j->autotune = 0;
	free(j->rank_n);
	free(j->rank_env);
	free(j->rank_view);
	j->rank_n = NULL;
	j->rank_env = NULL;
	j->rank_view = NULL;
	j->nranks = 0;
	free(j->summary);
	j->summary = NULL;
}

void autosync_job_destroy(autosync_job_t *j)
{
	if (!j)
		return;
	free_outputs(j);
	autosync_plan_destroy(j->plan);
	autosync_model_destroy(j->model);
	autosync_topo_destroy(j->topo);
	autosync_siteconf_destroy(j->defaults);
	free(j->model_spec);
	free(j->catalog_dir);
	free(j->plan_file);
	free(j->cwd);
	free(j->topo_src);
	free(j->gpus);
	free(j->network);
	free(j->calibration);
	free(j->simulator);
	free(j->sim_module);
	free(j->dir);
	free(j->plugin_dir);
	free(j->inherited);
	free(j);
}

void autosync_job_set_log(autosync_job_t *j, autosync_log_f fn, void *arg)
{
	if (!j)
		return;
	j->log = fn;
	j->log_arg = arg;
}

static void note(const autosync_job_t *j, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(const autosync_job_t *j, int level, const char *fmt, ...)
{
	char msg[AUTOSYNC_ERROR_LEN];
	va_list ap;

	if (!j->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	j->log(level, msg, j->log_arg);
}

/* ------------------------------------------------------------- inputs */

static int settable(autosync_job_t *j, autosync_error_t *errp)
{
	if (!j) {
		errno = EINVAL;
		return autosync_errprintf(errp, "job: invalid argument");
	}
	if (j->ran) {
		errno = EBUSY;
		return autosync_errprintf(errp, "job: already run");
	}
	return 0;
}

/* Replace '*dst' with a copy of 's' (NULL clears it). */
static int set_str(autosync_job_t *j, char **dst, const char *s,
		   autosync_error_t *errp)
{
	char *copy = NULL;

	if (settable(j, errp) < 0)
		return -1;
	if (s && !(copy = strdup(s))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "job: out of memory");
	}
	free(*dst);
	*dst = copy;
	return 0;
}

int autosync_job_set_site(autosync_job_t *j, const autosync_siteconf_t *site,
			  autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->site = site ? site : j->defaults;
	return 0;
}

int autosync_job_set_model(autosync_job_t *j, const char *spec,
			   autosync_error_t *errp)
{
	return set_str(j, &j->model_spec, spec && spec[0] ? spec : NULL, errp);
}

int autosync_job_set_catalog_dir(autosync_job_t *j, const char *dir,
				 autosync_error_t *errp)
{
	return set_str(j, &j->catalog_dir, dir, errp);
}

int autosync_job_set_plan_file(autosync_job_t *j, const char *path,
			       autosync_error_t *errp)
{
	return set_str(j, &j->plan_file, path, errp);
}

int autosync_job_set_baseline(autosync_job_t *j, int baseline,
			      autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	if (baseline < -1 || baseline >= AUTOSYNC_BASELINE_N) {
		errno = EINVAL;
		return autosync_errprintf(errp, "job: no baseline %d",
					  baseline);
	}
	j->baseline = baseline;
	return 0;
}

int autosync_job_set_nodes(autosync_job_t *j, unsigned nodes,
			   autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	if (nodes < 1) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "job: nodes must be at least 1");
	}
	j->nodes = nodes;
	return 0;
}

int autosync_job_set_tasks_per_node(autosync_job_t *j, unsigned tasks,
				    autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->tasks = tasks;
	return 0;
}

int autosync_job_set_cwd(autosync_job_t *j, const char *cwd,
			 autosync_error_t *errp)
{
	return set_str(j, &j->cwd, cwd, errp);
}

void autosync_job_set_getenv(autosync_job_t *j, autosync_getenv_f fn, void *arg)
{
	if (!j || j->ran)
		return;
	j->getenv = fn ? fn : env_getenv;
	j->env_arg = fn ? arg : NULL;
}

int autosync_job_set_topology(autosync_job_t *j, const char *source,
			      autosync_error_t *errp)
{
	return set_str(j, &j->topo_src, source, errp);
}

int autosync_job_set_gpus(autosync_job_t *j, const char *list,
			  autosync_error_t *errp)
{
	return set_str(j, &j->gpus, list, errp);
}

int autosync_job_set_network(autosync_job_t *j, const char *spec,
			     autosync_error_t *errp)
{
	autosync_cluster_t c;

	autosync_cluster_default(&c);
	/* an empty description would silently mean the built-in default */
	if (spec && !spec[strspn(spec, " \t")]) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "network: an empty description "
			  "(give items such as nodes=4,gpus=8)");
	}
	if (spec && autosync_cluster_update(&c, spec, errp) < 0)
		return -1;
	return set_str(j, &j->network, spec, errp);
}

int autosync_job_set_gpus_per_node(autosync_job_t *j, unsigned gpus,
				   autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->gpus_per_node = gpus;
	return 0;
}

int autosync_job_set_framework(autosync_job_t *j, int fw,
			       autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	if (fw < -1 || fw >= AUTOSYNC_FW_N) {
		errno = EINVAL;
		return autosync_errprintf(errp, "job: no framework %d", fw);
	}
	j->fw = fw;
	return 0;
}

int autosync_job_set_simulator(autosync_job_t *j, const char *path,
			       autosync_error_t *errp)
{
	return set_str(j, &j->simulator, path, errp);
}

int autosync_job_set_simulator_module(autosync_job_t *j, const char *path,
				      autosync_error_t *errp)
{
	return set_str(j, &j->sim_module, path, errp);
}

int autosync_job_set_calibration(autosync_job_t *j, const char *path,
				 autosync_error_t *errp)
{
	return set_str(j, &j->calibration, path, errp);
}

int autosync_job_set_compression(autosync_job_t *j, int allow,
				 autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->compress = allow != 0;
	return 0;
}

int autosync_job_set_nccl_calibrate(autosync_job_t *j, int on,
				    autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->ncal = on < 0 ? -1 : on != 0;
	return 0;
}

int autosync_job_set_budget(autosync_job_t *j, unsigned long evals,
			    autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->budget = evals;
	return 0;
}

int autosync_job_set_batch(autosync_job_t *j, unsigned batch,
			   autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->batch = batch;
	return 0;
}

int autosync_job_set_step_compute(autosync_job_t *j, double seconds,
				  autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	if (!(seconds >= 0 && seconds <= 3600)) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "step compute: %g s is not in "
					  "0 to 3600 s",
					  seconds);
	}
	j->step_compute = seconds;
	return 0;
}

int autosync_job_set_nccl_plugins(autosync_job_t *j, const char *dir, int which,
				  autosync_error_t *errp)
{
	if (set_str(j, &j->plugin_dir, dir, errp) < 0)
		return -1;
	j->plugins = which & (AUTOSYNC_JOB_TUNER | AUTOSYNC_JOB_PROFILER);
	j->plugins_set = 1;
	return 0;
}

int autosync_job_set_dir(autosync_job_t *j, const char *dir,
			 autosync_error_t *errp)
{
	return set_str(j, &j->dir, dir, errp);
}

/* ------------------------------------------------------ phase: inputs */

static void abs_path(const autosync_job_t *j, const char *path, char *out,
		     size_t len)
{
	if (path[0] == '/' || !j->cwd || !j->cwd[0])
		snprintf(out, len, "%s", path);
	else
		snprintf(out, len, "%s/%s", j->cwd, path);
}

/* A user's file (model or plan): read here, with the caller's
 * credentials, bounded and never through a symbolic link. */
static char *read_user_file(const autosync_job_t *j, const char *path,
			    size_t max, const char *what, size_t *len,
			    autosync_error_t *errp)
{
	char full[PATH_MAX], msg[PATH_MAX + 128], *buf = NULL;

	abs_path(j, path, full, sizeof(full));
	if (asi_read_file(full, max, ASI_READ_NOFOLLOW, (uid_t)-1, &buf, len,
			  msg, sizeof(msg)) < 0) {
		autosync_errprintf(errp, "%s %s", what, msg);
		return NULL;
	}
	return buf;
}

/* The planner's rule (autosync_model_open): a '/' or a YAML suffix makes
 * a path. */
static int is_path(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '/') || (n > 5 && !strcmp(s + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(s + n - 4, ".yml"));
}

/* Did the user set 'name'? Those an earlier autosync listed in
 * AUTOSYNC_INJECTED do not count. */
static int user_set(const autosync_job_t *j, const char *name)
{
	return j->getenv(name, j->env_arg) &&
	       !asi_name_in_list(j->inherited, name);
}

/* A copy of an environment value (they live only until the next call). */
static char *env_copy(const autosync_job_t *j, const char *name)
{
	const char *v = j->getenv(name, j->env_arg);

	return v ? strdup(v) : NULL;
}

/* ---------------------------------------------------- phase: topology */

static int apply_fabric_nics(autosync_job_t *j, autosync_error_t *errp)
{
	size_t n = autosync_siteconf_nfabric_nics(j->site);
	const char **names;
	int rv;

	if (!n)
		return 0;
	if (!(names = calloc(n, sizeof(*names)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "topology: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		names[i] = autosync_siteconf_fabric_nic(j->site, i);
	rv = autosync_topo_set_fabric_nics(j->topo, names, n, errp);
	free(names);
	return rv;
}

static int restrict_gpus(autosync_job_t *j, autosync_error_t *errp)
{
	char *cvd, *sgpus, *jgpus, *nvd;
	int rv;

	if (j->gpus)
		return autosync_topo_restrict(
		    j->topo, strcmp(j->gpus, "all") ? j->gpus : NULL, NULL,
		    errp);
	cvd = env_copy(j, "CUDA_VISIBLE_DEVICES");
	sgpus = env_copy(j, "SLURM_STEP_GPUS");
	jgpus = env_copy(j, "SLURM_JOB_GPUS");
	nvd = env_copy(j, "NVIDIA_VISIBLE_DEVICES");
	rv = autosync_topo_restrict_container(j->topo, nvd, cvd, sgpus, jgpus,
					      NULL, errp);
	free(cvd);
	free(sgpus);
	free(jgpus);
	free(nvd);
	return rv;
}

static int load_topology(autosync_job_t *j, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	const char *src = j->topo_src;

	if (!src)
		src = autosync_siteconf_topology_xml(j->site)[0]
			  ? autosync_siteconf_topology_xml(j->site)
			  : "live";
	if (!strcmp(src, "none"))
		return 0;
	j->topo = !strcmp(src, "live") ? autosync_topo_load_live(&err)
				       : autosync_topo_load_file(src, &err);
	if (!j->topo || apply_fabric_nics(j, &err) < 0 ||
	    restrict_gpus(j, &err) < 0)
		return autosync_errprintf(errp, "topology: %s", err.text);
	snprintf(j->topo_hash, sizeof(j->topo_hash), "%s",
		 autosync_topo_hash(j->topo));
	return 0;
}

/* ------------------------------------------------------- phase: model */

static int load_model(autosync_job_t *j, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	const char *cat = j->catalog_dir
			      ? j->catalog_dir
			      : autosync_siteconf_catalog_dir(j->site);
	char *buf, full[PATH_MAX];
	size_t len = 0;

	if (!is_path(j->model_spec)) {
		j->model = autosync_model_open(j->model_spec,
					       cat[0] ? cat : NULL, &err);
		return j->model
			   ? 0
			   : autosync_errprintf(errp, "model: %s", err.text);
	}
	buf = read_user_file(j, j->model_spec,
			     autosync_siteconf_max_model_bytes(j->site),
			     "model file", &len, errp);
	if (!buf)
		return -1;
	abs_path(j, j->model_spec, full, sizeof(full));
	j->model = autosync_model_parse(buf, len, full, &err);
	free(buf);
	return j->model ? 0 : autosync_errprintf(errp, "model: %s", err.text);
}

/* what the caller knows better than the model file */
static int adjust_model(autosync_job_t *j, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};

	if (j->batch &&
	    autosync_model_set_batch(j->model, j->batch,
				     autosync_model_tokens(j->model), &err) < 0)
		return autosync_errprintf(errp, "batch size: %s", err.text);
	if (j->step_compute > 0 && autosync_model_set_step_compute(
				       j->model, j->step_compute, &err) < 0)
		return autosync_errprintf(errp, "step compute: %s", err.text);
	return 0;
}

static int load_plan_file(autosync_job_t *j, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	char *buf, full[PATH_MAX];
	size_t len = 0;

	buf = read_user_file(j, j->plan_file, AUTOSYNC_JOB_MAX_PLAN_BYTES,
			     "plan file", &len, errp);
	if (!buf)
		return -1;
	abs_path(j, j->plan_file, full, sizeof(full));
	j->plan = autosync_plan_parse(buf, len, full, &err);
	free(buf);
	return j->plan ? 0
		       : autosync_errprintf(errp, "plan file: %s", err.text);
}

/* ------------------------------------------------- phase: cluster, plan */

/* defaults < site network < the job's network spec < node topology */
/* The job's request for lossy compression, as far as the site allows. */
static int compression(const autosync_job_t *j)
{
	if (!j->compress)
		return 0;
	if (j->site && !autosync_siteconf_allow_compression(j->site)) {
		note(j, AUTOSYNC_LOG_WARNING,
		     "compression: not allowed on this cluster "
		     "(allow_compression: false); planning without");
		return 0;
	}
	return 1;
}

/* NCCL_IB_DISABLE=1 or NCCL_NET=Socket: the job talks over TCP whatever
 * its NICs can do (NCCL reads both as the job set them) */
static int user_forces_sockets(const autosync_job_t *j)
{
	const char *v;

	if (user_set(j, "NCCL_IB_DISABLE") &&
	    (v = j->getenv("NCCL_IB_DISABLE", j->env_arg)) &&
	    strtol(v, NULL, 0) != 0)
		return 1;
	return user_set(j, "NCCL_NET") &&
	       (v = j->getenv("NCCL_NET", j->env_arg)) &&
	       !strcasecmp(v, "Socket");
}

static int build_cluster(const autosync_job_t *j, autosync_cluster_t *c,
			 autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};

	autosync_cluster_default(c);
	autosync_siteconf_apply_network(j->site, c);
	if (j->network && autosync_cluster_update(c, j->network, &err) < 0)
		return autosync_errprintf(errp, "network: %s", err.text);
	if (j->topo) {
		if (autosync_cluster_from_topo(
			c, j->topo, j->nodes ? j->nodes : c->nodes, &err) < 0)
			return autosync_errprintf(errp, "topology: %s",
						  err.text);
	} else if (j->nodes) {
		c->nodes = j->nodes;
	}
	if (j->gpus_per_node)
		c->gpus_per_node = j->gpus_per_node;
	if (user_forces_sockets(j))
		c->transport = AUTOSYNC_TRANSPORT_TCP;
	return 0;
}

static int load_costs(const autosync_job_t *j, autosync_costs_t *k,
		      autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	const char *path = j->calibration
			       ? j->calibration
			       : autosync_siteconf_calibration(j->site);

	autosync_costs_default(k);
	if (path[0] && autosync_costs_load(k, path, &err) < 0)
		return autosync_errprintf(errp, "calibration: %s", err.text);
	return 0;
}

/* the job's choice, else the model's, else the site's default */
static int framework(const autosync_job_t *j)
{
	int fw = j->fw;

	if (fw < 0)
		fw = autosync_framework_from_name(
		    autosync_model_framework(j->model));
	if (fw < 0)
		fw = autosync_framework_from_name(
		    autosync_siteconf_framework(j->site));
	return fw < 0 ? AUTOSYNC_FW_PYTORCH_DDP : fw;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The learned simulator, when the job or the site names one: the planner
 * corrects its best candidates with it. Fail-open: a warning, and the
 * analytic model alone. */
static autosync_simulator_t *use_simulator(autosync_job_t *j,
					   autosync_planner_t *p)
{
	const char *path =
	    j->simulator ? j->simulator : autosync_siteconf_simulator(j->site);
	const char *mod = j->sim_module
			      ? j->sim_module
			      : autosync_siteconf_simulator_module(j->site);
	autosync_error_t err = {.text = ""};
	autosync_simulator_t *s;

	if (!path[0] || !strcmp(path, "none"))
		return NULL;
	if (!(s = autosync_simulator_load(path, mod, &err)) ||
	    autosync_planner_set_corrector(p, autosync_simulator_corrector(s),
					   &err) < 0) {
		note(j, AUTOSYNC_LOG_WARNING,
		     "simulator: %s; planning with the analytic model",
		     err.text);
		autosync_simulator_destroy(s);
		return NULL;
	}
	return s;
}

/* A model file without FLOPs or times plans with the compute its steps
 * measured at this site when the simulator file has it: every node reads
 * the same file (its hash is in the plan), never a node-local log, so
 * every node plans alike. */
static void feedback_compute(autosync_job_t *j, const autosync_simulator_t *s)
{
	const autosync_corrector_t *c = autosync_simulator_corrector(s);
	double step;

	if (!c || !c->sample_compute ||
	    strcmp(autosync_model_compute_source(j->model), "estimated") != 0)
		return;
	step = c->sample_compute(c->arg, autosync_model_hash(j->model)) *
	       autosync_model_batch(j->model);
	if (step > 0 &&
	    autosync_model_set_feedback_compute(j->model, step, NULL) == 0)
		note(j, AUTOSYNC_LOG_INFO,
		     "compute: %.6g ms per step measured in the site's "
		     "feedback records (simulator %s)",
		     step * 1e3, c->hash);
}

static int search(autosync_job_t *j, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	autosync_planner_t *p = NULL;
	autosync_cluster_t c;
	autosync_costs_t k;
	autosync_simulator_t *sim = NULL;
	double t0;
	int ncal =
	    j->ncal >= 0 ? j->ncal : autosync_siteconf_nccl_calibrate(j->site);

	if (build_cluster(j, &c, errp) < 0 || load_costs(j, &k, errp) < 0)
		return -1;
	t0 = now_ms();
	if (!(p = autosync_planner_create(&err)) ||
	    autosync_planner_set_cluster(p, &c, &err) < 0 ||
	    autosync_planner_set_model(p, j->model, &err) < 0 ||
	    autosync_planner_set_costs(p, &k, &err) < 0 ||
	    autosync_planner_set_framework(p, framework(j), &err) < 0 ||
	    (j->budget && autosync_planner_set_budget(p, j->budget, &err) < 0))
		goto fail;
	autosync_planner_set_compression(p, compression(j));
	autosync_planner_set_nccl_calibrate(p, ncal);
	if (j->baseline < 0 && (sim = use_simulator(j, p)))
		feedback_compute(j, sim);
	j->plan = j->baseline >= 0
		      ? autosync_planner_baseline(p, j->baseline, &err)
		      : autosync_planner_run(p, &err);
	if (!j->plan)
		goto fail;
	j->plan_ms = now_ms() - t0;
	autosync_planner_destroy(p);
	autosync_simulator_destroy(sim);
	return 0;
fail:
	autosync_planner_destroy(p);
	autosync_simulator_destroy(sim);
	return autosync_errprintf(errp, "planner: %s", err.text);
}

/* ------------------------------------------------- phase: environment */

static void skip(autosync_job_t *j, const char *name)
{
	for (size_t i = 0; i < j->nskipped; i++)
		if (!strcmp(j->skipped[i], name))
			return;
	if (j->nskipped < sizeof(j->skipped) / sizeof(j->skipped[0]) &&
	    (j->skipped[j->nskipped] = strdup(name)))
		j->nskipped++;
}

/* Queue a job-wide variable. autosync's own (AUTOSYNC_*, 'ours') always
 * win; anything else the user already set is left alone and recorded. */
static int add_env(autosync_job_t *j, const char *name, const char *value,
		   int ours, autosync_error_t *errp)
{
	struct var *v = &j->env[j->nenv];

	if (!ours && user_set(j, name)) {
		skip(j, name);
		return 0;
	}
	if (j->nenv == AUTOSYNC_JOB_MAX_ENV) {
		errno = ENOSPC;
		return autosync_errprintf(errp, "too many variables to inject");
	}
	if (!(v->name = strdup(name)) || !(v->value = strdup(value))) {
		free(v->name);
		v->name = NULL;
		errno = ENOMEM;
		return autosync_errprintf(errp, "job: out of memory");
	}
	j->env_view[j->nenv] = (autosync_var_t){v->name, v->value};
	j->nenv++;
	return 0;
}

/* "DIR/NAME" in the job directory (or "<jobdir>/NAME" without one) */
static int add_path(autosync_job_t *j, const char *var, const char *file,
		    int ours, autosync_error_t *errp)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", j->dir ? j->dir : NO_DIR, file);
	return add_env(j, var, path, ours, errp);
}

static int add_plugins(autosync_job_t *j, autosync_error_t *errp)
{
	static const struct {
		int bit;
		const char *var, *file;
	} plugins[] = {
	    {AUTOSYNC_JOB_TUNER, "NCCL_TUNER_PLUGIN",
	     "libnccl-tuner-autosync.so"},
	    {AUTOSYNC_JOB_PROFILER, "NCCL_PROFILER_PLUGIN",
	     "libnccl-profiler-autosync.so"},
	};
	const char *dir = j->plugin_dir;
	int which = j->plugins;
	char path[PATH_MAX + 64];

	if (!j->plugins_set) {
		which = autosync_siteconf_nccl_plugins(j->site)
			    ? AUTOSYNC_JOB_TUNER | AUTOSYNC_JOB_PROFILER
			    : 0;
		dir = autosync_siteconf_nccl_plugin_dir(j->site);
	}
	for (size_t i = 0; dir && dir[0] && i < 2; i++) {
		if (!(which & plugins[i].bit))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, plugins[i].file);
		if (access(path, R_OK) < 0) {
			note(j, AUTOSYNC_LOG_INFO,
			     "%s: %s; NCCL runs without it", path,
			     strerror(errno));
			continue;
		}
		if (add_env(j, plugins[i].var, path, 0, errp) < 0)
			return -1;
	}
	return 0;
}

/* Horovod autotunes when HOROVOD_AUTOTUNE is a positive integer. */
static int horovod_autotune(const autosync_job_t *j)
{
	const char *v = j->getenv("HOROVOD_AUTOTUNE", j->env_arg);

	return v && strtol(v, NULL, 10) > 0;
}

/* What every task gets, in a fixed order. */
static int job_env(autosync_job_t *j, autosync_error_t *errp)
{
	if (add_path(j, "AUTOSYNC_PLAN", AUTOSYNC_JOB_PLAN_FILE, 1, errp) < 0 ||
	    add_env(j, "AUTOSYNC_PLAN_HASH", autosync_plan_hash(j->plan), 1,
		    errp) < 0 ||
	    add_env(j, "AUTOSYNC_TOPO_HASH", j->topo_hash, 1, errp) < 0 ||
	    add_path(j, "AUTOSYNC_REPORT", AUTOSYNC_JOB_REPORT_FILE, 1, errp) <
		0)
		return -1;
	if (j->topo && autosync_topo_ngpus(j->topo) > 0 &&
	    add_path(j, "NCCL_TOPO_FILE", AUTOSYNC_JOB_TOPO_FILE, 0, errp) < 0)
		return -1;
	if (add_plugins(j, errp) < 0)
		return -1;
	for (size_t i = 0; i < autosync_plan_nenv(j->plan); i++) {
		const autosync_var_t *v = autosync_plan_env(j->plan, i);
		char q[96];
		/* also checked when a plan file is read: a plan never sets
		 * what could run code or change what autosync itself sets */
		if (!autosync_plan_env_allowed(v->name)) {
			errno = EPERM;
			return autosync_errprintf(
			    errp,
			    "plan: env: '%s' is not a variable a plan "
			    "may set (NCCL_*, AUTOSYNC_*, HOROVOD_*; no "
			    "plugin or configuration file)",
			    asi_quote(v->name, q, sizeof(q)));
		}
		/* Horovod's autotuner tunes what a fixed value would pin */
		if (!strncmp(v->name, "HOROVOD_", 8) && horovod_autotune(j)) {
			j->autotune = 1;
			continue;
		}
		if (add_env(j, v->name, v->value, 0, errp) < 0)
			return -1;
	}
	return 0;
}

/* Per local rank: the nearest NIC and the paths NCCL may use. */
static int rank_env(autosync_job_t *j, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	unsigned n;

	if (!j->topo)
		return 0;
	n = autosync_topo_ngpus(j->topo);
	/* a task that hosts several GPU ranks (torchrun under srun): what
	 * is right for one of them is wrong for the others, so no rank gets
	 * a NIC of its own here; whatever runs per process chooses */
	if (j->tasks && j->tasks < n) {
		note(j, AUTOSYNC_LOG_INFO,
		     "%u task(s) for %u GPUs on this node: "
		     "no per-rank NIC choice (autosync launch under torchrun, "
		     "or NCCL with the topology file, choose per process)",
		     j->tasks, n);
		return 0;
	}
	if (n == 0 && autosync_topo_nnics(j->topo) > 0)
		n = 1; /* GPU-less node: rank 0 gets the first fabric NIC */
	if (n > AUTOSYNC_JOB_MAX_RANKS)
		n = AUTOSYNC_JOB_MAX_RANKS;
	if (!n)
		return 0;
	j->rank_n = calloc(n, sizeof(*j->rank_n));
	j->rank_env = calloc((size_t)n * MAX_RANK_ENV, sizeof(*j->rank_env));
	j->rank_view = calloc((size_t)n * MAX_RANK_ENV, sizeof(*j->rank_view));
	if (!j->rank_n || !j->rank_env || !j->rank_view) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "job: out of memory");
	}
	for (unsigned r = 0; r < n; r++) {
		autosync_env_t e[MAX_RANK_ENV];
		size_t ne = 0, kept = 0;

		if (autosync_topo_rank_env(j->topo, r, e, MAX_RANK_ENV, &ne,
					   &err) < 0) {
			if (errno == EINVAL &&
			    autosync_topo_ngpus(j->topo) == 0)
				return 0; /* no fabric NIC after all */
			return autosync_errprintf(errp, "NIC choice: %s",
						  err.text);
		}
		for (size_t i = 0; i < ne; i++) {
			autosync_env_t *d;
			if (user_set(j, e[i].name)) {
				skip(j, e[i].name);
				continue;
			}
			d = &j->rank_env[r * MAX_RANK_ENV + kept];
			*d = e[i];
			j->rank_view[r * MAX_RANK_ENV + kept++] =
			    (autosync_var_t){d->name, d->value};
		}
		j->rank_n[r] = kept;
		j->nranks = r + 1;
	}
	return 0;
}

static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static void list_add(char *list, size_t len, const char *name)
{
	size_t off = strlen(list);

	if (!listed(list, name))
		snprintf(list + off, off < len ? len - off : 0, "%s%s",
			 off ? "," : "", name);
}

/* Tell later steps (nested sruns inherit the environment) which variables
 * were autosync's, so that they are replaced and not taken for the user's. */
static int injected_env(autosync_job_t *j, autosync_error_t *errp)
{
	char list[2048] = "";

	for (size_t i = 0; i < j->nenv; i++)
		if (strncmp(j->env[i].name, "AUTOSYNC_", 9))
			list_add(list, sizeof(list), j->env[i].name);
	for (unsigned r = 0; r < j->nranks; r++)
		for (size_t i = 0; i < j->rank_n[r]; i++)
			list_add(list, sizeof(list),
				 j->rank_env[r * MAX_RANK_ENV + i].name);
	return list[0] ? add_env(j, "AUTOSYNC_INJECTED", list, 1, errp) : 0;
}

/* The plan records what was left to the user (not part of its hash). */
static int record_skipped(autosync_job_t *j, autosync_error_t *errp)
{
	return autosync_plan_set_skipped_env(
	    j->plan, (const char *const *)j->skipped, j->nskipped, errp);
}

/* ---------------------------------------------------- phase: summary */

/* what the framework would have done without autosync, from the plan's
 * own comparison table */
static const char *default_baseline(const autosync_plan_t *plan,
				    const char *framework, double *t)
{
	const char *name = autosync_baseline_name(
	    autosync_baseline_default(autosync_framework_from_name(framework)));

	for (size_t i = 0; name && i < autosync_plan_nbaselines(plan); i++) {
		const autosync_plan_baseline_t *b =
		    autosync_plan_baseline(plan, i);
		if (!strcmp(b->name, name)) {
			*t = b->step_time;
			return name;
		}
	}
	return NULL;
}

static void summarise(autosync_job_t *j)
{
	autosync_plan_summary_t s;
	const char *def;
	double def_t = 0;
	size_t len = 0;
	char q[1024];
	FILE *fp = open_memstream(&j->summary, &len);

	if (!fp)
		return;
	/* names and values can come from the user's files: one line each,
	 * nothing that steers a terminal */
	autosync_plan_summary(j->plan, &s);
	fprintf(fp,
		"autosync: plan for %s on %u node(s) x %u GPU(s), "
		"framework %s\n",
		asi_quote(s.model, q, sizeof(q)), s.cluster.nodes,
		s.cluster.gpus_per_node, s.framework);
	fprintf(fp,
		"autosync:   strategy %s: predicted step %.3f ms (forward "
		"%.3f, backward %.3f, exposed communication %.3f), %zu "
		"bucket(s)\n",
		asi_quote(s.strategy, q, sizeof(q)), s.step_time * 1e3,
		s.fwd_time * 1e3, s.bwd_time * 1e3, s.exposed_comm * 1e3,
		autosync_plan_nbuckets(j->plan));
	if ((def = default_baseline(j->plan, s.framework, &def_t)) &&
	    s.step_time > 0)
		fprintf(fp,
			"autosync:   the framework's default %s: %.3f ms "
			"(plan is %.3fx faster)\n",
			def, def_t * 1e3, def_t / s.step_time);
	fprintf(fp, "autosync:   reason: %s\n",
		asi_quote(s.reason, q, sizeof(q)));
	if (autosync_plan_format_version(j->plan) < AUTOSYNC_PLAN_VERSION)
		fprintf(fp,
			"autosync:   the plan file is format %u, read as "
			"format %d\n",
			autosync_plan_format_version(j->plan),
			AUTOSYNC_PLAN_VERSION);
	fprintf(fp, "autosync:   plan %s/%s (hash %s), topology %s\n",
		j->dir ? j->dir : NO_DIR, AUTOSYNC_JOB_PLAN_FILE,
		autosync_plan_hash(j->plan),
		j->topo_hash[0] ? j->topo_hash : "-");
	fprintf(fp, "autosync:   sets");
	for (size_t i = 0; i < j->nenv; i++)
		if (strncmp(j->env[i].name, "AUTOSYNC_", 9))
			fprintf(fp, " %s=%s", j->env[i].name,
				asi_quote(j->env[i].value, q, sizeof(q)));
	for (size_t i = 0; i < j->nenv; i++)
		if (!strncmp(j->env[i].name, "AUTOSYNC_", 9) &&
		    strcmp(j->env[i].name, "AUTOSYNC_INJECTED"))
			fprintf(fp, " %s", j->env[i].name);
	fprintf(fp, "\n");
	for (unsigned r = 0; r < j->nranks && r < 8; r++) {
		fprintf(fp, "autosync:   local rank %u:", r);
		for (size_t i = 0; i < j->rank_n[r]; i++)
			fprintf(fp, " %s=%s",
				j->rank_view[r * MAX_RANK_ENV + i].name,
				j->rank_view[r * MAX_RANK_ENV + i].value);
		fprintf(fp, "\n");
	}
	if (j->topo && j->tasks && j->tasks < autosync_topo_ngpus(j->topo))
		fprintf(fp,
			"autosync:   %u task(s) for %u GPUs: no per-rank NIC "
			"choice; each process chooses its own\n",
			j->tasks, autosync_topo_ngpus(j->topo));
	if (j->autotune)
		fprintf(fp,
			"autosync:   HOROVOD_AUTOTUNE is set: Horovod's "
			"autotuner keeps its fusion threshold and cycle time; "
			"autosync sets no HOROVOD_ variable\n");
	if (j->nskipped) {
		fprintf(fp, "autosync:   kept the user's");
		for (size_t i = 0; i < j->nskipped; i++)
			fprintf(fp, " %s", j->skipped[i]);
		fprintf(fp, "\n");
	}
	if (fclose(fp) != 0) {
		free(j->summary);
		j->summary = NULL;
	}
}

/* ---------------------------------------------------------------- run */

int autosync_job_run(autosync_job_t *j, autosync_error_t *errp)
{
	if (settable(j, errp) < 0)
		return -1;
	j->ran = 1;
	j->inherited = env_copy(j, "AUTOSYNC_INJECTED");
	/* nothing to plan: no topology work either */
	if (!j->plan_file && !j->model_spec) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "no model named (use "
					  "--autosync-model=NAME or a path to "
					  "a model file)");
	}
	if (load_topology(j, errp) < 0)
		return -1;
	if (j->plan_file) {
		if (load_plan_file(j, errp) < 0)
			return -1;
	} else if (load_model(j, errp) < 0 || adjust_model(j, errp) < 0 ||
		   search(j, errp) < 0) {
		return -1;
	}
	if (job_env(j, errp) < 0 || rank_env(j, errp) < 0 ||
	    injected_env(j, errp) < 0 || record_skipped(j, errp) < 0)
		return -1;
	summarise(j);
	return 0;
}

/* The plan (or, when 'plan' is NULL, the NCCL topology XML) as text in a
 * malloc'ed buffer. */
static int render(const autosync_plan_t *plan, const autosync_topo_t *topo,
		  char **text, size_t *len, autosync_error_t *errp)
{
	FILE *fp = open_memstream(text, len);
	int rc;

	if (!fp)
		return autosync_errprintf(errp, "%s", strerror(errno));
	rc = plan ? autosync_plan_write(plan, fp, errp)
		  : autosync_topo_write_nccl_xml(topo, fp, errp);
	if (fclose(fp) != 0 && rc == 0)
		rc = autosync_errprintf(errp, "%s", strerror(errno));
	if (rc < 0) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

static int write_one(const autosync_job_t *j, const autosync_plan_t *plan,
		     const char *name, const char *what, autosync_error_t *errp)
{
	autosync_error_t err = {.text = ""};
	char *text = NULL;
	size_t len = 0;
	int rv;

	if (render(plan, j->topo, &text, &len, &err) < 0)
		return autosync_errprintf(errp, "%s: %s", what, err.text);
	rv = job_write_in(j->dir, name, text, len, errp);
	free(text);
	return rv;
}

int autosync_job_write_files(autosync_job_t *j, autosync_error_t *errp)
{
	if (!j || !j->plan || !j->dir) {
		errno = EINVAL;
		return autosync_errprintf(errp, "job: %s",
					  !j || !j->plan ? "not planned"
							 : "no job directory");
	}
	if (write_one(j, j->plan, AUTOSYNC_JOB_PLAN_FILE, "plan", errp) < 0)
		return -1;
	if (j->topo && autosync_topo_ngpus(j->topo) > 0)
		return write_one(j, NULL, AUTOSYNC_JOB_TOPO_FILE,
				 "NCCL topology", errp);
	return 0;
}

int autosync_job_env_allowed(const char *name, int per_rank)
{
	static const char *const own[] = {
	    "AUTOSYNC_PLAN",	 "AUTOSYNC_PLAN_HASH",	 "AUTOSYNC_TOPO_HASH",
	    "AUTOSYNC_REPORT",	 "AUTOSYNC_INJECTED",	 "NCCL_TOPO_FILE",
	    "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN",
	};
	static const char *const rank[] = {
	    "NCCL_IB_HCA",
	    "NCCL_SOCKET_IFNAME",
	    "NCCL_NET_GDR_LEVEL",
	    "NCCL_P2P_LEVEL",
	};
	const char *const *set = per_rank ? rank : own;
	size_t n = per_rank ? sizeof(rank) / sizeof(rank[0])
			    : sizeof(own) / sizeof(own[0]);

	if (!name)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, set[i]))
			return 1;
	return !per_rank && autosync_plan_env_allowed(name);
}

/* ------------------------------------------------------------- outputs */

const autosync_plan_t *autosync_job_plan(const autosync_job_t *j)
{
	return j ? j->plan : NULL;
}

const autosync_topo_t *autosync_job_topology(const autosync_job_t *j)
{
	return j ? j->topo : NULL;
}

const autosync_model_t *autosync_job_model(const autosync_job_t *j)
{
	return j ? j->model : NULL;
}

size_t autosync_job_nenv(const autosync_job_t *j)
{
	return j ? j->nenv : 0;
}

const autosync_var_t *autosync_job_env(const autosync_job_t *j, size_t i)
{
	return j && i < j->nenv ? &j->env_view[i] : NULL;
}

unsigned autosync_job_nranks(const autosync_job_t *j)
{
	return j ? j->nranks : 0;
}

size_t autosync_job_rank_nenv(const autosync_job_t *j, unsigned rank)
{
	return j && j->nranks ? j->rank_n[rank % j->nranks] : 0;
}

const autosync_var_t *autosync_job_rank_env(const autosync_job_t *j,
					    unsigned rank, size_t i)
{
	unsigned r;

	if (!j || !j->nranks)
		return NULL;
	r = rank % j->nranks;
	return i < j->rank_n[r] ? &j->rank_view[r * MAX_RANK_ENV + i] : NULL;
}

size_t autosync_job_nskipped(const autosync_job_t *j)
{
	return j ? j->nskipped : 0;
}

const char *autosync_job_skipped(const autosync_job_t *j, size_t i)
{
	return j && i < j->nskipped ? j->skipped[i] : NULL;
}

const char *autosync_job_topo_hash(const autosync_job_t *j)
{
	return j ? j->topo_hash : "";
}

double autosync_job_plan_ms(const autosync_job_t *j)
{
	return j ? j->plan_ms : 0;
}

const char *autosync_job_summary(const autosync_job_t *j)
{
	return j && j->summary ? j->summary : "";
}

int autosync_job_feedback(const autosync_job_t *j, autosync_feedback_rec_t *r,
			  autosync_error_t *errp)
{
	if (!j || !r || !j->plan) {
		errno = EINVAL;
		return autosync_errprintf(errp, "job: not planned");
	}
	if (autosync_feedback_set_plan(r, j->plan, errp) < 0)
		return -1;
	snprintf(r->source, sizeof(r->source), "plugin");
	/* the node's own view, also for a plan made elsewhere */
	snprintf(r->topo_hash, sizeof(r->topo_hash), "%s", j->topo_hash);
	r->scale = 1;
	/* what the job's user steered: a plan file of theirs decides all the
	 * plan's side; a model file of theirs, or their batch size or
	 * measured compute, the model and what was planned from it; variables
	 * they kept over the plan's, what is measured */
	if (j->plan_file)
		r->influenced |=
		    AUTOSYNC_FEEDBACK_F_PLANNED | AUTOSYNC_FEEDBACK_F_MODEL |
		    AUTOSYNC_FEEDBACK_F_MODEL_HASH | AUTOSYNC_FEEDBACK_F_BATCH |
		    AUTOSYNC_FEEDBACK_F_FRAMEWORK |
		    AUTOSYNC_FEEDBACK_F_CLUSTER | AUTOSYNC_FEEDBACK_F_NODES |
		    AUTOSYNC_FEEDBACK_F_GPUS_PER_NODE;
	if (!j->plan_file && j->model_spec && is_path(j->model_spec))
		r->influenced |=
		    AUTOSYNC_FEEDBACK_F_PLANNED | AUTOSYNC_FEEDBACK_F_MODEL |
		    AUTOSYNC_FEEDBACK_F_MODEL_HASH | AUTOSYNC_FEEDBACK_F_BATCH;
	if (!j->plan_file && (j->batch || j->step_compute > 0))
		r->influenced |= AUTOSYNC_FEEDBACK_F_PLANNED |
				 AUTOSYNC_FEEDBACK_F_MODEL_HASH |
				 AUTOSYNC_FEEDBACK_F_BATCH;
	if (j->nskipped)
		r->influenced |= AUTOSYNC_FEEDBACK_F_MEASUREMENTS;
	return 0;
}
