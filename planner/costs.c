/* costs.c - the simulator's constants: documented defaults and the
 * calibration file loader. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/ykeys.h"
#include "internal.h"

static const struct cost_field {
	const char *name;
	size_t off;
	double min, max;
} fields[] = {
#define F(n, lo, hi)                                      \
	{                                                 \
#n, offsetof(autosync_costs_t, n), lo, hi \
	}
    F(launch, 0, 1),
    F(intra_eff, 0.01, 1),
    F(inter_eff, 0.01, 1),
    F(alpha_intra_override, 0, 1),
    F(alpha_inter_override, 0, 1),
    F(bw_intra_override, 0, 1e15),
    F(bw_nic_override, 0, 1e15),
    F(gamma, 0, 1),
    F(gpu_flops, 1e6, 1e18),
    F(bwd_fwd_ratio, 0, 100),
    F(cast_bw, 1e6, 1e15),
    F(cast_launch, 0, 1),
    F(ps_update_bw, 1e6, 1e15),
    F(ps_msg, 0, 1),
    F(host_bw, 1e6, 1e15),
    F(opt_bw, 1e6, 1e15),
    F(sparse_index_bytes, 0, 64),
    F(uncertainty, 0, 1),
    F(margin_small_buckets, 0, 0.99),
    F(margin_ps, 0, 0.99),
    F(margin_tree, 0, 0.99),
    F(margin_compression, 0, 0.99),
    F(small_bucket_bytes, 0, 1e12),
    F(oversubscription, 1, 1000),
    F(nccl_channel_bw, 1e6, 1e15),
    F(nccl_max_channels, 1, 64),
    F(nccl_channel_slack, 0, 1),
#undef F
};

void autosync_costs_default(autosync_costs_t *k)
{
	if (!k)
		return;
	memset(k, 0, sizeof(*k));
	k->launch = 15e-6;
	k->intra_eff = 0.80;
	k->inter_eff = 0.90;
	k->gamma = 0;
	k->gpu_flops = 100e12;
	k->bwd_fwd_ratio = 2.0;
	k->cast_bw = 1.0e12;
	k->cast_launch = 5e-6;
	k->ps_update_bw = 20e9;
	k->ps_msg = 20e-6;
	k->host_bw = 20e9;
	k->opt_bw = 400e9;
	k->sparse_index_bytes = 8;
	k->uncertainty = 0.02;
	/* results/2026-12-02-2cores: measured / predicted was 1.08-1.37 for
	 * bucketed fp32 all-reduce, 1.9-2.8 for hundreds of small buckets,
	 * 1.4-1.6 for PS, 2.1-3.0 for tree, 1.5-2.7 for compression; a margin
	 * m covers a family that is optimistic by up to (1 - m)^-1 more than
	 * the default it replaces */
	k->margin_small_buckets = 0.35;
	k->margin_ps = 0.25;
	k->margin_tree = 0.50;
	k->margin_compression = 0.40;
	k->small_bucket_bytes = 1024.0 * 1024.0;
	k->oversubscription = 1;
	k->nccl_channel_bw = 12e9;
	k->nccl_max_channels = 32;
	k->nccl_channel_slack = 0.05;
}

/* the calibration file's keys: every field and the version marker */
static int check_fields(struct ydoc *d, yaml_node_t *root,
			autosync_error_t *errp)
{
	const char *names[sizeof(fields) / sizeof(fields[0]) + 1];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		names[n++] = fields[i].name;
	names[n++] = "autosync_costs";
	return asi_ykeys_check(&d->doc, root, names, n, d->fname, NULL, errp);
}

int autosync_costs_parse(autosync_costs_t *k, const char *buf, size_t len,
			 const char *fname, autosync_error_t *errp)
{
	struct ydoc d;
	autosync_costs_t tmp;
	yaml_node_t *root;

	if (!k) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "costs_parse: invalid argument");
	}
	if (planner_ydoc_load(&d, buf, len, fname, errp) < 0)
		return -1;
	tmp = *k;
	root = planner_ydoc_root(&d);
	if (planner_yexpect(&d, root, YAML_MAPPING_NODE, "calibration file",
			    errp) < 0)
		goto fail;
	if (check_fields(&d, root, errp) < 0)
		goto fail;
	for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
	     pr < root->data.mapping.pairs.top; pr++) {
		const char *key =
		    planner_yscalar(planner_ydoc_node(&d, pr->key));
		const struct cost_field *f = NULL;
		for (size_t i = 0;
		     key && i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(key, fields[i].name))
				f = &fields[i];
		if (!f)
			continue; /* the optional version marker */
		if (planner_yget_double(
			&d, planner_ydoc_node(&d, pr->value), f->name, f->min,
			f->max, (double *)((char *)&tmp + f->off), errp) < 0)
			goto fail;
	}
	planner_ydoc_free(&d);
	*k = tmp;
	return 0;
fail:
	planner_ydoc_free(&d);
	return -1;
}

int autosync_costs_load(autosync_costs_t *k, const char *path,
			autosync_error_t *errp)
{
	char *buf = NULL;
	size_t len;
	int rv, saved;

	if (planner_read_file(path, &buf, &len, errp) < 0)
		return -1;
	rv = autosync_costs_parse(k, buf, len, path, errp);
	saved = errno;
	free(buf);
	errno = saved;
	return rv;
}
