/* sim.c - the analytic cost model (cost-models.md sections 2-6) and the
 * overlap-aware timeline of one training step. */
#include "config.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------ formulas */
static int bad(unsigned p, double n, double alpha, double bw)
{
	return p == 0 || !isfinite(n) || n < 0 || !isfinite(alpha) ||
	       alpha < 0 || !isfinite(bw) || bw <= 0;
}

#define CHECK(p, n, a, b)               \
	do {                            \
		if (bad(p, n, a, b)) {  \
			errno = EINVAL; \
			return -1;      \
		}                       \
		if ((p) == 1)           \
			return 0;       \
	} while (0)

static double clog2(unsigned p)
{
	unsigned l = 0;
	while ((1u << l) < p && l < 31)
		l++;
	return l;
}

double autosync_sim_ring(unsigned p, double n, double alpha, double bw)
{
	CHECK(p, n, alpha, bw);
	return 2.0 * (p - 1) * alpha + 2.0 * (p - 1) / p * n / bw;
}

double autosync_sim_rabenseifner(unsigned p, double n, double alpha, double bw)
{
	CHECK(p, n, alpha, bw);
	return 2.0 * log2((double)p) * alpha + 2.0 * (p - 1) / p * n / bw;
}

double autosync_sim_recursive_doubling(unsigned p, double n, double alpha,
				       double bw)
{
	CHECK(p, n, alpha, bw);
	return clog2(p) * (alpha + n / bw);
}

double autosync_sim_binary_tree(unsigned p, double n, double alpha, double bw)
{
	CHECK(p, n, alpha, bw);
	return 2.0 * log2((double)p) * (alpha + n / bw);
}

double autosync_sim_double_tree(unsigned p, double n, double alpha, double bw)
{
	CHECK(p, n, alpha, bw);
	return 2.0 * log2((double)p) * alpha + 2.0 * n / bw;
}

double autosync_sim_node_tree(unsigned m, unsigned g, double n, double alpha,
			      double bw_in, double bw_node)
{
	double p = (double)m * g, t_in = 0, t_net = 0;
	int chain = g > 1 || m == 1, net = m > 1;

	/* a link the tree does not use may be unknown (0) */
	if (m == 0 || g == 0 || bad(1, n, alpha, chain ? bw_in : 1) ||
	    bad(1, n, alpha, net ? bw_node : 1)) {
		errno = EINVAL;
		return -1;
	}
	if (p <= 1)
		return 0;
	if (chain)
		t_in = 2.0 * n / bw_in;
	if (net)
		t_net = (m == 2 ? 1.0 : 2.0) * n / bw_node;
	return 2.0 * log2(p) * alpha + (t_in > t_net ? t_in : t_net);
}

double autosync_sim_allgather(unsigned p, double n, double alpha, double bw)
{
	CHECK(p, n, alpha, bw);
	return (p - 1) * alpha + (double)(p - 1) / p * n / bw;
}

double autosync_sim_hier(unsigned m, unsigned g, double n, double a_in,
			 double bw_in, double a_out, double bw_out)
{
	double t = 0;

	if (m == 0 || g == 0 || bad(1, n, a_in, bw_in) ||
	    bad(1, n, a_out, bw_out)) {
		errno = EINVAL;
		return -1;
	}
	if (g > 1)
		t += 2.0 * ((g - 1) * a_in + (double)(g - 1) / g * n / bw_in);
	if (m > 1)
		t += 2.0 * (m - 1) * a_out +
		     2.0 * (m - 1) / m * (n / g) / bw_out;
	return t;
}

double autosync_sim_ps_colocated(unsigned m, unsigned k, const double *load,
				 double bw)
{
	double tot = 0, worst = 0;

	if (m == 0 || k == 0 || k > m || !load || !isfinite(bw) || bw <= 0) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned s = 0; s < k; s++) {
		if (!isfinite(load[s]) || load[s] < 0) {
			errno = EINVAL;
			return -1;
		}
		tot += load[s];
	}
	for (unsigned j = 0; j < m; j++) {
		double own = j < k ? load[j] : 0;
		/* pushes to the other servers + the other nodes' pulls */
		double out = (tot - own) + (m - 1) * own;
		double in = (m - 1) * own + (tot - own);
		double v = out > in ? out : in;
		if (v > worst)
			worst = v;
	}
	return worst / bw;
}

/* ------------------------------------------------------------ context */
static void ar_coefficients(struct simctx *x);

static int cmp_ready(const void *a, const void *b, void *arg)
{
	const struct simctx *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (x->ready[i] < x->ready[j])
		return -1;
	if (x->ready[i] > x->ready[j])
		return 1;
	/* same time: reverse registration order (DDP) */
	return i > j ? -1 : i < j ? 1 : 0;
}

