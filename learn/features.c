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

void learn_features(const autosync_feedback_rec_t *r, float *f)
{
	const double *t = r->terms;
	double pred = r->predicted;
	autosync_cluster_t c;
	size_t k = 0;
	int have_c =
	    r->cluster[0] && autosync_cluster_parse(&c, r->cluster, NULL) == 0;

	for (int i = 0; i < AUTOSYNC_TERM_N; i++)
		f[k++] = r->have_terms ? (float)t[i] : NAN;
	/* where the predicted step goes */
	f[k++] = r->have_terms ? (float)(t[AUTOSYNC_TERM_COMM] / pred) : NAN;
	f[k++] = r->have_terms ? (float)(t[AUTOSYNC_TERM_EXPOSED] / pred) : NAN;
	f[k++] = r->have_terms ? (float)((t[AUTOSYNC_TERM_LAT_INTRA] +
					  t[AUTOSYNC_TERM_LAT_INTER]) /
					 pred)
			       : NAN;
	f[k++] =
	    r->have_terms ? (float)(t[AUTOSYNC_TERM_LAUNCH] * 1.0 / pred) : NAN;
	/* the cluster */
	f[k++] = (float)r->nodes;
	f[k++] = (float)r->gpus_per_node;
	f[k++] = have_c ? (float)c.nics_per_node : NAN;
	f[k++] = have_c ? (float)c.nic_bw : NAN;
	f[k++] = have_c ? (float)c.inter_lat : NAN;
	f[k++] = have_c ? (float)c.intra_bw : NAN;
	f[k++] = have_c ? (float)c.intra_lat : NAN;
	f[k++] = (float)log(pred);
}
