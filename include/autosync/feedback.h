/*
 * autosync/feedback.h - feedback records: what was planned, what was
 * predicted and what was measured, one per job step and node, so that the
 * simulator can be retrained. Records are JSON lines (written with libyaml,
 * so every line is also a YAML flow mapping), appended to a log that many
 * nodes and jobs share.
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

/* Record format. 2: required fields and ranges are checked on write and on
 * read, and records say what the job's user could influence. Version 1
 * records are read too (rec.version says which). */
#define AUTOSYNC_FEEDBACK_VERSION 2
/* Step times a record may hold: 1 us .. 1 h. */
#define AUTOSYNC_FEEDBACK_MIN_STEP 1e-6
#define AUTOSYNC_FEEDBACK_MAX_STEP 3600.0

/* What in a record the job's user could have influenced (rec.influenced), so
 * that training can weigh or drop it. Written as "user_influenced": a list
 * of these names. */
enum {
	AUTOSYNC_FEEDBACK_USER_MEASURED = 1 << 0, /* "measured": step times
						     come from a file the job
						     writes */
	AUTOSYNC_FEEDBACK_USER_MODEL = 1 << 1,	  /* "model": a model file of
						     the user's (model, hash,
						     and the plan made from
						     it) */
	AUTOSYNC_FEEDBACK_USER_PLAN = 1 << 2,	  /* "plan": a plan file of the
						     user's */
	AUTOSYNC_FEEDBACK_USER_ENV = 1 << 3,	  /* "env": the job kept
						     variables of its own over
						     the plan's */
	AUTOSYNC_FEEDBACK_USER_UNKNOWN = 1 << 4,  /* "unknown": a version 1
						     record, which does not
						     say */
};
/* Bounds that keep one record a few KiB to a few hundred KiB. */
#define AUTOSYNC_FEEDBACK_MAX_MEASURED 256
#define AUTOSYNC_FEEDBACK_MAX_BUCKETS 1024
#define AUTOSYNC_FEEDBACK_MAX_BASELINES 16
/* Longest line autosync_feedback_read() accepts. */
#define AUTOSYNC_FEEDBACK_MAX_LINE (512 * 1024)

typedef struct autosync_feedback_bucket {
	char kind[16];	  /* "allreduce" | "ps" */
	char algo[16];	  /* "ring", "tree", "hier", "auto", "" for PS */
	char compress[8]; /* "none", "fp16", "bf16" */
	unsigned servers; /* PS shards, 0 for all-reduce */
	unsigned tensors; /* tensors in the bucket */
	double bytes;	  /* gradient bytes per rank */
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
	double predicted;  /* s per step, 0 unknown */
	size_t nbuckets;
	autosync_feedback_bucket_t buckets[AUTOSYNC_FEEDBACK_MAX_BUCKETS];
	size_t nbaselines;
	autosync_feedback_baseline_t baselines[AUTOSYNC_FEEDBACK_MAX_BASELINES];
	size_t nmeasured; /* kept step times (the first ones) */
	double measured[AUTOSYNC_FEEDBACK_MAX_MEASURED]; /* s per step */
	uint64_t measured_count; /* all reported steps */
	double measured_mean;	 /* over all reported steps, 0 none */
	unsigned influenced;	 /* AUTOSYNC_FEEDBACK_USER_* bits */
	unsigned version;	 /* the format it was read in (0: made here) */
} autosync_feedback_rec_t;

/*
 * Check a complete record: time, source, node, model, plan hash, framework,
 * strategy present; nodes and GPUs per node >= 1; the predicted step and
 * every measured one within AUTOSYNC_FEEDBACK_MIN_STEP ..
 * AUTOSYNC_FEEDBACK_MAX_STEP seconds; counts consistent. 0, or -1 with
 * EINVAL and the field named in errp.
 */
int autosync_feedback_check(const autosync_feedback_rec_t *r,
			    autosync_error_t *errp);

/*
 * Fill the plan's side of 'r' from 'plan': model and its hash, topology
 * hash, plan hash, framework, strategy, cluster, prediction, buckets and
 * baselines. The job's identity and measurements are left as they are.
 */
int autosync_feedback_set_plan(autosync_feedback_rec_t *r,
			       const autosync_plan_t *plan,
			       autosync_error_t *errp);

/*
 * Format 'r' as one JSON line ending in '\n' (the current version). '*line'
 * is malloc'ed (the caller frees it). A record that fails
 * autosync_feedback_check() or holds strings with control characters is
 * refused (EINVAL): a record is always one valid line.
 */
int autosync_feedback_format(const autosync_feedback_rec_t *r, char **line,
			     size_t *len, autosync_error_t *errp);

/* Parse one line written by autosync_feedback_format(), of this version or
 * the previous one, checked as autosync_feedback_check() does; a key given
 * twice, or missing, is an error. */
int autosync_feedback_parse(const char *line, size_t len,
			    autosync_feedback_rec_t *r, autosync_error_t *errp);

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
 * count and the mean of all. Returns the number of values, or -1 (EINVAL)
 * on a malformed line ("line N: ...").
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
 * Read every record of 'path' in order. Malformed lines are reported
 * through 'bad' (may be NULL) as "PATH:LINE: why" and skipped. Returns 0,
 * the callback's non-zero value, or -1 when the file cannot be read.
 */
int autosync_feedback_read(const char *path, autosync_feedback_each_f fn,
			   void *arg, void (*bad)(const char *msg, void *arg),
			   autosync_error_t *errp);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_FEEDBACK_H */
