/* trial.c - what trial runs need from the planner: models with smaller
 * gradients and random valid strategies, simulated so that every measured
 * strategy has the simulator's prediction next to it. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

autosync_model_t *autosync_model_scale(const autosync_model_t *m, double scale,
				       autosync_error_t *errp)
{
	autosync_model_t *s = NULL;
	char name[300];

	if (!m || !(scale >= 1) || !isfinite(scale)) {
		errno = EINVAL;
		autosync_errprintf(errp, "scale_model: invalid argument "
					 "(scale must be >= 1)");
		return NULL;
	}
	if (scale == 1)
		snprintf(name, sizeof(name), "%s", m->name);
	else
		snprintf(name, sizeof(name), "%s@1/%g", m->name, scale);
	if (!(s = autosync_model_create(name, errp)))
		return NULL;
	for (size_t i = 0; i < m->n; i++) {
		const autosync_tensor_t *T = &m->t[i];
		int64_t shape[AUTOSYNC_MAX_DIMS];
		unsigned nd;
		uint64_t rows = 0;
		if (T->sparse && T->ndim >= 1) {
			nd = T->ndim;
			memcpy(shape, T->shape, sizeof(shape));
			shape[0] = (int64_t)ceil((double)T->shape[0] / scale);
			rows = (uint64_t)ceil((double)T->rows_touched / scale);
			if (rows < 1)
				rows = 1;
			if (rows > (uint64_t)shape[0])
				rows = (uint64_t)shape[0];
		} else {
			nd = 1;
			shape[0] = (int64_t)ceil((double)T->numel / scale);
			if (shape[0] < 1)
				shape[0] = 1;
		}
		if (autosync_model_add_tensor(
			s, T->name, T->layer, T->dtype, nd, shape,
			T->sparse && T->ndim >= 1, rows, errp) < 0)
			goto fail;
	}
	if (autosync_model_set_batch(s, m->batch, m->tokens, errp) < 0 ||
	    autosync_model_set_step_compute(s, m->step_compute, errp) < 0)
		goto fail;
	for (size_t l = 0; l < m->nl; l++) {
		const autosync_layer_compute_t *L = &m->l[l];
		double ff = L->fwd_flops >= 0
				? L->fwd_flops
				: 2.0 * (double)L->params * m->tokens;
		if (autosync_model_set_layer_flops(s, L->name, ff, L->bwd_flops,
						   errp) < 0)
			goto fail;
		/* measured times win over FLOPs: they stay what they were */
		for (size_t j = 0; j < s->nl; j++)
			if (!strcmp(s->l[j].name, L->name)) {
				s->l[j].fwd_time = L->fwd_time;
				s->l[j].bwd_time = L->bwd_time;
			}
	}
	s->compute_src = m->compute_src;
	s->step_compute_fb = m->step_compute_fb;
	s->grad_scale = m->grad_scale * scale;
	return s;
fail:
	autosync_model_destroy(s);
	return NULL;
}