void planner_simctx_free(struct simctx *x)
{
	if (!x)
		return;
	free(x->ready);
	free(x->order);
	free(x->layer_fwd);
	free(x->layer_bwd);
	free(x->scratch);
	memset(x, 0, sizeof(*x));
}

void planner_links(const autosync_cluster_t *c, const autosync_costs_t *K,
		   double *a_in, double *a_out, double *b_in, double *b_node)
{
	*a_in = K->alpha_intra_override > 0 ? K->alpha_intra_override
					    : c->intra_lat;
	*a_out = K->alpha_inter_override > 0 ? K->alpha_inter_override
					     : c->inter_lat;
	*b_in =
	    (K->bw_intra_override > 0 ? K->bw_intra_override : c->intra_bw) *
	    K->intra_eff;
	*b_node = (K->bw_nic_override > 0 ? K->bw_nic_override : c->nic_bw) *
		  (c->nics_per_node ? c->nics_per_node : 1) * K->inter_eff;
	/* a job spanning several leaf switches shares their uplinks */
	if (c->nodes_per_switch > 0 && c->nodes > c->nodes_per_switch &&
	    K->oversubscription > 1)
		*b_node /= K->oversubscription;
}

double planner_link_bw(const autosync_cluster_t *c, double b_in, double b_node)
{
	if (c->nodes <= 1)
		return b_in;
	return c->gpus_per_node > 1 && b_in < b_node ? b_in : b_node;
}

/* a measured step's compute replaces the estimate's total, keeping how it
 * divides among layers and between forward and backward */
static void measured_compute(struct simctx *x, const autosync_model_t *m,
			     size_t nl)
{
	double total = x->t_fwd, f;

	for (size_t l = 0; l < nl; l++)
		total += x->layer_bwd[l];
	if (!(m->step_compute > 0) || !(total > 0))
		return;
	f = m->step_compute / total;
	x->t_fwd = 0;
	for (size_t l = 0; l < nl; l++) {
		x->layer_fwd[l] *= f;
		x->layer_bwd[l] *= f;
		x->t_fwd += x->layer_fwd[l];
	}
}

int planner_simctx_init(struct simctx *x, const autosync_model_t *m,
			const autosync_cluster_t *c, const autosync_costs_t *k,
			int fw, autosync_error_t *errp)
{
	size_t nt = m->n, nl = m->nl;
	double t;
	const autosync_costs_t *K = k;

	memset(x, 0, sizeof(*x));
	x->m = m;
	x->c = *c;
	x->k = *k;
	x->fw = fw;
	x->knob = 1 / m->grad_scale;
	x->nodes = c->nodes;
	x->g = c->gpus_per_node;
	x->p = c->nodes * c->gpus_per_node;
	planner_links(c, K, &x->a_in, &x->a_out, &x->b_in, &x->b_node);
	x->b_out = x->b_node / x->g;
	if (!(x->ready = calloc(nt, sizeof(double))) ||
	    !(x->order = calloc(nt, sizeof(size_t))) ||
	    !(x->layer_fwd = calloc(nl ? nl : 1, sizeof(double))) ||
	    !(x->layer_bwd = calloc(nl ? nl : 1, sizeof(double))) ||
	    !(x->scratch = calloc(3 * (size_t)x->nodes + 3, sizeof(double)))) {
		planner_simctx_free(x);
		errno = ENOMEM;
		return autosync_errprintf(errp, "planner: out of memory");
	}
	x->t_fwd = 0;
	for (size_t l = 0; l < nl; l++) {
		const autosync_layer_compute_t *L = &m->l[l];
		double ff, fw_t, bw_t;
		ff = L->fwd_flops >= 0 ? L->fwd_flops
				       : 2.0 * (double)L->params * m->tokens;
		fw_t = L->fwd_time >= 0 ? L->fwd_time
					: ff * m->batch / K->gpu_flops;
		if (L->bwd_time >= 0)
			bw_t = L->bwd_time;
		else if (L->fwd_time < 0 && L->bwd_flops >= 0)
			bw_t = L->bwd_flops * m->batch / K->gpu_flops;
		else
			bw_t = K->bwd_fwd_ratio * fw_t;
		x->layer_fwd[l] = fw_t;
		x->layer_bwd[l] = bw_t;
		x->t_fwd += fw_t;
	}
	measured_compute(x, m, nl);
	/* backward runs the layers in reverse order of first use */
	t = x->t_fwd;
	{
		double *lready = calloc(nl ? nl : 1, sizeof(double));
		if (!lready) {
			planner_simctx_free(x);
			errno = ENOMEM;
			return autosync_errprintf(errp,
						  "planner: out of memory");
		}
		for (size_t l = nl; l-- > 0;) {
			t += x->layer_bwd[l];
			lready[l] = t;
		}
		for (size_t i = 0; i < nt; i++)
			x->ready[i] = lready[m->t[i].layer_index];
		free(lready);
	}
	x->t_bwd = t - x->t_fwd;
	x->t_opt = (double)m->bytes / K->opt_bw;
	if (x->p > 1)
		ar_coefficients(x);
	for (size_t i = 0; i < nt; i++)
		x->order[i] = i;
	qsort_r(x->order, nt, sizeof(size_t), cmp_ready, x);
	return 0;
}

