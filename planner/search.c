/* search.c - the planner object and the deterministic search: baselines,
 * a sweep of the framework's own knobs, an exact dynamic program over
 * bucket boundaries, per-tensor PS/all-reduce choice for sparse tensors
 * and PS server counts; the framework's default stays unless a plan is
 * predicted faster by more than its family's no-harm margin. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MiB (1024.0 * 1024.0)
#define MAX_UNITS 3000
#define PS_MAX_BUCKETS 256

struct autosync_planner {
	autosync_cluster_t c;
	int have_c;
	const autosync_model_t *m;
	autosync_costs_t k;
	int fw;
	int compress;
	int nccl_calibrate;
	int absolute_knobs; /* autosync_planner_set_scaled_knobs(p, 0) */
	int random_space;   /* AUTOSYNC_RANDOM_* */
	unsigned long budget, evals;
	autosync_log_f log;
	void *logarg;
	autosync_corrector_t corr;
	int have_corr;
};

/* The simulation context of the planner's inputs. */
static int sim_context(const autosync_planner_t *p, struct simctx *x,
		       autosync_error_t *errp)
{
	if (planner_simctx_init(x, p->m, &p->c, &p->k, p->fw, errp) < 0)
		return -1;
	if (p->absolute_knobs)
		x->knob = 1;
	return 0;
}

/* ------------------------------------------------------------ trials */

autosync_plan_t *autosync_planner_random(autosync_planner_t *p, uint64_t seed,
					 autosync_error_t *errp)
{
	if (!p || !p->have_c || !p->m) {
		errno = EINVAL;
		autosync_errprintf(errp, "planner_random: cluster and model "
					 "must be set");
		return NULL;
	}
	return planner_random_plan(p->m, &p->c, &p->k, p->fw, p->compress,
				   p->random_space, seed, errp);
}

int autosync_planner_set_random_space(autosync_planner_t *p, int space,
				      autosync_error_t *errp)
{
	if (!p || (space != AUTOSYNC_RANDOM_NARROW &&
		   space != AUTOSYNC_RANDOM_WIDE)) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "planner_set_random_space: %d is "
				   "not a random space",
				   space);
		return -1;
	}
	p->random_space = space;
	return 0;
}

int autosync_planner_compute_times(autosync_planner_t *p, double *forward,
				   double *backward, double *optimizer,
				   double *layer_fwd, double *layer_bwd,
				   autosync_error_t *errp)
{
	struct simctx x;

	if (!p || !p->have_c || !p->m) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "planner_compute_times: cluster "
					  "and model must be set");
	}
	if (sim_context(p, &x, errp) < 0)
		return -1;
	if (forward)
		*forward = x.t_fwd;
	if (backward)
		*backward = x.t_bwd;
	if (optimizer)
		*optimizer = x.t_opt;
	for (size_t l = 0; l < p->m->nl; l++) {
		if (layer_fwd)
			layer_fwd[l] = x.layer_fwd[l];
		if (layer_bwd)
			layer_bwd[l] = x.layer_bwd[l];
	}
	planner_simctx_free(&x);
	return 0;
}

/* ------------------------------------------------------------ names */
static const char *const algo_names[] = {"auto", "ring", "tree",
					 "hierarchical"};
static const char *const comp_names[] = {"none", "fp16", "bf16", "powersgd"};
static const char *const fw_names[] = {"generic", "pytorch-ddp", "horovod",
				       "autodist"};

const char *autosync_algo_name(int a)
{
	return a >= 0 && a < AUTOSYNC_ALGO_NALGOS ? algo_names[a] : NULL;
}

int autosync_algo_from_name(const char *n)
{
	for (int i = 0; n && i < AUTOSYNC_ALGO_NALGOS; i++)
		if (!strcmp(n, algo_names[i]))
			return i;
	if (n && !strcmp(n, "hier"))
		return AUTOSYNC_ALGO_HIER;
	errno = EINVAL;
	return -1;
}

const char *autosync_compress_name(int c)
{
	return c >= 0 && c < AUTOSYNC_COMPRESS_N ? comp_names[c] : NULL;
}

int autosync_compress_from_name(const char *n)
{
	for (int i = 0; n && i < AUTOSYNC_COMPRESS_N; i++)
		if (!strcmp(n, comp_names[i]))
			return i;
	errno = EINVAL;
	return -1;
}

const char *autosync_framework_name(int fw)
{
	return fw >= 0 && fw < AUTOSYNC_FW_N ? fw_names[fw] : NULL;
}

int autosync_framework_from_name(const char *n)
{
	for (int i = 0; n && i < AUTOSYNC_FW_N; i++)
		if (!strcmp(n, fw_names[i]))
			return i;
	if (n &&
	    (!strcmp(n, "pytorch") || !strcmp(n, "ddp") || !strcmp(n, "torch")))
		return AUTOSYNC_FW_PYTORCH_DDP;
	if (n && (!strcmp(n, "tensorflow") || !strcmp(n, "tf")))
		return AUTOSYNC_FW_AUTODIST;
	errno = EINVAL;
	return -1;
}

/* ------------------------------------------------------------ capabilities */
struct caps {
	int ps;		     /* parameter servers */
	int custom;	     /* arbitrary bucket boundaries */
	int per_bucket_algo; /* algorithm per bucket (else one per job) */
	int first;	     /* a separate first-bucket size */
	int cycle;	     /* Horovod cycle time */
	unsigned algos;	     /* mask of enum autosync_algo */
	unsigned comps;	     /* mask of enum autosync_compress */
	int densify;	     /* all-reduce a sparse gradient as a dense one */
};

/* PowerSGD (0x8) only for DDP, whose hook runs it: generic plans are what
 * autosync's own runtime (autosync bench) executes, and it has no PowerSGD.
 * DDP's hierarchical all-reduce is autosync.hooks' comm hook. */
static const struct caps fw_caps[AUTOSYNC_FW_N] = {
    [AUTOSYNC_FW_GENERIC] = {1, 1, 1, 1, 0, 0xf, 0x7, 1},
    [AUTOSYNC_FW_PYTORCH_DDP] = {0, 0, 0, 1, 0, 0xf, 0xf, 0},
    /* Horovod takes compression only in code (hvd.Compression), which no
     * variable reaches: plans for it never compress */
    [AUTOSYNC_FW_HOROVOD] = {0, 0, 0, 0, 1, 0xf, 0x1, 0},
    [AUTOSYNC_FW_AUTODIST] = {1, 1, 1, 0, 0, 0x3, 0x1, 1},
};

