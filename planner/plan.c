/* plan.c - plans: construction from a simulated strategy, accessors, the
 * versioned YAML writer and reader, the hash, and the SVG timeline. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MiB (1024.0 * 1024.0)

static const char *const link_names[AUTOSYNC_LINK_NCLASSES] = {
    "nvlink", "pcie_switch", "host_bridge", "cross_socket", "net",
};

static const char *link_name(int c)
{
	return c >= 0 && c < AUTOSYNC_LINK_NCLASSES ? link_names[c] : "unknown";
}

static int link_from_name(const char *s)
{
	for (int i = 0; i < AUTOSYNC_LINK_NCLASSES; i++)
		if (!strcmp(s, link_names[i]))
			return i;
	return -1;
}

/* FNV-1a 64 of the cost constants (which calibration made the plan) */
static char *costs_hash(const autosync_costs_t *k)
{
	const double *v = (const double *)k;
	uint64_t h = FNV_OFFSET;
	char buf[40], *r;

	for (size_t i = 0; i < sizeof(*k) / sizeof(double); i++) {
		snprintf(buf, sizeof(buf), "%.17g", v[i]);
		h = fnv1a(h, buf, strlen(buf) + 1);
	}
	if ((r = malloc(17)))
		snprintf(r, 17, "%016" PRIx64, h);
	return r;
}

/* ------------------------------------------------------------ lifecycle */
void autosync_plan_destroy(autosync_plan_t *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->nb; i++) {
		for (size_t j = 0; j < plan->b[i].b.ntensors; j++)
			free(plan->b[i].names[j]);
		free(plan->b[i].names);
		free(plan->b[i].server);
	}
	free(plan->b);
	for (size_t i = 0; i < plan->nbase; i++)
		free((char *)plan->base[i].name);
	free(plan->base);
	for (size_t i = 0; i < plan->nenv; i++) {
		free((char *)plan->env[i].name);
		free((char *)plan->env[i].value);
	}
	free(plan->env);
	for (size_t i = 0; i < plan->nskipped; i++)
		free(plan->skipped[i]);
	free(plan->skipped);
	free(plan->model);
	free(plan->model_hash);
	free(plan->framework);
	free(plan->strategy);
	free(plan->reason);
	free(plan->topo_hash);
	free(plan->costs_hash);
	free(plan->nccl);
	free(plan);
}

static void sync_summary(autosync_plan_t *plan)
{
	plan->s.model = plan->model;
	plan->s.model_hash = plan->model_hash;
	plan->s.framework = plan->framework;
	plan->s.strategy = plan->strategy;
	plan->s.reason = plan->reason;
	plan->s.topo_hash = plan->topo_hash;
	plan->s.costs_hash = plan->costs_hash ? plan->costs_hash : "";
	for (size_t i = 0; i < plan->nb; i++) {
		plan->b[i].b.tensors = (const char *const *)plan->b[i].names;
		plan->b[i].b.server = plan->b[i].server;
	}
}

int planner_plan_add_env(autosync_plan_t *plan, const char *name,
			 const char *value)
{
	plan_env_t *ne = realloc(plan->env, (plan->nenv + 1) * sizeof(*ne));
	char *n, *v;

	if (!ne)
		return -1;
	plan->env = ne;
	n = planner_xstrdup(name);
	v = planner_xstrdup(value);
	if (!n || !v) {
		free(n);
		free(v);
		return -1;
	}
	ne[plan->nenv].name = n;
	ne[plan->nenv].value = v;
	plan->nenv++;
	return 0;
}

static const char *nccl_algo_env(int a)
{
	switch (a) {
	case AUTOSYNC_ALGO_RING:
		return "Ring";
	case AUTOSYNC_ALGO_TREE:
		return "Tree";
	default:
		return NULL;
	}
}

