/* syncrt.c - correctness of the sync runtime: every strategy kind and
 * random plans give the reference sums (exact: fp32 sums of small integers;
 * 16-bit compression is exact for them too up to 8 ranks).
 * usage: syncrt.t [RANKS_PER_NODE]   (run under mpirun by mpi.sh; TAP from
 * rank 0 only) */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "autosync/topology.h"
#include "syncrt.h"
#include "tap.h"

static int R, P;

/* one TAP line for a condition that must hold on every rank */
#define CHECK(c, ...)                                                         \
	do {                                                                  \
		int l_ = !!(c), a_ = 0;                                       \
		MPI_Allreduce(&l_, &a_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); \
		if (R == 0)                                                   \
			ok(a_, __VA_ARGS__);                                  \
	} while (0)

static float val(int r, size_t i)
{
	return (float)((r + 1) * (int)((i % 7) + 1));
}

/* the sums in b[o .. o+n) */
static int check_sum_at(const float *b, size_t o, size_t n)
{
	float mul = (float)P * (float)(P + 1) / 2;
	for (size_t i = o; i < o + n; i++)
		if (b[i] != mul * (float)((i % 7) + 1))
			return 0;
	return 1;
}

static int check_sum(const float *b, size_t n)
{
	float mul = (float)P * (float)(P + 1) / 2;
	for (size_t i = 0; i < n; i++)
		if (b[i] != mul * (float)((i % 7) + 1))
			return 0;
	return 1;
}

/* the sums in every tensor's part that the plan syncs on this rank */
static int check_synced(autosync_rt_plan_t *rp, const float *a)
{
	float mul = (float)P * (float)(P + 1) / 2, *g;
	size_t n;

	for (size_t t = 0; (g = autosync_rt_plan_grad(rp, t, &n)); t++)
		for (size_t j = 0, i = (size_t)(g - a);
		     j < autosync_rt_plan_grad_synced(rp, t); j++, i++)
			if (a[i] != mul * (float)((i % 7) + 1))
				return 0;
	return 1;
}

static void fill(float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = val(R, i);
}

static autosync_model_t *toy_model(void)
{
	autosync_error_t err;
	autosync_model_t *m = autosync_model_create("toy", &err);
	char name[32], layer[32];
	for (int i = 0; m && i < 12; i++) {
		int64_t shape[2] = {1 + (i * 7919) % 3000, 3};
		snprintf(name, sizeof(name), "l%d.w", i);
		snprintf(layer, sizeof(layer), "l%d", i);
		if (autosync_model_add_tensor(m, name, layer,
					      AUTOSYNC_DT_FLOAT32, 2, shape, 0,
					      0, &err) < 0)
			return NULL;
		snprintf(name, sizeof(name), "l%d.b", i);
		shape[0] = 1 + i;
		if (autosync_model_add_tensor(m, name, layer,
					      AUTOSYNC_DT_FLOAT32, 1, shape, 0,
					      0, &err) < 0)
			return NULL;
	}
	{
		int64_t shape[2] = {500, 4};
		if (autosync_model_add_tensor(m, "emb.w", "emb",
					      AUTOSYNC_DT_FLOAT32, 2, shape, 1,
					      37, &err) < 0)
			return NULL;
	}
	autosync_model_set_batch(m, 8, 1, &err);
	return m;
}

static int run_plan(autosync_rt_t *rt, const autosync_plan_t *plan,
		    const autosync_model_t *m, autosync_error_t *err)
{
	autosync_rt_plan_t *rp = autosync_rt_prepare(rt, plan, m, err);
	size_t n;
	float *a;
	int good;
	if (!rp)
		return 0;
	a = autosync_rt_plan_arena(rp, &n);
	fill(a, n);
	for (size_t b = 0; b < autosync_rt_plan_nbuckets(rp); b++)
		if (autosync_rt_sync_bucket(rp, b, err) < 0) {
			autosync_rt_plan_destroy(rp);
			return 0;
		}
	good = check_synced(rp, a);
	autosync_rt_plan_destroy(rp);
	return good;
}

/* the rank heading node j in tree k (nodes[]: every rank's node) */
static int head_of(const int *nodes, int j, int k)
{
	int h = -1;

	for (int q = 0; q < P; q++)
		if (nodes[q] == j && (k || h < 0))
			h = q;
	return h;
}

