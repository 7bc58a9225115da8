/* internal.h - shared by the planner's sources; not installed. */
#ifndef AUTOSYNC_PLANNER_INTERNAL_H
#define AUTOSYNC_PLANNER_INTERNAL_H

#include <stdint.h>
#include <yaml.h>

#include "autosync/planner.h"
#include "common/ykeys.h"

/* ------------------------------------------------------------ YAML input */
/* Load one document for a planner reader (nodes bounded by the tensor
 * limit; an empty document is an error); 'r' is set up from scratch. */
int planner_yload(asi_yreader_t *r, const char *buf, size_t len,
		  const char *fname, autosync_error_t *errp);
/* The same from the regular file 'path' of at most 'max' bytes. */
int planner_yload_file(asi_yreader_t *r, const char *path, size_t max,
		       autosync_error_t *errp);

/* ------------------------------------------------------------ hashing */
#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL
static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= FNV_PRIME;
	}
	return h;
}

/* ------------------------------------------------------------ models */
struct autosync_model {
	char *name;
	char *framework;
	char *source;
	unsigned batch;
	unsigned tokens;
	unsigned format;     /* the file's format version, 0 = made here */
	int compute_src;     /* 0 estimated, 1 flops, 2 time */
	double step_compute; /* s of forward + backward measured, 0 = none */
	int step_compute_fb; /* 1: step_compute from the site's feedback (a
				learned simulator file), not the caller */
	double grad_scale;   /* gradients are this many times smaller than the
				model's (autosync_model_scale), 1 = full size */
	size_t n, cap;
	autosync_tensor_t *t;
	size_t nl, lcap;
	autosync_layer_compute_t *l;
	/* name -> tensor index, open addressing */
	size_t *ht;
	size_t htcap;
	size_t *lht;
	size_t lhtcap;
	uint64_t params, bytes;
	char hash[17];
	int hash_valid;
};

/* ------------------------------------------------------------ plans */
struct plan_bucket {
	autosync_bucket_t b;
	char **names;
	int *server;
};

/* Owned strings behind the public views (freed as char *). */
typedef autosync_plan_baseline_t plan_baseline_t;
typedef autosync_var_t plan_env_t;

struct autosync_plan {
	autosync_plan_summary_t s;
	unsigned format; /* the file's format version, 0 = made here */
	char *model, *model_hash, *framework, *strategy, *reason, *topo_hash;
	char *costs_hash;
	char *simulator_hash; /* the learned simulator's file, NULL none */
	double terms[AUTOSYNC_TERM_N];
	int have_terms; /* made here, not read from a file */
	size_t nb;
	struct plan_bucket *b;
	size_t nbase;
	plan_baseline_t *base;
	size_t nenv;
	plan_env_t *env;
	/* variables the environment already had, so not set (written by
	 * whoever applies the plan; not part of the hash) */
	size_t nskipped;
	char **skipped;
	/* the NCCL table for the tuner plugin (autosync_plan_derive_nccl) */
	size_t nnccl;
	autosync_nccl_rule_t *nccl;
	/* compute timeline for pictures: per layer backward end times */
	char hash[17];
};

/* ------------------------------------------------------------ simulator */
struct simctx {
	const autosync_model_t *m;
	autosync_cluster_t c;
	autosync_costs_t k;
	int fw;
	/* size knobs (bucket caps, fusion thresholds) are multiplied by this:
	 * 1 / the model's gradient scale, so that a scaled-down trial model
	 * keeps the bucket count its full-size job has; 1 = absolute knobs */
	double knob;
	unsigned p, nodes, g;
	double a_in, b_in, a_out, b_node, b_out;
	double t_fwd, t_bwd, t_opt;
	double *ready;		       /* per tensor */
	size_t *order;		       /* ready order -> tensor */
	double *layer_fwd, *layer_bwd; /* per layer, s per step */
	double *scratch;	       /* 3 x nodes */
	double ar_a[AUTOSYNC_ALGO_NALGOS],
	    ar_b[AUTOSYNC_ALGO_NALGOS]; /* t = a + b n */
};

struct bcfg {
	int kind, algo, compress;
	unsigned servers;
	int local_agg, local_repl;
	int densify;   /* all-reduce sparse tensors as dense gradients */
	unsigned rank; /* PowerSGD's rank r (compress POWERSGD) */
};

