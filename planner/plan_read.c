/* plan_read.c - the plan reader: every field error names the file, the
 * line and the value. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "common/ykeys.h"
#include "internal.h"

#define NEED(node, name, where)                                                \
	do {                                                                   \
		if (!((node) = planner_ymap_get(&d, (where), (name)))) {       \
			errno = EINVAL;                                        \
			autosync_errprintf(errp, "%s:%u: missing field '%s'",  \
					   d.fname, planner_ynode_line(where), \
					   (name));                            \
			goto fail;                                             \
		}                                                              \
	} while (0)

static int dupstr(struct ydoc *d, yaml_node_t *n, const char *what, char **out,
		  autosync_error_t *errp)
{
	const char *s;
	if (planner_yget_str(d, n, what, &s, errp) < 0)
		return -1;
	free(*out);
	if (!(*out = strdup(s))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "plan: out of memory");
	}
	return 0;
}

static int enum_field(struct ydoc *d, yaml_node_t *n, const char *what,
		      int (*conv)(const char *), int *out,
		      autosync_error_t *errp)
{
	const char *s;
	int v;
	if (planner_yget_str(d, n, what, &s, errp) < 0)
		return -1;
	if ((v = conv(s)) < 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "%s:%u: %s: unknown value '%s'",
					  d->fname, planner_ynode_line(n), what,
					  s);
	}
	*out = v;
	return 0;
}

static int parse_bucket(struct ydoc *dd, yaml_node_t *bn,
			struct plan_bucket *pb, size_t idx,
			autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *n, *tl;
	char what[64];
	const char *kind;
	uint64_t v;
	size_t nt, j;
	autosync_bucket_t *b = &pb->b;

	snprintf(what, sizeof(what), "buckets[%zu]", idx);
	if (planner_yexpect(&d, bn, YAML_MAPPING_NODE, what, errp) < 0)
		return -1;
	NEED(n, "id", bn);
	if (planner_yget_u64(&d, n, "id", idx, idx, &v, errp) < 0)
		goto fail;
	b->id = (unsigned)v;
	NEED(n, "kind", bn);
	if (planner_yget_str(&d, n, "kind", &kind, errp) < 0)
		goto fail;
	if (!strcmp(kind, "ps")) {
		b->kind = AUTOSYNC_SYNC_PS;
		NEED(n, "servers", bn);
		if (planner_yget_u64(&d, n, "servers", 1, 1000000, &v, errp) <
		    0)
			goto fail;
		b->servers = (unsigned)v;
		NEED(n, "local_aggregation", bn);
		if (planner_yget_bool(&d, n, "local_aggregation", &b->local_agg,
				      errp) < 0)
			goto fail;
		NEED(n, "local_replication", bn);
		if (planner_yget_bool(&d, n, "local_replication",
				      &b->local_repl, errp) < 0)
			goto fail;
	} else if (!strcmp(kind, "allreduce")) {
		b->kind = AUTOSYNC_SYNC_ALLREDUCE;
		NEED(n, "algorithm", bn);
		if (enum_field(&d, n, "algorithm", autosync_algo_from_name,
			       &b->algo, errp) < 0)
			goto fail;
		NEED(n, "compression", bn);
		if (enum_field(&d, n, "compression",
			       autosync_compress_from_name, &b->compress,
			       errp) < 0)
			goto fail;
		if ((n = planner_ymap_get(&d, bn, "densify")) &&
		    planner_yget_bool(&d, n, "densify", &b->densify, errp) < 0)
			goto fail;
	} else {
		errno = EINVAL;
		autosync_errprintf(
		    errp, "%s:%u: %s: kind '%s' is not allreduce or ps",
		    d.fname, planner_ynode_line(n), what, kind);
		goto fail;
	}
	{
		static const char *const tf[] = {"bytes", "wire_bytes", "ready",
						 "start", "end"};
		double *dst[] = {&b->bytes, &b->wire_bytes, &b->ready,
				 &b->start, &b->end};
		for (int i = 0; i < 5; i++) {
			NEED(n, tf[i], bn);
			if (planner_yget_double(&d, n, tf[i], 0, 1e300, dst[i],
						errp) < 0)
				goto fail;
		}
		b->comm = b->end - b->start;
	}
	NEED(tl, "tensors", bn);
	if (planner_yexpect(&d, tl, YAML_SEQUENCE_NODE, "tensors", errp) < 0)
		goto fail;
	nt = (size_t)(tl->data.sequence.items.top -
		      tl->data.sequence.items.start);
	if (!(pb->names = calloc(nt ? nt : 1, sizeof(char *))) ||
	    !(pb->server = calloc(nt ? nt : 1, sizeof(int)))) {
		errno = ENOMEM;
		autosync_errprintf(errp, "plan: out of memory");
		goto fail;
	}
	b->ntensors = nt;
	for (j = 0; j < nt; j++) {
		pb->server[j] = AUTOSYNC_NO_SERVER;
		if (dupstr(
			&d,
			planner_ydoc_node(&d, tl->data.sequence.items.start[j]),
			"tensors", &pb->names[j], errp) < 0)
			goto fail;
	}
	if (b->kind == AUTOSYNC_SYNC_PS) {
		NEED(tl, "tensor_servers", bn);
		if (planner_yexpect(&d, tl, YAML_SEQUENCE_NODE,
				    "tensor_servers", errp) < 0)
			goto fail;
		if ((size_t)(tl->data.sequence.items.top -
			     tl->data.sequence.items.start) != nt) {
			errno = EINVAL;
			autosync_errprintf(errp,
					   "%s:%u: tensor_servers: %zu tensors "
					   "need %zu values",
					   d.fname, planner_ynode_line(tl), nt,
					   nt);
			goto fail;
		}
		for (j = 0; j < nt; j++) {
			int64_t sv;
			yaml_node_t *sn = planner_ydoc_node(
			    &d, tl->data.sequence.items.start[j]);
			if (planner_yget_i64(&d, sn, "tensor_servers", &sv,
					     errp) < 0)
				goto fail;
			if (sv < -1 || sv >= (int64_t)b->servers) {
				errno = EINVAL;
				autosync_errprintf(
				    errp,
				    "%s:%u: tensor_servers: '%s' is not -1 or "
				    "a server in [0, %u)",
				    d.fname, planner_ynode_line(sn),
				    planner_yscalar(sn), b->servers);
				goto fail;
			}
			pb->server[j] = (int)sv;
		}
	}
	return 0;
fail:
	return -1;
}

/* Every key of mapping 'map' is one of 'keys' (NULL-terminated); else
 * "FILE:LINE: <what>unknown key 'K'". */
