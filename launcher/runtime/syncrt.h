/*
 * syncrt.h - the autosync sync runtime: executes a plan's gradient
 * synchronization over MPI. Not installed; used by
 * 'autosync bench' and its tests.
 *
 * Layout: the runtime owns one gradient arena per prepared plan, laid out
 * in bucket order, so every bucket is one contiguous fused buffer (as
 * DDP's gradient_as_bucket_view). A bucket is synchronized in place:
 *   all-reduce  ring (reduce-scatter + all-gather with the rank
 *               neighbours), tree (binary tree reduce + broadcast,
 *               pipelined in segments), hier (reduce to the node leader
 *               over shared memory, ring among node leaders, broadcast
 *               in the node) or auto (what the simulator assumes NCCL
 *               picks: the faster of ring and tree by alpha-beta on the
 *               plan's cluster; never MPI's own choice; a direct call of
 *               autosync_rt_allreduce() with auto runs the ring); fp16/bf16
 * compression converts the bucket, reduces 16-bit values (each addition in
 *               fp32, rounded back) and converts back;
 *   PS          servers on the leaders (local rank 0) of nodes
 *               0..servers-1; a tensor goes to its plan server, or is
 *               sharded evenly over all servers (-1); optional local
 *               aggregation (reduce in the node first, only leaders
 *               push) and local replication (only leaders pull, then
 *               broadcast in the node).
 * Sparse tensors carry rows_touched x row elements (all ranks are assumed
 * to touch the same rows); all-reduce of a sparse tensor without densify
 * is an all-gather of every rank's rows followed by a local sum.
 *
 * Backends: the plan walk (autosync_rt_sync_bucket: which bucket, which
 * algorithm, which compression, which PS placement) is shared; the
 * transport is a struct autosync_rt_backend. "mpi" (default) is the
 * point-to-point code above; "nccl" (nccl_backend.c, built only with
 * NCCL) maps the same walk onto ncclAllReduce / ncclReduce /
 * ncclBroadcast on one CUDA stream.
 *
 * Conventions: 0 / -1 with errno and an optional autosync_error_t; never
 * prints. MPI errors are returned (MPI_ERRORS_RETURN on private
 * communicators) as EIO.
 */
#ifndef AUTOSYNC_SYNCRT_H
#define AUTOSYNC_SYNCRT_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "autosync/common.h"
#include "autosync/planner.h"

/* hierarchical all-reduce variants */
enum rt_hier {
	RT_HIER_LEADER = 0, /* reduce to the node leader, ring among leaders,
			       broadcast in the node */
	RT_HIER_RAILS	    /* reduce-scatter in the node, one ring per local
			       rank across nodes on its share, all-gather in
			       the node (default: what the simulator models and
			       contrib/pytorch's hierarchical hook runs) */
};

/* element type of a buffer on the wire */
enum rt_elem { RT_F32 = 0, RT_F16, RT_BF16 };

typedef struct autosync_rt autosync_rt_t;
typedef struct autosync_rt_plan autosync_rt_plan_t;

/* 'comm' is duplicated (the caller keeps it). Ranks on one shared-memory
 * node form a node; node i is the i-th distinct node in rank order. */
autosync_rt_t *autosync_rt_create(MPI_Comm comm, autosync_error_t *errp);
/* The same with 'ppn' consecutive ranks per node (0: shared memory
 * decides) - for tests of multi-node layouts on one machine. */
autosync_rt_t *autosync_rt_create_ppn(MPI_Comm comm, int ppn,
				      autosync_error_t *errp);
void autosync_rt_destroy(autosync_rt_t *rt);
/* enum rt_hier; the rails variant needs the same ranks on every node
 * (else the leader variant runs) */
void autosync_rt_set_hier(autosync_rt_t *rt, int variant);
/* the variant a hierarchical all-reduce runs on this layout */
int autosync_rt_hier(const autosync_rt_t *rt);
int autosync_rt_rank(const autosync_rt_t *rt);
int autosync_rt_size(const autosync_rt_t *rt);
int autosync_rt_nodes(const autosync_rt_t *rt);
int autosync_rt_node(const autosync_rt_t *rt); /* my node index */
int autosync_rt_local_size(const autosync_rt_t *rt);
/* My neighbours in tree k (0 or 1) of the tree all-reduce: the parent's
 * rank in *parent (-1 at the root), up to 3 children in ch[]; returns
 * their number (for tests of the tree's shape). */
