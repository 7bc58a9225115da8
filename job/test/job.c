/* Unit tests of the job pipeline, on real machines' topologies. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/job.h"
#include "tap.h"

static char dir[] = "/tmp/autosync-step-XXXXXX";
static char fixtures[1024], catalog[1024];

static const char *user_set[8];

/* what a step's environment holds, as the plugin would see it */
struct in {
	const char *model, *plan_file, *cwd, *jobdir;
	const char *cuda_visible_devices, *step_gpus;
	const autosync_siteconf_t *site;
	unsigned nnodes;
	const char *framework, *horovod_autotune;
	const char *nccl_net, *nccl_ib_disable;
	unsigned batch;
	double step_compute;
};

static const char *fake_env(const char *name, void *arg)
{
	const struct in *in = arg;

	if (!strcmp(name, "CUDA_VISIBLE_DEVICES"))
		return in->cuda_visible_devices;
	if (!strcmp(name, "SLURM_STEP_GPUS"))
		return in->step_gpus;
	if (!strcmp(name, "HOROVOD_AUTOTUNE"))
		return in->horovod_autotune;
	if (!strcmp(name, "NCCL_NET"))
		return in->nccl_net;
	if (!strcmp(name, "NCCL_IB_DISABLE"))
		return in->nccl_ib_disable;
	for (int i = 0; user_set[i]; i++)
		if (!strcmp(user_set[i], name))
			return "the user's";
	return NULL;
}

/* Run the pipeline and write the files; NULL with 'err' on failure. */
static autosync_job_t *run_job(const struct in *in, autosync_error_t *err)
{
	autosync_job_t *j = autosync_job_create(err);

	err->text[0] = '\0';
	if (!j)
		return NULL;
	autosync_job_set_getenv(j, fake_env, (void *)in);
	if (autosync_job_set_site(j, in->site, err) < 0 ||
	    autosync_job_set_model(j, in->model, err) < 0 ||
	    autosync_job_set_plan_file(j, in->plan_file, err) < 0 ||
	    autosync_job_set_nodes(j, in->nnodes, err) < 0 ||
	    autosync_job_set_batch(j, in->batch, err) < 0 ||
	    autosync_job_set_step_compute(j, in->step_compute, err) < 0 ||
	    (in->framework &&
	     autosync_job_set_framework(
		 j, autosync_framework_from_name(in->framework), err) < 0) ||
	    autosync_job_set_cwd(j, in->cwd, err) < 0 ||
	    autosync_job_set_dir(j, in->jobdir, err) < 0 ||
	    autosync_job_run(j, err) < 0 ||
	    autosync_job_write_files(j, err) < 0) {
		autosync_job_destroy(j);
		return NULL;
	}
	return j;
}

