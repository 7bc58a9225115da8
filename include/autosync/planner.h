/*
 * autosync/planner.h - models, the cost model, the simulator, baselines,
 * the deterministic search and plan files.
 *
 * Conventions (see autosync/common.h): functions return 0 / -1 (or a
 * pointer / NULL; the formula functions a negative value) and set errno;
 * 'errp' may always be NULL; nothing here prints (log callback only); no
 * global state. Units: bytes, seconds, bytes per second, FLOP.
 *
 * Typical use:
 *	autosync_model_t *m = autosync_model_open("resnet50", NULL, &err);
 *	autosync_planner_t *p = autosync_planner_create(&err);
 *	autosync_planner_set_cluster(p, &cluster, &err);
 *	autosync_planner_set_model(p, m, &err);
 *	autosync_plan_t *plan = autosync_planner_run(p, &err);
 *	autosync_plan_write(plan, stdout, &err);
 *	autosync_plan_destroy(plan); autosync_planner_destroy(p);
 *	autosync_model_destroy(m);
 */
#ifndef AUTOSYNC_PLANNER_H
#define AUTOSYNC_PLANNER_H

#include <stdint.h>
#include <stdio.h>

#include "autosync/cluster.h"
#include "autosync/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ================================================================ models */

enum autosync_dtype {
	AUTOSYNC_DT_FLOAT32 = 0,
	AUTOSYNC_DT_FLOAT16,
	AUTOSYNC_DT_BFLOAT16,
	AUTOSYNC_DT_FLOAT64,
	AUTOSYNC_DT_INT64,
	AUTOSYNC_DT_INT32,
	AUTOSYNC_DT_INT8,
	AUTOSYNC_DT_UINT8,
	AUTOSYNC_DT_NTYPES
};

/* "float32", ...; static storage; NULL when out of range. */
const char *autosync_dtype_name(int dtype);
/* Accepts the names above and the aliases fp32 fp16 bf16 fp64 float half
 * double; -1 (EINVAL) otherwise. */
int autosync_dtype_from_name(const char *name);
/* Bytes per element; 0 when out of range. */
unsigned autosync_dtype_size(int dtype);

#define AUTOSYNC_MAX_DIMS 8
/* Limits enforced by every loader (documented in docs/model-format.md). */
#define AUTOSYNC_MAX_TENSORS 200000ULL		    /* 2 x 10^5 tensors */
#define AUTOSYNC_MAX_TENSOR_ELEMS 1000000000000ULL  /* 10^12 per tensor */
#define AUTOSYNC_MAX_MODEL_ELEMS 100000000000000ULL /* 10^14 in all */
/* The largest model file the loaders read (a site's max_model_bytes may
 * only be lower). */
#define AUTOSYNC_MAX_MODEL_BYTES (256ULL << 20)
/* The model file format this autosync writes; readers take it and the
 * version before it (when there is one). */
#define AUTOSYNC_MODEL_VERSION 1

/* One parameter tensor; a read-only view owned by its model. */
typedef struct autosync_tensor {
	const char *name;  /* unique within the model */
	const char *layer; /* module path that owns it */
	int dtype;	   /* enum autosync_dtype */
	unsigned ndim;	   /* 0 (scalar) .. AUTOSYNC_MAX_DIMS */
	int64_t shape[AUTOSYNC_MAX_DIMS];
	int sparse;	       /* 1: sparse (embedding-row) gradient */
	uint64_t rows_touched; /* sparse: rows per step per rank */
	uint64_t numel;	       /* product of shape */
	size_t layer_index;    /* index into the model's layers */
} autosync_tensor_t;

/* Per-layer compute, for ONE sample (flops) or one step (times, seconds).
 * A value < 0 means "not given". */
typedef struct autosync_layer_compute {
	const char *name;
	double fwd_flops;
	double bwd_flops; /* < 0: bwd_fwd_ratio x fwd_flops */
	double fwd_time;  /* s per step; overrides the flops */
	double bwd_time;
	uint64_t params; /* elements of the layer's tensors */
} autosync_layer_compute_t;

typedef struct autosync_model autosync_model_t;

/* An empty model; 'name' is copied. The caller frees it with
 * autosync_model_destroy(). */
autosync_model_t *autosync_model_create(const char *name,
					autosync_error_t *errp);
/* Append a tensor; strings and 'shape' are copied. 'layer' may be NULL
 * (then the tensor name minus its last ".component"). Errors: EINVAL
 * (bad dtype, dims < 1, too many dims, rows > dim0), EEXIST (duplicate
 * name), EOVERFLOW (limits above), ENOMEM. */
int autosync_model_add_tensor(autosync_model_t *m, const char *name,
			      const char *layer, int dtype, unsigned ndim,
			      const int64_t *shape, int sparse,
			      uint64_t rows_touched, autosync_error_t *errp);
/* Set a layer's forward/backward FLOPs per sample (bwd < 0: default
 * ratio); the layer must exist (ENOENT). */
int autosync_model_set_layer_flops(autosync_model_t *m, const char *layer,
				   double fwd_flops, double bwd_flops,
				   autosync_error_t *errp);
/* Per-GPU batch size (default 32) and tokens per sample (default 1; used
 * only to estimate FLOPs as 2 x params x tokens when a layer has none). */
int autosync_model_set_batch(autosync_model_t *m, unsigned batch,
			     unsigned tokens_per_sample,
			     autosync_error_t *errp);

/* Load a model file (docs/model-format.md). Errors name the file, the line
 * and the offending value. The caller owns the result. */
autosync_model_t *autosync_model_load(const char *path, autosync_error_t *errp);
/* The same from memory; 'fname' is used in messages only. */
autosync_model_t *autosync_model_parse(const char *buf, size_t len,
				       const char *fname,
				       autosync_error_t *errp);
