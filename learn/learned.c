/* learned.c - a learned correction of the analytic simulator: boosted
 * trees (XGBoost's C API) fitted to the log of measured / predicted, so
 * that the analytic model stays the base and the trees learn what it gets
 * wrong. Deterministic: one thread, a fixed seed, points in the dataset's
 * order. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xgboost/c_api.h>

#include "internal.h"

/* The feature layout a file was trained on (features.c); a file of
 * another layout is refused rather than misread. */
#define FEATURES_VERSION "1"
#define ROUNDS 200
/* on top of a base file: fewer trees, fitted to the target's residuals */
#define BASE_ROUNDS 50

struct autosync_learned {
	BoosterHandle b;
};

/* XGBoost's last error without its stack trace: the first line, whose
 * "[time] file:line: " prefix is cut too */
static int xgb_error(autosync_error_t *errp, const char *what)
{
	const char *e = XGBGetLastError(), *p = e ? strstr(e, ": ") : NULL;
	size_t n;

	if (p && (size_t)(p - e) < 120 && e[0] == '[')
		e = p + 2;
	n = e ? strcspn(e, "\n") : 0;
	errno = EINVAL;
	return autosync_errprintf(errp, "%s: %.*s", what,
				  (int)(n > 200 ? 200 : n), e ? e : "");
}

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
	return XGBoosterSetAttr(b, "autosync_features", FEATURES_VERSION);
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

static autosync_learned_t *fit_rows(const float *x, const float *y,
				    const float *w, size_t n,
				    const autosync_learned_t *base,
				    autosync_error_t *errp)
{
	autosync_learned_t *l = calloc(1, sizeof(*l));
	DMatrixHandle m = NULL;
	int rounds = base ? BASE_ROUNDS : ROUNDS, first = 0;

	if (!l) {
		errno = ENOMEM;
		autosync_errprintf(errp, "learn: out of memory");
		return NULL;
	}
	if (XGDMatrixCreateFromMat(x, n, LEARN_NFEAT, NAN, &m) ||
	    XGDMatrixSetFloatInfo(m, "label", y, n) ||
	    XGDMatrixSetFloatInfo(m, "weight", w, n) ||
	    XGBoosterCreate(&m, 1, &l->b) || (base && copy_base(l->b, base)) ||
	    set_params(l->b)) {
		xgb_error(errp, "learn: XGBoost");
		goto fail;
	}
	if (base)
		first = ROUNDS; /* iteration numbers go on from the base's */
	for (int it = first; it < first + rounds; it++)
		if (XGBoosterUpdateOneIter(l->b, it, m)) {
			xgb_error(errp, "learn: XGBoost training");
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
	if (!(x = rows(d, use, &n)) || learn_weights(d, use, w) != n)
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
		xgb_error(errp, "learn: XGBoost prediction");
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

int autosync_learned_save(const autosync_learned_t *l, const char *path,
			  autosync_error_t *errp)
{
	if (!l || !path) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	if (XGBoosterSaveModel(l->b, path))
		return xgb_error(errp, path);
	return 0;
}

autosync_learned_t *autosync_learned_load(const char *path,
					  autosync_error_t *errp)
{
	autosync_learned_t *l = calloc(1, sizeof(*l));
	const char *v = NULL;
	int ok = 0;

	if (!l) {
		errno = ENOMEM;
		autosync_errprintf(errp, "learn: out of memory");
		return NULL;
	}
	if (XGBoosterCreate(NULL, 0, &l->b) || XGBoosterLoadModel(l->b, path)) {
		xgb_error(errp, path);
		autosync_learned_destroy(l);
		return NULL;
	}
	if (XGBoosterGetAttr(l->b, "autosync_features", &v, &ok) || !ok || !v ||
	    strcmp(v, FEATURES_VERSION)) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "%s: not an autosync simulator file of "
				   "feature layout %s",
				   path, FEATURES_VERSION);
		autosync_learned_destroy(l);
		return NULL;
	}
	return l;
}

void autosync_learned_destroy(autosync_learned_t *l)
{
	if (!l)
		return;
	if (l->b)
		XGBoosterFree(l->b);
	free(l);
}
