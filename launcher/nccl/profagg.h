/*
 * profagg.h - the profiler plugin's aggregation and report format, without
 * NCCL: per-collective statistics keyed by (function, algorithm, protocol,
 * channels, power-of-two size class), step intervals, and the text written
 * to $AUTOSYNC_REPORT (docs/nccl-plugins.md, "Report format"):
 *
 *   # autosync-profiler 1 host=H pid=P rank=R nranks=N nodes=M steps_per=K
 *   0.104512             <- one measured step interval in seconds per line
 *   # coll AllReduce Ring Simple channels=16 bytes=[1048576,2097152) n=120
 *       mean_us=85.2 min_us=80.1 max_us=97.3 timing=gpu   (one line)
 *   # steps n=100 skipped=1 mean_s=0.104 comm_s_per_step=0.0012
 *
 * Non-comment lines are exactly what the report reader the SPANK plugin
 * uses (autosync_feedback_parse_report, site/report.c) takes: step times in
 * seconds. No global state;
 * the caller serializes access.
 */
#ifndef AUTOSYNC_NCCL_PROFAGG_H
#define AUTOSYNC_NCCL_PROFAGG_H

#include <stddef.h>
#include <stdint.h>

#define AS_PROF_MAX_KEYS 256
#define AS_PROF_MAX_PENDING 4096

struct as_prof_stat {
	char func[16], algo[16], proto[16];
	int nchannels;
	int size_class; /* floor(log2(bytes)), -1 for 0 bytes */
	uint64_t n;
	double sum_us, min_us, max_us;
	uint64_t gpu_timed; /* how many of n had kernel (GPU) timestamps */
};

struct as_prof_agg {
	size_t nstats;
	struct as_prof_stat stats[AS_PROF_MAX_KEYS];
	uint64_t dropped_keys; /* collectives not counted: table full */
	/* steps: every 'steps_per' marked collectives start a step */
	unsigned steps_per; /* 0 = unknown: no step lines */
	unsigned skip;	    /* first step intervals to drop (warm-up) */
	uint64_t marks;	    /* marked collectives so far */
	double step_start;  /* s, < 0 = none yet */
	uint64_t steps, skipped;
	double steps_sum;     /* s, over kept steps */
	double comm_us_total; /* all collectives' time */
	size_t npending;
	double pending[AS_PROF_MAX_PENDING]; /* not yet written */
	uint64_t pending_dropped;
};

/* Zero 'a' and set the step parameters. */
void as_prof_agg_init(struct as_prof_agg *a, unsigned steps_per, unsigned skip);

/* One completed collective. Strings are copied (truncated, sanitized to
 * [A-Za-z0-9_]); duration in microseconds; gpu: 1 when timed by kernel
 * timestamps, 0 when only the host side (enqueue) was seen. */
void as_prof_agg_coll(struct as_prof_agg *a, const char *func, const char *algo,
		      const char *proto, int nchannels, uint64_t bytes,
		      double dur_us, int gpu);

/* A collective that counts for step boundaries started at time t (s).
 * Returns 1 when it completed a step interval (now pending), else 0. */
int as_prof_agg_mark(struct as_prof_agg *a, double t);

/* Forget the step state (the step-defining communicator changed). */
void as_prof_agg_reset_steps(struct as_prof_agg *a);

/*
 * Format what is pending: the 'header' line (a '#' line, may be NULL)
 * then one line per pending step interval; with 'final', the '# coll' and
 * '# steps' summary lines too. Clears the pending steps. '*out' is
 * malloc'ed (caller frees); returns its length, or -1 (ENOMEM).
 */
long as_prof_agg_format(struct as_prof_agg *a, const char *header, int final,
			char **out);

/* Bytes per element of an NCCL datatype name ("ncclFloat32", "float16",
 * "ncclBfloat16", ...); 1 when unknown. */
unsigned as_prof_dtype_size(const char *name);

#endif