/* The format version of the file a model was read from (a previous one
 * is read too: a caller may note it), or 0 for a model built in memory. */
unsigned autosync_model_format_version(const autosync_model_t *m);
/*
 * 'spec' is a path (it contains '/' or ends in ".yaml"/".yml") or a catalog
 * name. Catalog search path: 'catalog_dir' when not NULL, then the
 * environment variable AUTOSYNC_CATALOG_DIR, then AUTOSYNC_DATADIR/models.
 * ENOENT with the directories searched in the message.
 */
autosync_model_t *autosync_model_open(const char *spec, const char *catalog_dir,
				      autosync_error_t *errp);
/* Names of the catalog models in every existing directory of the search
 * path (the models autosync_model_open() finds by name), sorted, each
 * once: '*names' holds '*count' names (and a NULL after them); the caller
 * frees it with autosync_catalog_free(). ENOENT when no directory exists. */
int autosync_catalog_list(const char *catalog_dir, char ***names, size_t *count,
			  autosync_error_t *errp);
void autosync_catalog_free(char **names);

/*
 * A copy of 'm' whose gradients are 'scale' (>= 1) times smaller: dense
 * tensors become 1-D with ceil(numel/scale) elements, sparse tensors keep
 * their row width and get ceil(rows/scale) rows and ceil(rows_touched/
 * scale) touched rows. Compute is unchanged (every layer keeps its FLOPs
 * per sample, batch and tokens), so on a network 'scale' times slower the
 * compute/communication ratio is that of the original model. Named
 * "NAME@1/SCALE" (scale 1: an identical copy named NAME). The caller frees
 * it with autosync_model_destroy().
 */
autosync_model_t *autosync_model_scale(const autosync_model_t *m, double scale,
				       autosync_error_t *errp);
/* How many times smaller than the original its gradients are: 1 for a model
 * read or built here, the product of the scales for a scaled copy. */
double autosync_model_grad_scale(const autosync_model_t *m);

void autosync_model_destroy(autosync_model_t *m);

/* Accessors; returned pointers live as long as the model. */
const char *autosync_model_name(const autosync_model_t *m);
const char *autosync_model_framework(const autosync_model_t *m); /* "" */
unsigned autosync_model_batch(const autosync_model_t *m);
unsigned autosync_model_tokens(const autosync_model_t *m); /* per sample */
size_t autosync_model_ntensors(const autosync_model_t *m);
const autosync_tensor_t *autosync_model_tensor(const autosync_model_t *m,
					       size_t i);
/* The rows of sparse tensor T that 'ranks' ranks touch together in a step:
 * the expected number of distinct rows when each touches rows_touched of
 * shape[0] rows drawn uniformly, V (1 - (1 - r/V)^ranks), rounded, at least
 * r and at most min(V, ranks x r). It is what a node's local aggregation
 * of a sparse gradient holds; the simulator and the trial runtime both use
 * it. rows_touched for a dense tensor or ranks <= 1. */
uint64_t autosync_tensor_rows_union(const autosync_tensor_t *T, unsigned ranks);
size_t autosync_model_nlayers(const autosync_model_t *m);
const autosync_layer_compute_t *autosync_model_layer(const autosync_model_t *m,
						     size_t i);
uint64_t autosync_model_params(const autosync_model_t *m); /* elements */
uint64_t autosync_model_bytes(const autosync_model_t *m);
/* "flops", "time", "measured" (autosync_model_set_step_compute),
 * "feedback" (autosync_model_set_feedback_compute) or "estimated" (FLOPs
 * from parameter counts: 2 x parameters x tokens per sample, far too low
 * for convolutions and attention). */
const char *autosync_model_compute_source(const autosync_model_t *m);
/* A measured step's forward + backward compute time, in seconds (0 to
 * 3600; 0 = none): every layer's time is scaled so that they add up to it,
 * keeping their proportions. The optimizer is not included. */
int autosync_model_set_step_compute(autosync_model_t *m, double seconds,
				    autosync_error_t *errp);
/* The same with compute the site measured for this model (a learned
 * simulator file's, autosync_corrector_t.sample_compute x the batch): the
 * plan's reason says where it came from. */
int autosync_model_set_feedback_compute(autosync_model_t *m, double seconds,
					autosync_error_t *errp);
/* 16 hex digits: FNV-1a 64 of the canonical tensor list; static per model. */
const char *autosync_model_hash(const autosync_model_t *m);

/* ============================================================ cost model */

/*
 * Every constant of the simulator. autosync_costs_default() fills the
 * documented defaults (docs/planner.md); a calibration file (YAML mapping
 * of these field names) replaces any subset. The link latencies and
 * bandwidths come from the autosync_cluster_t; the *_override fields,
 * when > 0, replace them.
 */
