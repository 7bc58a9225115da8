/* trial.c - the replay description for framework peers (see trial.h), a
 * JSON document written with jansson. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

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
	/* jansson escapes every name (quotes, backslashes, control
	 * characters) and refuses what is not UTF-8 */
	{
		json_t *root = json_object(), *layers = json_array(),
		       *tensors = json_array();
		int bad = !root || !layers || !tensors;

		bad |= json_object_set_new(root, "model",
					   json_string(autosync_model_name(m)));
		bad |= json_object_set_new(root, "model_hash",
					   json_string(autosync_model_hash(m)));
		/* a peer scales its framework's default size knobs by it */
		bad |= json_object_set_new(
		    root, "grad_scale",
		    json_real(autosync_model_grad_scale(m)));
		bad |= json_object_set_new(root, "forward", json_real(fwd));
		bad |= json_object_set_new(root, "backward", json_real(bwd));
		bad |= json_object_set_new(root, "optimizer", json_real(opt));
		for (size_t l = 0; l < nl && !bad; l++)
			bad |= json_array_append_new(
			    layers, json_pack("{s:s, s:f, s:f}", "name",
					      autosync_model_layer(m, l)->name,
					      "fwd", lf[l], "bwd", lb[l]));
		for (size_t i = 0; i < autosync_model_ntensors(m) && !bad;
		     i++) {
			const autosync_tensor_t *t =
			    autosync_model_tensor(m, i);
			uint64_t row = t->ndim && t->shape[0]
					   ? t->numel / (uint64_t)t->shape[0]
					   : 1;

			bad |= json_array_append_new(
			    tensors,
			    json_pack("{s:s, s:I, s:I, s:b, s:I, s:I}", "name",
				      t->name, "layer",
				      (json_int_t)t->layer_index, "numel",
				      (json_int_t)t->numel, "sparse", t->sparse,
				      "rows", (json_int_t)t->rows_touched,
				      "row", (json_int_t)row));
		}
		bad |= json_object_set(root, "layers", layers);
		bad |= json_object_set(root, "tensors", tensors);
		json_decref(layers);
		json_decref(tensors);
		if (bad) {
			json_decref(root);
			errno = EINVAL;
			autosync_errprintf(errp, "write_replay: a name that is "
						 "not UTF-8, or out of memory");
			goto out;
		}
		bad = json_dumpf(root, fp, JSON_REAL_PRECISION(9)) < 0 ||
		      fputc('\n', fp) == EOF;
		json_decref(root);
		rv = bad || ferror(fp)
			 ? autosync_errprintf(errp, "write_replay: write error")
			 : 0;
	}
out:
	free(lf);
	free(lb);
	return rv;
}
