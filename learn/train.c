/* train.c - fitting a learned correction of the analytic simulator:
 * boosted trees (XGBoost's C API) fitted to the log of measured /
 * predicted, so that the analytic model stays the base and the trees
 * learn what it gets wrong; applying it to a dataset; the no-harm margins
 * and measured compute it keeps; writing the file. Deterministic: one
 * thread, a fixed seed, points in the dataset's order. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "booster.h"
#include "envelope.h"
#include "internal.h"

#define ROUNDS 200
/* on top of a base file: at most this many trees, fitted to the target's
 * residuals; how many, cross-validation on the target's records says */
#define BASE_ROUNDS AUTOSYNC_LEARNED_ADAPT_TREES
#define LEARN_CV_FOLDS AUTOSYNC_LEARNED_CV_FOLDS

/* rows of the points 'use' selects (NULL: all), in the dataset's order */
static float *rows(const autosync_dataset_t *d, const char *use, size_t *n)
{
	float *x = malloc((d->n ? d->n : 1) * LEARN_NFEAT * sizeof(float));

	*n = 0;
	for (size_t i = 0; x && i < d->n; i++)
		if (!use || use[i])
			memcpy(x + (*n)++ * LEARN_NFEAT, d->p[i].feat,
			       sizeof(d->p[i].feat));
	return x;
}

static int set_params(BoosterHandle b)
{
	static const char *const kv[][2] = {
	    {"objective", "reg:squarederror"},
	    {"max_depth", "4"},
	    {"eta", "0.1"},
	    {"min_child_weight", "1"},
	    {"nthread", "1"},
	    {"seed", "0"},
	    {"verbosity", "0"},
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		if (XGBoosterSetParam(b, kv[i][0], kv[i][1]))
			return -1;
	return XGBoosterSetAttr(b, "autosync_features", LEARN_FEATURES_VERSION);
}

/* a copy of the base's trees in booster 'b' (XGBoost's JSON) */
static int copy_base(BoosterHandle b, const autosync_learned_t *base)
{
	const char *buf = NULL;
	bst_ulong len = 0;

	return XGBoosterSaveModelToBuffer(base->b, "{\"format\": \"json\"}",
					  &len, &buf) ||
		       XGBoosterLoadModelFromBuffer(b, buf, len)
		   ? -1
		   : 0;
}

/* a booster for rows x[n] (labels y, weights w), starting from a copy of
 * 'base' when there is one, in *b; its data in *m; the number of rounds
 * it already has in *first */
static int booster_for(const float *x, const float *y, const float *w, size_t n,
		       const autosync_learned_t *base, BoosterHandle *b,
		       DMatrixHandle *m, int *first)
{
	*b = NULL;
	*m = NULL;
	*first = 0;
	return XGDMatrixCreateFromMat(x, n, LEARN_NFEAT, NAN, m) ||
		       XGDMatrixSetFloatInfo(*m, "label", y, n) ||
		       XGDMatrixSetFloatInfo(*m, "weight", w, n) ||
		       XGBoosterCreate(m, 1, b) ||
		       (base && (copy_base(*b, base) ||
				 XGBoosterBoostedRounds(*b, first))) ||
		       set_params(*b)
		   ? -1
		   : 0;
}

/* how many trees were fitted on top of the base, kept in the file */
static int set_trees(BoosterHandle b, int trees)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", trees);
	return XGBoosterSetAttr(b, LEARN_TREES_KEY, v);
}

static void booster_free(BoosterHandle b, DMatrixHandle m)
{
	if (b)
		XGBoosterFree(b);
	if (m)
		XGDMatrixFree(m);
}

/* The rows of fold 'f' of 'k' (row i is in fold i % k: 'held') or of
 * the others, copied to the front of x, y, w; their number. */
static size_t fold(const float *x, const float *y, const float *w, size_t n,
		   size_t k, size_t f, int held, float *fx, float *fy,
		   float *fw)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		if ((i % k == f) == held) {
			memcpy(fx + c * LEARN_NFEAT, x + i * LEARN_NFEAT,
			       LEARN_NFEAT * sizeof(float));
			fy[c] = y[i];
			fw[c++] = w[i];
		}
	return c;
}

/* add to err[r] the weighted squared error, on the nh held rows, of the
 * base and of 'base' plus r = 1..BASE_ROUNDS trees fitted to the nt
 * training rows */
