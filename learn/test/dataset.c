/* dataset.c - the metrics of learn/learn.h on hand-made records whose
 * values are worked out in the comments. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/internal.h"
#include "tap.h"

static autosync_feedback_rec_t *rec(const char *model, const char *cluster,
				    int plan, double pred, double meas,
				    unsigned steps)
{
	static autosync_feedback_rec_t r;

	memset(&r, 0, sizeof(r));
	snprintf(r.model, sizeof(r.model), "%s", model);
	snprintf(r.model_hash, sizeof(r.model_hash), "%016x",
		 (unsigned)strlen(model));
	snprintf(r.cluster, sizeof(r.cluster), "%s", cluster);
	snprintf(r.plan_hash, sizeof(r.plan_hash), "%016x", plan);
	r.nodes = 2;
	r.gpus_per_node = 2;
	r.predicted = pred;
	/* steps around the median: it is the point's measurement */
	for (unsigned i = 0; i < steps && i < 3; i++)
		r.measured[r.nmeasured++] = meas * (1 + 0.01 * (i - 1.0));
	r.measured_count = steps;
	return &r;
}

#define C1 "nodes=2,gpus=2,nics=1x1Gbit/s"

/* the held-out model's mean signed error after training on the rest:
 * honest records of models A and B measure 1.5 x their prediction; a user
 * adds n records of model A that measure 10 x, of plans of their own or
 * (same) of the honest records' plans; the points in *npoints */
static double forged_shift(int n, double cap, int same, float *w_forged,
			   size_t *npoints)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);
	autosync_learned_t *l;
	autosync_eval_t e = {0};
	float *w;

	autosync_dataset_set_user_cap(d, cap, NULL);
	for (int i = 0; i < 12; i++)
		autosync_dataset_add(d,
				     rec(i < 6 ? "A" : "BB", C1, i,
					 0.1 * (1 + i % 6), 0.15 * (1 + i % 6),
					 3),
				     NULL);
	for (int i = 0; i < n; i++) {
		autosync_feedback_rec_t *r =
		    same ? rec("A", C1, i % 6, 0.1 * (1 + i % 6),
			       10 * 0.1 * (1 + i % 6), 3)
			 : rec("A", C1, 100 + i, 0.1 + 0.5 * i / n,
			       10 * (0.1 + 0.5 * i / n), 3);
		r->uid = 1234;
		autosync_dataset_add(d, r, NULL);
	}
	if ((w = malloc((autosync_dataset_npoints(d) + 1) * sizeof(float))) &&
	    learn_weights(d, NULL, w) == autosync_dataset_npoints(d))
		*w_forged = n ? w[12] : 0;
	free(w);
	*npoints = autosync_dataset_npoints(d);
	l = autosync_learned_fit(d, AUTOSYNC_BY_MODEL, "BB", NULL);
	autosync_learned_apply(l, d, AUTOSYNC_BY_MODEL, "BB", NULL);
	autosync_dataset_eval(d, AUTOSYNC_BY_MODEL, "BB", &e, NULL);
	autosync_learned_destroy(l);
	autosync_dataset_destroy(d);
	return e.mean_signed;
}

/* A user who writes a thousand forged records moves the held-out error by
 * less than 25 percentage points (their weight is capped at 10 %); without
 * the cap they would move it by more than 100. */
static void forged(void)
{
	float w = 0;
	size_t np = 0;
	double honest = forged_shift(0, 0.1, 0, &w, &np);
	double capped = forged_shift(1000, 0.1, 0, &w, &np);
	double uncapped, same;

	near(w, 1.2 / 900, 1e-6,
	     "1000 forged records weigh 10 %% of the total: 12 x 0.1 / 0.9 / "
	     "1000 each (%g)",
	     w);
	uncapped = forged_shift(1000, 1, 0, &w, &np);
	ok(fabs(honest) < 0.05,
	   "held-out model, honest records only: mean error %+.1f %%",
	   100 * honest);
	ok(fabs(capped - honest) < 0.25,
	   "1000 forged records of another user: held-out error %+.1f %% "
	   "(moved %.1f points, bound 25)",
	   100 * capped, 100 * (capped - honest));
	ok(uncapped - honest > 1,
	   "the same without the cap: %+.1f %% (the cap is what holds)",
	   100 * uncapped);
	/* pooled into root's points, they would set those points' medians
	 * at full weight, outside the cap */
	same = forged_shift(1000, 0.1, 1, &w, &np);
	ok(np == 18,
	   "1000 forged records of root's 6 plans of model A: "
	   "6 points of their own beside root's 12 (%zu)",
	   np);
	near(w, 1.2 / 0.9 / 6, 1e-6,
	     "they weigh 10 %% of the total: 12 x 0.1 / 0.9 / 6 each (%g)", w);
	ok(fabs(same - honest) < 0.25,
	   "and move the held-out error by %.1f points (bound 25)",
	   100 * (same - honest));
}
#define C2 "nodes=2,gpus=2,nics=1x400Mbit/s"

