/* plan.c - plan files: write / parse round trip, bad plans, determinism
 * across processes (fork and the CLI), the SVG timeline. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autosync/planner.h"
#include "tap.h"

static char catalog[1024];

static autosync_cluster_t cluster(unsigned nodes, unsigned g)
{
	autosync_cluster_t c;
	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = g;
	c.intra_class = AUTOSYNC_LINK_NVLINK;
	c.intra_bw = 240e9;
	c.intra_lat = 0.6e-6;
	c.nics_per_node = 4;
	c.nic_bw = 25e9;
	c.inter_lat = 2e-6;
	snprintf(c.topo_hash, sizeof(c.topo_hash), "00112233aabbccdd");
	return c;
}

static autosync_plan_t *make_plan(const char *model, int fw, int baseline,
				  unsigned nodes)
{
	autosync_error_t err = {""};
	autosync_model_t *m = autosync_model_open(model, catalog, &err);
	autosync_planner_t *p = autosync_planner_create(&err);
	autosync_cluster_t c = cluster(nodes, 8);
	autosync_plan_t *pl = NULL;

	if (m && p && autosync_planner_set_model(p, m, &err) == 0 &&
	    autosync_planner_set_cluster(p, &c, &err) == 0 &&
	    autosync_planner_set_framework(p, fw, &err) == 0)
		pl = baseline >= 0
			 ? autosync_planner_baseline(p, baseline, &err)
			 : autosync_planner_run(p, &err);
	if (!pl)
		diag("make_plan %s: %s", model, err.text);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
	return pl;
}

static char *to_text(const autosync_plan_t *pl, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	autosync_plan_write(pl, fp, NULL);
	fclose(fp);
	return buf;
}

static void round_trip(const char *model, int fw, int baseline, unsigned nodes)
{
	autosync_error_t err = {""};
	autosync_plan_t *pl = make_plan(model, fw, baseline, nodes), *back;
	char *t1, *t2 = NULL;
	size_t l1 = 0, l2 = 0;
	autosync_plan_summary_t a, b;

	if (!pl) {
		ok(0, "plan for %s", model);
		return;
	}
	t1 = to_text(pl, &l1);
	back = autosync_plan_parse(t1, l1, "rt.yaml", &err);
	ok(back != NULL, "%s/%s/%d: the plan parses back%s%s", model,
	   autosync_framework_name(fw), baseline, back ? "" : ": ",
	   back ? "" : err.text);
	if (back) {
		t2 = to_text(back, &l2);
		ok(l1 == l2 && !memcmp(t1, t2, l1),
		   "%s: write(parse(write(p))) == write(p)", model);
		is(autosync_plan_hash(back), autosync_plan_hash(pl),
		   "%s: same hash", model);
		autosync_plan_summary(pl, &a);
		autosync_plan_summary(back, &b);
		ok(autosync_plan_nbuckets(pl) == autosync_plan_nbuckets(back) &&
		       autosync_plan_nbaselines(pl) ==
			   autosync_plan_nbaselines(back) &&
		       autosync_plan_nenv(pl) == autosync_plan_nenv(back) &&
		       a.cluster.nodes == b.cluster.nodes &&
		       !strcmp(a.cluster.topo_hash, b.cluster.topo_hash),
		   "%s: same structure", model);
		near(b.step_time, a.step_time, a.step_time * 1e-8,
		     "%s: same prediction", model);
	}
	free(t1);
	free(t2);
	autosync_plan_destroy(back);
	autosync_plan_destroy(pl);
}

/* Names a writer must quote and escape: the plan written through libyaml's
 * emitter reads back with the same names and the same hash. */
