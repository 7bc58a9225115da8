/* learned.c - planning with a learned correction of the simulator
 * (autosync_planner_set_corrector): the analytic search's best candidates
 * of every family are re-ranked by the corrected times, the plan records
 * the simulator's hash, and a corrector that fails leaves the analytic
 * plan. The correctors here are hand-written stand-ins for learn/'s. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	c.nics_per_node = 1;
	c.nic_bw = 1.25e9;
	c.inter_lat = 20e-6;
	snprintf(c.topo_hash, sizeof(c.topo_hash), "00112233aabbccdd");
	return c;
}

/* what a corrector does: a factor on every candidate with PS buckets, on
 * every other candidate, or a failure */
struct fake {
	double ps, other;
	int fail;
	double margin; /* < 0: the cost constants' */
	size_t calls, seen;
};

static int correct(void *arg, const autosync_cluster_t *c, size_t n,
		   const double *terms, const double *step, double *out)
{
	struct fake *f = arg;

	(void)c;
	f->calls++;
	f->seen += n;
	if (f->fail) {
		errno = EIO;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		out[i] =
		    step[i] *
		    (terms[i * AUTOSYNC_TERM_N + AUTOSYNC_TERM_PS_BUCKETS] > 0
			 ? f->ps
			 : f->other);
	return 0;
}

static double margin(void *arg, int family)
{
	(void)family;
	return ((struct fake *)arg)->margin;
}

static char logged[1024];
static void logf_(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= AUTOSYNC_LOG_WARNING)
		snprintf(logged, sizeof(logged), "%s", msg);
}

static autosync_plan_t *make(const char *model, int fw, struct fake *f)
{
	autosync_error_t err = {""};
	autosync_model_t *m = autosync_model_open(model, catalog, &err);
	autosync_planner_t *p = autosync_planner_create(&err);
	autosync_cluster_t c = cluster(4, 2);
	autosync_corrector_t k = {.correct = correct,
				  .margin = margin,
				  .arg = f,
				  .hash = "0123456789abcdef"};
	autosync_plan_t *pl = NULL;

	logged[0] = 0;
	if (m && p && autosync_planner_set_model(p, m, &err) == 0 &&
	    autosync_planner_set_cluster(p, &c, &err) == 0 &&
	    autosync_planner_set_framework(p, fw, &err) == 0 &&
	    (!f || autosync_planner_set_corrector(p, &k, &err) == 0)) {
		autosync_planner_set_log(p, logf_, NULL);
		pl = autosync_planner_run(p, &err);
	}
	if (!pl)
		diag("make %s: %s", model, err.text);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
	return pl;
}

static size_t ps_buckets(const autosync_plan_t *pl)
{
	size_t n = 0;
	for (size_t i = 0; i < autosync_plan_nbuckets(pl); i++)
		n += autosync_plan_bucket(pl, i)->kind == AUTOSYNC_SYNC_PS;
	return n;
}

static char *to_text(const autosync_plan_t *pl, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	autosync_plan_write(pl, fp, NULL);
	fclose(fp);
	return buf;
}

/* the identity: the analytic choice again, marked with the hash */
static void identity(void)
{
	struct fake f = {.ps = 1, .other = 1, .margin = -1};
	autosync_plan_t *a = make("bert-large", AUTOSYNC_FW_GENERIC, NULL);
	autosync_plan_t *l = make("bert-large", AUTOSYNC_FW_GENERIC, &f);
	autosync_plan_summary_t sa, sl;

	if (!a || !l) {
		ok(0, "identity: plans");
		goto out;
	}
	autosync_plan_summary(a, &sa);
	autosync_plan_summary(l, &sl);
	is(sl.strategy, sa.strategy, "identity: the analytic strategy");
	ok(autosync_plan_nbuckets(a) == autosync_plan_nbuckets(l),
	   "identity: the same buckets");
	ok(f.calls == 1 && f.seen > AUTOSYNC_BASELINE_N,
	   "identity: one call ranks the baselines and the elites (%zu)",
	   f.seen);
	ok(f.seen <= AUTOSYNC_BASELINE_N + AUTOSYNC_FAMILY_N * 4,
	   "identity: at most 4 candidates per family");
	is(sl.simulator_hash, "0123456789abcdef", "identity: the file's hash");
	is(sa.simulator_hash, "", "analytic: no simulator hash");
	ok(strcmp(autosync_plan_hash(a), autosync_plan_hash(l)) != 0,
	   "identity: the simulator's hash is part of the plan hash");
	near(sl.analytic_step_time, sa.step_time, sa.step_time * 1e-12,
	     "identity: the analytic prediction is kept");
	near(sl.step_time, sl.analytic_step_time, 1e-15,
	     "identity: the corrected one equals it");
	ok(strstr(sl.reason, "learned simulator 0123456789abcdef") != NULL,
	   "identity: the reason names the simulator");
out:
	autosync_plan_destroy(a);
	autosync_plan_destroy(l);
}