void planner_plan_set_env(const struct simctx *x, const struct strategy *s,
			  autosync_plan_t *plan)
{
	char v[64];
	int algo = -1, mixed = 0;

	for (size_t b = 0; b < plan->nb; b++) {
		if (plan->b[b].b.kind != AUTOSYNC_SYNC_ALLREDUCE)
			continue;
		if (algo < 0)
			algo = plan->b[b].b.algo;
		else if (algo != plan->b[b].b.algo)
			mixed = 1;
	}
	if (!mixed && algo >= 0 && nccl_algo_env(algo))
		planner_plan_add_env(plan, "NCCL_ALGO", nccl_algo_env(algo));
	switch (x->fw) {
	case AUTOSYNC_FW_PYTORCH_DDP:
		/* always explicit: 0 / 0 = one bucket per tensor */
		snprintf(v, sizeof(v), "%.9g", s->bucket_cap / MiB);
		planner_plan_add_env(plan, "AUTOSYNC_DDP_BUCKET_CAP_MB", v);
		snprintf(v, sizeof(v), "%.9g", s->first_bucket / MiB);
		planner_plan_add_env(plan, "AUTOSYNC_DDP_FIRST_BUCKET_MB", v);
		planner_plan_add_env(plan, "AUTOSYNC_DDP_COMM_HOOK",
				     autosync_compress_name(s->job_compress));
		break;
	case AUTOSYNC_FW_HOROVOD:
		/* always explicit: 0 / 0 = no fusion, no cycle wait */
		snprintf(v, sizeof(v), "%.0f", s->bucket_cap);
		planner_plan_add_env(plan, "HOROVOD_FUSION_THRESHOLD", v);
		snprintf(v, sizeof(v), "%.9g", s->cycle * 1e3);
		planner_plan_add_env(plan, "HOROVOD_CYCLE_TIME", v);
		if (!mixed && algo == AUTOSYNC_ALGO_HIER)
			planner_plan_add_env(
			    plan, "HOROVOD_HIERARCHICAL_ALLREDUCE", "1");
		if (s->job_compress != AUTOSYNC_COMPRESS_NONE)
			planner_plan_add_env(
			    plan, "AUTOSYNC_HOROVOD_COMPRESSION",
			    autosync_compress_name(s->job_compress));
		break;
	default:
		break;
	}
}

autosync_plan_t *planner_plan_from_strategy(const struct simctx *x,
					    const struct strategy *s,
					    const struct simres *r,
					    const char *reason,
					    autosync_error_t *errp)
{
	autosync_plan_t *plan = calloc(1, sizeof(*plan));
	const autosync_model_t *m = x->m;
	size_t nb = 0;

	if (!plan)
		goto nomem;
	for (size_t b = 0; b < r->nb; b++)
		if (r->cnt[b])
			nb++;
	if (!(plan->b = calloc(nb ? nb : 1, sizeof(*plan->b))))
		goto nomem;
	for (size_t o = 0; o < r->nb; o++) {
		size_t b = r->border[o], n = r->cnt[b];
		struct plan_bucket *pb;
		if (!n)
			continue;
		pb = &plan->b[plan->nb];
		if (!(pb->names = calloc(n, sizeof(char *))) ||
		    !(pb->server = calloc(n, sizeof(int))))
			goto nomem_b;
		pb->b.ntensors = n;
		plan->nb++;
		for (size_t j = 0; j < n; j++) {
			size_t t = r->list[r->first[b] + j];
			if (!(pb->names[j] = planner_xstrdup(m->t[t].name)))
				goto nomem;
			pb->server[j] = s->cfg[b].kind == AUTOSYNC_SYNC_PS
					    ? s->server[t]
					    : AUTOSYNC_NO_SERVER;
		}
		pb->b.id = (unsigned)(plan->nb - 1);
		pb->b.kind = s->cfg[b].kind;
		pb->b.algo = s->cfg[b].algo;
		pb->b.compress = s->cfg[b].compress;
		pb->b.servers =
		    s->cfg[b].kind == AUTOSYNC_SYNC_PS ? s->cfg[b].servers : 0;
		pb->b.local_agg = s->cfg[b].kind == AUTOSYNC_SYNC_PS
				      ? s->cfg[b].local_agg
				      : 0;
		pb->b.local_repl = s->cfg[b].kind == AUTOSYNC_SYNC_PS
				       ? s->cfg[b].local_repl
				       : 0;
		/* recorded only where it matters: a bucket with a sparse one */
		pb->b.densify = 0;
		if (s->cfg[b].kind != AUTOSYNC_SYNC_PS && s->cfg[b].densify)
			for (size_t j = 0; j < n; j++)
				if (m->t[r->list[r->first[b] + j]].sparse)
					pb->b.densify = 1;
		pb->b.bytes = r->bytes[b];
		pb->b.wire_bytes = r->wire[b];
		pb->b.ready = r->ready[b];
		pb->b.start = r->start[b];
		pb->b.end = r->end[b];
		pb->b.comm = r->comm[b];
		continue;
	nomem_b:
		free(pb->names);
		free(pb->server);
		pb->names = NULL;
		pb->server = NULL;
		goto nomem;
	}
	if (!(plan->model = planner_xstrdup(m->name)) ||
	    !(plan->model_hash = planner_xstrdup(autosync_model_hash(m))) ||
	    !(plan->framework =
		  planner_xstrdup(autosync_framework_name(x->fw))) ||
	    !(plan->strategy = planner_xstrdup(s->name)) ||
	    !(plan->reason = planner_xstrdup(reason)) ||
	    !(plan->topo_hash = planner_xstrdup(x->c.topo_hash)) ||
	    !(plan->costs_hash = costs_hash(&x->k)))
		goto nomem;
	plan->s.cluster = x->c;
	plan->s.batch = m->batch;
	plan->s.job_algo = s->job_algo;
	plan->s.job_compress = s->job_compress;
	plan->s.bucket_cap = s->bucket_cap;
	plan->s.first_bucket = s->first_bucket;
	plan->s.cycle_time = s->cycle;
	plan->s.step_time = r->step;
	plan->s.fwd_time = x->t_fwd;
	plan->s.bwd_time = x->t_bwd;
	plan->s.opt_time = x->t_opt;
	plan->s.comm_time = r->comm_total;
	plan->s.exposed_comm = r->step - (x->t_fwd + x->t_bwd + x->t_opt);
	if (plan->s.exposed_comm < 0)
		plan->s.exposed_comm = 0;
	plan->s.bound = r->bound;
	sync_summary(plan);
	planner_plan_set_env(x, s, plan);
	sync_summary(plan);
	if (planner_plan_compute_hash(plan) < 0)
		goto nomem;
	return plan;
nomem:
	autosync_plan_destroy(plan);
	errno = ENOMEM;
	autosync_errprintf(errp, "planner: out of memory");
	return NULL;
}

