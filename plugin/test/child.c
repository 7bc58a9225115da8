/* Unit tests of planning in a child process: the result, the deadline,
 * the memory cap, and a plan that names a variable it may not set. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "child.h"
#include "tap.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static char dir[] = "/tmp/autosync-child-XXXXXX";
static char fixtures[1024], catalog[1024];

static autosync_siteconf_t *site(void)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s;
	char p[1200];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/site.yaml", dir);
	if (!(fp = fopen(p, "w")))
		bail_out("%s", p);
	fprintf(fp,
		"catalog_dir: %s\ntopology_xml: %s/hwloc-juwels-booster-"
		"4xA100-4xHDR.xml\n",
		catalog, fixtures);
	fclose(fp);
	if (!(s = autosync_siteconf_load(p, &err)))
		bail_out("site: %s", err.text);
	return s;
}

static void jobdir(const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", dir, name);
	mkdir(out, 0700);
}

static void put(const char *name, const char *text)
{
	char p[1200];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(fp = fopen(p, "w")))
		bail_out("%s", p);
	fputs(text, fp);
	fclose(fp);
}

static void test_plan(const autosync_siteconf_t *s)
{
	char *env[] = {"SLURM_STEP_GPUS=0,1", "CUDA_VISIBLE_DEVICES=0,1",
		       "NCCL_DEBUG=INFO", NULL};
	autosync_error_t err = {.text = ""};
	struct as_child_out out;
	autosync_feedback_rec_t *rec = calloc(1, sizeof(*rec));
	char jd[1100], want[1200];
	struct as_child_in in = {
	    .site = s,
	    .model = "resnet50",
	    .nnodes = 2,
	    .jobdir = jd,
	    .env = env,
	    .uid = getuid(),
	    .gid = getgid(),
	    .deadline_ms = 30000,
	    .max_memory = 0,
	};
	struct stat st;

	jobdir("job", jd, sizeof(jd));
	memset(&out, 0, sizeof(out));
	ok(as_child_plan(&in, &out, &err) == 0,
	   "resnet50 planned in a child (%s)", err.text);
	snprintf(want, sizeof(want), "%s/plan.yaml", jd);
	is(as_child_env(&out, "AUTOSYNC_PLAN"), want,
	   "AUTOSYNC_PLAN in the job directory");
	ok(stat(want, &st) == 0 && st.st_size > 100,
	   "the child wrote the plan file");
	is(as_child_env(&out, "AUTOSYNC_PLAN_HASH"), out.plan_hash,
	   "the plan hash came back");
	ok(strlen(out.plan_hash) == 16 && strlen(out.topo_hash) == 16,
	   "16-digit hashes");
	ok(out.nranks == 2 && out.rank_n[0] >= 1 &&
	       !strcmp(out.rank_env[1][0].name, "NCCL_IB_HCA") &&
	       !strcmp(out.rank_env[1][0].value, "=mlx5_1:1"),
	   "each local rank's NIC came back (rank 1: mlx5_1)");
	ok(out.summary &&
	       strstr(out.summary,
		      "autosync: plan for resnet50 on 2 node(s) x 2 GPU(s)"),
	   "the summary came back");
	ok(out.record &&
	       autosync_feedback_parse_part(out.record, strlen(out.record),
					    AUTOSYNC_FEEDBACK_PART_PLAN, rec,
					    &err) == 0 &&
	       !strcmp(rec->plan_hash, out.plan_hash) && rec->predicted > 0 &&
	       rec->influenced == 0,
	   "the feedback record's plan side parses, a catalog model: nothing "
	   "the user influenced (%s)",
	   err.text);
	ok(out.record &&
	       autosync_feedback_parse(out.record, strlen(out.record), rec,
				       &err) < 0 &&
	       !strcmp(err.text, "field 'time': missing"),
	   "the child sends no job identity: slurmstepd adds it (%s)",
	   err.text);
	ok(out.total_ms >= out.plan_ms,
	   "timings: %.1f ms in all, %.1f ms searching", out.total_ms,
	   out.plan_ms);
	as_child_out_free(&out);
	ok(out.nenv == 0 && out.env == NULL, "freed");
	free(rec);
}

static void test_deadline(const autosync_siteconf_t *s)
{
	char *env[] = {NULL};
	autosync_error_t err = {.text = ""};
	struct as_child_out out;
	char jd[1100], model[1200];
	struct as_child_in in = {
	    .site = s,
	    .nnodes = 2,
	    .jobdir = jd,
	    .env = env,
	    .uid = getuid(),
	    .gid = getgid(),
	    .deadline_ms = 300,
	};
	int st;

	/* 100 bytes that expand into 200,000 tensors: seconds of work */
	put("huge.yaml", "autosync_model: 1\nname: huge\ntensors:\n"
			 "  - {name: w, layer: l, shape: [4], dtype: float32, "
			 "repeat: 200000}\n");
	snprintf(model, sizeof(model), "%s/huge.yaml", dir);
	in.model = model;
	jobdir("job-slow", jd, sizeof(jd));
	memset(&out, 0, sizeof(out));
	ok(as_child_plan(&in, &out, &err) < 0 &&
	       !strcmp(err.text, "planning did not finish within the site's "
				 "budget of 300 ms; stopped"),
	   "a child past its deadline is stopped: %s", err.text);
	ok(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD,
	   "and reaped: no child left");
	ok(out.nenv == 0, "nothing to inject");