/* ------------------------------------------------------------ collectives */
/* every algorithm is affine in the message size: t = a + b n */
static void ar_coefficients(struct simctx *x)
{
	double a, b, n = 1e9, t0, t1;

	a = x->nodes == 1 || x->a_in > x->a_out ? x->a_in : x->a_out;
	b = planner_link_bw(&x->c, x->b_in, x->b_node);
	for (int al = 0; al < AUTOSYNC_ALGO_NALGOS; al++) {
		switch (al) {
		case AUTOSYNC_ALGO_TREE:
			t0 = autosync_sim_node_tree(x->nodes, x->g, 0, a,
						    x->b_in, x->b_node);
			t1 = autosync_sim_node_tree(x->nodes, x->g, n, a,
						    x->b_in, x->b_node);
			break;
		case AUTOSYNC_ALGO_HIER:
			if (x->nodes > 1 && x->g > 1) {
				t0 = autosync_sim_hier(x->nodes, x->g, 0,
						       x->a_in, x->b_in,
						       x->a_out, x->b_out);
				t1 = autosync_sim_hier(x->nodes, x->g, n,
						       x->a_in, x->b_in,
						       x->a_out, x->b_out);
				break;
			}
			__attribute__((fallthrough)); /* one level only */
		default:
			t0 = autosync_sim_ring(x->p, 0, a, b);
			t1 = autosync_sim_ring(x->p, n, a, b);
			break;
		}
		x->ar_a[al] = t0;
		x->ar_b[al] = (t1 - t0) / n;
		/* every algorithm reduces the data, NCCL's tree included */
		if (x->k.gamma > 0)
			x->ar_b[al] += (double)(x->p - 1) / x->p * x->k.gamma;
	}
}

double planner_sim_ar_time(const struct simctx *x, int algo, double n)
{
	double r, t;

	if (x->p <= 1 || n <= 0)
		return 0;
	if (algo <= AUTOSYNC_ALGO_AUTO || algo >= AUTOSYNC_ALGO_NALGOS) {
		/* NCCL's own choice, modelled as the better of ring and tree */
		r = x->ar_a[AUTOSYNC_ALGO_RING] +
		    x->ar_b[AUTOSYNC_ALGO_RING] * n;
		t = x->ar_a[AUTOSYNC_ALGO_TREE] +
		    x->ar_b[AUTOSYNC_ALGO_TREE] * n;
		return r < t ? r : t;
	}
	return x->ar_a[algo] + x->ar_b[algo] * n;
}

static double wire_size(int dtype, int compress)
{
	if ((compress == AUTOSYNC_COMPRESS_FP16 ||
	     compress == AUTOSYNC_COMPRESS_BF16) &&
	    (dtype == AUTOSYNC_DT_FLOAT32 || dtype == AUTOSYNC_DT_FLOAT64))
		return 2;
	return autosync_dtype_size(dtype);
}

/* Add an all-reduce of n bytes to the terms: messages x alpha and bytes /
 * bandwidth, on the level they cross (hierarchical: both levels) -- the
 * same coefficients as planner_sim_ar_time(), so the parts add up to it. */
static void ar_terms(const struct simctx *x, int algo, double n, double *tm)
{
	double lat, bw, lat_in = 0, bw_in = 0;
	int inter = x->nodes > 1;

	if (algo <= AUTOSYNC_ALGO_AUTO || algo >= AUTOSYNC_ALGO_NALGOS)
		algo = x->ar_a[AUTOSYNC_ALGO_RING] +
				   x->ar_b[AUTOSYNC_ALGO_RING] * n <
			       x->ar_a[AUTOSYNC_ALGO_TREE] +
				   x->ar_b[AUTOSYNC_ALGO_TREE] * n
			   ? AUTOSYNC_ALGO_RING
			   : AUTOSYNC_ALGO_TREE;
	lat = x->ar_a[algo];
	bw = x->ar_b[algo] * n;
	if (algo == AUTOSYNC_ALGO_HIER && x->nodes > 1 && x->g > 1) {
		lat_in = 2.0 * (x->g - 1) * x->a_in;
		bw_in = 2.0 * (x->g - 1) / x->g * n / x->b_in;
	} else if (!inter) {
		lat_in = lat;
		bw_in = bw;
	}
	tm[AUTOSYNC_TERM_LAT_INTRA] += lat_in;
	tm[AUTOSYNC_TERM_BW_INTRA] += bw_in;
	tm[AUTOSYNC_TERM_LAT_INTER] += lat - lat_in;
	tm[AUTOSYNC_TERM_BW_INTER] += bw - bw_in;
}