/* ------------------------------------------------------------ accessors */
int autosync_plan_summary(const autosync_plan_t *plan,
			  autosync_plan_summary_t *s)
{
	if (!plan || !s) {
		errno = EINVAL;
		return -1;
	}
	*s = plan->s;
	return 0;
}

const autosync_bucket_t *autosync_plan_bucket(const autosync_plan_t *plan,
					      size_t i)
{
	if (!plan || i >= plan->nb) {
		errno = EINVAL;
		return NULL;
	}
	return &plan->b[i].b;
}

size_t autosync_plan_nbuckets(const autosync_plan_t *plan)
{
	return plan ? plan->nb : 0;
}

size_t autosync_plan_nbaselines(const autosync_plan_t *plan)
{
	return plan ? plan->nbase : 0;
}

const autosync_plan_baseline_t *
autosync_plan_baseline(const autosync_plan_t *plan, size_t i)
{
	return plan && i < plan->nbase ? &plan->base[i] : NULL;
}

size_t autosync_plan_nenv(const autosync_plan_t *plan)
{
	return plan ? plan->nenv : 0;
}

const autosync_var_t *autosync_plan_env(const autosync_plan_t *plan, size_t i)
{
	return plan && i < plan->nenv ? &plan->env[i] : NULL;
}

const char *autosync_plan_hash(const autosync_plan_t *plan)
{
	return plan ? plan->hash : NULL;
}

/* the hash covers the decisions: job settings, buckets, env, NCCL table */
int planner_plan_compute_hash(autosync_plan_t *plan)
{
	uint64_t h = FNV_OFFSET;
	char buf[256];

	snprintf(buf, sizeof(buf), "v%d %s %s %d %d %.0f %.0f %.9g",
		 AUTOSYNC_PLAN_VERSION,
		 plan->model_hash ? plan->model_hash : "",
		 plan->framework ? plan->framework : "", plan->s.job_algo,
		 plan->s.job_compress, plan->s.bucket_cap, plan->s.first_bucket,
		 plan->s.cycle_time);
	h = fnv1a(h, buf, strlen(buf) + 1);
	for (size_t i = 0; i < plan->nb; i++) {
		const autosync_bucket_t *b = &plan->b[i].b;
		snprintf(buf, sizeof(buf), "b %d %d %d %u %d %d %d %zu",
			 b->kind, b->algo, b->compress, b->servers,
			 b->local_agg, b->local_repl, b->densify, b->ntensors);
		h = fnv1a(h, buf, strlen(buf) + 1);
		for (size_t j = 0; j < b->ntensors; j++) {
			h = fnv1a(h, plan->b[i].names[j],
				  strlen(plan->b[i].names[j]) + 1);
			h = fnv1a(h, &plan->b[i].server[j], sizeof(int));
		}
	}
	for (size_t i = 0; i < plan->nenv; i++) {
		h = fnv1a(h, plan->env[i].name, strlen(plan->env[i].name) + 1);
		h = fnv1a(h, plan->env[i].value,
			  strlen(plan->env[i].value) + 1);
	}
	if (plan->s.nccl_calibrate) /* hashed only when set: older plans keep theirs */
		h = fnv1a(h, "nccl_calibrate", sizeof("nccl_calibrate"));
	for (size_t i = 0; i < plan->nnccl; i++) {
		const autosync_nccl_rule_t *r = &plan->nccl[i];
		snprintf(buf, sizeof(buf),
			 "n %d %d %d %u %" PRIu64 " %" PRIu64, r->func, r->algo,
			 r->proto, r->channels, r->min_bytes, r->max_bytes);
		h = fnv1a(h, buf, strlen(buf) + 1);
	}
	snprintf(plan->hash, sizeof(plan->hash), "%016" PRIx64, h);
	return 0;
}

