/*
 * autosync/feedback.h - feedback records: what was planned, what was
 * predicted and what was measured, one per job step and node, so that the
 * simulator can be retrained. Records are JSON lines (written and read with
 * jansson, every string escaped), appended to a log that many nodes and
 * jobs share. docs/feedback-format.md describes the format.
 *
 * Conventions as in autosync/common.h; nothing here prints.
 */
#ifndef AUTOSYNC_FEEDBACK_H
#define AUTOSYNC_FEEDBACK_H

#include <stddef.h>
#include <stdint.h>

#include "autosync/common.h"
#include "autosync/planner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record format. 2: records are checked on write and on read (required
 * fields present, step times within AUTOSYNC_FEEDBACK_MIN_STEP ..
 * AUTOSYNC_FEEDBACK_MAX_STEP, counts at least 1, identity not empty) and say
 * which fields the job's user could influence ("user_influenced"). 3: the
 * simulator's breakdown of the prediction ("terms", when the plan was made
 * here) and the measured median and spread (docs/dataset.md). Versions 1
 * and 2 are read too: rec.version says which; version 1 records count every
 * field as influenced (they do not say). */
#define AUTOSYNC_FEEDBACK_VERSION 3
/* Step times a record may hold, in seconds: 1 us .. 1 h. */
#define AUTOSYNC_FEEDBACK_MIN_STEP 1e-6
#define AUTOSYNC_FEEDBACK_MAX_STEP 3600.0

/*
 * The fields of a record, one bit each, for rec.influenced: the fields the
 * job's user could have influenced, so that training can weigh or drop
 * them. Written as "user_influenced": the list of their JSON names
 * (autosync_feedback_field_name()), in this order.
 */
enum autosync_feedback_field {
	AUTOSYNC_FEEDBACK_F_TIME = 1u << 0,	       /* "time" */
	AUTOSYNC_FEEDBACK_F_SOURCE = 1u << 1,	       /* "source" */
	AUTOSYNC_FEEDBACK_F_JOB = 1u << 2,	       /* "job" */
	AUTOSYNC_FEEDBACK_F_STEP = 1u << 3,	       /* "step" */
	AUTOSYNC_FEEDBACK_F_USER = 1u << 4,	       /* "user" */
	AUTOSYNC_FEEDBACK_F_UID = 1u << 5,	       /* "uid" */
	AUTOSYNC_FEEDBACK_F_NODE = 1u << 6,	       /* "node" */
	AUTOSYNC_FEEDBACK_F_NODES = 1u << 7,	       /* "nodes" */
	AUTOSYNC_FEEDBACK_F_GPUS_PER_NODE = 1u << 8,   /* "gpus_per_node" */
	AUTOSYNC_FEEDBACK_F_MODEL = 1u << 9,	       /* "model" */
	AUTOSYNC_FEEDBACK_F_MODEL_HASH = 1u << 10,     /* "model_hash" */
	AUTOSYNC_FEEDBACK_F_TOPO_HASH = 1u << 11,      /* "topo_hash" */
	AUTOSYNC_FEEDBACK_F_PLAN_HASH = 1u << 12,      /* "plan_hash" */
	AUTOSYNC_FEEDBACK_F_FRAMEWORK = 1u << 13,      /* "framework" */
	AUTOSYNC_FEEDBACK_F_STRATEGY = 1u << 14,       /* "strategy" */
	AUTOSYNC_FEEDBACK_F_CLUSTER = 1u << 15,	       /* "cluster" */
	AUTOSYNC_FEEDBACK_F_SCALE = 1u << 16,	       /* "scale" */
	AUTOSYNC_FEEDBACK_F_PREDICTED = 1u << 17,      /* "predicted_step_s" */
	AUTOSYNC_FEEDBACK_F_BUCKETS = 1u << 18,	       /* "buckets" */
	AUTOSYNC_FEEDBACK_F_BASELINES = 1u << 19,      /* "baselines" */
	AUTOSYNC_FEEDBACK_F_MEASURED = 1u << 20,       /* "measured_step_s" */
	AUTOSYNC_FEEDBACK_F_MEASURED_COUNT = 1u << 21, /* "measured_count" */
	AUTOSYNC_FEEDBACK_F_MEASURED_MEAN = 1u << 22,  /* "measured_mean_s" */
	AUTOSYNC_FEEDBACK_F_TERMS = 1u << 23,	       /* "terms" */
	AUTOSYNC_FEEDBACK_F_SIMULATOR = 1u << 24,      /* "simulator_hash" */
	AUTOSYNC_FEEDBACK_F_LEARNED = 1u << 25,	       /* "learned_step_s" */
	AUTOSYNC_FEEDBACK_F_BATCH = 1u << 26,	       /* "batch_size" */
	AUTOSYNC_FEEDBACK_F_ALL = (1u << 27) - 1,
};
/* What a plan decides, and so what a user's model file or option steers. */
#define AUTOSYNC_FEEDBACK_F_PLANNED                                     \
	(AUTOSYNC_FEEDBACK_F_PLAN_HASH | AUTOSYNC_FEEDBACK_F_STRATEGY | \
	 AUTOSYNC_FEEDBACK_F_PREDICTED | AUTOSYNC_FEEDBACK_F_BUCKETS |  \
	 AUTOSYNC_FEEDBACK_F_BASELINES | AUTOSYNC_FEEDBACK_F_TERMS |    \
	 AUTOSYNC_FEEDBACK_F_SIMULATOR | AUTOSYNC_FEEDBACK_F_LEARNED)