static autosync_siteconf_t *site_with(const char *xml, const char *extra)
{
	char p[1200];
	FILE *fp;
	autosync_error_t err = {.text = ""};
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

static const char *env_of(const autosync_job_t *j, const char *name)
{
	for (size_t i = 0; i < autosync_job_nenv(j); i++)
		if (!strcmp(autosync_job_env(j, i)->name, name))
			return autosync_job_env(j, i)->value;
	return NULL;
}

static const char *rank_env(const autosync_job_t *j, unsigned r,
			    const char *name)
{
	for (size_t i = 0; i < autosync_job_rank_nenv(j, r); i++)
		if (!strcmp(autosync_job_rank_env(j, r, i)->name, name))
			return autosync_job_rank_env(j, r, i)->value;
	return NULL;
}

static const char *hash_of(const autosync_job_t *j)
{
	return j ? autosync_plan_hash(autosync_job_plan(j)) : "(none)";
}

static void test_juwels(void)
{
	autosync_siteconf_t *site =
	    site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", NULL);
	autosync_error_t err = {.text = ""};
	autosync_job_t *o, *o2;
	autosync_feedback_rec_t *rec = calloc(1, sizeof(*rec));
	char jd[1100], p[1200];
	struct in in = {
	    .model = "bert-large",
	    .site = site,
	    .nnodes = 3,
	    .step_gpus = "0,1,2,3",
	    .cuda_visible_devices = "0,1,2,3",
	    .jobdir = jd,
	};
	struct stat st;

	snprintf(jd, sizeof(jd), "%s/job", dir);
	mkdir(jd, 0700);
	o = run_job(&in, &err);
	ok(o != NULL, "bert-large on 3 JUWELS Booster nodes (%s)", err.text);
	if (!o)
		bail_out("cannot go on");
	ok(autosync_job_nranks(o) == 4, "4 local ranks, one per GPU");
	is(rank_env(o, 0, "NCCL_IB_HCA"), "=mlx5_0:1",
	   "rank 0 uses mlx5_0 (its PCIe switch)");
	is(rank_env(o, 1, "NCCL_IB_HCA"), "=mlx5_1:1", "rank 1 uses mlx5_1");
	is(rank_env(o, 2, "NCCL_IB_HCA"), "=mlx5_2:1", "rank 2 uses mlx5_2");
	is(rank_env(o, 3, "NCCL_IB_HCA"), "=mlx5_3:1", "rank 3 uses mlx5_3");
	is(rank_env(o, 5, "NCCL_IB_HCA"), "=mlx5_1:1",
	   "local rank 5 of 4 GPUs: GPU 1's settings");
	snprintf(p, sizeof(p), "%s/plan.yaml", jd);
	is(env_of(o, "AUTOSYNC_PLAN"), p,
	   "AUTOSYNC_PLAN points into the job directory");
	ok(stat(p, &st) == 0 && st.st_size > 100, "the plan file is there");
	{
		autosync_plan_t *back = autosync_plan_load(p, &err);
		ok(back && !strcmp(autosync_plan_hash(back), hash_of(o)),
		   "it parses back to the same plan hash (%s)", err.text);
		autosync_plan_destroy(back);
	}
	snprintf(p, sizeof(p), "%s/nccl-topo.xml", jd);
	is(env_of(o, "NCCL_TOPO_FILE"), p,
	   "NCCL_TOPO_FILE points to the node's NCCL XML");
	ok(stat(p, &st) == 0 && st.st_size > 100, "the NCCL XML is there");
	is(env_of(o, "AUTOSYNC_PLAN_HASH"), hash_of(o), "AUTOSYNC_PLAN_HASH");
	ok(strlen(hash_of(o)) == 16, "plan hash has 16 hex digits");
	is(env_of(o, "AUTOSYNC_TOPO_HASH"), autosync_job_topo_hash(o),
	   "AUTOSYNC_TOPO_HASH");
	ok(env_of(o, "AUTOSYNC_INJECTED") &&
	       strstr(env_of(o, "AUTOSYNC_INJECTED"), "NCCL_TOPO_FILE") &&
	       strstr(env_of(o, "AUTOSYNC_INJECTED"), "NCCL_IB_HCA"),
	   "AUTOSYNC_INJECTED lists what was set: %s",
	   env_of(o, "AUTOSYNC_INJECTED"));
	ok(autosync_job_nskipped(o) == 0, "nothing skipped");
	ok(strstr(autosync_job_summary(o),
		  "autosync: plan for bert-large on 3 node(s) x 4 GPU(s)") !=
	       NULL,
	   "summary first line");
	ok(strstr(autosync_job_summary(o), "\nautosync:   reason: ") != NULL &&
	       strstr(autosync_job_summary(o),
		      "\nautosync:   the framework's default ddp-default: ") !=
		   NULL,
	   "the summary gives the reason line and compares with the "
	   "framework's default");
	ok(autosync_job_feedback(o, rec, &err) == 0 && rec->predicted > 0 &&
	       rec->nbuckets > 0 && rec->nbaselines == 5 &&
	       !strcmp(rec->model, "bert-large") && rec->nodes == 3 &&
	       !strcmp(rec->plan_hash, hash_of(o)),
	   "feedback record prefilled");
	ok(rec->influenced == 0,
	   "a catalog model, the site's defaults: nothing "
	   "in the record is the user's");

	/* determinism: the same inputs give the same plan, byte for byte */
	snprintf(jd, sizeof(jd), "%s/job2", dir);
	mkdir(jd, 0700);
	o2 = run_job(&in, &err);
	ok(o2 && !strcmp(hash_of(o), hash_of(o2)),
	   "same inputs, same plan hash");
	autosync_job_destroy(o2);
	{
		char a[1200], b[1200], cmd[2600];
		snprintf(a, sizeof(a), "%s/job/plan.yaml", dir);
		snprintf(b, sizeof(b), "%s/job2/plan.yaml", dir);
		snprintf(cmd, sizeof(cmd), "cmp -s %s %s", a, b);
		ok(system(cmd) == 0, "same plan bytes");
	}

	/* the user's own variables are kept and recorded */
	user_set[0] = "NCCL_TOPO_FILE";
	user_set[1] = "NCCL_IB_HCA";
	user_set[2] = NULL;
	o2 = run_job(&in, &err);
	ok(o2 != NULL, "plan with user-set NCCL variables (%s)", err.text);
	ok(o2 && env_of(o2, "NCCL_TOPO_FILE") == NULL &&
	       rank_env(o2, 0, "NCCL_IB_HCA") == NULL,
	   "they are not overwritten");
	ok(o2 && autosync_job_nskipped(o2) == 2 &&
	       !strcmp(autosync_job_skipped(o2, 0), "NCCL_TOPO_FILE") &&
	       !strcmp(autosync_job_skipped(o2, 1), "NCCL_IB_HCA"),
	   "and recorded as skipped");
	ok(o2 && strstr(autosync_job_summary(o2),
			"kept the user's NCCL_TOPO_FILE NCCL_IB_HCA") != NULL,
	   "the summary says so");
	{
		autosync_plan_t *back;
		snprintf(p, sizeof(p), "%s/plan.yaml", jd);
		back = autosync_plan_load(p, &err);
		ok(back &&
		       !strcmp(autosync_plan_skipped_env(back, 0),
			       "NCCL_TOPO_FILE") &&
		       !strcmp(autosync_plan_skipped_env(back, 1),
			       "NCCL_IB_HCA") &&
		       autosync_plan_skipped_env(back, 2) == NULL,
		   "the plan file lists them under skipped_env (%s)", err.text);
		ok(back && !strcmp(autosync_plan_hash(back), hash_of(o)),
		   "the plan hash does not depend on them");
		autosync_plan_destroy(back);
	}
	autosync_job_destroy(o2);
	user_set[0] = NULL;

	/* one task hosting all four GPU ranks (torchrun under srun) */
	{
		autosync_job_t *t1 = autosync_job_create(&err);
		autosync_job_set_getenv(t1, fake_env, &in);
		ok(autosync_job_set_site(t1, site, &err) == 0 &&
		       autosync_job_set_model(t1, "bert-large", &err) == 0 &&
		       autosync_job_set_nodes(t1, 3, &err) == 0 &&
		       autosync_job_set_tasks_per_node(t1, 1, &err) == 0 &&
		       autosync_job_run(t1, &err) == 0,
		   "1 task for 4 GPUs: planned (%s)", err.text);
		ok(autosync_job_nranks(t1) == 0 &&
		       autosync_job_rank_nenv(t1, 0) == 0 &&
		       env_of(t1, "NCCL_TOPO_FILE") &&
		       !strcmp(hash_of(t1), hash_of(o)),
		   "the same plan and the topology file, but no rank's NIC");
		ok(strstr(autosync_job_summary(t1),
			  "1 task(s) for 4 GPUs: no per-rank NIC choice") !=
		       NULL,
		   "the summary says why");
		autosync_job_destroy(t1);
	}

	/* a subset of the GPUs */
	in.step_gpus = "2,3";
	in.cuda_visible_devices = "2,3";
	o2 = run_job(&in, &err);
	ok(o2 && autosync_job_nranks(o2) == 2, "SLURM_STEP_GPUS=2,3: 2 ranks");
	is(o2 ? rank_env(o2, 0, "NCCL_IB_HCA") : NULL, "=mlx5_2:1",
	   "local rank 0 is GPU 2, near mlx5_2");
	ok(o2 && strcmp(autosync_job_topo_hash(o2),
			autosync_job_topo_hash(o)) != 0,
	   "another allocation, another topology hash");
	autosync_job_destroy(o2);

	/* failures */
	in.step_gpus = "0,1,7";
	in.cuda_visible_devices = "0,1,7";
	ok(!run_job(&in, &err) && strstr(err.text, "topology: "),
	   "a GPU that does not exist: %s", err.text);
	in.step_gpus = in.cuda_visible_devices = "0";
	in.model = "no-such-model";
	ok(!run_job(&in, &err) && !strncmp(err.text, "model: ", 7),
	   "unknown model: %s", err.text);
	snprintf(p, sizeof(p), "%s/evil.yaml", dir);
	if (symlink("/etc/shadow", p) < 0)
		bail_out("symlink");
	in.model = p;
	ok(!run_job(&in, &err) && strstr(err.text, "is a symbolic link"),
	   "a symlinked model file is refused: %s", err.text);
	in.model = "./evil.yaml";
	in.cwd = dir;
	ok(!run_job(&in, &err) && strstr(err.text, "is a symbolic link"),
	   "also relative to the job's directory");
	in.model = "";
	ok(!run_job(&in, &err) && strstr(err.text, "no model named"),
	   "no model: %s", err.text);

	/* --autosync=PATH: a given plan file is validated and used */
	snprintf(p, sizeof(p), "%s/job/plan.yaml", dir);
	in.plan_file = p;
	snprintf(jd, sizeof(jd), "%s/job3", dir);
	mkdir(jd, 0700);
	o2 = run_job(&in, &err);
	ok(o2 && !strcmp(hash_of(o2), hash_of(o)),
	   "a plan file is used as it is (%s)", err.text);
	memset(rec, 0, sizeof(*rec));
	ok(o2 && autosync_job_feedback(o2, rec, &err) == 0 &&
	       (rec->influenced & AUTOSYNC_FEEDBACK_F_PREDICTED) &&
	       (rec->influenced & AUTOSYNC_FEEDBACK_F_CLUSTER) &&
	       (rec->influenced & AUTOSYNC_FEEDBACK_F_NODES) &&
	       !(rec->influenced & AUTOSYNC_FEEDBACK_F_MEASUREMENTS) &&
	       !(rec->influenced &
		 (AUTOSYNC_FEEDBACK_F_NODE | AUTOSYNC_FEEDBACK_F_JOB)),
	   "the user's plan file: the plan's side of the record is the user's, "
	   "not the identity");
	autosync_job_destroy(o2);
	{
		/* a plan file of the previous format: used, and said so */
		char cmd[3000], v1[1200];
		snprintf(v1, sizeof(v1), "%s/v1-plan.yaml", dir);
		snprintf(cmd, sizeof(cmd),
			 "sed 's/^autosync_plan: 2$/autosync_plan: 1/' %s > %s",
			 p, v1);
		if (system(cmd) != 0)
			bail_out("%s", cmd);
		in.plan_file = v1;
		o2 = run_job(&in, &err);
		ok(o2 && !strcmp(hash_of(o2), hash_of(o)) &&
		       strstr(autosync_job_summary(o2),
			      "\nautosync:   the plan file is format 1, read "
			      "as format 2\n"),
		   "a format 1 plan file is used, the summary says so (%s)",
		   err.text);
		autosync_job_destroy(o2);
		in.plan_file = p;
	}
	snprintf(p, sizeof(p), "%s/site.yaml", dir);
	ok(!run_job(&in, &err) && !strncmp(err.text, "plan file: ", 11),
	   "a file that is no plan is refused: %s", err.text);
	in.plan_file = NULL;
	{
		/* a model file of the user's: the model and what was planned
		 * from it are the user's, the cluster is not */
		char cmd[3000], mine[1200];
		snprintf(mine, sizeof(mine), "%s/mine.yaml", dir);
		snprintf(cmd, sizeof(cmd), "cp %s/resnet50.yaml %s", catalog,
			 mine);
		if (system(cmd) != 0)
			bail_out("%s", cmd);
		in.model = mine;
		snprintf(jd, sizeof(jd), "%s/job4", dir);
		mkdir(jd, 0700);
		o2 = run_job(&in, &err);
		memset(rec, 0, sizeof(*rec));
		ok(o2 && autosync_job_feedback(o2, rec, &err) == 0 &&
		       (rec->influenced & AUTOSYNC_FEEDBACK_F_MODEL) &&
		       (rec->influenced & AUTOSYNC_FEEDBACK_F_PREDICTED) &&
		       (rec->influenced & AUTOSYNC_FEEDBACK_F_STRATEGY) &&
		       !(rec->influenced & AUTOSYNC_FEEDBACK_F_CLUSTER) &&
		       !(rec->influenced & AUTOSYNC_FEEDBACK_F_MEASUREMENTS),
		   "a model file of the user's: model and planned fields are "
		   "the user's, the cluster is not (%s)",
		   err.text);
		autosync_job_destroy(o2);
	}

	autosync_job_destroy(o);
	autosync_siteconf_destroy(site);
	free(rec);
}

static void test_nccl_plugins(void)
{
	char extra[1400], p[1400];
	autosync_siteconf_t *site;
	autosync_error_t err = {.text = ""};
	autosync_job_t *o;
	char jd[1100];
	struct in in = {
	    .model = "resnet50",
	    .nnodes = 2,
	    .step_gpus = "0,1",
	    .cuda_visible_devices = "0,1",
	    .jobdir = jd,
	};
	FILE *fp;

	snprintf(p, sizeof(p), "%s/nccl", dir);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/nccl/libnccl-tuner-autosync.so", dir);
	if ((fp = fopen(p, "w")))
		fclose(fp);
	snprintf(extra, sizeof(extra),
		 "nccl_plugins: true\nnccl_plugin_dir: %s/nccl\n", dir);
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", extra);
	in.site = site;
	snprintf(jd, sizeof(jd), "%s/job-nccl", dir);
	mkdir(jd, 0700);
	o = run_job(&in, &err);
	ok(o != NULL, "plan with the NCCL plugins enabled (%s)", err.text);
	is(o ? env_of(o, "NCCL_TUNER_PLUGIN") : NULL, p,
	   "NCCL_TUNER_PLUGIN points at the installed tuner");
	ok(o && env_of(o, "NCCL_PROFILER_PLUGIN") == NULL,
	   "a plugin that is not installed is not named");
	autosync_job_destroy(o);
	user_set[0] = "NCCL_TUNER_PLUGIN";
	user_set[1] = NULL;
	o = run_job(&in, &err);
	ok(o && env_of(o, "NCCL_TUNER_PLUGIN") == NULL &&
	       autosync_job_nskipped(o) == 1,
	   "the user's own NCCL_TUNER_PLUGIN wins");
	autosync_job_destroy(o);
	user_set[0] = NULL;
	autosync_siteconf_destroy(site);

	/* nccl_calibrate: true marks the plan the tuner reads */
	snprintf(extra, sizeof(extra), "nccl_calibrate: true\n");
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", extra);
	in.site = site;
	o = run_job(&in, &err);
	ok(o && env_of(o, "AUTOSYNC_PLAN"),
	   "plan with nccl_calibrate: true (%s)", err.text);
	{
		char *text = NULL;
		size_t len = 0;
		FILE *pf = o && env_of(o, "AUTOSYNC_PLAN")
			       ? fopen(env_of(o, "AUTOSYNC_PLAN"), "r")
			       : NULL;
		if (pf) {
			text = calloc(1, 1 << 20);
			len = text ? fread(text, 1, (1 << 20) - 1, pf) : 0;
			fclose(pf);
		}
		ok(len > 0 &&
		       strstr(text, "\n  nccl_calibrate: true\n") != NULL,
		   "the plan file says job.nccl_calibrate: true");
		free(text);
	}
	autosync_job_destroy(o);
	autosync_siteconf_destroy(site);
}

/* the site's network.fabric_nics chooses the ranks' NICs */
static void test_fabric_nics(void)
{
	autosync_siteconf_t *site;
	autosync_error_t err = {.text = ""};
	autosync_job_t *o;
	char jd[1100];
	struct in in = {
	    .model = "resnet50",
	    .nnodes = 2,
	    .step_gpus = "0,1",
	    .cuda_visible_devices = "0,1",
	    .jobdir = jd,
	};

	snprintf(jd, sizeof(jd), "%s/job-fabric", dir);
	mkdir(jd, 0700);
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml",
			 "network:\n  fabric_nics: [mlx5_3]\n");
	in.site = site;
	o = run_job(&in, &err);
	ok(o != NULL, "fabric_nics [mlx5_3]: planned (%s)", err.text);
	is(o ? rank_env(o, 0, "NCCL_IB_HCA") : NULL, "=mlx5_3:1",
	   "rank 0 uses mlx5_3");
	is(o ? rank_env(o, 1, "NCCL_IB_HCA") : NULL, "=mlx5_3:1",
	   "rank 1 too (its own nearest NIC, mlx5_1, is not on the list)");
	autosync_job_destroy(o);
	autosync_siteconf_destroy(site);
	site = site_with("hwloc-juwels-booster-4xA100-4xHDR.xml",
			 "network:\n  fabric_nics: [hsn0]\n");
	in.site = site;
	ok(!run_job(&in, &err) &&
	       strstr(err.text,
		      "none of the fabric NICs (hsn0) is on this node"),
	   "a list naming no NIC of the node fails the planning, naming it: %s",
	   err.text);
	autosync_siteconf_destroy(site);
}