/* ------------------------------------------------------------ planner */
autosync_planner_t *autosync_planner_create(autosync_error_t *errp)
{
	autosync_planner_t *p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		autosync_errprintf(errp, "planner_create: out of memory");
		return NULL;
	}
	autosync_costs_default(&p->k);
	p->fw = AUTOSYNC_FW_GENERIC;
	p->budget = 20000;
	return p;
}

void autosync_planner_destroy(autosync_planner_t *p)
{
	free(p);
}

void autosync_planner_set_log(autosync_planner_t *p, autosync_log_f fn,
			      void *arg)
{
	if (!p)
		return;
	p->log = fn;
	p->logarg = arg;
}

__attribute__((format(printf, 3, 4))) static void
plog(const autosync_planner_t *p, int level, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	if (!p->log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	p->log(level, buf, p->logarg);
}

int autosync_planner_set_cluster(autosync_planner_t *p,
				 const autosync_cluster_t *c,
				 autosync_error_t *errp)
{
	if (!p || !c) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "planner_set_cluster: invalid argument");
	}
	if (c->nodes < 1 || c->gpus_per_node < 1 || !(c->intra_bw > 0) ||
	    !(c->nic_bw > 0) || !isfinite(c->intra_bw) ||
	    !isfinite(c->nic_bw) || !(c->intra_lat >= 0) ||
	    !(c->inter_lat >= 0) || c->nodes > 1000000 ||
	    c->gpus_per_node > 4096) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp,
		    "planner: invalid cluster (nodes %u, gpus %u, "
		    "intra_bw %g, nic_bw %g)",
		    c->nodes, c->gpus_per_node, c->intra_bw, c->nic_bw);
	}
	p->c = *c;
	p->have_c = 1;
	return 0;
}

int autosync_planner_set_model(autosync_planner_t *p, const autosync_model_t *m,
			       autosync_error_t *errp)
{
	if (!p || !m || m->n == 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "planner_set_model: %s",
					  m ? "the model has no tensors"
					    : "invalid argument");
	}
	p->m = m;
	return 0;
}

int autosync_planner_set_costs(autosync_planner_t *p, const autosync_costs_t *k,
			       autosync_error_t *errp)
{
	if (!p || !k || !(k->gpu_flops > 0) || !(k->cast_bw > 0) ||
	    !(k->ps_update_bw > 0) || !(k->host_bw > 0) || !(k->opt_bw > 0) ||
	    !(k->intra_eff > 0) || !(k->inter_eff > 0) || k->launch < 0 ||
	    k->uncertainty < 0) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "planner_set_costs: a rate is not positive");
	}
	p->k = *k;
	return 0;
}

int autosync_planner_set_framework(autosync_planner_t *p, int fw,
				   autosync_error_t *errp)
{
	if (!p || fw < 0 || fw >= AUTOSYNC_FW_N) {
		errno = EINVAL;
		return autosync_errprintf(errp, "planner: unknown framework %d",
					  fw);
	}
	p->fw = fw;
	return 0;
}

void autosync_planner_set_compression(autosync_planner_t *p, int allow)
{
	if (p)
		p->compress = !!allow;
}

void autosync_planner_set_nccl_calibrate(autosync_planner_t *p, int on)
{
	if (p)
		p->nccl_calibrate = !!on;
}

int autosync_planner_set_corrector(autosync_planner_t *p,
				   const autosync_corrector_t *c,
				   autosync_error_t *errp)
{
	if (!p || (c && (!c->correct || strlen(c->hash) != 16 ||
			 strspn(c->hash, "0123456789abcdef") != 16))) {
		errno = EINVAL;
		return autosync_errprintf(errp, "planner_set_corrector: "
						"invalid corrector");
	}
	p->have_corr = c != NULL;
	if (c)
		p->corr = *c;
	return 0;
}

void autosync_planner_set_scaled_knobs(autosync_planner_t *p, int scaled)
{
	if (p)
		p->absolute_knobs = !scaled;
}

int autosync_planner_set_budget(autosync_planner_t *p, unsigned long evals,
				autosync_error_t *errp)
{
	if (!p || evals < 1) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "planner: the budget must be >= 1 evaluation");
	}
	p->budget = evals;
	return 0;
}

unsigned long autosync_planner_evals(const autosync_planner_t *p)
{
	return p ? p->evals : 0;
}

static int ready_check(autosync_planner_t *p, autosync_error_t *errp)
{
	if (!p) {
		errno = EINVAL;
		return autosync_errprintf(errp, "planner: invalid argument");
	}
	if (!p->m || !p->have_c) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "planner: set a model and a cluster first");
	}
	return 0;
}

autosync_plan_t *autosync_planner_baseline(autosync_planner_t *p, int b,
					   autosync_error_t *errp)
{
	struct simctx x;
	struct strategy s;
	struct simres r;
	autosync_plan_t *plan = NULL;
	char reason[256];

	if (ready_check(p, errp) < 0)
		return NULL;
	if (b < 0 || b >= AUTOSYNC_BASELINE_N) {
		errno = EINVAL;
		autosync_errprintf(errp, "planner: unknown baseline %d", b);
		return NULL;
	}
	if (sim_context(p, &x, errp) < 0)
		return NULL;
	memset(&r, 0, sizeof(r));
	if (planner_build_baseline(&x, b, &s, errp) < 0)
		goto out;
	if (planner_simulate(&x, &s, &r, 1) < 0) {
		autosync_errprintf(errp, "planner: out of memory");
		goto out;
	}
	snprintf(reason, sizeof(reason), "baseline %s as requested%s%s",
		 autosync_baseline_name(b),
		 autosync_baseline_applicable(b, p->fw)
		     ? ""
		     : "; WARNING: not executable by framework ",
		 autosync_baseline_applicable(b, p->fw)
		     ? ""
		     : autosync_framework_name(p->fw));
	plan = planner_plan_from_strategy(&x, &s, &r, reason, errp);
	/* what the framework and NCCL do alone: no tuner table */
	if (plan) {
		plan->s.nccl_none = 1;
		planner_plan_compute_hash(plan);
	}
out:
	planner_simres_free(&r);
	planner_strategy_free(&s);
	planner_simctx_free(&x);
	return plan;
}

/* ------------------------------------------------------------ search */
/* The no-harm margin of a strategy: the widest of the families it belongs
 * to, each as wide as the simulator was seen to be optimistic for it. */
struct margin {
	double m;
	const char *family;
	unsigned mask; /* 1 << enum autosync_family of every family */
	int fam;       /* the one whose margin is 'm' */
};

