/* features.c - what the learned correction sees of a record: the analytic
 * simulator's terms, the shares of the prediction they make up, the
 * cluster it ran on and the prediction itself. Physical quantities, so
 * that one file carries over to models and clusters it never saw
 * (../shared/docs/learning.md section 5 has why). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "autosync/cluster.h"
#include "internal.h"

void learn_features_of(const double *t, double pred, unsigned nodes,
		       unsigned gpus_per_node, const autosync_cluster_t *c,
		       float *f)
{
	size_t k = 0;
	double fam =
	    t ? t[AUTOSYNC_TERM_PS_BYTES] + t[AUTOSYNC_TERM_TREE_BYTES] +
		    t[AUTOSYNC_TERM_HIER_BYTES] + t[AUTOSYNC_TERM_RING_BYTES]
	      : 0;

	for (int i = 0; i < AUTOSYNC_TERM_N; i++)
		f[k++] = t ? (float)t[i] : NAN;
	/* where the predicted step goes */
	f[k++] = t ? (float)(t[AUTOSYNC_TERM_COMM] / pred) : NAN;
	f[k++] = t ? (float)(t[AUTOSYNC_TERM_EXPOSED] / pred) : NAN;
	f[k++] = t ? (float)((t[AUTOSYNC_TERM_LAT_INTRA] +
			      t[AUTOSYNC_TERM_LAT_INTER]) /
			     pred)
		   : NAN;
	f[k++] = t ? (float)(t[AUTOSYNC_TERM_LAUNCH] * 1.0 / pred) : NAN;
	/* the cluster */
	f[k++] = (float)nodes;
	f[k++] = (float)gpus_per_node;
	f[k++] = c ? (float)c->nics_per_node : NAN;
	f[k++] = c ? (float)c->nic_bw : NAN;
	f[k++] = c ? (float)c->inter_lat : NAN;
	f[k++] = c ? (float)c->intra_bw : NAN;
	f[k++] = c ? (float)c->intra_lat : NAN;
	f[k++] = (float)log(pred);
	/* the families the step is made of, as shares of the bytes: a tree's
	 * split needs them as ratios to carry to a model of another size */
	for (int i = AUTOSYNC_TERM_PS_BYTES;
	     i <= AUTOSYNC_TERM_COMPRESSED_BYTES; i++)
		f[k++] = t && fam > 0 ? (float)(t[i] / fam) : NAN;
}

void learn_features(const autosync_feedback_rec_t *r, float *f)
{
	autosync_cluster_t c;
	int have_c =
	    r->cluster[0] && autosync_cluster_parse(&c, r->cluster, NULL) == 0;

	learn_features_of(r->have_terms ? r->terms : NULL, r->predicted,
			  r->nodes, r->gpus_per_node, have_c ? &c : NULL, f);
}

/* The planner's families (autosync_family) of a record's strategy, as
 * planner/search.c assigns them. A record counts in one of them, by a fixed
 * precedence: DDP's hierarchical hook, compression, parameter server, tree,
 * many small buckets, else bucketed all-reduce. Fixed, so that neither the
 * margins being measured nor a site's calibration change which records a
 * family's margin is measured on (when it was the widest margin's, the
 * values depended on themselves, and compression and PS had no order that
 * agreed with itself); the planner widens a plan by the widest margin
 * among all its families, never less than the margin of the family it
 * counts in here. */
int learn_family(const autosync_feedback_rec_t *r)
{
	static const int precedence[] = {
	    AUTOSYNC_FAMILY_DDP_HIER, AUTOSYNC_FAMILY_COMPRESSION,
	    AUTOSYNC_FAMILY_PS, AUTOSYNC_FAMILY_TREE,
	    AUTOSYNC_FAMILY_SMALL_BUCKETS};
	autosync_costs_t k;
	size_t small = 0, ar = 0;
	unsigned mask = 0;
	double scale = r->scale > 0 ? r->scale : 1;

	autosync_costs_default(&k); /* the small-bucket size only */
	for (size_t i = 0; i < r->nbuckets; i++) {
		const autosync_feedback_bucket_t *b = &r->buckets[i];
		if (!(b->bytes > 0))
			continue;
		if (b->compress[0] && strcmp(b->compress, "none"))
			mask |= 1u << AUTOSYNC_FAMILY_COMPRESSION;
		if (!strcmp(b->kind, "ps")) {
			mask |= 1u << AUTOSYNC_FAMILY_PS;
			continue;
		}
		if (!strcmp(b->algo, "tree"))
			mask |= 1u << AUTOSYNC_FAMILY_TREE;
		if (autosync_algo_from_name(b->algo) == AUTOSYNC_ALGO_HIER &&
		    !strcmp(r->framework, "pytorch-ddp"))
			mask |= 1u << AUTOSYNC_FAMILY_DDP_HIER;
		ar++;
		if (b->bytes * scale < k.small_bucket_bytes)
			small++;
	}
	if (small > 8 && small * 4 > ar)
		mask |= 1u << AUTOSYNC_FAMILY_SMALL_BUCKETS;
	for (size_t i = 0; i < sizeof(precedence) / sizeof(precedence[0]); i++)
		if (mask & (1u << precedence[i]))
			return precedence[i];
	return AUTOSYNC_FAMILY_ALLREDUCE;
}