static void tricky_names(void)
{
	static const char model[] =
	    "autosync_model: 1\n"
	    "name: \"m \\\"q\\\" \\\\ \\t\\x01 \u00e9\u4e2d\"\n"
	    "tensors:\n"
	    "  - {name: \"a\\\"b\", dtype: float32, shape: [1000]}\n"
	    "  - {name: \"back\\\\slash\", dtype: float32, shape: [2000]}\n"
	    "  - {name: \"tab\\there\\nnewline\\x7f\", dtype: float32, shape: "
	    "[3000]}\n"
	    "  - {name: \"caf\u00e9 \u4e2d\u6587 \\u202e\", dtype: float32, "
	    "shape: [4000]}\n"
	    "  - {name: \"no\", dtype: float32, shape: [5000]}\n"
	    "  - {name: \"1e-06\", dtype: float32, shape: [6000]}\n"
	    "  - {name: \"- #: [x], {y}\", dtype: float32, shape: [7000]}\n"
	    "  - {name: \" lead\", dtype: float32, shape: [8000]}\n";
	static const char *const want[] = {
	    "a\"b",
	    "back\\slash",
	    "tab\there\nnewline\x7f",
	    "caf\u00e9 \u4e2d\u6587 \u202e",
	    "no",
	    "1e-06",
	    "- #: [x], {y}",
	    " lead",
	};
	autosync_error_t err = {""};
	autosync_model_t *m =
	    autosync_model_parse(model, strlen(model), "tricky.yaml", &err);
	autosync_planner_t *p = autosync_planner_create(NULL);
	autosync_cluster_t c = cluster(2, 8);
	autosync_plan_t *pl = NULL, *back = NULL;
	char *t1 = NULL, *t2 = NULL;
	size_t l1 = 0, l2 = 0, found = 0;

	ok(m != NULL, "a model with tricky names loads (%s)", err.text);
	if (m && p && autosync_planner_set_model(p, m, &err) == 0 &&
	    autosync_planner_set_cluster(p, &c, &err) == 0)
		pl = autosync_planner_baseline(
		    p, AUTOSYNC_BASELINE_AR_PER_TENSOR, &err);
	ok(pl != NULL, "and plans (%s)", err.text);
	if (pl) {
		t1 = to_text(pl, &l1);
		back = autosync_plan_parse(t1, l1, "tricky-plan.yaml", &err);
		ok(back != NULL, "the written plan parses back (%s)", err.text);
	}
	if (back) {
		is(autosync_plan_hash(back), autosync_plan_hash(pl),
		   "same hash after write and read");
		t2 = to_text(back, &l2);
		ok(l1 == l2 && !memcmp(t1, t2, l1),
		   "write(parse(write(p))) == write(p)");
		for (size_t i = 0; i < autosync_plan_nbuckets(back); i++) {
			const autosync_bucket_t *b =
			    autosync_plan_bucket(back, i);
			for (size_t j = 0; j < b->ntensors; j++)
				for (size_t k = 0;
				     k < sizeof(want) / sizeof(want[0]); k++)
					found +=
					    !strcmp(b->tensors[j], want[k]);
		}
		ok(found == sizeof(want) / sizeof(want[0]),
		   "every tensor name reads back byte for byte (%zu of %zu)",
		   found, sizeof(want) / sizeof(want[0]));
		ok(t1 && strstr(t1, "\"a\\\"b\"") &&
		       strstr(t1, "\"back\\\\slash\"") &&
		       strstr(t1, "\"tab\\there\\nnewline\\x7F\"") &&
		       strstr(t1, "\"caf\\xE9 \\u4E2D\\u6587 \\u202E\"") &&
		       !strstr(t1, "\u202e"),
		   "quotes, backslashes and control characters escaped; the "
		   "file is ASCII (UTF-8 as escapes, a bidi override never "
		   "as itself)");
	}
	free(t1);
	free(t2);
	autosync_plan_destroy(back);
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
}

static void bad_plan(const char *text, const char *want1, const char *want2,
		     const char *what)
{
	autosync_error_t err = {""};
	autosync_plan_t *pl;
	errno = 0;
	pl = autosync_plan_parse(text, strlen(text), "bad-plan.yaml", &err);
	ok(!pl && errno && strstr(err.text, want1) &&
	       (!want2 || strstr(err.text, want2)),
	   "%s: %s", what, err.text);
	autosync_plan_destroy(pl);
}

static char *replace(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	char *r;
	if (!p)
		bail_out("replace: '%s' not found", from);
	r = malloc(strlen(s) + strlen(to) + 1);
	memcpy(r, s, (size_t)(p - s));
	strcpy(r + (p - s), to);
	strcat(r, p + strlen(from));
	return r;
}