static const char *const family_names[AUTOSYNC_FAMILY_N] = {
    [AUTOSYNC_FAMILY_ALLREDUCE] = "bucketed all-reduce",
    [AUTOSYNC_FAMILY_COMPRESSION] = "compression",
    [AUTOSYNC_FAMILY_PS] = "parameter server",
    [AUTOSYNC_FAMILY_TREE] = "tree all-reduce",
    [AUTOSYNC_FAMILY_DDP_HIER] = "DDP hierarchical hook",
    [AUTOSYNC_FAMILY_SMALL_BUCKETS] = "many small buckets",
};

const char *autosync_family_name(int family)
{
	return family >= 0 && family < AUTOSYNC_FAMILY_N ? family_names[family]
							 : NULL;
}

/* the cost constants' margin of one family */
static double cost_margin(const autosync_costs_t *k, int fam)
{
	switch (fam) {
	case AUTOSYNC_FAMILY_COMPRESSION:
		return k->margin_compression;
	case AUTOSYNC_FAMILY_PS:
		return k->margin_ps;
	case AUTOSYNC_FAMILY_TREE:
		return k->margin_tree;
	case AUTOSYNC_FAMILY_DDP_HIER:
		return k->margin_ddp_hier;
	case AUTOSYNC_FAMILY_SMALL_BUCKETS:
		return k->margin_small_buckets;
	default:
		return k->uncertainty;
	}
}

static void widen(struct margin *M, const autosync_costs_t *k, int fam)
{
	double m = cost_margin(k, fam);

	M->mask |= 1u << fam;
	if (m > M->m) {
		M->m = m;
		M->family = family_names[fam];
		M->fam = fam;
	}
}

static void family_margin(const struct simctx *x, const struct strategy *s,
			  const struct simres *r, struct margin *M)
{
	const autosync_costs_t *k = &x->k;
	size_t small = 0, ar = 0;

	M->m = k->uncertainty;
	M->family = family_names[AUTOSYNC_FAMILY_ALLREDUCE];
	M->fam = AUTOSYNC_FAMILY_ALLREDUCE;
	M->mask = 1u << AUTOSYNC_FAMILY_ALLREDUCE;
	for (size_t b = 0; b < s->nb && b < r->nb; b++) {
		if (!(r->bytes[b] > 0))
			continue;
		if (s->cfg[b].compress != AUTOSYNC_COMPRESS_NONE)
			widen(M, k, AUTOSYNC_FAMILY_COMPRESSION);
		if (s->cfg[b].kind == AUTOSYNC_SYNC_PS) {
			widen(M, k, AUTOSYNC_FAMILY_PS);
			continue;
		}
		if (s->cfg[b].algo == AUTOSYNC_ALGO_TREE)
			widen(M, k, AUTOSYNC_FAMILY_TREE);
		/* DDP's hierarchical all-reduce is the adapter's comm hook,
		 * whose optimism the DDP peer measures: its own margin */
		if (x->fw == AUTOSYNC_FW_PYTORCH_DDP &&
		    s->cfg[b].algo == AUTOSYNC_ALGO_HIER)
			widen(M, k, AUTOSYNC_FAMILY_DDP_HIER);
		ar++;
		if (r->bytes[b] < k->small_bucket_bytes * x->knob)
			small++;
	}
	/* per-call costs dominate once a quarter of the buckets are small */
	if (small > 8 && small * 4 > ar)
		widen(M, k, AUTOSYNC_FAMILY_SMALL_BUCKETS);
}

static double score(double t, const struct margin *M)
{
	return M->m < 1 ? t / (1.0 - M->m) : INFINITY;
}

/* With a learned simulator, the best few strategies of each family (by
 * the analytic prediction) go on to be ranked by their corrected times. */
#define ELITES AUTOSYNC_ELITES
struct elite {
	struct strategy s;
	double t;
	int used;
};

struct search {
	autosync_planner_t *p;
	struct elite (*el)[ELITES]; /* [AUTOSYNC_FAMILY_N], with a corrector */
	struct simctx x;
	struct simres r;
	struct strategy best;
	double best_t;	   /* predicted step time of 'best' */
	double best_score; /* best_t / (1 - its margin): what is compared */
	struct margin best_m;
	const struct caps *cap;
	int exhausted;
};

/* keep 's' among the best ELITES of its family (ties keep the earlier) */
static int keep_elite(struct search *S, const struct strategy *s, double t,
		      int fam)
{
	struct elite *E = S->el[fam], last;
	int j;

	for (j = 0; j < ELITES; j++)
		if (!E[j].used || t < E[j].t)
			break;
	if (j == ELITES)
		return 0;
	last = E[ELITES - 1]; /* its strategy's memory is reused */
	memmove(&E[j + 1], &E[j], (size_t)(ELITES - 1 - j) * sizeof(*E));
	E[j] = last;
	if (planner_strategy_copy(&E[j].s, s, S->x.m->n) < 0)
		return -1;
	E[j].t = t;
	E[j].used = 1;
	return 0;
}

/* simulate 's'; keep it when its margin-widened time is strictly better
 * (ties keep the earlier one, which keeps the search deterministic) */
static int consider(struct search *S, struct strategy *s)
{
	struct margin m;

	if (S->p->evals >= S->p->budget) {
		S->exhausted = 1;
		return 0;
	}
	S->p->evals++;
	if (planner_simulate(&S->x, s, &S->r, 0) < 0)
		return -1;
	family_margin(&S->x, s, &S->r, &m);
	if (S->el && keep_elite(S, s, S->r.step, m.fam) < 0)
		return -1;
	if (score(S->r.step, &m) < S->best_score) {
		if (planner_strategy_copy(&S->best, s, S->x.m->n) < 0)
			return -1;
		S->best_t = S->r.step;
		S->best_score = score(S->r.step, &m);
		S->best_m = m;
	}
	return 0;
}

static int algo_ok(const struct search *S, int a)
{
	if (!(S->cap->algos & (1u << a)))
		return 0;
	/* hierarchical only differs on several nodes of several GPUs */
	if (a == AUTOSYNC_ALGO_HIER && (S->x.nodes < 2 || S->x.g < 2))
		return 0;
	return 1;
}

static int comp_ok(const struct search *S, int c)
{
	return (S->cap->comps & (1u << c)) && (c == 0 || S->p->compress);
}

/* PowerSGD's ranks the search tries, from PSGD_MIN_RANK on. The simulator
 * has no accuracy term: a lower rank is never slower, so the search takes
 * the lowest rank tried; the floor is the rank Vogels et al. (2019) found
 * to keep full accuracy on their language model (rank 2 sufficed for their
 * image models). */
#define PSGD_MIN_RANK 4
static const unsigned psgd_ranks[] = {1, 2, 4, 8, 16};

