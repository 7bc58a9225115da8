/* dataset.c - measured pairs from feedback records, and the ranking and
 * error metrics of their predictions (learn.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "autosync/cluster.h"
#include "internal.h"

autosync_dataset_t *autosync_dataset_create(autosync_error_t *errp)
{
	autosync_dataset_t *d = calloc(1, sizeof(*d));

	if (!d) {
		errno = ENOMEM;
		autosync_errprintf(errp, "dataset: out of memory");
		return NULL;
	}
	d->min_steps = 3;
	d->tie = 0.02;
	d->user_cap = 0.1;
	return d;
}

static void free_labels(autosync_dataset_t *d)
{
	for (int b = 0; b < AUTOSYNC_BY_N; b++) {
		free(d->labels[b]); /* borrowed strings */
		d->labels[b] = NULL;
		d->nlabels[b] = 0;
	}
}

void autosync_dataset_destroy(autosync_dataset_t *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		for (int b = 0; b < AUTOSYNC_BY_N; b++)
			free(d->p[i].label[b]);
		free(d->p[i].group);
		free(d->p[i].meas);
	}
	free(d->p);
	free_labels(d);
	free(d);
}

int autosync_dataset_set_min_steps(autosync_dataset_t *d, unsigned n,
				   autosync_error_t *errp)
{
	if (!d || n < 1) {
		errno = EINVAL;
		return autosync_errprintf(errp, "dataset: the minimum number "
						"of steps is at least 1");
	}
	d->min_steps = n;
	return 0;
}

int autosync_dataset_set_tie(autosync_dataset_t *d, double tie,
			     autosync_error_t *errp)
{
	if (!d || !(tie >= 0 && tie <= 1)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "dataset: a tie is a share "
						"from 0 to 1");
	}
	d->tie = tie;
	return 0;
}

double autosync_dataset_tie(const autosync_dataset_t *d)
{
	return d ? d->tie : 0;
}

int autosync_dataset_set_user_cap(autosync_dataset_t *d, double cap,
				  autosync_error_t *errp)
{
	if (!d || !(cap > 0 && cap <= 1)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "dataset: a user's share is "
						"above 0 and at most 1");
	}
	d->user_cap = cap;
	return 0;
}

/* Water-filling: each user u other than root gets W_u = min(n_u, cap T)
 * with T = n_root + sum W_u, found by iterating down from T = n; with no
 * root records and too few users for the cap, every user weighs the same. */
size_t learn_weights(const autosync_dataset_t *d, const char *use, float *w)
{
	uint32_t *uids = malloc((d->n + 1) * sizeof(uint32_t));
	double *cnt = malloc((d->n + 1) * sizeof(double)), t = 0, t0 = 0;
	size_t nu = 0, n = 0;

	if (!uids || !cnt) {
		free(uids);
		free(cnt);
		return (size_t)-1;
	}
	for (size_t i = 0; i < d->n; i++) {
		size_t u = 0;
		if (use && !use[i])
			continue;
		if (d->p[i].uid == 0) {
			t0++;
			continue;
		}
		while (u < nu && uids[u] != d->p[i].uid)
			u++;
		if (u == nu) {
			uids[nu] = d->p[i].uid;
			cnt[nu++] = 0;
		}
		cnt[u]++;
	}
	t = t0;
	for (size_t u = 0; u < nu; u++)
		t += cnt[u];
	for (int it = 0; it < 200; it++) {
		double next = t0;
		for (size_t u = 0; u < nu; u++)
			next +=
			    cnt[u] < d->user_cap * t ? cnt[u] : d->user_cap * t;
		t = next;
	}
	for (size_t i = 0; i < d->n; i++) {
		size_t u = 0;
		if (use && !use[i])
			continue;
		while (d->p[i].uid && u < nu && uids[u] != d->p[i].uid)
			u++;
		if (!d->p[i].uid)
			w[n++] = 1;
		else if (t > 1e-9)
			w[n++] = (float)((cnt[u] < d->user_cap * t
					      ? cnt[u]
					      : d->user_cap * t) /
					 cnt[u]);
		else
			w[n++] = (float)(1.0 / cnt[u]);
	}
	free(uids);
	free(cnt);
	return n;
}

/* ------------------------------------------------------------ adding */

static double median(double *v, size_t n)
{
	/* gsl sorts in place: the callers pass copies or own arrays */
	return gsl_stats_median(v, 1, n);
}

static double record_measured(const autosync_feedback_rec_t *r)
{
	double v[AUTOSYNC_FEEDBACK_MAX_MEASURED];

	if (!r->nmeasured)
		return r->measured_mean;
	memcpy(v, r->measured, r->nmeasured * sizeof(double));
	return median(v, r->nmeasured);
}

