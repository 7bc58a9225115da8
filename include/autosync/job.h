/*
 * autosync/job.h - the job pipeline: what autosync does when a job starts
 * on a node, in one place, for every adapter (the SPANK plugin, `autosync
 * plan`, `autosync launch`).
 *
 *   site config + options + the job's environment
 *     -> topology (loaded, fabric NICs applied, restricted to the job's GPUs)
 *     -> model (catalog or the user's file, read safely)
 *     -> cluster (defaults < site network < options < node topology)
 *     -> plan (searched, a baseline, or the user's plan file)
 *     -> the environment of every task (job-wide and per local rank)
 *     -> files in the job directory (plan, NCCL topology XML)
 *
 * Same inputs, same plan bytes, same environment, whoever calls it.
 *
 * Conventions as in autosync/common.h: 0 / -1 (or a pointer / NULL) with
 * errno; 'errp' may always be NULL; nothing here prints (notes go to the
 * log callback); nothing here knows Slurm.
 *
 * Typical use:
 *	autosync_job_t *j = autosync_job_create(&err);
 *	autosync_job_set_site(j, site, &err);
 *	autosync_job_set_model(j, "resnet50", &err);
 *	autosync_job_set_nodes(j, 4, &err);
 *	autosync_job_set_getenv(j, my_getenv, arg);
 *	autosync_job_set_dir(j, "/run/autosync/job.1", &err);
 *	if (autosync_job_run(j, &err) < 0 ||
 *	    autosync_job_write_files(j, &err) < 0)
 *		...;
 *	for (size_t i = 0; i < autosync_job_nenv(j); i++) {
 *		const autosync_var_t *v = autosync_job_env(j, i);
 *		setenv(v->name, v->value, 1);
 *	}
 *	autosync_job_destroy(j);
 */
#ifndef AUTOSYNC_JOB_H
#define AUTOSYNC_JOB_H

#include <stddef.h>
#include <sys/types.h>

#include "autosync/common.h"
#include "autosync/feedback.h"
#include "autosync/planner.h"
#include "autosync/siteconf.h"
#include "autosync/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* File names inside a job directory. */
#define AUTOSYNC_JOB_PLAN_FILE "plan.yaml"
#define AUTOSYNC_JOB_TOPO_FILE "nccl-topo.xml"
#define AUTOSYNC_JOB_REPORT_FILE "report"
/* the job's own feedback record (one JSON line), kept with the plan */
#define AUTOSYNC_JOB_FEEDBACK_FILE "feedback.json"

/* Bounds of what a job may set. */
#define AUTOSYNC_JOB_MAX_ENV 32	    /* job-wide variables */
#define AUTOSYNC_JOB_MAX_RANKS 1024 /* local ranks with their own variables */
#define AUTOSYNC_JOB_MAX_PLAN_BYTES (16u << 20) /* a user's plan file */

typedef struct autosync_job autosync_job_t;

/* The job's environment: the value of 'name', or NULL when unset. The
 * result is read before the next call. */
typedef const char *(*autosync_getenv_f)(const char *name, void *arg);

/* A new job with every default: no site config (built-in defaults), no
 * model, the process's own environment (getenv), the topology of
 * the site config or else of this machine, GPUs from the environment. The
 * caller frees it with autosync_job_destroy(). */
autosync_job_t *autosync_job_create(autosync_error_t *errp);
/* Accepts NULL. */
void autosync_job_destroy(autosync_job_t *j);
/* Notes (a plugin file that is not there, ...); 'arg' is passed through. */
void autosync_job_set_log(autosync_job_t *j, autosync_log_f fn, void *arg);

/* ------------------------------------------------------------- inputs */
/* Every string is copied. Setters fail with EINVAL on bad arguments and
 * EBUSY after autosync_job_run(). */

/* The site config; borrowed, must outlive 'j'. NULL: built-in defaults. */
int autosync_job_set_site(autosync_job_t *j, const autosync_siteconf_t *site,
			  autosync_error_t *errp);