/* the job's inputs: setters refuse bad values and calls after the run */
/* the plan's transport: the NICs' (HDR: ib) unless the job makes NCCL
 * use sockets */
static void test_transport(void)
{
	static const struct {
		const char *net, *ib_disable, *want;
	} cases[] = {
	    {NULL, NULL, "ib"},	     {"Socket", NULL, "tcp"},
	    {"socket", NULL, "tcp"}, {"IB", NULL, "ib"},
	    {NULL, "1", "tcp"},	     {NULL, "0", "ib"},
	};
	autosync_siteconf_t *site =
	    site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", NULL);
	char jd[1100];

	snprintf(jd, sizeof(jd), "%s/tr", dir);
	mkdir(jd, 0700);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		autosync_error_t err = {.text = ""};
		struct in in = {
		    .model = "resnet50",
		    .site = site,
		    .nnodes = 2,
		    .step_gpus = "0,1,2,3",
		    .cuda_visible_devices = "0,1,2,3",
		    .jobdir = jd,
		    .nccl_net = cases[i].net,
		    .nccl_ib_disable = cases[i].ib_disable,
		};
		autosync_job_t *j = run_job(&in, &err);
		autosync_plan_summary_t s = {0};

		if (j)
			autosync_plan_summary(autosync_job_plan(j), &s);
		is(j ? autosync_transport_name(s.cluster.transport) : err.text,
		   cases[i].want, "NCCL_NET=%s NCCL_IB_DISABLE=%s: %s",
		   cases[i].net ? cases[i].net : "(unset)",
		   cases[i].ib_disable ? cases[i].ib_disable : "(unset)",
		   cases[i].want);
		autosync_job_destroy(j);
	}
	autosync_siteconf_destroy(site);
}