typedef struct autosync_costs {
	double launch;	  /* s per collective call (launch + sync) 15e-6 */
	double intra_eff; /* fraction of intra_bw achieved        0.80 */
	double inter_eff; /* fraction of NIC bandwidth achieved   0.90 */
	double alpha_intra_override; /* s, 0 = cluster intra_lat */
	double alpha_inter_override; /* s, 0 = cluster inter_lat */
	double bw_intra_override;    /* B/s, 0 = cluster intra_bw */
	double bw_nic_override;	     /* B/s per NIC, 0 = cluster nic_bw */
	double gamma;	      /* s per byte reduced on the GPU          0 */
	double gpu_flops;     /* effective FLOP/s of one GPU        100e12 */
	double bwd_fwd_ratio; /* backward / forward FLOPs               2 */
	double cast_bw;	      /* B/s read by a fp32<->16-bit cast   1.0e12 */
	double cast_launch;   /* s per cast kernel                     5e-6 */
	double ps_update_bw;  /* B/s a PS server sums on its CPU      20e9 */
	double ps_msg;	      /* s per PS request per server           20e-6 */
	double host_bw;	      /* B/s GPU<->host copy (PS on one node) 20e9 */
	double opt_bw; /* B/s of parameters the optimizer updates 400e9 */
	double
	    sparse_index_bytes; /* bytes per row index                    8 */
	double uncertainty;	/* relative model uncertainty (no-harm)  0.02 */
	/* No-harm margins: a plan replaces the framework's default only when
	 * predicted faster by more than the margin of every family it belongs
	 * to (docs/planner.md, "No harm"); wider where measurements showed
	 * the simulator optimistic. */
	double
	    margin_small_buckets;  /* many buckets < small_bucket_bytes 0.05 */
	double margin_ps;	   /* parameter server buckets          0.25 */
	double margin_tree;	   /* explicit tree all-reduce          0.05 */
	double margin_compression; /* 16-bit compressed buckets         0.20 */
	double small_bucket_bytes; /* a "small" bucket, bytes         1 MiB */
	double oversubscription;   /* fabric uplink oversubscription when the
				      job spans more than nodes_per_switch
				      nodes (divides the NIC bandwidth)  1 */
	/* NCCL protocol/channel model (autosync_sim_nccl) */
	double nccl_channel_bw;	   /* B/s one NCCL channel moves      12e9 */
	double nccl_max_channels;  /* channels NCCL can use at most     32 */
	double nccl_channel_slack; /* fewest channels within this factor
				      of the best time                0.05 */
	/* s per byte of 16-bit data reduced, beyond gamma, added to the
	 * transfer (measured where it runs: how much a link hides varies):
	 * reductions on a CPU (gloo) convert every fp16/bf16 element, GPUs
	 * do not                                                       0 */
	double gamma_half;
	/* s per bucket DDP's hierarchical hook (contrib/pytorch: 2g + 1
	 * subgroup collectives) takes beyond a flat bucket's one call;
	 * measured for gloo on CPUs, 0 until measured on GPUs          0 */
	double hier_bucket;
	/* no-harm margin of DDP's hierarchical hook (contrib/pytorch), whose
	 * optimism the DDP peer measures, not the MPI bench's tree  0.50 */
	double margin_ddp_hier;
} autosync_costs_t;

void autosync_costs_default(autosync_costs_t *k);
/* Read a calibration file: a YAML mapping "field: number" over the fields
 * above; fields not named keep their value in *k. Unknown fields,
 * non-numbers and out-of-range values fail (EINVAL) naming file, line and
 * value; *k is written only on success. */
int autosync_costs_load(autosync_costs_t *k, const char *path,
			autosync_error_t *errp);
int autosync_costs_parse(autosync_costs_t *k, const char *buf, size_t len,
			 const char *fname, autosync_error_t *errp);

/* ============================================================ formulas */
/*
 * Hockney alpha-beta times of one collective (cost-models.md section 2):
 * p ranks, n bytes per rank, alpha s per message, bw B/s. They return a
 * value < 0 with errno EINVAL on p == 0, n < 0, alpha < 0, bw <= 0 or a
 * non-finite value; p == 1 gives 0.
 */
double autosync_sim_ring(unsigned p, double n, double alpha, double bw);
double autosync_sim_rabenseifner(unsigned p, double n, double alpha, double bw);
double autosync_sim_recursive_doubling(unsigned p, double n, double alpha,
				       double bw);
double autosync_sim_binary_tree(unsigned p, double n, double alpha, double bw);
double autosync_sim_double_tree(unsigned p, double n, double alpha, double bw);
/* NCCL's double binary tree as it runs on m nodes of g ranks: two binary
 * trees over the nodes, a chain through each node's ranks, alpha on each
 * of the 2 log2(m g) hops; the bandwidth term is the busier of a node's NIC
 * (bw_node) and the chain's links (bw_in, 2 n / bw_in when g > 1). A node
 * link carries 2 n, except on m == 2 nodes, where the two trees are two
 * opposite one-flow chains and it carries n: on two nodes NCCL's tree goes
 * up to twice a ring's speed over the network. m == 1: the chain alone,
 * 2 n / bw_in. Errors as above (m == 0, g == 0, bw_in or bw_node <= 0). */
double autosync_sim_node_tree(unsigned m, unsigned g, double n, double alpha,
			      double bw_in, double bw_node);
/* all-gather / reduce-scatter, n = size of the full buffer */
double autosync_sim_allgather(unsigned p, double n, double alpha, double bw);
/* 2-level: m nodes x g GPUs; bw_out = per-GPU share of the node's NICs */
double autosync_sim_hier(unsigned m, unsigned g, double n, double a_in,
			 double bw_in, double a_out, double bw_out);
/* Parameter servers co-located on k of the m nodes (one worker per node,
 * full-duplex links of bw B/s, gradient of M bytes per worker, shares
 * load[0..k-1] bytes summing to M): the bandwidth term
 * max over nodes of max(bytes out, bytes in) / bw. */
double autosync_sim_ps_colocated(unsigned m, unsigned k, const double *load,
				 double bw);

/* =================================================== NCCL's collectives */
/*
 * What the NCCL tuner plugin applies per collective: NCCL's own indices
 * (ncclFunc_t; the tuner ABI's algorithm and protocol indices).
 */
