/* nccl.c - NCCL's protocol and channel model, and a plan's NCCL table: per
 * collective and message size, the algorithm, protocol and channel count
 * the tuner plugin applies (docs/planner.md, "NCCL protocols and
 * channels"). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

static const char *const func_names[AUTOSYNC_NCCL_NFUNCS] = {
    "broadcast", "reduce", "allgather", "reducescatter", "allreduce",
};
static const char *const algo_names[AUTOSYNC_NCCL_NALGOS] = {
    "tree",	 "ring", "collnet_direct", "collnet_chain", "nvls",
    "nvls_tree", "pat",
};
static const char *const proto_names[AUTOSYNC_NCCL_NPROTOS] = {
    "ll",
    "ll128",
    "simple",
};

const char *autosync_nccl_func_name(int f)
{
	return f >= 0 && f < AUTOSYNC_NCCL_NFUNCS ? func_names[f] : "?";
}
const char *autosync_nccl_algo_name(int a)
{
	return a >= 0 && a < AUTOSYNC_NCCL_NALGOS ? algo_names[a] : "?";
}
const char *autosync_nccl_proto_name(int p)
{
	return p >= 0 && p < AUTOSYNC_NCCL_NPROTOS ? proto_names[p] : "?";
}

static int lookup(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcasecmp(names[i], s))
			return i;
	errno = EINVAL;
	return -1;
}
int autosync_nccl_func_from_name(const char *s)
{
	return lookup(func_names, AUTOSYNC_NCCL_NFUNCS, s);
}
int autosync_nccl_algo_from_name(const char *s)
{
	return lookup(algo_names, AUTOSYNC_NCCL_NALGOS, s);
}
int autosync_nccl_proto_from_name(const char *s)
{
	return lookup(proto_names, AUTOSYNC_NCCL_NPROTOS, s);
}

/* ------------------------------------------------------------ the model */

/* NCCL 2.28's default constants (µs; cost-models.md section 7), Tree and
 * Ring rows, protocols LL / LL128 / Simple. */
static const double base_lat[2][3] = {
    {6.8, 14.0, 8.4}, /* tree */
    {6.6, 14.0, 8.4}, /* ring */
};
enum { HW_NVLINK, HW_PCI, HW_NET };
static const double hw_lat[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},  /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},	  /* PCI */
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}}, /* network */
};

double autosync_sim_nccl(const autosync_cluster_t *c, const autosync_costs_t *k,
			 int func, int algo, int proto, unsigned channels,
			 double bytes)
{
	double a_in, a_out, b_in, b_node, link, bus, alg, lat;
	double s_in, s_out, lat_in, lat_out, nsteps, ninter;
	unsigned m, g, p;
	int hw;

	if (!c || !k || func < 0 || func >= AUTOSYNC_NCCL_NFUNCS || proto < 0 ||
	    proto >= AUTOSYNC_NCCL_NPROTOS || channels == 0 || !(bytes >= 0) ||
	    !isfinite(bytes) || c->nodes == 0 || c->gpus_per_node == 0 ||
	    !(k->nccl_channel_bw > 0)) {
		errno = EINVAL;
		return -1;
	}
	if (algo != AUTOSYNC_NCCL_RING &&
	    (algo != AUTOSYNC_NCCL_TREE || func != AUTOSYNC_NCCL_ALLREDUCE)) {
		errno = ENOTSUP; /* NCCL's tree is all-reduce only */
		return -1;
	}
	m = c->nodes;
	g = c->gpus_per_node;
	p = m * g;
	if (p == 1)
		return 0;
	planner_links(c, k, &a_in, &a_out, &b_in, &b_node);
	link = planner_link_bw(c, b_in, b_node);
	if (!(link > 0)) {
		errno = EINVAL;
		return -1;
	}
	/* NCCL's hop latencies, scaled so that its Simple ring hop equals
	 * the calibrated link latency: the other protocols keep NCCL's
	 * ratios to it */
	hw = c->intra_class == AUTOSYNC_LINK_NVLINK ? HW_NVLINK : HW_PCI;
	s_in = a_in > 0 ? a_in * 1e6 / hw_lat[hw][1][2] : 1;
	s_out = a_out > 0 ? a_out * 1e6 / hw_lat[HW_NET][1][2] : 1;
	lat_in = hw_lat[hw][algo][proto] * s_in;
	lat_out = hw_lat[HW_NET][algo][proto] * s_out;

	/* bus bandwidth: channels until the slowest link is full, then the
	 * protocol's efficiency (LL: half of every line is flags) */
	bus = channels * k->nccl_channel_bw;
	if (bus > link)
		bus = link;
	if (algo == AUTOSYNC_NCCL_RING) {
		static const double eff[3] = {0.5, 0.92, 1.0};
		bus *= eff[proto];
		nsteps = func == AUTOSYNC_NCCL_ALLREDUCE ? 2.0 * (p - 1)
			 : func == AUTOSYNC_NCCL_ALLGATHER ||
				 func == AUTOSYNC_NCCL_REDUCESCATTER
			     ? p - 1.0
			     : p;
		alg = bus * p / nsteps;
	} else {
		const double eff[3] = {1 / 3.8, m == 1 ? 7.0 / 9 : 120.0 / 128,
				       0.92};
		nsteps = 0;
		alg = bus * eff[proto] * 0.5;
	}

	lat = base_lat[algo][proto];
	if (algo == AUTOSYNC_NCCL_RING) {
		double ov =
		    m > 1 ? (proto == AUTOSYNC_NCCL_SIMPLE ? 3.0 : 1.0) : 0;
		ninter =
		    func == AUTOSYNC_NCCL_ALLREDUCE ? 2.0 * (m - 1) : m - 1.0;
		if (func == AUTOSYNC_NCCL_BROADCAST ||
		    func == AUTOSYNC_NCCL_REDUCE)
			ov = 0; /* a pipeline: no per-step network flush */
		lat += (nsteps - ninter) * (lat_in > ov ? lat_in : ov) +
		       ninter * lat_out;
		/* NCCL's penalty for multi-node Simple rings that are not
		 * latency-bound */
		if (func == AUTOSYNC_NCCL_ALLREDUCE && m > 1 &&
		    proto == AUTOSYNC_NCCL_SIMPLE &&
		    bytes / ((double)channels * p) >= 64)
			lat *= 1.4;
	} else {
		lat += 2.0 * ((g - 1.0) * lat_in + log2(m) * lat_out);
	}
	return lat * 1e-6 + bytes / alg;
}