/* What the planner gets (autosync_learned_correct) is what eval applies to
 * the same records; margins go into the file and come back. PS records
 * measure 3 x their prediction, all-reduce ones 1.5 x; 6 models (their
 * hashes are their names' lengths), each with both families. */
static void planner_side(void)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);
	autosync_learned_t *l, *back;
	autosync_cluster_t c;
	double terms[2 * AUTOSYNC_TERM_N] = {0}, step[2], out[2];
	size_t counts[AUTOSYNC_FAMILY_N];
	char path[] = "/tmp/autosync-learned-XXXXXX";
	int fd = mkstemp(path), given;
	static const char *const six[] = {"A",	  "BB",	   "CCC",
					  "DDDD", "EEEEE", "FFFFFF"};

	for (int i = 0; i < 24; i++) {
		autosync_feedback_rec_t *r =
		    rec(six[i / 4], C1, i, 0.1 * (1 + i % 6),
			(i % 3 ? 1.5 : 3) * 0.1 * (1 + i % 6), 3);
		snprintf(r->buckets[0].kind, 16, "%s",
			 i % 3 ? "allreduce" : "ps");
		snprintf(r->buckets[0].compress, 8, "none");
		r->buckets[0].tensors = 1;
		r->buckets[0].bytes = 4e6;
		r->nbuckets = 1;
		r->have_terms = 1;
		for (int t = 0; t < AUTOSYNC_TERM_N; t++)
			r->terms[t] = 0;
		r->terms[AUTOSYNC_TERM_PS_BUCKETS] = i % 3 ? 0 : 1;
		r->terms[AUTOSYNC_TERM_BUCKETS] = 1;
		r->terms[AUTOSYNC_TERM_COMM] = r->predicted / 2;
		if (i < 2) {
			memcpy(terms + i * AUTOSYNC_TERM_N, r->terms,
			       sizeof(r->terms));
			step[i] = r->predicted;
		}
		autosync_dataset_add(d, r, NULL);
	}
	l = autosync_learned_fit(d, 0, NULL, NULL);
	autosync_cluster_parse(&c, C1, NULL);
	ok(l && autosync_learned_correct(l, &c, 2, terms, step, out, NULL) == 0,
	   "correct() on two candidates");
	autosync_learned_apply(l, d, 0, NULL, NULL);
	near(out[0], d->p[0].pred, 1e-9 * out[0],
	     "the planner's correction = eval's on the same record (PS: %.4f "
	     "for %.4f, measured %.4f)",
	     out[0], step[0], d->p[0].measured);
	near(out[1], d->p[1].pred, 1e-9 * out[1],
	     "... and on the next (all-reduce: %.4f)", out[1]);
	/* margins from these (in-sample) predictions */
	given = autosync_learned_set_margins(l, d, counts, NULL);
	ok(given == 2 && counts[AUTOSYNC_FAMILY_PS] == 6 &&
	       counts[AUTOSYNC_FAMILY_ALLREDUCE] == 6,
	   "margins for the two families with records, picked in each of "
	   "the 6 groups (%d; PS %zu, all-reduce %zu)",
	   given, counts[AUTOSYNC_FAMILY_PS],
	   counts[AUTOSYNC_FAMILY_ALLREDUCE]);
	ok(autosync_learned_margin(l, AUTOSYNC_FAMILY_TREE) < 0,
	   "no margin for a family without records");
	close(fd);
	ok(autosync_learned_save(l, path, AUTOSYNC_LEARNED_BINARY, NULL) == 0 &&
	       (back = autosync_learned_load(path, NULL)) != NULL,
	   "saved and loaded");
	if (back) {
		double m = autosync_learned_margin(l, AUTOSYNC_FAMILY_PS);
		ok(m >= 0.02 && m <= 0.9 &&
		       fabs(autosync_learned_margin(back, AUTOSYNC_FAMILY_PS) -
			    m) < 1e-4,
		   "the PS margin survives the file (%.4f)", m);
		autosync_learned_destroy(back);
	}
	unlink(path);
	autosync_learned_destroy(l);
	autosync_dataset_destroy(d);
}