enum autosync_nccl_func {
	AUTOSYNC_NCCL_BROADCAST = 0,
	AUTOSYNC_NCCL_REDUCE,
	AUTOSYNC_NCCL_ALLGATHER,
	AUTOSYNC_NCCL_REDUCESCATTER,
	AUTOSYNC_NCCL_ALLREDUCE,
	AUTOSYNC_NCCL_NFUNCS
};
enum autosync_nccl_algo {
	AUTOSYNC_NCCL_TREE = 0,
	AUTOSYNC_NCCL_RING,
	AUTOSYNC_NCCL_COLLNET_DIRECT,
	AUTOSYNC_NCCL_COLLNET_CHAIN,
	AUTOSYNC_NCCL_NVLS,
	AUTOSYNC_NCCL_NVLS_TREE,
	AUTOSYNC_NCCL_PAT,
	AUTOSYNC_NCCL_NALGOS
};
enum autosync_nccl_proto {
	AUTOSYNC_NCCL_LL = 0,
	AUTOSYNC_NCCL_LL128,
	AUTOSYNC_NCCL_SIMPLE,
	AUTOSYNC_NCCL_NPROTOS
};
/* "broadcast".."allreduce", "tree".."pat", "ll" "ll128" "simple"; "?" when
 * out of range. from_name: case-insensitive, -1 (EINVAL) when unknown. */
const char *autosync_nccl_func_name(int func);
const char *autosync_nccl_algo_name(int algo);
const char *autosync_nccl_proto_name(int proto);
int autosync_nccl_func_from_name(const char *name);
int autosync_nccl_algo_from_name(const char *name);
int autosync_nccl_proto_from_name(const char *name);

/*
 * Predicted time (s) of one NCCL collective of 'bytes' (NCCL's nBytes: the
 * full buffer for all-gather / reduce-scatter) on cluster 'c' with
 * algorithm 'algo' (tree or ring), protocol 'proto' and 'channels'
 * channels: NCCL's own model (cost-models.md section 7) with the link
 * latencies and bandwidths of 'c' as calibrated by 'k' in place of NCCL's
 * built-in constants (docs/planner.md, "NCCL protocols and channels").
 * 0 for one rank. -1 with errno EINVAL on bad arguments, ENOTSUP for an
 * algorithm NCCL does not offer for 'func' or that autosync does not model.
 */
double autosync_sim_nccl(const autosync_cluster_t *c, const autosync_costs_t *k,
			 int func, int algo, int proto, unsigned channels,
			 double bytes);

/* ========================================================== strategies */

enum autosync_sync_kind { AUTOSYNC_SYNC_ALLREDUCE = 0, AUTOSYNC_SYNC_PS };
enum autosync_algo {
	AUTOSYNC_ALGO_AUTO = 0, /* NCCL chooses: modelled as min(ring, tree) */
	AUTOSYNC_ALGO_RING,
	AUTOSYNC_ALGO_TREE,
	AUTOSYNC_ALGO_HIER, /* 2-level: intra ring, inter ring per rail */
	AUTOSYNC_ALGO_NALGOS
};
enum autosync_compress {
	AUTOSYNC_COMPRESS_NONE = 0,
	AUTOSYNC_COMPRESS_FP16,
	AUTOSYNC_COMPRESS_BF16,
	/* PowerSGD (Vogels et al. 2019): each matrix gradient n x m is sent
	 * as P (n x r) and Q (m x r), with error feedback; PyTorch DDP's hook
	 * only (no other framework, not autosync's own runtime) */
	AUTOSYNC_COMPRESS_POWERSGD,
	AUTOSYNC_COMPRESS_N
};
/* Framework capability sets (docs/planner.md has the table). */
enum autosync_framework {
	AUTOSYNC_FW_GENERIC = 0, /* everything the plan format can say but
				    PowerSGD (autosync's runtime lacks it) */
	AUTOSYNC_FW_PYTORCH_DDP, /* all-reduce; bucket cap + first bucket;
				    job-level algo incl. hierarchical (a comm
				    hook); fp16/bf16 or PowerSGD hook */
	AUTOSYNC_FW_HOROVOD,  /* all-reduce; fusion threshold + cycle; job-level
				 algo incl. hierarchical; fp16 */
	AUTOSYNC_FW_AUTODIST, /* PS and all-reduce per tensor, groups, no
				 compression */
	AUTOSYNC_FW_N
};
const char *autosync_algo_name(int algo);      /* "auto", "ring", ... */
int autosync_algo_from_name(const char *name); /* -1 EINVAL */
const char *autosync_compress_name(int c); /* "none" "fp16" "bf16" "powersgd" */
int autosync_compress_from_name(const char *name);
const char *autosync_framework_name(
    int fw); /* "generic", "pytorch-ddp", "horovod", "autodist" */
int autosync_framework_from_name(
    const char *name); /* also "pytorch", "ddp", "tensorflow" */

/* The built-in baselines, in this order. */
enum autosync_baseline {
	AUTOSYNC_BASELINE_DDP = 0,	 /* "ddp-default" */
	AUTOSYNC_BASELINE_HOROVOD,	 /* "horovod-default" */
	AUTOSYNC_BASELINE_PS_LB,	 /* "ps-loadbalanced" */
	AUTOSYNC_BASELINE_PARALLAX,	 /* "parallax" */
	AUTOSYNC_BASELINE_AR_PER_TENSOR, /* "allreduce-per-tensor" */
	AUTOSYNC_BASELINE_N
};
const char *autosync_baseline_name(int b);
int autosync_baseline_from_name(const char *name);
/* 1 when framework 'fw' can execute baseline 'b'. */
int autosync_baseline_applicable(int b, int fw);
/* What framework 'fw' does when nobody tunes it: the incumbent every plan
 * must beat (ddp-default for generic and pytorch-ddp, horovod-default,
 * parallax for autodist); -1 with EINVAL for an unknown framework. */
int autosync_baseline_default(int fw);

/* ============================================================== planner */

typedef struct autosync_planner autosync_planner_t;
typedef struct autosync_plan autosync_plan_t;

