/*
 * trial.h - helpers of the trial-run harness that need no MPI: scaled
 * models and random valid strategies (simulated, so that every measured
 * strategy has the simulator's prediction next to it).
 */
#ifndef AUTOSYNC_TRIAL_H
#define AUTOSYNC_TRIAL_H

#include <stdint.h>
#include <stdio.h>

#include "autosync/planner.h"

/*
 * A copy of 'm' whose gradients are 'scale' times smaller: dense tensors
 * become 1-D with ceil(numel/scale) elements, sparse tensors keep their
 * row width and get ceil(rows/scale) rows and ceil(rows_touched/scale)
 * touched rows. Compute is unchanged (every layer keeps its FLOPs per
 * sample, batch and tokens), so on a network 'scale' times slower the
 * compute/communication ratio is that of the original model. Named
 * "NAME@1/SCALE" (scale 1: an identical copy named NAME). The caller
 * frees it with autosync_model_destroy().
 */
autosync_model_t *autosync_trial_scale_model(const autosync_model_t *m,
					     double scale,
					     autosync_error_t *errp);

/*
 * A random valid strategy for 'm' on 'c' under framework 'fw', simulated
 * with 'k': tensors in ready order cut into 1..64 contiguous buckets of
 * random length; each bucket all-reduce (ring, tree or hier; fp16/bf16
 * only when 'allow_compress') or, when the framework allows it, PS with
 * 1..nodes servers, random local aggregation/replication and random
 * per-tensor placement. Same seed, same plan. Named "random-SEED".
 */
autosync_plan_t *autosync_trial_random_plan(const autosync_model_t *m,
					    const autosync_cluster_t *c,
					    const autosync_costs_t *k, int fw,
					    int allow_compress, uint64_t seed,
					    autosync_error_t *errp);

/*
 * The replay description of 'm' (what a framework peer needs to train the
 * same synthetic model): per-layer forward/backward seconds as the
 * simulator computes them with 'k', the optimizer time, and every tensor
 * (name, layer, elements). One JSON document.
 */
int autosync_trial_write_replay(const autosync_model_t *m,
				const autosync_cluster_t *c,
				const autosync_costs_t *k, FILE *fp,
				autosync_error_t *errp);

#endif