/* A family's margin is the optimism of what the planner would pick in
 * each group, not of its typical point. 6 models, 12 all-reduce points
 * each: 11 predicted right, and the one predicted fastest (plan 0) measures
 * 1 / 0.7 of its prediction. Per point that is 1 in 12, under the 90th
 * percentile; every pick is that point: 30 %. */
static void winners_curse(void)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);
	static const char *const six[] = {"A",	  "BB",	   "CCC",
					  "DDDD", "EEEEE", "FFFFFF"};
	double m[AUTOSYNC_FAMILY_N];
	size_t counts[AUTOSYNC_FAMILY_N];

	for (int g = 0; g < 6; g++)
		for (int i = 0; i < 12; i++) {
			autosync_feedback_rec_t *r =
			    rec(six[g], C1, i, 0.1 * (1 + i),
				i ? 0.1 * (1 + i) : 0.1 / 0.7, 3);
			snprintf(r->buckets[0].kind, 16, "allreduce");
			snprintf(r->buckets[0].compress, 8, "none");
			r->buckets[0].tensors = 1;
			r->buckets[0].bytes = 4e6;
			r->nbuckets = 1;
			autosync_dataset_add(d, r, NULL);
		}
	ok(autosync_dataset_margins(d, m, counts, NULL) == 0 &&
	       counts[AUTOSYNC_FAMILY_ALLREDUCE] == 6 &&
	       counts[AUTOSYNC_FAMILY_PS] == 0,
	   "all-reduce picked in 6 groups, PS in none");
	near(m[AUTOSYNC_FAMILY_ALLREDUCE], 0.3, 1e-9,
	     "the all-reduce margin is its picks' optimism, 30 %% (%.4f)",
	     m[AUTOSYNC_FAMILY_ALLREDUCE]);
	ok(m[AUTOSYNC_FAMILY_PS] == -1, "no margin for a family never picked");
	/* the planner re-ranks only the AUTOSYNC_ELITES best by the analytic
	 * prediction: a later point the current prediction puts first is
	 * not a pick (plan 11, predicted 1.2 s, now 0.01 s) */
	for (size_t i = 0; i < d->n; i++)
		if (d->p[i].pred0 > 1.15)
			d->p[i].pred = 0.01;
	autosync_dataset_margins(d, m, counts, NULL);
	near(m[AUTOSYNC_FAMILY_ALLREDUCE], 0.3, 1e-9,
	     "a point outside the %d elites is not picked (%.4f)",
	     AUTOSYNC_ELITES, m[AUTOSYNC_FAMILY_ALLREDUCE]);
	/* inside them it is: plan 1 now predicted at 0.45 of its
	 * measurement, 1 - 0.45 / 1 (the group's median ratio) */
	for (size_t i = 0; i < d->n; i++)
		if (fabs(d->p[i].pred0 - 0.2) < 1e-9)
			d->p[i].pred = 0.09;
	autosync_dataset_margins(d, m, counts, NULL);
	near(m[AUTOSYNC_FAMILY_ALLREDUCE], 0.55, 1e-9,
	     "one of the elites predicted fastest is the pick (%.4f)",
	     m[AUTOSYNC_FAMILY_ALLREDUCE]);
	/* ties at the elites' edge: analytic 1, 1, 2, 1, 0, 0, then 5s make
	 * plans 4, 5, 0 and 1 the elites (the earlier plan on a tie), not
	 * plan 3, which a selection by swapping let in. Every prediction
	 * exact but plan 1's, 0.05 s for 0.2 s measured (the pick: 75 %),
	 * and plan 3's, 0.001 s for 0.4 s (it would give 90 %). */
	{
		static const double pred0[] = {1, 1, 2, 1, 0, 0};
		ok(d->n == 72, "72 points, 12 per group (%zu)", d->n);
		for (size_t i = 0; i < d->n; i++) {
			size_t plan = i % 12;
			d->p[i].pred0 = plan < 6 ? pred0[plan] : 5;
			d->p[i].pred = plan == 1   ? 0.05
				       : plan == 3 ? 0.001
						   : d->p[i].measured;
		}
		autosync_dataset_margins(d, m, counts, NULL);
		near(m[AUTOSYNC_FAMILY_ALLREDUCE], 0.75, 1e-9,
		     "analytic ties: the earlier plan is the elite (%.4f)",
		     m[AUTOSYNC_FAMILY_ALLREDUCE]);
	}
	autosync_dataset_destroy(d);
}