/* ------------------------------------------------------------ writer */
static void wq(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c;
	     c++) {
		if (*c == '"' || *c == '\\')
			fprintf(fp, "\\%c", *c);
		else if (*c == '\n')
			fputs("\\n", fp);
		else if (*c == '\t')
			fputs("\\t", fp);
		else if (*c < 0x20 || *c == 0x7f)
			fprintf(fp, "\\x%02x", *c);
		else
			fputc(*c, fp);
	}
	fputc('"', fp);
}

int autosync_plan_write(const autosync_plan_t *plan, FILE *fp,
			autosync_error_t *errp)
{
	const autosync_plan_summary_t *s;
	const autosync_cluster_t *c;

	if (!plan || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp, "plan_write: invalid argument");
	}
	s = &plan->s;
	c = &s->cluster;
	fprintf(fp, "# autosync plan; format: docs/plan-format.md "
		    "(autosync-plan(5))\n");
	fprintf(fp, "autosync_plan: %d\n", AUTOSYNC_PLAN_VERSION);
	fprintf(fp, "hash: \"%s\"\n", plan->hash);
	fprintf(fp, "inputs:\n  model: ");
	wq(fp, plan->model);
	fprintf(fp, "\n  model_hash: ");
	wq(fp, plan->model_hash);
	fprintf(fp, "\n  batch_size: %u\n  framework: ", s->batch);
	wq(fp, plan->framework);
	fprintf(fp, "\n  topology_hash: ");
	wq(fp, plan->topo_hash);
	if (plan->costs_hash && *plan->costs_hash) {
		fprintf(fp, "\n  costs_hash: ");
		wq(fp, plan->costs_hash);
	}
	fprintf(fp, "\n  cluster:\n");
	fprintf(fp,
		"    nodes: %u\n    gpus_per_node: %u\n    intra_class: %s\n",
		c->nodes, c->gpus_per_node, link_name(c->intra_class));
	fprintf(
	    fp,
	    "    intra_bw: %.9g\n    intra_lat: %.9g\n    nics_per_node: %u\n",
	    c->intra_bw, c->intra_lat, c->nics_per_node);
	fprintf(
	    fp,
	    "    nic_bw: %.9g\n    inter_lat: %.9g\n    nodes_per_switch: %u\n",
	    c->nic_bw, c->inter_lat, c->nodes_per_switch);
	fprintf(fp, "strategy: ");
	wq(fp, plan->strategy);
	fprintf(fp, "\nreason: ");
	wq(fp, plan->reason);
	fprintf(fp, "\njob:\n  nccl_algo: %s\n  compression: %s\n",
		autosync_algo_name(s->job_algo),
		autosync_compress_name(s->job_compress));
	fprintf(fp,
		"  bucket_cap_bytes: %.0f\n  first_bucket_bytes: %.0f\n"
		"  cycle_time: %.9g\n",
		s->bucket_cap, s->first_bucket, s->cycle_time);
	if (s->nccl_calibrate)
		fprintf(fp, "  nccl_calibrate: true\n");
	fprintf(fp,
		"prediction:\n  step_time: %.9g\n  forward: %.9g\n  backward: "
		"%.9g\n"
		"  optimizer: %.9g\n  communication: %.9g\n"
		"  exposed_communication: %.9g\n  bound: %.9g\n",
		s->step_time, s->fwd_time, s->bwd_time, s->opt_time,
		s->comm_time, s->exposed_comm, s->bound);
	fprintf(fp, "baselines:%s\n", plan->nbase ? "" : " []");
	for (size_t i = 0; i < plan->nbase; i++) {
		fprintf(fp, "  - {name: ");
		wq(fp, plan->base[i].name);
		fprintf(fp, ", step_time: %.9g, applicable: %s}\n",
			plan->base[i].step_time,
			plan->base[i].applicable ? "true" : "false");
	}
	fprintf(fp, "env:%s\n", plan->nenv ? "" : " {}");
	for (size_t i = 0; i < plan->nenv; i++) {
		fprintf(fp, "  ");
		wq(fp, plan->env[i].name);
		fprintf(fp, ": ");
		wq(fp, plan->env[i].value);
		fputc('\n', fp);
	}
	if (plan->nskipped) {
		fprintf(fp, "skipped_env:\n");
		for (size_t i = 0; i < plan->nskipped; i++) {
			fprintf(fp, "  - ");
			wq(fp, plan->skipped[i]);
			fputc('\n', fp);
		}
	}
	if (plan->nnccl) {
		fprintf(fp, "nccl:\n");
		for (size_t i = 0; i < plan->nnccl; i++) {
			const autosync_nccl_rule_t *r = &plan->nccl[i];
			fprintf(fp, "  - {coll: %s, min_bytes: %" PRIu64,
				autosync_nccl_func_name(r->func), r->min_bytes);
			if (r->max_bytes != UINT64_MAX)
				fprintf(fp, ", max_bytes: %" PRIu64,
					r->max_bytes);
			fprintf(fp,
				", algorithm: %s, protocol: %s, channels: %u}\n",
				autosync_nccl_algo_name(r->algo),
				autosync_nccl_proto_name(r->proto),
				r->channels);
		}
	}
	fprintf(fp, "buckets:%s\n", plan->nb ? "" : " []");
	for (size_t i = 0; i < plan->nb; i++) {
		const autosync_bucket_t *b = &plan->b[i].b;
		fprintf(fp, "  - id: %u\n    kind: %s\n", b->id,
			b->kind == AUTOSYNC_SYNC_PS ? "ps" : "allreduce");
		if (b->kind == AUTOSYNC_SYNC_PS)
			fprintf(fp,
				"    servers: %u\n    local_aggregation: %s\n"
				"    local_replication: %s\n",
				b->servers, b->local_agg ? "true" : "false",
				b->local_repl ? "true" : "false");
		else
			fprintf(fp,
				"    algorithm: %s\n    compression: %s\n%s",
				autosync_algo_name(b->algo),
				autosync_compress_name(b->compress),
				b->densify ? "    densify: true\n" : "");
		fprintf(fp, "    bytes: %.0f\n    wire_bytes: %.0f\n", b->bytes,
			b->wire_bytes);
		fprintf(fp, "    ready: %.9g\n    start: %.9g\n    end: %.9g\n",
			b->ready, b->start, b->end);
		fprintf(fp, "    tensors: [");
		for (size_t j = 0; j < b->ntensors; j++) {
			if (j)
				fputs(", ", fp);
			wq(fp, plan->b[i].names[j]);
		}
		fprintf(fp, "]\n");
		if (b->kind == AUTOSYNC_SYNC_PS) {
			fprintf(fp, "    tensor_servers: [");
			for (size_t j = 0; j < b->ntensors; j++)
				fprintf(fp, "%s%d", j ? ", " : "",
					plan->b[i].server[j]);
			fprintf(fp, "]\n");
		}
	}
	if (ferror(fp)) {
		errno = EIO;
		return autosync_errprintf(errp, "plan_write: write error");
	}
	return 0;
}

