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

#define AUTOSYNC_FEEDBACK_VERSION 1
/* Bounds that keep one record a few KiB to a few hundred KiB. */
#define AUTOSYNC_FEEDBACK_MAX_MEASURED 256
#define AUTOSYNC_FEEDBACK_MAX_BUCKETS 1024
#define AUTOSYNC_FEEDBACK_MAX_BASELINES 16
/* Longest line autosync_feedback_read() accepts. */
#define AUTOSYNC_FEEDBACK_MAX_LINE (512 * 1024)

typedef struct autosync_feedback_bucket {
	char kind[16];      /* "allreduce" | "ps" */
	char algo[16];      /* "ring", "tree", "hier", "auto", "" for PS */
	char compress[8];   /* "none", "fp16", "bf16" */
	unsigned servers;   /* PS shards, 0 for all-reduce */
	unsigned tensors;   /* tensors in the bucket */
	double bytes;       /* gradient bytes per rank */
} autosync_feedback_bucket_t;

typedef struct autosync_feedback_baseline {
	char name[32];
	double predicted;   /* s */
} autosync_feedback_baseline_t;

/* One record; a plain value type (zero it, then fill what is known). */
typedef struct autosync_feedback_rec {
	int64_t time;            /* seconds since the epoch (UTC) */
	char source[16];         /* "plugin", "bench" */
	uint64_t job, step;      /* step 4294967291 = batch script */
	char user[64];
	uint32_t uid;
	char node[64];
	unsigned nodes, gpus_per_node;
	char model[256];
	char model_hash[17], topo_hash[17], plan_hash[17];
	char framework[32];
	char strategy[64];
	char cluster[256];       /* the cluster the plan was made for, as an
				  * autosync_cluster_parse() spec */
	double scale;            /* gradient sizes divided by this (trial runs
				  * on scaled models); 0 or 1 = full size */
	double predicted;        /* s per step, 0 unknown */
	size_t nbuckets;
	autosync_feedback_bucket_t buckets[AUTOSYNC_FEEDBACK_MAX_BUCKETS];
	size_t nbaselines;
	autosync_feedback_baseline_t baselines[AUTOSYNC_FEEDBACK_MAX_BASELINES];
	size_t nmeasured;        /* kept step times (the first ones) */
	double measured[AUTOSYNC_FEEDBACK_MAX_MEASURED]; /* s per step */
	uint64_t measured_count; /* all reported steps */
	double measured_mean;    /* over all reported steps, 0 none */
} autosync_feedback_rec_t;

/*
 * Fill the plan's side of 'r' from 'plan': model and its hash, topology
 * hash, plan hash, framework, strategy, cluster, prediction, buckets and
 * baselines. The job's identity and measurements are left as they are.
 */
int autosync_feedback_set_plan(autosync_feedback_rec_t *r,
			       const autosync_plan_t *plan,
			       autosync_error_t *errp);

/*
 * Format 'r' as one JSON line ending in '\n'. '*line' is malloc'ed (the
 * caller frees it). Strings with control characters are refused (EINVAL):
 * a record is always one line.
 */
int autosync_feedback_format(const autosync_feedback_rec_t *r, char **line,
			     size_t *len, autosync_error_t *errp);

/* Parse one line written by autosync_feedback_format(). */
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