/* Defaults: framework generic, autosync_costs_default(), compression not
 * allowed, evaluation budget 20000. Caller frees with
 * autosync_planner_destroy(). */
autosync_planner_t *autosync_planner_create(autosync_error_t *errp);
void autosync_planner_destroy(autosync_planner_t *p);
/* 'fn' is called with borrowed messages; 'arg' is passed through. */
void autosync_planner_set_log(autosync_planner_t *p, autosync_log_f fn,
			      void *arg);
/* Copied. EINVAL on zero nodes/GPUs or non-positive bandwidths. */
int autosync_planner_set_cluster(autosync_planner_t *p,
				 const autosync_cluster_t *c,
				 autosync_error_t *errp);
/* Borrowed: 'm' must outlive every later call on 'p' (plans do not keep
 * it). EINVAL on an empty model. */
int autosync_planner_set_model(autosync_planner_t *p, const autosync_model_t *m,
			       autosync_error_t *errp);
/* Copied. EINVAL on a non-positive bandwidth or FLOP rate. */
int autosync_planner_set_costs(autosync_planner_t *p, const autosync_costs_t *k,
			       autosync_error_t *errp);
int autosync_planner_set_framework(autosync_planner_t *p, int fw,
				   autosync_error_t *errp);
/* Allow lossy gradient compression: fp16/bf16, and PowerSGD where the
 * framework runs it (opt-in; default 0). */
void autosync_planner_set_compression(autosync_planner_t *p, int allow);
/* Mark plans (job.nccl_calibrate) so that the NCCL tuner plugin also
 * rescales NCCL's own latency constants to the plan's calibrated links
 * (docs/nccl-plugins.md; opt-in, default 0). */
void autosync_planner_set_nccl_calibrate(autosync_planner_t *p, int on);
/* For a scaled-down trial model (autosync_model_scale) the size knobs --
 * the baselines' bucket cap, first bucket and fusion threshold, the search's
 * bucket-cap grid and the small-bucket margin's threshold -- are divided by
 * the model's gradient scale, so that every strategy keeps the bucket count
 * it has at full size (default, 'scaled' = 1). 0 keeps them absolute: the
 * trial runs' comparison before 2026-12-03, which gave the baselines a few
 * huge buckets. No effect on a full-size model. */
void autosync_planner_set_scaled_knobs(autosync_planner_t *p, int scaled);
/* Search budget in simulator evaluations (not wall time, so that every
 * node computes the same plan); >= 1. */
int autosync_planner_set_budget(autosync_planner_t *p, unsigned long evals,
				autosync_error_t *errp);

/* Search. Returns a new plan: the framework's default
 * (autosync_baseline_default) unless another plan is predicted faster than
 * it by more than that plan's no-harm margin (autosync_costs_t margin_*);
 * the caller frees it with
 * autosync_plan_destroy(). Deterministic: same inputs, same plan bytes. */
autosync_plan_t *autosync_planner_run(autosync_planner_t *p,
				      autosync_error_t *errp);
/* One named baseline's plan, simulated (a new plan, caller frees). */
autosync_plan_t *autosync_planner_baseline(autosync_planner_t *p, int baseline,
					   autosync_error_t *errp);
/* Where autosync_planner_random() draws from. */
enum {
	/* the dataset's space (the default): tensors in ready order cut
	 * into 1..64 contiguous buckets one after another (so the first
	 * ones are large); each bucket PS one time in 3 */
	AUTOSYNC_RANDOM_NARROW = 0,
	/* the planner's: 1..tensors buckets with uniformly drawn boundaries
	 * (buckets of like size) and per strategy a PS share of 0, 1/4 .. 1,
	 * so that plans like the planner's picks (all PS or all all-reduce,
	 * a hundred buckets or more) occur */
	AUTOSYNC_RANDOM_WIDE,
};
/* EINVAL on a value not above. */
int autosync_planner_set_random_space(autosync_planner_t *p, int space,
				      autosync_error_t *errp);
/*
 * A random valid strategy for the planner's model and cluster, under its
 * framework and compression setting and its random space, simulated with
 * its costs: contiguous buckets of tensors in ready order, each bucket
 * all-reduce (ring, tree or hierarchical; fp16/bf16 only when compression
 * is allowed) or, where the framework allows it, PS with 1..nodes
 * servers, random local aggregation/replication and random per-tensor
 * placement. Same seed and space, same plan. Named "random-SEED"
 * (narrow) or "random-wide-SEED". For trial runs (autosync bench); the
 * caller frees it.
 */
autosync_plan_t *autosync_planner_random(autosync_planner_t *p, uint64_t seed,
					 autosync_error_t *errp);
/*
 * The simulator's compute times for the planner's model (s per step):
 * forward, backward, optimizer, and per layer in layer_fwd[i] and
 * layer_bwd[i] (arrays of autosync_model_nlayers() entries). Any output
 * may be NULL.
 */
int autosync_planner_compute_times(autosync_planner_t *p, double *forward,
				   double *backward, double *optimizer,
				   double *layer_fwd, double *layer_bwd,
				   autosync_error_t *errp);
/*
 * Strategy families, each with its own no-harm margin: how far the
 * simulator was seen to be optimistic for it (autosync_costs_t margin_*,
 * or a learned simulator's held-out error). A strategy belongs to the
 * all-reduce family and to every other family one of its buckets is in;
 * its margin is the widest of theirs.
 */
enum autosync_family {
	AUTOSYNC_FAMILY_ALLREDUCE = 0, /* "bucketed all-reduce" */
	AUTOSYNC_FAMILY_COMPRESSION,   /* "compression" */
	AUTOSYNC_FAMILY_PS,	       /* "parameter server" */
	AUTOSYNC_FAMILY_TREE,	       /* "tree all-reduce" */
	AUTOSYNC_FAMILY_DDP_HIER,      /* "DDP hierarchical hook" */
	AUTOSYNC_FAMILY_SMALL_BUCKETS, /* "many small buckets" */
	AUTOSYNC_FAMILY_N
};
/* NULL outside 0 .. AUTOSYNC_FAMILY_N - 1. */
const char *autosync_family_name(int family);