/* the framework's own knobs: bucket cap (+ first bucket) or Horovod's
 * fusion threshold and cycle time, one job-level algorithm, compression
 * (PowerSGD with rank 'rank') */
static int sweep(struct search *S, int comp, unsigned rank)
{
	static const double cycles[] = {0.5e-3, 1e-3, 2.5e-3, 5e-3};
	struct strategy s;

	for (int a = 0; a < AUTOSYNC_ALGO_NALGOS; a++) {
		struct bcfg cfg = {
		    AUTOSYNC_SYNC_ALLREDUCE, a, comp, 0, 0, 0, 0, rank};
		if (!algo_ok(S, a))
			continue;
		/* PowerSGD runs its own flat all-reduces (autosync.hooks does
		 * not combine it with the hierarchical hook) */
		if (comp == AUTOSYNC_COMPRESS_POWERSGD &&
		    a == AUTOSYNC_ALGO_HIER)
			continue;
		/* with custom buckets the dynamic program covers every capped
		 * plan of one dtype; keep only NCCL's own choice as a net */
		if (S->cap->custom && a != AUTOSYNC_ALGO_AUTO)
			continue;
		for (int e = 0; e <= 22; e++) {
			double cap = MiB * S->x.knob * pow(2.0, e / 2.0);
			size_t nc = S->cap->cycle
					? sizeof(cycles) / sizeof(cycles[0])
					: 1;
			for (size_t ci = 0; ci < nc; ci++) {
				for (int f = 0;
				     f <
				     (S->cap->first && !S->cap->custom ? 2 : 1);
				     f++) {
					int rv;
					if (planner_strategy_init(
						&s, S->x.m->n) < 0)
						return -1;
					if (S->cap->cycle)
						rv = planner_build_horovod(
						    &S->x, &s, cap, cycles[ci],
						    &cfg);
					else
						rv = planner_build_capped(
						    &S->x, &s,
						    f ? MiB * S->x.knob : 0,
						    cap, &cfg);
					s.job_algo = a;
					s.job_compress = comp;
					s.job_rank = rank;
					snprintf(s.name, sizeof(s.name),
						 "autosync-%s",
						 rank ? "powersgd"
						 : S->cap->cycle
						     ? "fusion"
						     : "bucket-cap");
					if (rv < 0 || consider(S, &s) < 0) {
						planner_strategy_free(&s);
						return -1;
					}
					planner_strategy_free(&s);
					if (S->exhausted)
						return 0;
				}
			}
		}
	}
	return 0;
}

struct unit {
	double ready, raw, wire[AUTOSYNC_COMPRESS_N], cast[AUTOSYNC_COMPRESS_N];
	size_t first, n; /* range in the dense ready-order list */
};

/* bucket cost of units (i, j] with prefix sums */
static double ucost(const struct search *S, const double *P, size_t i, size_t j,
		    int a, int c, size_t U)
{
	const double *W = P + (size_t)c * (U + 1);
	const double *C = P + (size_t)(AUTOSYNC_COMPRESS_N + c) * (U + 1);
	double w = W[j] - W[i], cast = C[j] - C[i], t;
	if (S->x.p <= 1)
		return 0;
	t = S->x.k.launch + planner_sim_bucket_extra(&S->x, a) +
	    planner_sim_ar_time(&S->x, a, w);
	if (cast > 0) {
		/* the 16-bit bytes: compressed wire less the uncompressed
		 * tensors' (P's first row is the wire without compression) */
		double half = w - ((P[j] - P[i]) - cast);
		t += planner_sim_cast_time(&S->x, cast, half);
	}
	return t;
}

/* The dynamic program's work: the dense tensors in ready order, their
 * units, the prefix sums and the best split. */
struct dp {
	size_t nd, U;
	size_t *dense; /* [nd] tensor indices */
	struct unit *u;
	double *P;	      /* wire and cast prefix sums per compression */
	double *f;	      /* [U + 1] best finish time of units 0..j */
	size_t *from;	      /* [U + 1] where the last bucket of f(j) starts */
	signed char *ba, *bc; /* [U + 1] its algorithm and compression */
};

static void dp_free(struct dp *d)
{
	free(d->dense);
	free(d->u);
	free(d->P);
	free(d->f);
	free(d->from);
	free(d->ba);
	free(d->bc);
}

/* phase 1: the dense tensors in ready order (densify_all: sparse gradients
 * join the buckets as dense ones), grouped into units of equal ready time
 * and dtype */
static void dp_units(const struct search *S, struct dp *d, int densify_all)
{
	const autosync_model_t *m = S->x.m;
	struct unit *u = d->u;

	for (size_t o = 0; o < m->n; o++)
		if (!m->t[S->x.order[o]].sparse || densify_all)
			d->dense[d->nd++] = S->x.order[o];
	for (size_t k = 0; k < d->nd; k++) {
		const autosync_tensor_t *T = &m->t[d->dense[k]];
		double rd = S->x.ready[d->dense[k]];
		double sz = autosync_dtype_size(T->dtype),
		       b = (double)T->numel * sz;
		size_t U = d->U;
		if (!U || u[U - 1].ready != rd ||
		    m->t[d->dense[u[U - 1].first]].dtype != T->dtype) {
			u[U].first = k;
			u[U].ready = rd;
			U = ++d->U;
		}
		u[U - 1].n++;
		u[U - 1].raw += b;
		for (int c = 0; c < AUTOSYNC_COMPRESS_N; c++) {
			int shrink = c && (T->dtype == AUTOSYNC_DT_FLOAT32 ||
					   T->dtype == AUTOSYNC_DT_FLOAT64);
			u[U - 1].wire[c] += shrink ? (double)T->numel * 2 : b;
			u[U - 1].cast[c] += shrink ? b : 0;
		}
	}
}

/* phase 2: coarsen very long lists (deterministic: fixed group size).
 * Coarsened units keep .first of their first member and the summed count,
 * so their ranges stay contiguous in 'dense' and cover every tensor. */
static void dp_coarsen(struct dp *d)
{
	struct unit *u = d->u;
	size_t U = d->U, per = (U + MAX_UNITS - 1) / MAX_UNITS, V = 0;

	if (per <= 1)
		return;
	for (size_t i = 0; i < U; i += per) {
		struct unit w = u[i];
		for (size_t j = i + 1; j < U && j < i + per; j++) {
			w.n += u[j].n;
			w.raw += u[j].raw;
			w.ready = u[j].ready > w.ready ? u[j].ready : w.ready;
			for (int c = 0; c < AUTOSYNC_COMPRESS_N; c++) {
				w.wire[c] += u[j].wire[c];
				w.cast[c] += u[j].cast[c];
			}
		}
		u[V++] = w;
	}
	d->U = V;
}