static void bad_plans(void)
{
	autosync_plan_t *pl = make_plan("resnet50", AUTOSYNC_FW_GENERIC, -1, 2);
	size_t l;
	char *t = to_text(pl, &l), *b;

	b = replace(t, "autosync_plan: 2", "autosync_plan: 3");
	bad_plan(b, "bad-plan.yaml:2",
		 "autosync_plan: version '3' is not supported (this autosync "
		 "reads versions 1 and 2)",
		 "a newer format version");
	free(b);
	{
		/* the previous format reads, says which it was, same hash */
		autosync_error_t err = {""};
		autosync_plan_t *v1;
		b = replace(t, "autosync_plan: 2", "autosync_plan: 1");
		v1 = autosync_plan_parse(b, strlen(b), "v1.yaml", &err);
		ok(v1 && autosync_plan_format_version(v1) == 1 &&
		       !strcmp(autosync_plan_hash(v1),
			       autosync_plan_hash(pl)) &&
		       autosync_plan_format_version(pl) ==
			   AUTOSYNC_PLAN_VERSION,
		   "a version 1 plan reads, as version 1, with the same hash "
		   "(%s)",
		   err.text);
		autosync_plan_destroy(v1);
		free(b);
	}
	{
		/* names a plan may not set are refused when it is read,
		 * whatever its version */
		const char *v[] = {"autosync_plan: 2", "autosync_plan: 1"};
		for (int i = 0; i < 2; i++) {
			char *e = replace(t, v[0], v[i]);
			char *f =
			    strstr(e, "\nenv: {}")
				? replace(e, "\nenv: {}",
					  "\nenv:\n  \"LD_PRELOAD\": \"x.so\"")
				: replace(
				      e, "\nenv:\n",
				      "\nenv:\n  \"LD_PRELOAD\": \"x.so\"\n");
			bad_plan(f, "bad-plan.yaml:",
				 "env: 'LD_PRELOAD' is not a variable a plan "
				 "may set",
				 i ? "LD_PRELOAD in a version 1 plan"
				   : "LD_PRELOAD in a plan");
			free(f);
			free(e);
		}
	}
	{
		/* the allowlist, name by name ('=',
		 * an empty name, a newline, lower case, loaders) */
		static const struct {
			const char *name;
			int allowed;
		} names[] = {
		    {"NCCL_ALGO", 1},
		    {"AUTOSYNC_DDP_BUCKET_CAP_MB", 1},
		    {"HOROVOD_FUSION_THRESHOLD", 1},
		    {"LD_PRELOAD", 0},
		    {"LD_LIBRARY_PATH", 0},
		    {"PATH", 0},
		    {"NCCL_A=B", 0},
		    {"", 0},
		    {"NCCL_X\nLD_PRELOAD", 0},
		    {"nccl_algo", 0},
		    {"NCCL_NET_PLUGIN", 0},
		    {"NCCL_TUNER_PLUGIN", 0},
		    {"NCCL_CONF_FILE", 0},
		    {"NCCL_DEBUG_FILE", 0},
		    {"AUTOSYNC_PLAN", 0},
		    {"AUTOSYNC_INJECTED", 0},
		    {"AUTOSYNC_AGREE", 0},
		    {"AUTOSYNC_COMPRESSION", 0},
		    {"AUTOSYNC_SIMULATOR_MODULE", 0},
		    {"AUTOSYNC_TUNER_RULES", 0},
		    {"NCCL_TOPO_FILE", 0},
		    {"NCCL_"
		     "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		     "AAA",
		     0},
		};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			ok(autosync_plan_env_allowed(names[i].name) ==
			       names[i].allowed,
			   "env name '%s': %s", names[i].name,
			   names[i].allowed ? "allowed" : "refused");
		b = strstr(t, "\nenv: {}")
			? replace(t, "\nenv: {}",
				  "\nenv:\n  \"NCCL_A=B\": \"x\"")
			: replace(t, "\nenv:\n",
				  "\nenv:\n  \"NCCL_A=B\": \"x\"\n");
		bad_plan(b, "bad-plan.yaml:",
			 "env: 'NCCL_A=B' is not a variable a plan may set",
			 "a name with '=' in a plan");
		free(b);
		b = strstr(t, "\nenv: {}")
			? replace(t, "\nenv: {}", "\nenv:\n  \"\": \"x\"")
			: replace(t, "\nenv:\n", "\nenv:\n  \"\": \"x\"\n");
		bad_plan(b, "bad-plan.yaml:",
			 "env: '' is not a variable a plan may set",
			 "an empty name in a plan");
		free(b);
	}
	b = replace(t, "kind: allreduce", "kind: gossip");
	bad_plan(b, "bad-plan.yaml:", "'gossip'", "unknown bucket kind");
	free(b);
	b = replace(t, "algorithm: ", "algorithm: warp");
	bad_plan(b, "bad-plan.yaml:", "algorithm: bad value 'warp",
		 "unknown algorithm");
	free(b);
	b = replace(t, "tensors: [\"", "tensors: [\"renamed.");
	bad_plan(b, "bad-plan.yaml:3", "does not match",
		 "edited by hand: hash mismatch");
	free(b);
	{
		/* deleting the hash line accepts an edit */
		char *h = strstr(t, "hash: \""),
		     *e = h ? strchr(h, '\n') : NULL;
		autosync_error_t err = {""};
		autosync_plan_t *q;
		b = strdup(t);
		memmove(b + (h - t), b + (e - t) + 1, strlen(e + 1) + 1);
		q = autosync_plan_parse(b, strlen(b), "nohash.yaml", &err);
		ok(q != NULL, "a plan without a hash line is accepted%s%s",
		   q ? "" : ": ", q ? "" : err.text);
		autosync_plan_destroy(q);
		{
			/* the second bucket's first tensor renamed to the
			 * first bucket's */
			char *t1 = strstr(b, "tensors: [\""), *t2, *e1, *e2,
			     name[128], *d;
			if (!t1 || !(t2 = strstr(t1 + 1, "tensors: [\"")))
				bail_out("no two buckets");
			t1 += 10;
			t2 += 10;
			e1 = strchr(t1 + 1, '"');
			e2 = strchr(t2 + 1, '"');
			snprintf(name, sizeof(name), "%.*s", (int)(e1 - t1 + 1),
				 t1);
			if (!(d = malloc(strlen(b) + sizeof(name))))
				bail_out("malloc");
			sprintf(d, "%.*s%s%s", (int)(t2 - b), b, name, e2 + 1);
			bad_plan(
			    d, "bad-plan.yaml:", "buckets[1].tensors: tensor '",
			    "a tensor in two buckets (it would be synchronized "
			    "twice)");
			free(d);
		}
		free(b);
	}
	b = replace(t, "  nodes:", "  nodez:");
	bad_plan(b, "bad-plan.yaml:", "'nodes'", "missing cluster field");
	free(b);
	bad_plan("autosync_plan: 1\n", "bad-plan.yaml", "missing key 'inputs'",
		 "no inputs");
	bad_plan("a: [\n", "bad-plan.yaml:", "not valid YAML", "not YAML");
	bad_plan("foo: 1\n", "bad-plan.yaml:1", "unknown key 'foo'",
		 "unknown top-level key");
	{
		/* C took the first, the Python adapter the last: neither */
		char *d = malloc(strlen(t) + 64);
		if (!d)
			bail_out("malloc");
		sprintf(d, "%sstrategy: \"x\"\n", t);
		bad_plan(d, "bad-plan.yaml:",
			 "key 'strategy' given twice (first on line ",
			 "a repeated top-level key");
		free(d);
	}
	{
		autosync_error_t err = {""};
		ok(!autosync_plan_load("/nonexistent/p.yaml", &err) &&
		       errno == ENOENT,
		   "missing plan file: ENOENT");
	}
	free(t);
	autosync_plan_destroy(pl);
}