/*
 * A learned correction of the simulator (a simulator file: learn/, loaded
 * by the job pipeline). With one, the search still runs on the analytic
 * model; its best few candidates of every family and the baselines are
 * then ranked by their corrected step times, each family with the margin
 * the corrector gives it, and the plan records the corrector's hash.
 * "Best few": AUTOSYNC_ELITES per family, by the analytic prediction.
 */
#define AUTOSYNC_ELITES 4
typedef struct autosync_corrector {
	/* Corrected step times: candidate i has the analytic breakdown
	 * terms[i * AUTOSYNC_TERM_N ...] and the analytic prediction
	 * step[i] on cluster 'c'; out[i] gets its corrected step (s).
	 * 0, or -1 with errno: the planner then keeps the analytic plan. */
	int (*correct)(void *arg, const autosync_cluster_t *c, size_t n,
		       const double *terms, const double *step, double *out);
	/* The no-harm margin of 'family' (0 .. 0.99) from the corrector's
	 * held-out error; < 0: the cost constants' margin. May be NULL. */
	double (*margin)(void *arg, int family);
	/* Forward + backward compute per sample (s) measured for the model
	 * of this hash (autosync_model_hash), or < 0 when not known. May be
	 * NULL. */
	double (*sample_compute)(void *arg, const char *model_hash);
	void *arg;
	char hash[17]; /* 16 hex digits of the simulator file */
} autosync_corrector_t;
/*
 * The loadable module that turns a simulator file into a corrector
 * (learn/'s simulator.so, linked with XGBoost). The job pipeline dlopen()s
 * it in the planning process only, so that neither srun nor slurmstepd
 * ever maps the learning libraries; the symbol AUTOSYNC_SIMULATOR_SYMBOL
 * is an autosync_simulator_module_t of abi AUTOSYNC_SIMULATOR_ABI.
 */
#define AUTOSYNC_SIMULATOR_ABI 3
#define AUTOSYNC_SIMULATOR_SYMBOL "autosync_simulator_module"
typedef struct autosync_simulator_module {
	unsigned abi;
	/* A handle from a simulator file's bytes ('name' for messages), or
	 * NULL with a one-line reason in err[errlen]. */
	void *(*load)(const void *buf, size_t len, const char *name, char *err,
		      size_t errlen);
	/* autosync_corrector_t's, with the handle as 'arg' */
	int (*correct)(void *h, const autosync_cluster_t *c, size_t n,
		       const double *terms, const double *step, double *out);
	double (*margin)(void *h, int family);
	void (*destroy)(void *h);
	/* abi 2: autosync_corrector_t's sample_compute */
	double (*sample_compute)(void *h, const char *model_hash);
	/* abi 3: terms[] rows are AUTOSYNC_TERM_N wide with the *_bytes
	 * terms (no new member) */
} autosync_simulator_module_t;

/*
 * A simulator file loaded through 'module' (the path of learn/'s
 * autosync-simulator.so): the file is read once (at most 64 MiB), hashed
 * (autosync_hash_hex of its bytes) and given to the module. NULL with a
 * one-line reason naming the file in 'errp' (the caller plans with the
 * analytic model). The corrector lives as long as the handle; destroy it
 * after the planner that uses it.
 */
typedef struct autosync_simulator autosync_simulator_t;
autosync_simulator_t *autosync_simulator_load(const char *path,
					      const char *module,
					      autosync_error_t *errp);
const autosync_corrector_t *
autosync_simulator_corrector(const autosync_simulator_t *s);
void autosync_simulator_destroy(autosync_simulator_t *s);

/* Copied ('arg' stays the caller's; it must outlive the planner's use);
 * NULL plans with the analytic model alone (the default). EINVAL on a
 * corrector without 'correct' or without a 16-hex-digit hash. */
int autosync_planner_set_corrector(autosync_planner_t *p,
				   const autosync_corrector_t *c,
				   autosync_error_t *errp);

/* Simulator evaluations used by the last autosync_planner_run() call. */
unsigned long autosync_planner_evals(const autosync_planner_t *p);

/* ================================================================ plans */

/* Plan file format. 2: env names outside autosync_plan_env_allowed() are
 * an error when read. Version 1 files are read too (the same layout);
 * autosync_plan_format_version() says which was read. */
#define AUTOSYNC_PLAN_VERSION 2
#define AUTOSYNC_NO_SERVER (-1) /* a PS tensor sharded over all servers */

/* A bucket of a plan (read-only view; owned by the plan). Times are from
 * the start of the step (forward begins at 0). */
typedef struct autosync_bucket {
	unsigned id;	  /* position in ready order */
	int kind;	  /* enum autosync_sync_kind */
	int algo;	  /* all-reduce: enum autosync_algo */
	int compress;	  /* enum autosync_compress */
	unsigned servers; /* PS: servers on nodes 0..servers-1 */
	int local_agg;	  /* PS: aggregate dense gradients per node first */
	int local_repl;	  /* PS: pull parameters once per node */
	int densify;	  /* all-reduce: sparse gradients sent dense */
	unsigned powersgd_rank; /* PowerSGD's rank r, else 0 */
	size_t ntensors;
	const char *const *tensors; /* ntensors names */
	const int *server; /* PS: server of each tensor or AUTOSYNC_NO_SERVER */
	double bytes;	   /* gradient bytes per rank (uncompressed) */
	double wire_bytes; /* bytes one rank puts on the wire */
	double ready, start, end; /* s */
	double comm;		  /* end - start, s */
} autosync_bucket_t;

