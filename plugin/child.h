/*
 * child.h - plan one step in a child process. The job pipeline runs there
 * as the job's user, under a wall-clock deadline and an address-space cap;
 * slurmstepd only reads back a bounded result and checks it again. So no
 * input (a model that takes minutes to expand, YAML that is slow to parse,
 * a file that blocks) holds a step start longer than the site's budget
 * (and 0.2 s to see the child gone; one stuck in the kernel is left),
 * and nothing the pipeline loads runs inside slurmstepd itself. Pure POSIX
 * plus the job pipeline: no Slurm, unit-tested.
 */
#ifndef AUTOSYNC_PLUGIN_CHILD_H
#define AUTOSYNC_PLUGIN_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "autosync/common.h"
#include "autosync/siteconf.h"

/* The pipeline's warnings a child passes on (the first ones). */
#define AS_CHILD_MAX_WARNINGS 4

/* Largest result a child may send back (variables, summary, record). */
#define AS_CHILD_MAX_RESULT (1u << 20)

struct as_child_in {
	const autosync_siteconf_t *site; /* NULL: built-in defaults */
	const char *model;		 /* catalog name or path; "" none */
	const char *plan_file;		 /* --autosync=PATH, or NULL */
	int compress;			 /* the job allows compression */
	unsigned nnodes;		 /* nodes in the step (>= 1) */
	unsigned ntasks;		 /* tasks on this node, 0 unknown */
	const char *cwd;		 /* for relative paths; may be NULL */
	const char *jobdir;		 /* the user's job directory */
	char *const *env; /* the job's environment, NAME=VALUE; borrowed */
	uid_t uid;	  /* the child runs as uid:gid (dropped for good) */
	gid_t gid;
	unsigned deadline_ms; /* the child is killed after this */
	size_t max_memory;    /* its address space, bytes; 0 = no cap */
};

struct as_child_var {
	char *name, *value;
};

struct as_child_out {
	size_t nenv; /* every task's variables */
	struct as_child_var *env;
	unsigned nranks; /* each local rank's: rank_env[r][0..rank_n[r]) */
	size_t *rank_n;
	struct as_child_var **rank_env;
	char plan_hash[17], topo_hash[17];
	double plan_ms;	 /* the search */
	double total_ms; /* fork to result, as the parent saw it */
	char *summary;	 /* for --autosync-explain */
	char *record;	 /* the feedback record's plan side, one JSON line */
	/* what the pipeline planned without, and why (for the node's log) */
	size_t nwarnings;
	char *warnings[AS_CHILD_MAX_WARNINGS];
};

/*
 * Plan in a child and fill 'out' (zero it first; free it with
 * as_child_out_free()). Returns 0, or -1 with a one-line reason in 'err':
 * the pipeline's own error, "planning did not finish within the site's
 * budget of N ms", the child's death by a signal, or a result that does
 * not parse or names a variable a plan may not set.
 */
int as_child_plan(const struct as_child_in *in, struct as_child_out *out,
		  autosync_error_t *err);
void as_child_out_free(struct as_child_out *out);

/* Parse what a child sent (the parent's side of the protocol; exposed for
 * the fuzz target): 0, or -1 with 'err' (then 'out' holds what was read
 * before the problem: free it). */
int as_child_parse_result(const char *buf, size_t len, struct as_child_out *out,
			  autosync_error_t *err);

/* A variable of 'out' (job-wide), or NULL. */
const char *as_child_env(const struct as_child_out *out, const char *name);

#endif