#ifdef SANITIZED
	skip(1, "no address-space cap in sanitized builds");
#else
	in.deadline_ms = 60000;
	in.max_memory = 96u << 20;
	ok(as_child_plan(&in, &out, &err) < 0 &&
	       strstr(err.text, "out of memory"),
	   "a child over its memory cap fails cleanly: %s", err.text);
#endif
}

static void test_refusals(const autosync_siteconf_t *s)
{
	char *env[] = {"SLURM_STEP_GPUS=0", NULL};
	autosync_error_t err = {.text = ""};
	struct as_child_out out;
	char jd[1100], plan[1200], cmd[4000];
	struct as_child_in in = {
	    .site = s,
	    .model = "resnet50",
	    .nnodes = 1,
	    .jobdir = jd,
	    .env = env,
	    .uid = getuid(),
	    .gid = getgid(),
	    .deadline_ms = 30000,
	};

	jobdir("job-plan", jd, sizeof(jd));
	memset(&out, 0, sizeof(out));
	if (as_child_plan(&in, &out, &err) < 0)
		bail_out("plan: %s", err.text);
	as_child_out_free(&out);
	/* a shared plan file that tries to load code into every job */
	snprintf(plan, sizeof(plan), "%s/evil.yaml", dir);
	snprintf(cmd, sizeof(cmd),
		 "sed -e '/^hash:/d' -e 's/^env:$/env:\\n  \"LD_PRELOAD\": "
		 "\"\\/tmp\\/evil.so\"/' "
		 "%s/plan.yaml > %s",
		 jd, plan);
	if (system(cmd) != 0)
		bail_out("%s", cmd);
	in.model = "";
	in.plan_file = plan;
	jobdir("job-evil", jd, sizeof(jd));
	ok(as_child_plan(&in, &out, &err) < 0 && strstr(err.text, "LD_PRELOAD"),
	   "a plan that sets LD_PRELOAD is refused: %s", err.text);
	in.plan_file = NULL;
	ok(as_child_plan(&in, &out, &err) < 0 &&
	       strstr(err.text, "no model named"),
	   "no model: %s", err.text);
	in.model = "resnet50";
	in.jobdir = NULL;
	errno = 0;
	ok(as_child_plan(&in, &out, &err) < 0 && errno == EINVAL,
	   "no job directory: EINVAL");
}

/* the pipeline's warnings come back for the node's log: a site simulator
 * that cannot be read, and the analytic plan made without it */
static void test_warnings(const autosync_siteconf_t *base)
{
	char *env[] = {"SLURM_STEP_GPUS=0,1", NULL};
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s;
	struct as_child_out out, plain;
	char jd[1100], p[1200], want[1400];
	FILE *fp;
	struct as_child_in in = {
	    .model = "resnet50",
	    .nnodes = 2,
	    .jobdir = jd,
	    .env = env,
	    .uid = getuid(),
	    .gid = getgid(),
	    .deadline_ms = 30000,
	};

	snprintf(p, sizeof(p), "%s/site-sim.yaml", dir);
	if (!(fp = fopen(p, "w")))
		bail_out("%s", p);
	fprintf(fp,
		"catalog_dir: %s\ntopology_xml: %s/hwloc-juwels-booster-"
		"4xA100-4xHDR.xml\nsimulator: %s/missing.json\n",
		catalog, fixtures, dir);
	fclose(fp);
	if (!(s = autosync_siteconf_load(p, &err)))
		bail_out("site: %s", err.text);
	in.site = s;
	jobdir("job-sim", jd, sizeof(jd));
	memset(&out, 0, sizeof(out));
	memset(&plain, 0, sizeof(plain));
	ok(as_child_plan(&in, &out, &err) == 0,
	   "a site simulator that cannot be read: planned (%s)", err.text);
	snprintf(want, sizeof(want),
		 "simulator: %s/missing.json: cannot open: No such file or "
		 "directory; planning with the analytic model",
		 dir);
	ok(out.nwarnings == 1 && !strcmp(out.warnings[0], want),
	   "one warning came back: %s",
	   out.nwarnings ? out.warnings[0] : "(none)");
	autosync_siteconf_destroy(s);
	in.site = base;
	jobdir("job-plain", jd, sizeof(jd));
	ok(as_child_plan(&in, &plain, &err) == 0 && plain.nwarnings == 0,
	   "no simulator: no warning");
	as_child_out_free(&out);
	as_child_out_free(&plain);
}

int main(void)
{
	const char *src =
	    getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".";
	autosync_siteconf_t *s;

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
	s = site();
	test_plan(s);
	test_deadline(s);
	test_refusals(s);
	test_warnings(s);
	autosync_siteconf_destroy(s);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