static int known_keys(struct ydoc *d, yaml_node_t *map, const char *const *keys,
		      const char *what, autosync_error_t *errp)
{
	size_t n = 0;
	char where[64];

	while (keys[n])
		n++;
	/* "nccl: " -> "nccl" */
	snprintf(where, sizeof(where), "%.*s", (int)strcspn(what, ":"), what);
	return asi_ykeys_check(&d->doc, map, keys, n, d->fname, where, errp);
}

/* nccl: [{coll, min_bytes, max_bytes (absent = open), algorithm,
 * protocol, channels}], per collective sorted and disjoint */
static int parse_nccl(struct ydoc *dd, yaml_node_t *sq, autosync_plan_t *plan,
		      autosync_error_t *errp)
{
	static const char *const keys[] = {
	    "coll",	"min_bytes", "max_bytes", "algorithm",
	    "protocol", "channels",  NULL};
	struct ydoc d = *dd;
	uint64_t last[AUTOSYNC_NCCL_NFUNCS] = {0};
	yaml_node_t *n;
	size_t nr;

	if (planner_yexpect(&d, sq, YAML_SEQUENCE_NODE, "nccl", errp) < 0)
		return -1;
	nr = (size_t)(sq->data.sequence.items.top -
		      sq->data.sequence.items.start);
	if (nr > 4096) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "%s:%u: nccl: more than 4096 "
					  "rules",
					  d.fname, planner_ynode_line(sq));
	}
	free(plan->nccl);
	plan->nnccl = 0;
	if (!(plan->nccl = calloc(nr ? nr : 1, sizeof(*plan->nccl)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "plan: out of memory");
	}
	for (size_t i = 0; i < nr; i++) {
		yaml_node_t *rn =
		    planner_ydoc_node(&d, sq->data.sequence.items.start[i]);
		autosync_nccl_rule_t *r = &plan->nccl[i];
		uint64_t v;

		if (planner_yexpect(&d, rn, YAML_MAPPING_NODE, "nccl[]", errp) <
		    0)
			goto fail;
		if (known_keys(&d, rn, keys, "nccl: ", errp) < 0)
			goto fail;
		NEED(n, "coll", rn);
		if (enum_field(&d, n, "coll", autosync_nccl_func_from_name,
			       &r->func, errp) < 0)
			goto fail;
		NEED(n, "min_bytes", rn);
		if (planner_yget_u64(&d, n, "min_bytes", 0, UINT64_MAX - 1,
				     &r->min_bytes, errp) < 0)
			goto fail;
		r->max_bytes = UINT64_MAX;
		if ((n = planner_ymap_get(&d, rn, "max_bytes")) &&
		    planner_yget_u64(&d, n, "max_bytes", r->min_bytes + 1,
				     UINT64_MAX - 1, &r->max_bytes, errp) < 0)
			goto fail;
		NEED(n, "algorithm", rn);
		if (enum_field(&d, n, "algorithm", autosync_nccl_algo_from_name,
			       &r->algo, errp) < 0)
			goto fail;
		NEED(n, "protocol", rn);
		if (enum_field(&d, n, "protocol", autosync_nccl_proto_from_name,
			       &r->proto, errp) < 0)
			goto fail;
		NEED(n, "channels", rn);
		if (planner_yget_u64(&d, n, "channels", 0, 64, &v, errp) < 0)
			goto fail;
		r->channels = (unsigned)v;
		if (r->min_bytes < last[r->func]) {
			errno = EINVAL;
			autosync_errprintf(
			    errp,
			    "%s:%u: nccl: %s rule from %" PRIu64 " bytes "
			    "overlaps or precedes the one before it (to "
			    "%" PRIu64
			    "): rules of one collective must be sorted and "
			    "disjoint",
			    d.fname, planner_ynode_line(rn),
			    autosync_nccl_func_name(r->func), r->min_bytes,
			    last[r->func]);
			goto fail;
		}
		last[r->func] = r->max_bytes;
		plan->nnccl++;
	}
	return 0;
fail:
	return -1;
}