/* "4x2 1Gbit/s": layout and NIC speed, what a cluster is in the lab;
 * "4x8 200Gbit/s ib" where the record knows its transport */
static char *cluster_label(const autosync_feedback_rec_t *r)
{
	autosync_cluster_t c;
	char buf[112];
	double bits;
	int tr;

	if (autosync_cluster_parse(&c, r->cluster, NULL) < 0) {
		snprintf(buf, sizeof(buf), "%ux%u ?", r->nodes,
			 r->gpus_per_node);
		return strdup(buf);
	}
	bits = c.nic_bw * 8;
	tr = c.transport != AUTOSYNC_TRANSPORT_UNKNOWN;
	snprintf(buf, sizeof(buf), "%ux%u %g%s%s%s", r->nodes, r->gpus_per_node,
		 bits >= 1e9 ? bits / 1e9 : bits / 1e6,
		 bits >= 1e9 ? "Gbit/s" : "Mbit/s", tr ? " " : "",
		 tr ? autosync_transport_name(c.transport) : "");
	return strdup(buf);
}

static char *model_label(const autosync_feedback_rec_t *r)
{
	char buf[300];

	if (r->scale > 1)
		snprintf(buf, sizeof(buf), "%s@1/%g", r->model, r->scale);
	else
		snprintf(buf, sizeof(buf), "%s", r->model);
	return strdup(buf);
}

static char *group_key(const autosync_feedback_rec_t *r)
{
	size_t n = strlen(r->model_hash) + strlen(r->cluster) + 2;
	char *k = malloc(n);

	if (k)
		snprintf(k, n, "%s|%s", r->model_hash, r->cluster);
	return k;
}

static int pool(autosync_dataset_t *d, struct point *p, double m)
{
	double *v = realloc(p->meas, (p->nmeas + 1) * sizeof(double)), *tmp;

	if (!v)
		return -1;
	p->meas = v;
	p->meas[p->nmeas++] = m;
	if (!(tmp = malloc(p->nmeas * sizeof(double))))
		return -1;
	memcpy(tmp, p->meas, p->nmeas * sizeof(double));
	p->measured = median(tmp, p->nmeas);
	free(tmp);
	free_labels(d);
	return 0;
}

int autosync_dataset_add(autosync_dataset_t *d,
			 const autosync_feedback_rec_t *r,
			 autosync_error_t *errp)
{
	struct point *p;
	char *key;
	double m;

	if (!d || !r) {
		errno = EINVAL;
		return autosync_errprintf(errp, "dataset: invalid argument");
	}
	m = record_measured(r);
	/* without the cluster (format 1) a group would mix networks */
	if (r->measured_count < d->min_steps || !(m > 0) ||
	    !(r->predicted > 0) || !r->cluster[0])
		return 0;
	if (!(key = group_key(r)))
		goto nomem;
	/* pooled only with the same user's records: another user's forged
	 * steps would otherwise move a point outside their capped weight */
	for (size_t i = 0; i < d->n; i++)
		if (d->p[i].uid == r->uid &&
		    !strcmp(d->p[i].plan, r->plan_hash) &&
		    !strcmp(d->p[i].group, key)) {
			free(key);
			if (pool(d, &d->p[i], m) < 0)
				goto nomem;
			d->pooled++;
			return 1;
		}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		struct point *np = realloc(d->p, cap * sizeof(*np));
		if (!np) {
			free(key);
			goto nomem;
		}
		d->p = np;
		d->cap = cap;
	}
	p = &d->p[d->n];
	memset(p, 0, sizeof(*p));
	p->group = key;
	snprintf(p->plan, sizeof(p->plan), "%s", r->plan_hash);
	p->pred = p->pred0 = r->predicted;
	p->uid = r->uid;
	snprintf(p->model_hash, sizeof(p->model_hash), "%s", r->model_hash);
	p->batch = r->batch;
	p->exposed = r->have_terms ? r->terms[AUTOSYNC_TERM_EXPOSED] : NAN;
	p->optimizer = r->have_terms ? r->terms[AUTOSYNC_TERM_OPTIMIZER] : NAN;
	p->comm = r->have_terms ? r->terms[AUTOSYNC_TERM_COMM] : NAN;
	learn_features(r, p->feat);
	p->family = learn_family(r);
	if (!(p->label[AUTOSYNC_BY_MODEL] = model_label(r)) ||
	    !(p->label[AUTOSYNC_BY_CLUSTER] = cluster_label(r)) ||
	    pool(d, p, m) < 0) {
		for (int b = 0; b < AUTOSYNC_BY_N; b++)
			free(p->label[b]);
		free(p->meas);
		free(key);
		goto nomem;
	}
	d->n++;
	return 1;