/* The model: a catalog name or a path ('/' or a .yaml/.yml suffix). Paths
 * are the user's files: read with the caller's credentials, relative to
 * the working directory, never through a symbolic link, at most the site's
 * max_model_bytes. */
int autosync_job_set_model(autosync_job_t *j, const char *spec,
			   autosync_error_t *errp);
/* The catalog directory searched first (default: the site's catalog_dir,
 * then autosync_model_open()'s search path). */
int autosync_job_set_catalog_dir(autosync_job_t *j, const char *dir,
				 autosync_error_t *errp);
/* Use this plan file instead of planning (read like a model file). */
int autosync_job_set_plan_file(autosync_job_t *j, const char *path,
			       autosync_error_t *errp);
/* Emit this baseline (enum autosync_baseline) instead of searching. */
int autosync_job_set_baseline(autosync_job_t *j, int baseline,
			      autosync_error_t *errp);
/* Nodes in the job (>= 1; default: the cluster description's, 4 unless
 * autosync_job_set_network() names them). */
int autosync_job_set_nodes(autosync_job_t *j, unsigned nodes,
			   autosync_error_t *errp);
/* Tasks on this node (0 = unknown, the default). Fewer tasks than GPUs
 * means a task hosts several GPU ranks (torchrun under srun): then no rank
 * gets a NIC or path choice of its own, only what is right for the whole
 * node (the plan, the topology file). */
int autosync_job_set_tasks_per_node(autosync_job_t *j, unsigned tasks,
				    autosync_error_t *errp);
/* Working directory for relative paths (default: none; paths as given). */
int autosync_job_set_cwd(autosync_job_t *j, const char *cwd,
			 autosync_error_t *errp);
/* The job's environment (default: getenv). Read for CUDA_VISIBLE_DEVICES,
 * SLURM_STEP_GPUS, SLURM_JOB_GPUS, AUTOSYNC_INJECTED, and to leave alone
 * every variable the user set (those an earlier autosync listed in
 * AUTOSYNC_INJECTED are not the user's). */
void autosync_job_set_getenv(autosync_job_t *j, autosync_getenv_f fn,
			     void *arg);
/*
 * The node topology: "live" (this machine, through hwloc), "none" (no
 * node topology: the cluster is the site network and
 * autosync_job_set_network() alone), or the path of an hwloc or NCCL
 * topology XML file. Default (NULL): the site's topology_xml, else "live".
 */
int autosync_job_set_topology(autosync_job_t *j, const char *source,
			      autosync_error_t *errp);
/* The GPUs of the topology the job has, CUDA_VISIBLE_DEVICES syntax, or
 * "all". Default (NULL): from the job's environment, as Slurm sets it. */
int autosync_job_set_gpus(autosync_job_t *j, const char *list,
			  autosync_error_t *errp);
/* A compact cluster description (autosync_cluster_update()) applied over
 * the site's network; the node topology still fills the node part. */
int autosync_job_set_network(autosync_job_t *j, const char *spec,
			     autosync_error_t *errp);
/* Override the GPUs (ranks) per node the topology gives (0: keep). */
int autosync_job_set_gpus_per_node(autosync_job_t *j, unsigned gpus,
				   autosync_error_t *errp);
/* The framework (enum autosync_framework); default: the model's, else the
 * site's default_framework. */
int autosync_job_set_framework(autosync_job_t *j, int fw,
			       autosync_error_t *errp);
/* A learned simulator file (autosync train): the planner ranks its best
 * candidates by the corrected step times. Default (NULL): the site's
 * 'simulator'; "" or "none": the analytic model alone. A file or module
 * that cannot be loaded is a warning, and the analytic model plans. */
int autosync_job_set_simulator(autosync_job_t *j, const char *path,
			       autosync_error_t *errp);
/* The module that loads it (default: the site's simulator_module). */
int autosync_job_set_simulator_module(autosync_job_t *j, const char *path,
				      autosync_error_t *errp);
/* Cost constants file (default: the site's calibration). */
int autosync_job_set_calibration(autosync_job_t *j, const char *path,
				 autosync_error_t *errp);
/* Allow fp16/bf16 gradient compression (default 0). */
int autosync_job_set_compression(autosync_job_t *j, int allow,
				 autosync_error_t *errp);