/* ------------------------------------------------------------ choices */

struct choice {
	int algo, proto;
	unsigned channels; /* 0 = NCCL's own */
};

static unsigned max_channels(const autosync_costs_t *k)
{
	double v = k->nccl_max_channels;
	return v >= 64 ? 64 : v >= 1 ? (unsigned)v : 1;
}

/* The fastest (algorithm, protocol) at the most channels among 'algos'
 * (a bit set), then the fewest channels (powers of two) within the slack
 * of that time. Ties keep the lower algorithm and protocol index. */
static struct choice choose(const autosync_cluster_t *c,
			    const autosync_costs_t *k, int func, unsigned algos,
			    double bytes)
{
	struct choice best = {-1, -1, 0};
	unsigned cmax = max_channels(k);
	double tbest = INFINITY, t;

	for (int a = 0; a < 2; a++) {
		if (!(algos & (1u << a)))
			continue;
		for (int q = 0; q < AUTOSYNC_NCCL_NPROTOS; q++) {
			t = autosync_sim_nccl(c, k, func, a, q, cmax, bytes);
			if (t >= 0 && t < tbest) {
				tbest = t;
				best.algo = a;
				best.proto = q;
			}
		}
	}
	if (best.algo < 0)
		return best;
	for (unsigned ch = 1; ch < cmax; ch *= 2) {
		t = autosync_sim_nccl(c, k, func, best.algo, best.proto, ch,
				      bytes);
		if (t >= 0 && t <= tbest * (1 + k->nccl_channel_slack)) {
			best.channels = ch;
			break;
		}
	}
	return best; /* channels 0: NCCL's count (it may have more) */
}

/* a size range whose all-reduce algorithm the plan's buckets fixed */
struct fixed {
	double lo, hi; /* [lo, hi) bytes; hi INFINITY = open */
	unsigned algos;
};

struct point {
	double bytes;
	int algo; /* AUTOSYNC_NCCL_TREE/RING, -1 = free */
};

static int cmp_point(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return (x->algo > y->algo) - (x->algo < y->algo);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int nccl_algo(int autosync_algo)
{
	return autosync_algo == AUTOSYNC_ALGO_RING   ? AUTOSYNC_NCCL_RING
	       : autosync_algo == AUTOSYNC_ALGO_TREE ? AUTOSYNC_NCCL_TREE
						     : -1;
}

/* All-reduce buckets as fixed ranges: each bucket's wire size is a point;
 * neighbours with one algorithm form a range split from the next at the
 * geometric mean of their sizes; the lowest starts at half the smallest
 * bucket, the highest is open. 'auto' takes the job-level algorithm;
 * hierarchical (no NCCL equivalent) and auto without a hint are free. */
static size_t fixed_ranges(const autosync_plan_t *plan, struct point *pt,
			   struct fixed *fx)
{
	int job = nccl_algo(plan->s.job_algo);
	size_t np = 0, nf = 0;

	for (size_t i = 0; i < plan->nb; i++) {
		const autosync_bucket_t *b = &plan->b[i].b;
		double size = b->wire_bytes > 0 ? b->wire_bytes : b->bytes;

		if (b->kind != AUTOSYNC_SYNC_ALLREDUCE || !(size > 0))
			continue;
		pt[np].bytes = size;
		pt[np].algo =
		    b->algo == AUTOSYNC_ALGO_AUTO ? job : nccl_algo(b->algo);
		np++;
	}
	if (np == 0 && job >= 0) {
		fx[nf++] = (struct fixed){0, INFINITY, 1u << job};
		return nf;
	}
	qsort(pt, np, sizeof(*pt), cmp_point);
	for (size_t i = 0; i < np;) {
		size_t j = i;

		/* buckets of one size with different algorithms: the
		 * first (lower index) wins */
		while (j + 1 < np && (pt[j + 1].algo == pt[i].algo ||
				      pt[j + 1].bytes == pt[j].bytes))
			j++;
		if (pt[i].algo >= 0)
			fx[nf++] = (struct fixed){
			    i == 0 ? floor(pt[0].bytes / 2)
				   : floor(sqrt(pt[i - 1].bytes * pt[i].bytes)),
			    j + 1 == np
				? INFINITY
				: floor(sqrt(pt[j].bytes * pt[j + 1].bytes)),
			    1u << pt[i].algo};
		i = j + 1;
	}
	return nf;
}

/* sizes 64 B .. 16 GiB, boundaries between powers of two */
#define SWEEP_LO 6
#define SWEEP_HI 34

static uint64_t to_u64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 1.8e19)
		return UINT64_MAX;
	return (uint64_t)v;
}