/* ------------------------------------------------------------ reader */
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
static int known_keys(struct ydoc *d, yaml_node_t *map,
		      const char *const *keys, const char *what,
		      autosync_error_t *errp)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = planner_ydoc_node(d, p->key);
		const char *k = planner_yscalar(kn);
		int found = 0;
		for (size_t i = 0; k && keys[i]; i++)
			found |= !strcmp(k, keys[i]);
		if (!found) {
			errno = EINVAL;
			return autosync_errprintf(errp, "%s:%u: %sunknown key '%s'",
						  d->fname,
						  planner_ynode_line(kn), what,
						  k ? k : "?");
		}
	}
	return 0;
}

/* nccl: [{coll, min_bytes, max_bytes (absent = open), algorithm,
 * protocol, channels}], per collective sorted and disjoint */
static int parse_nccl(struct ydoc *dd, yaml_node_t *sq, autosync_plan_t *plan,
		      autosync_error_t *errp)
{
	static const char *const keys[] = {"coll",     "min_bytes",
					   "max_bytes", "algorithm",
					   "protocol", "channels", NULL};
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
		return autosync_errprintf(errp, "%s:%u: nccl: more than 4096 "
					  "rules", d.fname,
					  planner_ynode_line(sq));
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

		if (planner_yexpect(&d, rn, YAML_MAPPING_NODE, "nccl[]",
				    errp) < 0)
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
			    "overlaps or precedes the one before it (to %" PRIu64
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

autosync_plan_t *autosync_plan_parse(const char *buf, size_t len,
				     const char *fname, autosync_error_t *errp)
{
	static const char *const top[] = {
	    "autosync_plan", "hash",	  "inputs", "strategy", "reason", "job",
	    "prediction",    "baselines", "env",    "buckets",	"skipped_env",
	    "nccl",	     NULL};
	struct ydoc d;
	autosync_plan_t *plan = NULL;
	yaml_node_t *root, *n, *in, *cl, *job, *pr, *sq;
	uint64_t v;
	const char *hash = NULL, *s;
	int saved;

	if (planner_ydoc_load(&d, buf, len, fname, errp) < 0)
		return NULL;
	if (!(plan = calloc(1, sizeof(*plan)))) {
		errno = ENOMEM;
		autosync_errprintf(errp, "plan: out of memory");
		goto fail;
	}
	root = planner_ydoc_root(&d);
	if (planner_yexpect(&d, root, YAML_MAPPING_NODE, "plan file", errp) < 0)
		goto fail;
	if (known_keys(&d, root, top, "", errp) < 0)
		goto fail;
	if (!(n = planner_ymap_get(&d, root, "autosync_plan"))) {
		errno = EINVAL;
		autosync_errprintf(
		    errp, "%s: not an autosync plan (no 'autosync_plan: 1')",
		    d.fname);
		goto fail;
	}
	if (planner_yget_u64(&d, n, "autosync_plan", 1, UINT64_MAX, &v, errp) <
	    0)
		goto fail;
	if (v != AUTOSYNC_PLAN_VERSION) {
		errno = ENOTSUP;
		autosync_errprintf(errp,
				   "%s:%u: plan format %" PRIu64
				   " is not supported (this autosync reads %d)",
				   d.fname, planner_ynode_line(n), v,
				   AUTOSYNC_PLAN_VERSION);
		goto fail;
	}
	if ((n = planner_ymap_get(&d, root, "hash")) &&
	    planner_yget_str(&d, n, "hash", &hash, errp) < 0)
		goto fail;
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
	NEED(cl, "cluster", in);
	if (planner_yexpect(&d, cl, YAML_MAPPING_NODE, "cluster", errp) < 0)
		goto fail;
	{
		autosync_cluster_t *c = &plan->s.cluster;
		const char *cls;
		NEED(n, "nodes", cl);
		if (planner_yget_u64(&d, n, "nodes", 1, 1000000, &v, errp) < 0)
			goto fail;
		c->nodes = (unsigned)v;
		NEED(n, "gpus_per_node", cl);
		if (planner_yget_u64(&d, n, "gpus_per_node", 1, 4096, &v,
				     errp) < 0)
			goto fail;
		c->gpus_per_node = (unsigned)v;
		NEED(n, "intra_class", cl);
		if (planner_yget_str(&d, n, "intra_class", &cls, errp) < 0)
			goto fail;
		if ((c->intra_class = link_from_name(cls)) < 0) {
			errno = EINVAL;
			autosync_errprintf(
			    errp, "%s:%u: intra_class: unknown value '%s'",
			    d.fname, planner_ynode_line(n), cls);
			goto fail;
		}
		NEED(n, "intra_bw", cl);
		if (planner_yget_double(&d, n, "intra_bw", 0, 1e18,
					&c->intra_bw, errp) < 0)
			goto fail;
		NEED(n, "intra_lat", cl);
		if (planner_yget_double(&d, n, "intra_lat", 0, 10,
					&c->intra_lat, errp) < 0)
			goto fail;
		NEED(n, "nics_per_node", cl);
		if (planner_yget_u64(&d, n, "nics_per_node", 0, 1024, &v,
				     errp) < 0)
			goto fail;
		c->nics_per_node = (unsigned)v;
		NEED(n, "nic_bw", cl);
		if (planner_yget_double(&d, n, "nic_bw", 0, 1e18, &c->nic_bw,
					errp) < 0)
			goto fail;
		NEED(n, "inter_lat", cl);
		if (planner_yget_double(&d, n, "inter_lat", 0, 10,
					&c->inter_lat, errp) < 0)
			goto fail;
		NEED(n, "nodes_per_switch", cl);
		if (planner_yget_u64(&d, n, "nodes_per_switch", 0, 1000000, &v,
				     errp) < 0)
			goto fail;
		c->nodes_per_switch = (unsigned)v;
		snprintf(c->topo_hash, sizeof(c->topo_hash), "%s",
			 plan->topo_hash);
	}
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
						&plan->base[i].step_time, errp) < 0)
				goto fail;
			NEED(n, "applicable", bn);
			if (planner_yget_bool(&d, n, "applicable",
					      &plan->base[i].applicable,
					      errp) < 0)
				goto fail;
		}
	}
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
				autosync_errprintf(errp, "%s: skipped_env: more "
						   "than 256 names", d.fname);
				goto fail;
			}
			if (planner_yget_str(&d, planner_ydoc_node(&d, *it),
					     "skipped_env", &names[nn++], errp) < 0)
				goto fail;
		}
		if (autosync_plan_set_skipped_env(plan, names, nn, errp) < 0)
			goto fail;
	}
	if ((sq = planner_ymap_get(&d, root, "nccl")) &&
	    parse_nccl(&d, sq, plan, errp) < 0)
		goto fail;
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
	sync_summary(plan);
	planner_plan_compute_hash(plan);
	if (hash && strcmp(hash, plan->hash)) {
		errno = EINVAL;
		autosync_errprintf(
		    errp,
		    "%s:%u: hash: '%s' does not match the plan's "
		    "decisions (%s): edited by hand? delete the hash line "
		    "to accept the edit",
		    d.fname,
		    planner_ynode_line(planner_ymap_get(&d, root, "hash")),
		    hash, plan->hash);
		goto fail;
	}
	(void)s;
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