/* a corrector that finds PS three times slower than the analytic model
 * moves a sparse model's plan off PS; one that finds it faster keeps it */
static void ps_penalty(void)
{
	struct fake slow = {.ps = 3, .other = 1, .margin = -1};
	struct fake fast = {.ps = 0.5, .other = 1, .margin = -1};
	autosync_plan_t *a = make("ncf", AUTOSYNC_FW_AUTODIST, NULL);
	autosync_plan_t *s = make("ncf", AUTOSYNC_FW_AUTODIST, &slow);
	autosync_plan_t *q = make("ncf", AUTOSYNC_FW_AUTODIST, &fast);
	autosync_plan_summary_t ss, sq;

	if (!a || !s || !q) {
		ok(0, "ps: plans");
		goto out;
	}
	ok(ps_buckets(a) > 0, "analytic: ncf under autodist uses PS (%zu)",
	   ps_buckets(a));
	ok(ps_buckets(s) == 0, "PS 3x slower: no PS bucket (%zu)",
	   ps_buckets(s));
	ok(ps_buckets(q) > 0, "PS 2x faster: PS buckets (%zu)", ps_buckets(q));
	autosync_plan_summary(s, &ss);
	autosync_plan_summary(q, &sq);
	ok(sq.step_time < sq.analytic_step_time,
	   "PS 2x faster: the corrected prediction is the plan's");
	ok(ss.step_time > 0 && isfinite(ss.step_time), "PS slower: a time");
	/* the baselines' table holds corrected times too */
	for (size_t i = 0; i < autosync_plan_nbaselines(s); i++) {
		const autosync_plan_baseline_t *b =
		    autosync_plan_baseline(s, i);
		if (!strcmp(b->name, "ps")) {
			autosync_plan_t *ab = a;
			for (size_t j = 0; j < autosync_plan_nbaselines(ab);
			     j++)
				if (!strcmp(autosync_plan_baseline(ab, j)->name,
					    "ps"))
					near(b->step_time,
					     3 * autosync_plan_baseline(ab, j)
						     ->step_time,
					     b->step_time * 1e-9,
					     "the PS baseline is corrected");
		}
	}
out:
	autosync_plan_destroy(a);
	autosync_plan_destroy(s);
	autosync_plan_destroy(q);
}

/* a learned margin of 0 lets any corrected gain through; 0.99 keeps the
 * framework's default */
static void margins(void)
{
	struct fake wide = {.ps = 1, .other = 1, .margin = 0.99};
	autosync_plan_t *w = make("bert-large", AUTOSYNC_FW_PYTORCH_DDP, &wide);
	autosync_plan_summary_t sw;

	if (!w) {
		ok(0, "margins: plan");
		return;
	}
	autosync_plan_summary(w, &sw);
	is(sw.strategy, "ddp-default",
	   "margin 99%%: the framework's default stays");
	ok(strstr(sw.reason, "kept ddp-default, the framework's default") !=
	       NULL,
	   "margin 99%%: the reason says so");
	autosync_plan_destroy(w);
}