/* the same plan bytes in two processes */
static void two_processes(void)
{
	int fd[2];
	pid_t pid;
	char *mine, child[1 << 20];
	size_t lm = 0, lc = 0;
	ssize_t r;
	int st;

	if (pipe(fd) < 0)
		bail_out("pipe: %s", strerror(errno));
	fflush(stdout);
	if ((pid = fork()) == 0) {
		autosync_plan_t *pl =
		    make_plan("gpt2", AUTOSYNC_FW_GENERIC, -1, 16);
		size_t l;
		char *t = pl ? to_text(pl, &l) : NULL;
		int rc = t ? 0 : 1;
		close(fd[0]);
		if (t && write(fd[1], t, l) != (ssize_t)l)
			rc = 1;
		free(t); /* tidy, for valgrind */
		autosync_plan_destroy(pl);
		_exit(rc);
	}
	close(fd[1]);
	while (lc < sizeof(child) &&
	       (r = read(fd[0], child + lc, sizeof(child) - lc)) > 0)
		lc += (size_t)r;
	close(fd[0]);
	waitpid(pid, &st, 0);
	{
		autosync_plan_t *pl =
		    make_plan("gpt2", AUTOSYNC_FW_GENERIC, -1, 16);
		mine = pl ? to_text(pl, &lm) : NULL;
		autosync_plan_destroy(pl);
	}
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && mine && lm == lc &&
	       lm > 0 && !memcmp(mine, child, lm),
	   "a forked process computes the same plan bytes (%zu)", lm);
	free(mine);
}

