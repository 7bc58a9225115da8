/* plan_write.c - the versioned YAML plan writer (docs/plan-format.md),
 * through the one emitting path (common/emit.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/emit.h"
#include "internal.h"

/* the cluster the plan was made for */
static void cluster(asi_emit_t *e, const autosync_cluster_t *c)
{
	asi_emit_key(e, "cluster"), asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "nodes"), asi_emit_uint(e, c->nodes);
	asi_emit_key(e, "gpus_per_node"), asi_emit_uint(e, c->gpus_per_node);
	asi_emit_key(e, "intra_class");
	asi_emit_word(e, autosync_link_class_name(c->intra_class));
	asi_emit_key(e, "intra_bw"), asi_emit_num(e, c->intra_bw, 9);
	asi_emit_key(e, "intra_lat"), asi_emit_num(e, c->intra_lat, 9);
	asi_emit_key(e, "nics_per_node"), asi_emit_uint(e, c->nics_per_node);
	asi_emit_key(e, "nic_bw"), asi_emit_num(e, c->nic_bw, 9);
	asi_emit_key(e, "inter_lat"), asi_emit_num(e, c->inter_lat, 9);
	asi_emit_key(e, "nodes_per_switch");
	asi_emit_uint(e, c->nodes_per_switch);
	if (c->transport != AUTOSYNC_TRANSPORT_UNKNOWN)
		asi_emit_key(e, "transport"),
		    asi_emit_word(e, autosync_transport_name(c->transport));
	asi_emit_end(e);
}

static void inputs(asi_emit_t *e, const autosync_plan_t *plan)
{
	asi_emit_key(e, "inputs"), asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "model"), asi_emit_str(e, plan->model);
	asi_emit_key(e, "model_hash"), asi_emit_str(e, plan->model_hash);
	asi_emit_key(e, "batch_size"), asi_emit_uint(e, plan->s.batch);
	asi_emit_key(e, "framework"), asi_emit_str(e, plan->framework);
	asi_emit_key(e, "topology_hash"), asi_emit_str(e, plan->topo_hash);
	if (plan->costs_hash && *plan->costs_hash)
		asi_emit_key(e, "costs_hash"),
		    asi_emit_str(e, plan->costs_hash);
	if (plan->simulator_hash && *plan->simulator_hash)
		asi_emit_key(e, "simulator_hash"),
		    asi_emit_str(e, plan->simulator_hash);
	cluster(e, &plan->s.cluster);
	asi_emit_end(e);
}

static void job_and_prediction(asi_emit_t *e, const autosync_plan_summary_t *s)
{
	asi_emit_key(e, "job"), asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "nccl_algo"),
	    asi_emit_word(e, autosync_algo_name(s->job_algo));
	asi_emit_key(e, "compression");
	asi_emit_word(e, autosync_compress_name(s->job_compress));
	if (s->powersgd_rank)
		asi_emit_key(e, "powersgd_rank"),
		    asi_emit_uint(e, s->powersgd_rank);
	asi_emit_key(e, "bucket_cap_bytes"), asi_emit_whole(e, s->bucket_cap);
	asi_emit_key(e, "first_bucket_bytes"),
	    asi_emit_whole(e, s->first_bucket);
	asi_emit_key(e, "cycle_time"), asi_emit_num(e, s->cycle_time, 9);
	if (s->nccl_calibrate)
		asi_emit_key(e, "nccl_calibrate"), asi_emit_word(e, "true");
	asi_emit_end(e);
	asi_emit_key(e, "prediction"), asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "step_time"), asi_emit_num(e, s->step_time, 9);
	if (s->simulator_hash && *s->simulator_hash)
		asi_emit_key(e, "analytic_step_time"),
		    asi_emit_num(e, s->analytic_step_time, 9);
	asi_emit_key(e, "forward"), asi_emit_num(e, s->fwd_time, 9);
	asi_emit_key(e, "backward"), asi_emit_num(e, s->bwd_time, 9);
	asi_emit_key(e, "optimizer"), asi_emit_num(e, s->opt_time, 9);
	asi_emit_key(e, "communication"), asi_emit_num(e, s->comm_time, 9);
	asi_emit_key(e, "exposed_communication");
	asi_emit_num(e, s->exposed_comm, 9);
	asi_emit_key(e, "bound"), asi_emit_num(e, s->bound, 9);
	asi_emit_end(e);
}