/* PowerSGD's share of a bucket, as torch's powerSGD_hook does it: a tensor
 * of >= 2 dims is the matrix n = shape[0] by m = numel / n with rank
 * r = min(rank, n, m), compressed when (n + m) r 2 < n m (torch's
 * min_compression_rate 2); the others are all-reduced as they are. */
struct psgd {
	double unc;   /* bytes all-reduced uncompressed */
	double p, q;  /* bytes of every P (n x r), of every Q (m x r) */
	double flops; /* P = M Q, Q = M^T P, M = P Q^T; orthogonalising P */
	double dense; /* bytes the error feedback reads and writes */
};

static void psgd_add(struct psgd *q, const autosync_tensor_t *T, double sz,
		     unsigned rank)
{
	double n, m, r;

	q->dense += (double)T->numel * sz;
	if (T->ndim < 2 || T->shape[0] < 1) {
		q->unc += (double)T->numel * sz;
		return;
	}
	n = (double)T->shape[0];
	m = (double)T->numel / n;
	r = rank;
	if (r > n)
		r = n;
	if (r > m)
		r = m;
	if (!((n + m) * r * 2 < n * m)) {
		q->unc += (double)T->numel * sz;
		return;
	}
	q->p += n * r * sz;
	q->q += m * r * sz;
	q->flops += 6 * n * m * r + 2 * n * r * r;
}

/* the time of PowerSGD's part: three all-reduces (uncompressed tensors, all
 * P, all Q), the matrix products and orthogonalisation at the GPU's FLOP
 * rate, and the error feedback (add, copy, subtract: three passes over the
 * bucket at cast_bw) */
static double psgd_time(const struct simctx *x, int algo, const struct psgd *q)
{
	return planner_sim_ar_time(x, algo, q->unc) +
	       planner_sim_ar_time(x, algo, q->p) +
	       planner_sim_ar_time(x, algo, q->q) + 2.0 * x->k.launch +
	       q->flops / x->k.gpu_flops + 3.0 * q->dense / x->k.cast_bw;
}

/* PowerSGD's parts: its three all-reduces on their levels, two more
 * launches, and its compute (products, orthogonalisation, error feedback)
 * counted with the casts, the other compression compute */
static void psgd_terms(const struct simctx *x, int algo, const struct psgd *q,
		       double *tm)
{
	const double n[3] = {q->unc, q->p, q->q};

	for (int i = 0; i < 3; i++)
		if (n[i] > 0)
			ar_terms(x, algo, n[i], tm);
	tm[AUTOSYNC_TERM_LAUNCH] += 2.0 * x->k.launch;
	tm[AUTOSYNC_TERM_CAST] +=
	    q->flops / x->k.gpu_flops + 3.0 * q->dense / x->k.cast_bw;
}

double planner_sim_bucket_extra(const struct simctx *x, int algo)
{
	/* DDP runs a hierarchical bucket as the adapter's comm hook: g
	 * reduces, one all-reduce per rail and g broadcasts, not one call */
	if (x->fw == AUTOSYNC_FW_PYTORCH_DDP && algo == AUTOSYNC_ALGO_HIER &&
	    x->nodes > 1 && x->g > 1)
		return x->k.hier_bucket;
	return 0;
}

double planner_sim_cast_time(const struct simctx *x, double cast, double half)
{
	/* a CPU reduction (gloo) converts every 16-bit element; gamma_half
	 * is what that adds to the all-reduce as measured where it runs, a
	 * slow link hiding part of it and a CPU-bound one little (the lab's
	 * 2x4 at 1 Gbit/s: an fp16 all-reduce slower than the fp32 one), so
	 * it adds to the transfer instead of overlapping it */
	double red =
	    x->p > 1 ? (double)(x->p - 1) / x->p * half * x->k.gamma_half : 0;
	return 2.0 * (x->k.cast_launch + cast / x->k.cast_bw) + red;
}

/* all-reduce bucket: tensors list[0..n); its parts are added to 'tm'
 * unless NULL */
