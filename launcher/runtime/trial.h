/*
 * trial.h - what the trial-run harness writes beside its plans: the replay
 * description a framework peer needs to train the same synthetic model.
 */
#ifndef AUTOSYNC_TRIAL_H
#define AUTOSYNC_TRIAL_H

#include <stdio.h>

#include "autosync/planner.h"

/*
 * The replay description of the planner's model: per-layer forward/
 * backward seconds as the simulator computes them, the optimizer time, and
 * every tensor (name, layer, elements). One JSON document.
 */
int autosync_trial_write_replay(autosync_planner_t *p,
				const autosync_model_t *m, FILE *fp,
				autosync_error_t *errp);

#endif
