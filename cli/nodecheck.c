/* nodecheck.c - 'autosync config check --node': a valid site config
 * against this node. Facts go to stdout, one line each; problems to
 * stderr as "FILE: what". The last lines, one per mode the site allows,
 * say what a job here would get: the mode lines come from the job
 * pipeline run exactly as the SPANK plugin's planning child runs it (the
 * site config, the model, one node, the job directory, the plan and
 * topology files written), on every GPU of the node. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/job.h"
#include "cli.h"

struct check {
	const char *path; /* the site config */
	const autosync_siteconf_t *site;
	int problems;
};

__attribute__((format(printf, 2, 3))) static void problem(struct check *c,
							  const char *fmt, ...)
{
	va_list ap;

	fflush(stdout); /* in order with the facts, when both are one stream */
	fprintf(stderr, "%s: ", c->path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->problems++;
}

/* ------------------------------------------------------- the topology */

static void list_nics(const autosync_topo_t *t, int management, char *buf,
		      size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < autosync_topo_nnics(t) && o < len; i++) {
		const autosync_topo_nic_t *n = autosync_topo_nic(t, i);
		if (n->management != management)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
				      n->name[0]     ? n->name
				      : n->netdev[0] ? n->netdev
						     : n->busid);
	}
}

static unsigned count_nics(const autosync_topo_t *t, int management)
{
	unsigned n = 0;

	for (unsigned i = 0; i < autosync_topo_nnics(t); i++)
		n += autosync_topo_nic(t, i)->management == management;
	return n;
}

/* The node as hwloc (or the topology file) shows it, before the site's
 * fabric NICs are applied. */
static void show_topology(const autosync_topo_t *t, const char *src)
{
	char fab[512], mgmt[512];

	list_nics(t, 0, fab, sizeof(fab));
	list_nics(t, 1, mgmt, sizeof(mgmt));
	printf("topology: %s: %u GPU%s; NICs: %s%s%s%s\n", src,
	       autosync_topo_ngpus(t), autosync_topo_ngpus(t) == 1 ? "" : "s",
	       fab[0] ? fab : "none", mgmt[0] ? " (fast); " : "", mgmt,
	       mgmt[0] ? " (slow)" : "");
}

/* Each fabric NIC the site names must be on the node: the topology's own
 * matching (RDMA device or interface name), one name at a time. */
static void check_fabric_nics(struct check *c, autosync_topo_t *t)
{
	size_t n = autosync_siteconf_nfabric_nics(c->site);
	char on[512] = "";
	size_t o = 0;

	if (!n) {
		printf("network.fabric_nics: not set: the fast NICs above "
		       "carry the job's traffic\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const char *name = autosync_siteconf_fabric_nic(c->site, i);
		if (autosync_topo_set_fabric_nics(t, &name, 1, NULL) < 0)
			problem(c,
				"network.fabric_nics: %s is not on this node",
				name);
		else if (o < sizeof(on))
			o += (size_t)snprintf(on + o, sizeof(on) - o, "%s%s",
					      o ? ", " : "", name);
	}
	if (on[0])
		printf("network.fabric_nics: on this node: %s\n", on);
}

/* ------------------------------------------------------------- paths */

static void check_file(struct check *c, const char *key, const char *path,
		       const char *unset)
{
	if (!path[0]) {
		printf("%s: not set: %s\n", key, unset);
		return;
	}
	if (access(path, R_OK) < 0)
		problem(c, "%s: %s: %s", key, path, strerror(errno));
	else
		printf("%s: %s: readable\n", key, path);
}

static void check_catalog(struct check *c)
{
	const char *dir = autosync_siteconf_catalog_dir(c->site);
	autosync_error_t err = {.text = ""};
	char **names = NULL;
	size_t n = 0;

	if (autosync_catalog_list(dir[0] ? dir : NULL, &names, &n, &err) < 0 ||
	    n == 0) {
		problem(c, "catalog_dir: %s: %s", dir[0] ? dir : "(not set)",
			err.text[0] ? err.text : "no models");
	} else {
		printf("catalog_dir: %s: %zu model%s\n",
		       dir[0] ? dir : "(not set: the installed catalog)", n,
		       n == 1 ? "" : "s");
	}
	autosync_catalog_free(names);
}

/* The directory a file would be created in must exist. */
static void check_dir_of(struct check *c, const char *key, const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;

	if (!path[0])
		return;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		problem(c, "%s: %s: no such directory", key, dir);
	else
		printf("%s: %s: in an existing directory\n", key, path);
}

static void check_paths(struct check *c)
{
	const autosync_siteconf_t *s = c->site;
	const char *pd = autosync_siteconf_nccl_plugin_dir(s);

	check_catalog(c);
	check_file(c, "calibration", autosync_siteconf_calibration(s),
		   "the built-in cost constants");
	check_file(c, "topology_xml", autosync_siteconf_topology_xml(s),
		   "the node's own topology (hwloc)");
	/* a learned simulator: said only when the site has one (whether it
	 * loads shows in the job pipeline's lines below) */
	if (autosync_siteconf_simulator(s)[0]) {
		check_file(c, "simulator", autosync_siteconf_simulator(s), "");
		check_file(c, "simulator_module",
			   autosync_siteconf_simulator_module(s), "");
	}
	check_dir_of(c, "feedback.path", autosync_siteconf_feedback_path(s));
	if (autosync_siteconf_nccl_plugins(s)) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/libnccl-tuner-autosync.so",
			 pd[0] ? pd : AUTOSYNC_LIBDIR);
		check_file(c, "nccl_plugin_dir", p, "");
	}
}