static void test_inputs(void)
{
	autosync_error_t err = {.text = ""};
	autosync_job_t *j = autosync_job_create(&err);
	char jd[1100];

	ok(j != NULL, "a job with every default");
	errno = 0;
	ok(autosync_job_set_nodes(j, 0, &err) < 0 && errno == EINVAL,
	   "0 nodes: EINVAL");
	ok(autosync_job_set_network(j, "", &err) < 0 && errno == EINVAL &&
	       !strcmp(err.text, "network: an empty description (give items "
				 "such as nodes=4,gpus=8)") &&
	       autosync_job_set_network(j, "  ", NULL) < 0,
	   "an empty network description is an error, not the default 4x8");
	ok(autosync_job_set_network(j, "nodes=x", &err) < 0 &&
	       strstr(err.text, "nodes"),
	   "a bad network description is named: %s", err.text);
	ok(autosync_job_set_framework(j, AUTOSYNC_FW_N, &err) < 0,
	   "an unknown framework");
	ok(autosync_job_set_baseline(j, AUTOSYNC_BASELINE_N, &err) < 0,
	   "an unknown baseline");
	ok(autosync_job_write_files(j, &err) < 0 && errno == EINVAL,
	   "no files before the run");
	/* the what-if cluster of autosync plan: no node topology */
	ok(autosync_job_set_topology(j, "none", &err) == 0 &&
	       autosync_job_set_catalog_dir(j, catalog, &err) == 0 &&
	       autosync_job_set_model(j, "resnet50", &err) == 0 &&
	       autosync_job_set_network(j, "nodes=2,gpus=4", &err) == 0 &&
	       autosync_job_run(j, &err) == 0,
	   "no topology: the network description alone (%s)", err.text);
	{
		autosync_plan_summary_t s;
		autosync_plan_summary(autosync_job_plan(j), &s);
		ok(s.cluster.nodes == 2 && s.cluster.gpus_per_node == 4 &&
		       !strcmp(s.framework, "pytorch-ddp"),
		   "2 x 4 GPUs, the site's default framework (pytorch-ddp)");
	}
	ok(autosync_job_nranks(j) == 0 && autosync_job_topology(j) == NULL,
	   "no ranks of its own without a topology");
	is(env_of(j, "AUTOSYNC_PLAN"), "<jobdir>/plan.yaml",
	   "paths without a job directory");
	errno = 0;
	ok(autosync_job_set_nodes(j, 2, &err) < 0 && errno == EBUSY,
	   "no changes after the run");
	ok(autosync_job_write_files(j, &err) < 0 &&
	       strstr(err.text, "no job directory"),
	   "no files without a directory: %s", err.text);
	autosync_job_destroy(j);
	autosync_job_destroy(NULL);

	/* a job directory: created, reused, refused when it is not the user's
	 */
	ok(autosync_jobdir_create(dir, "jd", getuid(), getgid(), jd, sizeof(jd),
				  &err) == 0,
	   "a job directory (%s)", err.text);
	ok(autosync_jobdir_create(dir, "jd", getuid(), getgid(), jd, sizeof(jd),
				  &err) == 0,
	   "an existing one of the user's, mode 0700, is reused");
	chmod(jd, 0755);
	ok(autosync_jobdir_create(dir, "jd", getuid(), getgid(), jd, sizeof(jd),
				  &err) < 0 &&
	       strstr(err.text, "mode 0755"),
	   "a wrong mode is refused: %s", err.text);
	ok(autosync_jobdir_create("relative", "jd", getuid(), getgid(), jd,
				  sizeof(jd), &err) < 0 &&
	       errno == EINVAL,
	   "a relative base is refused");
	autosync_jobdir_remove(jd);
	ok(access(jd, F_OK) < 0, "removed");
}

