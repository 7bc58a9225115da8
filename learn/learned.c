/* learned.c - a simulator file's trees in use: loaded from a file's bytes
 * (checked first), correcting the analytic simulator's predictions of
 * planner candidates, and the margins and measured compute the file keeps.
 * All that learn/'s planning module links, with features.c and
 * envelope.c; fitting and writing files is train.c's. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "booster.h"
#include "common/readfile.h"
#include "common/text.h"
#include "envelope.h"
#include "internal.h"
#include "nesting.h"

/* XGBoost's last error without its stack trace: the first line, whose
 * "[time] file:line: " prefix is cut too */
int learn_xgb_error(autosync_error_t *errp, const char *what)
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

/* a number the whole of 'v', from lo to hi; NaN otherwise */
static double number_in(const char *v, double lo, double hi)
{
	char *end;
	double x;

	if (!v || !*v)
		return NAN;
	x = strtod(v, &end);
	return *end || !(x >= lo && x <= hi) ? NAN : x;
}

/* The file's margins (0 to 0.99, as a calibration file takes them: a site
 * may widen one by hand) and measured compute, each a number: a hand-edited
 * "" or "abc" is refused, not read as 0 or skipped. */
static int check_attrs(const autosync_learned_t *l, const char *name,
		       autosync_error_t *errp)
{
	const char **keys = NULL;
	bst_ulong n = 0;
	char q[64];

	if (XGBoosterGetAttrNames(l->b, &n, &keys))
		return learn_xgb_error(errp, name);
	for (bst_ulong i = 0; i < n; i++) {
		const char *v = NULL, *want;
		int ok = 0, margin = !strncmp(keys[i], "autosync_margin_", 16);
		if (!margin && strncmp(keys[i], LEARN_COMPUTE_KEY,
				       sizeof(LEARN_COMPUTE_KEY) - 1))
			continue;
		if (XGBoosterGetAttr(l->b, keys[i], &v, &ok) || !ok)
			continue;
		if (margin ? !isnan(number_in(v, 0, 0.99))
			   : !isnan(number_in(v, 1e-12, 3600)))
			continue;
		want = margin ? "a number from 0 to 0.99, as the cost "
				"constants take it"
			      : "seconds per sample, over 0, at most 3600";
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s: %.40s: bad value '%s' (expected %s)", name,
		    keys[i], asi_quote(v ? v : "", q, sizeof(q)), want);
	}
	return 0;
}

/* the feature layout must be ours; prediction on one thread, so that
 * planning never starts an OpenMP pool */
static autosync_learned_t *checked(autosync_learned_t *l, const char *name,
				   autosync_error_t *errp)
{
	const char *v = NULL;
	int ok = 0;

	if (XGBoosterGetAttr(l->b, "autosync_features", &v, &ok) || !ok || !v ||
	    strcmp(v, LEARN_FEATURES_VERSION)) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "%s: not an autosync simulator file of "
				   "feature layout %s",
				   name, LEARN_FEATURES_VERSION);
		autosync_learned_destroy(l);
		return NULL;
	}
	if (check_attrs(l, name, errp) < 0 ||
	    (XGBoosterSetParam(l->b, "nthread", "1") &&
	     learn_xgb_error(errp, name))) {
		autosync_learned_destroy(l);
		return NULL;
	}
	return l;
}

autosync_learned_t *autosync_learned_load(const char *path,
					  autosync_error_t *errp)
{
	char why[AUTOSYNC_ERROR_LEN] = "", *buf = NULL;
	autosync_learned_t *l;
	size_t n = 0;

	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "learn: invalid argument");
		return NULL;
	}
	if (asi_read_file(path, AUTOSYNC_LEARNED_MAX_BYTES,
			  ASI_READ_OPEN_PREFIX, (uid_t)-1, &buf, &n, why,
			  sizeof(why)) < 0) {
		autosync_errprintf(errp, "%s", why);
		return NULL;
	}
	l = autosync_learned_load_buffer(buf, n, path, errp);
	free(buf);
	return l;
}

/* XGBoost's model in a file's bytes: the UBJSON of a binary simulator
 * file, checked against its header, or JSON. XGBoost reads '{' '"' as
 * JSON, any other '{' as UBJSON (unchecked) and the rest as its old binary
 * format (not checked as well): neither reaches it. */
