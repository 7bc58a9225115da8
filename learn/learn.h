/*
 * learn/learn.h - measured pairs and how well a simulator ranks them.
 *
 * A dataset holds points: one (model, cluster, strategy) with a predicted
 * and a measured step time, made from feedback records (docs/dataset.md).
 * Points of the same model (its hash: a scaled model is another) and the
 * same cluster form a group; ranking is only judged inside a group, since
 * pooled pairs across models say nothing about choosing a strategy
 * (../docs/dataset.md, "A pair").
 *
 * Linked into the autosync command only, never into the SPANK plugin: the
 * numerical libraries learning uses stay out of slurmstepd. Conventions as
 * in autosync/common.h; nothing here prints.
 */
#ifndef AUTOSYNC_LEARN_H
#define AUTOSYNC_LEARN_H

#include <stddef.h>
#include <sys/types.h>

#include "autosync/common.h"
#include "autosync/feedback.h"

typedef struct autosync_dataset autosync_dataset_t;

/* Caller frees with autosync_dataset_destroy(). Defaults: at least 3 timed
 * steps per record, ties below 2 % left out. */
autosync_dataset_t *autosync_dataset_create(autosync_error_t *errp);
void autosync_dataset_destroy(autosync_dataset_t *d);
/* Records with fewer timed steps (measured_count) are not added; >= 1. */
int autosync_dataset_set_min_steps(autosync_dataset_t *d, unsigned n,
				   autosync_error_t *errp);
/* Two measurements closer than this share (|a - b| / min(a, b)) are a tie:
 * the pair is left out of the ranking metrics; 0 .. 1. */
int autosync_dataset_set_tie(autosync_dataset_t *d, double tie,
			     autosync_error_t *errp);
/* The tie share in use (0.02 unless set). */
double autosync_dataset_tie(const autosync_dataset_t *d);
/* Step times come from files jobs write: in training, the points of each
 * user other than root (uid 0, the site's own trial runs) weigh together
 * at most this share of the total (default 0.1), so that one user's forged
 * records cannot outweigh the rest; (0, 1]. */
int autosync_dataset_set_user_cap(autosync_dataset_t *d, double cap,
				  autosync_error_t *errp);

/*
 * Add the point of record 'r': measured = the median of its kept step
 * times (else its mean), predicted = its predicted_step_s. A record of a
 * (user, model, cluster, plan) already there is pooled with it (the median
 * of the medians); another user's record of the same plan is a point of
 * its own, so that it weighs within that user's share. Returns 1 when
 * added or pooled, 0 when skipped (no measurement, fewer steps than the
 * minimum, or no cluster: format 1 records do not say which network they
 * ran on), -1 with errno on error.
 */
int autosync_dataset_add(autosync_dataset_t *d,
			 const autosync_feedback_rec_t *r,
			 autosync_error_t *errp);
size_t autosync_dataset_npoints(const autosync_dataset_t *d);
/* Records pooled into a point already there. */
size_t autosync_dataset_npooled(const autosync_dataset_t *d);

/* What the metrics are grouped by. The cluster label is "NODESxGPUS NIC"
 * with the NIC speed in bit/s, e.g. "4x2 1Gbit/s". */
enum autosync_by { AUTOSYNC_BY_MODEL = 0, AUTOSYNC_BY_CLUSTER, AUTOSYNC_BY_N };
/* Distinct labels, sorted; borrowed, valid until the next add. */
size_t autosync_dataset_nlabels(const autosync_dataset_t *d, int by);
const char *autosync_dataset_label(const autosync_dataset_t *d, int by,
				   size_t i);

typedef struct autosync_eval {
	size_t groups;	    /* groups with 2 points or more */
	size_t points;	    /* all points (the errors are over these) */
	size_t pairs;	    /* pairs inside groups, ties left out */
	size_t ties;	    /* pairs left out as ties */
	double pairwise;    /* share of 'pairs' the prediction orders as
			     * measured (a predicted tie counts half) */
	double tau_b;	    /* Kendall tau-b, mean over the groups */
	double spearman;    /* Spearman rho, mean over the groups */
	double regret;	    /* measured time of the predicted best / the best
			     * measured, mean over the groups (1 = ideal) */
	double mean_abs;    /* mean |predicted / measured - 1| over points */
	double mean_signed; /* mean (predicted / measured - 1) */
} autosync_eval_t;

