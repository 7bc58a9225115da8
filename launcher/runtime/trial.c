/* trial.c - the replay description for framework peers (see trial.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "trial.h"

int autosync_trial_write_replay(autosync_planner_t *p,
				const autosync_model_t *m, FILE *fp,
				autosync_error_t *errp)
{
	size_t nl = m ? autosync_model_nlayers(m) : 0;
	double fwd, bwd, opt, *lf = NULL, *lb = NULL;
	int rv = -1;

	if (!p || !m || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "write_replay: invalid argument");
	}
	if (!(lf = calloc(nl ? nl : 1, sizeof(*lf))) ||
	    !(lb = calloc(nl ? nl : 1, sizeof(*lb)))) {
		errno = ENOMEM;
		autosync_errprintf(errp, "write_replay: out of memory");
		goto out;
	}
	if (autosync_planner_compute_times(p, &fwd, &bwd, &opt, lf, lb, errp) <
	    0)
		goto out;
	fprintf(fp,
		"{\"model\": \"%s\", \"model_hash\": \"%s\", "
		"\"forward\": %.9g, \"backward\": %.9g, "
		"\"optimizer\": %.9g,\n \"layers\": [",
		autosync_model_name(m), autosync_model_hash(m), fwd, bwd, opt);
	for (size_t l = 0; l < nl; l++)
		fprintf(
		    fp,
		    "%s\n  {\"name\": \"%s\", \"fwd\": %.9g, \"bwd\": %.9g}",
		    l ? "," : "", autosync_model_layer(m, l)->name, lf[l],
		    lb[l]);
	fprintf(fp, "],\n \"tensors\": [");
	for (size_t i = 0; i < autosync_model_ntensors(m); i++) {
		const autosync_tensor_t *t = autosync_model_tensor(m, i);
		fprintf(
		    fp,
		    "%s\n  {\"name\": \"%s\", \"layer\": %zu, \"numel\": "
		    "%llu, \"sparse\": %s, \"rows\": %llu, \"row\": %llu}",
		    i ? "," : "", t->name, t->layer_index,
		    (unsigned long long)t->numel, t->sparse ? "true" : "false",
		    (unsigned long long)t->rows_touched,
		    (unsigned long long)(t->ndim && t->shape[0]
					     ? t->numel / (uint64_t)t->shape[0]
					     : 1));
	}
	fprintf(fp, "]}\n");
	rv = ferror(fp) ? autosync_errprintf(errp, "write_replay: write error")
			: 0;
out:
	free(lf);
	free(lb);
	return rv;
}