/* A job that set HOROVOD_AUTOTUNE keeps Horovod's autotuner: no
 * HOROVOD_ variable pins what it tunes, and the summary says why. */
static void test_horovod_autotune(void)
{
	autosync_siteconf_t *site =
	    site_with("hwloc-juwels-booster-4xA100-4xHDR.xml", NULL);
	autosync_error_t err = {.text = ""};
	static const char *const vals[] = {NULL, "0", "1"};
	char jd[1100];
	struct in in = {
	    .model = "gpt2",
	    .site = site,
	    .nnodes = 4,
	    .framework = "horovod",
	    .step_gpus = "0,1,2,3",
	    .cuda_visible_devices = "0,1,2,3",
	    .jobdir = jd,
	};

	snprintf(jd, sizeof(jd), "%s/hvd", dir);
	mkdir(jd, 0700);
	for (size_t i = 0; i < 3; i++) {
		autosync_job_t *o;
		int on = i == 2;
		in.horovod_autotune = vals[i];
		o = run_job(&in, &err);
		ok(o != NULL, "horovod plan, HOROVOD_AUTOTUNE=%s (%s)",
		   vals[i] ? vals[i] : "(unset)", err.text);
		if (!o)
			continue;
		ok(on == (env_of(o, "HOROVOD_FUSION_THRESHOLD") == NULL &&
			  env_of(o, "HOROVOD_CYCLE_TIME") == NULL),
		   on ? "autotune: no HOROVOD_ variable"
		      : "no autotune: fusion and cycle time set");
		ok(on == (strstr(autosync_job_summary(o),
				 "HOROVOD_AUTOTUNE is set: Horovod's "
				 "autotuner keeps") != NULL),
		   on ? "the summary says autosync stepped aside"
		      : "no step-aside line");
		ok(env_of(o, "AUTOSYNC_PLAN_HASH") != NULL,
		   "the plan is still written and named");
		autosync_job_destroy(o);
	}
	/* what the caller knows better than the model file */
	in.horovod_autotune = NULL;
	in.batch = 4;
	in.step_compute = 0.05;
	{
		autosync_job_t *o = run_job(&in, &err);
		autosync_plan_summary_t s;
		ok(o && autosync_plan_summary(autosync_job_plan(o), &s) == 0 &&
		       s.batch == 4 &&
		       fabs(s.fwd_time + s.bwd_time - 0.05) < 1e-12 &&
		       strstr(s.reason, "compute: 50 ms per step, measured"),
		   "batch size and a measured step compute reach the plan (%s)",
		   err.text);
		autosync_job_destroy(o);
		in.step_compute = -1;
		o = run_job(&in, &err);
		ok(!o && strstr(err.text,
				"step compute: -1 s is not in 0 to 3600 s"),
		   "a negative step compute is refused (%s)", err.text);
		autosync_job_destroy(o);
	}
	autosync_siteconf_destroy(site);
}

