/*
 * launch.h - 'autosync launch': the exec wrapper for places without the
 * SPANK plugin (mpirun, containers, Kubernetes pods). The environment is
 * decided by plugin/step.c's as_step_plan(), exactly as in the plugin;
 * this adds what only a wrapper knows: the local rank from the usual
 * variables, a private job directory, and the NCCL plugin variables.
 */
#ifndef AUTOSYNC_NCCL_LAUNCH_H
#define AUTOSYNC_NCCL_LAUNCH_H

#include <stddef.h>
#include <stdio.h>

struct as_launch_opts {
	const char *plan_file;	/* --plan, or NULL */
	const char *model;	/* --model, or NULL */
	const char *config;	/* site config; NULL = the default if present */
	const char *dir;	/* job directory; NULL = $TMPDIR/autosync-... */
	unsigned nnodes;	/* 0 = from the environment */
	int local_rank;		/* -1 = from the environment */
	int tuner, profiler;	/* set NCCL_TUNER_PLUGIN / NCCL_PROFILER_PLUGIN */
	const char *plugin_dir; /* NULL = $AUTOSYNC_NCCL_PLUGIN_DIR or libdir */
	FILE *log;		/* messages ("autosync: ..."); NULL = quiet */
	FILE *explain;		/* the plan summary goes here; NULL = not */
};

/* The local rank from SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK,
 * LOCAL_RANK, MPI_LOCALRANKID, PMIX_RANK (first set wins); 0 if none.
 * '*src' (may be NULL) gets the variable's name or "default". */
int as_launch_local_rank(const char **src);

/* Nodes of the job from SLURM_NNODES, OMPI_COMM_WORLD_SIZE /
 * OMPI_COMM_WORLD_LOCAL_SIZE, PET_NNODES, WORLD_SIZE / LOCAL_WORLD_SIZE;
 * 1 if none. */
unsigned as_launch_nnodes(void);

/* The directory holding the two plugins (option, environment, libdir). */
const char *as_launch_plugin_dir(const struct as_launch_opts *o);

/*
 * Plan (as_step_plan) and set this process's environment: the job-wide
 * variables, this local rank's variables, NCCL_TUNER_PLUGIN and
 * NCCL_PROFILER_PLUGIN (when the plugin files exist and the user did not
 * set them), AUTOSYNC_LOCAL_RANK and AUTOSYNC_INJECTED. Variables the
 * user set are left alone (those listed in an inherited AUTOSYNC_INJECTED
 * are not the user's). Returns 0, or -1 with a one-line reason in 'err'
 * (environment untouched then).
 */
int as_launch_prepare(const struct as_launch_opts *o, char *err,
		      size_t errlen);

#endif