int autosync_rt_tree_links(const autosync_rt_t *rt, int k, int *parent,
			   int ch[3]);
/* What an "auto" all-reduce of n bytes on p ranks runs on this backend for
 * a plan on cluster c: AUTOSYNC_ALGO_RING or AUTOSYNC_ALGO_TREE, the faster
 * by the simulator's alpha-beta formulas, as NCCL would pick. */
int autosync_rt_auto_algo(const autosync_cluster_t *c, unsigned p, double n);

/* In-place all-reduce (sum) of n fp32 values with an explicit algorithm
 * (enum autosync_algo) and compression (enum autosync_compress). Every
 * rank passes the same arguments. */
int autosync_rt_allreduce(autosync_rt_t *rt, float *buf, size_t n, int algo,
			  int compress, autosync_error_t *errp);

/* In-place PS synchronization of 'nseg' segments of 'buf' (segment i:
 * [off[i], off[i]+len[i]) elements, server[i] in 0..servers-1 or
 * AUTOSYNC_NO_SERVER = sharded over all servers). A rank that pulls for
 * itself (no local replication) pulls the first pull[i] <= len[i] elements
 * of segment i (the rows it touched of a node's aggregated sparse
 * gradient) and leaves the rest as they were; 'pull' NULL: all of them. */
int autosync_rt_ps(autosync_rt_t *rt, float *buf, size_t nseg,
		   const size_t *off, const size_t *len, const size_t *pull,
		   const int *server, unsigned servers, int local_agg,
		   int local_repl, autosync_error_t *errp);

/* In-place all-gather + local sum: each rank's 'n' values are summed
 * (what a sparse all-reduce without densify does). */
int autosync_rt_gather_sum(autosync_rt_t *rt, float *buf, size_t n,
			   autosync_error_t *errp);

/* The CPU cost of this runtime's compression where it runs, in the cost
 * model's terms (struct autosync_costs): 'cast_bw' such that 2 x fp32
 * bytes / cast_bw is one fp32 -> fp16 -> fp32 round trip of 'n' values,
 * and 'gamma_half' the time a ring fp16 all-reduce of 'n' values takes
 * beyond that round trip and half of the fp32 ring all-reduce, per 16-bit
 * byte of the (p - 1)/p share each rank reduces (0 on one rank). Every
 * rank measures at once, 'reps' times after one warm-up; the medians of
 * the slowest rank's times. Collective: every rank calls it alike. */
/* CLOCK_MONOTONIC in seconds */
double autosync_rt_now(void);
/* median of v[0..n) (v is not changed; 0 when n is 0 or out of memory) */
double autosync_rt_median(const double *v, size_t n);

int autosync_rt_measure_cpu(autosync_rt_t *rt, size_t n, int reps,
			    double *cast_bw, double *gamma_half,
			    autosync_error_t *errp);

/*
 * Transport backend. Every op is collective (all ranks call it with the
 * same sizes) and returns 0 / -1 with errp set. Buffers are host pointers
 * inside the region last passed to stage_in. 'elem' is enum rt_elem;
 * 'root' a rank of autosync_rt_comm(). NULL members:
 *   stage_in/stage_out/group_start/group_end/prepare/destroy: no-op;
 *   ps: the walk decomposes a PS bucket into reduce-to-server + bcast
 *   (then reduce and bcast are required).
 */