/* Measured compute (autosync_learned_set_compute): a record's forward +
 * backward per sample is measured - exposed - optimizer over its batch,
 * where communication is at most a quarter of the measured step. */
static autosync_feedback_rec_t *crec(const char *model, int plan, uint32_t uid,
				     unsigned batch, double per_sample,
				     double comm)
{
	/* exposed 2 ms, optimizer 1 ms: measured = 3 ms + batch x s */
	autosync_feedback_rec_t *r =
	    rec(model, C1, plan, 0.001, 0.003 + batch * per_sample, 3);

	r->nmeasured = 1; /* exactly the measurement, no spread */
	r->measured[0] = 0.003 + batch * per_sample;
	r->uid = uid;
	r->batch = batch;
	r->have_terms = 1;
	r->terms[AUTOSYNC_TERM_EXPOSED] = 0.002;
	r->terms[AUTOSYNC_TERM_OPTIMIZER] = 0.001;
	r->terms[AUTOSYNC_TERM_COMM] = comm;
	return r;
}

static void measured_compute(void)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);
	autosync_learned_t *l, *back = NULL;
	char path[] = "/tmp/autosync-compute-XXXXXX";
	int fd = mkstemp(path), plan_id = 0;
	const char *a, *b;

	/* model "A" (hash of length 1): root measures 1 ms per sample at
	 * batches 32 and 64, user 1000 1.2 ms; user 2000 forges 50 records
	 * of 10 ms: one vote of three, the median stays 1.2 ms */
	autosync_dataset_add(d, crec("A", plan_id++, 0, 32, 1e-3, 0.005), NULL);
	autosync_dataset_add(d, crec("A", plan_id++, 0, 64, 1e-3, 0.005), NULL);
	autosync_dataset_add(d, crec("A", plan_id++, 1000, 32, 1.2e-3, 0.005),
			     NULL);
	for (int i = 0; i < 50; i++)
		autosync_dataset_add(
		    d, crec("A", plan_id++, 2000, 32, 10e-3, 0.005), NULL);
	/* model "BB": two records only; and communication-bound ones that
	 * do not count (comm 40 ms of a 35 ms step) */
	autosync_dataset_add(d, crec("BB", plan_id++, 0, 32, 1e-3, 0.005),
			     NULL);
	autosync_dataset_add(d, crec("BB", plan_id++, 0, 32, 1e-3, 0.005),
			     NULL);
	for (int i = 0; i < 5; i++)
		autosync_dataset_add(
		    d, crec("BB", plan_id++, 0, 32, 1e-3, 0.040), NULL);
	/* model "CCC": no batch size in its records (older writers) */
	for (int i = 0; i < 5; i++)
		autosync_dataset_add(d, crec("CCC", plan_id++, 0, 0, 1e-3, 0),
				     NULL);
	l = autosync_learned_fit(d, 0, NULL, NULL);
	a = "0000000000000001"; /* rec()'s hash: the name's length */
	b = "0000000000000002";
	ok(l && autosync_learned_set_compute(l, d, NULL) == 1,
	   "measured compute for the one model with 3 counting records");
	near(autosync_learned_compute(l, a), 1.2e-3, 1e-12,
	     "model A: the median of each user's median (root 1, user 1000 "
	     "1.2, user 2000's 50 forged records 10: %.4g s per sample)",
	     autosync_learned_compute(l, a));
	ok(autosync_learned_compute(l, b) < 0,
	   "model BB: 2 counting records (5 communication-bound left out): "
	   "none");
	ok(autosync_learned_compute(l, "0000000000000003") < 0,
	   "model CCC: records without a batch size: none");
	ok(autosync_learned_compute(l, "nothex") < 0, "a bad hash: none");
	close(fd);
	ok(autosync_learned_save(l, path, AUTOSYNC_LEARNED_BINARY, NULL) == 0 &&
	       (back = autosync_learned_load(path, NULL)) != NULL &&
	       fabs(autosync_learned_compute(back, a) - 1.2e-3) < 1e-9,
	   "the measured compute survives the file");
	if (back)
		autosync_learned_destroy(back);
	unlink(path);
	autosync_learned_destroy(l);
	autosync_dataset_destroy(d);
}

