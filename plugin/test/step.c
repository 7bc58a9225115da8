/* Unit tests of the plugin's per-step work, on real machines' topologies. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/planner.h"
#include "step.h"
#include "tap.h"

static char dir[] = "/tmp/autosync-step-XXXXXX";
static char fixtures[1024], catalog[1024];

static const char *user_set[8];

static int has_env(const char *name, void *arg)
{
	(void) arg;
	for (int i = 0; user_set[i]; i++)
		if (!strcmp(user_set[i], name))
			return 1;
	return 0;
}

static autosync_siteconf_t *site_with(const char *xml, const char *extra)
{
	char p[1200];
	FILE *fp;
	autosync_error_t err = { .text = "" };
	autosync_siteconf_t *s;

	snprintf(p, sizeof(p), "%s/site.yaml", dir);
	fp = fopen(p, "w");
	fprintf(fp, "catalog_dir: %s\nplan_budget_ms: 10000\n", catalog);
	if (xml)
		fprintf(fp, "topology_xml: %s/%s\n", fixtures, xml);
	if (extra)
		fputs(extra, fp);
	fclose(fp);
	s = autosync_siteconf_load(p, &err);
	if (!s)
		bail_out("site config: %s", err.text);
	return s;
}

static const char *env_of(const struct as_step_out *o, const char *name)
{
	for (size_t i = 0; i < o->nenv; i++)
		if (!strcmp(o->env[i].name, name))
			return o->env[i].value;
	return NULL;
}

static const char *rank_env(const struct as_step_out *o, unsigned r,
			    const char *name)
{
	for (size_t i = 0; r < o->nranks && i < o->rank_nenv[r]; i++)
		if (!strcmp(o->rank_env[r][i].name, name))
			return o->rank_env[r][i].value;
	return NULL;
}

static void test_juwels(void)
{
	autosync_siteconf_t *site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", NULL);
	struct as_step_out *o = calloc(1, sizeof(*o)), *o2 = calloc(1, sizeof(*o2));
	char jd[1100], p[1200];
	struct as_step_in in = {
		.model = "bert-large", .site = site, .nnodes = 3, .uid = getuid(),
		.step_gpus = "0,1,2,3", .cuda_visible_devices = "0,1,2,3",
		.jobdir = jd, .has_env = has_env,
	};
	struct stat st;

	snprintf(jd, sizeof(jd), "%s/job", dir);
	mkdir(jd, 0700);
	ok(as_step_plan(&in, o) == 0, "bert-large on 3 JUWELS Booster nodes (%s)",
	   o->err);
	ok(o->nranks == 4, "4 local ranks, one per GPU");
	is(rank_env(o, 0, "NCCL_IB_HCA"), "=mlx5_0:1", "rank 0 uses mlx5_0 (its PCIe switch)");
	is(rank_env(o, 1, "NCCL_IB_HCA"), "=mlx5_1:1", "rank 1 uses mlx5_1");
	is(rank_env(o, 2, "NCCL_IB_HCA"), "=mlx5_2:1", "rank 2 uses mlx5_2");
	is(rank_env(o, 3, "NCCL_IB_HCA"), "=mlx5_3:1", "rank 3 uses mlx5_3");
	snprintf(p, sizeof(p), "%s/plan.yaml", jd);
	is(env_of(o, "AUTOSYNC_PLAN"), p, "AUTOSYNC_PLAN points into the job directory");
	ok(stat(p, &st) == 0 && st.st_size > 100, "the plan file is there");
	{
		autosync_error_t err = { .text = "" };
		autosync_plan_t *back = autosync_plan_load(p, &err);
		ok(back && !strcmp(autosync_plan_hash(back), o->plan_hash),
		   "it parses back to the same plan hash (%s)", err.text);
		autosync_plan_destroy(back);
	}
	snprintf(p, sizeof(p), "%s/nccl-topo.xml", jd);
	is(env_of(o, "NCCL_TOPO_FILE"), p, "NCCL_TOPO_FILE points to the node's NCCL XML");
	ok(stat(p, &st) == 0 && st.st_size > 100, "the NCCL XML is there");
	is(env_of(o, "AUTOSYNC_PLAN_HASH"), o->plan_hash, "AUTOSYNC_PLAN_HASH");
	ok(strlen(o->plan_hash) == 16, "plan hash has 16 hex digits");
	ok(env_of(o, "AUTOSYNC_INJECTED") &&
		   strstr(env_of(o, "AUTOSYNC_INJECTED"), "NCCL_TOPO_FILE") &&
		   strstr(env_of(o, "AUTOSYNC_INJECTED"), "NCCL_IB_HCA"),
	   "AUTOSYNC_INJECTED lists what was set: %s", env_of(o, "AUTOSYNC_INJECTED"));
	ok(o->nskipped == 0, "nothing skipped");
	ok(strstr(o->summary, "autosync: plan for bert-large on 3 node(s) x 4 GPU(s)") != NULL,
	   "summary first line");
	ok(o->rec.predicted > 0 && o->rec.nbuckets > 0 && o->rec.nbaselines == 5 &&
		   !strcmp(o->rec.model, "bert-large") && o->rec.nodes == 3,
	   "feedback record prefilled");

	/* determinism: the same inputs give the same plan, byte for byte */
	snprintf(jd, sizeof(jd), "%s/job2", dir);
	mkdir(jd, 0700);
	ok(as_step_plan(&in, o2) == 0 && !strcmp(o->plan_hash, o2->plan_hash),
	   "same inputs, same plan hash");
	{
		char a[1200], b[1200], cmd[2600];
		snprintf(a, sizeof(a), "%s/job/plan.yaml", dir);
		snprintf(b, sizeof(b), "%s/job2/plan.yaml", dir);
		snprintf(cmd, sizeof(cmd), "cmp -s %s %s", a, b);
		ok(system(cmd) == 0, "same plan bytes");
	}

	/* the user's own variables are kept and recorded */
	memset(o2, 0, sizeof(*o2));
	user_set[0] = "NCCL_TOPO_FILE";
	user_set[1] = "NCCL_IB_HCA";
	user_set[2] = NULL;
	ok(as_step_plan(&in, o2) == 0, "plan with user-set NCCL variables");
	ok(env_of(o2, "NCCL_TOPO_FILE") == NULL && rank_env(o2, 0, "NCCL_IB_HCA") == NULL,
	   "they are not overwritten");
	ok(o2->nskipped == 2 && !strcmp(o2->skipped[0], "NCCL_TOPO_FILE") &&
		   !strcmp(o2->skipped[1], "NCCL_IB_HCA"),
	   "and recorded as skipped");
	ok(strstr(o2->summary, "kept the user's NCCL_TOPO_FILE NCCL_IB_HCA") != NULL,
	   "the summary says so");
	{
		autosync_error_t err = { .text = "" };
		autosync_plan_t *back = autosync_plan_load(o2->plan_path, &err);
		ok(back && !strcmp(autosync_plan_skipped_env(back, 0), "NCCL_TOPO_FILE") &&
			   !strcmp(autosync_plan_skipped_env(back, 1), "NCCL_IB_HCA") &&
			   autosync_plan_skipped_env(back, 2) == NULL,
		   "the plan file lists them under skipped_env (%s)", err.text);
		ok(back && !strcmp(autosync_plan_hash(back), o->plan_hash),
		   "the plan hash does not depend on them");
		autosync_plan_destroy(back);
	}
	user_set[0] = NULL;

	/* a subset of the GPUs */
	memset(o2, 0, sizeof(*o2));
	in.step_gpus = "2,3";
	in.cuda_visible_devices = "2,3";
	ok(as_step_plan(&in, o2) == 0 && o2->nranks == 2, "SLURM_STEP_GPUS=2,3: 2 ranks");
	is(rank_env(o2, 0, "NCCL_IB_HCA"), "=mlx5_2:1", "local rank 0 is GPU 2, near mlx5_2");
	ok(strcmp(o2->topo_hash, o->topo_hash) != 0, "another allocation, another topology hash");

	/* failures */
	memset(o2, 0, sizeof(*o2));
	in.step_gpus = "0,1,7";
	in.cuda_visible_devices = "0,1,7";
	ok(as_step_plan(&in, o2) < 0 && strstr(o2->err, "topology: "),
	   "a GPU that does not exist: %s", o2->err);
	memset(o2, 0, sizeof(*o2));
	in.step_gpus = in.cuda_visible_devices = "0";
	in.model = "no-such-model";
	ok(as_step_plan(&in, o2) < 0 && !strncmp(o2->err, "model: ", 7),
	   "unknown model: %s", o2->err);
	memset(o2, 0, sizeof(*o2));
	snprintf(p, sizeof(p), "%s/evil.yaml", dir);
	if (symlink("/etc/shadow", p) < 0)
		bail_out("symlink");
	in.model = p;
	ok(as_step_plan(&in, o2) < 0 && strstr(o2->err, "is a symbolic link"),
	   "a symlinked model file is refused: %s", o2->err);
	memset(o2, 0, sizeof(*o2));
	in.model = "./evil.yaml";
	in.cwd = dir;
	ok(as_step_plan(&in, o2) < 0 && strstr(o2->err, "is a symbolic link"),
	   "also relative to the job's directory");
	memset(o2, 0, sizeof(*o2));
	in.model = "";
	ok(as_step_plan(&in, o2) < 0 && strstr(o2->err, "no model named"),
	   "no model: %s", o2->err);

	/* --autosync=PATH: a given plan file is validated and used */
	memset(o2, 0, sizeof(*o2));
	snprintf(p, sizeof(p), "%s/job/plan.yaml", dir);
	in.plan_file = p;
	snprintf(jd, sizeof(jd), "%s/job3", dir);
	mkdir(jd, 0700);
	ok(as_step_plan(&in, o2) == 0 && !strcmp(o2->plan_hash, o->plan_hash),
	   "a plan file is used as it is (%s)", o2->err);
	memset(o2, 0, sizeof(*o2));
	snprintf(p, sizeof(p), "%s/site.yaml", dir);
	ok(as_step_plan(&in, o2) < 0 && !strncmp(o2->err, "plan file: ", 11),
	   "a file that is no plan is refused: %s", o2->err);
	in.plan_file = NULL;

	autosync_siteconf_destroy(site);
	free(o);
	free(o2);
}