static double ar_bucket(const struct simctx *x, const struct bcfg *cfg,
			const size_t *list, size_t n, double *bytes,
			double *wire, double *tm)
{
	const autosync_model_t *m = x->m;
	double dense = 0, raw = 0, cast = 0, half = 0, t = 0, sparse_n = 0;
	unsigned p = x->p;
	int psgd = cfg->compress == AUTOSYNC_COMPRESS_POWERSGD;
	struct psgd q = {0, 0, 0, 0, 0};

	for (size_t i = 0; i < n; i++) {
		const autosync_tensor_t *T = &m->t[list[i]];
		double sz = autosync_dtype_size(T->dtype);
		if (psgd && !T->sparse) {
			raw += (double)T->numel * sz;
			psgd_add(&q, T, sz, cfg->rank);
			continue;
		}
		if (T->sparse && !cfg->densify) {
			double row =
			    (double)T->numel / (double)T->shape[0] * sz;
			/* all-gather of every rank's rows + indices */
			sparse_n += (double)T->rows_touched *
				    (row + x->k.sparse_index_bytes);
			raw += (double)T->rows_touched * row;
			continue;
		}
		raw += (double)T->numel * sz;
		dense += (double)T->numel * wire_size(T->dtype, cfg->compress);
		if (wire_size(T->dtype, cfg->compress) != sz) {
			cast += (double)T->numel * sz;
			half += (double)T->numel *
				wire_size(T->dtype, cfg->compress);
		}
	}
	*bytes = raw;
	*wire = dense + q.unc + q.p + q.q + sparse_n * (p > 1 ? p - 1 : 0);
	if (p <= 1)
		return 0;
	if (q.dense > 0) {
		t += psgd_time(x, cfg->algo, &q);
		if (tm)
			psgd_terms(x, cfg->algo, &q, tm);
	}
	if (dense > 0) {
		t += planner_sim_ar_time(x, cfg->algo, dense);
		if (tm)
			ar_terms(x, cfg->algo, dense, tm);
	}
	if (sparse_n > 0) {
		double a = x->nodes > 1
			       ? (x->a_in > x->a_out ? x->a_in : x->a_out)
			       : x->a_in;
		double b = planner_link_bw(&x->c, x->b_in, x->b_node);
		double g = autosync_sim_allgather(p, sparse_n * p, a, b);
		t += g;
		if (tm)
			tm[AUTOSYNC_TERM_SPARSE] += g;
	}
	if (cast > 0) {
		double c = planner_sim_cast_time(x, cast, half);
		t += c;
		if (tm)
			tm[AUTOSYNC_TERM_CAST] += c;
	}
	if (tm)
		tm[AUTOSYNC_TERM_LAUNCH] +=
		    x->k.launch + planner_sim_bucket_extra(x, cfg->algo);
	return t + x->k.launch + planner_sim_bucket_extra(x, cfg->algo);
}

/* Add a PS bucket's parts, as its busiest node sees them, to 'tm'. */
static void ps_terms(const struct simctx *x, double intra, double net,
		     double server, double msgs, double *tm)
{
	tm[AUTOSYNC_TERM_LAUNCH] += x->k.launch;
	tm[AUTOSYNC_TERM_BW_INTRA] += intra;
	if (x->nodes > 1)
		tm[AUTOSYNC_TERM_LAT_INTER] += 2.0 * x->a_out;
	tm[AUTOSYNC_TERM_PS_NETWORK] += net;
	tm[AUTOSYNC_TERM_PS_SERVER] += server;
	tm[AUTOSYNC_TERM_PS_MESSAGES] += msgs;
}

/* parameter-server bucket; when 'nodet' is not NULL it receives each
 * node's busy time (full-duplex NIC: max of bytes out and in, plus the
 * server-side work of the servers it hosts); its parts are added to 'tm'
 * unless NULL */