/* The measurements: a job writes its own report file. */
#define AUTOSYNC_FEEDBACK_F_MEASUREMENTS                                     \
	(AUTOSYNC_FEEDBACK_F_MEASURED | AUTOSYNC_FEEDBACK_F_MEASURED_COUNT | \
	 AUTOSYNC_FEEDBACK_F_MEASURED_MEAN)
/* The JSON name of one AUTOSYNC_FEEDBACK_F_* bit; NULL for anything else. */
const char *autosync_feedback_field_name(unsigned field);

/* The parts of a record, for autosync_feedback_check() and the _part
 * functions: what autosync_feedback_set_plan() fills, and the rest. */
#define AUTOSYNC_FEEDBACK_PART_PLAN             \
	1u /* nodes, GPUs per node, model, plan \
	    * hash, framework, strategy, scale, \
	    * prediction, buckets, baselines */
#define AUTOSYNC_FEEDBACK_PART_JOB            \
	2u /* time, source, job, node and the \
	    * measurements */
#define AUTOSYNC_FEEDBACK_PART_ALL 3u
/* Bounds that keep one record a few KiB to a few hundred KiB. */
#define AUTOSYNC_FEEDBACK_MAX_MEASURED 256
#define AUTOSYNC_FEEDBACK_MAX_BUCKETS 1024
#define AUTOSYNC_FEEDBACK_MAX_BASELINES 16
/* Largest batch_size a record may hold (samples per GPU). */
#define AUTOSYNC_FEEDBACK_MAX_BATCH (1u << 24)
/* Longest line autosync_feedback_read() accepts. */
#define AUTOSYNC_FEEDBACK_MAX_LINE (512 * 1024)

typedef struct autosync_feedback_bucket {
	char kind[16];	   /* "allreduce" | "ps" */
	char algo[16];	   /* "ring", "tree", "hier", "auto", "" for PS */
	char compress[16]; /* "none", "fp16", "bf16", "powersgd" */
	unsigned servers;  /* PS shards, 0 for all-reduce */
	unsigned tensors;  /* tensors in the bucket */
	double bytes;	   /* gradient bytes per rank */
} autosync_feedback_bucket_t;

typedef struct autosync_feedback_baseline {
	char name[32];
	double predicted; /* s */
} autosync_feedback_baseline_t;

/* One record; a plain value type (zero it, then fill what is known). */
typedef struct autosync_feedback_rec {
	int64_t time;	    /* seconds since the epoch (UTC) */
	char source[16];    /* "plugin", "bench" */
	uint64_t job, step; /* step 4294967291 = batch script */
	char user[64];
	uint32_t uid;
	char node[64];
	unsigned nodes, gpus_per_node;
	char model[256];
	char model_hash[17], topo_hash[17], plan_hash[17];
	char framework[32];
	char strategy[64];
	char cluster[256]; /* the cluster the plan was made for, as an
			    * autosync_cluster_parse() spec */
	double scale;	   /* gradient sizes divided by this (trial runs
			    * on scaled models); 0 or 1 = full size */
	unsigned batch;	   /* samples per GPU the plan was made for; 0
			    * unknown (written only when known: the
			    * measured compute per sample, docs/dataset.md) */
	double predicted;  /* s per step, 0 unknown */
	size_t nbuckets;
	autosync_feedback_bucket_t buckets[AUTOSYNC_FEEDBACK_MAX_BUCKETS];
	size_t nbaselines;
	autosync_feedback_baseline_t baselines[AUTOSYNC_FEEDBACK_MAX_BASELINES];
	size_t nmeasured; /* kept step times (the first ones) */
	double measured[AUTOSYNC_FEEDBACK_MAX_MEASURED]; /* s per step */
	uint64_t measured_count; /* all reported steps */
	double measured_mean;	 /* over all reported steps, 0 none */
	/* the plan the report says its steps ran with ("" not said); read
	 * from the report, never written to a record: the plugin drops a
	 * measurement of another plan */
	char report_plan_hash[17];
	/* the analytic simulator's breakdown of 'predicted' (enum
	 * autosync_term), when have_terms: every value finite and >= 0 */
	double terms[AUTOSYNC_TERM_N];
	int have_terms;
	/* a plan of a learned simulator: its file's hash and the corrected
	 * prediction ("" and 0 otherwise); predicted stays the analytic one,
	 * which is what a simulator learns to correct */
	char simulator_hash[17];
	double learned;
	unsigned influenced; /* AUTOSYNC_FEEDBACK_F_* bits: what the job's
			      * user could influence */
	unsigned version;    /* the format it was read in (0: made here) */
} autosync_feedback_rec_t;