static void test_nccl_plugins(void)
{
	char extra[1400], p[1400];
	autosync_siteconf_t *site;
	struct as_step_out *o = calloc(1, sizeof(*o));
	char jd[1100];
	struct as_step_in in = {
		.model = "resnet50", .nnodes = 2, .uid = getuid(),
		.step_gpus = "0,1", .cuda_visible_devices = "0,1", .jobdir = jd,
		.has_env = has_env,
	};
	FILE *fp;

	snprintf(p, sizeof(p), "%s/nccl", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/nccl/libnccl-tuner-autosync.so", dir);
	if ((fp = fopen(p, "w")))
		fclose(fp);
	snprintf(extra, sizeof(extra), "nccl_plugins: true\nnccl_plugin_dir: %s/nccl\n", dir);
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", extra);
	in.site = site;
	snprintf(jd, sizeof(jd), "%s/job-nccl", dir);
	mkdir(jd, 0700);
	ok(as_step_plan(&in, o) == 0, "plan with the NCCL plugins enabled (%s)", o->err);
	is(env_of(o, "NCCL_TUNER_PLUGIN"), p, "NCCL_TUNER_PLUGIN points at the installed tuner");
	ok(env_of(o, "NCCL_PROFILER_PLUGIN") == NULL, "a plugin that is not installed is not named");
	memset(o, 0, sizeof(*o));
	user_set[0] = "NCCL_TUNER_PLUGIN";
	user_set[1] = NULL;
	ok(as_step_plan(&in, o) == 0 && env_of(o, "NCCL_TUNER_PLUGIN") == NULL &&
		   o->nskipped == 1,
	   "the user's own NCCL_TUNER_PLUGIN wins (%zu skipped: %s)", o->nskipped, o->skipped[0]);
	user_set[0] = NULL;
	autosync_siteconf_destroy(site);

	/* nccl_calibrate: true marks the plan the tuner reads */
	snprintf(extra, sizeof(extra), "nccl_calibrate: true\n");
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", extra);
	in.site = site;
	memset(o, 0, sizeof(*o));
	ok(as_step_plan(&in, o) == 0 && env_of(o, "AUTOSYNC_PLAN"),
	   "plan with nccl_calibrate: true (%s)", o->err);
	{
		char *text = NULL;
		size_t len = 0;
		FILE *pf = env_of(o, "AUTOSYNC_PLAN") ? fopen(env_of(o, "AUTOSYNC_PLAN"), "r") : NULL;
		if (pf) {
			text = calloc(1, 1 << 20);
			len = text ? fread(text, 1, (1 << 20) - 1, pf) : 0;
			fclose(pf);
		}
		ok(len > 0 && strstr(text, "\n  nccl_calibrate: true\n") != NULL,
		   "the plan file says job.nccl_calibrate: true");
		free(text);
	}
	autosync_siteconf_destroy(site);
	free(o);
}

/* the site's network.fabric_nics chooses the ranks' NICs */
static void test_fabric_nics(void)
{
	autosync_siteconf_t *site;
	struct as_step_out *o = calloc(1, sizeof(*o));
	char jd[1100];
	struct as_step_in in = {
		.model = "resnet50", .nnodes = 2, .uid = getuid(),
		.step_gpus = "0,1", .cuda_visible_devices = "0,1", .jobdir = jd,
		.has_env = has_env,
	};

	snprintf(jd, sizeof(jd), "%s/job-fabric", dir);
	mkdir(jd, 0700);
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml",
			 "network:\n  fabric_nics: [mlx5_3]\n");
	in.site = site;
	ok(as_step_plan(&in, o) == 0, "fabric_nics [mlx5_3]: planned (%s)", o->err);
	is(rank_env(o, 0, "NCCL_IB_HCA"), "=mlx5_3:1", "rank 0 uses mlx5_3");
	is(rank_env(o, 1, "NCCL_IB_HCA"), "=mlx5_3:1",
	   "rank 1 too (its own nearest NIC, mlx5_1, is not on the list)");
	autosync_siteconf_destroy(site);
	memset(o, 0, sizeof(*o));
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml",
			 "network:\n  fabric_nics: [hsn0]\n");
	in.site = site;
	ok(as_step_plan(&in, o) < 0 && strstr(o->err, "none of the fabric NICs (hsn0) is on this node"),
	   "a list naming no NIC of the node fails the planning, naming it: %s", o->err);
	autosync_siteconf_destroy(site);
	free(o);
}

static void test_report(void)
{
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r));
	char err[256];

	ok(as_step_parse_report("# step times\n0.5\n 0.25 \n\n0.75\n", r, err,
				sizeof(err)) == 3 &&
		   r->measured_count == 3 && r->measured_mean == 0.5 &&
		   r->measured[1] == 0.25,
	   "report: three step times, mean 0.5");
	ok(as_step_parse_report("0.5\nfast\n", r, err, sizeof(err)) < 0 &&
		   !strcmp(err, "line 2: not a step time in seconds: 'fast'"),
	   "report: a bad line is named: %s", err);
	ok(as_step_parse_report("-1\n", r, err, sizeof(err)) < 0, "negative refused");
	free(r);
}

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".";

	plan(NO_PLAN);
	if (getenv("AUTOSYNC_FIXTURES"))
		snprintf(fixtures, sizeof(fixtures), "%s", getenv("AUTOSYNC_FIXTURES"));
	else
		snprintf(fixtures, sizeof(fixtures), "%s/../shared/fixtures/topologies", src);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog", src);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_juwels();
	test_nccl_plugins();
	test_fabric_nics();
	test_report();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
