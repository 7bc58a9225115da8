/* baselines.c - the named baselines, reproduced exactly as the frameworks
 * build them (cost-models.md section 8, autosync-method.md section 3). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MiB (1024.0 * 1024.0)
#define DDP_BUCKET_CAP (25 * MiB)  /* bucket_cap_mb = 25 */
#define DDP_FIRST_BUCKET (1 * MiB) /* dist._DEFAULT_FIRST_BUCKET_BYTES */
#define HOROVOD_FUSION (128 * MiB) /* HOROVOD_FUSION_THRESHOLD */
#define HOROVOD_CYCLE 1e-3	   /* HOROVOD_CYCLE_TIME 1 ms */
#define AUTODIST_CHUNK 128	   /* AllReduce/Parallax chunk_size */

static const char *const names[AUTOSYNC_BASELINE_N] = {
    "ddp-default", "horovod-default",	   "ps-loadbalanced",
    "parallax",	   "allreduce-per-tensor",
};

const char *autosync_baseline_name(int b)
{
	return b >= 0 && b < AUTOSYNC_BASELINE_N ? names[b] : NULL;
}

int autosync_baseline_from_name(const char *name)
{
	for (int i = 0; name && i < AUTOSYNC_BASELINE_N; i++)
		if (!strcmp(name, names[i]))
			return i;
	errno = EINVAL;
	return -1;
}

int autosync_baseline_applicable(int b, int fw)
{
	static const unsigned char ok[AUTOSYNC_BASELINE_N][AUTOSYNC_FW_N] = {
	    /* generic ddp horovod autodist */
	    [AUTOSYNC_BASELINE_DDP] = {1, 1, 0, 0},
	    [AUTOSYNC_BASELINE_HOROVOD] = {1, 0, 1, 0},
	    [AUTOSYNC_BASELINE_PS_LB] = {1, 0, 0, 1},
	    [AUTOSYNC_BASELINE_PARALLAX] = {1, 0, 0, 1},
	    [AUTOSYNC_BASELINE_AR_PER_TENSOR] = {1, 1, 1, 1},
	};
	if (b < 0 || b >= AUTOSYNC_BASELINE_N || fw < 0 || fw >= AUTOSYNC_FW_N)
		return 0;
	return ok[b][fw];
}

int autosync_baseline_default(int fw)
{
	static const int def[AUTOSYNC_FW_N] = {
	    [AUTOSYNC_FW_GENERIC] = AUTOSYNC_BASELINE_DDP,
	    [AUTOSYNC_FW_PYTORCH_DDP] = AUTOSYNC_BASELINE_DDP,
	    [AUTOSYNC_FW_HOROVOD] = AUTOSYNC_BASELINE_HOROVOD,
	    [AUTOSYNC_FW_AUTODIST] = AUTOSYNC_BASELINE_PARALLAX,
	};
	if (fw < 0 || fw >= AUTOSYNC_FW_N) {
		errno = EINVAL;
		return -1;
	}
	return def[fw];
}

static const struct bcfg AR = {AUTOSYNC_SYNC_ALLREDUCE,
			       AUTOSYNC_ALGO_AUTO,
			       AUTOSYNC_COMPRESS_NONE,
			       0,
			       0,
			       0,
			       0,
			       0};

/* size-capped buckets over the ready order, one open bucket per dtype,
 * sparse tensors alone (torch.distributed compute_bucket_assignment_by_size
 * with limits {first, cap, cap, ...}: a bucket closes once it reaches its
 * limit). */
int planner_build_capped(const struct simctx *x, struct strategy *s,
			 double first, double cap, const struct bcfg *cfg)
{
	long open[AUTOSYNC_DT_NTYPES];
	double size[AUTOSYNC_DT_NTYPES];
	int nclosed[AUTOSYNC_DT_NTYPES];
	const autosync_model_t *m = x->m;

	for (int d = 0; d < AUTOSYNC_DT_NTYPES; d++) {
		open[d] = -1;
		size[d] = 0;
		nclosed[d] = 0;
	}
	for (size_t o = 0; o < m->n; o++) {
		size_t i = x->order[o];
		const autosync_tensor_t *T = &m->t[i];
		double b = (double)T->numel * autosync_dtype_size(T->dtype);
		double lim;
		long id;
		int d = T->dtype;
		if (T->sparse) {
			if ((id = planner_strategy_add_bucket(s, cfg)) < 0)
				return -1;
			s->tb[i] = (size_t)id;
			continue;
		}
		if (open[d] < 0) {
			if ((open[d] = planner_strategy_add_bucket(s, cfg)) < 0)
				return -1;
			size[d] = 0;
		}
		s->tb[i] = (size_t)open[d];
		size[d] += b;
		lim = nclosed[d] == 0 && first > 0 ? first : cap;
		if (size[d] >= lim) {
			open[d] = -1;
			nclosed[d]++;
		}
	}
	s->bucket_cap = cap;
	s->first_bucket = first > 0 ? first : cap;
	return 0;
}

/* Horovod: every cycle the tensors ready by then are fused, per dtype, in
 * ready order, into buffers of at most 'threshold' bytes (a bigger tensor
 * goes alone); sparse tensors are all-gathered alone. */