/* phase 3: the arrays of the program and the prefix sums */
static int dp_prefix(struct dp *d)
{
	size_t U = d->U;

	if (!(d->P = calloc((size_t)2 * AUTOSYNC_COMPRESS_N * (U + 1),
			    sizeof(double))) ||
	    !(d->f = malloc((U + 1) * sizeof(double))) ||
	    !(d->from = malloc((U + 1) * sizeof(size_t))) ||
	    !(d->ba = malloc(U + 1)) || !(d->bc = malloc(U + 1)))
		return -1;
	for (int c = 0; c < AUTOSYNC_COMPRESS_N; c++) {
		double *W = d->P + (size_t)c * (U + 1);
		double *C = d->P + (size_t)(AUTOSYNC_COMPRESS_N + c) * (U + 1);
		for (size_t i = 0; i < U; i++) {
			W[i + 1] = W[i] + d->u[i].wire[c];
			C[i + 1] = C[i] + d->u[i].cast[c];
		}
	}
	return 0;
}

/* the cheapest (algorithm, compression) for units (i, j] */
static double dp_bucket(const struct search *S, const struct dp *d, size_t i,
			size_t j, int job_algo, int comp_mask, int *abest,
			int *cbest)
{
	double tmin = INFINITY;

	*abest = *cbest = 0;
	for (int c = 0; c < AUTOSYNC_COMPRESS_N; c++) {
		if (!(comp_mask & (1 << c)))
			continue;
		for (int a = 0; a < AUTOSYNC_ALGO_NALGOS; a++) {
			double t;
			if (job_algo >= 0 ? a != job_algo : !algo_ok(S, a))
				continue;
			t = ucost(S, d->P, i, j, a, c, d->U);
			if (t < tmin) {
				tmin = t;
				*abest = a;
				*cbest = c;
			}
		}
	}
	return tmin;
}

/* phase 4: f(j) = min_i max(R_j, f(i)) + T(i, j) */
static void dp_solve(const struct search *S, struct dp *d, int job_algo,
		     int comp_mask)
{
	d->f[0] = 0;
	for (size_t j = 1; j <= d->U; j++) {
		double R = d->u[j - 1].ready, best = INFINITY;
		for (size_t i = j; i-- > 0;) {
			int abest, cbest;
			double tmin = dp_bucket(S, d, i, j, job_algo, comp_mask,
						&abest, &cbest),
			       cand;
			if (R + tmin >= best)
				break; /* T(i, j) only grows as i decreases */
			cand = (d->f[i] > R ? d->f[i] : R) + tmin;
			if (cand < best) {
				best = cand;
				d->from[j] = i;
				d->ba[j] = (signed char)abest;
				d->bc[j] = (signed char)cbest;
			}
		}
		d->f[j] = best;
	}
}

/* phase 5: the buckets of the best split, for the dense tensors */
static int dp_buckets(const struct dp *d, struct strategy *s, int densify_all)
{
	size_t j = d->U;

	while (j > 0) {
		size_t i = d->from[j];
		struct bcfg cfg = {AUTOSYNC_SYNC_ALLREDUCE,
				   d->ba[j],
				   d->bc[j],
				   0,
				   0,
				   0,
				   densify_all,
				   0};
		long id = planner_strategy_add_bucket(s, &cfg);
		if (id < 0)
			return -1;
		for (size_t q = i; q < j; q++)
			for (size_t k = d->u[q].first;
			     k < d->u[q].first + d->u[q].n; k++)
				s->tb[d->dense[k]] = (size_t)id;
		j = i;
	}
	return 0;
}

/* phase 6: a sparse tensor's own bucket - PS (sharded over every node) when
 * the framework can and it is faster, else all-gather, or densified with
 * each allowed compression when that is faster still */
static int dp_sparse(const struct search *S, struct strategy *s, size_t i,
		     int comp_mask)
{
	struct bcfg ar = {
	    AUTOSYNC_SYNC_ALLREDUCE, AUTOSYNC_ALGO_AUTO, 0, 0, 0, 0, 0, 0};
	struct bcfg ps = {
	    AUTOSYNC_SYNC_PS, AUTOSYNC_ALGO_AUTO, 0, S->x.nodes, 0, 0, 0, 0};
	struct bcfg dn[AUTOSYNC_COMPRESS_N], best = ar;
	double tb, tt;
	long id;

	s->server[i] = AUTOSYNC_NO_SERVER;
	tb = planner_sim_bucket_time(&S->x, &ar, &i, 1, s->server);
	for (int c = 0; S->cap->densify && c < AUTOSYNC_COMPRESS_N; c++) {
		if (!(comp_mask & (1 << c)))
			continue;
		dn[c] = ar;
		dn[c].densify = 1;
		dn[c].compress = c;
		tt = planner_sim_bucket_time(&S->x, &dn[c], &i, 1, s->server);
		if (tt < tb) {
			tb = tt;
			best = dn[c];
		}
	}
	if (S->cap->ps &&
	    planner_sim_bucket_time(&S->x, &ps, &i, 1, s->server) < tb)
		best = ps;
	if ((id = planner_strategy_add_bucket(s, &best)) < 0)
		return -1;
	s->tb[i] = (size_t)id;
	return 0;
}

/*
 * Exact dynamic program over contiguous buckets of the dense all-reduce
 * tensors in ready order: f(j) = min_i max(R_j, f(i)) + T(i, j), which is
 * optimal for the serialized network because max(R, .) + T is monotone.
 * 'job_algo' < 0: per-bucket choice; else that algorithm for all buckets.
 */
static int dp_plan(struct search *S, int job_algo, int comp_mask,
		   int densify_all)
{
	const autosync_model_t *m = S->x.m;
	struct dp d = {0};
	struct strategy s;
	int rv = -1, have_s = 0;

	if (!(d.dense = malloc(m->n * sizeof(size_t))) ||
	    !(d.u = calloc(m->n + 1, sizeof(*d.u))))
		goto out;
	dp_units(S, &d, densify_all);
	if (d.U == 0) {
		rv = 0;
		goto out;
	}
	dp_coarsen(&d);
	if (dp_prefix(&d) < 0)
		goto out;
	dp_solve(S, &d, job_algo, comp_mask);
	if (planner_strategy_init(&s, m->n) < 0)
		goto out;
	have_s = 1;
	if (dp_buckets(&d, &s, densify_all) < 0)
		goto out;
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].sparse && !densify_all &&
		    dp_sparse(S, &s, i, comp_mask) < 0)
			goto out;
	s.job_algo = job_algo >= 0 ? job_algo : AUTOSYNC_ALGO_AUTO;
	s.job_compress = AUTOSYNC_COMPRESS_NONE;
	snprintf(s.name, sizeof(s.name), "autosync-buckets");
	if (consider(S, &s) < 0)
		goto out;
	rv = 0;
