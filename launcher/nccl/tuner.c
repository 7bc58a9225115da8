/*
 * tuner.c - libnccl-tuner-autosync.so, the NCCL tuner plugin that applies
 * an autosync plan per collective (docs/nccl-plugins.md).
 *
 * NCCL dlopens it (NCCL_TUNER_PLUGIN=autosync or a path) and calls init per
 * communicator, getCollInfo per collective, finalize per communicator. The
 * plan named by AUTOSYNC_PLAN (and the optional AUTOSYNC_TUNER_RULES file)
 * is read once per process; a missing or invalid plan changes nothing and
 * is reported once through NCCL's logger. getCollInfo never fails.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"
#include "nccl_abi.h"
#include "common/readfile.h"
#include "common/text.h"
#include "tunerules.h"

#define MAX_RULES_FILE (1u << 20)
#define LOG_DECISIONS                                   \
	4 /* decisions logged per communicator at INFO, \
	     unless AUTOSYNC_TUNER_LOG says how many */

#define EXPORT __attribute__((visibility("default")))

static struct {
	pthread_once_t once;
	int active; /* 0: step aside for the whole process */
	int calibrate;
	unsigned log_decisions;
	char why[512]; /* said once through the logger */
	pthread_mutex_t lock;
	int said;
	struct as_tune_table table;
} g = {.once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER};

struct comm {
	uint64_t id;
	size_t nranks, nnodes;
	as_nccl_logger_t log;
	unsigned long calls, changed;
	unsigned logged;
};