/*
 * Check 'parts' (AUTOSYNC_FEEDBACK_PART_*) of a record: the identity (time,
 * source, job >= 1, node) and model, plan hash, framework and strategy not
 * empty; nodes, GPUs per node and each bucket's tensors at least 1; the
 * predicted step and every measured one within AUTOSYNC_FEEDBACK_MIN_STEP ..
 * AUTOSYNC_FEEDBACK_MAX_STEP seconds; the measurement counts consistent.
 * 0, or -1 with EINVAL and "field 'NAME': why" in errp.
 */
int autosync_feedback_check(const autosync_feedback_rec_t *r, unsigned parts,
			    autosync_error_t *errp);

/*
 * Fill the plan's side of 'r' from 'plan': model and its hash, topology
 * hash, plan hash, framework, strategy, cluster, prediction, buckets,
 * baselines and, for a plan made here (not read from a file), the terms.
 * The job's identity and measurements are left as they are.
 */
int autosync_feedback_set_plan(autosync_feedback_rec_t *r,
			       const autosync_plan_t *plan,
			       autosync_error_t *errp);

/*
 * Format 'r' as one JSON line ending in '\n', in the current version. '*line'
 * is malloc'ed (the caller frees it). Every string is escaped (control
 * characters too: a record is always one line); strings that are not UTF-8
 * and records that fail autosync_feedback_check() are refused (EINVAL).
 */
int autosync_feedback_format(const autosync_feedback_rec_t *r, char **line,
			     size_t *len, autosync_error_t *errp);

/*
 * Parse one line written by autosync_feedback_format(), of this version or
 * version 1 (r->version says which), checked as autosync_feedback_check()
 * does. A required key missing, a key given twice, a value of the wrong
 * type: EINVAL, "field 'NAME': why" or "not JSON: why" in errp. Keys this
 * version does not know are ignored (newer writers stay readable).
 */
int autosync_feedback_parse(const char *line, size_t len,
			    autosync_feedback_rec_t *r, autosync_error_t *errp);

/* The same for only some parts of a record (the planning child sends the
 * plan's side; slurmstepd adds the job's). */
int autosync_feedback_format_part(const autosync_feedback_rec_t *r,
				  unsigned parts, char **line, size_t *len,
				  autosync_error_t *errp);
int autosync_feedback_parse_part(const char *line, size_t len, unsigned parts,
				 autosync_feedback_rec_t *r,
				 autosync_error_t *errp);

/*
 * Append 'line' to the log at 'path' in one write(2) under an exclusive
 * flock(2), so that concurrent writers on any node of a shared (local or
 * lock-honouring) file system never interleave or lose a record. When the
 * file would grow past 'max_bytes' it is rotated first: path.(keep-1) is
 * dropped, path.N becomes path.N+1, path becomes path.1 (keep == 0: the
 * log is truncated instead). Symbolic links are not followed. The file is
 * created mode 0640.
 */
int autosync_feedback_append(const char *path, const char *line, size_t len,
			     size_t max_bytes, unsigned keep,
			     autosync_error_t *errp);

/*
 * Parse what a job wrote to its report file (AUTOSYNC_REPORT): one step
 * time in seconds per line ("# ..." comments and blank lines ignored) into
 * r's measured fields: the first AUTOSYNC_FEEDBACK_MAX_MEASURED values, the
 * count and the mean of all; a line "plan_hash HEX16" (the plan the steps
 * ran with; every such line the same) into r->report_plan_hash. Step times
 * are taken within AUTOSYNC_FEEDBACK_MIN_STEP .. AUTOSYNC_FEEDBACK_MAX_STEP
 * (what a record takes). Returns the number of values, or -1 (EINVAL) on a
 * malformed line ("line N: ...; the K step(s) before it are kept"): the
 * report ends there, and r holds the steps before it, count and mean
 * consistent, so that the record can still be written.
 */
int autosync_feedback_parse_report(const char *buf, autosync_feedback_rec_t *r,
				   autosync_error_t *errp);
/*
 * The same from a descriptor, as the file streams (the whole file is never
 * held in memory), reading at most 'max' bytes: when the report is longer,
 * the steps of its first 'max' bytes are kept, *truncated is set (may be
 * NULL) and errp says so; the return is still the number of values.
 */
int autosync_feedback_read_report(int fd, size_t max,
				  autosync_feedback_rec_t *r, int *truncated,
				  autosync_error_t *errp);

/* Called per record; a non-zero return stops the reading (and is returned). */
typedef int (*autosync_feedback_each_f)(const autosync_feedback_rec_t *r,
					void *arg);
/*
 * Read every record of 'path' in order. Malformed and invalid lines are
 * reported through 'bad' (may be NULL) as "PATH:LINE: why" (why naming the
 * field) and skipped. Returns 0,
 * the callback's non-zero value, or -1 when the file cannot be read.
 */
int autosync_feedback_read(const char *path, autosync_feedback_each_f fn,
			   void *arg, void (*bad)(const char *msg, void *arg),
			   autosync_error_t *errp);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_FEEDBACK_H */