out:
	if (have_s)
		planner_strategy_free(&s);
	dp_free(&d);
	if (rv < 0 && errno != ENOMEM)
		errno = ENOMEM;
	return rv;
}

static int has_sparse(const autosync_model_t *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].sparse)
			return 1;
	return 0;
}

/* dense PS with k servers (1, 2, 4, ..., nodes), tensors sharded over the
 * servers, one bucket per layer; sparse tensors likewise */
static int ps_sweep(struct search *S)
{
	const autosync_model_t *m = S->x.m;
	unsigned M = S->x.nodes;

	for (unsigned k = 1;; k = k * 2 > M && k != M ? M : k * 2) {
		for (int repl = 0; repl < 2; repl++) {
			struct strategy s;
			struct bcfg ps = {AUTOSYNC_SYNC_PS,
					  AUTOSYNC_ALGO_AUTO,
					  0,
					  k,
					  1,
					  repl,
					  0,
					  0};
			long *lb = malloc((m->nl ? m->nl : 1) * sizeof(long));
			int rv = 0;
			if (!lb || planner_strategy_init(&s, m->n) < 0) {
				free(lb);
				return -1;
			}
			for (size_t l = 0; l < m->nl; l++)
				lb[l] = -1;
			for (size_t i = 0; i < m->n && !rv; i++) {
				/* one bucket per layer, contiguous layers
				 * merged so that there are at most
				 * PS_MAX_BUCKETS */
				size_t l = m->t[i].layer_index /
					   ((m->nl + PS_MAX_BUCKETS - 1) /
					    PS_MAX_BUCKETS);
				if (lb[l] < 0 &&
				    (lb[l] = planner_strategy_add_bucket(
					 &s, &ps)) < 0)
					rv = -1;
				else
					s.tb[i] = (size_t)lb[l];
			}
			snprintf(s.name, sizeof(s.name), "autosync-ps");
			if (!rv)
				rv = consider(S, &s);
			planner_strategy_free(&s);
			free(lb);
			if (rv < 0)
				return -1;
			if (S->exhausted)
				return 0;
		}
		if (k >= M)
			break;
	}
	return 0;
}

/* 1. every baseline, simulated (the comparison table and the incumbent) */
static int run_baselines(struct search *S, struct strategy *base,
			 double *base_t, struct margin *base_m,
			 autosync_error_t *errp)
{
	for (int b = 0; b < AUTOSYNC_BASELINE_N; b++) {
		if (planner_build_baseline(&S->x, b, &base[b], errp) < 0)
			return -1;
		if (planner_simulate(&S->x, &base[b], &S->r, 0) < 0)
			goto nomem;
		S->p->evals++;
		base_t[b] = S->r.step;
		family_margin(&S->x, &base[b], &S->r, &base_m[b]);
	}
	return 0;
nomem:
	errno = ENOMEM;
	return autosync_errprintf(errp, "planner: out of memory");
}

/* the searches for one compression setting: the framework's knobs, the
 * dynamic program (per bucket or per job algorithm), and sparse gradients
 * fused with the dense ones as dense gradients */
static int search_comp(struct search *S, int c)
{
	int pb = S->cap->custom && S->cap->per_bucket_algo;
	int mask = 1 | (c ? 1 << c : 0);

	if (sweep(S, c, 0) < 0)
		return -1;
	for (int dense = 0; dense < 2; dense++) {
		if (dense &&
		    !(S->cap->custom && S->cap->densify && has_sparse(S->p->m)))
			break;
		if (pb && dp_plan(S, -1, mask, dense) < 0)
			return -1;
		/* compression per bucket needs the per-bucket program */
		for (int a = 0;
		     !c && S->cap->custom && !pb && a < AUTOSYNC_ALGO_NALGOS;
		     a++)
			if (algo_ok(S, a) && dp_plan(S, a, 1, dense) < 0)
				return -1;
	}
	return 0;
}

/* 2. the search, without compression, then PS, then compression when
 * allowed. Every candidate is compared by its margin-widened time, so a
 * family the simulator is optimistic about must win by more. */
static int run_search(struct search *S)
{
	if (search_comp(S, AUTOSYNC_COMPRESS_NONE) < 0)
		return -1;
	if (S->cap->ps && ps_sweep(S) < 0)
		return -1;
	for (int c = 1; c < AUTOSYNC_COMPRESS_POWERSGD; c++)
		if (comp_ok(S, c) && search_comp(S, c) < 0)
			return -1;
	/* PowerSGD: the framework's knobs with each rank (its buckets are
	 * the framework's, never custom) */
	for (size_t i = 0; comp_ok(S, AUTOSYNC_COMPRESS_POWERSGD) &&
			   i < sizeof(psgd_ranks) / sizeof(psgd_ranks[0]);
	     i++)
		if (psgd_ranks[i] >= PSGD_MIN_RANK &&
		    sweep(S, AUTOSYNC_COMPRESS_POWERSGD, psgd_ranks[i]) < 0)
			return -1;
	return 0;
}

/* 3. no harm: the incumbent is what the framework does untuned; another
 * plan (searched, or another baseline the framework can run) replaces it
 * only when predicted faster by more than its family's margin. Returns the
 * baseline to use, or -1 for the searched plan. */
static int choose(struct search *S, const double *base_t,
		  const struct margin *base_m, char *reason, size_t len)
{
	autosync_planner_t *p = S->p;
	int inc = autosync_baseline_default(p->fw), pick = -1;
	double best = S->best_score, t = S->best_t;
	const struct margin *m = &S->best_m;
	const char *name = S->best.name;

	for (int b = 0; b < AUTOSYNC_BASELINE_N; b++)
		if (b != inc && autosync_baseline_applicable(b, p->fw) &&
		    score(base_t[b], &base_m[b]) < best) {
			best = score(base_t[b], &base_m[b]);
			pick = b;
		}
	if (pick >= 0) {
		t = base_t[pick];
		m = &base_m[pick];
		name = autosync_baseline_name(pick);
	}
	if (!(best < base_t[inc])) {
		snprintf(reason, len,
			 "kept %s, the framework's default (%.6g s): the "
			 "best other plan, %s (%.6g s), is %.3g%% faster, "
			 "within the %.3g%% margin for %s; %lu evaluations%s",
			 autosync_baseline_name(inc), base_t[inc], name, t,
			 t > 0 ? (base_t[inc] / t - 1) * 100 : 0, m->m * 100,
			 m->family, p->evals,
			 S->exhausted ? " (budget exhausted)" : "");
		return inc;
	}
	snprintf(reason, len,
		 "%s: predicted %.6g s, %.4gx the speed of the framework's "
		 "default %s (%.6g s), beyond the %.3g%% margin for %s; %lu "
		 "evaluations%s",
		 name, t, t > 0 ? base_t[inc] / t : 0,
		 autosync_baseline_name(inc), base_t[inc], m->m * 100,
		 m->family, p->evals,
		 S->exhausted ? " (budget exhausted)" : "");
	return pick;
}