static int model_bytes(const void *buf, size_t len, const char *name,
		       const void **m, size_t *mlen, autosync_error_t *errp)
{
	int r = learn_envelope_open(buf, len, name, m, mlen, errp);

	if (r < 0)
		return r;
	if (r > 0)
		return learn_ubjson_check(*m, *mlen, name, errp);
	if (len < 2 || memcmp(buf, "{\"", 2)) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "%s: neither an autosync simulator "
					  "file nor XGBoost's JSON model",
					  name);
	}
	*m = buf;
	*mlen = len;
	return learn_json_check(buf, len, name, errp);
}

autosync_learned_t *autosync_learned_load_buffer(const void *buf, size_t len,
						 const char *name,
						 autosync_error_t *errp)
{
	autosync_learned_t *l = calloc(1, sizeof(*l));
	const void *m = NULL;
	size_t mlen = 0;

	if (!l || !buf) {
		errno = l ? EINVAL : ENOMEM;
		autosync_errprintf(errp, "learn: %s",
				   l ? "invalid argument" : "out of memory");
		free(l);
		return NULL;
	}
	if (model_bytes(buf, len, name, &m, &mlen, errp) < 0) {
		free(l);
		return NULL;
	}
	if (XGBoosterCreate(NULL, 0, &l->b) ||
	    XGBoosterLoadModelFromBuffer(l->b, m, mlen)) {
		learn_xgb_error(errp, name);
		autosync_learned_destroy(l);
		return NULL;
	}
	return checked(l, name, errp);
}

int autosync_learned_correct(const autosync_learned_t *l,
			     const autosync_cluster_t *c, size_t n,
			     const double *terms, const double *step,
			     double *out, autosync_error_t *errp)
{
	DMatrixHandle m = NULL;
	const float *y = NULL;
	bst_ulong len = 0;
	float *x;
	int rv = -1;

	if (!l || !terms || !step || !out || !n) {
		errno = EINVAL;
		return autosync_errprintf(errp, "learn: invalid argument");
	}
	if (!(x = malloc(n * LEARN_NFEAT * sizeof(float)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "learn: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		learn_features_of(terms + i * AUTOSYNC_TERM_N, step[i],
				  c ? c->nodes : 0, c ? c->gpus_per_node : 0, c,
				  x + i * LEARN_NFEAT);
	if (XGDMatrixCreateFromMat(x, n, LEARN_NFEAT, NAN, &m) ||
	    XGBoosterPredict(l->b, m, 0, 0, 0, &len, &y) || len != n) {
		learn_xgb_error(errp, "learn: XGBoost prediction");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = step[i] * exp(y[i]);
	rv = 0;
out:
	if (m)
		XGDMatrixFree(m);
	free(x);
	return rv;
}

/* the file's attribute of a family's margin */
void learn_margin_key(char *key, size_t len, int family)
{
	static const char *const short_name[AUTOSYNC_FAMILY_N] = {
	    [AUTOSYNC_FAMILY_ALLREDUCE] = "allreduce",
	    [AUTOSYNC_FAMILY_COMPRESSION] = "compression",
	    [AUTOSYNC_FAMILY_PS] = "ps",
	    [AUTOSYNC_FAMILY_TREE] = "tree",
	    [AUTOSYNC_FAMILY_DDP_HIER] = "ddp_hier",
	    [AUTOSYNC_FAMILY_SMALL_BUCKETS] = "small_buckets",
	};
	snprintf(key, len, "autosync_margin_%s", short_name[family]);
}

double autosync_learned_margin(const autosync_learned_t *l, int family)
{
	const char *v = NULL;
	char key[40];
	int ok = 0;
	double m;

	if (!l || family < 0 || family >= AUTOSYNC_FAMILY_N)
		return -1;
	learn_margin_key(key, sizeof(key), family);
	if (XGBoosterGetAttr(l->b, key, &v, &ok) || !ok || !v)
		return -1;
	m = number_in(v, 0, 0.99);
	return isnan(m) ? -1 : m;
}

double autosync_learned_compute(const autosync_learned_t *l,
				const char *model_hash)
{
	char key[sizeof(LEARN_COMPUTE_KEY) + 16];
	const char *v = NULL;
	int ok = 0;
	double s;

	if (!l || !model_hash || strlen(model_hash) != 16)
		return -1;
	snprintf(key, sizeof(key), LEARN_COMPUTE_KEY "%s", model_hash);
	if (XGBoosterGetAttr(l->b, key, &v, &ok) || !ok || !v)
		return -1;
	s = number_in(v, 1e-12, 3600);
	return isnan(s) ? -1 : s;
}

void autosync_learned_destroy(autosync_learned_t *l)
{
	if (!l)
		return;
	if (l->b)
		XGBoosterFree(l->b);
	free(l);
}
