/* plan_read.c - the plan reader, one phase per section, each a key table
 * read by common/ykeys.c: every error names the file, the line, the key and
 * the value. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "internal.h"

/* ------------------------------------------------------------ names */

static int link_class_from_name(const char *s)
{
	return autosync_link_class_from_name(s);
}

static const char *link_class_name(int i)
{
	return i >= 0 && i < AUTOSYNC_LINK_NCLASSES
		   ? autosync_link_class_name(i)
		   : NULL;
}

static int transport_from_name(const char *s)
{
	return autosync_transport_from_name(s);
}

static const char *transport_name(int i)
{
	return i >= 0 && i < AUTOSYNC_TRANSPORT_COUNT
		   ? autosync_transport_name(i)
		   : NULL;
}

static int nccl_func_from_name(const char *s)
{
	return autosync_nccl_func_from_name(s);
}

static const char *nccl_func_name(int i)
{
	return i >= 0 && i < AUTOSYNC_NCCL_NFUNCS ? autosync_nccl_func_name(i)
						  : NULL;
}

static int nccl_algo_from_name(const char *s)
{
	return autosync_nccl_algo_from_name(s);
}

static const char *nccl_algo_name(int i)
{
	return i >= 0 && i < AUTOSYNC_NCCL_NALGOS ? autosync_nccl_algo_name(i)
						  : NULL;
}

static int nccl_proto_from_name(const char *s)
{
	return autosync_nccl_proto_from_name(s);
}

static const char *nccl_proto_name(int i)
{
	return i >= 0 && i < AUTOSYNC_NCCL_NPROTOS ? autosync_nccl_proto_name(i)
						   : NULL;
}

#define ENUM(n, o, f, flg)                                             \
	{                                                              \
		.name = n, .type = ASI_Y_ENUM, .flags = flg, .off = o, \
		.conv = f##_from_name, .name_of = f##_name             \
	}
#define DBL(n, o, lo, hi)                                                 \
	{                                                                 \
		.name = n, .type = ASI_Y_DOUBLE, .flags = ASI_Y_REQUIRED, \
		.off = o, .dmin = lo, .dmax = hi                          \
	}
#define UNS(n, o, lo, hi, flg)                                         \
	{                                                              \
		.name = n, .type = ASI_Y_UINT, .flags = flg, .off = o, \
		.umin = lo, .umax = hi                                 \
	}
#define STR(n, o, flg)                                                         \
	{                                                                      \
		.name = n, .type = ASI_Y_STR, .flags = (flg) | ASI_Y_EMPTY_OK, \
		.off = o                                                       \
	}
#define BOOL(n, o, flg)                                               \
	{                                                             \
		.name = n, .type = ASI_Y_BOOL, .flags = flg, .off = o \
	}
#define NODE(n, o, flg)                                               \
	{                                                             \
		.name = n, .type = ASI_Y_NODE, .flags = flg, .off = o \
	}
#define REQ ASI_Y_REQUIRED
#define PLAN(f) offsetof(struct autosync_plan, f)

/* ------------------------------------------------------------ phase: top */

/* the top level: the version, the stated hash, and where the sections
 * are, read phase by phase below */
struct plan_top {
	unsigned version;
	char *hash, *strategy, *reason;
	yaml_node_t *inputs, *job, *prediction, *baselines, *env, *skipped,
	    *nccl, *buckets;
};
#define TOP(f) offsetof(struct plan_top, f)

static const struct asi_ykey top_keys[] = {
    {.name = "autosync_plan",
     .type = ASI_Y_VERSION,
     .flags = REQ,
     .off = TOP(version),
     .umin = AUTOSYNC_PLAN_VERSION - 1,
     .umax = AUTOSYNC_PLAN_VERSION,
     .what = "an autosync plan"},
    STR("hash", TOP(hash), 0),
    NODE("inputs", TOP(inputs), REQ),
    STR("strategy", TOP(strategy), REQ),
    STR("reason", TOP(reason), REQ),
    NODE("job", TOP(job), REQ),
    NODE("prediction", TOP(prediction), REQ),
    NODE("baselines", TOP(baselines), REQ),
    NODE("env", TOP(env), REQ),
    NODE("buckets", TOP(buckets), REQ),
    NODE("skipped_env", TOP(skipped), 0),
    NODE("nccl", TOP(nccl), 0),
    {.name = NULL},
};