int main(int argc, char **argv)
{
	autosync_error_t err = {{0}};
	autosync_rt_t *rt;
	int ppn;
	static const size_t sizes[] = {0, 1, 7, 1000, 200003};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &R);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	ppn = argc > 1 ? atoi(argv[1]) : 0;
	if (R == 0)
		plan(NO_PLAN);

	/* 16-bit conversions */
	if (R == 0) {
		ok(autosync_rt_f32_to_f16(1.0f) == 0x3c00, "fp16(1) = 0x3c00");
		ok(autosync_rt_f32_to_f16(65504.0f) == 0x7bff, "fp16 max");
		ok(autosync_rt_f32_to_f16(1e6f) == 0x7c00,
		   "fp16 overflow -> inf");
		ok(autosync_rt_f16_to_f32(0x0001) == ldexpf(1, -24),
		   "fp16 smallest subnormal");
		ok(autosync_rt_f32_to_bf16(1.0f) == 0x3f80, "bf16(1) = 0x3f80");
		ok(autosync_rt_bf16_to_f32(autosync_rt_f32_to_bf16(3.0f)) ==
		       3.0f,
		   "bf16 round trip of 3");
		ok(autosync_rt_f16_to_f32(autosync_rt_f32_to_f16(2049.0f)) ==
		       2048.0f,
		   "fp16 rounds 2049 to even (2048)");
		{
			int good = 1;
			for (int i = -2048; i <= 2048; i++)
				if (autosync_rt_f16_to_f32(
					autosync_rt_f32_to_f16((float)i)) !=
				    (float)i)
					good = 0;
			ok(good, "fp16 holds every integer in [-2048, 2048]");
		}
	}

	rt = autosync_rt_create_ppn(MPI_COMM_WORLD, ppn, &err);
	CHECK(rt != NULL, "runtime created (%d ranks, %d per node): %s", P, ppn,
	      err.text);
	if (!rt)
		goto done;
	if (R == 0)
		diag("ranks %d, nodes %d, ranks per node %d", P,
		     autosync_rt_nodes(rt), autosync_rt_local_size(rt));

	/* the tree all-reduce's two trees: each spans every rank from one
	 * root, crosses between nodes only at the nodes' heads (first rank
	 * in tree 0, last in tree 1), once per node but the root's */
	for (int k = 0; k < 2; k++) {
		int par = -2, ch[3], nch, *pars = malloc(P * sizeof(int));
		int *nodes = malloc(P * sizeof(int)), me, roots = 0, reach = 1;
		int cross = 0, cross_ok = 1, links_ok = 1;
		nch = autosync_rt_tree_links(rt, k, &par, ch);
		me = autosync_rt_node(rt);
		MPI_Allgather(&par, 1, MPI_INT, pars, 1, MPI_INT,
			      MPI_COMM_WORLD);
		MPI_Allgather(&me, 1, MPI_INT, nodes, 1, MPI_INT,
			      MPI_COMM_WORLD);
		for (int i = 0; i < nch; i++)
			links_ok &= ch[i] >= 0 && ch[i] < P && pars[ch[i]] == R;
		for (int r = 0; r < P; r++) {
			int hops = 0, v = r;
			roots += pars[r] < 0;
			while (v >= 0 && hops++ <= P)
				v = pars[v];
			reach &= hops <= P;
			if (pars[r] >= 0 && nodes[pars[r]] != nodes[r]) {
				cross++;
				cross_ok &=
				    r == head_of(nodes, nodes[r], k) &&
				    pars[r] ==
					head_of(nodes, nodes[pars[r]], k);
			}
		}
		CHECK(links_ok && roots == 1 && reach,
		      "tree %d: children name me as parent, one root, every "
		      "rank reaches it",
		      k);
		CHECK(cross == autosync_rt_nodes(rt) - 1 && cross_ok,
		      "tree %d: %d links between nodes (%d nodes), each from "
		      "a node's %s rank",
		      k, cross, autosync_rt_nodes(rt), k ? "last" : "first");
		free(pars);
		free(nodes);
	}

	/* "auto" as NCCL picks it, on the lab's 1 Gbit/s cluster: on two
	 * nodes the tree carries n over the network against the ring's
	 * 2(p-1)/p n, so the tree for large buffers too */
	{
		autosync_cluster_t c;
		struct {
			unsigned m, g;
			double n;
			int want;
		} at[] = {
		    {2, 4, 1e8, AUTOSYNC_ALGO_TREE},
		    {4, 2, 1e8, AUTOSYNC_ALGO_RING},
		    {4, 2, 1e3, AUTOSYNC_ALGO_TREE},
		    {1, 8, 1e8, AUTOSYNC_ALGO_RING},
		};
		int good = autosync_cluster_parse(
			       &c,
			       "intra=host_bridge:2.5GB/s:20us,nics=1x1Gbit/s,"
			       "lat=100us",
			       &err) == 0;
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			c.nodes = at[i].m;
			c.gpus_per_node = at[i].g;
			CHECK(good &&
				  autosync_rt_auto_algo(&c, at[i].m * at[i].g,
							at[i].n) == at[i].want,
			      "auto on %ux%u, %g B: %s", at[i].m, at[i].g,
			      at[i].n,
			      at[i].want == AUTOSYNC_ALGO_TREE ? "tree"
							       : "ring");
		}
	}

	/* all-reduce: every algorithm x compression x size */
	for (int algo = 0; algo < AUTOSYNC_ALGO_NALGOS; algo++)
		for (int c = 0; c <= AUTOSYNC_COMPRESS_BF16; c++)
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]);
			     s++) {
				size_t n = sizes[s];
				float *b = malloc((n ? n : 1) * sizeof(float));
				int r;
				fill(b, n);
				r = autosync_rt_allreduce(rt, b, n, algo, c,
							  &err);
				CHECK(r == 0 && check_sum(b, n),
				      "allreduce %s %s n=%zu: sums exact",
				      autosync_algo_name(algo),
				      autosync_compress_name(c), n);
				free(b);
			}

	/* PowerSGD is DDP's hook: refused on every rank before any traffic */
	{
		float one = 1;
		errno = 0;
		CHECK(autosync_rt_allreduce(rt, &one, 1, AUTOSYNC_ALGO_RING,
					    AUTOSYNC_COMPRESS_POWERSGD,
					    &err) < 0 &&
			  errno == ENOTSUP,
		      "allreduce powersgd: refused (%s)", err.text);
	}

	/* rails by default where every node has as many ranks (the loop
	 * above ran it), else the leader variant; then the leader variant */
	{
		int uni = ppn <= 0 || P % ppn == 0;
		CHECK(autosync_rt_hier(rt) ==
			  (uni ? RT_HIER_RAILS : RT_HIER_LEADER),
		      "hier: %s by default (%s layout)",
		      uni ? "rails" : "leader", uni ? "uniform" : "uneven");
	}
	autosync_rt_set_hier(rt, RT_HIER_LEADER);
	for (int c = 0; c <= AUTOSYNC_COMPRESS_BF16; c++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t n = sizes[s];
			float *b = malloc((n ? n : 1) * sizeof(float));
			int r;
			fill(b, n);
			r = autosync_rt_allreduce(rt, b, n, AUTOSYNC_ALGO_HIER,
						  c, &err);
			CHECK(r == 0 && check_sum(b, n),
			      "allreduce hier(leader) %s n=%zu: sums exact",
			      autosync_compress_name(c), n);
			free(b);
		}
	autosync_rt_set_hier(rt, RT_HIER_RAILS);

	/* the CPU constants of compression: positive, finite, in range */
	{
		double cbw = -1, gh = -1;
		int r = autosync_rt_measure_cpu(rt, 4096, 2, &cbw, &gh, &err);
		CHECK(r == 0 && isfinite(cbw) && cbw > 0 && isfinite(gh) &&
			  gh >= 0 && (P > 1 || gh == 0),
		      "measure_cpu: cast_bw %g B/s, gamma_half %g s/B (%s)",
		      cbw, gh, r ? err.text : "ok");
		errno = 0;
		CHECK(autosync_rt_measure_cpu(rt, 0, 2, &cbw, &gh, &err) < 0 &&
			  errno == EINVAL,
		      "measure_cpu: n = 0 refused");
	}

	/* sparse: all-gather + sum */
	{
		size_t n = 3001;
		float *b = malloc(n * sizeof(float));
		fill(b, n);
		CHECK(autosync_rt_gather_sum(rt, b, n, &err) == 0 &&
			  check_sum(b, n),
		      "gather_sum n=%zu", n);
		free(b);
	}

	/* PS: servers x aggregation x replication, mixed placement */
	for (unsigned k = 1; k <= (unsigned)autosync_rt_nodes(rt) + 1; k++)
		for (int agg = 0; agg < 2; agg++)
			for (int repl = 0; repl < 2; repl++) {
				size_t off[5], len[5] = {10, 0, 70001, 3, 999};
				int server[5] = {0, AUTOSYNC_NO_SERVER,
						 AUTOSYNC_NO_SERVER, (int)k - 1,
						 1};
				size_t n = 0;
				float *b;
				for (int i = 0; i < 5; i++) {
					off[i] = n;
					n += len[i];
				}
				b = malloc(n * sizeof(float));
				fill(b, n);
				CHECK(autosync_rt_ps(rt, b, 5, off, len, NULL,
						     server, k, agg, repl,
						     &err) == 0 &&
					  check_sum(b, n),
				      "ps servers=%u agg=%d repl=%d", k, agg,
				      repl);
				/* each rank pulls a prefix of each segment */
				{
					size_t pull[5] = {10, 0, 30001, 1, 0};
					int good;
					fill(b, n);
					good =
					    autosync_rt_ps(rt, b, 5, off, len,
							   pull, server, k, agg,
							   repl, &err) == 0;
					for (int i = 0; good && i < 5; i++)
						good = check_sum_at(
						    b, off[i],
						    repl ? len[i] : pull[i]);
					CHECK(good,
					      "ps servers=%u agg=%d repl=%d, "
					      "pulling prefixes: %s",
					      k, agg, repl, err.text);
				}
				free(b);
			}

	/* plans: autosync's, every baseline, random strategies */
	{
		autosync_model_t *m = toy_model();
		autosync_cluster_t c;
		autosync_costs_t k;
		autosync_planner_t *pl = autosync_planner_create(&err);
		autosync_plan_t *p;
		autosync_cluster_parse(
		    &c,
		    "intra=host_bridge:2.5GB/s:20us,nics=1x1Gbit/s,"
		    "lat=100us",
		    &err);
		c.nodes = (unsigned)autosync_rt_nodes(rt);
		/* the planner's nodes are alike: every rank must plan the
		 * same, so the largest node's ranks where nodes differ */
		{
			int l = autosync_rt_local_size(rt), g = 0;
			MPI_Allreduce(&l, &g, 1, MPI_INT, MPI_MAX,
				      MPI_COMM_WORLD);
			c.gpus_per_node = (unsigned)g;
		}
		autosync_costs_default(&k);
		CHECK(m && pl &&
			  autosync_planner_set_cluster(pl, &c, &err) == 0 &&
			  autosync_planner_set_model(pl, m, &err) == 0,
		      "toy model and planner: %s", err.text);
		autosync_planner_set_compression(pl, 1);
		p = autosync_planner_run(pl, &err);
		CHECK(p && run_plan(rt, p, m, &err), "autosync plan: %s",
		      err.text);
		autosync_plan_destroy(p);
		for (int b = 0; b < AUTOSYNC_BASELINE_N; b++) {
			p = autosync_planner_baseline(pl, b, &err);
			CHECK(p && run_plan(rt, p, m, &err), "baseline %s: %s",
			      autosync_baseline_name(b), err.text);
			autosync_plan_destroy(p);
		}
		/* parallax aggregates the table in the node: each rank holds
		 * the rows its node's ranks touch together */
		p = autosync_planner_baseline(pl, AUTOSYNC_BASELINE_PARALLAX,
					      &err);
		{
			autosync_rt_plan_t *rp =
			    p ? autosync_rt_prepare(rt, p, m, &err) : NULL;
			size_t ie = autosync_model_ntensors(m) - 1, n = 0;
			uint64_t want = 4 * autosync_tensor_rows_union(
						autosync_model_tensor(m, ie),
						c.gpus_per_node);
			CHECK(rp && autosync_rt_plan_grad(rp, ie, &n) &&
				  n == want,
			      "parallax: the table's rows on %u ranks of a "
			      "node: %zu floats (want %llu)",
			      c.gpus_per_node, n, (unsigned long long)want);
			autosync_rt_plan_destroy(rp);
		}
		autosync_plan_destroy(p);
		autosync_planner_set_framework(pl, AUTOSYNC_FW_GENERIC, &err);
		for (uint64_t seed = 1; seed <= 25; seed++) {
			p = autosync_planner_random(pl, seed, &err);
			CHECK(p && run_plan(rt, p, m, &err),
			      "random plan %llu: %s", (unsigned long long)seed,
			      err.text);
			autosync_plan_destroy(p);
		}
		/* the planner's space: up to a bucket per tensor, all-PS */
		CHECK(autosync_planner_set_random_space(
			  pl, AUTOSYNC_RANDOM_WIDE, &err) == 0,
		      "wide random space: %s", err.text);
		for (uint64_t seed = 1; seed <= 25; seed++) {
			p = autosync_planner_random(pl, seed, &err);
			CHECK(p && run_plan(rt, p, m, &err),
			      "random-wide plan %llu: %s",
			      (unsigned long long)seed, err.text);
			autosync_plan_destroy(p);
		}
		{
			autosync_model_t *s = autosync_model_scale(m, 10, &err);
			CHECK(s &&
				  autosync_model_ntensors(s) ==
				      autosync_model_ntensors(m) &&
				  autosync_model_bytes(s) * 9 <
				      autosync_model_bytes(m),
			      "scaled model 1/10: %s",
			      s ? autosync_model_name(s) : err.text);
			autosync_model_destroy(s);
		}
		autosync_planner_destroy(pl);
		autosync_model_destroy(m);
	}
	autosync_rt_destroy(rt);
done:
	if (R == 0)
		done_testing();
	MPI_Finalize();
	return 0;
}