/* ------------------------------------------------ the learned ranking */
/* The candidates a learned simulator ranks: every baseline, then the
 * elites of each family, with their analytic terms and corrected times. */
struct ranked {
	size_t n;
	const struct strategy **s;
	double *terms, *step, *corr;
	struct margin *m;
};

static void ranked_free(struct ranked *R)
{
	free(R->s);
	free(R->terms);
	free(R->step);
	free(R->corr);
	free(R->m);
}

/* the widest margin over a candidate's families, each the corrector's
 * held-out margin where it gives one */
static void learned_margin(const autosync_planner_t *p, struct margin *M)
{
	M->m = -1;
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++) {
		double m = -1;
		if (!(M->mask & (1u << f)))
			continue;
		if (p->corr.margin)
			m = p->corr.margin(p->corr.arg, f);
		if (!(m >= 0 && m <= 0.99))
			m = cost_margin(&p->k, f);
		if (m > M->m) {
			M->m = m;
			M->fam = f;
			M->family = family_names[f];
		}
	}
}

static int rank_candidates(struct search *S, struct strategy *base,
			   struct ranked *R)
{
	size_t cap = AUTOSYNC_BASELINE_N + AUTOSYNC_FAMILY_N * ELITES, n = 0;

	if (!(R->s = calloc(cap, sizeof(*R->s))) ||
	    !(R->terms = calloc(cap * AUTOSYNC_TERM_N, sizeof(double))) ||
	    !(R->step = calloc(cap, sizeof(double))) ||
	    !(R->corr = calloc(cap, sizeof(double))) ||
	    !(R->m = calloc(cap, sizeof(*R->m))))
		return -1;
	for (int b = 0; b < AUTOSYNC_BASELINE_N; b++)
		R->s[n++] = &base[b];
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++)
		for (int j = 0; j < ELITES && S->el[f][j].used; j++)
			R->s[n++] = &S->el[f][j].s;
	for (size_t i = 0; i < n; i++) {
		if (planner_simulate(&S->x, R->s[i], &S->r, 1) < 0)
			return -1;
		memcpy(R->terms + i * AUTOSYNC_TERM_N, S->r.terms,
		       sizeof(S->r.terms));
		R->step[i] = S->r.step;
		family_margin(&S->x, R->s[i], &S->r, &R->m[i]);
		learned_margin(S->p, &R->m[i]);
	}
	R->n = n;
	return 0;
}

/* A learned simulator's choice among the ranked candidates: the framework's
 * default stays unless another candidate the framework can run is
 * corrected faster by more than its margin. Returns its index. */
static size_t choose_learned(const struct search *S, const struct ranked *R,
			     char *reason, size_t len)
{
	const autosync_planner_t *p = S->p;
	size_t inc = (size_t)autosync_baseline_default(p->fw), pick = inc;
	double best = INFINITY;

	for (size_t i = 0; i < R->n; i++) {
		double sc = score(R->corr[i], &R->m[i]);
		if (i == inc || (i < AUTOSYNC_BASELINE_N &&
				 !autosync_baseline_applicable((int)i, p->fw)))
			continue;
		if (sc < best) {
			best = sc;
			pick = i;
		}
	}
	if (pick == inc || !(best < R->corr[inc])) {
		snprintf(reason, len,
			 "kept %s, the framework's default (%.6g s learned, "
			 "%.6g s analytic): the best other plan, %s (%.6g s "
			 "learned), is within the %.3g%% margin for %s; "
			 "simulator %s; %lu evaluations",
			 autosync_baseline_name((int)inc), R->corr[inc],
			 R->step[inc], R->s[pick]->name, R->corr[pick],
			 R->m[pick].m * 100, R->m[pick].family, p->corr.hash,
			 p->evals);
		return inc;
	}
	snprintf(reason, len,
		 "%s: predicted %.6g s by the learned simulator %s (%.6g s "
		 "analytic), %.4gx the speed of the framework's default %s "
		 "(%.6g s learned), beyond the %.3g%% margin for %s; %lu "
		 "evaluations",
		 R->s[pick]->name, R->corr[pick], p->corr.hash, R->step[pick],
		 R->corr[pick] > 0 ? R->corr[inc] / R->corr[pick] : 0,
		 autosync_baseline_name((int)inc), R->corr[inc],
		 R->m[pick].m * 100, R->m[pick].family, p->evals);
	return pick;
}

/* rank with the corrector; 1 when it chose (*pick), 0 when it failed and
 * the analytic choice stands (logged), -1 out of memory */
static int learned(struct search *S, struct strategy *base, struct ranked *R,
		   size_t *pick, char *reason, size_t len)
{
	autosync_planner_t *p = S->p;

	if (rank_candidates(S, base, R) < 0)
		return -1;
	if (p->corr.correct(p->corr.arg, &p->c, R->n, R->terms, R->step,
			    R->corr) < 0) {
		plog(p, AUTOSYNC_LOG_WARNING,
		     "planner: the learned simulator failed (%s); planning "
		     "with the analytic model",
		     strerror(errno));
		return 0;
	}
	for (size_t i = 0; i < R->n; i++)
		if (!(R->corr[i] > 0 && R->corr[i] < 1e300)) {
			plog(p, AUTOSYNC_LOG_WARNING,
			     "planner: the learned simulator predicted %g s; "
			     "planning with the analytic model",
			     R->corr[i]);
			return 0;
		}
	*pick = choose_learned(S, R, reason, len);
	return 1;
}

/* the comparison table every plan carries */
static int add_baselines(autosync_plan_t *plan, const double *base_t, int fw)
{
	plan_baseline_t *pb = calloc(AUTOSYNC_BASELINE_N, sizeof(*pb));

	if (!pb)
		return -1;
	free(plan->base);
	plan->base = pb;
	plan->nbase = AUTOSYNC_BASELINE_N;
	for (int b = 0; b < AUTOSYNC_BASELINE_N; b++) {
		if (!(pb[b].name = planner_xstrdup(autosync_baseline_name(b))))
			return -1;
		pb[b].step_time = base_t[b];
		pb[b].applicable = autosync_baseline_applicable(b, fw);
	}
	return 0;
}