void autosync_plan_destroy(autosync_plan_t *plan);
/* The format version of the file a plan was read from (1 or 2), or
 * AUTOSYNC_PLAN_VERSION for a plan made by the planner. */
unsigned autosync_plan_format_version(const autosync_plan_t *plan);

/* Scalars of a plan. Strings live as long as the plan. */
typedef struct autosync_plan_summary {
	const char *model, *model_hash, *framework, *strategy, *reason;
	const char *topo_hash;
	autosync_cluster_t cluster;
	unsigned batch;
	int job_algo; /* job-level NCCL algorithm (AUTO = no hint) */
	int job_compress;
	unsigned powersgd_rank; /* job_compress PowerSGD: its rank, else 0 */
	int nccl_calibrate;	/* the tuner rescales NCCL's latencies (0/1) */
	double bucket_cap;	/* bytes, 0 = custom buckets */
	double first_bucket;	/* bytes, 0 = none */
	double cycle_time;	/* s, 0 = none */
	double step_time, fwd_time, bwd_time, opt_time;
	double comm_time;	/* sum of bucket comm */
	double exposed_comm;	/* step - (fwd + bwd + opt) */
	double bound;		/* cost-models.md section 6 lower bound */
	const char *costs_hash; /* 16 hex digits of the cost constants, "" */
	/* a plan made with a learned simulator: its file's hash, and the
	 * analytic prediction step_time corrects ("" and 0 without one) */
	const char *simulator_hash;
	double analytic_step_time;
	/* 1: the plan leaves NCCL to itself (it keeps a framework's default,
	 * which stands for what NCCL does alone): no table, and none to
	 * derive ("nccl: []" in the file) */
	int nccl_none;
} autosync_plan_summary_t;

int autosync_plan_summary(const autosync_plan_t *plan,
			  autosync_plan_summary_t *s);

/*
 * The analytic simulator's breakdown of a plan's predicted step, with the
 * model's descriptors: what a learned simulator takes as input
 * (docs/dataset.md), so that it corrects the analytic model instead of
 * replacing it. Seconds unless the name says otherwise. The communication
 * terms add up to comm_s (the buckets' times, each taken whole as its
 * slowest node sees it); forward + backward + optimizer + exposed = the
 * predicted step.
 */
enum autosync_term {
	AUTOSYNC_TERM_FORWARD = 0,    /* "forward_s" */
	AUTOSYNC_TERM_BACKWARD,	      /* "backward_s" */
	AUTOSYNC_TERM_OPTIMIZER,      /* "optimizer_s" */
	AUTOSYNC_TERM_COMM,	      /* "comm_s": sum of the buckets' times */
	AUTOSYNC_TERM_EXPOSED,	      /* "exposed_s": not hidden by compute */
	AUTOSYNC_TERM_HIDDEN,	      /* "hidden_s": comm_s - exposed_s, >= 0 */
	AUTOSYNC_TERM_LAT_INTRA,      /* "latency_intra_s": messages x alpha */
	AUTOSYNC_TERM_LAT_INTER,      /* "latency_inter_s" */
	AUTOSYNC_TERM_BW_INTRA,	      /* "bandwidth_intra_s": bytes / bw */
	AUTOSYNC_TERM_BW_INTER,	      /* "bandwidth_inter_s" */
	AUTOSYNC_TERM_SPARSE,	      /* "sparse_allgather_s" */
	AUTOSYNC_TERM_CAST,	      /* "cast_s": fp16/bf16 casts */
	AUTOSYNC_TERM_LAUNCH,	      /* "launch_s": per-collective overhead */
	AUTOSYNC_TERM_PS_NETWORK,     /* "ps_network_s": the busiest node */
	AUTOSYNC_TERM_PS_SERVER,      /* "ps_server_s": its update work */
	AUTOSYNC_TERM_PS_MESSAGES,    /* "ps_messages_s": its per-tensor cost */
	AUTOSYNC_TERM_BUCKETS,	      /* "buckets" */
	AUTOSYNC_TERM_PS_BUCKETS,     /* "ps_buckets" */
	AUTOSYNC_TERM_COMPRESSED,     /* "compressed_buckets" */
	AUTOSYNC_TERM_GRAD_BYTES,     /* "grad_bytes": per rank */
	AUTOSYNC_TERM_WIRE_BYTES,     /* "wire_bytes": one rank puts out */
	AUTOSYNC_TERM_PARAMS,	      /* "params": the model's */
	AUTOSYNC_TERM_TENSORS,	      /* "tensors" */
	AUTOSYNC_TERM_SPARSE_TENSORS, /* "sparse_tensors" */
	AUTOSYNC_TERM_LAYERS,	      /* "layers" */
	/* gradient bytes per rank by how their buckets are synchronized
	 * (each bucket in one of ps/tree/hier/ring; ring_bytes also holds
	 * NCCL's own choice), and those of compressed buckets: which families
	 * the step is made of, in a form that carries across models */
	AUTOSYNC_TERM_PS_BYTES,		/* "ps_bytes" */
	AUTOSYNC_TERM_TREE_BYTES,	/* "tree_bytes" */
	AUTOSYNC_TERM_HIER_BYTES,	/* "hier_bytes" */
	AUTOSYNC_TERM_RING_BYTES,	/* "ring_bytes" */
	AUTOSYNC_TERM_COMPRESSED_BYTES, /* "compressed_bytes" */
	AUTOSYNC_TERM_N
};
/* Terms from AUTOSYNC_TERM_PS_BYTES on were added in feedback format 3's
 * lifetime: a record without them gets them from its buckets
 * (autosync_feedback_read). */
