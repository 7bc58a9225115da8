/* plan.c - plans: construction from a simulated strategy, accessors and
 * the hash. The YAML reader, writer and SVG timeline have files of their
 * own (plan_read.c, plan_write.c, plan_svg.c). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MiB (1024.0 * 1024.0)

/* FNV-1a 64 of the cost constants (which calibration made the plan) */
static char *costs_hash(const autosync_costs_t *k)
{
	const double *v = (const double *)k;
	uint64_t h = FNV_OFFSET;
	char buf[40], *r;

	/* the constants up to nccl_channel_slack always; a later one only
	 * when set, so that adding a constant keeps the hashes of plans made
	 * without it */
	size_t base = offsetof(autosync_costs_t, gamma_half) / sizeof(double);

	for (size_t i = 0; i < sizeof(*k) / sizeof(double); i++) {
		if (i >= base && v[i] == 0)
			continue;
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
	free(plan->simulator_hash);
	free(plan->nccl);
	free(plan);
}

void planner_plan_sync(autosync_plan_t *plan)
{
	plan->s.model = plan->model;
	plan->s.model_hash = plan->model_hash;
	plan->s.framework = plan->framework;
	plan->s.strategy = plan->strategy;
	plan->s.reason = plan->reason;
	plan->s.topo_hash = plan->topo_hash;
	plan->s.costs_hash = plan->costs_hash ? plan->costs_hash : "";
	plan->s.simulator_hash =
	    plan->simulator_hash ? plan->simulator_hash : "";
	for (size_t i = 0; i < plan->nb; i++) {
		plan->b[i].b.tensors = (const char *const *)plan->b[i].names;
		plan->b[i].b.server = plan->b[i].server;
	}
}

int autosync_plan_env_allowed(const char *name)
{
	static const char *const prefixes[] = {"NCCL_", "AUTOSYNC_",
					       "HOROVOD_"};
	/* what autosync itself sets or reads as a job's choice, and files or
	 * modules its parts open */
	static const char *const reserved[] = {
	    "NCCL_CONF_FILE",	    "NCCL_DEBUG_FILE",
	    "NCCL_TOPO_FILE",	    "AUTOSYNC_PLAN",
	    "AUTOSYNC_PLAN_HASH",   "AUTOSYNC_TOPO_HASH",
	    "AUTOSYNC_REPORT",	    "AUTOSYNC_INJECTED",
	    "AUTOSYNC_MODE",	    "AUTOSYNC_MODEL",
	    "AUTOSYNC_COMPRESSION", "AUTOSYNC_AGREE",
	    "AUTOSYNC_LOCAL_RANK",  "AUTOSYNC_ENV_FILE",
	    "AUTOSYNC_TUNER_RULES", "AUTOSYNC_SIMULATOR_MODULE",
	};
	size_t n = name ? strlen(name) : 0;
	int prefixed = 0;

	if (n == 0 || n > 63 || (name[0] >= '0' && name[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		prefixed |= !strncmp(name, prefixes[i], strlen(prefixes[i]));
	if (!prefixed)
		return 0;
	/* NCCL dlopens what NCCL_*_PLUGIN names */
	if (!strncmp(name, "NCCL_", 5) && n > 7 &&
	    !strcmp(name + n - 7, "_PLUGIN"))
		return 0;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(name, reserved[i]))
			return 0;
	return 1;
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
		if (s->job_compress == AUTOSYNC_COMPRESS_POWERSGD) {
			snprintf(v, sizeof(v), "%u", s->job_rank);
			planner_plan_add_env(plan, "AUTOSYNC_DDP_POWERSGD_RANK",
					     v);
		}
		/* DDP has no hierarchical all-reduce of its own: the
		 * adapter's comm hook (autosync.hooks) */
		if (!mixed && algo == AUTOSYNC_ALGO_HIER)
			planner_plan_add_env(plan, "AUTOSYNC_DDP_ALLREDUCE",
					     "hierarchical");
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
	memcpy(plan->terms, r->terms, sizeof(plan->terms));
	plan->have_terms = 1;
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
		/* what the plan file says of a PS bucket, no all-reduce
		 * algorithm or compression: the hash covers them, so a PS
		 * bucket carrying one would not read back with its hash */
		pb->b.algo = s->cfg[b].kind == AUTOSYNC_SYNC_PS
				 ? AUTOSYNC_ALGO_AUTO
				 : s->cfg[b].algo;
		pb->b.compress = s->cfg[b].kind == AUTOSYNC_SYNC_PS
				     ? AUTOSYNC_COMPRESS_NONE
				     : s->cfg[b].compress;
		pb->b.powersgd_rank =
		    s->cfg[b].compress == AUTOSYNC_COMPRESS_POWERSGD
			? s->cfg[b].rank
			: 0;
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
	plan->s.powersgd_rank =
	    s->job_compress == AUTOSYNC_COMPRESS_POWERSGD ? s->job_rank : 0;
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
	planner_plan_sync(plan);
	planner_plan_set_env(x, s, plan);
	planner_plan_sync(plan);
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
static const char *const term_names[AUTOSYNC_TERM_N] = {
    [AUTOSYNC_TERM_FORWARD] = "forward_s",
    [AUTOSYNC_TERM_BACKWARD] = "backward_s",
    [AUTOSYNC_TERM_OPTIMIZER] = "optimizer_s",
    [AUTOSYNC_TERM_COMM] = "comm_s",
    [AUTOSYNC_TERM_EXPOSED] = "exposed_s",
    [AUTOSYNC_TERM_HIDDEN] = "hidden_s",
    [AUTOSYNC_TERM_LAT_INTRA] = "latency_intra_s",
    [AUTOSYNC_TERM_LAT_INTER] = "latency_inter_s",
    [AUTOSYNC_TERM_BW_INTRA] = "bandwidth_intra_s",
    [AUTOSYNC_TERM_BW_INTER] = "bandwidth_inter_s",
    [AUTOSYNC_TERM_SPARSE] = "sparse_allgather_s",
    [AUTOSYNC_TERM_CAST] = "cast_s",
    [AUTOSYNC_TERM_LAUNCH] = "launch_s",
    [AUTOSYNC_TERM_PS_NETWORK] = "ps_network_s",
    [AUTOSYNC_TERM_PS_SERVER] = "ps_server_s",
    [AUTOSYNC_TERM_PS_MESSAGES] = "ps_messages_s",
    [AUTOSYNC_TERM_BUCKETS] = "buckets",
    [AUTOSYNC_TERM_PS_BUCKETS] = "ps_buckets",
    [AUTOSYNC_TERM_COMPRESSED] = "compressed_buckets",
    [AUTOSYNC_TERM_GRAD_BYTES] = "grad_bytes",
    [AUTOSYNC_TERM_WIRE_BYTES] = "wire_bytes",
    [AUTOSYNC_TERM_PARAMS] = "params",
    [AUTOSYNC_TERM_TENSORS] = "tensors",
    [AUTOSYNC_TERM_SPARSE_TENSORS] = "sparse_tensors",
    [AUTOSYNC_TERM_LAYERS] = "layers",
    [AUTOSYNC_TERM_PS_BYTES] = "ps_bytes",
    [AUTOSYNC_TERM_TREE_BYTES] = "tree_bytes",
    [AUTOSYNC_TERM_HIER_BYTES] = "hier_bytes",
    [AUTOSYNC_TERM_RING_BYTES] = "ring_bytes",
    [AUTOSYNC_TERM_COMPRESSED_BYTES] = "compressed_bytes",
};

const char *autosync_term_name(int term)
{
	return term >= 0 && term < AUTOSYNC_TERM_N ? term_names[term] : NULL;
}

int autosync_bytes_term(int kind, int algo)
{
	if (kind == AUTOSYNC_SYNC_PS)
		return AUTOSYNC_TERM_PS_BYTES;
	if (algo == AUTOSYNC_ALGO_TREE)
		return AUTOSYNC_TERM_TREE_BYTES;
	if (algo == AUTOSYNC_ALGO_HIER)
		return AUTOSYNC_TERM_HIER_BYTES;
	return AUTOSYNC_TERM_RING_BYTES;
}

int autosync_plan_terms(const autosync_plan_t *plan, double *terms)
{
	if (!plan || !terms) {
		errno = EINVAL;
		return -1;
	}
	if (!plan->have_terms) {
		errno = ENOENT;
		return -1;
	}
	memcpy(terms, plan->terms, sizeof(plan->terms));
	return 0;
}

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

unsigned autosync_plan_format_version(const autosync_plan_t *plan)
{
	return plan && plan->format ? plan->format : AUTOSYNC_PLAN_VERSION;
}

void autosync_hash_hex(const void *buf, size_t len, char *hex)
{
	snprintf(hex, 17, "%016" PRIx64, fnv1a(FNV_OFFSET, buf, len));
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

	/* the hash scheme's own version, not the file format's: a format
	 * that only reads differently keeps every plan's hash */
	snprintf(buf, sizeof(buf), "v%d %s %s %d %d %.0f %.0f %.9g", 1,
		 plan->model_hash ? plan->model_hash : "",
		 plan->framework ? plan->framework : "", plan->s.job_algo,
		 plan->s.job_compress, plan->s.bucket_cap, plan->s.first_bucket,
		 plan->s.cycle_time);
	h = fnv1a(h, buf, strlen(buf) + 1);
	/* hashed only when set, so that every other plan keeps its hash */
	if (plan->s.powersgd_rank) {
		snprintf(buf, sizeof(buf), "powersgd %u",
			 plan->s.powersgd_rank);
		h = fnv1a(h, buf, strlen(buf) + 1);
	}
	for (size_t i = 0; i < plan->nb; i++) {
		const autosync_bucket_t *b = &plan->b[i].b;
		snprintf(buf, sizeof(buf), "b %d %d %d %u %d %d %d %zu",
			 b->kind, b->algo, b->compress, b->servers,
			 b->local_agg, b->local_repl, b->densify, b->ntensors);
		h = fnv1a(h, buf, strlen(buf) + 1);
		if (b->powersgd_rank) {
			snprintf(buf, sizeof(buf), "r %u", b->powersgd_rank);
			h = fnv1a(h, buf, strlen(buf) + 1);
		}
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
	if (plan->s.nccl_calibrate) /* hashed only when set: older plans keep
				       theirs */
		h = fnv1a(h, "nccl_calibrate", sizeof("nccl_calibrate"));
	/* a plan of a learned simulator: nodes that loaded different files
	 * get different hashes, which the ranks compare */
	if (plan->simulator_hash && *plan->simulator_hash) {
		snprintf(buf, sizeof(buf), "simulator %s",
			 plan->simulator_hash);
		h = fnv1a(h, buf, strlen(buf) + 1);
	}
	if (plan->s.nccl_none) /* no table, and none derived: not the same
				  decision as a plan without the key */
		h = fnv1a(h, "nccl none", sizeof("nccl none"));
	for (size_t i = 0; i < plan->nnccl; i++) {
		const autosync_nccl_rule_t *r = &plan->nccl[i];
		snprintf(buf, sizeof(buf), "n %d %d %d %u %" PRIu64 " %" PRIu64,
			 r->func, r->algo, r->proto, r->channels, r->min_bytes,
			 r->max_bytes);
		h = fnv1a(h, buf, strlen(buf) + 1);
	}
	snprintf(plan->hash, sizeof(plan->hash), "%016" PRIx64, h);
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