/* The strategy's make-up reaches the features as shares of the bytes,
 * the last five: 3 MB PS, 1 MB ring (of it 0.5 MB compressed) -> 0.75,
 * 0, 0, 0.25, 0.125; a record without terms has none of them. */
static void test_share_features(void)
{
	autosync_feedback_rec_t *r = rec("m", C1, 1, 1, 1, 3);
	float f[LEARN_NFEAT];
	static const float want[] = {0.75f, 0, 0, 0.25f, 0.125f};
	int good = 1;

	r->have_terms = 1;
	r->terms[AUTOSYNC_TERM_PS_BYTES] = 3e6;
	r->terms[AUTOSYNC_TERM_RING_BYTES] = 1e6;
	r->terms[AUTOSYNC_TERM_COMPRESSED_BYTES] = 0.5e6;
	learn_features(r, f);
	for (int i = 0; i < 5; i++)
		good &= fabsf(f[LEARN_NFEAT - 5 + i] - want[i]) < 1e-6f;
	ok(good, "features: PS, tree, hier, ring, compressed shares");
	r->have_terms = 0;
	learn_features(r, f);
	good = 1;
	for (int i = 0; i < 5; i++)
		good &= isnan(f[LEARN_NFEAT - 5 + i]);
	ok(good, "features: no terms, no shares (NaN: missing to XGBoost)");
}

/* A record that knows its transport is a cluster of its own, labelled
 * with it; its features are those of the same cluster without one (no
 * feature for it: every record of the dataset ran over one transport). */
static void test_transport_label(void)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);
	autosync_feedback_rec_t *a = malloc(sizeof(*a)),
				*b = malloc(sizeof(*b));
	float fa[LEARN_NFEAT], fb[LEARN_NFEAT];

	if (!a || !b)
		bail_out("malloc");
	*a = *rec("m", C1, 1, 1, 1, 3);
	*b = *rec("m", C1 ",transport=ib", 1, 1, 1, 3);

	learn_features(a, fa);
	learn_features(b, fb);
	ok(memcmp(fa, fb, sizeof(fa)) == 0, "transport: the same features");
	autosync_dataset_add(d, a, NULL);
	autosync_dataset_add(d, b, NULL);
	ok(autosync_dataset_nlabels(d, AUTOSYNC_BY_CLUSTER) == 2,
	   "transport: a cluster of its own");
	is(autosync_dataset_label(d, AUTOSYNC_BY_CLUSTER, 0), "2x2 1Gbit/s",
	   "  unknown: the label as before");
	is(autosync_dataset_label(d, AUTOSYNC_BY_CLUSTER, 1), "2x2 1Gbit/s ib",
	   "  known: named in the label");
	autosync_dataset_destroy(d);
	free(a);
	free(b);
}

/* n records of one model on C2, predicted 0.1 .. 0.1 + 0.05 (n - 1),
 * measuring 'shift' x their prediction, times 1.3 or 1 / 1.3 when 'noise'
 * (as many of each, in the Thue-Morse order: no runs to fit) */
static autosync_dataset_t *target(int n, double shift, int noise)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);

	for (int i = 0; i < n; i++) {
		double p = 0.1 + 0.05 * i, f = shift;
		if (noise)
			f *= __builtin_parity((unsigned)i) ? 1.3 : 1 / 1.3;
		autosync_dataset_add(d, rec("T", C2, i, p, f * p, 3), NULL);
	}
	return d;
}

/* trees fitted on top of a base: as many as cross-validation on the
 * target's records finds useful, none for noise or a single record */