/* ----------------------------------------------------- the job pipeline */

/* What the pipeline planned without (a simulator that does not load, a
 * compression the site does not allow): a problem of the config. */
static void pipeline_warning(int level, const char *msg, void *arg)
{
	if (level <= AUTOSYNC_LOG_WARNING)
		problem(arg, "%s", msg);
}

/* A job given the whole node: no variable of the caller's shell. */
static const char *no_env(const char *name, void *arg)
{
	(void)name;
	(void)arg;
	return NULL;
}

static void remove_dir(const char *dir)
{
	char p[PATH_MAX];
	static const char *const files[] = {
	    AUTOSYNC_JOB_PLAN_FILE, AUTOSYNC_JOB_TOPO_FILE, "user-plan.yaml"};

	if (!dir[0])
		return;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (snprintf(p, sizeof(p), "%s/%s", dir, files[i]) <
		    (int)sizeof(p))
			unlink(p);
	}
	rmdir(dir);
}

/* What the plugin's planning child does at a step start on this node. */
static autosync_job_t *run_job(struct check *c, const struct cli_input *in,
			       const char *model, const char *plan_file,
			       char *dir, size_t len, autosync_error_t *err)
{
	const char *tmp = getenv("TMPDIR");
	autosync_job_t *j = autosync_job_create(err);

	snprintf(dir, len, "%s/autosync-check.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		autosync_errprintf(err, "%s: %s", dir, strerror(errno));
		dir[0] = '\0';
		autosync_job_destroy(j);
		return NULL;
	}
	if (!j)
		return NULL;
	autosync_job_set_getenv(j, no_env, NULL);
	autosync_job_set_log(j, pipeline_warning, c);
	if (autosync_job_set_site(j, c->site, err) < 0 ||
	    (plan_file ? autosync_job_set_plan_file(j, plan_file, err)
		       : autosync_job_set_model(j, model, err)) < 0 ||
	    autosync_job_set_nodes(j, 1, err) < 0 ||
	    cli_input_to_job(in, j, 1, err) < 0 ||
	    autosync_job_set_dir(j, dir, err) < 0 ||
	    autosync_job_run(j, err) < 0 ||
	    autosync_job_write_files(j, err) < 0) {
		autosync_job_destroy(j);
		return NULL;
	}
	return j;
}

/* "(4 GPUs, 4 NICs, ib)": the job's GPUs, the fabric NICs its ranks use
 * (the nearest of each GPU; the first fabric NIC on a GPU-less node) and
 * the transport the plan was made for, when known. */
