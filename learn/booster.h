/* learn/booster.h - a simulator file's trees in memory, shared by
 * learned.c (loading and using them: what the planning module links) and
 * train.c (fitting and writing them); not for other modules. */
#ifndef AUTOSYNC_LEARN_BOOSTER_H
#define AUTOSYNC_LEARN_BOOSTER_H

#include <stddef.h>

#include <xgboost/c_api.h>

#include "learn.h"

/* The feature layout a file was trained on (features.c); a file of
 * another layout is refused rather than misread. */
#define LEARN_FEATURES_VERSION "2"
/* the attribute of a model's measured compute: this and its hash */
#define LEARN_COMPUTE_KEY "autosync_compute_"
/* the attribute of the number of trees fitted on top of a base */
#define LEARN_TREES_KEY "autosync_adapted_trees"

struct autosync_learned {
	BoosterHandle b;
};

/* XGBoost's last error, one line, as "what: why" in 'errp'; -1, EINVAL */
int learn_xgb_error(autosync_error_t *errp, const char *what);
/* the attribute of a family's margin into key[len] */
void learn_margin_key(char *key, size_t len, int family);

#endif