static int cv_fold(const autosync_learned_t *base, const float *tx,
		   const float *ty, const float *tw, size_t nt, const float *hx,
		   const float *hy, const float *hw, size_t nh, double *err)
{
	BoosterHandle b;
	DMatrixHandle m, h = NULL;
	const float *out = NULL;
	bst_ulong len = 0;
	int first, rv = -1;

	if (booster_for(tx, ty, tw, nt, base, &b, &m, &first) ||
	    XGDMatrixCreateFromMat(hx, nh, LEARN_NFEAT, NAN, &h))
		goto out;
	for (int r = 0; r <= BASE_ROUNDS; r++) {
		if ((r && XGBoosterUpdateOneIter(b, first + r - 1, m)) ||
		    XGBoosterPredict(b, h, 0, 0, 0, &len, &out) || len != nh)
			goto out;
		for (size_t i = 0; i < nh; i++)
			err[r] += hw[i] * (out[i] - hy[i]) * (out[i] - hy[i]);
	}
	rv = 0;
out:
	if (h)
		XGDMatrixFree(h);
	booster_free(b, m);
	return rv;
}

/* How many trees to fit on top of 'base': 50 trees fit a handful of
 * trials on a new cluster closely, noise included, and may then rank
 * worse than the base alone. K-fold cross-validation on the trials
 * themselves (nothing a site does not have) scores the base plus each
 * number of trees on the trials left out; the least weighted squared
 * error wins, the fewest trees on a tie, 0 keeps the base. */
static int cv_rounds(const float *x, const float *y, const float *w, size_t n,
		     const autosync_learned_t *base, int *rounds,
		     autosync_error_t *errp)
{
	double err[BASE_ROUNDS + 1] = {0};
	size_t k = n < LEARN_CV_FOLDS ? n : LEARN_CV_FOLDS;
	/* one block for both sides' features, one for labels and weights */
	float *tx = malloc((n + 1) * LEARN_NFEAT * sizeof(float) * 2);
	float *ty = malloc((n + 1) * sizeof(float) * 4);
	float *hx = tx ? tx + (n + 1) * LEARN_NFEAT : NULL;
	float *tw = ty ? ty + (n + 1) : NULL,
	      *hy = ty ? ty + 2 * (n + 1) : NULL;
	float *hw = ty ? ty + 3 * (n + 1) : NULL;
	int rv = -1;

	if (!tx || !ty) {
		errno = ENOMEM;
		autosync_errprintf(errp, "learn: out of memory");
		goto out;
	}
	for (size_t f = 0; f < k; f++) {
		size_t nt = fold(x, y, w, n, k, f, 0, tx, ty, tw);
		size_t nh = fold(x, y, w, n, k, f, 1, hx, hy, hw);
		if (nt && nh &&
		    cv_fold(base, tx, ty, tw, nt, hx, hy, hw, nh, err) < 0) {
			learn_xgb_error(errp,
					"learn: XGBoost cross-validation");
			goto out;
		}
	}
	*rounds = 0;
	for (int r = 1; r <= BASE_ROUNDS; r++)
		if (err[r] < err[*rounds])
			*rounds = r;
	rv = 0;
out:
	free(tx);
	free(ty);
	return rv;
}

static autosync_learned_t *fit_rows(const float *x, const float *y,
				    const float *w, size_t n,
				    const autosync_learned_t *base,
				    autosync_error_t *errp)
{
	autosync_learned_t *l = calloc(1, sizeof(*l));
	DMatrixHandle m = NULL;
	int rounds = ROUNDS, first = 0;

	if (!l) {
		errno = ENOMEM;
		autosync_errprintf(errp, "learn: out of memory");
		return NULL;
	}
	if (base && cv_rounds(x, y, w, n, base, &rounds, errp) < 0)
		goto fail;
	if (booster_for(x, y, w, n, base, &l->b, &m, &first) ||
	    XGBoosterSetAttr(l->b, LEARN_TREES_KEY, NULL)) {
		learn_xgb_error(errp, "learn: XGBoost");
		goto fail;
	}
	for (int it = first; it < first + rounds; it++)
		if (XGBoosterUpdateOneIter(l->b, it, m)) {
			learn_xgb_error(errp, "learn: XGBoost training");
			goto fail;
		}
	if (base && set_trees(l->b, rounds) < 0) {
		learn_xgb_error(errp, "learn: XGBoost");
		goto fail;
	}
	XGDMatrixFree(m);
	return l;
fail:
	if (m)
		XGDMatrixFree(m);
	autosync_learned_destroy(l);
	return NULL;
}