/* ------------------------------------------------------------ SVG */
static void svg_text(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", fp);
		else if (*s == '>')
			fputs("&gt;", fp);
		else if (*s == '&')
			fputs("&amp;", fp);
		else if (*s == '"')
			fputs("&quot;", fp);
		else
			fputc(*s, fp);
	}
}

int autosync_plan_write_svg(const autosync_plan_t *plan, FILE *fp,
			    autosync_error_t *errp)
{
	const autosync_plan_summary_t *s;
	const double W = 1100, L = 150, R = 30, plotw = W - L - R;
	double tmax, scale, tick;
	int H;
	static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f",
					     "#e15759", "#76b7b2", "#edc948",
					     "#b07aa1", "#ff9da7"};

	if (!plan || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "plan_write_svg: invalid argument");
	}
	s = &plan->s;
	H = 300 + (plan->nbase ? 30 + 22 * (int)plan->nbase : 0);
	tmax = s->step_time > 0 ? s->step_time : 1e-3;
	scale = plotw / tmax;
	/* a round tick interval: 1, 2 or 5 x 10^k, about 10 ticks */
	tick = pow(10, floor(log10(tmax / 10)));
	if (tmax / tick > 50)
		tick *= 5;
	else if (tmax / tick > 20)
		tick *= 2;
	fprintf(fp,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H);
	fprintf(fp,
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(fp, "<text x=\"10\" y=\"20\" font-size=\"15\" "
		    "font-weight=\"bold\">autosync plan: ");
	svg_text(fp, plan->model);
	fprintf(fp, " on %u x %u GPUs (", s->cluster.nodes,
		s->cluster.gpus_per_node);
	svg_text(fp, plan->framework);
	fprintf(fp, ", ");
	svg_text(fp, plan->strategy);
	fprintf(fp, ")</text>\n");
	fprintf(fp,
		"<text x=\"10\" y=\"40\">predicted step %.3f ms = forward %.3f "
		"+ backward %.3f"
		" + exposed communication %.3f + optimizer %.3f; %zu buckets, "
		"communication %.3f ms; bound %.3f ms</text>\n",
		s->step_time * 1e3, s->fwd_time * 1e3, s->bwd_time * 1e3,
		s->exposed_comm * 1e3, s->opt_time * 1e3, plan->nb,
		s->comm_time * 1e3, s->bound * 1e3);
	/* rows */
	fprintf(fp, "<text x=\"10\" y=\"95\">compute</text>\n"
		    "<text x=\"10\" y=\"155\">all-reduce</text>\n"
		    "<text x=\"10\" y=\"215\">parameter server</text>\n");
	fprintf(fp,
		"<rect x=\"%.2f\" y=\"75\" width=\"%.2f\" height=\"30\" "
		"fill=\"#9ecae1\">"
		"<title>forward %.6g s</title></rect>\n",
		L, s->fwd_time * scale, s->fwd_time);
	fprintf(fp,
		"<rect x=\"%.2f\" y=\"75\" width=\"%.2f\" height=\"30\" "
		"fill=\"#3182bd\">"
		"<title>backward %.6g s</title></rect>\n",
		L + s->fwd_time * scale, s->bwd_time * scale, s->bwd_time);
	fprintf(fp,
		"<rect x=\"%.2f\" y=\"75\" width=\"%.2f\" height=\"30\" "
		"fill=\"#969696\">"
		"<title>optimizer %.6g s</title></rect>\n",
		L + (s->step_time - s->opt_time) * scale, s->opt_time * scale,
		s->opt_time);
	fprintf(fp,
		"<text x=\"%.2f\" y=\"70\" font-size=\"10\">fwd</text>"
		"<text x=\"%.2f\" y=\"70\" font-size=\"10\">bwd</text>\n",
		L + 2, L + s->fwd_time * scale + 2);
	for (size_t i = 0; i < plan->nb; i++) {
		const autosync_bucket_t *b = &plan->b[i].b;
		double y = b->kind == AUTOSYNC_SYNC_PS ? 195 : 135;
		double w = b->comm * scale;
		fprintf(fp,
			"<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" "
			"stroke=\"#555\" stroke-width=\"1\"/>\n",
			L + b->ready * scale, y - 6, L + b->ready * scale, y);
		fprintf(
		    fp,
		    "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"30\" "
		    "fill=\"%s\" stroke=\"white\" "
		    "stroke-width=\"0.5\"><title>bucket %u: "
		    "%zu tensors, %.0f bytes (%.0f on the wire), %s%s%s, ready "
		    "%.6g s, "
		    "start %.6g s, end %.6g s</title></rect>\n",
		    L + b->start * scale, y, w < 0.5 ? 0.5 : w, colors[i % 8],
		    b->id, b->ntensors, b->bytes, b->wire_bytes,
		    b->kind == AUTOSYNC_SYNC_PS ? "ps"
						: autosync_algo_name(b->algo),
		    b->compress ? " " : "",
		    b->compress ? autosync_compress_name(b->compress) : "",
		    b->ready, b->start, b->end);
		if (w > 30)
			fprintf(fp,
				"<text x=\"%.2f\" y=\"%.0f\" font-size=\"10\" "
				"fill=\"white\">"
				"b%u</text>\n",
				L + b->start * scale + 3, y + 19, b->id);
	}
	/* axis */
	fprintf(fp,
		"<line x1=\"%.2f\" y1=\"240\" x2=\"%.2f\" y2=\"240\" "
		"stroke=\"black\"/>\n",
		L, L + plotw);
	for (int i = 0; i * tick <= tmax * 1.0001 && i < 200; i++) {
		double x = L + i * tick * scale;
		fprintf(fp,
			"<line x1=\"%.2f\" y1=\"240\" x2=\"%.2f\" y2=\"246\" "
			"stroke=\"black\"/>"
			"<text x=\"%.2f\" y=\"260\" font-size=\"10\" "
			"text-anchor=\"middle\">"
			"%.4g</text>\n",
			x, x, x, i * tick * 1e3);
	}
	fprintf(fp,
		"<text x=\"%.2f\" y=\"280\" text-anchor=\"middle\">time (ms); "
		"ticks on the "
		"communication rows mark when each bucket's gradients are "
		"ready</text>\n",
		L + plotw / 2);
	/* the comparison with the baselines on the same time axis */
	if (plan->nbase)
		fprintf(
		    fp,
		    "<text x=\"10\" y=\"310\" font-weight=\"bold\">predicted "
		    "step time of each baseline (grey: not executable by "
		    "this framework)</text>\n");
	for (size_t i = 0; i < plan->nbase; i++) {
		double y = 320 + 22.0 * (double)i, t = plan->base[i].step_time;
		double w = (t < tmax * 1.1 ? t : tmax * 1.1) * scale;
		fprintf(fp, "<text x=\"10\" y=\"%.0f\">", y + 13);
		svg_text(fp, plan->base[i].name);
		fprintf(
		    fp,
		    "</text><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		    "height=\"16\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.0f\" "
		    "font-size=\"11\">%.3f ms (%.2fx this plan)%s</text>\n",
		    L, y, w, plan->base[i].applicable ? "#bab0ac" : "#e0e0e0",
		    L + (w < plotw - 190 ? w + 4 : 4), y + 12, t * 1e3,
		    tmax > 0 ? t / tmax : 0,
		    t > tmax * 1.1 ? " (clipped)" : "");
	}
	fprintf(fp,
		"<line x1=\"%.2f\" y1=\"60\" x2=\"%.2f\" y2=\"%d\" "
		"stroke=\"#d62728\" stroke-dasharray=\"4,3\"/>\n",
		L + tmax * scale, L + tmax * scale, H - 5);
	fprintf(fp, "</svg>\n");
	if (ferror(fp)) {
		errno = EIO;
		return autosync_errprintf(errp, "plan_write_svg: write error");
	}
	return 0;
}

int autosync_plan_set_skipped_env(autosync_plan_t *plan,
				  const char *const *names, size_t n,
				  autosync_error_t *errp)
{
	char **v;

	if (!plan || (n && !names)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "plan: invalid argument");
	}
	if (!(v = calloc(n ? n : 1, sizeof(*v)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "plan: out of memory");
	}
	for (size_t i = 0; i < n; i++)
		if (!names[i] || !(v[i] = planner_xstrdup(names[i]))) {
			for (size_t j = 0; j < i; j++)
				free(v[j]);
			free(v);
			errno = names[i] ? ENOMEM : EINVAL;
			return autosync_errprintf(errp, "plan: skipped_env");
		}
	for (size_t i = 0; i < plan->nskipped; i++)
		free(plan->skipped[i]);
	free(plan->skipped);
	plan->skipped = v;
	plan->nskipped = n;
	return 0;
}

size_t autosync_plan_nskipped_env(const autosync_plan_t *plan)
{
	return plan ? plan->nskipped : 0;
}

const char *autosync_plan_skipped_env(const autosync_plan_t *plan, size_t i)
{
	return plan && i < plan->nskipped ? plan->skipped[i] : NULL;
}