static double ps_bucket(const struct simctx *x, const struct bcfg *cfg,
			const size_t *list, size_t n, const int *server,
			double *bytes, double *wire, double *nodet, double *tm)
{
	const autosync_model_t *m = x->m;
	unsigned M = x->nodes, g = x->g, k = cfg->servers ? cfg->servers : 1;
	double *push = x->scratch, *pull = x->scratch + M,
	       *req = x->scratch + 2 * (size_t)M;
	double upush = 0, upull = 0, tpush = 0, tpull = 0, node = 0, raw = 0;
	double worst = 0, fixed, intra = 0, ureq = 0;
	double w_net = 0, w_server = 0, w_msgs = 0; /* the worst node's */

	if (k > M)
		k = M;
	memset(push, 0, k * sizeof(double));
	memset(pull, 0, k * sizeof(double));
	memset(req, 0, k * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		const autosync_tensor_t *T = &m->t[list[i]];
		double sz = autosync_dtype_size(T->dtype), ps, pl;
		if (T->sparse) {
			/* aggregated in the node, the rows of its g ranks
			 * together: their union, not one rank's rows; a
			 * rank that pulls for itself pulls its own rows */
			double row =
			    (double)T->numel / (double)T->shape[0] * sz;
			double own = (double)T->rows_touched;
			double r =
			    cfg->local_agg
				? (double)autosync_tensor_rows_union(T, g)
				: own;
			ps = (cfg->local_agg ? 1 : g) * r *
			     (row + x->k.sparse_index_bytes);
			pl = cfg->local_repl ? r * row : g * own * row;
			raw += own * row;
			node += r * row;
		} else {
			double b = (double)T->numel * sz;
			ps = cfg->local_agg ? b : g * b;
			pl = cfg->local_repl ? b : g * b;
			node += b;
			raw += b;
		}
		if (server[list[i]] < 0) {
			upush += ps / k;
			upull += pl / k;
			ureq += 1;
		} else {
			unsigned sv = (unsigned)server[list[i]] % k;
			push[sv] += ps;
			pull[sv] += pl;
			req[sv] += 1;
		}
	}
	for (unsigned sv = 0; sv < k; sv++) {
		push[sv] += upush;
		pull[sv] += upull;
		req[sv] += ureq;
		tpush += push[sv];
		tpull += pull[sv];
	}
	*bytes = raw;
	*wire = tpush + tpull;
	/* the node's reduce and broadcast move its whole buffer, sparse rows
	 * included */
	if (g > 1 && cfg->local_agg && node > 0)
		intra +=
		    (g - 1) * x->a_in + (double)(g - 1) / g * node / x->b_in;
	if (g > 1 && cfg->local_repl && node > 0)
		intra +=
		    (g - 1) * x->a_in + (double)(g - 1) / g * node / x->b_in;
	if (M == 1) {
		/* one node: the server is the host; GPUs push and pull over
		 * PCIe */
		double net = (tpush > tpull ? tpush : tpull) / x->k.host_bw;
		double t = x->k.launch + intra + net +
			   tpush / x->k.ps_update_bw +
			   2.0 * x->k.ps_msg * req[0];
		if (nodet)
			nodet[0] = t;
		if (tm)
			ps_terms(x, intra, net, tpush / x->k.ps_update_bw,
				 2.0 * x->k.ps_msg * req[0], tm);
		return t;
	}
	fixed = x->k.launch + 2.0 * x->a_out + intra;
	for (unsigned j = 0; j < k; j++) {
		double out = (tpush - push[j]) + (M - 1) * pull[j];
		double in = (M - 1) * push[j] + (tpull - pull[j]);
		double net = (out > in ? out : in) / x->b_node;
		double srv = (M - 1) * push[j] / x->k.ps_update_bw;
		double msgs = 2.0 * x->k.ps_msg * req[j];
		double v = net + fixed + srv + msgs;
		if (nodet)
			nodet[j] = v;
		if (v > worst) {
			worst = v;
			w_net = net;
			w_server = srv;
			w_msgs = msgs;
		}
	}
	if (k < M) {
		/* nodes without a server push everything and pull everything */
		double net = (tpush > tpull ? tpush : tpull) / x->b_node;
		double v = net + fixed;
		if (nodet)
			for (unsigned j = k; j < M; j++)
				nodet[j] = v;
		if (v > worst) {
			worst = v;
			w_net = net;
			w_server = w_msgs = 0;
		}
	}
	if (tm)
		ps_terms(x, intra, w_net, w_server, w_msgs, tm);
	return worst;
}

double planner_sim_bucket_time(const struct simctx *x, const struct bcfg *cfg,
			       const size_t *list, size_t n, const int *server)
{
	double b, w;
	if (cfg->kind == AUTOSYNC_SYNC_PS)
		return ps_bucket(x, cfg, list, n, server, &b, &w, NULL, NULL);
	return ar_bucket(x, cfg, list, n, &b, &w, NULL);
}

/* ------------------------------------------------------------ strategies */
int planner_strategy_init(struct strategy *s, size_t nt)
{
	memset(s, 0, sizeof(*s));
	s->tb = calloc(nt ? nt : 1, sizeof(size_t));
	s->server = calloc(nt ? nt : 1, sizeof(int));
	if (!s->tb || !s->server) {
		planner_strategy_free(s);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nt; i++)
		s->server[i] = AUTOSYNC_NO_SERVER;
	return 0;
}

void planner_strategy_free(struct strategy *s)
{
	if (!s)
		return;
	free(s->cfg);
	free(s->tb);
	free(s->server);
	memset(s, 0, sizeof(*s));
}