static void adapt(void)
{
	autosync_dataset_t *src = target(0, 1, 0), *d;
	autosync_learned_t *base, *l;
	autosync_eval_t e = {0};
	const char *path = "adapt.test.bin";
	int t;

	for (int i = 0; i < 24; i++) /* the base: 1.5 x on both clusters */
		autosync_dataset_add(src,
				     rec("A", i % 2 ? C1 : C2, i, 0.1 * (1 + i),
					 0.15 * (1 + i), 3),
				     NULL);
	base = autosync_learned_fit(src, 0, NULL, NULL);
	ok(base && autosync_learned_adapted(base) == -1,
	   "a file fitted without a base: not adapted (-1)");
	d = target(20, 3, 0);
	l = autosync_learned_adapt(base, d, 0, NULL, NULL);
	t = autosync_learned_adapted(l);
	autosync_learned_apply(l, d, 0, NULL, NULL);
	autosync_dataset_eval(d, AUTOSYNC_BY_MODEL, NULL, &e, NULL);
	ok(t == AUTOSYNC_LEARNED_ADAPT_TREES && fabs(e.mean_signed) < 0.05,
	   "20 records that measure 3 x: all %d trees (%d), the error left "
	   "%+.1f %%",
	   AUTOSYNC_LEARNED_ADAPT_TREES, t, 100 * e.mean_signed);
	ok(autosync_learned_save(l, path, AUTOSYNC_LEARNED_BINARY, NULL) == 0,
	   "saved");
	autosync_learned_destroy(l);
	l = autosync_learned_load(path, NULL);
	ok(autosync_learned_adapted(l) == t, "  the number kept in the file");
	autosync_learned_destroy(l);
	unlink(path);
	autosync_dataset_destroy(d);
	d = target(20, 1.5, 1);
	l = autosync_learned_adapt(base, d, 0, NULL, NULL);
	t = autosync_learned_adapted(l);
	ok(t == 0,
	   "20 records that scatter 1.3 x either way around the base: %d "
	   "trees (the base as it is)",
	   t);
	autosync_learned_destroy(l);
	autosync_dataset_destroy(d);
	d = target(1, 3, 0);
	l = autosync_learned_adapt(base, d, 0, NULL, NULL);
	ok(autosync_learned_adapted(l) == 0,
	   "one record: nothing to cross-validate on, the base as it is");
	autosync_learned_destroy(l);
	autosync_dataset_destroy(d);
	autosync_learned_destroy(base);
	autosync_dataset_destroy(src);
}