/* phase: the version and the stated hash */
static int read_version(struct ydoc *dd, yaml_node_t *root,
			autosync_plan_t *plan, const char **hash,
			autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *n;
	uint64_t v;

	if (!(n = planner_ymap_get(&d, root, "autosync_plan"))) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s: not an autosync plan (no 'autosync_plan: 2')",
		    d.fname);
	}
	if (planner_yget_u64(&d, n, "autosync_plan", 1, UINT64_MAX, &v, errp) <
	    0)
		return -1;
	if (v < 1 || v > AUTOSYNC_PLAN_VERSION) {
		errno = ENOTSUP;
		return autosync_errprintf(errp,
					  "%s:%u: plan format %" PRIu64
					  " is not supported (this autosync "
					  "reads 1 and %d)",
					  d.fname, planner_ynode_line(n), v,
					  AUTOSYNC_PLAN_VERSION);
	}
	plan->format = (unsigned)v;
	if ((n = planner_ymap_get(&d, root, "hash")) &&
	    planner_yget_str(&d, n, "hash", hash, errp) < 0)
		return -1;
	return 0;
}

/* phase: the cluster the plan was made for */
static int read_cluster(struct ydoc *dd, yaml_node_t *in, autosync_plan_t *plan,
			autosync_error_t *errp)
{
	struct ydoc d = *dd;
	autosync_cluster_t *c = &plan->s.cluster;
	yaml_node_t *n, *cl;
	const char *cls;
	uint64_t v;

	NEED(cl, "cluster", in);
	if (planner_yexpect(&d, cl, YAML_MAPPING_NODE, "cluster", errp) < 0)
		goto fail;
	NEED(n, "nodes", cl);
	if (planner_yget_u64(&d, n, "nodes", 1, 1000000, &v, errp) < 0)
		goto fail;
	c->nodes = (unsigned)v;
	NEED(n, "gpus_per_node", cl);
	if (planner_yget_u64(&d, n, "gpus_per_node", 1, 4096, &v, errp) < 0)
		goto fail;
	c->gpus_per_node = (unsigned)v;
	NEED(n, "intra_class", cl);
	if (planner_yget_str(&d, n, "intra_class", &cls, errp) < 0)
		goto fail;
	if ((c->intra_class = autosync_link_class_from_name(cls)) < 0) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "%s:%u: intra_class: unknown value '%s'",
				   d.fname, planner_ynode_line(n), cls);
		goto fail;
	}
	NEED(n, "intra_bw", cl);
	if (planner_yget_double(&d, n, "intra_bw", 0, 1e18, &c->intra_bw,
				errp) < 0)
		goto fail;
	NEED(n, "intra_lat", cl);
	if (planner_yget_double(&d, n, "intra_lat", 0, 10, &c->intra_lat,
				errp) < 0)
		goto fail;
	NEED(n, "nics_per_node", cl);
	if (planner_yget_u64(&d, n, "nics_per_node", 0, 1024, &v, errp) < 0)
		goto fail;
	c->nics_per_node = (unsigned)v;
	NEED(n, "nic_bw", cl);
	if (planner_yget_double(&d, n, "nic_bw", 0, 1e18, &c->nic_bw, errp) < 0)
		goto fail;
	NEED(n, "inter_lat", cl);
	if (planner_yget_double(&d, n, "inter_lat", 0, 10, &c->inter_lat,
				errp) < 0)
		goto fail;
	NEED(n, "nodes_per_switch", cl);
	if (planner_yget_u64(&d, n, "nodes_per_switch", 0, 1000000, &v, errp) <
	    0)
		goto fail;
	c->nodes_per_switch = (unsigned)v;
	snprintf(c->topo_hash, sizeof(c->topo_hash), "%s", plan->topo_hash);
	return 0;