/* splitmix64: small, seedable, the same everywhere */
static uint64_t rnd(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rndu(uint64_t *st, unsigned n)
{
	return n ? (unsigned)(rnd(st) % n) : 0;
}

/* A bucket's synchronization: PS with probability 'ps' (in quarters)
 * where PS is allowed, else all-reduce with algorithm 'algo' (-1: a
 * random one) and compression with probability 'cz' (in quarters). */
static struct bcfg random_bcfg(uint64_t *st, unsigned nodes, int ps_ok,
			       unsigned ps, int algo, unsigned cz)
{
	static const int algos[] = {AUTOSYNC_ALGO_RING, AUTOSYNC_ALGO_TREE,
				    AUTOSYNC_ALGO_HIER};
	struct bcfg cfg = {AUTOSYNC_SYNC_ALLREDUCE,
			   AUTOSYNC_ALGO_RING,
			   AUTOSYNC_COMPRESS_NONE,
			   0,
			   0,
			   0,
			   1,
			   0};

	/* a certain outcome draws nothing (the dataset's seeds reproduce) */
	if (ps_ok && nodes > 1 && ps && (ps >= 4 || rndu(st, 4) < ps)) {
		cfg.kind = AUTOSYNC_SYNC_PS;
		cfg.servers = 1 + rndu(st, nodes);
		cfg.local_agg = (int)rndu(st, 2);
		cfg.local_repl = (int)rndu(st, 2);
		cfg.densify = 0;
	} else {
		cfg.algo = algo >= 0 ? algo : algos[rndu(st, 3)];
		if (cz && (cz >= 4 || rndu(st, 4) < cz))
			cfg.compress = 1 + (int)rndu(st, 2);
	}
	return cfg;
}

/* Tensors o.. o+len-1 (ready order) into a new bucket 'cfg', each PS
 * tensor on a random server or sharded (AUTOSYNC_NO_SERVER) by halves. */
static int random_fill(const struct simctx *x, struct strategy *s,
		       const struct bcfg *cfg, size_t o, size_t len,
		       uint64_t *st)
{
	long b = planner_strategy_add_bucket(s, cfg);

	if (b < 0)
		return -1;
	for (size_t j = o; j < o + len; j++) {
		size_t t = x->order[j];
		s->tb[t] = (size_t)b;
		s->server[t] = AUTOSYNC_NO_SERVER;
		if (cfg->kind == AUTOSYNC_SYNC_PS && rndu(st, 2))
			s->server[t] = (int)rndu(st, cfg->servers);
	}
	return 0;
}

/* The dataset's space (results/2026-12-03-dataset): 1..64 buckets,
 * log-uniform, cut one after another (so the first ones are large), each
 * PS with probability 1/3. Kept draw for draw: its seeds reproduce. */
static int random_narrow(const struct simctx *x, struct strategy *s, size_t nt,
			 int ps_ok, int allow_compress, uint64_t *st)
{
	size_t nb, o = 0;

	nb = (size_t)floor(exp2((double)rndu(st, 7001) / 1000.0));
	if (nb < 1)
		nb = 1;
	if (nb > nt)
		nb = nt;
	for (size_t b = 0; b < nb; b++) {
		size_t left = nt - o, need = nb - b - 1, len;
		struct bcfg cfg;
		len = need ? 1 + rndu(st, (unsigned)(left - need)) : left;
		/* PS one time in 3, compression one in 4 */
		if (ps_ok && x->nodes > 1 && rndu(st, 3) == 0)
			cfg = random_bcfg(st, x->nodes, 1, 4, -1, 0);
		else
			cfg = random_bcfg(st, x->nodes, 0, 0, -1,
					  allow_compress ? 1 : 0);
		if (random_fill(x, s, &cfg, o, len, st) < 0)
			return -1;
		o += len;
	}
	return 0;
}

/* The planner's space: 1..tensors buckets, log-uniform, with boundaries
 * drawn uniformly (buckets of like size, as the planner makes them); per
 * strategy a PS share of 0, 1/4 .. 1 (so all-PS and all-all-reduce plans
 * with many buckets occur, as the planner picks them), one algorithm for
 * every bucket half of the time, and a compression share of 0, 1/4 .. 1
 * where compression is allowed. */
static int random_wide(const struct simctx *x, struct strategy *s, size_t nt,
		       int ps_ok, int allow_compress, uint64_t *st)
{
	static const int algos[] = {AUTOSYNC_ALGO_RING, AUTOSYNC_ALGO_TREE,
				    AUTOSYNC_ALGO_HIER};
	size_t nb, o = 0, cuts, left;
	unsigned ps = ps_ok ? rndu(st, 5) : 0;
	unsigned cz = allow_compress ? rndu(st, 5) : 0;
	int algo = rndu(st, 2) ? algos[rndu(st, 3)] : -1;

	nb = (size_t)floor(
	    exp2(log2((double)nt + 1) * (double)rndu(st, 1000001) / 1e6));
	if (nb < 1)
		nb = 1;
	if (nb > nt)
		nb = nt;
	/* nb - 1 of the nt - 1 gaps, each with the same chance (Knuth's
	 * selection sampling: one pass, exactly nb - 1 chosen) */
	cuts = nb - 1;
	left = nt - 1;
	for (size_t g = 1; g <= nt; g++, left--) {
		int cut = g == nt || (cuts && rnd(st) % left < cuts);
		struct bcfg cfg;
		if (!cut)
			continue;
		if (g < nt)
			cuts--;
		cfg = random_bcfg(st, x->nodes, ps_ok, ps, algo, cz);
		if (random_fill(x, s, &cfg, o, g - o, st) < 0)
			return -1;
		o = g;
	}
	return 0;
}

autosync_plan_t *planner_random_plan(const autosync_model_t *m,
				     const autosync_cluster_t *c,
				     const autosync_costs_t *k, int fw,
				     int allow_compress, int space,
				     uint64_t seed, autosync_error_t *errp)
{
	struct simctx x;
	struct strategy s;
	struct simres r;
	autosync_plan_t *plan = NULL;
	uint64_t st = seed * 0x2545f4914f6cdd1dULL + 1;
	int ps_ok = fw == AUTOSYNC_FW_GENERIC || fw == AUTOSYNC_FW_AUTODIST;
	int wide = space == AUTOSYNC_RANDOM_WIDE;

	if (!m || !c || !k) {
		errno = EINVAL;
		autosync_errprintf(errp, "random_plan: invalid argument");
		return NULL;
	}
	memset(&r, 0, sizeof(r));
	memset(&s, 0, sizeof(s));
	if (planner_simctx_init(&x, m, c, k, fw, errp) < 0)
		return NULL;
	if (planner_strategy_init(&s, m->n) < 0)
		goto nomem;
	snprintf(s.name, sizeof(s.name), "random-%s%llu", wide ? "wide-" : "",
		 (unsigned long long)seed);
	if ((wide ? random_wide : random_narrow)(&x, &s, m->n, ps_ok,
						 allow_compress, &st) < 0 ||
	    planner_simulate(&x, &s, &r, 1) < 0)
		goto nomem;
	plan = planner_plan_from_strategy(&x, &s, &r, "random strategy (trial)",
					  errp);
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "random_plan: out of memory");
out:
	planner_simres_free(&r);
	planner_strategy_free(&s);
	planner_simctx_free(&x);
	return plan;
}