nomem:
	errno = ENOMEM;
	return autosync_errprintf(errp, "dataset: out of memory");
}

size_t autosync_dataset_npoints(const autosync_dataset_t *d)
{
	return d ? d->n : 0;
}

size_t autosync_dataset_npooled(const autosync_dataset_t *d)
{
	return d ? d->pooled : 0;
}

/* ------------------------------------------------------------ labels */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int make_labels(autosync_dataset_t *d, int by)
{
	char **l;
	size_t n = 0;

	if (d->labels[by] || !d->n)
		return 0;
	if (!(l = malloc(d->n * sizeof(char *))))
		return -1;
	for (size_t i = 0; i < d->n; i++)
		l[i] = d->p[i].label[by];
	qsort(l, d->n, sizeof(char *), cmp_str);
	for (size_t i = 0; i < d->n; i++)
		if (!n || strcmp(l[n - 1], l[i]))
			l[n++] = l[i];
	d->labels[by] = l;
	d->nlabels[by] = n;
	return 0;
}

size_t autosync_dataset_nlabels(const autosync_dataset_t *d, int by)
{
	if (!d || by < 0 || by >= AUTOSYNC_BY_N ||
	    make_labels((autosync_dataset_t *)d, by) < 0)
		return 0;
	return d->nlabels[by];
}

const char *autosync_dataset_label(const autosync_dataset_t *d, int by,
				   size_t i)
{
	return i < autosync_dataset_nlabels(d, by) ? d->labels[by][i] : NULL;
}

/* ------------------------------------------------------------ metrics */

struct acc {
	double conc, pairs, ties;      /* pairwise, over all groups */
	double tau, rho, regret;       /* sums over groups */
	size_t ntau, nrho, ngroups, n; /* counts */
	double abs_err, signed_err;    /* sums over points */
};

/* Kendall tau-b of one group: pairs ordered alike minus pairs ordered
 * apart, over the pairs not tied in each variable; NaN when undefined. */
static double kendall_tau_b(const double *x, const double *y, size_t n)
{
	double c = 0, dis = 0, tx = 0, ty = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double a = x[i] - x[j], b = y[i] - y[j];
			if (a == 0 && b == 0)
				continue;
			if (a == 0)
				tx++;
			else if (b == 0)
				ty++;
			else if ((a > 0) == (b > 0))
				c++;
			else
				dis++;
		}
	if (c + dis + tx == 0 || c + dis + ty == 0)
		return NAN;
	return (c - dis) / sqrt((c + dis + tx) * (c + dis + ty));
}

/* the first point of least predicted (x) and of least measured (y) time */
static void firsts(const double *x, const double *y, size_t n, size_t *best_p,
		   size_t *best_m)
{
	*best_p = *best_m = 0;
	for (size_t i = 1; i < n; i++) {
		if (x[i] < x[*best_p])
			*best_p = i;
		if (y[i] < y[*best_m])
			*best_m = i;
	}
}

/* One group of n points: predicted x, measured y. */
static int group_metrics(const autosync_dataset_t *d, const double *x,
			 const double *y, size_t n, struct acc *a)
{
	size_t best_p, best_m;
	double *work, t;

	for (size_t i = 0; i < n; i++) {
		a->abs_err += fabs(x[i] / y[i] - 1);
		a->signed_err += x[i] / y[i] - 1;
		a->n++;
	}
	if (n < 2)
		return 0;
	firsts(x, y, n, &best_p, &best_m);
	a->ngroups++;
	a->regret += y[best_p] / y[best_m];
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double lo = y[i] < y[j] ? y[i] : y[j];
			if (fabs(y[i] - y[j]) <= d->tie * lo) {
				a->ties++;
				continue;
			}
			a->pairs++;
			if (x[i] == x[j])
				a->conc += 0.5;
			else if ((x[i] < x[j]) == (y[i] < y[j]))
				a->conc++;
		}
	if (isfinite(t = kendall_tau_b(x, y, n))) {
		a->tau += t;
		a->ntau++;
	}
	if (!(work = malloc(2 * n * sizeof(double))))
		return -1;
	t = gsl_stats_spearman(x, 1, y, 1, n, work);
	free(work);
	if (isfinite(t)) {
		a->rho += t;
		a->nrho++;
	}
	return 0;
}

static int cmp_group(const void *a, const void *b, void *arg)
{
	const struct point *p = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(p[i].group, p[j].group);
	return c ? c : strcmp(p[i].plan, p[j].plan);
}