fail:
	return -1;
}

/* phase: what the plan was made from */
static int read_inputs(struct ydoc *dd, yaml_node_t *root,
		       autosync_plan_t *plan, autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *n, *in;
	uint64_t v;

	NEED(in, "inputs", root);
	if (planner_yexpect(&d, in, YAML_MAPPING_NODE, "inputs", errp) < 0)
		goto fail;
	NEED(n, "model", in);
	if (dupstr(&d, n, "model", &plan->model, errp) < 0)
		goto fail;
	NEED(n, "model_hash", in);
	if (dupstr(&d, n, "model_hash", &plan->model_hash, errp) < 0)
		goto fail;
	NEED(n, "batch_size", in);
	if (planner_yget_u64(&d, n, "batch_size", 1, 1u << 24, &v, errp) < 0)
		goto fail;
	plan->s.batch = (unsigned)v;
	NEED(n, "framework", in);
	if (dupstr(&d, n, "framework", &plan->framework, errp) < 0)
		goto fail;
	if (autosync_framework_from_name(plan->framework) < 0) {
		errno = EINVAL;
		autosync_errprintf(errp, "%s:%u: framework: unknown value '%s'",
				   d.fname, planner_ynode_line(n),
				   plan->framework);
		goto fail;
	}
	NEED(n, "topology_hash", in);
	if (dupstr(&d, n, "topology_hash", &plan->topo_hash, errp) < 0)
		goto fail;
	if ((n = planner_ymap_get(&d, in, "costs_hash")) &&
	    dupstr(&d, n, "costs_hash", &plan->costs_hash, errp) < 0)
		goto fail;
	return read_cluster(dd, in, plan, errp);
fail:
	return -1;
}

/* phase: the decisions made for the whole job */
static int read_job(struct ydoc *dd, yaml_node_t *root, autosync_plan_t *plan,
		    autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *n, *job;

	NEED(n, "strategy", root);
	if (dupstr(&d, n, "strategy", &plan->strategy, errp) < 0)
		goto fail;
	NEED(n, "reason", root);
	if (dupstr(&d, n, "reason", &plan->reason, errp) < 0)
		goto fail;
	NEED(job, "job", root);
	if (planner_yexpect(&d, job, YAML_MAPPING_NODE, "job", errp) < 0)
		goto fail;
	NEED(n, "nccl_algo", job);
	if (enum_field(&d, n, "nccl_algo", autosync_algo_from_name,
		       &plan->s.job_algo, errp) < 0)
		goto fail;
	NEED(n, "compression", job);
	if (enum_field(&d, n, "compression", autosync_compress_from_name,
		       &plan->s.job_compress, errp) < 0)
		goto fail;
	NEED(n, "bucket_cap_bytes", job);
	if (planner_yget_double(&d, n, "bucket_cap_bytes", 0, 1e18,
				&plan->s.bucket_cap, errp) < 0)
		goto fail;
	NEED(n, "first_bucket_bytes", job);
	if (planner_yget_double(&d, n, "first_bucket_bytes", 0, 1e18,
				&plan->s.first_bucket, errp) < 0)
		goto fail;
	NEED(n, "cycle_time", job);
	if (planner_yget_double(&d, n, "cycle_time", 0, 10, &plan->s.cycle_time,
				errp) < 0)
		goto fail;
	if ((n = planner_ymap_get(&d, job, "nccl_calibrate")) &&
	    planner_yget_bool(&d, n, "nccl_calibrate", &plan->s.nccl_calibrate,
			      errp) < 0)
		goto fail;
	return 0;
fail:
	return -1;
}