/*
 * The metrics over the groups whose model name (AUTOSYNC_BY_MODEL) or
 * cluster label equals 'label' (NULL: every group). Metrics of no group
 * are NaN.
 */
int autosync_dataset_eval(const autosync_dataset_t *d, int by,
			  const char *label, autosync_eval_t *out,
			  autosync_error_t *errp);

/* One group's pick (a group = one model on one cluster): the point its
 * predictions rank fastest and the point measured fastest, by plan hash,
 * with their measured times; regret = picked_s / best_s. */
typedef struct autosync_pick {
	const char *label[AUTOSYNC_BY_N]; /* model and cluster labels,
					   * borrowed from the dataset */
	char picked[17], best[17];
	double picked_s, best_s;
} autosync_pick_t;

/*
 * The picks of every group with 2 points or more, in group order, into
 * *out (the caller frees it with free(); its labels live as long as the
 * dataset is not changed). Returns their number, -1 on error.
 */
ssize_t autosync_dataset_picks(const autosync_dataset_t *d,
			       autosync_pick_t **out, autosync_error_t *errp);

/*
 * A learned correction of the analytic simulator (a simulator file): boosted
 * trees (XGBoost) fitted to log(measured / predicted) of the points, from
 * the simulator's terms, the shares of the prediction they make, the
 * cluster and the prediction (learn/features.c). The corrected prediction
 * is predicted x exp(tree output). Deterministic: same points, same file.
 */
typedef struct autosync_learned autosync_learned_t;
/* Fit on every point, or on every point whose 'by' label is not 'except'
 * (held out); the same points read in any order fit the same file. The
 * caller destroys the result. */
autosync_learned_t *autosync_learned_fit(const autosync_dataset_t *d, int by,
					 const char *except,
					 autosync_error_t *errp);
/* The same on top of 'base' (a file trained elsewhere): its trees are kept
 * and up to AUTOSYNC_LEARNED_ADAPT_TREES more are fitted to what it still
 * gets wrong here, so that a few trials on a new cluster adapt it
 * (transfer). How many: AUTOSYNC_LEARNED_CV_FOLDS-fold cross-validation on
 * these points (taken in order of model, cluster and plan, whatever the
 * records' order, the i-th in fold i % folds; leave-one-out under 5
 * points, none for 1) scores the base plus each
 * number of trees on the points left out by weighted squared error of the
 * log; the least wins, the fewest on a tie, and 0 keeps the base as it is
 * (a handful of noisy trials is fitted by 50 trees noise and all). */
#define AUTOSYNC_LEARNED_ADAPT_TREES 50
#define AUTOSYNC_LEARNED_CV_FOLDS 5
autosync_learned_t *autosync_learned_adapt(const autosync_learned_t *base,
					   const autosync_dataset_t *d, int by,
					   const char *except,
					   autosync_error_t *errp);
/* How many trees autosync_learned_adapt() fitted on top of the base, kept
 * in the file; -1 when 'l' was not adapted from a base (or was, before
 * files kept the number). */
int autosync_learned_adapted(const autosync_learned_t *l);
/* Replace the prediction of every point (or of those whose 'by' label is
 * 'only') with the corrected one; autosync_dataset_reset() goes back to the
 * records' own predictions. */
int autosync_learned_apply(const autosync_learned_t *l, autosync_dataset_t *d,
			   int by, const char *only, autosync_error_t *errp);
void autosync_dataset_reset(autosync_dataset_t *d);
/*
 * A simulator file: XGBoost's model with autosync's feature layout as an
 * attribute (a file of another layout is refused on loading), in one of
 * two formats, whatever the name's end. BINARY (the default of `autosync
 * train`) is XGBoost's UBJSON behind a header line that holds its length
 * and hash (envelope.h): it loads about five times faster than JSON,
 * which job start needs, and a cut or changed file is refused before
 * XGBoost reads it. JSON is XGBoost's JSON model, for reading and editing.
 * Loading takes either (at most AUTOSYNC_LEARNED_MAX_BYTES). Saving
 * replaces a file whole or not at all: written as PATH.tmp.PID and
 * renamed over PATH (a PATH that is not a regular file is written in
 * place).
 */