static void test_report(void)
{
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r));
	autosync_error_t err = {.text = ""};

	ok(autosync_feedback_parse_report("# step times\n0.5\n 0.25 \n\n0.75\n",
					  r, &err) == 3 &&
	       r->measured_count == 3 && r->measured_mean == 0.5 &&
	       r->measured[1] == 0.25,
	   "report: three step times, mean 0.5");
	ok(autosync_feedback_parse_report("0.5\nfast\n", r, &err) < 0 &&
	       !strcmp(err.text, "line 2: not a step time in seconds (1 us to "
				 "1 h): 'fast'; the 1 step(s) before it are "
				 "kept"),
	   "report: a bad line is named: %s", err.text);
	ok(autosync_feedback_parse_report("-1\n", r, &err) < 0,
	   "negative refused");
	free(r);
}

int main(void)
{
	const char *src =
	    getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".";

	plan(NO_PLAN);
	if (getenv("AUTOSYNC_FIXTURES"))
		snprintf(fixtures, sizeof(fixtures), "%s",
			 getenv("AUTOSYNC_FIXTURES"));
	else
		snprintf(fixtures, sizeof(fixtures),
			 "%s/tests/fixtures/topologies", src);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog", src);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_juwels();
	test_nccl_plugins();
	test_fabric_nics();
	test_transport();
	test_inputs();
	test_horovod_autotune();
	test_report();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