struct strategy {
	size_t nb, cap;
	struct bcfg *cfg;
	size_t *tb;  /* tensor -> bucket */
	int *server; /* tensor -> PS server or AUTOSYNC_NO_SERVER */
	int job_algo, job_compress;
	unsigned job_rank; /* PowerSGD's rank when job_compress is PowerSGD */
	double bucket_cap, first_bucket, cycle;
	char name[64];
};

struct simres {
	size_t nb;
	double step, bound, comm_total;
	double *ready, *start, *end, *comm, *bytes, *wire;
	size_t *border;		    /* timeline order -> bucket */
	size_t *cnt, *first, *list; /* CSR bucket -> tensors (ready order) */
	double *nodet;		    /* per node: a PS bucket's time there */
	unsigned nnodes;
	double terms[AUTOSYNC_TERM_N]; /* planner_simulate(..., detail = 1) */
};

/* The links as the simulator sees them: latencies (s) and achieved
 * bandwidths (B/s: per GPU inside a node, all NICs of a node) after the
 * cost constants' overrides, efficiencies and oversubscription. */
void planner_links(const autosync_cluster_t *c, const autosync_costs_t *k,
		   double *a_in, double *a_out, double *b_in, double *b_node);
/* the bandwidth a ring over all ranks gets (the slowest link it crosses) */
double planner_link_bw(const autosync_cluster_t *c, double b_in, double b_node);
int planner_simctx_init(struct simctx *x, const autosync_model_t *m,
			const autosync_cluster_t *c, const autosync_costs_t *k,
			int fw, autosync_error_t *errp);
void planner_simctx_free(struct simctx *x);
/* time of an all-reduce of n bytes with 'algo' on the context's cluster */
double planner_sim_ar_time(const struct simctx *x, int algo, double n);
/* per-bucket cost beyond one collective call of an all-reduce bucket with
 * 'algo' (DDP's hierarchical hook: hier_bucket) */
double planner_sim_bucket_extra(const struct simctx *x, int algo);
/* what 16-bit compression adds to a bucket: 'cast' bytes cast there and
 * back, 'half' 16-bit bytes reduced */
double planner_sim_cast_time(const struct simctx *x, double cast, double half);
int planner_strategy_init(struct strategy *s, size_t ntensors);
void planner_strategy_free(struct strategy *s);
int planner_strategy_copy(struct strategy *dst, const struct strategy *src,
			  size_t nt);
/* new bucket, returns its index or -1 */
long planner_strategy_add_bucket(struct strategy *s, const struct bcfg *cfg);
int planner_simulate(const struct simctx *x, const struct strategy *s,
		     struct simres *r, int detail);
void planner_simres_free(struct simres *r);
/* build a plan from a simulated strategy */
autosync_plan_t *planner_plan_from_strategy(const struct simctx *x,
					    const struct strategy *s,
					    const struct simres *r,
					    const char *reason,
					    autosync_error_t *errp);
int planner_build_baseline(const struct simctx *x, int b, struct strategy *s,
			   autosync_error_t *errp);
int planner_build_capped(const struct simctx *x, struct strategy *s,
			 double first, double cap, const struct bcfg *cfg);
int planner_build_horovod(const struct simctx *x, struct strategy *s,
			  double threshold, double cycle,
			  const struct bcfg *cfg);
/* time of one bucket made of tensors list[0..n) */
double planner_sim_bucket_time(const struct simctx *x, const struct bcfg *cfg,
			       const size_t *list, size_t n, const int *server);
void planner_plan_set_env(const struct simctx *x, const struct strategy *s,
			  autosync_plan_t *plan);

/* a random valid strategy, simulated (trial.c) */
autosync_plan_t *planner_random_plan(const autosync_model_t *m,
				     const autosync_cluster_t *c,
				     const autosync_costs_t *k, int fw,
				     int allow_compress, int space,
				     uint64_t seed, autosync_error_t *errp);

char *planner_xstrdup(const char *s);
int planner_plan_compute_hash(autosync_plan_t *plan);
/* point the public summary at the plan's own strings (after building or
 * reading a plan) */
void planner_plan_sync(autosync_plan_t *plan);
int planner_plan_add_env(autosync_plan_t *plan, const char *name,
			 const char *value);

#endif