/* baselines, env, skipped_env and the NCCL rules */
static void around(asi_emit_t *e, const autosync_plan_t *plan)
{
	asi_emit_key(e, "baselines");
	asi_emit_seq(e, plan->nbase ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (size_t i = 0; i < plan->nbase; i++) {
		asi_emit_map(e, ASI_EMIT_FLOW);
		asi_emit_key(e, "name"), asi_emit_str(e, plan->base[i].name);
		asi_emit_key(e, "step_time");
		asi_emit_num(e, plan->base[i].step_time, 9);
		asi_emit_key(e, "applicable");
		asi_emit_word(e, plan->base[i].applicable ? "true" : "false");
		asi_emit_end(e);
	}
	asi_emit_end(e);
	asi_emit_key(e, "env");
	asi_emit_map(e, plan->nenv ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (size_t i = 0; i < plan->nenv; i++)
		asi_emit_key(e, plan->env[i].name),
		    asi_emit_str(e, plan->env[i].value);
	asi_emit_end(e);
	if (plan->nskipped) {
		asi_emit_key(e, "skipped_env"), asi_emit_seq(e, ASI_EMIT_BLOCK);
		for (size_t i = 0; i < plan->nskipped; i++)
			asi_emit_str(e, plan->skipped[i]);
		asi_emit_end(e);
	}
	if (!plan->nnccl && !plan->s.nccl_none)
		return;
	/* an empty table says that NCCL is left to itself: the tuner derives
	 * none (a plan without the key gets one derived) */
	asi_emit_key(e, "nccl"),
	    asi_emit_seq(e, plan->nnccl ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (size_t i = 0; i < plan->nnccl; i++) {
		const autosync_nccl_rule_t *r = &plan->nccl[i];

		asi_emit_map(e, ASI_EMIT_FLOW);
		asi_emit_key(e, "coll");
		asi_emit_word(e, autosync_nccl_func_name(r->func));
		asi_emit_key(e, "min_bytes"), asi_emit_uint(e, r->min_bytes);
		if (r->max_bytes != UINT64_MAX)
			asi_emit_key(e, "max_bytes"),
			    asi_emit_uint(e, r->max_bytes);
		asi_emit_key(e, "algorithm");
		asi_emit_word(e, autosync_nccl_algo_name(r->algo));
		asi_emit_key(e, "protocol");
		asi_emit_word(e, autosync_nccl_proto_name(r->proto));
		asi_emit_key(e, "channels"), asi_emit_uint(e, r->channels);
		asi_emit_end(e);
	}
	asi_emit_end(e);
}

static void bucket(asi_emit_t *e, const autosync_plan_t *plan, size_t i)
{
	const autosync_bucket_t *b = &plan->b[i].b;
	int ps = b->kind == AUTOSYNC_SYNC_PS;

	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "id"), asi_emit_uint(e, b->id);
	asi_emit_key(e, "kind"), asi_emit_word(e, ps ? "ps" : "allreduce");
	if (ps) {
		asi_emit_key(e, "servers"), asi_emit_uint(e, b->servers);
		asi_emit_key(e, "local_aggregation");
		asi_emit_word(e, b->local_agg ? "true" : "false");
		asi_emit_key(e, "local_replication");
		asi_emit_word(e, b->local_repl ? "true" : "false");
	} else {
		asi_emit_key(e, "algorithm");
		asi_emit_word(e, autosync_algo_name(b->algo));
		asi_emit_key(e, "compression");
		asi_emit_word(e, autosync_compress_name(b->compress));
		if (b->powersgd_rank)
			asi_emit_key(e, "powersgd_rank"),
			    asi_emit_uint(e, b->powersgd_rank);
		if (b->densify)
			asi_emit_key(e, "densify"), asi_emit_word(e, "true");
	}
	asi_emit_key(e, "bytes"), asi_emit_whole(e, b->bytes);
	asi_emit_key(e, "wire_bytes"), asi_emit_whole(e, b->wire_bytes);
	asi_emit_key(e, "ready"), asi_emit_num(e, b->ready, 9);
	asi_emit_key(e, "start"), asi_emit_num(e, b->start, 9);
	asi_emit_key(e, "end"), asi_emit_num(e, b->end, 9);
	asi_emit_key(e, "tensors"), asi_emit_seq(e, ASI_EMIT_FLOW);
	for (size_t j = 0; j < b->ntensors; j++)
		asi_emit_str(e, plan->b[i].names[j]);
	asi_emit_end(e);
	if (ps) {
		asi_emit_key(e, "tensor_servers"),
		    asi_emit_seq(e, ASI_EMIT_FLOW);
		for (size_t j = 0; j < b->ntensors; j++)
			asi_emit_int(e, plan->b[i].server[j]);
		asi_emit_end(e);
	}
	asi_emit_end(e);
}

int autosync_plan_write(const autosync_plan_t *plan, FILE *fp,
			autosync_error_t *errp)
{
	asi_emit_t *e;

	if (!plan || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp, "plan_write: invalid argument");
	}
	if (!(e = asi_emit_open(fp,
				"autosync plan; format: "
				"docs/plan-format.md (autosync-plan(5))",
				errp)))
		return -1;
	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "autosync_plan"),
	    asi_emit_uint(e, AUTOSYNC_PLAN_VERSION);
	asi_emit_key(e, "hash"), asi_emit_str(e, plan->hash);
	inputs(e, plan);
	asi_emit_key(e, "strategy"), asi_emit_str(e, plan->strategy);
	asi_emit_key(e, "reason"), asi_emit_str(e, plan->reason);
	job_and_prediction(e, &plan->s);
	around(e, plan);
	asi_emit_key(e, "buckets");
	asi_emit_seq(e, plan->nb ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (size_t i = 0; i < plan->nb; i++)
		bucket(e, plan, i);
	asi_emit_end(e);
	asi_emit_end(e);
	return asi_emit_close(e, "plan_write", errp);
}