/* phase: the predicted times of the plan and of every baseline */
static int read_prediction(struct ydoc *dd, yaml_node_t *root,
			   autosync_plan_t *plan, autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *n, *pr, *sq;

	NEED(pr, "prediction", root);
	if (planner_yexpect(&d, pr, YAML_MAPPING_NODE, "prediction", errp) < 0)
		goto fail;
	{
		static const char *const pf[] = {
		    "step_time", "forward",	  "backward",
		    "optimizer", "communication", "exposed_communication",
		    "bound"};
		double *dst[] = {&plan->s.step_time, &plan->s.fwd_time,
				 &plan->s.bwd_time,  &plan->s.opt_time,
				 &plan->s.comm_time, &plan->s.exposed_comm,
				 &plan->s.bound};
		for (int i = 0; i < 7; i++) {
			NEED(n, pf[i], pr);
			if (planner_yget_double(&d, n, pf[i], 0, 1e300, dst[i],
						errp) < 0)
				goto fail;
		}
	}
	NEED(sq, "baselines", root);
	if (planner_yexpect(&d, sq, YAML_SEQUENCE_NODE, "baselines", errp) < 0)
		goto fail;
	{
		size_t nbase = (size_t)(sq->data.sequence.items.top -
					sq->data.sequence.items.start);
		if (nbase &&
		    !(plan->base = calloc(nbase, sizeof(*plan->base)))) {
			errno = ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < nbase; i++) {
			yaml_node_t *bn = planner_ydoc_node(
			    &d, sq->data.sequence.items.start[i]);
			if (planner_yexpect(&d, bn, YAML_MAPPING_NODE,
					    "baselines[]", errp) < 0)
				goto fail;
			plan->nbase++;
			NEED(n, "name", bn);
			if (dupstr(&d, n, "name", (char **)&plan->base[i].name,
				   errp) < 0)
				goto fail;
			NEED(n, "step_time", bn);
			if (planner_yget_double(&d, n, "step_time", 0, 1e300,
						&plan->base[i].step_time,
						errp) < 0)
				goto fail;
			NEED(n, "applicable", bn);
			if (planner_yget_bool(&d, n, "applicable",
					      &plan->base[i].applicable,
					      errp) < 0)
				goto fail;
		}
	}
	return 0;
fail:
	return -1;
}

/* phase: the variables the plan sets, and those it left to the user */
static int read_env(struct ydoc *dd, yaml_node_t *root, autosync_plan_t *plan,
		    autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *n;

	NEED(n, "env", root);
	if (planner_yexpect(&d, n, YAML_MAPPING_NODE, "env", errp) < 0)
		goto fail;
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		const char *k, *val;
		if (planner_yget_str(&d, planner_ydoc_node(&d, p->key),
				     "env name", &k, errp) < 0 ||
		    planner_yget_str(&d, planner_ydoc_node(&d, p->value),
				     "env value", &val, errp) < 0)
			goto fail;
		/* a shared plan file must not run code in the jobs using it */
		if (!autosync_plan_env_allowed(k)) {
			char q[96];
			errno = EPERM;
			autosync_errprintf(
			    errp,
			    "%s:%u: env: '%s' is not a variable a plan may "
			    "set (NCCL_*, AUTOSYNC_*, HOROVOD_*; no plugin or "
			    "configuration file)",
			    d.fname,
			    planner_ynode_line(planner_ydoc_node(&d, p->key)),
			    asi_quote(k, q, sizeof(q)));
			goto fail;
		}
		if (planner_plan_add_env(plan, k, val) < 0) {
			errno = ENOMEM;
			goto fail;
		}
	}
	if ((n = planner_ymap_get(&d, root, "skipped_env"))) {
		const char *names[256];
		size_t nn = 0;
		if (planner_yexpect(&d, n, YAML_SEQUENCE_NODE, "skipped_env",
				    errp) < 0)
			goto fail;
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++) {
			if (nn == sizeof(names) / sizeof(names[0])) {
				errno = EINVAL;
				autosync_errprintf(errp,
						   "%s: skipped_env: more "
						   "than 256 names",
						   d.fname);
				goto fail;
			}
			if (planner_yget_str(&d, planner_ydoc_node(&d, *it),
					     "skipped_env", &names[nn++],
					     errp) < 0)
				goto fail;
		}
		if (autosync_plan_set_skipped_env(plan, names, nn, errp) < 0)
			goto fail;
	}
	return 0;