/* where the compute the plan overlaps with came from, when it is a guess
 * or a measurement rather than the model's own FLOPs or times */
static void compute_note(const autosync_model_t *m, char *reason, size_t len)
{
	size_t n = strlen(reason);

	if (m->step_compute > 0 && m->step_compute_fb)
		snprintf(reason + n, len - n,
			 "; compute: %.6g ms per step, measured in the site's "
			 "feedback records (the learned simulator file)",
			 m->step_compute * 1e3);
	else if (m->step_compute > 0)
		snprintf(reason + n, len - n,
			 "; compute: %.6g ms per step, "
			 "measured",
			 m->step_compute * 1e3);
	else if (m->compute_src == 0)
		snprintf(
		    reason + n, len - n,
		    "; compute: estimated from "
		    "parameter counts (no FLOPs in the model file); export "
		    "the model with autosync_export to measure them");
}

/* elites for a learned simulator: ELITES strategies per family */
static int elites_init(struct search *S)
{
	if (!S->p->have_corr)
		return 0;
	if (!(S->el = calloc(AUTOSYNC_FAMILY_N, sizeof(*S->el))))
		return -1;
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++)
		for (int j = 0; j < ELITES; j++)
			if (planner_strategy_init(&S->el[f][j].s, S->x.m->n) <
			    0)
				return -1;
	return 0;
}

static void elites_free(struct search *S)
{
	for (int f = 0; S->el && f < AUTOSYNC_FAMILY_N; f++)
		for (int j = 0; j < ELITES; j++)
			planner_strategy_free(&S->el[f][j].s);
	free(S->el);
	S->el = NULL;
}

/* what a learned choice changes in the plan: the corrected prediction,
 * the corrected baselines, the simulator's hash (part of the plan hash) */
static int mark_learned(autosync_plan_t *plan, const autosync_planner_t *p,
			const struct ranked *R, size_t pick)
{
	plan->s.analytic_step_time = plan->s.step_time;
	plan->s.step_time = R->corr[pick];
	for (size_t b = 0; b < plan->nbase && b < R->n; b++)
		plan->base[b].step_time = R->corr[b];
	free(plan->simulator_hash);
	if (!(plan->simulator_hash = planner_xstrdup(p->corr.hash)))
		return -1;
	planner_plan_sync(plan);
	return planner_plan_compute_hash(plan);
}

/* the search and the choice: analytic, then re-ranked by the corrector */
static int search_and_choose(struct search *S, struct strategy *base,
			     double *base_t, struct margin *base_m,
			     struct ranked *R, size_t *lpick, int *baseline,
			     char *reason, size_t len, autosync_error_t *errp)
{
	autosync_planner_t *p = S->p;
	int pick, rv;

	if (run_baselines(S, base, base_t, base_m, errp) < 0)
		return -1;
	if (run_search(S) < 0)
		goto nomem;
	if ((pick = choose(S, base_t, base_m, reason, len)) >= 0 &&
	    planner_strategy_copy(&S->best, &base[pick], p->m->n) < 0)
		goto nomem;
	*baseline = pick >= 0;
	if (S->el) {
		if ((rv = learned(S, base, R, lpick, reason, len)) < 0)
			goto nomem;
		if (rv == 0)
			*lpick = SIZE_MAX;
		else if (planner_strategy_copy(&S->best, R->s[*lpick],
					       p->m->n) < 0)
			goto nomem;
		else /* the ranked candidates start with every baseline */
			*baseline = *lpick < AUTOSYNC_BASELINE_N;
	}
	return 0;
nomem:
	errno = ENOMEM;
	return autosync_errprintf(errp, "planner: out of memory");
}

autosync_plan_t *autosync_planner_run(autosync_planner_t *p,
				      autosync_error_t *errp)
{
	struct search S;
	struct strategy base[AUTOSYNC_BASELINE_N];
	double base_t[AUTOSYNC_BASELINE_N];
	struct margin base_m[AUTOSYNC_BASELINE_N];
	struct ranked R;
	autosync_plan_t *plan = NULL;
	char reason[1024];
	size_t lpick = SIZE_MAX;
	int baseline = 0;
	int ok = 0;

	if (ready_check(p, errp) < 0)
		return NULL;
	memset(&S, 0, sizeof(S));
	memset(&R, 0, sizeof(R));
	memset(base, 0, sizeof(base));
	p->evals = 0;
	S.p = p;
	S.cap = &fw_caps[p->fw];
	S.best_t = S.best_score = INFINITY;
	if (sim_context(p, &S.x, errp) < 0)
		return NULL;
	if (planner_strategy_init(&S.best, p->m->n) < 0 || elites_init(&S) < 0)
		goto nomem;
	if (search_and_choose(&S, base, base_t, base_m, &R, &lpick, &baseline,
			      reason, sizeof(reason), errp) < 0)
		goto out;
	compute_note(p->m, reason, sizeof(reason));
	plog(p, AUTOSYNC_LOG_INFO, "planner: %s", reason);
	if (planner_simulate(&S.x, &S.best, &S.r, 1) < 0)
		goto nomem;
	if (!(plan = planner_plan_from_strategy(&S.x, &S.best, &S.r, reason,
						errp)))
		goto out;
	if (add_baselines(plan, base_t, p->fw) < 0)
		goto nomem;
	/* what the NCCL tuner plugin applies (hashes the plan); a baseline
	 * kept stands for what the framework and NCCL do alone: no table,
	 * so that keeping the default never changes NCCL's choices */
	plan->s.nccl_calibrate = p->nccl_calibrate;
	if (baseline) {
		plan->s.nccl_none = 1;
		if (planner_plan_compute_hash(plan) < 0)
			goto nomem;
	} else if (autosync_plan_derive_nccl(plan, &p->k, errp) < 0) {
		goto out;
	}
	if (lpick != SIZE_MAX && mark_learned(plan, p, &R, lpick) < 0)
		goto nomem;
	ok = 1;
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "planner: out of memory");
out:
	if (!ok) {
		autosync_plan_destroy(plan);
		plan = NULL;
	}
	for (int b = 0; b < AUTOSYNC_BASELINE_N; b++)
		planner_strategy_free(&base[b]);
	ranked_free(&R);
	elites_free(&S);
	planner_strategy_free(&S.best);
	planner_simres_free(&S.r);
	planner_simctx_free(&S.x);
	return plan;
}