int planner_strategy_copy(struct strategy *d, const struct strategy *s,
			  size_t nt)
{
	struct strategy n;

	if (planner_strategy_init(&n, nt) < 0)
		return -1;
	n.nb = n.cap = s->nb;
	if (s->nb && !(n.cfg = malloc(s->nb * sizeof(*n.cfg)))) {
		planner_strategy_free(&n);
		errno = ENOMEM;
		return -1;
	}
	if (s->nb)
		memcpy(n.cfg, s->cfg, s->nb * sizeof(*n.cfg));
	memcpy(n.tb, s->tb, nt * sizeof(size_t));
	memcpy(n.server, s->server, nt * sizeof(int));
	n.job_algo = s->job_algo;
	n.job_compress = s->job_compress;
	n.job_rank = s->job_rank;
	n.bucket_cap = s->bucket_cap;
	n.first_bucket = s->first_bucket;
	n.cycle = s->cycle;
	memcpy(n.name, s->name, sizeof(n.name));
	planner_strategy_free(d);
	*d = n;
	return 0;
}

long planner_strategy_add_bucket(struct strategy *s, const struct bcfg *cfg)
{
	if (s->nb == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 64;
		void *nc = realloc(s->cfg, ncap * sizeof(*s->cfg));
		if (!nc) {
			errno = ENOMEM;
			return -1;
		}
		s->cfg = nc;
		s->cap = ncap;
	}
	s->cfg[s->nb] = *cfg;
	return (long)s->nb++;
}

/* ------------------------------------------------------------ timeline */
void planner_simres_free(struct simres *r)
{
	if (!r)
		return;
	free(r->ready);
	free(r->start);
	free(r->end);
	free(r->comm);
	free(r->bytes);
	free(r->wire);
	free(r->border);
	free(r->cnt);
	free(r->first);
	free(r->list);
	free(r->nodet);
	memset(r, 0, sizeof(*r));
}