/* Calls fn for every group of the points whose 'by' label is 'label' (NULL:
 * all), in group order, with the group's point indices and their predicted
 * (x) and measured (y) times; -1 with ENOMEM or fn's -1. */
static int for_groups(const autosync_dataset_t *d, int by, const char *label,
		      int (*fn)(const autosync_dataset_t *, const size_t *,
				const double *, const double *, size_t, void *),
		      void *arg)
{
	size_t *idx = NULL, n = 0;
	double *x = NULL, *y = NULL;
	int rv = -1;

	errno = ENOMEM;
	if (!(idx = malloc((d->n + 1) * sizeof(size_t))) ||
	    !(x = malloc((d->n + 1) * sizeof(double))) ||
	    !(y = malloc((d->n + 1) * sizeof(double))))
		goto out;
	for (size_t i = 0; i < d->n; i++)
		if (!label || !strcmp(d->p[i].label[by], label))
			idx[n++] = i;
	qsort_r(idx, n, sizeof(size_t), cmp_group, d->p);
	for (size_t s = 0, e; s < n; s = e) {
		for (e = s;
		     e < n && !strcmp(d->p[idx[e]].group, d->p[idx[s]].group);
		     e++) {
			x[e - s] = d->p[idx[e]].pred;
			y[e - s] = d->p[idx[e]].measured;
		}
		if (fn(d, idx + s, x, y, e - s, arg) < 0)
			goto out;
	}
	rv = 0;
out:
	free(idx);
	free(x);
	free(y);
	return rv;
}

static int metrics_of(const autosync_dataset_t *d, const size_t *idx,
		      const double *x, const double *y, size_t n, void *arg)
{
	(void)idx;
	return group_metrics(d, x, y, n, arg);
}

int autosync_dataset_eval(const autosync_dataset_t *d, int by,
			  const char *label, autosync_eval_t *out,
			  autosync_error_t *errp)
{
	struct acc a;

	if (!d || !out || by < 0 || by >= AUTOSYNC_BY_N) {
		errno = EINVAL;
		return autosync_errprintf(errp, "dataset: invalid argument");
	}
	memset(&a, 0, sizeof(a));
	if (for_groups(d, by, label, metrics_of, &a) < 0) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "dataset: out of memory");
	}
	out->groups = a.ngroups;
	out->points = a.n;
	out->pairs = (size_t)a.pairs;
	out->ties = (size_t)a.ties;
	out->pairwise = a.pairs ? a.conc / a.pairs : NAN;
	out->tau_b = a.ntau ? a.tau / a.ntau : NAN;
	out->spearman = a.nrho ? a.rho / a.nrho : NAN;
	out->regret = a.ngroups ? a.regret / a.ngroups : NAN;
	out->mean_abs = a.n ? a.abs_err / a.n : NAN;
	out->mean_signed = a.n ? a.signed_err / a.n : NAN;
	return 0;
}

struct picks {
	autosync_pick_t *p;
	size_t n;
};

/* the group's pick and best, as group_metrics takes them for the regret */
static int pick_of(const autosync_dataset_t *d, const size_t *idx,
		   const double *x, const double *y, size_t n, void *arg)
{
	struct picks *ps = arg;
	autosync_pick_t *k;
	size_t bp, bm;

	if (n < 2)
		return 0;
	firsts(x, y, n, &bp, &bm);
	k = &ps->p[ps->n++];
	for (int b = 0; b < AUTOSYNC_BY_N; b++)
		k->label[b] = d->p[idx[0]].label[b];
	memcpy(k->picked, d->p[idx[bp]].plan, sizeof(k->picked));
	memcpy(k->best, d->p[idx[bm]].plan, sizeof(k->best));
	k->picked_s = y[bp];
	k->best_s = y[bm];
	return 0;
}

ssize_t autosync_dataset_picks(const autosync_dataset_t *d,
			       autosync_pick_t **out, autosync_error_t *errp)
{
	struct picks ps = {NULL, 0};

	if (!d || !out) {
		errno = EINVAL;
		return autosync_errprintf(errp, "dataset: invalid argument");
	}
	/* at most one pick per two points */
	if (!(ps.p = calloc(d->n / 2 + 1, sizeof(*ps.p))) ||
	    for_groups(d, AUTOSYNC_BY_MODEL, NULL, pick_of, &ps) < 0) {
		free(ps.p);
		errno = ENOMEM;
		return autosync_errprintf(errp, "dataset: out of memory");
	}
	*out = ps.p;
	return (ssize_t)ps.n;
}