/* a used point and its row */
struct row_of {
	const struct point *p;
	size_t row;
};

/* by a point's identity: its group (model and cluster), then its plan */
static int by_identity(const void *a, const void *b)
{
	const struct row_of *x = a, *y = b;
	int c = strcmp(x->p->group, y->p->group);

	return c ? c : strcmp(x->p->plan, y->p->plan);
}

/* The n rows x, y, w of the points 'use' selects, in the dataset's order,
 * put in order of identity: records read in another order (logs joined
 * in another order) give the same folds, the same rows to XGBoost and so
 * the same file. 0 or -1 (no memory). */
static int identity_order(const autosync_dataset_t *d, const char *use,
			  float *x, float *y, float *w, size_t n)
{
	struct row_of *o = malloc((n + 1) * sizeof(*o));
	float *t = malloc((n + 1) * LEARN_NFEAT * sizeof(float));
	size_t j = 0;

	if (!o || !t) {
		free(o);
		free(t);
		return -1;
	}
	for (size_t i = 0; i < d->n && j < n; i++)
		if (use[i]) {
			o[j].p = &d->p[i];
			o[j].row = j;
			j++;
		}
	qsort(o, n, sizeof(*o), by_identity);
	for (size_t k = 0; k < n; k++)
		memcpy(t + k * LEARN_NFEAT, x + o[k].row * LEARN_NFEAT,
		       LEARN_NFEAT * sizeof(float));
	memcpy(x, t, n * LEARN_NFEAT * sizeof(float));
	for (size_t k = 0; k < n; k++)
		t[k] = y[o[k].row];
	memcpy(y, t, n * sizeof(float));
	for (size_t k = 0; k < n; k++)
		t[k] = w[o[k].row];
	memcpy(w, t, n * sizeof(float));
	free(o);
	free(t);
	return 0;
}

autosync_learned_t *autosync_learned_fit(const autosync_dataset_t *d, int by,
					 const char *except,
					 autosync_error_t *errp)
{
	return autosync_learned_adapt(NULL, d, by, except, errp);
}

autosync_learned_t *autosync_learned_adapt(const autosync_learned_t *base,
					   const autosync_dataset_t *d, int by,
					   const char *except,
					   autosync_error_t *errp)
{
	autosync_learned_t *l = NULL;
	char *use = NULL;
	float *x = NULL, *y = NULL, *w = NULL;
	size_t n = 0, k = 0;

	if (!d || (except && (by < 0 || by >= AUTOSYNC_BY_N))) {
		errno = EINVAL;
		autosync_errprintf(errp, "learn: invalid argument");
		return NULL;
	}
	if (!(use = calloc(d->n + 1, 1)) ||
	    !(y = malloc((d->n + 1) * sizeof(float))) ||
	    !(w = malloc((d->n + 1) * sizeof(float))))
		goto nomem;
	for (size_t i = 0; i < d->n; i++)
		if (!except || strcmp(d->p[i].label[by], except)) {
			use[i] = 1;
			y[k++] = (float)log(d->p[i].measured / d->p[i].pred0);
		}
	if (!k) {
		errno = EINVAL;
		autosync_errprintf(errp, "learn: no points to train on");
		goto out;
	}
	if (!(x = rows(d, use, &n)) || learn_weights(d, use, w) != n ||
	    identity_order(d, use, x, y, w, n) < 0)
		goto nomem;
	l = fit_rows(x, y, w, n, base, errp);
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "learn: out of memory");
out:
	free(use);
	free(x);
	free(y);
	free(w);
	return l;
}

int autosync_learned_adapted(const autosync_learned_t *l)
{
	const char *v = NULL;
	char *end;
	int ok = 0;
	long t;

	if (!l || XGBoosterGetAttr(l->b, LEARN_TREES_KEY, &v, &ok) || !ok || !v)
		return -1;
	t = strtol(v, &end, 10);
	return end == v || *end || t < 0 || t > BASE_ROUNDS ? -1 : (int)t;
}