/* Mark the plan for NCCL latency recalibration (default: the site's
 * nccl_calibrate). 0/1; -1 = the site's. */
int autosync_job_set_nccl_calibrate(autosync_job_t *j, int on,
				    autosync_error_t *errp);
/* Search budget in simulator evaluations (0: the planner's default). */
int autosync_job_set_budget(autosync_job_t *j, unsigned long evals,
			    autosync_error_t *errp);
/* Per-GPU batch size (0: the model file's). */
int autosync_job_set_batch(autosync_job_t *j, unsigned batch,
			   autosync_error_t *errp);
/* A measured step's forward + backward compute, in seconds (0: none; see
 * autosync_model_set_step_compute). */
int autosync_job_set_step_compute(autosync_job_t *j, double seconds,
				  autosync_error_t *errp);

/* Which of autosync's NCCL plugins the tasks are pointed at. */
enum {
	AUTOSYNC_JOB_TUNER = 1 << 0,	/* NCCL_TUNER_PLUGIN */
	AUTOSYNC_JOB_PROFILER = 1 << 1, /* NCCL_PROFILER_PLUGIN */
};
/* Point NCCL at the plugins ('which': AUTOSYNC_JOB_* bits) found in 'dir'.
 * Default: both from the site's nccl_plugin_dir when the site enables
 * nccl_plugins, else none. A plugin file that is not there is left out
 * (with a note). */
int autosync_job_set_nccl_plugins(autosync_job_t *j, const char *dir, int which,
				  autosync_error_t *errp);
/* The job directory: the files go there and the environment names them.
 * Default: none (autosync_job_write_files() fails; paths are shown as
 * "<jobdir>/..."). */
int autosync_job_set_dir(autosync_job_t *j, const char *dir,
			 autosync_error_t *errp);

/* ---------------------------------------------------------------- run */
/* Load, plan and decide the environment. Writes no file. Errors name what
 * failed ("model: ...", "topology: ...", "plan file ...") in 'errp'. */
int autosync_job_run(autosync_job_t *j, autosync_error_t *errp);
/* Write the plan and, when the job has GPUs, the NCCL topology XML into
 * the job directory (atomically, never through a symbolic link). */
int autosync_job_write_files(autosync_job_t *j, autosync_error_t *errp);

/* ------------------------------------------------------------- outputs */
/* Valid after a successful autosync_job_run(), owned by 'j'. */
const autosync_plan_t *autosync_job_plan(const autosync_job_t *j);
/* NULL when the job has no node topology ("none"). */
const autosync_topo_t *autosync_job_topology(const autosync_job_t *j);
/* NULL when the plan came from a plan file. */
const autosync_model_t *autosync_job_model(const autosync_job_t *j);

/* Variables set in every task; item i or NULL past the end. */
size_t autosync_job_nenv(const autosync_job_t *j);
const autosync_var_t *autosync_job_env(const autosync_job_t *j, size_t i);
/* Local ranks with variables of their own (the GPUs of the node's view;
 * 1 on a GPU-less node with a fabric NIC; 0 when none). */
unsigned autosync_job_nranks(const autosync_job_t *j);
/* Variables of the task with local rank 'rank' (taken modulo the ranks). */
size_t autosync_job_rank_nenv(const autosync_job_t *j, unsigned rank);
const autosync_var_t *autosync_job_rank_env(const autosync_job_t *j,
					    unsigned rank, size_t i);
/* Variables left alone because the user had set them. */
size_t autosync_job_nskipped(const autosync_job_t *j);
const char *autosync_job_skipped(const autosync_job_t *j, size_t i);
/* The topology's hash, "" without one. */
const char *autosync_job_topo_hash(const autosync_job_t *j);
/* Milliseconds the search took (0 for a plan file). */
double autosync_job_plan_ms(const autosync_job_t *j);
/* A few lines for --autosync-explain, each starting "autosync: ". */
const char *autosync_job_summary(const autosync_job_t *j);
/* The plan's side of a feedback record (model, hashes, strategy, cluster,
 * buckets, prediction, baselines); the caller adds the job's identity and
 * the measurement. */
