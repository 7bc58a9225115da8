/* learn/internal.h - the dataset's layout, shared by dataset.c and
 * learned.c; not for other modules. */
#ifndef AUTOSYNC_LEARN_INTERNAL_H
#define AUTOSYNC_LEARN_INTERNAL_H

#include <stdint.h>

#include "autosync/cluster.h"
#include "learn.h"

/* What the learned correction sees of a point: the simulator's terms, the
 * shares of the prediction they make, the cluster, and the prediction
 * itself (features.c; NaN = not known, e.g. a record without terms). */
#define LEARN_NFEAT (AUTOSYNC_TERM_N + 4 + 7 + 1 + 5)

struct point {
	char *label[AUTOSYNC_BY_N]; /* model name, cluster label */
	char *group;		    /* model hash and cluster spec */
	char plan[17];
	double pred0; /* the record's (analytic) prediction */
	double pred;  /* the one evaluated: pred0 or a learned one */
	double *meas; /* medians of the pooled records */
	size_t nmeas;
	double measured; /* their median */
	uint32_t uid;	 /* of the first record: whose measurement it is */
	int family;	 /* enum autosync_family of its strategy */
	/* for the measured compute (autosync_learned_set_compute), from the
	 * first record: its model's hash, samples per GPU (0 unknown) and
	 * the analytic exposed communication, optimizer and communication
	 * times (NaN without terms) */
	char model_hash[17];
	unsigned batch;
	double exposed, optimizer, comm;
	float feat[LEARN_NFEAT];
};

struct autosync_dataset {
	struct point *p;
	size_t n, cap, pooled;
	unsigned min_steps;
	double tie;
	double user_cap; /* share of the training weight one user may have */
	char **labels[AUTOSYNC_BY_N];
	size_t nlabels[AUTOSYNC_BY_N];
};

void learn_features(const autosync_feedback_rec_t *r, float *feat);
/* The same from a breakdown t[AUTOSYNC_TERM_N] (NULL: unknown), the
 * analytic prediction and the cluster (NULL: unknown): a planner's
 * candidate. */
void learn_features_of(const double *t, double pred, unsigned nodes,
		       unsigned gpus_per_node, const autosync_cluster_t *c,
		       float *feat);
/* The family (enum autosync_family) a record's strategy belongs to. */
int learn_family(const autosync_feedback_rec_t *r);
/* Training weights of the points 'use' selects (NULL: all), in order, into
 * w[]: root's records (uid 0: the site's own trial runs) weigh 1; every
 * other user's together at most user_cap of the total; n is returned. */
size_t learn_weights(const autosync_dataset_t *d, const char *use, float *w);

#endif