enum { AUTOSYNC_LEARNED_BINARY, AUTOSYNC_LEARNED_JSON };
#define AUTOSYNC_LEARNED_MAX_BYTES (64u << 20)
int autosync_learned_save(const autosync_learned_t *l, const char *path,
			  int format, autosync_error_t *errp);
autosync_learned_t *autosync_learned_load(const char *path,
					  autosync_error_t *errp);
/* The same from a file's bytes ('name' for messages). */
autosync_learned_t *autosync_learned_load_buffer(const void *buf, size_t len,
						 const char *name,
						 autosync_error_t *errp);
void autosync_learned_destroy(autosync_learned_t *l);

/*
 * Corrected step times of planner candidates (autosync_corrector_t's
 * correct()): candidate i has the analytic breakdown
 * terms[i * AUTOSYNC_TERM_N ...] and prediction step[i] on cluster 'c'.
 */
int autosync_learned_correct(const autosync_learned_t *l,
			     const autosync_cluster_t *c, size_t n,
			     const double *terms, const double *step,
			     double *out, autosync_error_t *errp);

/*
 * The no-harm margin of each strategy family (enum autosync_family), from
 * the points' current predictions (after a leave-one-out
 * autosync_learned_apply, held-out ones). In each group (one model on one
 * cluster) the family's pick is chosen as the planner chooses: of its
 * AUTOSYNC_ELITES points with the least analytic prediction, the one with
 * the least current prediction. A pick is chosen for looking fast, so it
 * is more optimistic than a typical point (the winner's curse), and it is
 * the pick's optimism that can make a plan worse than the default. The
 * margin is the 90th percentile over the groups of how much more
 * optimistic the pick's prediction is than its group's (1 - r / the
 * median r of the group, r = predicted / measured): the planner compares
 * strategies of one group, so a bias they share cannot make it choose
 * wrongly. Within [0.02, 0.9], into out[AUTOSYNC_FAMILY_N] for each family
 * picked in at least AUTOSYNC_LEARNED_MIN_FAMILY groups, -1 for the
 * others; the number of groups of each family (its picks) goes to
 * counts[AUTOSYNC_FAMILY_N] when not NULL.
 */
#define AUTOSYNC_LEARNED_MIN_FAMILY 5
int autosync_dataset_margins(const autosync_dataset_t *d, double *out,
			     size_t *counts, autosync_error_t *errp);
/* Keep a family's margin in the file (0.02 .. 0.9); m < 0 removes it, so
 * that the planner uses the cost constants' margin for that family. */
int autosync_learned_set_margin(autosync_learned_t *l, int family, double m,
				autosync_error_t *errp);
/* autosync_dataset_margins() kept in the file, each family with one;
 * returns their number. */
int autosync_learned_set_margins(autosync_learned_t *l,
				 const autosync_dataset_t *d, size_t *counts,
				 autosync_error_t *errp);
/* A family's margin from the file, or -1 when it has none. */
double autosync_learned_margin(const autosync_learned_t *l, int family);

/*
 * Measured compute of the models the points ran (docs/dataset.md), kept
 * in the file so that every node that plans with it plans alike: a model
 * file without FLOPs or times then plans with what its steps measured
 * instead of FLOPs guessed from parameter counts. A point counts when its
 * record says its batch size and terms and its communication (comm_s) is
 * at most AUTOSYNC_LEARNED_COMPUTE_COMM of its measured step; its forward
 * + backward compute per sample is measured - exposed_s - optimizer_s,
 * over the batch. Per model hash: each user's median, then the median of
 * the users' (one user's records are one vote), for models with at least
 * AUTOSYNC_LEARNED_MIN_COMPUTE points. Returns the number of models.
 */
#define AUTOSYNC_LEARNED_COMPUTE_COMM 0.25
#define AUTOSYNC_LEARNED_MIN_COMPUTE 3
int autosync_learned_set_compute(autosync_learned_t *l,
				 const autosync_dataset_t *d,
				 autosync_error_t *errp);
/* A model's measured compute per sample (s) from the file, -1 if none. */
double autosync_learned_compute(const autosync_learned_t *l,
				const char *model_hash);

#endif