fail:
	return -1;
}

/* phase: the buckets */
static int read_buckets(struct ydoc *dd, yaml_node_t *root,
			autosync_plan_t *plan, autosync_error_t *errp)
{
	struct ydoc d = *dd;
	yaml_node_t *sq;

	NEED(sq, "buckets", root);
	if (planner_yexpect(&d, sq, YAML_SEQUENCE_NODE, "buckets", errp) < 0)
		goto fail;
	{
		size_t nb = (size_t)(sq->data.sequence.items.top -
				     sq->data.sequence.items.start);
		if (!(plan->b = calloc(nb ? nb : 1, sizeof(*plan->b)))) {
			errno = ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < nb; i++) {
			plan->nb++;
			if (parse_bucket(
				&d,
				planner_ydoc_node(
				    &d, sq->data.sequence.items.start[i]),
				&plan->b[i], i, errp) < 0)
				goto fail;
		}
	}
	return 0;
fail:
	return -1;
}

/* phase: the stated hash must be the decisions' own */
static int check_hash(struct ydoc *d, yaml_node_t *root, autosync_plan_t *plan,
		      const char *hash, autosync_error_t *errp)
{
	planner_plan_sync(plan);
	planner_plan_compute_hash(plan);
	if (!hash || !strcmp(hash, plan->hash))
		return 0;
	errno = EINVAL;
	return autosync_errprintf(
	    errp,
	    "%s:%u: hash: '%s' does not match the plan's decisions (%s): "
	    "edited by hand? delete the hash line to accept the edit",
	    d->fname, planner_ynode_line(planner_ymap_get(d, root, "hash")),
	    hash, plan->hash);
}

autosync_plan_t *autosync_plan_parse(const char *buf, size_t len,
				     const char *fname, autosync_error_t *errp)
{
	static const char *const top[] = {
	    "autosync_plan", "hash",	   "inputs",	"strategy", "reason",
	    "job",	     "prediction", "baselines", "env",	    "buckets",
	    "skipped_env",   "nccl",	   NULL};
	struct ydoc d;
	autosync_plan_t *plan = NULL;
	yaml_node_t *root, *sq;
	const char *hash = NULL;
	int saved;

	if (planner_ydoc_load(&d, buf, len, fname, errp) < 0)
		return NULL;
	if (!(plan = calloc(1, sizeof(*plan)))) {
		errno = ENOMEM;
		autosync_errprintf(errp, "plan: out of memory");
		goto fail;
	}
	root = planner_ydoc_root(&d);
	if (planner_yexpect(&d, root, YAML_MAPPING_NODE, "plan file", errp) <
		0 ||
	    known_keys(&d, root, top, "", errp) < 0 ||
	    read_version(&d, root, plan, &hash, errp) < 0 ||
	    read_inputs(&d, root, plan, errp) < 0 ||
	    read_job(&d, root, plan, errp) < 0 ||
	    read_prediction(&d, root, plan, errp) < 0 ||
	    read_env(&d, root, plan, errp) < 0 ||
	    ((sq = planner_ymap_get(&d, root, "nccl")) &&
	     parse_nccl(&d, sq, plan, errp) < 0) ||
	    read_buckets(&d, root, plan, errp) < 0 ||
	    check_hash(&d, root, plan, hash, errp) < 0)
		goto fail;
	planner_ydoc_free(&d);
	return plan;
fail:
	saved = errno ? errno : EINVAL;
	autosync_plan_destroy(plan);
	planner_ydoc_free(&d);
	errno = saved;
	return NULL;
}

autosync_plan_t *autosync_plan_load(const char *path, autosync_error_t *errp)
{
	char *buf = NULL;
	size_t len;
	autosync_plan_t *p;
	int saved;

	if (planner_read_file(path, &buf, &len, errp) < 0)
		return NULL;
	p = autosync_plan_parse(buf, len, path, errp);
	saved = errno;
	free(buf);
	errno = saved;
	return p;
}