int autosync_job_feedback(const autosync_job_t *j, autosync_feedback_rec_t *r,
			  autosync_error_t *errp);

/*
 * 1 when the job pipeline may set 'name' in a task, else 0: what a plan
 * may set (autosync_plan_env_allowed()) and the pipeline's own variables
 * (AUTOSYNC_PLAN, AUTOSYNC_PLAN_HASH, AUTOSYNC_TOPO_HASH, AUTOSYNC_REPORT,
 * AUTOSYNC_INJECTED, NCCL_TOPO_FILE, NCCL_TUNER_PLUGIN,
 * NCCL_PROFILER_PLUGIN); with 'per_rank', the NIC and path choices of one
 * local rank (NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_NET_GDR_LEVEL,
 * NCCL_P2P_LEVEL). For adapters that receive an environment from another
 * process and check it before a task gets it.
 */
int autosync_job_env_allowed(const char *name, int per_rank);

/* ------------------------------------------------------ job directories */
/*
 * Make 'base'/'name' a directory owned by uid:gid, mode 0700 (creating it,
 * or accepting an existing one only if it is exactly that and no symbolic
 * link). 'base' must be an absolute path to an existing directory owned
 * by root or by uid. When others may write to 'base' (a sticky /tmp), the
 * name gets a random suffix ("name.Xy3k9QzA") and is always created anew,
 * so that nobody can create it first. The full path is written to 'out'.
 */
int autosync_jobdir_create(const char *base, const char *name, uid_t uid,
			   gid_t gid, char *out, size_t outlen,
			   autosync_error_t *errp);
/* Make sure the runtime directory 'path' exists (created 0755 when its
 * parent exists) and that root alone owns and writes it. */
int autosync_jobdir_base(const char *path, autosync_error_t *errp);
/* Remove the entries of 'dir' (subdirectories emptied down to 8 levels)
 * and the directory itself, without following any symbolic link. Best
 * effort, and bounded: a directory of more than 10,000 entries is left for
 * autosync_jobdir_prune(). */
void autosync_jobdir_remove(const char *dir);
/*
 * Hold the job directory 'dir' for as long as the returned descriptor (a
 * shared flock(2) on it) stays open: autosync_jobdir_prune() leaves a held
 * directory alone, however old. With 'inherit' the descriptor stays open
 * across exec, so that the program a launcher becomes holds it; otherwise
 * it is close-on-exec. -1 with errno when it cannot be opened or locked.
 * The caller owns the descriptor: autosync_jobdir_release() or close().
 */
int autosync_jobdir_hold(const char *dir, int inherit);
/* Give up a held directory at the end of its step (closes 'fd'): its age,
 * which autosync_jobdir_prune() compares with max_age, counts from now. */
void autosync_jobdir_release(int fd);
/* Write 'data' to 'dir'/'name' atomically (a temporary file created with
 * O_EXCL | O_NOFOLLOW, then renamed); mode 0644. */
int autosync_jobdir_write(const char *dir, const char *name, const void *data,
			  size_t len, autosync_error_t *errp);
/* Remove 'name' from 'dir' (not following a link), if there. */
void autosync_jobdir_unlink(const char *dir, const char *name);
/*
 * Remove the job directories in 'base' whose name is 'prefix' followed by
 * a digit (e.g. "autosync-" and "autosync-1000-..." but not
 * "autosync-launch-..."), owned by 'owner' ((uid_t) -1: anyone), not
 * modified for more than 'max_age' seconds and not held
 * (autosync_jobdir_hold(): the step still runs): at most 'max_remove' of
 * them, looking at no more than 'max_scan' entries and deleting at most
 * 10,000 entries (subdirectories down to 8 levels), so that a step start
 * stays bounded (a directory left
 * partly emptied keeps its age and goes on at the next call). Returns how
 * many were removed.
 */
unsigned autosync_jobdir_prune(const char *base, const char *prefix,
			       uid_t owner, long max_age, unsigned max_remove,
			       unsigned max_scan);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_JOB_H */