static int read_top(asi_yreader_t *r, autosync_plan_t *plan,
		    struct plan_top *top)
{
	if (asi_ykeys_read(r, asi_yroot(r), top_keys, top, "") < 0)
		return -1;
	plan->format = top->version;
	plan->strategy = top->strategy;
	plan->reason = top->reason;
	top->strategy = top->reason = NULL;
	return 0;
}

/* ------------------------------------------------------------ phase: inputs */

static int cb_framework(asi_yreader_t *r, yaml_node_t *v, const char *key,
			void *base)
{
	static const struct asi_ykey k =
	    ENUM("framework", 0, autosync_framework, 0);
	autosync_plan_t *plan = base;
	int fw;

	if (asi_yget_enum(r, v, key, &k, &fw) < 0)
		return -1;
	free(plan->framework);
	if (!(plan->framework = strdup(autosync_framework_name(fw))))
		return asi_ynomem(r);
	return 0;
}

/* 16 lowercase hex digits: it is hashed, logged and compared */
static int cb_simhash(asi_yreader_t *r, yaml_node_t *v, const char *key,
		      void *base)
{
	autosync_plan_t *plan = base;
	const char *h = NULL;
	char q[64];

	if (asi_yget_str(r, v, key, &h) < 0)
		return -1;
	if (strlen(h) != 16 || strspn(h, "0123456789abcdef") != 16)
		return asi_yproblem(r, v,
				    "%s: bad value '%s' (expected 16 hex "
				    "digits)",
				    key, asi_quote(h, q, sizeof(q)));
	free(plan->simulator_hash);
	if (!(plan->simulator_hash = strdup(h)))
		return asi_ynomem(r);
	return 0;
}

#define CL(f) PLAN(s.cluster.f)
static const struct asi_ykey cluster_keys[] = {
    UNS("nodes", CL(nodes), 1, 1000000, REQ),
    UNS("gpus_per_node", CL(gpus_per_node), 1, 4096, REQ),
    ENUM("intra_class", CL(intra_class), link_class, REQ),
    DBL("intra_bw", CL(intra_bw), 0, 1e18),
    DBL("intra_lat", CL(intra_lat), 0, 10),
    UNS("nics_per_node", CL(nics_per_node), 0, 1024, REQ),
    DBL("nic_bw", CL(nic_bw), 0, 1e18),
    DBL("inter_lat", CL(inter_lat), 0, 10),
    UNS("nodes_per_switch", CL(nodes_per_switch), 0, 1000000, REQ),
    ENUM("transport", CL(transport), transport, 0), /* written when known */
    {.name = NULL},
};
#undef CL

static const struct asi_ykey inputs_keys[] = {
    STR("model", PLAN(model), REQ),
    STR("model_hash", PLAN(model_hash), REQ),
    UNS("batch_size", PLAN(s.batch), 1, 1u << 24, REQ),
    {.name = "framework", .type = ASI_Y_NODE, .flags = REQ, .cb = cb_framework},
    STR("topology_hash", PLAN(topo_hash), REQ),
    STR("costs_hash", PLAN(costs_hash), 0),
    {.name = "simulator_hash", .type = ASI_Y_NODE, .cb = cb_simhash},
    {.name = "cluster", .type = ASI_Y_MAP, .flags = REQ, .sub = cluster_keys},
    {.name = NULL},
};

static int read_inputs(asi_yreader_t *r, yaml_node_t *in, autosync_plan_t *plan)
{
	autosync_cluster_t *c = &plan->s.cluster;

	if (asi_ykeys_read(r, in, inputs_keys, plan, "inputs") < 0)
		return -1;
	snprintf(c->topo_hash, sizeof(c->topo_hash), "%s", plan->topo_hash);
	return 0;
}

/* ------------------------------------------------------------ phase: job */