int main(void)
{
	autosync_dataset_t *d = autosync_dataset_create(NULL);
	autosync_error_t err = {.text = ""};
	autosync_eval_t e;
	/* model "m1": predicted 1..5, measured 1.5 2.5 3.5 4.5 and 1.51 (a
	 * tie with 1.5 within 2 %). Pairs: 10, 1 tie; the last point is
	 * ordered against 2.5, 3.5, 4.5 wrongly: pairwise 6/9. tau-b: 7
	 * concordant, 3 discordant: 0.4. Measured ranks 1 3 4 5 2: sum d^2 =
	 * 12, rho = 1 - 72/120 = 0.4. The predicted best is the measured
	 * best: regret 1. */
	static const double p1[] = {1, 2, 3, 4, 5},
			    m1[] = {1.5, 2.5, 3.5, 4.5, 1.51};
	/* model "model2": 3 points ordered the wrong way round: pairwise 0,
	 * tau-b and rho -1, the predicted best measures 3 against 1 */
	static const double p2[] = {1, 2, 3}, m2[] = {3, 2, 1};
	double sig = 0, sabs = 0;

	plan(NO_PLAN);
	test_share_features();
	test_transport_label();
	for (int i = 0; i < 5; i++) {
		ok(autosync_dataset_add(d, rec("m1", C1, i, p1[i], m1[i], 3),
					&err) == 1,
		   "m1 point %d added", i);
		sig += p1[i] / m1[i] - 1;
		sabs += fabs(p1[i] / m1[i] - 1);
	}
	for (int i = 0; i < 3; i++)
		autosync_dataset_add(d, rec("model2", C1, i, p2[i], m2[i], 5),
				     NULL);
	ok(autosync_dataset_add(d, rec("m1", C1, 9, 1, 1, 2), NULL) == 0,
	   "a record with 2 timed steps is left out (minimum 3)");
	ok(autosync_dataset_add(d, rec("m3", C2, 1, 1, 2, 3), NULL) == 1,
	   "a lone point on another cluster");
	ok(autosync_dataset_npoints(d) == 9, "9 points");

	ok(autosync_dataset_eval(d, AUTOSYNC_BY_MODEL, "m1", &e, &err) == 0,
	   "eval m1 (%s)", err.text);
	ok(e.groups == 1 && e.points == 5 && e.pairs == 9 && e.ties == 1,
	   "m1: 1 group, 5 points, 9 pairs, 1 tie (%zu %zu %zu %zu)", e.groups,
	   e.points, e.pairs, e.ties);
	near(e.pairwise, 6.0 / 9, 1e-12, "m1: pairwise 6/9");
	near(e.tau_b, 0.4, 1e-12, "m1: Kendall tau-b 0.4");
	near(e.spearman, 0.4, 1e-12, "m1: Spearman 0.4 (GSL)");
	near(e.regret, 1, 1e-12, "m1: regret 1");
	near(e.mean_signed, sig / 5, 1e-12, "m1: mean signed error %.4f",
	     sig / 5);
	near(e.mean_abs, sabs / 5, 1e-12,
	     "m1: mean absolute error %.4f (4 optimistic, 1 pessimistic)",
	     sabs / 5);

	autosync_dataset_eval(d, AUTOSYNC_BY_MODEL, "model2", &e, NULL);
	ok(e.pairwise == 0 && e.regret == 3, "model2: pairwise 0, regret 3");
	near(e.tau_b, -1, 1e-12, "model2: tau-b -1");
	near(e.spearman, -1, 1e-12, "model2: rho -1");

	ok(autosync_dataset_nlabels(d, AUTOSYNC_BY_CLUSTER) == 2, "2 clusters");
	is(autosync_dataset_label(d, AUTOSYNC_BY_CLUSTER, 0), "2x2 1Gbit/s",
	   "cluster label: layout and NIC speed");
	is(autosync_dataset_label(d, AUTOSYNC_BY_CLUSTER, 1), "2x2 400Mbit/s",
	   "  in Mbit/s below 1 Gbit/s");
	is(autosync_dataset_label(d, AUTOSYNC_BY_MODEL, 2), "model2",
	   "model labels sorted");
	autosync_dataset_eval(d, AUTOSYNC_BY_CLUSTER, "2x2 1Gbit/s", &e, NULL);
	ok(e.groups == 2 && e.points == 8 && e.pairs == 12,
	   "the 1 Gbit/s cluster: both groups, pairs only inside each");
	near(e.pairwise, 0.5, 1e-12, "  pairwise (6 + 0) / 12");
	near(e.tau_b, -0.3, 1e-12, "  tau-b the mean of the groups'");
	near(e.regret, 2, 1e-12, "  regret the mean of 1 and 3");
	autosync_dataset_eval(d, AUTOSYNC_BY_CLUSTER, "2x2 400Mbit/s", &e,
			      NULL);
	ok(e.groups == 0 && e.points == 1 && isnan(e.pairwise) &&
	       isnan(e.regret) && fabs(e.mean_signed + 0.5) < 1e-12,
	   "a lone point: no ranking (NaN), its error -50 %%");

	/* the same model, cluster and plan again: pooled, median of medians */
	ok(autosync_dataset_add(d, rec("m1", C1, 0, 1, 1.7, 3), NULL) == 1 &&
	       autosync_dataset_npoints(d) == 9 &&
	       autosync_dataset_npooled(d) == 1,
	   "a repeated (model, cluster, plan) is pooled");
	autosync_dataset_eval(d, AUTOSYNC_BY_MODEL, "m1", &e, NULL);
	near(e.mean_signed, (sig - (1 / 1.5 - 1) + (1 / 1.6 - 1)) / 5, 1e-12,
	     "  its measurement is the median of 1.5 and 1.7");
	ok(autosync_dataset_set_tie(d, 1.5, &err) == -1 &&
	       autosync_dataset_set_min_steps(d, 0, NULL) == -1,
	   "tie outside 0..1, minimum steps 0: refused (%s)", err.text);
	autosync_dataset_destroy(d);
	forged();
	planner_side();
	winners_curse();
	measured_compute();
	adapt();
	return done_testing();
}