static int simres_reserve(struct simres *r, size_t nb, size_t nt,
			  unsigned nodes)
{
	if (r->nb >= nb && r->list && r->nnodes >= nodes)
		return 0;
	planner_simres_free(r);
	r->nb = nb;
	r->nnodes = nodes;
	nb = nb ? nb : 1;
	if (!(r->ready = malloc(nb * sizeof(double))) ||
	    !(r->start = malloc(nb * sizeof(double))) ||
	    !(r->end = malloc(nb * sizeof(double))) ||
	    !(r->comm = malloc(nb * sizeof(double))) ||
	    !(r->bytes = malloc(nb * sizeof(double))) ||
	    !(r->wire = malloc(nb * sizeof(double))) ||
	    !(r->border = malloc(nb * sizeof(size_t))) ||
	    !(r->cnt = malloc(nb * sizeof(size_t))) ||
	    !(r->first = malloc((nb + 1) * sizeof(size_t))) ||
	    !(r->list = malloc((nt ? nt : 1) * sizeof(size_t))) ||
	    !(r->nodet = malloc((nodes + 1) * sizeof(double)))) {
		planner_simres_free(r);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static int cmp_bucket_r(const void *a, const void *b, void *arg)
{
	const struct simres *r = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (r->ready[i] < r->ready[j])
		return -1;
	if (r->ready[i] > r->ready[j])
		return 1;
	return i < j ? -1 : i > j ? 1 : 0;
}

/* The rest of the terms, once the buckets' parts are in r->terms. */
static void sim_terms(const struct simctx *x, const struct strategy *s,
		      struct simres *r, double comp_end)
{
	const autosync_model_t *m = x->m;
	double *tm = r->terms, exposed = r->step - x->t_opt - comp_end;

	tm[AUTOSYNC_TERM_FORWARD] = x->t_fwd;
	tm[AUTOSYNC_TERM_BACKWARD] = x->t_bwd;
	tm[AUTOSYNC_TERM_OPTIMIZER] = x->t_opt;
	tm[AUTOSYNC_TERM_COMM] = r->comm_total;
	tm[AUTOSYNC_TERM_EXPOSED] = exposed > 0 ? exposed : 0;
	tm[AUTOSYNC_TERM_HIDDEN] =
	    r->comm_total > tm[AUTOSYNC_TERM_EXPOSED]
		? r->comm_total - tm[AUTOSYNC_TERM_EXPOSED]
		: 0;
	for (size_t b = 0; b < r->nb; b++) {
		if (!r->cnt[b])
			continue;
		tm[AUTOSYNC_TERM_BUCKETS]++;
		tm[AUTOSYNC_TERM_PS_BUCKETS] +=
		    s->cfg[b].kind == AUTOSYNC_SYNC_PS;
		tm[AUTOSYNC_TERM_COMPRESSED] +=
		    s->cfg[b].compress != AUTOSYNC_COMPRESS_NONE;
		tm[AUTOSYNC_TERM_GRAD_BYTES] += r->bytes[b];
		tm[AUTOSYNC_TERM_WIRE_BYTES] += r->wire[b];
		tm[autosync_bytes_term(s->cfg[b].kind, s->cfg[b].algo)] +=
		    r->bytes[b];
		if (s->cfg[b].compress != AUTOSYNC_COMPRESS_NONE)
			tm[AUTOSYNC_TERM_COMPRESSED_BYTES] += r->bytes[b];
	}
	tm[AUTOSYNC_TERM_PARAMS] = (double)m->params;
	tm[AUTOSYNC_TERM_TENSORS] = (double)m->n;
	for (size_t i = 0; i < m->n; i++)
		tm[AUTOSYNC_TERM_SPARSE_TENSORS] += m->t[i].sparse != 0;
	tm[AUTOSYNC_TERM_LAYERS] = (double)m->nl;
}

int planner_simulate(const struct simctx *x, const struct strategy *s,
		     struct simres *r, int detail)
{
	size_t nt = x->m->n, nb = s->nb;
	double t, comp_end = x->t_fwd + x->t_bwd, first_ready = -1, sum = 0,
		  ar_sum = 0;

	if (simres_reserve(r, nb, nt, x->nodes) < 0)
		return -1;
	memset(r->terms, 0, sizeof(r->terms));
	r->nb = nb;
	/* CSR lists in ready order */
	memset(r->cnt, 0, nb * sizeof(size_t));
	for (size_t i = 0; i < nt; i++)
		r->cnt[s->tb[i]]++;
	r->first[0] = 0;
	for (size_t b = 0; b < nb; b++)
		r->first[b + 1] = r->first[b] + r->cnt[b];
	memset(r->cnt, 0, nb * sizeof(size_t));
	for (size_t o = 0; o < nt; o++) {
		size_t i = x->order[o], b = s->tb[i];
		r->list[r->first[b] + r->cnt[b]++] = i;
	}
	for (size_t b = 0; b < nb; b++) {
		const size_t *l = r->list + r->first[b];
		size_t n = r->cnt[b];
		double rd = 0;
		for (size_t j = 0; j < n; j++)
			if (x->ready[l[j]] > rd)
				rd = x->ready[l[j]];
		if (s->cycle > 0 && n)
			rd = ceil(rd / s->cycle - 1e-9) * s->cycle;
		r->ready[b] = rd;
		if (!n) {
			r->comm[b] = r->bytes[b] = r->wire[b] = 0;
		} else if (s->cfg[b].kind == AUTOSYNC_SYNC_PS)
			r->comm[b] =
			    0; /* computed with the per-node times below */
		else
			r->comm[b] =
			    ar_bucket(x, &s->cfg[b], l, n, &r->bytes[b],
				      &r->wire[b], detail ? r->terms : NULL);
		r->border[b] = b;
	}
	qsort_r(r->border, nb, sizeof(size_t), cmp_bucket_r, r);
	/* One bucket at a time, as the runtimes run them: an all-reduce
	 * bucket occupies every node's NIC, and a PS bucket ends when its
	 * slowest node has pushed and pulled (every rank pulls what every
	 * other pushed), so the next bucket starts after it. */
	t = 0;
	for (size_t o = 0; o < nb; o++) {
		size_t b = r->border[o];
		double st, en;
		if (!r->cnt[b]) {
			r->start[b] = r->end[b] = r->ready[b];
			continue;
		}
		if (s->cfg[b].kind == AUTOSYNC_SYNC_PS)
			r->comm[b] = ps_bucket(
			    x, &s->cfg[b], r->list + r->first[b], r->cnt[b],
			    s->server, &r->bytes[b], &r->wire[b], r->nodet,
			    detail ? r->terms : NULL);
		st = r->ready[b] > t ? r->ready[b] : t;
		en = st + r->comm[b];
		t = en;
		ar_sum += r->comm[b];
		r->start[b] = st;
		r->end[b] = en;
		sum += r->comm[b];
		if (first_ready < 0)
			first_ready = r->ready[b];
	}
	r->comm_total = sum;
	r->step = (t > comp_end ? t : comp_end) + x->t_opt;
	/* cost-models.md section 6 bound: nothing starts before the first
	 * bucket is ready, the buckets run one at a time, and the last cannot
	 * start before it is ready. */
	{
		double b1 = comp_end, b2 = 0, b3 = 0;
		if (first_ready >= 0)
			b2 = first_ready + ar_sum;
		for (size_t o = nb; o-- > 0;) {
			size_t last = r->border[o];
			if (r->cnt[last]) {
				b3 = r->ready[last] + r->comm[last];
				break;
			}
		}
		if (b2 > b1)
			b1 = b2;
		if (b3 > b1)
			b1 = b3;
		r->bound = b1 + x->t_opt;
	}
	if (detail)
		sim_terms(x, s, r, comp_end);
	return 0;
}