#define LOG(fn, lvl, flags, ...)                                               \
	do {                                                                   \
		if (fn)                                                        \
			(fn)((lvl), (flags), __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

/* Was 'name' set by the user (and not injected by autosync)? */
static int user_set(const char *name)
{
	return getenv(name) &&
	       !asi_name_in_list(getenv("AUTOSYNC_INJECTED"), name);
}

static void load_once(void)
{
	autosync_error_t err = {.text = ""};
	const char *plan_path = getenv("AUTOSYNC_PLAN");
	const char *rules = getenv("AUTOSYNC_TUNER_RULES");
	const char *cal = getenv("AUTOSYNC_TUNER_CALIBRATE");
	autosync_plan_t *plan = NULL;
	char e[256] = "", *buf = NULL;
	int n = 0, nf = 0;

	{
		const char *v = getenv("AUTOSYNC_TUNER_LOG");
		char *end;
		unsigned long want =
		    v && *v ? strtoul(v, &end, 10) : LOG_DECISIONS;
		g.log_decisions = v && *v && (*end || want > 1000000)
				      ? LOG_DECISIONS
				      : (unsigned)want;
	}
	if (user_set("NCCL_ALGO") || user_set("NCCL_PROTO")) {
		snprintf(g.why, sizeof(g.why),
			 "autosync tuner: NCCL_ALGO or "
			 "NCCL_PROTO set by the user; leaving every choice to "
			 "NCCL");
		return;
	}
	if (plan_path && plan_path[0]) {
		if (!(plan = autosync_plan_load(plan_path, &err))) {
			snprintf(g.why, sizeof(g.why),
				 "autosync tuner: plan "
				 "%.200s: %.240s; changing nothing",
				 plan_path, err.text);
			return;
		}
		n = as_tune_from_plan(plan, &g.table, e, sizeof(e));
		autosync_plan_destroy(plan);
		if (n < 0) {
			snprintf(g.why, sizeof(g.why),
				 "autosync tuner: plan "
				 "%s: %s; changing nothing",
				 plan_path, e);
			g.table.n = 0;
			return;
		}
	}
	if (rules && rules[0]) {
		size_t len;

		if (asi_read_file(rules, MAX_RULES_FILE, 0, (uid_t)-1, &buf,
				  &len, e, sizeof(e)) < 0) {
			snprintf(g.why, sizeof(g.why),
				 "autosync tuner: rules "
				 "%s; changing nothing",
				 e);
			g.table.n = 0;
			return;
		}
		nf = as_tune_parse_rules(buf, len, &g.table, e, sizeof(e));
		free(buf);
		if (nf < 0) {
			snprintf(g.why, sizeof(g.why),
				 "autosync tuner: rules "
				 "%s: %s; changing nothing",
				 rules, e);
			g.table.n = 0;
			return;
		}
	}
	if (!(plan_path && plan_path[0]) && !(rules && rules[0])) {
		snprintf(g.why, sizeof(g.why),
			 "autosync tuner: no AUTOSYNC_PLAN "
			 "set; changing nothing");
		return;
	}
	g.active = 1;
	/* the plan's job.nccl_calibrate, unless the environment says */
	if (cal && *cal)
		g.calibrate = asi_parse_bool(cal) == 1;
	else
		g.calibrate = g.table.calibrate;
	snprintf(g.why, sizeof(g.why),
		 "autosync tuner: plan %s (%s): %d "
		 "rule(s) from the plan%s, %d from %s%s",
		 plan_path && plan_path[0] ? plan_path : "-",
		 g.table.plan_hash[0] ? g.table.plan_hash : "no hash", n,
		 g.table.derived ? " (it has no nccl table: derived with "
				   "the default cost constants)"
				 : "",
		 nf, rules && rules[0] ? rules : "no rules file",
		 g.calibrate ? "; recalibrating NCCL's latencies" : "");
}

static void say_once(as_nccl_logger_t log)
{
	int say;

	pthread_mutex_lock(&g.lock);
	say = !g.said;
	g.said = 1;
	pthread_mutex_unlock(&g.lock);
	if (say) {
		/* paths and file contents reach NCCL's log: escaped */
		char q[4 * sizeof(g.why)];
		LOG(log, g.active ? AS_NCCL_LOG_INFO : AS_NCCL_LOG_WARN,
		    AS_NCCL_INIT | AS_NCCL_TUNING, "%s",
		    asi_quote(g.why, q, sizeof(q)));
	}
}

static as_nccl_result_t comm_init(void **ctx, uint64_t id, size_t nranks,
				  size_t nnodes, as_nccl_logger_t log,
				  as_tuner_constants_v5_t *constants)
{
	struct comm *c;

	if (!ctx)
		return AS_NCCL_INVALID_ARGUMENT;
	*ctx = NULL;
	pthread_once(&g.once, load_once);
	say_once(log);
	if (!(c = calloc(1, sizeof(*c))))
		return AS_NCCL_INTERNAL_ERROR;
	c->id = id;
	c->nranks = nranks;
	c->nnodes = nnodes;
	c->log = log;
	if (g.active && g.calibrate && constants) {
		int n = as_tune_calibrate(&g.table, constants);
		LOG(log, AS_NCCL_LOG_INFO, AS_NCCL_TUNING,
		    "autosync tuner: comm 0x%llx: set %d latency constant(s) "
		    "from the plan",
		    (unsigned long long)id, n);
	}
	*ctx = c;
	return AS_NCCL_SUCCESS;
}

static as_nccl_result_t init_v5(void **ctx, uint64_t id, size_t nranks,
				size_t nnodes, as_nccl_logger_t log,
				as_nvl_domain_info_v5_t *nvl,
				as_tuner_constants_v5_t *constants)
{
	(void)nvl;
	return comm_init(ctx, id, nranks, nnodes, log, constants);
}

static as_nccl_result_t init_v4(size_t nranks, size_t nnodes,
				as_nccl_logger_t log, void **ctx)
{
	return comm_init(ctx, 0, nranks, nnodes, log, NULL);
}

static as_nccl_result_t get_coll_info(void *ctx, int coll, size_t nbytes,
				      int pipe_ops, float **table, int num_algo,
				      int num_proto, int reg_buff,
				      int *nchannels)
{
	struct comm *c = ctx;
	const struct as_tune_rule *r;
	/* NCCL passes float[numAlgo][numProto] cast to float** */
	float *cost = (float *)table;
	int p;

	(void)pipe_ops;
	(void)reg_buff;
	if (!c || !table || !g.active)
		return AS_NCCL_SUCCESS;
	c->calls++;
	r = as_tune_match(&g.table, coll, nbytes, c->nranks, c->nnodes);
	p = r ? as_tune_apply(r, cost, num_algo, num_proto, nchannels) : -1;
	if (p >= 0)
		c->changed++;
	if (c->logged < g.log_decisions) {
		char ch[32] = "", dis[48] = "";
		c->logged++;
		if (p >= 0 && r->nchannels > 0)
			snprintf(ch, sizeof(ch), ", %d channels", r->nchannels);
		if (p >= 0 && r->proto >= 0 && p != r->proto)
			snprintf(dis, sizeof(dis), ", the rule's %s disabled",
				 autosync_nccl_proto_name(r->proto));
		if (p >= 0)
			LOG(c->log, AS_NCCL_LOG_INFO, AS_NCCL_TUNING,
			    "autosync tuner: %s %zu bytes on %zu ranks: "
			    "%s/%s%s%s (%s rule [%llu, %llu))",
			    autosync_nccl_func_name(coll), nbytes, c->nranks,
			    autosync_nccl_algo_name(r->algo),
			    autosync_nccl_proto_name(p), ch, dis,
			    r->from_file ? "file" : "plan",
			    (unsigned long long)r->min_bytes,
			    (unsigned long long)r->max_bytes);
		else
			LOG(c->log, AS_NCCL_LOG_INFO, AS_NCCL_TUNING,
			    "autosync tuner: %s %zu bytes on %zu ranks: "
			    "NCCL's choice (%s)",
			    autosync_nccl_func_name(coll), nbytes, c->nranks,
			    !r ? "no rule"
			    : p == AS_TUNE_UNMODELLED
				? "it rates an algorithm the plan does not "
				  "model faster"
				: "rule's algorithm disabled");
	}
	return AS_NCCL_SUCCESS;
}

static as_nccl_result_t get_coll_info_v3(void *ctx, int coll, size_t nbytes,
					 int pipe_ops, float **table,
					 int num_algo, int num_proto,
					 int *nchannels)
{
	return get_coll_info(ctx, coll, nbytes, pipe_ops, table, num_algo,
			     num_proto, 0, nchannels);
}

static as_nccl_result_t comm_fini(void *ctx)
{
	struct comm *c = ctx;

	if (!c)
		return AS_NCCL_SUCCESS;
	if (g.active)
		LOG(c->log, AS_NCCL_LOG_INFO, AS_NCCL_TUNING,
		    "autosync tuner: comm 0x%llx: %lu collective(s) asked, "
		    "%lu steered",
		    (unsigned long long)c->id, c->calls, c->changed);
	free(c);
	return AS_NCCL_SUCCESS;
}

EXPORT const as_tuner_v5_t ncclTunerPlugin_v5 = {
    .name = "autosync",
    .init = init_v5,
    .getCollInfo = get_coll_info,
    .finalize = comm_fini,
};

EXPORT const as_tuner_v4_t ncclTunerPlugin_v4 = {
    .name = "autosync",
    .init = init_v4,
    .getCollInfo = get_coll_info,
    .destroy = comm_fini,
};

EXPORT const as_tuner_v3_t ncclTunerPlugin_v3 = {
    .name = "autosync",
    .init = init_v4,
    .getCollInfo = get_coll_info_v3,
    .destroy = comm_fini,
};
