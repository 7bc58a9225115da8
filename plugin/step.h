/*
 * step.h - what the plugin does for one job step on one node, without
 * Slurm: read the allocated topology, read the model, plan, write the plan
 * and the NCCL topology file into the job directory, and work out the
 * environment of the tasks. spank_autosync.c feeds it from SPANK and
 * applies the result; the unit tests feed it fixtures.
 */
#ifndef AUTOSYNC_PLUGIN_STEP_H
#define AUTOSYNC_PLUGIN_STEP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "autosync/feedback.h"
#include "autosync/siteconf.h"
#include "autosync/topology.h"

#define AS_MAX_LOCAL_RANKS 64
#define AS_MAX_RANK_ENV 8
#define AS_MAX_JOB_ENV 32

struct as_step_in {
	const char *model;        /* catalog name or path; "" = none */
	const autosync_siteconf_t *site; /* NULL: built-in defaults */
	const char *plan_file;    /* --autosync=PATH, or NULL to plan */
	uint32_t nnodes;          /* nodes in the step (>= 1) */
	uid_t uid;                /* the job's user (file ownership checks) */
	const char *cuda_visible_devices, *step_gpus, *job_gpus; /* may be NULL */
	const char *cwd;          /* for relative model/plan paths; may be NULL */
	const char *jobdir;       /* existing job directory (user-owned) */
	/* directory of libnccl-{tuner,profiler}-autosync.so to point NCCL
	 * at, or NULL (then the site's nccl_plugins/nccl_plugin_dir decide) */
	const char *nccl_plugin_dir;
	/* 1 if the step's environment already has 'name' (set by the user) */
	int (*has_env)(const char *name, void *arg);
	void *env_arg;
};

struct as_env {
	char name[64];
	char value[PATH_MAX + 64];
};

struct as_step_out {
	/* job-wide variables, set in every task */
	size_t nenv;
	struct as_env env[AS_MAX_JOB_ENV];
	/* per local rank (GPU r of the allocation) */
	unsigned nranks;
	size_t rank_nenv[AS_MAX_LOCAL_RANKS];
	autosync_env_t rank_env[AS_MAX_LOCAL_RANKS][AS_MAX_RANK_ENV];
	/* variables left alone because the user set them */
	size_t nskipped;
	char skipped[AS_MAX_JOB_ENV + AS_MAX_RANK_ENV][64];
	char plan_path[PATH_MAX];
	char plan_hash[17], topo_hash[17];
	double plan_ms;           /* wall time spent planning */
	char summary[4096];       /* one screen, for --autosync-explain */
	autosync_feedback_rec_t rec; /* prefilled feedback record */
	char err[1024];           /* why it failed (one line, no prefix) */
};

/* Returns 0, or -1 with out->err set. 'out' must be zeroed by the caller
 * (it is large: allocate it). */
int as_step_plan(const struct as_step_in *in, struct as_step_out *out);

/* Parse what the job wrote to AUTOSYNC_REPORT: one step time in seconds
 * per line ("# ..." comments and blank lines ignored) into rec's
 * measured fields. Returns the number of values, or -1 on a malformed
 * line (message in err). */
int as_step_parse_report(const char *buf, autosync_feedback_rec_t *rec,
			 char *err, size_t errlen);

#endif