/* a failing corrector: the analytic plan, byte for byte, and a warning */
static void failing(void)
{
	struct fake f = {.fail = 1};
	autosync_plan_t *a = make("gpt2", AUTOSYNC_FW_GENERIC, NULL);
	autosync_plan_t *l = make("gpt2", AUTOSYNC_FW_GENERIC, &f);
	char *ta = NULL, *tl = NULL;
	size_t la = 0, ll = 0;

	if (!a || !l) {
		ok(0, "failing: plans");
		goto out;
	}
	ok(strstr(logged, "the learned simulator failed") != NULL,
	   "failing: a warning is logged");
	ta = to_text(a, &la);
	tl = to_text(l, &ll);
	ok(la == ll && !memcmp(ta, tl, la),
	   "failing: the analytic plan, byte for byte");
out:
	free(ta);
	free(tl);
	autosync_plan_destroy(a);
	autosync_plan_destroy(l);
}

/* plan files carry the hash and the analytic prediction */
static void files(void)
{
	struct fake f = {.ps = 1, .other = 1.25, .margin = -1};
	autosync_plan_t *l = make("resnet50", AUTOSYNC_FW_HOROVOD, &f), *back;
	autosync_error_t err = {""};
	autosync_plan_summary_t a, b;
	char *t, *bad;
	size_t n = 0;

	if (!l) {
		ok(0, "files: plan");
		return;
	}
	t = to_text(l, &n);
	ok(strstr(t, "simulator_hash: \"0123456789abcdef\"") != NULL,
	   "written: the hash");
	ok(strstr(t, "analytic_step_time: ") != NULL,
	   "written: the analytic prediction");
	back = autosync_plan_parse(t, n, "l.yaml", &err);
	ok(back != NULL, "read back%s%s", back ? "" : ": ", err.text);
	if (back) {
		autosync_plan_summary(l, &a);
		autosync_plan_summary(back, &b);
		is(autosync_plan_hash(back), autosync_plan_hash(l),
		   "read back: the same hash");
		is(b.simulator_hash, a.simulator_hash, "read back: its hash");
		near(b.analytic_step_time, a.analytic_step_time,
		     a.analytic_step_time * 1e-8, "read back: analytic");
		near(a.step_time, 1.25 * a.analytic_step_time,
		     a.step_time * 1e-8, "corrected: 1.25 x analytic");
	}
	autosync_plan_destroy(back);
	if ((bad = strstr(t, "0123456789abcdef")))
		memcpy(bad, "0123456789abcdeG", 16);
	back = autosync_plan_parse(t, n, "bad.yaml", &err);
	ok(back == NULL && errno == EINVAL, "a bad simulator_hash is refused");
	ok(!strncmp(err.text, "bad.yaml:", 9) &&
	       strstr(err.text, ": inputs.simulator_hash: bad value "
				"'0123456789abcdeG' (expected 16 hex digits)"),
	   "... naming file, line and value: %s", err.text);
	autosync_plan_destroy(back);
	free(t);
	autosync_plan_destroy(l);
}

static void bad_correctors(void)
{
	autosync_planner_t *p = autosync_planner_create(NULL);
	autosync_error_t err = {""};
	autosync_corrector_t k = {.correct = correct, .hash = "0123"};

	errno = 0;
	ok(autosync_planner_set_corrector(p, &k, &err) < 0 && errno == EINVAL,
	   "a short hash is refused");
	k.correct = NULL;
	snprintf(k.hash, sizeof(k.hash), "0123456789abcdef");
	ok(autosync_planner_set_corrector(p, &k, &err) < 0 && errno == EINVAL,
	   "a corrector without correct() is refused");
	ok(autosync_planner_set_corrector(p, NULL, &err) == 0,
	   "NULL: the analytic model");
	is(autosync_family_name(AUTOSYNC_FAMILY_PS), "parameter server",
	   "family names");
	ok(autosync_family_name(AUTOSYNC_FAMILY_N) == NULL, "past the end");
	autosync_planner_destroy(p);
}

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR");

	plan(NO_PLAN);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog",
		 src ? src : "..");
	identity();
	ps_penalty();
	margins();
	failing();
	files();
	bad_correctors();
	return done_testing();
}