static void what(const autosync_job_t *j, char *buf, size_t len)
{
	const autosync_topo_t *t = autosync_job_topology(j);
	autosync_plan_summary_t s = {0};
	unsigned g, n = 0;
	int tr;

	if (!t) {
		snprintf(buf, len, "(no node topology)");
		return;
	}
	g = autosync_topo_ngpus(t);
	for (unsigned i = 0; i < autosync_topo_nnics(t); i++) {
		int used = 0;
		for (unsigned k = 0; k < g; k++)
			used |= autosync_topo_gpu(t, k)->nearest_nic == (int)i;
		n += used;
	}
	if (g == 0)
		n = count_nics(t, 0) > 0;
	tr = autosync_plan_summary(autosync_job_plan(j), &s) == 0
		 ? s.cluster.transport
		 : AUTOSYNC_TRANSPORT_UNKNOWN;
	snprintf(buf, len, "(%u GPU%s, %u NIC%s%s%s)", g, g == 1 ? "" : "s", n,
		 n == 1 ? "" : "s", tr ? ", " : "",
		 tr ? autosync_transport_name(tr) : "");
}

/* The plan a job got, written where a user's plan file would be. */
static int save_plan(const autosync_job_t *j, const char *dir, char *path,
		     size_t len)
{
	FILE *fp;
	int rv;

	if (snprintf(path, len, "%s/user-plan.yaml", dir) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!(fp = fopen(path, "w")))
		return -1;
	rv = autosync_plan_write(autosync_job_plan(j), fp, NULL);
	return fclose(fp) != 0 ? -1 : rv;
}

/* 'plan': the plan auto made, applied as a user's plan file. */
static void plan_mode(struct check *c, const struct cli_input *in,
		      const autosync_job_t *auto_job, const char *auto_dir)
{
	autosync_error_t err = {.text = ""};
	autosync_job_t *j;
	char file[PATH_MAX], dir[PATH_MAX], w[64];

	if (!auto_job) {
		printf("plan: not checked: auto made no plan to apply\n");
		return;
	}
	if (save_plan(auto_job, auto_dir, file, sizeof(file)) < 0) {
		problem(c, "plan: cannot write a plan file: %s",
			strerror(errno));
		return;
	}
	j = run_job(c, in, NULL, file, dir, sizeof(dir), &err);
	if (j) {
		what(j, w, sizeof(w));
		printf("plan: that plan, as a user's plan file -> plan %s %s\n",
		       autosync_plan_hash(autosync_job_plan(j)), w);
	} else {
		printf("plan: fails open: %s\n", err.text);
		c->problems++;
	}
	autosync_job_destroy(j);
	remove_dir(dir);
}

static void modes(struct check *c, const struct cli_input *in,
		  const char *model)
{
	autosync_error_t err = {.text = ""};
	autosync_job_t *j;
	char dir[PATH_MAX], w[64] = "", line[1100] = "";

	j = run_job(c, in, model, NULL, dir, sizeof(dir), &err);
	if (j) {
		what(j, w, sizeof(w));
		snprintf(line, sizeof(line), "%s on this node -> plan %s %s",
			 model, autosync_plan_hash(autosync_job_plan(j)), w);
	} else {
		c->problems++;
	}
	printf("off: the job runs as without autosync\n");
	if (autosync_siteconf_mode_allowed(c->site, AUTOSYNC_ALLOW_AUTO))
		printf("auto: %s%s\n",
		       j ? "" : "fails open: ", j ? line : err.text);
	if (autosync_siteconf_mode_allowed(c->site, AUTOSYNC_ALLOW_REQUIRED))
		printf("required: %s%s\n",
		       j ? "" : "the step fails: ", j ? line : err.text);
	if (autosync_siteconf_mode_allowed(c->site, AUTOSYNC_ALLOW_PLAN))
		plan_mode(c, in, j, dir);
	autosync_job_destroy(j);
	remove_dir(dir);
}

/* ------------------------------------------------------------- the check */

int cli_config_node(const char *path, const autosync_siteconf_t *site,
		    const struct cli_input *in, const char *model)
{
	struct check c = {path, site, 0};
	autosync_error_t err = {.text = ""};
	const char *xml = autosync_siteconf_topology_xml(site);
	const char *src = in->topology ? in->topology : xml[0] ? xml : "live";
	autosync_topo_t *t;
	int none;

	t = cli_load_topology(in, src, &none, &err);
	if (t) {
		show_topology(t,
			      strcmp(src, "live") ? src : "live (this node)");
		check_fabric_nics(&c, t);
	} else if (!none) {
		problem(&c, "topology: %s", err.text);
	}
	autosync_topo_destroy(t);
	check_paths(&c);
	modes(&c, in, model);
	return c.problems ? 1 : 0;
}