static const struct asi_ykey job_keys[] = {
    ENUM("nccl_algo", PLAN(s.job_algo), autosync_algo, REQ),
    ENUM("compression", PLAN(s.job_compress), autosync_compress, REQ),
    UNS("powersgd_rank", PLAN(s.powersgd_rank), 1, 65536, 0),
    DBL("bucket_cap_bytes", PLAN(s.bucket_cap), 0, 1e18),
    DBL("first_bucket_bytes", PLAN(s.first_bucket), 0, 1e18),
    DBL("cycle_time", PLAN(s.cycle_time), 0, 10),
    BOOL("nccl_calibrate", PLAN(s.nccl_calibrate), 0),
    {.name = NULL},
};

/* ------------------------------------------------------ phase: prediction */

static const struct asi_ykey prediction_keys[] = {
    DBL("step_time", PLAN(s.step_time), 0, 1e300),
    /* plans of a learned simulator only */
    {.name = "analytic_step_time",
     .type = ASI_Y_DOUBLE,
     .off = PLAN(s.analytic_step_time),
     .dmin = 0,
     .dmax = 1e300},
    DBL("forward", PLAN(s.fwd_time), 0, 1e300),
    DBL("backward", PLAN(s.bwd_time), 0, 1e300),
    DBL("optimizer", PLAN(s.opt_time), 0, 1e300),
    DBL("communication", PLAN(s.comm_time), 0, 1e300),
    DBL("exposed_communication", PLAN(s.exposed_comm), 0, 1e300),
    DBL("bound", PLAN(s.bound), 0, 1e300),
    {.name = NULL},
};

#define BASE(f) offsetof(plan_baseline_t, f)
static const struct asi_ykey baseline_keys[] = {
    STR("name", BASE(name), REQ),
    DBL("step_time", BASE(step_time), 0, 1e300),
    BOOL("applicable", BASE(applicable), REQ),
    {.name = NULL},
};
#undef BASE

static int read_baselines(asi_yreader_t *r, yaml_node_t *sq,
			  autosync_plan_t *plan)
{
	size_t n;
	char where[48];

	if (asi_yexpect(r, sq, YAML_SEQUENCE_NODE, "baselines") < 0)
		return -1;
	n = (size_t)(sq->data.sequence.items.top -
		     sq->data.sequence.items.start);
	if (n && !(plan->base = calloc(n, sizeof(*plan->base))))
		return asi_ynomem(r);
	for (size_t i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "baselines[%zu]", i);
		plan->nbase++;
		if (asi_ykeys_read(
			r, asi_ynode(r, sq->data.sequence.items.start[i]),
			baseline_keys, &plan->base[i], where) < 0)
			return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ phase: env */

/* the variables the plan sets: only those a plan may set */
static int read_env(asi_yreader_t *r, yaml_node_t *map, autosync_plan_t *plan)
{
	char key[160], q[96];

	if (asi_yexpect(r, map, YAML_MAPPING_NODE, "env") < 0)
		return -1;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = asi_ynode(r, p->key);
		const char *k, *val;
		if (asi_yget_str(r, kn, "env", &k) < 0)
			return -1;
		snprintf(key, sizeof(key), "env.%s",
			 asi_quote(k, q, sizeof(q)));
		if (asi_yget_str(r, asi_ynode(r, p->value), key, &val) < 0)
			return -1;
		/* a shared plan file must not run code in the jobs using it */
		if (!autosync_plan_env_allowed(k)) {
			asi_yproblem(r, kn,
				     "env: '%s' is not a variable a plan may "
				     "set (NCCL_*, AUTOSYNC_*, HOROVOD_*; no "
				     "plugin or configuration file)",
				     asi_quote(k, q, sizeof(q)));
			errno = EPERM;
			return -1;
		}
		if (planner_plan_add_env(plan, k, val) < 0)
			return asi_ynomem(r);
	}
	return 0;
}