int planner_build_horovod(const struct simctx *x, struct strategy *s,
			  double threshold, double cycle,
			  const struct bcfg *cfg)
{
	const autosync_model_t *m = x->m;
	long open[AUTOSYNC_DT_NTYPES];
	double size[AUTOSYNC_DT_NTYPES], tick = -1;

	for (int d = 0; d < AUTOSYNC_DT_NTYPES; d++)
		open[d] = -1;
	for (size_t o = 0; o < m->n; o++) {
		size_t i = x->order[o];
		const autosync_tensor_t *T = &m->t[i];
		double b = (double)T->numel * autosync_dtype_size(T->dtype);
		double tk = cycle > 0 ? ceil(x->ready[i] / cycle - 1e-9) * cycle
				      : x->ready[i];
		int d = T->dtype;
		long id;
		if (tk != tick) {
			for (int e = 0; e < AUTOSYNC_DT_NTYPES; e++)
				open[e] = -1;
			tick = tk;
		}
		if (T->sparse || threshold <= 0) {
			if ((id = planner_strategy_add_bucket(s, cfg)) < 0)
				return -1;
			s->tb[i] = (size_t)id;
			continue;
		}
		if (open[d] >= 0 && size[d] + b > threshold)
			open[d] = -1;
		if (open[d] < 0) {
			if ((open[d] = planner_strategy_add_bucket(s, cfg)) < 0)
				return -1;
			size[d] = 0;
		}
		s->tb[i] = (size_t)open[d];
		size[d] += b;
	}
	s->bucket_cap = threshold;
	s->cycle = cycle;
	return 0;
}

/* AutoDist greedy load balancing in graph order, unsorted: the server with
 * the least accumulated bytes (lowest index on ties), then load += bytes. */
static int greedy_ps(const struct simctx *x, struct strategy *s,
		     int sparse_only)
{
	const autosync_model_t *m = x->m;
	unsigned k = x->nodes;
	double *load = calloc(k, sizeof(double));
	long *layer_bucket = malloc((m->nl ? m->nl : 1) * sizeof(long));
	struct bcfg ps = {AUTOSYNC_SYNC_PS,
			  AUTOSYNC_ALGO_AUTO,
			  AUTOSYNC_COMPRESS_NONE,
			  k,
			  1,
			  0,
			  0,
			  0};

	if (!load || !layer_bucket) {
		free(load);
		free(layer_bucket);
		errno = ENOMEM;
		return -1;
	}
	for (size_t l = 0; l < m->nl; l++)
		layer_bucket[l] = -1;
	for (size_t i = 0; i < m->n; i++) {
		const autosync_tensor_t *T = &m->t[i];
		unsigned best = 0;
		if (sparse_only && !T->sparse)
			continue;
		for (unsigned j = 1; j < k; j++)
			if (load[j] < load[best])
				best = j;
		load[best] += (double)T->numel * autosync_dtype_size(T->dtype);
		s->server[i] = (int)best;
		/* one PS bucket per layer: a layer's gradients are ready
		 * together and TF issues their transfers at once */
		if (layer_bucket[T->layer_index] < 0 &&
		    (layer_bucket[T->layer_index] =
			 planner_strategy_add_bucket(s, &ps)) < 0) {
			free(load);
			free(layer_bucket);
			return -1;
		}
		s->tb[i] = (size_t)layer_bucket[T->layer_index];
	}
	free(load);
	free(layer_bucket);
	return 0;
}

int planner_build_baseline(const struct simctx *x, int b, struct strategy *s,
			   autosync_error_t *errp)
{
	const autosync_model_t *m = x->m;
	int rv = 0;

	if (planner_strategy_init(s, m->n) < 0)
		return autosync_errprintf(errp, "planner: out of memory");
	snprintf(s->name, sizeof(s->name), "%s", autosync_baseline_name(b));
	switch (b) {
	case AUTOSYNC_BASELINE_DDP:
		rv = planner_build_capped(x, s, DDP_FIRST_BUCKET * x->knob,
					  DDP_BUCKET_CAP * x->knob, &AR);
		break;
	case AUTOSYNC_BASELINE_HOROVOD:
		rv = planner_build_horovod(x, s, HOROVOD_FUSION * x->knob,
					   HOROVOD_CYCLE, &AR);
		break;
	case AUTOSYNC_BASELINE_PS_LB:
		rv = greedy_ps(x, s, 0);
		break;
	case AUTOSYNC_BASELINE_PARALLAX: {
		long *group = NULL;
		size_t ng = m->n / AUTODIST_CHUNK + 1;
		if (!(group = malloc(ng * sizeof(long)))) {
			rv = -1;
			break;
		}
		for (size_t gi = 0; gi < ng; gi++)
			group[gi] = -1;
		for (size_t i = 0; i < m->n && rv == 0; i++) {
			size_t gi = i / AUTODIST_CHUNK;
			if (m->t[i].sparse)
				continue;
			if (group[gi] < 0 &&
			    (group[gi] = planner_strategy_add_bucket(s, &AR)) <
				0)
				rv = -1;
			else
				s->tb[i] = (size_t)group[gi];
		}
		free(group);
		if (rv == 0)
			rv = greedy_ps(x, s, 1);
		break;
	}
	case AUTOSYNC_BASELINE_AR_PER_TENSOR:
		for (size_t i = 0; i < m->n && rv == 0; i++) {
			long id = planner_strategy_add_bucket(s, &AR);
			if (id < 0)
				rv = -1;
			else
				s->tb[i] = (size_t)id;
		}
		break;
	default:
		planner_strategy_free(s);
		errno = EINVAL;
		return autosync_errprintf(errp, "unknown baseline %d", b);
	}
	if (rv < 0) {
		planner_strategy_free(s);
		errno = ENOMEM;
		return autosync_errprintf(errp, "planner: out of memory");
	}
	return 0;
}