int autosync_learned_apply(const autosync_learned_t *l, autosync_dataset_t *d,
			   int by, const char *only, autosync_error_t *errp)
{
	DMatrixHandle m = NULL;
	const float *out = NULL;
	bst_ulong len = 0;
	char *use = NULL;
	float *x = NULL;
	size_t n = 0, k = 0;
	int rv = -1;

	if (!l || !d || (only && (by < 0 || by >= AUTOSYNC_BY_N))) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	if (!(use = calloc(d->n + 1, 1)))
		goto nomem;
	for (size_t i = 0; i < d->n; i++)
		use[i] = !only || !strcmp(d->p[i].label[by], only);
	if (!(x = rows(d, use, &n)))
		goto nomem;
	if (n && (XGDMatrixCreateFromMat(x, n, LEARN_NFEAT, NAN, &m) ||
		  XGBoosterPredict(l->b, m, 0, 0, 0, &len, &out) || len != n)) {
		learn_xgb_error(errp, "learn: XGBoost prediction");
		goto out;
	}
	for (size_t i = 0; i < d->n; i++)
		if (use[i])
			d->p[i].pred = d->p[i].pred0 * exp(out[k++]);
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "learn: out of memory");
out:
	if (m)
		XGDMatrixFree(m);
	free(use);
	free(x);
	return rv;
}

void autosync_dataset_reset(autosync_dataset_t *d)
{
	for (size_t i = 0; d && i < d->n; i++)
		d->p[i].pred = d->p[i].pred0;
}

/* all of buf[len] to fp; 0 or -1 with errno */
static int write_all(FILE *fp, const void *buf, size_t len)
{
	return len && fwrite(buf, 1, len, fp) != len ? -1 : 0;
}