/* the variables the plan left to the user */
static int read_skipped(asi_yreader_t *r, yaml_node_t *sq,
			autosync_plan_t *plan)
{
	const char *names[256];
	size_t n = 0;

	if (!sq)
		return 0;
	if (asi_yexpect(r, sq, YAML_SEQUENCE_NODE, "skipped_env") < 0)
		return -1;
	for (yaml_node_item_t *it = sq->data.sequence.items.start;
	     it < sq->data.sequence.items.top; it++) {
		if (n == sizeof(names) / sizeof(names[0]))
			return asi_yproblem(r, sq,
					    "skipped_env: more than 256 names");
		if (asi_yget_str(r, asi_ynode(r, *it), "skipped_env",
				 &names[n++]) < 0)
			return -1;
	}
	if (autosync_plan_set_skipped_env(plan, names, n, r->errp) < 0) {
		r->nproblems++;
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ phase: nccl */

#define RULE(f) offsetof(autosync_nccl_rule_t, f)
static const struct asi_ykey rule_keys[] = {
    ENUM("coll", RULE(func), nccl_func, REQ),
    {.name = "min_bytes",
     .type = ASI_Y_U64,
     .flags = REQ,
     .off = RULE(min_bytes),
     .umin = 0,
     .umax = UINT64_MAX - 1},
    {.name = "max_bytes",
     .type = ASI_Y_U64,
     .off = RULE(max_bytes),
     .umin = 1,
     .umax = UINT64_MAX - 1},
    ENUM("algorithm", RULE(algo), nccl_algo, REQ),
    ENUM("protocol", RULE(proto), nccl_proto, REQ),
    UNS("channels", RULE(channels), 0, 64, REQ),
    {.name = NULL},
};
#undef RULE

/* one rule, after the one before it of the same collective */
static int read_rule(asi_yreader_t *r, yaml_node_t *rn, size_t i,
		     autosync_nccl_rule_t *rule, uint64_t *last)
{
	char where[48], q[32];

	snprintf(where, sizeof(where), "nccl[%zu]", i);
	rule->max_bytes = UINT64_MAX;
	if (asi_ykeys_read(r, rn, rule_keys, rule, where) < 0)
		return -1;
	if (rule->max_bytes <= rule->min_bytes)
		return asi_yproblem(
		    r, asi_ymap_get(r, rn, "max_bytes"),
		    "%s.max_bytes: bad value '%s' (expected an integer from "
		    "%" PRIu64 " to %" PRIu64 ", past min_bytes)",
		    where,
		    asi_quote(asi_yscalar(asi_ymap_get(r, rn, "max_bytes")), q,
			      sizeof(q)),
		    rule->min_bytes + 1, UINT64_MAX - 1);
	if (rule->min_bytes < last[rule->func])
		return asi_yproblem(
		    r, rn,
		    "nccl: %s rule from %" PRIu64 " bytes overlaps or "
		    "precedes the one before it (to %" PRIu64 "): rules of "
		    "one collective must be sorted and disjoint",
		    autosync_nccl_func_name(rule->func), rule->min_bytes,
		    last[rule->func]);
	last[rule->func] = rule->max_bytes;
	return 0;
}

/* nccl: per collective sorted and disjoint */
static int read_nccl(asi_yreader_t *r, yaml_node_t *sq, autosync_plan_t *plan)
{
	uint64_t last[AUTOSYNC_NCCL_NFUNCS] = {0};
	size_t n;

	if (!sq)
		return 0;
	if (asi_yexpect(r, sq, YAML_SEQUENCE_NODE, "nccl") < 0)
		return -1;
	n = (size_t)(sq->data.sequence.items.top -
		     sq->data.sequence.items.start);
	if (n > 4096)
		return asi_yproblem(r, sq, "nccl: more than 4096 rules");
	plan->s.nccl_none = n == 0; /* "nccl: []": NCCL left to itself */
	if (!(plan->nccl = calloc(n ? n : 1, sizeof(*plan->nccl))))
		return asi_ynomem(r);
	for (size_t i = 0; i < n; i++) {
		if (read_rule(r, asi_ynode(r, sq->data.sequence.items.start[i]),
			      i, &plan->nccl[i], last) < 0)
			return -1;
		plan->nnccl++;
	}
	return 0;
}

/* ------------------------------------------------------------ phase: buckets
 */

/* what one bucket says; its tensor lists are read after the table */
struct bucket_in {
	autosync_bucket_t b;
	yaml_node_t *tensors, *servers;
};

static const char *const kind_names[] = {
    [AUTOSYNC_SYNC_ALLREDUCE] = "allreduce", [AUTOSYNC_SYNC_PS] = "ps", NULL};

#define BK(f) offsetof(struct bucket_in, b.f)
static const struct asi_ykey bucket_keys[] = {
    UNS("id", BK(id), 0, UINT32_MAX, REQ),
    {.name = "kind",
     .type = ASI_Y_ENUM,
     .flags = REQ,
     .off = BK(kind),
     .values = kind_names},
    UNS("servers", BK(servers), 1, 1000000, 0),
    BOOL("local_aggregation", BK(local_agg), 0),
    BOOL("local_replication", BK(local_repl), 0),
    ENUM("algorithm", BK(algo), autosync_algo, 0),
    ENUM("compression", BK(compress), autosync_compress, 0),
    UNS("powersgd_rank", BK(powersgd_rank), 1, 65536, 0),
    BOOL("densify", BK(densify), 0),
    DBL("bytes", BK(bytes), 0, 1e300),
    DBL("wire_bytes", BK(wire_bytes), 0, 1e300),
    DBL("ready", BK(ready), 0, 1e300),
    DBL("start", BK(start), 0, 1e300),
    DBL("end", BK(end), 0, 1e300),
    NODE("tensors", offsetof(struct bucket_in, tensors), REQ),
    NODE("tensor_servers", offsetof(struct bucket_in, servers), 0),
    {.name = NULL},
};
#undef BK

/* the keys one kind of bucket needs besides the common ones */
/* PowerSGD needs its rank, and nothing else has one */
static int psgd_rank(asi_yreader_t *r, yaml_node_t *n, int compress,
		     unsigned rank, const char *where)
{
	if (compress == AUTOSYNC_COMPRESS_POWERSGD && !rank)
		return asi_yproblem(r, n,
				    "missing key '%s.powersgd_rank' "
				    "(compression powersgd needs it)",
				    where);
	if (compress != AUTOSYNC_COMPRESS_POWERSGD && rank)
		return asi_yproblem(r, n,
				    "'%s.powersgd_rank' without compression "
				    "powersgd",
				    where);
	return 0;
}

static int bucket_kind_keys(asi_yreader_t *r, yaml_node_t *bn,
			    const struct bucket_in *bi, const char *where)
{
	static const char *const ps[] = {"servers", "local_aggregation",
					 "local_replication", "tensor_servers",
					 NULL};
	static const char *const ar[] = {"algorithm", "compression", NULL};
	const char *const *need = bi->b.kind == AUTOSYNC_SYNC_PS ? ps : ar;

	for (size_t i = 0; need[i]; i++)
		if (!asi_ymap_get(r, bn, need[i]))
			return asi_yproblem(r, bn,
					    "missing key '%s.%s' (a %s bucket "
					    "needs it)",
					    where, need[i],
					    kind_names[bi->b.kind]);
	return psgd_rank(r, bn, bi->b.compress, bi->b.powersgd_rank, where);
}

static int bucket_tensors(asi_yreader_t *r, const struct bucket_in *bi,
			  struct plan_bucket *pb, const char *where)
{
	char key[64];
	size_t n;

	snprintf(key, sizeof(key), "%s.tensors", where);
	if (asi_yexpect(r, bi->tensors, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	n = (size_t)(bi->tensors->data.sequence.items.top -
		     bi->tensors->data.sequence.items.start);
	if (!(pb->names = calloc(n ? n : 1, sizeof(char *))) ||
	    !(pb->server = calloc(n ? n : 1, sizeof(int))))
		return asi_ynomem(r);
	pb->b.ntensors = n;
	for (size_t j = 0; j < n; j++) {
		const char *s;
		pb->server[j] = AUTOSYNC_NO_SERVER;
		if (asi_yget_str(
			r,
			asi_ynode(r, bi->tensors->data.sequence.items.start[j]),
			key, &s) < 0)
			return -1;
		if (!(pb->names[j] = strdup(s)))
			return asi_ynomem(r);
	}
	return 0;
}

static int bucket_servers(asi_yreader_t *r, const struct bucket_in *bi,
			  struct plan_bucket *pb, const char *where)
{
	yaml_node_t *sq = bi->servers;
	size_t nt = pb->b.ntensors;
	char key[64];

	if (pb->b.kind != AUTOSYNC_SYNC_PS)
		return 0;
	snprintf(key, sizeof(key), "%s.tensor_servers", where);
	if (asi_yexpect(r, sq, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	if ((size_t)(sq->data.sequence.items.top -
		     sq->data.sequence.items.start) != nt)
		return asi_yproblem(r, sq, "%s: %zu tensors need %zu values",
				    key, nt, nt);
	for (size_t j = 0; j < nt; j++) {
		int64_t sv;
		if (asi_yget_i64(r,
				 asi_ynode(r, sq->data.sequence.items.start[j]),
				 key, -1, (int64_t)pb->b.servers - 1, &sv) < 0)
			return -1;
		pb->server[j] = (int)sv;
	}
	return 0;
}

static int read_bucket(asi_yreader_t *r, yaml_node_t *bn,
		       struct plan_bucket *pb, size_t idx)
{
	struct bucket_in bi;
	char where[48], q[32];

	memset(&bi, 0, sizeof(bi));
	snprintf(where, sizeof(where), "buckets[%zu]", idx);
	if (asi_ykeys_read(r, bn, bucket_keys, &bi, where) < 0 ||
	    bucket_kind_keys(r, bn, &bi, where) < 0)
		return -1;
	if (bi.b.id != idx)
		return asi_yproblem(
		    r, asi_ymap_get(r, bn, "id"),
		    "%s.id: bad value '%s' (expected %zu: buckets are listed "
		    "in ready order)",
		    where,
		    asi_quote(asi_yscalar(asi_ymap_get(r, bn, "id")), q,
			      sizeof(q)),
		    idx);
	pb->b = bi.b;
	pb->b.comm = pb->b.end - pb->b.start;
	return bucket_tensors(r, &bi, pb, where) < 0 ||
		       bucket_servers(r, &bi, pb, where) < 0
		   ? -1
		   : 0;
}

struct tensor_at {
	const char *name;
	size_t bucket, j;
};

static int cmp_tensor_at(const void *a, const void *b)
{
	const struct tensor_at *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->bucket != y->bucket ? (x->bucket < y->bucket ? -1 : 1)
				      : (x->j > y->j) - (x->j < y->j);
}

/* A plan synchronizes each tensor once: at most AUTOSYNC_MAX_TENSORS of
 * them in all, none in two places (the second is named). */
static int unique_tensors(asi_yreader_t *r, yaml_node_t *sq,
			  const autosync_plan_t *plan)
{
	struct tensor_at *t;
	size_t n = 0, k = 0;
	int rv = 0;

	for (size_t i = 0; i < plan->nb; i++)
		n += plan->b[i].b.ntensors;
	if (n > AUTOSYNC_MAX_TENSORS)
		return asi_yproblem(r, sq,
				    "buckets: %zu tensors, more than the %llu "
				    "autosync plans",
				    n,
				    (unsigned long long)AUTOSYNC_MAX_TENSORS);
	if (n < 2)
		return 0;
	if (!(t = calloc(n, sizeof(*t))))
		return asi_ynomem(r);
	for (size_t i = 0; i < plan->nb; i++)
		for (size_t j = 0; j < plan->b[i].b.ntensors; j++)
			t[k++] = (struct tensor_at){plan->b[i].names[j], i, j};
	qsort(t, n, sizeof(*t), cmp_tensor_at);
	for (k = 1; k < n && !rv; k++) {
		yaml_node_t *bn, *tn;
		char q[96];
		if (strcmp(t[k].name, t[k - 1].name))
			continue;
		bn = asi_ynode(r, sq->data.sequence.items.start[t[k].bucket]);
		tn = asi_ymap_get(r, bn, "tensors");
		rv = asi_yproblem(
		    r, asi_ynode(r, tn->data.sequence.items.start[t[k].j]),
		    "buckets[%zu].tensors: tensor '%s' is already in "
		    "buckets[%zu] (a plan synchronizes each tensor once)",
		    t[k].bucket, asi_quote(t[k].name, q, sizeof(q)),
		    t[k - 1].bucket);
	}
	free(t);
	return rv;
}

static int read_buckets(asi_yreader_t *r, yaml_node_t *sq,
			autosync_plan_t *plan)
{
	size_t n;

	if (asi_yexpect(r, sq, YAML_SEQUENCE_NODE, "buckets") < 0)
		return -1;
	n = (size_t)(sq->data.sequence.items.top -
		     sq->data.sequence.items.start);
	if (!(plan->b = calloc(n ? n : 1, sizeof(*plan->b))))
		return asi_ynomem(r);
	for (size_t i = 0; i < n; i++) {
		plan->nb++;
		if (read_bucket(r,
				asi_ynode(r, sq->data.sequence.items.start[i]),
				&plan->b[i], i) < 0)
			return -1;
	}
	return unique_tensors(r, sq, plan);
}

/* ------------------------------------------------------------ phase: hash */

/* the stated hash must be the decisions' own */
static int check_hash(asi_yreader_t *r, autosync_plan_t *plan, const char *hash)
{
	char q[64];

	planner_plan_sync(plan);
	planner_plan_compute_hash(plan);
	if (!hash || !strcmp(hash, plan->hash))
		return 0;
	return asi_yproblem(
	    r, asi_ymap_get(r, asi_yroot(r), "hash"),
	    "hash: '%s' does not match the plan's decisions (%s): "
	    "edited by hand? delete the hash line to accept the edit",
	    asi_quote(hash, q, sizeof(q)), plan->hash);
}

/* ------------------------------------------------------------ the reader */

static autosync_plan_t *plan_read(asi_yreader_t *r)
{
	struct plan_top top;
	autosync_plan_t *plan;
	int saved;

	memset(&top, 0, sizeof(top));
	if (!(plan = calloc(1, sizeof(*plan)))) {
		asi_ynomem(r);
		return NULL;
	}
	if (read_top(r, plan, &top) < 0 ||
	    read_inputs(r, top.inputs, plan) < 0 ||
	    asi_ykeys_read(r, top.job, job_keys, plan, "job") < 0 ||
	    psgd_rank(r, top.job, plan->s.job_compress, plan->s.powersgd_rank,
		      "job") < 0 ||
	    asi_ykeys_read(r, top.prediction, prediction_keys, plan,
			   "prediction") < 0 ||
	    read_baselines(r, top.baselines, plan) < 0 ||
	    read_env(r, top.env, plan) < 0 ||
	    read_skipped(r, top.skipped, plan) < 0 ||
	    read_nccl(r, top.nccl, plan) < 0 ||
	    read_buckets(r, top.buckets, plan) < 0 ||
	    check_hash(r, plan, top.hash) < 0) {
		saved = errno ? errno : EINVAL;
		autosync_plan_destroy(plan);
		plan = NULL;
		errno = saved;
	}
	free(top.hash);
	free(top.strategy);
	free(top.reason);
	return plan;
}

autosync_plan_t *autosync_plan_parse(const char *buf, size_t len,
				     const char *fname, autosync_error_t *errp)
{
	asi_yreader_t r;
	autosync_plan_t *plan;
	int saved;

	if (planner_yload(&r, buf, len, fname, errp) < 0)
		return NULL;
	plan = plan_read(&r);
	saved = errno;
	asi_yreader_free(&r);
	errno = saved;
	return plan;
}

autosync_plan_t *autosync_plan_load(const char *path, autosync_error_t *errp)
{
	asi_yreader_t r;
	autosync_plan_t *plan;
	int saved;

	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "plan_load: no path");
		return NULL;
	}
	/* a plan names every tensor once: no larger than its model */
	if (planner_yload_file(&r, path, AUTOSYNC_MAX_MODEL_BYTES, errp) < 0)
		return NULL;
	plan = plan_read(&r);
	saved = errno;
	asi_yreader_free(&r);
	errno = saved;
	return plan;
}