static int run(const char *cmd)
{
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void cli(void)
{
	const char *bd = getenv("AUTOSYNC_BUILDDIR");
	char exe[1024], cmd[32768], dir[] = "/tmp/autosync-plan-t.XXXXXX";
	FILE *fp;
	char buf[4096];
	size_t n;

	if (!bd) {
		skip(9, "AUTOSYNC_BUILDDIR not set");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/cli/autosync", bd);
	if (access(exe, X_OK) < 0 || !mkdtemp(dir)) {
		skip(9, "cli/autosync not built");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "'%s' plan --config none --catalog '%s' --model bert-large "
		 "--network "
		 "'nodes=8,gpus=8,intra=nvlink,nics=4x200Gbit/s,lat=2us' "
		 "-o %s/a.yaml --timeline %s/a.svg > %s/a.out && "
		 "'%s' plan --config none --catalog '%s' --model bert-large "
		 "--network "
		 "'nodes=8,gpus=8,intra=nvlink,nics=4x200Gbit/s,lat=2us' -o "
		 "%s/b.yaml --explain "
		 "> %s/b.out && cmp -s %s/a.yaml %s/b.yaml",
		 exe, catalog, dir, dir, dir, exe, catalog, dir, dir, dir, dir);
	ok(run(cmd) == 0,
	   "two runs of 'autosync plan' write identical plan files");
	snprintf(cmd, sizeof(cmd),
		 "grep -q 'ddp-default' %s/a.out && grep -q 'comm ms' %s/b.out",
		 dir, dir);
	ok(run(cmd) == 0,
	   "the report has the comparison table; --explain the buckets");
	snprintf(cmd, sizeof(cmd), "%s/a.svg", dir);
	fp = fopen(cmd, "r");
	n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
	buf[n] = '\0';
	if (fp)
		fclose(fp);
	ok(strstr(buf, "<svg") && strstr(buf, "bert-large"),
	   "--timeline writes an SVG");
	{
		autosync_error_t err = {""};
		autosync_plan_t *pl;
		snprintf(cmd, sizeof(cmd), "%s/a.yaml", dir);
		pl = autosync_plan_load(cmd, &err);
		ok(pl != NULL, "the CLI's plan file loads%s%s", pl ? "" : ": ",
		   pl ? "" : err.text);
		autosync_plan_destroy(pl);
	}
	snprintf(cmd, sizeof(cmd),
		 "'%s' plan --config none --catalog '%s' --model nonesuch "
		 "2>/dev/null; test "
		 "$? = 1",
		 exe, catalog);
	ok(run(cmd) == 0, "unknown model: exit 1");
	snprintf(cmd, sizeof(cmd),
		 "'%s' plan --config none --catalog '%s' --model resnet50 "
		 "--baseline nope "
		 "2>/dev/null; "
		 "test $? = 2",
		 exe, catalog);
	ok(run(cmd) == 0, "unknown baseline: usage error 2");
	snprintf(
	    cmd, sizeof(cmd),
	    "'%s' plan --config none --catalog '%s' --model resnet50 --gpus 0 "
	    "2>%s/err; test $? = 2 && grep -qx 'autosync plan: --gpus "
	    "needs --topology (or the site config.s topology_xml)' %s/err",
	    exe, catalog, dir, dir);
	ok(run(cmd) == 0, "--gpus without --topology: usage error 2, says why");
	snprintf(
	    cmd, sizeof(cmd),
	    "'%s' plan --config none --catalog '%s' --model resnet50 --network "
	    "nodes=2,gpus=4 --nccl-calibrate -o %s/k.yaml >/dev/null && "
	    "grep -qx '  nccl_calibrate: true' %s/k.yaml",
	    exe, catalog, dir, dir);
	ok(run(cmd) == 0, "--nccl-calibrate marks the plan");
	snprintf(cmd, sizeof(cmd),
		 "'%s' plan --config none --catalog '%s' --model gpt2 "
		 "--batch-size 4 "
		 "--compute-ms 30 > %s/c.out && grep -q '^# autosync plan for "
		 "gpt2 .*, batch 4) ' "
		 "%s/c.out && grep -q '^# predicted step [0-9.]* ms (forward "
		 "10.000, backward "
		 "20.000, ' %s/c.out && grep -q '^# reason: .*; compute: 30 ms "
		 "per step, "
		 "measured$' %s/c.out && grep -q \"^# speed-up over the "
		 "framework's default "
		 "(ddp-default): [0-9.]*x$\" %s/c.out",
		 exe, catalog, dir, dir, dir, dir, dir);
	ok(run(cmd) == 0,
	   "--batch-size and --compute-ms reach the plan; the report "
	   "compares with the framework's default");
	snprintf(cmd, sizeof(cmd),
		 "'%s' plan --config none --catalog '%s' --model gpt2 "
		 "--compute-ms 0 "
		 "2>%s/err; test $? = 2 && grep -qx \"autosync plan: "
		 "--compute-ms: '0' is "
		 "not a time in milliseconds in (0, 3600000]\" %s/err",
		 exe, catalog, dir, dir);
	ok(run(cmd) == 0, "--compute-ms 0: usage error 2, says why");
	{
		const char *fx = getenv("AUTOSYNC_FIXTURES");
		const char *src = getenv("AUTOSYNC_SRCDIR");
		char topo[1024];
		if (fx && *fx)
			snprintf(topo, sizeof(topo), "%s", fx);
		else
			snprintf(topo, sizeof(topo),
				 "%s/tests/fixtures/topologies",
				 src ? src : "..");
		snprintf(
		    cmd, sizeof(cmd),
		    "'%s' plan --config none --catalog '%s' --model resnet50 "
		    "--topology "
		    "'%s/hwloc-juwels-booster-4xA100-4xHDR.xml' --gpus 1,3 "
		    "-N 2 -o %s/g.yaml >/dev/null && grep -qx '    "
		    "gpus_per_node: 2' %s/g.yaml && grep -qx '    "
		    "nics_per_node: 2' %s/g.yaml && grep -qx '    nodes: 2' "
		    "%s/g.yaml",
		    exe, catalog, topo, dir, dir, dir, dir);
		ok(run(cmd) == 0,
		   "--topology FILE --gpus 1,3: planned for the 2 "
		   "GPUs and their 2 nearest NICs, as a step on them");
		{
			autosync_error_t err = {""};
			autosync_plan_summary_t s = {0};
			autosync_plan_t *pl;

			snprintf(cmd, sizeof(cmd), "%s/g.yaml", dir);
			pl = autosync_plan_load(cmd, &err);
			ok(pl && autosync_plan_summary(pl, &s) == 0 &&
			       s.cluster.transport == AUTOSYNC_TRANSPORT_IB,
			   "its HDR HCAs: transport ib, read back from the "
			   "plan file");
			autosync_plan_destroy(pl);
			snprintf(cmd, sizeof(cmd),
				 "grep -qx '    transport: ib' %s/g.yaml && "
				 "! grep -q transport %s/a.yaml",
				 dir, dir);
			ok(run(cmd) == 0,
			   "written when known (the topology's), "
			   "not for a --network cluster");
		}
		snprintf(cmd, sizeof(cmd),
			 "'%s' plan --config none --catalog '%s' --model "
			 "resnet50 --topology "
			 "'%s/hwloc-juwels-booster-4xA100-4xHDR.xml' --gpus 9 "
			 "2>%s/err >/dev/null; test $? = 1 && grep -q 'GPU 9 "
			 "does not exist' %s/err",
			 exe, catalog, topo, dir, dir);
		ok(run(cmd) == 0, "--gpus naming a GPU the topology lacks: "
				  "exit 1, says which");
	}
	/* without -o the whole of stdout is a plan (the report as comments) */
	snprintf(cmd, sizeof(cmd),
		 "printf 'launch: 5e-5\\ngpu_flops: 2e14\\n' > %s/cal.yaml && "
		 "'%s' plan --config none --catalog '%s' --model ncf "
		 "--framework generic "
		 "--network nodes=4,gpus=4 --calibration %s/cal.yaml "
		 "--baseline parallax > %s/c.yaml",
		 dir, exe, catalog, dir, dir);
	ok(run(cmd) == 0, "--calibration and --baseline");
	{
		autosync_error_t err = {""};
		autosync_plan_t *pl;
		autosync_plan_summary_t s;
		snprintf(cmd, sizeof(cmd), "%s/c.yaml", dir);
		pl = autosync_plan_load(cmd, &err);
		ok(pl && autosync_plan_summary(pl, &s) == 0 &&
		       !strcmp(s.strategy, "parallax") && s.cluster.nodes == 4,
		   "stdout without -o is a loadable plan%s%s", pl ? "" : ": ",
		   pl ? "" : err.text);
		autosync_plan_destroy(pl);
	}
	snprintf(
	    cmd, sizeof(cmd),
	    "printf 'launchh: 1\\n' > %s/bad.yaml && "
	    "'%s' plan --config none --catalog '%s' --model ncf --calibration "
	    "%s/bad.yaml 2> %s/err.txt; test $? = 1 && "
	    "grep -q 'bad.yaml:1' %s/err.txt",
	    dir, exe, catalog, dir, dir, dir);
	ok(run(cmd) == 0, "a bad calibration file is named with its line");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	run(cmd);
}

static void svg(void)
{
	autosync_plan_t *pl =
	    make_plan("resnet50", AUTOSYNC_FW_PYTORCH_DDP, -1, 4);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ok(autosync_plan_write_svg(pl, fp, NULL) == 0, "write_svg");
	fclose(fp);
	ok(buf && strstr(buf, "</svg>") && strstr(buf, "backward") &&
	       strstr(buf, "bucket 0"),
	   "the SVG shows compute and buckets");
	free(buf);
	autosync_plan_destroy(pl);
	errno = 0;
	ok(autosync_plan_write_svg(NULL, stdout, NULL) < 0 && errno == EINVAL,
	   "NULL plan");
}

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR");

	plan(NO_PLAN);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog",
		 src ? src : "..");
	round_trip("resnet50", AUTOSYNC_FW_GENERIC, -1, 4);
	round_trip("resnet50", AUTOSYNC_FW_PYTORCH_DDP, -1, 4);
	round_trip("bert-base", AUTOSYNC_FW_HOROVOD, -1, 8);
	round_trip("ncf", AUTOSYNC_FW_AUTODIST, -1, 8);
	round_trip("ncf", AUTOSYNC_FW_GENERIC, AUTOSYNC_BASELINE_PS_LB, 8);
	round_trip("ncf", AUTOSYNC_FW_GENERIC, AUTOSYNC_BASELINE_PARALLAX, 1);
	round_trip("densenet121", AUTOSYNC_FW_HOROVOD,
		   AUTOSYNC_BASELINE_HOROVOD, 2);
	tricky_names();
	bad_plans();
	two_processes();
	cli();
	svg();
	autosync_plan_destroy(NULL);
	return done_testing();
}
