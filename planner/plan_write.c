/* plan_write.c - the versioned YAML plan writer (docs/plan-format.md). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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
		c->nodes, c->gpus_per_node, autosync_link_class_name(c->intra_class));
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

