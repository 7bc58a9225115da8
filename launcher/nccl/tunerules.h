/*
 * tunerules.h - the tuner plugin's decision table: per (collective, message
 * size range, communicator shape) the NCCL algorithm, protocol and channel
 * count to prefer. Built from a plan (as_tune_from_plan) and optionally
 * from a rules file (as_tune_parse_rules); applied to NCCL's cost table
 * (as_tune_apply). Pure C, no NCCL, no global state: unit-tested directly
 * and through the built plugin.
 */
#ifndef AUTOSYNC_NCCL_TUNERULES_H
#define AUTOSYNC_NCCL_TUNERULES_H

#include <stddef.h>
#include <stdint.h>

#include "autosync/planner.h"
#include "nccl_abi.h"

#define AS_TUNE_MAX_RULES 1024
#define AS_TUNE_UNMODELLED (-2) /* as_tune_apply: left to NCCL, see there */

struct as_tune_rule {
	int func;	    /* AS_FUNC_*, -1 = any tuned function */
	uint64_t min_bytes; /* range [min_bytes, max_bytes) of nBytes */
	uint64_t max_bytes;
	int algo;	     /* AS_ALGO_* */
	int proto;	     /* AS_PROTO_*, -1 = the cheapest enabled one */
	int nchannels;	     /* > 0: set *nChannels; 0: keep NCCL's */
	long nnodes, nranks; /* communicator shape; -1 = any */
	int from_file;	     /* 1: rules file, 0: derived from the plan */
};

struct as_tune_table {
	size_t n;
	struct as_tune_rule r[AS_TUNE_MAX_RULES];
	/* from the plan, for recalibration (0 = unknown) */
	double intra_lat, inter_lat; /* s */
	int intra_nvlink;	     /* GPUs of a node talk over NVLink */
	int calibrate;		     /* the plan's job.nccl_calibrate */
	char plan_hash[17];
	int derived; /* the plan had no NCCL table: derived with defaults */
};

/* Names for logs and the rules file are the planner's:
 * autosync_nccl_func_name() and friends (autosync/planner.h). */

/*
 * The plan's NCCL table (autosync_plan_nccl_rule) as rules for
 * communicators of the plan's shape (nodes x gpus_per_node ranks); a plan
 * without a table gets one derived with the default cost constants
 * (autosync_plan_derive_nccl; t->derived = 1). Appends to t; returns the
 * number of rules added, or -1 (err) when the table is full.
 */
int as_tune_from_plan(autosync_plan_t *plan, struct as_tune_table *t, char *err,
		      size_t errlen);

/*
 * Parse a rules file: one rule per line,
 *   func,min_bytes,max_bytes,algo,proto,channels,nNodes,nRanks
 * func: broadcast reduce allgather reducescatter allreduce or -1 (any);
 * algo: tree ring collnet_direct collnet_chain nvls nvls_tree pat;
 * proto: ll ll128 simple or -1 (cheapest enabled); channels: -1 or 0 keep,
 * else 1..64; nNodes, nRanks: -1 any; max_bytes -1 = open. '#' comments
 * and blank lines are ignored. Appends to t; returns the number of rules,
 * or -1 with "line N: why" in err (t unchanged then).
 */
int as_tune_parse_rules(const char *buf, size_t len, struct as_tune_table *t,
			char *err, size_t errlen);

/* The first rule matching, or NULL. File rules are matched before the
 * plan's (as_tune_parse_rules inserts them first). */
const struct as_tune_rule *as_tune_match(const struct as_tune_table *t,
					 int func, size_t nbytes, size_t nranks,
					 size_t nnodes);

/*
 * Apply 'r' to NCCL's cost table 'cost' (float[numAlgo][numProto]:
 * rows numProto wide, as NCCL passes it): the chosen entry is set to 0.0 so
 * NCCL picks it; entries < 0 (disabled) are never touched; when the rule's
 * protocol is disabled, the cheapest enabled protocol of the rule's algorithm
 * is used; when the whole algorithm row is disabled nothing changes. A plan
 * rule (not from_file) also changes nothing, returning AS_TUNE_UNMODELLED, when
 * NCCL rates an enabled algorithm the planner does not model (CollNet,
 * NVLS, PAT) cheaper. Sets
 * *nchannels only when the rule has a count. Returns the protocol chosen
 * (>= 0), or -1 (or AS_TUNE_UNMODELLED) when nothing changed.
 */
int as_tune_apply(const struct as_tune_rule *r, float *cost, int numAlgo,
		  int numProto, int *nchannels);

/* Recalibrate NCCL's per-hop latencies (hwLatencies, µs) from the plan:
 * every protocol's Ring and Tree entry of the node's link row (NVLINK, or
 * PCI when the plan's GPUs do not share NVLink) is scaled so that Ring/
 * Simple equals intra_lat, and of the NET row so that it equals inter_lat
 * (the ratios between protocols stay NCCL's, as in the planner's model;
 * results clamped to 0.1..1000 µs; unknown latencies and zero entries are
 * left alone). Returns the number of entries set. */
int as_tune_calibrate(const struct as_tune_table *t,
		      as_tuner_constants_v5_t *c);

#endif