struct autosync_rt_backend {
	const char *name;
	/* called by autosync_rt_prepare with the plan's NCCL_ALGO hint ("" =
	 * none) */
	int (*prepare)(void *ctx, const char *algo_hint,
		       autosync_error_t *errp);
	/* the walk is about to work on [buf, buf+bytes) / is done with it
	 * (results must be back in buf when stage_out returns) */
	int (*stage_in)(void *ctx, void *buf, size_t bytes,
			autosync_error_t *errp);
	int (*stage_out)(void *ctx, autosync_error_t *errp);
	/* in-place sum; 'algo' enum autosync_algo (auto already resolved) */
	int (*allreduce)(void *ctx, void *buf, size_t n, int elem, int algo,
			 autosync_error_t *errp);
	/* sparse rows: every rank's n fp32 values summed */
	int (*gather_sum)(void *ctx, float *buf, size_t n,
			  autosync_error_t *errp);
	/* in-place sum to 'root' / broadcast from 'root' */
	int (*reduce)(void *ctx, void *buf, size_t n, int elem, int root,
		      autosync_error_t *errp);
	int (*bcast)(void *ctx, void *buf, size_t n, int elem, int root,
		     autosync_error_t *errp);
	int (*group_start)(void *ctx, autosync_error_t *errp);
	int (*group_end)(void *ctx, autosync_error_t *errp);
	/* a whole PS bucket (the arguments of autosync_rt_ps) */
	int (*ps)(void *ctx, float *buf, size_t nseg, const size_t *off,
		  const size_t *len, const size_t *pull, const int *server,
		  unsigned servers, int local_agg, int local_repl,
		  autosync_error_t *errp);
	void (*destroy)(void *ctx);
};

/* Select the backend by name: "mpi" (the default) or "nccl" (fails with
 * ENOTSUP when built without NCCL, ENODEV when no CUDA device is usable;
 * every rank must call it). The previous backend is destroyed. */
int autosync_rt_set_backend(autosync_rt_t *rt, const char *name,
			    autosync_error_t *errp);
/* Install any backend (tests: a recording mock); 'ops' is borrowed, 'ctx'
 * is passed to every op (and to ops->destroy when replaced). */
void autosync_rt_set_backend_ops(autosync_rt_t *rt,
				 const struct autosync_rt_backend *ops,
				 void *ctx);
const char *autosync_rt_backend_name(const autosync_rt_t *rt);
/* the private communicator and my local rank (backends' bootstrap) */
MPI_Comm autosync_rt_comm(const autosync_rt_t *rt);
int autosync_rt_local_rank(const autosync_rt_t *rt);
/* world rank of node j's leader (a PS server) */
int autosync_rt_leader(const autosync_rt_t *rt, int node);

#ifdef HAVE_NCCL
/* nccl_backend.c: checks for a CUDA device and picks one by local rank;
 * the NCCL communicator is created by the first prepare (after NCCL_ALGO
 * is set). */
int autosync_rt_nccl_open(autosync_rt_t *rt,
			  const struct autosync_rt_backend **ops, void **ctx,
			  autosync_error_t *errp);
#endif

/* Prepare 'plan' for 'm' (the model the plan was made for; tensors are
 * matched by name; every tensor must be in exactly one bucket). Both are
 * borrowed for the call only. The caller frees the result with
 * autosync_rt_plan_destroy(). */
autosync_rt_plan_t *autosync_rt_prepare(autosync_rt_t *rt,
					const autosync_plan_t *plan,
					const autosync_model_t *m,
					autosync_error_t *errp);
void autosync_rt_plan_destroy(autosync_rt_plan_t *rp);
size_t autosync_rt_plan_nbuckets(const autosync_rt_plan_t *rp);
/* the gradient of model tensor i: '*n' fp32 elements (sparse: touched
 * rows x row); the pointer lives as long as 'rp' */
float *autosync_rt_plan_grad(autosync_rt_plan_t *rp, size_t tensor, size_t *n);
/* how many of those elements hold the sum on this rank after a step: all,
 * but for a sparse tensor a rank pulled for itself from a PS bucket with
 * local aggregation, the rows it touched of its node's union */
size_t autosync_rt_plan_grad_synced(const autosync_rt_plan_t *rp,
				    size_t tensor);
/* the whole arena */
float *autosync_rt_plan_arena(autosync_rt_plan_t *rp, size_t *n);
/* bucket b's buffer and element count */
float *autosync_rt_plan_bucket_buf(autosync_rt_plan_t *rp, size_t b, size_t *n);
/* Synchronize bucket b in place (all ranks call it with the same b). */
int autosync_rt_sync_bucket(autosync_rt_plan_t *rp, size_t b,
			    autosync_error_t *errp);

/* 16-bit conversions (round to nearest even; NaN stays NaN). */
uint16_t autosync_rt_f32_to_f16(float f);
float autosync_rt_f16_to_f32(uint16_t h);
uint16_t autosync_rt_f32_to_bf16(float f);
float autosync_rt_bf16_to_f32(uint16_t h);

#endif