/* "forward_s", ...; NULL outside 0 .. AUTOSYNC_TERM_N - 1. */
const char *autosync_term_name(int term);
/* Which of the *_bytes terms a bucket's bytes count in: PS
 * (enum autosync_sync kind), else by its all-reduce algorithm (enum
 * autosync_algo; ring and NCCL's own choice are ring). */
int autosync_bytes_term(int kind, int algo);
/* Copy the plan's terms into terms[AUTOSYNC_TERM_N]. -1 with ENOENT for a
 * plan read from a file (plan files do not carry them). */
int autosync_plan_terms(const autosync_plan_t *plan, double *terms);

/*
 * The parts of a plan: autosync_plan_nX() counts them, autosync_plan_X(i)
 * returns item i (owned by the plan) or NULL past the end.
 */
size_t autosync_plan_nbuckets(const autosync_plan_t *plan);
const autosync_bucket_t *autosync_plan_bucket(const autosync_plan_t *plan,
					      size_t i);
/* A baseline the plan was compared with. */
typedef struct autosync_plan_baseline {
	const char *name;
	double step_time; /* predicted, s */
	int applicable;	  /* the plan's framework can run it */
} autosync_plan_baseline_t;
size_t autosync_plan_nbaselines(const autosync_plan_t *plan);
const autosync_plan_baseline_t *
autosync_plan_baseline(const autosync_plan_t *plan, size_t i);
/* The variables the plan sets (NCCL hints, framework settings). */
size_t autosync_plan_nenv(const autosync_plan_t *plan);
/*
 * 1 when a plan may set the variable 'name', else 0: a name of at most 63
 * characters [A-Z_][A-Z0-9_]* starting NCCL_, AUTOSYNC_ or HOROVOD_, and
 * none of those that load code or files chosen by whoever wrote the plan
 * (NCCL_*_PLUGIN, NCCL_CONF_FILE, NCCL_DEBUG_FILE), nor those autosync sets
 * itself when it applies a plan (AUTOSYNC_PLAN, AUTOSYNC_PLAN_HASH,
 * AUTOSYNC_TOPO_HASH, AUTOSYNC_REPORT, AUTOSYNC_INJECTED, AUTOSYNC_MODE,
 * AUTOSYNC_MODEL, AUTOSYNC_LOCAL_RANK, NCCL_TOPO_FILE). A shared plan
 * file must never be a way to run code in the jobs that use it.
 */
int autosync_plan_env_allowed(const char *name);
const autosync_var_t *autosync_plan_env(const autosync_plan_t *plan, size_t i);
/*
 * The variables whoever applies the plan left alone because the job's
 * environment already had them (the user's own NCCL settings win).
 * Written as 'skipped_env' and parsed back; not part of the plan hash, so
 * every node keeps the same hash. 'names' is copied.
 */
int autosync_plan_set_skipped_env(autosync_plan_t *plan,
				  const char *const *names, size_t n,
				  autosync_error_t *errp);
size_t autosync_plan_nskipped_env(const autosync_plan_t *plan);
const char *autosync_plan_skipped_env(const autosync_plan_t *plan, size_t i);
/*
 * The plan's NCCL table: for communicators of the plan's shape (nodes x
 * gpus_per_node ranks), per collective and message-size range
 * [min_bytes, max_bytes) the algorithm, protocol and channel count the
 * tuner plugin applies. Rules of one function are sorted and disjoint.
 */
typedef struct autosync_nccl_rule {
	int func;	    /* enum autosync_nccl_func */
	int algo;	    /* enum autosync_nccl_algo: tree or ring */
	int proto;	    /* enum autosync_nccl_proto */
	unsigned channels;  /* 0 = NCCL's own count */
	uint64_t min_bytes; /* nBytes range [min_bytes, max_bytes) */
	uint64_t max_bytes; /* UINT64_MAX = no upper end */
} autosync_nccl_rule_t;
size_t autosync_plan_nnccl_rules(const autosync_plan_t *plan);
const autosync_nccl_rule_t *autosync_plan_nccl_rule(const autosync_plan_t *plan,
						    size_t i);
/*
 * (Re)compute the NCCL table from the plan's cluster and all-reduce
 * buckets with cost constants 'k' (NULL: the defaults): a bucket's
 * explicit ring/tree algorithm holds for the sizes around it, every other
 * choice is autosync_sim_nccl's fastest (docs/planner.md).
 * autosync_planner_run() fills it; readers of plans without one (hand-written,
 * or from an older autosync) may call this. Changes the plan hash. No table for
 * one rank.
 */
int autosync_plan_derive_nccl(autosync_plan_t *plan, const autosync_costs_t *k,
			      autosync_error_t *errp);

/* 16 hex digits (and a NUL) of 64-bit FNV-1a over 'len' bytes: the hash
 * plans use, for files whose identity a plan records. */
void autosync_hash_hex(const void *buf, size_t len, char *hex);

/* 16 hex digits: hash of the decisions (buckets, env, job settings, NCCL
 * table). */
const char *autosync_plan_hash(const autosync_plan_t *plan);

/* Write the versioned YAML plan (docs/plan-format.md). */
int autosync_plan_write(const autosync_plan_t *plan, FILE *fp,
			autosync_error_t *errp);
/* Read a plan back (any field error names file, line and value). The
 * caller owns the result. */
autosync_plan_t *autosync_plan_load(const char *path, autosync_error_t *errp);
autosync_plan_t *autosync_plan_parse(const char *buf, size_t len,
				     const char *fname, autosync_error_t *errp);
/* An SVG picture of the simulated step: forward, backward, optimizer and
 * each bucket's communication on a time axis. */
int autosync_plan_write_svg(const autosync_plan_t *plan, FILE *fp,
			    autosync_error_t *errp);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_PLANNER_H */