int autosync_plan_derive_nccl(autosync_plan_t *plan, const autosync_costs_t *k,
			      autosync_error_t *errp)
{
	autosync_costs_t defk;
	const autosync_cluster_t *c;
	struct point *pt = NULL;
	struct fixed *fx = NULL;
	double *cut = NULL;
	autosync_nccl_rule_t *rules = NULL;
	size_t nf, ncut = 0, nr = 0, cap;
	int rv = -1;

	if (!plan) {
		errno = EINVAL;
		return autosync_errprintf(errp, "plan_derive_nccl: no plan");
	}
	if (!k) {
		autosync_costs_default(&defk);
		k = &defk;
	}
	c = &plan->s.cluster;
	if (!(pt = calloc(plan->nb + 1, sizeof(*pt))) ||
	    !(fx = calloc(plan->nb + 1, sizeof(*fx))) ||
	    !(cut = calloc(2 * plan->nb + SWEEP_HI, sizeof(*cut))))
		goto nomem;
	nf = fixed_ranges(plan, pt, fx);
	for (int e = SWEEP_LO; e < SWEEP_HI; e++)
		cut[ncut++] = floor(ldexp(M_SQRT2, e));
	for (size_t i = 0; i < nf; i++) {
		if (fx[i].lo > 0)
			cut[ncut++] = fx[i].lo;
		if (isfinite(fx[i].hi))
			cut[ncut++] = fx[i].hi;
	}
	qsort(cut, ncut, sizeof(*cut), cmp_double);
	cap = AUTOSYNC_NCCL_NFUNCS * (ncut + 1);
	if (!(rules = calloc(cap, sizeof(*rules))))
		goto nomem;
	if ((unsigned long)c->nodes * c->gpus_per_node <= 1)
		goto done; /* NCCL tunes nothing for one rank */
	for (int f = 0; f < AUTOSYNC_NCCL_NFUNCS; f++) {
		size_t first = nr;

		/* interval i is [cut[i-1], cut[i]) with cut[-1] = 0 and
		 * cut[ncut] = open */
		for (size_t i = 0; i <= ncut; i++) {
			double lo = i ? cut[i - 1] : 0;
			double hi = i < ncut ? cut[i] : INFINITY;
			double at = i == 0	? hi / 2
				    : i == ncut ? 2 * lo
						: sqrt(lo * hi);
			unsigned algos = 1u << AUTOSYNC_NCCL_RING;
			struct choice ch;

			if (hi <= lo)
				continue; /* a duplicate cut */
			if (f == AUTOSYNC_NCCL_ALLREDUCE) {
				algos |= 1u << AUTOSYNC_NCCL_TREE;
				for (size_t j = 0; j < nf; j++)
					if (at >= fx[j].lo && at < fx[j].hi)
						algos = fx[j].algos;
			}
			ch = choose(c, k, f, algos, at);
			if (ch.algo < 0)
				continue;
			if (nr > first && rules[nr - 1].algo == ch.algo &&
			    rules[nr - 1].proto == ch.proto &&
			    rules[nr - 1].channels == ch.channels &&
			    rules[nr - 1].max_bytes == to_u64(lo)) {
				rules[nr - 1].max_bytes = to_u64(hi);
				continue;
			}
			rules[nr++] =
			    (autosync_nccl_rule_t){.func = f,
						   .algo = ch.algo,
						   .proto = ch.proto,
						   .channels = ch.channels,
						   .min_bytes = to_u64(lo),
						   .max_bytes = to_u64(hi)};
		}
	}
done:
	free(plan->nccl);
	plan->nccl = rules;
	plan->nnccl = nr;
	plan->s.nccl_none = 0; /* a table now, asked for */
	rules = NULL;
	planner_plan_compute_hash(plan);
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "planner: out of memory");
out:
	free(rules);
	free(cut);
	free(fx);
	free(pt);
	return rv;
}

size_t autosync_plan_nnccl_rules(const autosync_plan_t *plan)
{
	return plan ? plan->nnccl : 0;
}

const autosync_nccl_rule_t *autosync_plan_nccl_rule(const autosync_plan_t *plan,
						    size_t i)
{
	if (!plan || i >= plan->nnccl) {
		errno = EINVAL;
		return NULL;
	}
	return &plan->nccl[i];
}