int autosync_learned_save(const autosync_learned_t *l, const char *path,
			  int format, autosync_error_t *errp)
{
	if (!l || !path ||
	    (format != AUTOSYNC_LEARNED_BINARY &&
	     format != AUTOSYNC_LEARNED_JSON)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	const char *buf = NULL;
	char hdr[LEARN_ENVELOPE_MAX] = "";
	size_t hlen = 0;
	bst_ulong len = 0;
	char tmp[4096];
	const char *name = path;
	struct stat st;
	FILE *fp;

	/* by 'format', whatever the name's end (XGBoosterSaveModel would
	 * pick the format by it) */
	if (XGBoosterSaveModelToBuffer(l->b,
				       format == AUTOSYNC_LEARNED_JSON
					   ? "{\"format\": \"json\"}"
					   : "{\"format\": \"ubj\"}",
				       &len, &buf))
		return learn_xgb_error(errp, path);
	if (format == AUTOSYNC_LEARNED_BINARY)
		hlen = learn_envelope_header(buf, len, hdr);
	/* a file that exists is replaced only once the new one is whole: a
	 * full disk never leaves a site's simulator cut */
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path,
				     (long)getpid()) >= sizeof(tmp)) {
			errno = ENAMETOOLONG;
			return autosync_errprintf(errp, "%s: %s", path,
						  strerror(errno));
		}
		name = tmp;
	}
	if (!(fp = fopen(name, "w")))
		return autosync_errprintf(errp, "%s: %s", path,
					  strerror(errno));
	if (write_all(fp, hdr, hlen) < 0 || write_all(fp, buf, len) < 0 ||
	    fflush(fp) != 0 || fsync(fileno(fp)) != 0) {
		int e = errno;
		fclose(fp);
		if (name == tmp)
			unlink(tmp);
		errno = e;
		return autosync_errprintf(errp, "%s: %s", path, strerror(e));
	}
	if (fclose(fp) != 0 || (name == tmp && rename(tmp, path) != 0)) {
		int e = errno;
		if (name == tmp)
			unlink(tmp);
		errno = e;
		return autosync_errprintf(errp, "%s: %s", path, strerror(e));
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* the 90th percentile of v[0..n-1] (sorted in place), interpolated */
static double p90(double *v, size_t n)
{
	double pos = 0.9 * (double)(n - 1);
	size_t i = (size_t)pos;

	qsort(v, n, sizeof(*v), cmp_double);
	return i + 1 < n ? v[i] + (pos - (double)i) * (v[i + 1] - v[i]) : v[i];
}

/* the median of v[0..n-1], sorted */
static double median_sorted(const double *v, size_t n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* a point's index and group, for sorting */
struct in_group {
	const char *group;
	size_t i;
};

static int by_group(const void *a, const void *b)
{
	const struct in_group *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* The point indices by group, each group's in the dataset's order, so
 * that a group is one run (sorted once: the logs a site retrains on grow
 * without bound, comparing every point with every other would not do).
 * NULL: no memory. */
static size_t *group_order(const autosync_dataset_t *d)
{
	struct in_group *g = malloc((d->n + 1) * sizeof(*g));
	size_t *o = malloc((d->n + 1) * sizeof(*o));

	if (!g || !o) {
		free(g);
		free(o);
		return NULL;
	}
	for (size_t i = 0; i < d->n; i++)
		g[i] = (struct in_group){d->p[i].group, i};
	qsort(g, d->n, sizeof(*g), by_group);
	for (size_t i = 0; i < d->n; i++)
		o[i] = g[i].i;
	free(g);
	return o;
}

/* the end of the run of o[] that starts at s: the next group's start */
static size_t run_end(const autosync_dataset_t *d, const size_t *o, size_t s)
{
	size_t e = s + 1;

	while (e < d->n && !strcmp(d->p[o[e]].group, d->p[o[s]].group))
		e++;
	return e;
}

/* The median of predicted / measured over each point's group: what the
 * prediction is for that model on that cluster whatever the strategy. The
 * planner compares strategies of one group, so only optimism beyond it
 * can make it choose wrongly. */
static void group_ratios(const autosync_dataset_t *d, const size_t *o,
			 double *ref, double *v)
{
	for (size_t s = 0, e; s < d->n; s = e) {
		e = run_end(d, o, s);
		for (size_t k = s; k < e; k++)
			v[k - s] = d->p[o[k]].pred / d->p[o[k]].measured;
		qsort(v, e - s, sizeof(*v), cmp_double);
		for (size_t k = s; k < e; k++)
			ref[o[k]] = median_sorted(v, e - s);
	}
}

/* What the planner would choose of idx[0..m-1]: the AUTOSYNC_ELITES with
 * the least analytic prediction (the earlier point on a tie), then of
 * those the one with the least current prediction (the earlier of the
 * elites on a tie). */
static size_t elite_pick(const autosync_dataset_t *d, size_t *idx, size_t m)
{
	size_t best;

	for (size_t a = 0; a < m && a < AUTOSYNC_ELITES; a++)
		for (size_t b = a + 1; b < m; b++) {
			double pa = d->p[idx[a]].pred0, pb = d->p[idx[b]].pred0;
			if (pb < pa || (pb == pa && idx[b] < idx[a])) {
				size_t t = idx[a];
				idx[a] = idx[b];
				idx[b] = t;
			}
		}
	best = idx[0];
	for (size_t a = 1; a < m && a < AUTOSYNC_ELITES; a++)
		if (d->p[idx[a]].pred < d->p[best].pred)
			best = idx[a];
	return best;
}

/* The optimism of family f's pick in each group that has the family, into
 * v[]; their number. */
static size_t family_picks(const autosync_dataset_t *d, const size_t *o,
			   const double *ref, int f, size_t *idx, double *v)
{
	size_t n = 0;

	for (size_t s = 0, e; s < d->n; s = e) {
		size_t m = 0, k;
		e = run_end(d, o, s);
		for (size_t j = s; j < e; j++)
			if (d->p[o[j]].family == f)
				idx[m++] = o[j];
		if (!m)
			continue;
		k = elite_pick(d, idx, m);
		v[n++] = 1 - d->p[k].pred / d->p[k].measured / ref[k];
	}
	return n;
}

int autosync_dataset_margins(const autosync_dataset_t *d, double *out,
			     size_t *counts, autosync_error_t *errp)
{
	double *v, *ref;
	size_t *idx, *o;

	if (!d || !out) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	v = malloc((d->n + 1) * sizeof(double));
	ref = malloc((d->n + 1) * sizeof(double));
	idx = malloc((d->n + 1) * sizeof(size_t));
	o = group_order(d);
	if (!v || !ref || !idx || !o) {
		free(v);
		free(ref);
		free(idx);
		free(o);
		errno = ENOMEM;
		return autosync_errprintf(errp, "learn: out of memory");
	}
	group_ratios(d, o, ref, v);
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++) {
		size_t n = family_picks(d, o, ref, f, idx, v);
		if (counts)
			counts[f] = n;
		out[f] = n < AUTOSYNC_LEARNED_MIN_FAMILY
			     ? -1
			     : fmin(0.9, fmax(0.02, p90(v, n)));
	}
	free(v);
	free(ref);
	free(idx);
	free(o);
	return 0;
}

int autosync_learned_set_margin(autosync_learned_t *l, int family, double m,
				autosync_error_t *errp)
{
	char key[40], val[32];

	if (!l || family < 0 || family >= AUTOSYNC_FAMILY_N || m > 0.9 ||
	    (m >= 0 && m < 0.02) || isnan(m)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	learn_margin_key(key, sizeof(key), family);
	snprintf(val, sizeof(val), "%.4f", m);
	if (XGBoosterSetAttr(l->b, key, m < 0 ? NULL : val))
		return learn_xgb_error(errp, "learn: XGBoost");
	return 0;
}

int autosync_learned_set_margins(autosync_learned_t *l,
				 const autosync_dataset_t *d, size_t *counts,
				 autosync_error_t *errp)
{
	double m[AUTOSYNC_FAMILY_N];
	int given = 0;

	if (!l) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	if (autosync_dataset_margins(d, m, counts, errp) < 0)
		return -1;
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++) {
		if (autosync_learned_set_margin(l, f, m[f], errp) < 0)
			return -1;
		given += m[f] >= 0;
	}
	return given;
}

/* ---------------------------------------------- measured compute */

/* A point's measured forward + backward compute per sample: the measured
 * step less what the analytic model puts outside compute (exposed
 * communication, the optimizer), only where all communication is at most
 * AUTOSYNC_LEARNED_COMPUTE_COMM of the measured step, so that an error in
 * the exposed part moves it little. NaN when the point cannot tell. */
static double sample_compute(const struct point *p)
{
	double c;

	if (!p->batch || !p->model_hash[0] || !isfinite(p->exposed) ||
	    !isfinite(p->optimizer) || !isfinite(p->comm) ||
	    p->comm > AUTOSYNC_LEARNED_COMPUTE_COMM * p->measured)
		return NAN;
	c = p->measured - p->exposed - p->optimizer;
	return c > 0 ? c / p->batch : NAN;
}

struct cpoint {
	const char *hash;
	uint32_t uid;
	double v;
};

static int cmp_cpoint(const void *a, const void *b)
{
	const struct cpoint *x = a, *y = b;
	int c = strcmp(x->hash, y->hash);

	if (c)
		return c;
	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/* One model's value from its points c[0..n-1] (sorted by user, then
 * value): each user's median, then the median of those, so that one
 * user's records are one vote however many they are. */
static double model_compute(const struct cpoint *c, size_t n, double *votes)
{
	size_t nv = 0;

	for (size_t i = 0, j; i < n; i = j) {
		size_t k;
		for (j = i; j < n && c[j].uid == c[i].uid; j++)
			;
		k = j - i; /* this user's values, sorted */
		votes[nv++] = k % 2 ? c[i + k / 2].v
				    : (c[i + k / 2 - 1].v + c[i + k / 2].v) / 2;
	}
	qsort(votes, nv, sizeof(*votes), cmp_double);
	return median_sorted(votes, nv);
}

int autosync_learned_set_compute(autosync_learned_t *l,
				 const autosync_dataset_t *d,
				 autosync_error_t *errp)
{
	struct cpoint *c;
	double *votes;
	size_t n = 0;
	int given = 0;

	if (!l || !d) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	c = malloc((d->n + 1) * sizeof(*c));
	votes = malloc((d->n + 1) * sizeof(*votes));
	if (!c || !votes) {
		free(c);
		free(votes);
		errno = ENOMEM;
		return autosync_errprintf(errp, "learn: out of memory");
	}
	for (size_t i = 0; i < d->n; i++) {
		double v = sample_compute(&d->p[i]);
		if (isfinite(v))
			c[n++] =
			    (struct cpoint){d->p[i].model_hash, d->p[i].uid, v};
	}
	qsort(c, n, sizeof(*c), cmp_cpoint);
	for (size_t i = 0, j; i < n; i = j) {
		char key[sizeof(LEARN_COMPUTE_KEY) + 16], val[32];
		for (j = i; j < n && !strcmp(c[j].hash, c[i].hash); j++)
			;
		if (j - i < AUTOSYNC_LEARNED_MIN_COMPUTE)
			continue;
		snprintf(key, sizeof(key), LEARN_COMPUTE_KEY "%s", c[i].hash);
		snprintf(val, sizeof(val), "%.6e",
			 model_compute(c + i, j - i, votes));
		if (XGBoosterSetAttr(l->b, key, val)) {
			free(c);
			free(votes);
			return learn_xgb_error(errp, "learn: XGBoost");
		}
		given++;
	}
	free(c);
	free(votes);
	return given;
}
