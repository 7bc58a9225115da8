/* sim.c - formulas against hand-computed values (cost-models.md sections
 * 2-3), the overlap timeline, PS link accounting, monotonicity, and the
 * baselines reproduced exactly. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"
#include "tap.h"

#define MiB (1024.0 * 1024.0)

static char catalog[4096];

static void formulas(void)
{
	/* cost-models.md section 2: n = 1e8 B, alpha = 5 us, B = 12.5 GB/s, p =
	 * 16 */
	const double n = 1e8, a = 5e-6, B = 12.5e9;
	static const struct {
		unsigned p;
		double want;
	} ring[] = {
	    {16, 15.150e-3},
	    {2, 8.010e-3},
	    {1, 0},
	    {4, 12.030e-3},
	};
	double load[8];

	for (size_t i = 0; i < sizeof(ring) / sizeof(ring[0]); i++)
		near(autosync_sim_ring(ring[i].p, n, a, B), ring[i].want, 1e-12,
		     "ring p=%u", ring[i].p);
	near(autosync_sim_rabenseifner(16, n, a, B), 15.040e-3, 1e-12,
	     "Rabenseifner");
	near(autosync_sim_recursive_doubling(16, n, a, B), 32.02e-3, 1e-12,
	     "recursive doubling");
	near(autosync_sim_binary_tree(16, n, a, B), 64.04e-3, 1e-12,
	     "binary tree");
	near(autosync_sim_double_tree(16, n, a, B), 16.04e-3, 1e-12,
	     "double binary tree");
	near(autosync_sim_allgather(16, n, a, B), 15 * a + 15.0 / 16 * n / B,
	     1e-12, "all-gather");
	/* the double tree over nodes: 1 GB/s NICs under 100 GB/s chains */
	near(autosync_sim_node_tree(2, 8, n, a, 100e9, 1e9), 8 * a + n / 1e9,
	     1e-12,
	     "tree on 2 nodes: the network carries n (two opposite chains)");
	near(autosync_sim_node_tree(4, 8, n, a, 100e9, 1e9),
	     10 * a + 2 * n / 1e9, 1e-12, "tree on 4 nodes: 2n on the network");
	near(autosync_sim_node_tree(2, 8, n, a, 1e9, 100e9),
	     8 * a + 2 * n / 1e9, 1e-12,
	     "tree on 2 nodes, slow chain: 2n/B_in");
	near(autosync_sim_node_tree(1, 8, n, a, 100e9, 0),
	     6 * a + 2 * n / 100e9, 1e-12,
	     "tree on one node: the chain (no NIC needed)");
	near(autosync_sim_node_tree(3, 1, n, a, 0, 1e9),
	     2 * log2(3) * a + 2 * n / 1e9, 1e-12,
	     "one rank per node: the network only (no intra link needed)");
	near(autosync_sim_node_tree(16, 1, n, a, 0, B),
	     autosync_sim_double_tree(16, n, a, B), 1e-12,
	     "one rank per node on >2 nodes = the flat double tree");
	ok(autosync_sim_node_tree(0, 8, n, a, B, B) < 0 && errno == EINVAL &&
	       autosync_sim_node_tree(2, 0, n, a, B, B) < 0 &&
	       autosync_sim_node_tree(2, 8, n, a, 0, B) < 0 &&
	       autosync_sim_node_tree(2, 8, n, a, B, NAN) < 0 &&
	       autosync_sim_node_tree(2, 8, -1, a, B, B) < 0,
	   "node tree: bad arguments are EINVAL");
	near(autosync_sim_node_tree(1, 1, n, a, B, B), 0, 0, "node tree p=1");
	/* hierarchical: m = 2, g = 8: intra 1.764 ms + inter 1.010 ms */
	near(autosync_sim_hier(2, 8, n, 1e-6, 100e9, 5e-6, 12.5e9), 2.774e-3,
	     1e-12, "2-level hierarchical");
	near(autosync_sim_hier(1, 8, n, 1e-6, 100e9, 5e-6, 12.5e9), 1.764e-3,
	     1e-12, "hierarchical on one node = its intra part");
	near(autosync_sim_hier(2, 1, n, 1e-6, 100e9, 5e-6, 12.5e9),
	     2 * 5e-6 + 1e8 / 12.5e9, 1e-12,
	     "hierarchical, one GPU per node = inter part");
	/* PS co-located, section 3: 8 nodes, full duplex, M bytes per worker */
	for (int i = 0; i < 8; i++)
		load[i] = n / 8;
	near(autosync_sim_ps_colocated(8, 8, load, B), 1.75 * n / B, 1e-12,
	     "PS on every node = 2(p-1)/p M/B");
	for (int i = 0; i < 4; i++)
		load[i] = n / 4;
	near(autosync_sim_ps_colocated(8, 4, load, B), 2.5 * n / B, 1e-12,
	     "PS on 4 of 8 nodes: server NIC carries 0.75M + 7M/4 = 2.5 M/B");
	load[0] = n;
	near(autosync_sim_ps_colocated(8, 1, load, B), 7 * n / B, 1e-12,
	     "one PS: 7 M/B at the server");
	load[0] = 0.75 * n;
	load[1] = 0.25 * n;
	near(autosync_sim_ps_colocated(4, 2, load, B), 2.5 * n / B, 1e-12,
	     "uneven shards on 2 of 4 nodes: 0.25M + 3 x 0.75M at server 0");
	near(autosync_sim_ps_colocated(2, 2, load, B), 1.0 * n / B, 1e-12,
	     "two nodes: symmetric whatever the split");
	errno = 0;
	ok(autosync_sim_ring(0, n, a, B) < 0 && errno == EINVAL,
	   "p = 0: EINVAL");
	errno = 0;
	ok(autosync_sim_ring(4, -1, a, B) < 0 && errno == EINVAL,
	   "n < 0: EINVAL");
	errno = 0;
	ok(autosync_sim_ring(4, n, a, 0) < 0 && errno == EINVAL,
	   "bw = 0: EINVAL");
	errno = 0;
	ok(autosync_sim_ring(4, n, a, NAN) < 0 && errno == EINVAL,
	   "NaN: EINVAL");
	errno = 0;
	ok(autosync_sim_ps_colocated(2, 3, load, B) < 0 && errno == EINVAL,
	   "k > m: EINVAL");
	/* more nodes never make ring cheaper per byte */
	{
		int mono = 1;
		for (unsigned p = 2; p < 4096; p++)
			if (autosync_sim_ring(p + 1, n, a, B) <
			    autosync_sim_ring(p, n, a, B))
				mono = 0;
		ok(mono, "ring time per byte never drops as p grows (2..4096)");
	}
}

/* a cluster whose constants make hand computation easy */
static autosync_cluster_t cluster(unsigned nodes, unsigned g)
{
	autosync_cluster_t c;
	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = g;
	c.intra_class = AUTOSYNC_LINK_NVLINK;
	c.intra_bw = 100e9;
	c.intra_lat = 1e-6;
	c.nics_per_node = 8;
	c.nic_bw = 12.5e9;
	c.inter_lat = 5e-6;
	return c;
}

static autosync_costs_t ideal_costs(void)
{
	autosync_costs_t k;
	autosync_costs_default(&k);
	k.launch = 0;
	k.intra_eff = 1;
	k.inter_eff = 1;
	k.gpu_flops = 1e30;
	k.opt_bw = 1e30;
	k.ps_msg = 0;
	k.ps_update_bw = 1e15;
	return k;
}

static autosync_planner_t *planner(const autosync_model_t *m,
				   autosync_cluster_t c, autosync_costs_t k,
				   int fw)
{
	autosync_error_t err = {""};
	autosync_planner_t *p = autosync_planner_create(&err);
	if (!p || autosync_planner_set_model(p, m, &err) < 0 ||
	    autosync_planner_set_cluster(p, &c, &err) < 0 ||
	    autosync_planner_set_costs(p, &k, &err) < 0 ||
	    autosync_planner_set_framework(p, fw, &err) < 0)
		bail_out("planner setup: %s", err.text);
	return p;
}

static double baseline_step(const autosync_model_t *m, autosync_cluster_t c,
			    autosync_costs_t k, int b)
{
	autosync_planner_t *p = planner(m, c, k, AUTOSYNC_FW_GENERIC);
	autosync_plan_t *pl = autosync_planner_baseline(p, b, NULL);
	autosync_plan_summary_t s;
	double t = -1;
	if (pl && autosync_plan_summary(pl, &s) == 0)
		t = s.step_time;
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	return t;
}

static autosync_model_t *parse(const char *text)
{
	autosync_error_t err = {""};
	autosync_model_t *m =
	    autosync_model_parse(text, strlen(text), "test", &err);
	if (!m)
		bail_out("model: %s", err.text);
	return m;
}

static void cluster_level(void)
{
	autosync_model_t *m =
	    parse("autosync_model: 1\nname: one\ntensors:\n"
		  "  - {name: w, dtype: float32, shape: [25000000]}\n");
	autosync_costs_t k = ideal_costs();
	double ring, tree, t;

	/* 2 nodes x 8 GPUs: ring over 16 ranks at the node bandwidth
	 * min(100 GB/s intra, 8 x 12.5 GB/s NICs), alpha = 5 us */
	ring = autosync_sim_ring(16, 1e8, 5e-6, 100e9);
	tree = autosync_sim_double_tree(16, 1e8, 5e-6, 100e9);
	t = baseline_step(m, cluster(2, 8), k, AUTOSYNC_BASELINE_AR_PER_TENSOR);
	near(t, ring < tree ? ring : tree, 1e-9,
	     "one 100 MB tensor on 2x8: NCCL 'auto' = min(ring, tree) = %.6g s",
	     t);
	k.launch = 20e-6;
	near(
	    baseline_step(m, cluster(2, 8), k, AUTOSYNC_BASELINE_AR_PER_TENSOR),
	    (ring < tree ? ring : tree) + 20e-6, 1e-9,
	    "launch overhead per collective");
	k.launch = 0;
	/* one 1.25 GB/s NIC per node under 100 GB/s NVLink: on 2 nodes the
	 * tree's network term is n / B_node, below the ring's 15/16 2n */
	{
		autosync_cluster_t c = cluster(2, 8);
		c.nics_per_node = 1;
		c.nic_bw = 1.25e9;
		t = baseline_step(m, c, k, AUTOSYNC_BASELINE_AR_PER_TENSOR);
		tree = autosync_sim_node_tree(2, 8, 1e8, 5e-6, 100e9, 1.25e9);
		near(t, tree, 1e-9,
		     "100 MB on 2x8, slow NICs: 'auto' = the tree, %.6g s "
		     "(ring %.6g s)",
		     t, autosync_sim_ring(16, 1e8, 5e-6, 1.25e9));
		ok(tree < autosync_sim_ring(16, 1e8, 5e-6, 1.25e9),
		   "... which beats the ring on 2 nodes");
		c.nodes = 4;
		near(baseline_step(m, c, k, AUTOSYNC_BASELINE_AR_PER_TENSOR),
		     autosync_sim_ring(32, 1e8, 5e-6, 1.25e9), 1e-9,
		     "... and on 4 nodes the ring (tree 2n/B_node)");
	}
	/* one node: intra links only */
	near(
	    baseline_step(m, cluster(1, 8), k, AUTOSYNC_BASELINE_AR_PER_TENSOR),
	    fmin(autosync_sim_ring(8, 1e8, 1e-6, 100e9),
		 autosync_sim_double_tree(8, 1e8, 1e-6, 100e9)),
	    1e-9, "one node x 8 GPUs");
	near(
	    baseline_step(m, cluster(1, 1), k, AUTOSYNC_BASELINE_AR_PER_TENSOR),
	    0, 1e-9, "one GPU: nothing to synchronize");
	/* efficiency factors scale the bandwidth */
	k.inter_eff = 0.5;
	k.intra_eff = 0.5;
	near(
	    baseline_step(m, cluster(2, 8), k, AUTOSYNC_BASELINE_AR_PER_TENSOR),
	    fmin(autosync_sim_ring(16, 1e8, 5e-6, 50e9),
		 autosync_sim_double_tree(16, 1e8, 5e-6, 50e9)),
	    1e-9, "efficiency 0.5 halves the bandwidth");
	/* oversubscribed uplinks beyond nodes_per_switch: like slower NICs */
	{
		autosync_cluster_t c = cluster(4, 8), slow = cluster(4, 8);
		autosync_costs_t ko = ideal_costs();
		ko.oversubscription = 2;
		c.nodes_per_switch = 2;
		slow.nic_bw /= 2;
		near(baseline_step(m, c, ko, AUTOSYNC_BASELINE_AR_PER_TENSOR),
		     baseline_step(m, slow, ideal_costs(),
				   AUTOSYNC_BASELINE_AR_PER_TENSOR),
		     1e-12,
		     "oversubscription 2 across switches = half the NIC");
		c.nodes_per_switch = 4;
		near(baseline_step(m, c, ko, AUTOSYNC_BASELINE_AR_PER_TENSOR),
		     baseline_step(m, cluster(4, 8), ideal_costs(),
				   AUTOSYNC_BASELINE_AR_PER_TENSOR),
		     1e-12, "within one switch: no effect");
	}
	autosync_model_destroy(m);

	/* PS with link accounting: 8 equal tensors on 8 nodes x 1 GPU, one
	 * server each (ps-loadbalanced): the busiest NIC carries
	 * 2(p-1)/p M (= cost-models.md section 3, co-located, k = p) */
	m = parse(
	    "autosync_model: 1\nname: ps\ntensors:\n"
	    "  - {name: w, dtype: float32, shape: [1250000], repeat: 8}\n");
	k = ideal_costs();
	k.alpha_inter_override = 1e-15;
	{
		autosync_cluster_t c = cluster(8, 1);
		double load[8];
		c.nics_per_node = 1;
		for (int i = 0; i < 8; i++)
			load[i] = 5e6;
		near(baseline_step(m, c, k, AUTOSYNC_BASELINE_PS_LB),
		     autosync_sim_ps_colocated(8, 8, load, 12.5e9), 1e-7,
		     "ps-loadbalanced, balanced: 1.75 M/B (%.6g s)",
		     autosync_sim_ps_colocated(8, 8, load, 12.5e9));
		/* sparse: PS moves rows touched, not the vocabulary */
	}
	autosync_model_destroy(m);
}

static void overlap(void)
{
	/* 3 layers, forward 1 ms each, backward 2 ms each; one 4 MB tensor
	 * per layer; 1 node x 2 GPUs at 1 GB/s, alpha 0: each all-reduce
	 * takes n/B = 4 ms. Gradients ready at 5, 7, 9 ms; the serialized
	 * network ends at 5+4, max(7,9)+4, max(9,13)+4 = 17 ms. */
	autosync_model_t *m =
	    parse("autosync_model: 1\nname: ov\ntensors:\n"
		  "  - {name: l0.w, dtype: float32, shape: [1000000]}\n"
		  "  - {name: l1.w, dtype: float32, shape: [1000000]}\n"
		  "  - {name: l2.w, dtype: float32, shape: [1000000]}\n"
		  "layers:\n"
		  "  - {name: l0, fwd_time: 0.001, bwd_time: 0.002}\n"
		  "  - {name: l1, fwd_time: 0.001, bwd_time: 0.002}\n"
		  "  - {name: l2, fwd_time: 0.001, bwd_time: 0.002}\n");
	autosync_cluster_t c = cluster(1, 2);
	autosync_costs_t k = ideal_costs();
	autosync_planner_t *p;
	autosync_plan_t *pl;
	autosync_plan_summary_t s;
	static const double want[3][3] = {
	    {5e-3, 5e-3, 9e-3}, {7e-3, 9e-3, 13e-3}, {9e-3, 13e-3, 17e-3}};

	c.intra_bw = 1e9;
	c.intra_lat = 0;
	p = planner(m, c, k, AUTOSYNC_FW_GENERIC);
	pl =
	    autosync_planner_baseline(p, AUTOSYNC_BASELINE_AR_PER_TENSOR, NULL);
	ok(pl && autosync_plan_summary(pl, &s) == 0 &&
	       autosync_plan_nbuckets(pl) == 3,
	   "3 buckets");
	if (pl) {
		near(s.fwd_time, 3e-3, 1e-12, "forward 3 ms");
		near(s.bwd_time, 6e-3, 1e-12, "backward 6 ms");
		near(s.step_time, 17e-3 + s.opt_time, 1e-9,
		     "step = last sync end + optimizer");
		near(s.exposed_comm, 8e-3, 1e-9,
		     "8 ms of communication exposed");
		near(s.bound, 17e-3 + s.opt_time, 1e-9,
		     "bound: first ready + sum of comm = 17 ms");
		for (int b = 0; b < 3; b++) {
			const autosync_bucket_t *bk =
			    autosync_plan_bucket(pl, (size_t)b);
			near(bk->ready, want[b][0], 1e-12, "bucket %d ready",
			     b);
			near(bk->start, want[b][1], 1e-12, "bucket %d start",
			     b);
			near(bk->end, want[b][2], 1e-12, "bucket %d end", b);
			is(bk->tensors[0],
			   b == 0   ? "l2.w"
			   : b == 1 ? "l1.w"
				    : "l0.w",
			   "bucket %d holds the layer in reverse order", b);
		}
	}
	autosync_plan_destroy(pl);
	pl = autosync_planner_run(p, NULL);
	memset(&s, 0, sizeof(s));
	if (pl)
		autosync_plan_summary(pl, &s);
	ok(pl && s.step_time <= 17e-3 + s.opt_time + 1e-12,
	   "the search is not slower than per-tensor (%.6g s)", s.step_time);
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
}

/* tensors t0..t9 in registration order, sizes in MiB, one layer each */
static const char baseline_model[] =
    "autosync_model: 1\nname: bl\ntensors:\n"
    "  - {name: t0, dtype: float32, shape: [262144]}\n"	 /* 1 MiB */
    "  - {name: t1, dtype: float16, shape: [1048576]}\n" /* 2 MiB fp16 */
    "  - {name: t2, dtype: float32, shape: [262144]}\n"	 /* 1 */
    "  - {name: t3, dtype: float32, shape: [262144]}\n"	 /* 1 */
    "  - {name: t4, dtype: float32, shape: [7864320]}\n" /* 30 */
    "  - {name: t5, dtype: float32, shape: [1310720]}\n" /* 5 */
    "  - {name: t6, dtype: float32, shape: [2621440]}\n" /* 10 */
    "  - {name: t7, dtype: float32, shape: [2621440]}\n" /* 10 */
    "  - {name: t8, dtype: float32, shape: [157286]}\n"	 /* 0.6 */
    "  - {name: t9, dtype: float32, shape: [131072]}\n"	 /* 0.5 */
    "layers:\n"
    "  - {name: t0, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t1, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t2, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t3, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t4, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t5, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t6, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t7, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t8, fwd_time: 0.0002, bwd_time: 0.00045}\n"
    "  - {name: t9, fwd_time: 0.0002, bwd_time: 0.00045}\n";

static void check_buckets(const autosync_plan_t *pl, const char *const *want,
			  const char *what)
{
	autosync_plan_summary_t s;
	size_t nw = 0;
	int good = 1;
	char got[512] = "";

	for (nw = 0; want[nw]; nw++)
		;
	autosync_plan_summary(pl, &s);
	for (size_t b = 0; b < autosync_plan_nbuckets(pl); b++) {
		const autosync_bucket_t *bk = autosync_plan_bucket(pl, b);
		size_t l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "%s{", b ? " " : "");
		for (size_t j = 0; j < bk->ntensors; j++) {
			l = strlen(got);
			snprintf(got + l, sizeof(got) - l, "%s%s", j ? "," : "",
				 bk->tensors[j]);
		}
		l = strlen(got);
		snprintf(got + l, sizeof(got) - l, "}");
	}
	{
		char w[512] = "";
		for (size_t i = 0; i < nw; i++) {
			size_t l = strlen(w);
			snprintf(w + l, sizeof(w) - l, "%s%s", i ? " " : "",
				 want[i]);
		}
		good = !strcmp(w, got);
		is(got, w, "%s buckets", what);
	}
	(void)good;
}

/* A sparse table on PS, 2 nodes x 4 ranks, one NIC of 12.5 GB/s: each
 * rank touches 100 of 1000 rows of 32 B (+ 8 B index). Parallax
 * aggregates in the node (push: the 4 ranks' union, 1000 (1 - 0.9^4) =
 * 344 rows, once per node) but does not replicate (pull: each rank its own
 * 100 rows, 4 x 100 x 32 B per node), as the trial runtime sends them. The
 * busiest NIC carries the push: 344 x 40 B. */
static void sparse_ps(void)
{
	autosync_model_t *m =
	    parse("autosync_model: 1\nname: sp\ntensors:\n"
		  "  - {name: emb, dtype: float32, shape: [1000, 8], sparse: "
		  "true, rows_touched: 100}\n");
	autosync_cluster_t c = cluster(2, 4);
	autosync_planner_t *p;
	autosync_plan_t *pl;
	const autosync_bucket_t *b;
	double t[AUTOSYNC_TERM_N];

	c.nics_per_node = 1;
	p = planner(m, c, ideal_costs(), AUTOSYNC_FW_GENERIC);
	pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_PARALLAX, NULL);
	b = pl && autosync_plan_nbuckets(pl) == 1 ? autosync_plan_bucket(pl, 0)
						  : NULL;
	ok(b && b->kind == AUTOSYNC_SYNC_PS && b->local_agg && !b->local_repl,
	   "parallax: the table on PS, aggregated, not replicated");
	ok(pl && autosync_plan_terms(pl, t) == 0, "terms");
	if (pl)
		near(t[AUTOSYNC_TERM_PS_NETWORK], 344 * 40 / 12.5e9, 1e-15,
		     "PS network: the push of the node's union of rows, "
		     "above the 4 ranks' own pulls (%.6g s)",
		     t[AUTOSYNC_TERM_PS_NETWORK]);
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
}

static void baselines(void)
{
	autosync_model_t *m = parse(baseline_model);
	autosync_planner_t *p =
	    planner(m, cluster(4, 2), ideal_costs(), AUTOSYNC_FW_GENERIC);
	autosync_plan_t *pl;
	autosync_plan_summary_t s;
	static const char *const ddp[] = {"{t9,t8}", "{t7,t6,t5}", "{t4}",
					  "{t1}",    "{t3,t2,t0}", NULL};
	static const char *const hvd[] = {
	    "{t9,t8}", "{t7,t6}", "{t5,t4}", "{t3,t2}", "{t1}", "{t0}", NULL};
	static const char *const pt[] = {"{t9}", "{t8}", "{t7}", "{t6}",
					 "{t5}", "{t4}", "{t3}", "{t2}",
					 "{t1}", "{t0}", NULL};
	/* AutoDist greedy by bytes in graph order on 4 servers */
	static const int ps_server[10] = {0, 1, 2, 3, 0, 2, 3, 1, 2, 2};

	pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_DDP, NULL);
	check_buckets(
	    pl, ddp,
	    "ddp-default (1 MiB first, 25 MiB, per dtype, reverse order)");
	autosync_plan_summary(pl, &s);
	ok(s.bucket_cap == 25 * MiB && s.first_bucket == 1 * MiB,
	   "ddp caps recorded");
	autosync_plan_destroy(pl);

	pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_HOROVOD, NULL);
	check_buckets(pl, hvd, "horovod-default (128 MiB, 1 ms cycles)");
	autosync_plan_summary(pl, &s);
	ok(s.bucket_cap == 128 * MiB && s.cycle_time == 1e-3,
	   "horovod knobs recorded");
	near(autosync_plan_bucket(pl, 0)->ready, 3e-3, 1e-12,
	     "horovod: the first fusion waits for the 3 ms cycle tick");
	autosync_plan_destroy(pl);

	pl =
	    autosync_planner_baseline(p, AUTOSYNC_BASELINE_AR_PER_TENSOR, NULL);
	check_buckets(pl, pt, "allreduce-per-tensor");
	autosync_plan_destroy(pl);

	pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_PS_LB, NULL);
	autosync_plan_summary(pl, &s);
	{
		int good = autosync_plan_nbuckets(pl) == 10;
		for (size_t b = 0; good && b < autosync_plan_nbuckets(pl);
		     b++) {
			const autosync_bucket_t *bk =
			    autosync_plan_bucket(pl, b);
			int idx = bk->tensors[0][1] - '0';
			good = bk->kind == AUTOSYNC_SYNC_PS &&
			       bk->servers == 4 &&
			       bk->server[0] == ps_server[idx] &&
			       bk->local_agg && !bk->local_repl;
		}
		ok(good, "ps-loadbalanced: greedy least-loaded server in graph "
			 "order");
	}
	autosync_plan_destroy(pl);

	pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_PARALLAX, NULL);
	autosync_plan_summary(pl, &s);
	ok(autosync_plan_nbuckets(pl) == 1 &&
	       autosync_plan_bucket(pl, 0)->ntensors == 10,
	   "parallax, all dense and < 128 variables: one all-reduce group");
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);

	/* parallax with a sparse embedding among 300 variables: groups of 128
	 * by variable index (the sparse one skipped), the sparse one on PS */
	m = parse(
	    "autosync_model: 1\nname: px\ntensors:\n"
	    "  - {name: a, dtype: float32, shape: [8], repeat: 5}\n"
	    "  - {name: emb, dtype: float32, shape: [1000, 8], sparse: true, "
	    "rows_touched: 10}\n"
	    "  - {name: b, dtype: float32, shape: [8], repeat: 294}\n");
	p = planner(m, cluster(2, 2), ideal_costs(), AUTOSYNC_FW_GENERIC);
	pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_PARALLAX, NULL);
	autosync_plan_summary(pl, &s);
	{
		size_t sizes[4] = {0}, nps = 0, nar = 0;
		for (size_t b = 0; b < autosync_plan_nbuckets(pl); b++) {
			const autosync_bucket_t *bk =
			    autosync_plan_bucket(pl, b);
			if (bk->kind == AUTOSYNC_SYNC_PS) {
				nps++;
				ok(!strcmp(bk->tensors[0], "emb") &&
				       bk->server[0] == 0,
				   "parallax: the sparse variable goes to PS "
				   "server 0");
			} else if (nar < 4)
				sizes[nar++] = bk->ntensors;
		}
		/* 'b.*' share one layer: groups 1 and 2 are ready together and
		 * keep their creation order; group 0 holds 'a.*', ready last */
		ok(nps == 1 && nar == 3 && sizes[0] == 128 &&
		       sizes[1] == 300 - 256 && sizes[2] == 127,
		   "parallax groups: idx // 128 -> 128, 44, then 127 (+ the "
		   "sparse one) "
		   "(%zu %zu %zu)",
		   sizes[0], sizes[1], sizes[2]);
	}
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);

	sparse_ps();
	ok(!autosync_baseline_applicable(AUTOSYNC_BASELINE_PS_LB,
					 AUTOSYNC_FW_PYTORCH_DDP),
	   "DDP cannot run a parameter server");
	ok(autosync_baseline_from_name("parallax") ==
		   AUTOSYNC_BASELINE_PARALLAX &&
	       autosync_baseline_from_name("nope") < 0,
	   "baseline names");
}

/* more bandwidth never predicts slower; more nodes never make a collective
 * cheaper per byte; the search never loses to an applicable baseline */
static void properties(void)
{
	static const char *const models[] = {"resnet50", "bert-base", "ncf",
					     "vgg16"};
	static const unsigned nodes[] = {1, 2, 8, 64};
	autosync_error_t err = {""};
	int mono_bw = 1, mono_nodes = 1, never_worse = 1, checked = 0,
	    bound_ok = 1;

	for (size_t mi = 0; mi < sizeof(models) / sizeof(models[0]); mi++) {
		autosync_model_t *m =
		    autosync_model_open(models[mi], catalog, &err);
		if (!m) {
			ok(0, "%s: %s", models[mi], err.text);
			continue;
		}
		for (size_t ni = 0; ni < sizeof(nodes) / sizeof(nodes[0]);
		     ni++) {
			for (int fw = 0; fw < AUTOSYNC_FW_N; fw++) {
				double prev = INFINITY,
				       prevb[AUTOSYNC_BASELINE_N];
				for (int b = 0; b < AUTOSYNC_BASELINE_N; b++)
					prevb[b] = INFINITY;
				for (double f = 1; f <= 8; f *= 2) {
					autosync_cluster_t c =
					    cluster(nodes[ni], 8);
					autosync_costs_t k;
					autosync_planner_t *p;
					autosync_plan_t *pl;
					autosync_plan_summary_t s;
					autosync_costs_default(&k);
					/* the no-harm fallback (keep a baseline
					 * unless the gain beats the
					 * uncertainty) is not monotone by
					 * design; test the search itself */
					k.uncertainty = 0;
					k.margin_small_buckets = 0;
					k.margin_ps = 0;
					k.margin_tree = 0;
					k.margin_compression = 0;
					k.margin_ddp_hier = 0;
					c.nic_bw *= f;
					c.intra_bw *= f;
					p = planner(m, c, k, fw);
					pl = autosync_planner_run(p, &err);
					if (!pl ||
					    autosync_plan_summary(pl, &s) < 0) {
						ok(0, "plan: %s", err.text);
						autosync_planner_destroy(p);
						continue;
					}
					checked++;
					if (s.bound > s.step_time * (1 + 1e-12))
						bound_ok = 0;
					if (s.step_time > prev * (1 + 1e-12)) {
						mono_bw = 0;
						diag("%s %u nodes fw %d: %g -> "
						     "%g with x%g bandwidth",
						     models[mi], nodes[ni], fw,
						     prev, s.step_time, f);
					}
					prev = s.step_time;
					for (size_t b = 0;
					     b < autosync_plan_nbaselines(pl);
					     b++) {
						const char *name =
						    autosync_plan_baseline(pl,
									   b)
							->name;
						double t =
						    autosync_plan_baseline(pl,
									   b)
							->step_time;
						if (t >
						    prevb[b] * (1 + 1e-12)) {
							mono_bw = 0;
							diag("%s: baseline %s "
							     "slower with more "
							     "bandwidth",
							     models[mi], name);
						}
						prevb[b] = t;
						if (autosync_plan_baseline(pl,
									   b)
							->applicable &&
						    s.step_time >
							t * (1 + 1e-12)) {
							never_worse = 0;
							diag("%s %u nodes fw "
							     "%d: plan %g > %s "
							     "%g",
							     models[mi],
							     nodes[ni], fw,
							     s.step_time, name,
							     t);
						}
					}
					autosync_plan_destroy(pl);
					autosync_planner_destroy(p);
				}
			}
		}
		/* ring per byte grows with the node count */
		{
			double prevt = 0;
			for (unsigned n = 1; n <= 256; n *= 2) {
				autosync_costs_t k;
				double t;
				autosync_costs_default(&k);
				t = baseline_step(
				    m, cluster(n, 8), k,
				    AUTOSYNC_BASELINE_AR_PER_TENSOR);
				if (t < prevt * (1 - 1e-12))
					mono_nodes = 0;
				prevt = t;
			}
		}
		autosync_model_destroy(m);
	}
	ok(checked > 0 && mono_bw,
	   "more bandwidth never predicts slower (%d plans)", checked);
	ok(mono_nodes,
	   "more nodes never make the all-reduce of a model faster");
	ok(never_worse, "never slower than the best applicable baseline");
	ok(bound_ok, "the section 6 bound never exceeds the predicted step");
	{
		/* PS buckets run one at a time, as the runtime runs them
		 * (each ends when its slowest node has pulled): the step
		 * holds the sum of their times */
		autosync_model_t *m =
		    autosync_model_open("resnet50", catalog, &err);
		autosync_costs_t k;
		autosync_planner_t *p;
		autosync_plan_t *pl;
		autosync_plan_summary_t s;
		autosync_costs_default(&k);
		p = planner(m, cluster(4, 8), k, AUTOSYNC_FW_GENERIC);
		pl =
		    autosync_planner_baseline(p, AUTOSYNC_BASELINE_PS_LB, &err);
		memset(&s, 0, sizeof(s));
		if (pl)
			autosync_plan_summary(pl, &s);
		ok(pl && s.bound <= s.step_time * (1 + 1e-12) &&
		       s.comm_time + s.opt_time <= s.step_time * (1 + 1e-12),
		   "ps-loadbalanced: PS buckets one at a time (sum %.6g s "
		   "within the step), bound %.6g <= step %.6g",
		   s.comm_time, s.bound, s.step_time);
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
		autosync_model_destroy(m);
	}
}

/* the capability sets restrict the space; compression is opt-in */
static void capabilities(void)
{
	static const char *const models[] = {"ncf", "bert-large"};
	autosync_error_t err = {""};

	for (size_t mi = 0; mi < 2; mi++) {
		autosync_model_t *m =
		    autosync_model_open(models[mi], catalog, &err);
		for (int fw = 0; m && fw < AUTOSYNC_FW_N; fw++) {
			for (int comp = 0; comp < 2; comp++) {
				autosync_cluster_t c = cluster(16, 8);
				autosync_costs_t k;
				autosync_planner_t *p;
				autosync_plan_t *pl;
				autosync_plan_summary_t s;
				int ps = 0, algos = 0, compressed = 0, dens = 0;
				autosync_costs_default(&k);
				c.nics_per_node = 1; /* bandwidth-bound */
				p = planner(m, c, k, fw);
				autosync_planner_set_compression(p, comp);
				pl = autosync_planner_run(p, &err);
				if (!pl) {
					ok(0, "%s", err.text);
					autosync_planner_destroy(p);
					continue;
				}
				autosync_plan_summary(pl, &s);
				for (size_t b = 0;
				     b < autosync_plan_nbuckets(pl); b++) {
					const autosync_bucket_t *bk =
					    autosync_plan_bucket(pl, b);
					ps |= bk->kind == AUTOSYNC_SYNC_PS;
					if (bk->kind == AUTOSYNC_SYNC_ALLREDUCE)
						algos |= 1 << bk->algo;
					compressed |= bk->compress != 0;
					dens |= bk->densify;
				}
				if (fw == AUTOSYNC_FW_PYTORCH_DDP ||
				    fw == AUTOSYNC_FW_HOROVOD) {
					ok(!ps && !dens &&
					       (algos & (algos - 1)) == 0,
					   "%s %s: no PS, no densify, one "
					   "algorithm "
					   "per job",
					   models[mi],
					   autosync_framework_name(fw));
				}
				if (fw != AUTOSYNC_FW_PYTORCH_DDP)
					ok(s.job_compress !=
						   AUTOSYNC_COMPRESS_POWERSGD &&
					       !s.powersgd_rank,
					   "%s %s: PowerSGD only for DDP",
					   models[mi],
					   autosync_framework_name(fw));
				if (fw == AUTOSYNC_FW_AUTODIST)
					ok(!compressed &&
					       !(algos &
						 ((1 << AUTOSYNC_ALGO_TREE) |
						  (1 << AUTOSYNC_ALGO_HIER))),
					   "%s autodist: auto/ring only, no "
					   "compression",
					   models[mi]);
				if (!comp)
					ok(!compressed,
					   "%s %s: no compression unless "
					   "allowed",
					   models[mi],
					   autosync_framework_name(fw));
				if (comp && fw == AUTOSYNC_FW_GENERIC)
					ok(compressed,
					   "%s generic, bandwidth-bound, "
					   "compression "
					   "allowed: fp16/bf16 chosen",
					   models[mi]);
				autosync_plan_destroy(pl);
				autosync_planner_destroy(p);
			}
		}
		autosync_model_destroy(m);
	}
}

/* a tiny budget still returns a plan, never worse than the baselines */
static void budget(void)
{
	autosync_error_t err = {""};
	autosync_model_t *m = autosync_model_open("resnet50", catalog, &err);
	autosync_planner_t *p;
	autosync_plan_t *pl;
	autosync_plan_summary_t s;
	double best = INFINITY;

	if (!m) {
		ok(0, "%s", err.text);
		return;
	}
	p = planner(m, cluster(4, 8), ideal_costs(), AUTOSYNC_FW_GENERIC);
	ok(autosync_planner_set_budget(p, 0, &err) < 0 && errno == EINVAL,
	   "budget 0: EINVAL");
	ok(autosync_planner_set_budget(p, 1, &err) == 0, "budget 1");
	pl = autosync_planner_run(p, &err);
	ok(pl && autosync_plan_summary(pl, &s) == 0, "a plan within budget 1");
	for (size_t b = 0; pl && b < autosync_plan_nbaselines(pl); b++) {
		const autosync_plan_baseline_t *bl =
		    autosync_plan_baseline(pl, b);
		if (bl->applicable && bl->step_time < best)
			best = bl->step_time;
	}
	ok(pl && s.step_time <= best, "it is the best applicable baseline (%s)",
	   pl ? s.strategy : "-");
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
}

static void determinism(void)
{
	autosync_error_t err = {""};
	autosync_model_t *m = autosync_model_open("bert-base", catalog, &err);
	char *b1 = NULL, *b2 = NULL;
	size_t l1 = 0, l2 = 0;

	for (int round = 0; m && round < 2; round++) {
		autosync_planner_t *p = planner(m, cluster(4, 8), ideal_costs(),
						AUTOSYNC_FW_GENERIC);
		autosync_plan_t *pl = autosync_planner_run(p, &err);
		FILE *fp = open_memstream(round ? &b2 : &b1, round ? &l2 : &l1);
		if (pl)
			autosync_plan_write(pl, fp, &err);
		fclose(fp);
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
	}
	ok(b1 && b2 && l1 > 100 && l1 == l2 && !memcmp(b1, b2, l1),
	   "the same inputs give the same plan bytes (%zu bytes)", l1);
	free(b1);
	free(b2);
	autosync_model_destroy(m);
}

/* The margin of a plan's widest family, computed from the public bucket
 * view, independently of the planner's own bookkeeping. */
static double plan_margin(const autosync_plan_t *pl, const autosync_costs_t *k,
			  int fw)
{
	double m = k->uncertainty;
	size_t small = 0, ar = 0;

	for (size_t i = 0; i < autosync_plan_nbuckets(pl); i++) {
		const autosync_bucket_t *b = autosync_plan_bucket(pl, i);
		if (!(b->bytes > 0))
			continue;
		if (b->compress != AUTOSYNC_COMPRESS_NONE)
			m = fmax(m, k->margin_compression);
		if (b->kind == AUTOSYNC_SYNC_PS) {
			m = fmax(m, k->margin_ps);
			continue;
		}
		if (b->algo == AUTOSYNC_ALGO_TREE)
			m = fmax(m, k->margin_tree);
		if (b->algo == AUTOSYNC_ALGO_HIER &&
		    fw == AUTOSYNC_FW_PYTORCH_DDP)
			m = fmax(m, k->margin_ddp_hier);
		ar++;
		small += b->bytes < k->small_bucket_bytes;
	}
	if (small > 8 && small * 4 > ar)
		m = fmax(m, k->margin_small_buckets);
	return m;
}

/* No harm is measured against what the framework does untuned: the plan
 * is that default, or predicted faster than it by more than the margin of
 * every family it belongs to. */
static void no_harm(void)
{
	static const char *models[] = {"resnet50", "vgg16", "bert-large",
				       "gpt2", "ncf"};
	static const struct {
		unsigned nodes;
		double nic_bw;
	} nets[] = {{4, 12.5e9}, {16, 1.25e9}, {2, 0.125e9}};
	static const int want_def[AUTOSYNC_FW_N] = {
	    AUTOSYNC_BASELINE_DDP, AUTOSYNC_BASELINE_DDP,
	    AUTOSYNC_BASELINE_HOROVOD, AUTOSYNC_BASELINE_PARALLAX};
	autosync_error_t err = {""};
	int def_ok = 1, never_worse = 1, margin_ok = 1, kept = 0, moved = 0,
	    narrow = 0, hvd_ok = 1;

	for (int fw = 0; fw < AUTOSYNC_FW_N; fw++)
		def_ok &= autosync_baseline_default(fw) == want_def[fw];
	errno = 0;
	ok(def_ok && autosync_baseline_default(AUTOSYNC_FW_N) == -1 &&
	       errno == EINVAL,
	   "the incumbent: ddp-default for generic and pytorch-ddp, "
	   "horovod-default, parallax for autodist");
	for (size_t mi = 0; mi < sizeof(models) / sizeof(models[0]); mi++) {
		autosync_model_t *m =
		    autosync_model_open(models[mi], catalog, &err);
		if (!m) {
			ok(0, "%s: %s", models[mi], err.text);
			continue;
		}
		for (size_t ni = 0; ni < sizeof(nets) / sizeof(nets[0]); ni++)
			for (int fw = 0; fw < AUTOSYNC_FW_N; fw++) {
				autosync_cluster_t c =
				    cluster(nets[ni].nodes, 8);
				autosync_costs_t k;
				autosync_planner_t *p;
				autosync_plan_t *pl;
				autosync_plan_summary_t s;
				const char *inc =
				    autosync_baseline_name(want_def[fw]);
				double t_inc = -1;
				autosync_costs_default(&k);
				c.nic_bw = nets[ni].nic_bw;
				p = planner(m, c, k, fw);
				autosync_planner_set_compression(p, 1);
				pl = autosync_planner_run(p, &err);
				if (!pl || autosync_plan_summary(pl, &s) < 0) {
					ok(0, "plan: %s", err.text);
					autosync_planner_destroy(p);
					continue;
				}
				for (size_t b = 0;
				     b < autosync_plan_nbaselines(pl); b++)
					if (!strcmp(
						autosync_plan_baseline(pl, b)
						    ->name,
						inc))
						t_inc = autosync_plan_baseline(
							    pl, b)
							    ->step_time;
				if (!(s.step_time <= t_inc)) {
					never_worse = 0;
					diag("%s fw %d %u nodes: %g > %s %g",
					     models[mi], fw, nets[ni].nodes,
					     s.step_time, inc, t_inc);
				}
				if (fw == AUTOSYNC_FW_HOROVOD) {
					for (size_t b = 0;
					     b < autosync_plan_nbuckets(pl);
					     b++)
						hvd_ok &=
						    autosync_plan_bucket(pl, b)
							->compress ==
						    AUTOSYNC_COMPRESS_NONE;
					for (size_t e = 0;
					     e < autosync_plan_nenv(pl); e++)
						hvd_ok &= !!strcmp(
						    autosync_plan_env(pl, e)
							->name,
						    "AUTOSYNC_HOROVOD_"
						    "COMPRESSION");
				}
				if (!strcmp(s.strategy, inc)) {
					kept++;
				} else if (!(s.step_time <
					     t_inc * (1 - plan_margin(pl, &k,
								      fw)))) {
					margin_ok = 0;
					diag("%s fw %d %u nodes: %s %g is not "
					     "beyond its margin %g over %g",
					     models[mi], fw, nets[ni].nodes,
					     s.strategy, s.step_time,
					     plan_margin(pl, &k, fw), t_inc);
				} else {
					moved++;
				}
				autosync_plan_destroy(pl);
				autosync_planner_destroy(p);
				/* the same search with every family at the
				 * model's plain uncertainty: how often it
				 * would leave the default inside a family's
				 * margin */
				{
					autosync_costs_t k0 = k;
					k0.margin_small_buckets = k0.margin_ps =
					    k0.margin_tree =
						k0.margin_compression =
						    k0.margin_ddp_hier =
							k.uncertainty;
					p = planner(m, c, k0, fw);
					autosync_planner_set_compression(p, 1);
					pl = autosync_planner_run(p, NULL);
					if (pl &&
					    autosync_plan_summary(pl, &s) ==
						0 &&
					    strcmp(s.strategy, inc) &&
					    !(s.step_time <
					      t_inc * (1 - plan_margin(pl, &k,
								       fw))))
						narrow++;
					autosync_plan_destroy(pl);
					autosync_planner_destroy(p);
				}
			}
		autosync_model_destroy(m);
	}
	ok(narrow > 0,
	   "with one margin for every family, %d plans would "
	   "have left the default inside a wider family's margin",
	   narrow);
	ok(never_worse, "never predicted slower than the framework's default");
	ok(hvd_ok, "Horovod plans never compress (nothing outside its code "
		   "sets Horovod's compression) nor export a variable for it");
	ok(margin_ok && kept > 0 && moved > 0,
	   "a plan leaves the default only beyond its family's margin "
	   "(%d kept, %d moved)",
	   kept, moved);
}

/* The cases that kept a per-tensor or fusion-0 plan inside the model's
 * own uncertainty: the default stays, and the reason says which margin
 * applied. */
static void no_harm_cases(void)
{
	static const struct {
		const char *model;
		int fw;
		const char *strategy;
	} cases[] = {
	    {"gpt2", AUTOSYNC_FW_PYTORCH_DDP, "ddp-default"},
	    {"vgg16", AUTOSYNC_FW_PYTORCH_DDP, "ddp-default"},
	    {"gpt2", AUTOSYNC_FW_HOROVOD, "horovod-default"},
	    {"bert-large", AUTOSYNC_FW_HOROVOD, "horovod-default"},
	};
	autosync_error_t err = {""};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		autosync_model_t *m =
		    autosync_model_open(cases[i].model, catalog, &err);
		autosync_costs_t k;
		autosync_planner_t *p;
		autosync_plan_t *pl;
		autosync_plan_summary_t s;
		autosync_costs_default(&k);
		if (!m) {
			ok(0, "%s: %s", cases[i].model, err.text);
			continue;
		}
		p = planner(m, cluster(4, 8), k, cases[i].fw);
		pl = autosync_planner_run(p, &err);
		memset(&s, 0, sizeof(s));
		if (!pl || autosync_plan_summary(pl, &s) < 0)
			s.reason = err.text;
		ok(pl && s.strategy && !strcmp(s.strategy, cases[i].strategy) &&
		       !strncmp(s.reason, "kept ", 5) &&
		       strstr(s.reason, "the framework's default") &&
		       strstr(s.reason, "margin for "),
		   "%s, %s: keeps %s and says which margin applied (%s)",
		   cases[i].model, autosync_framework_name(cases[i].fw),
		   cases[i].strategy, s.reason);
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
		autosync_model_destroy(m);
	}
}

/* A model without FLOPs plans on a guess and says so; a measured step
 * compute replaces the guess's total and keeps its proportions. */
static void step_compute(void)
{
	autosync_model_t *m = parse(
	    "autosync_model: 1\nname: noflops\ntensors:\n"
	    "  - {name: a.w, layer: a, dtype: float32, shape: [4000000]}\n"
	    "  - {name: b.w, layer: b, dtype: float32, shape: [1000000]}\n");
	autosync_model_t *sc;
	autosync_error_t err = {""};
	autosync_costs_t k;
	autosync_planner_t *p;
	autosync_plan_t *pl;
	autosync_plan_summary_t s;
	double f0[2], b0[2], f1[2], b1[2], fw, bw;

	autosync_costs_default(&k);
	is(autosync_model_compute_source(m), "estimated",
	   "no FLOPs: estimated");
	p = planner(m, cluster(2, 8), k, AUTOSYNC_FW_PYTORCH_DDP);
	pl = autosync_planner_run(p, &err);
	ok(pl && autosync_plan_summary(pl, &s) == 0 &&
	       strstr(s.reason, "; compute: estimated from parameter counts "
				"(no FLOPs in the model file); export the "
				"model with autosync_export to measure them"),
	   "the reason says the compute is a guess");
	autosync_plan_destroy(pl);
	autosync_planner_compute_times(p, NULL, NULL, NULL, f0, b0, NULL);
	autosync_planner_destroy(p);

	errno = 0;
	ok(autosync_model_set_step_compute(m, -1, &err) == -1 &&
	       errno == EINVAL &&
	       autosync_model_set_step_compute(m, 3601, NULL) == -1,
	   "a step compute outside 0..3600 s is refused (%s)", err.text);
	ok(autosync_model_set_step_compute(m, 0.020, &err) == 0,
	   "a measured 20 ms step compute");
	is(autosync_model_compute_source(m), "measured", "compute: measured");
	p = planner(m, cluster(2, 8), k, AUTOSYNC_FW_PYTORCH_DDP);
	autosync_planner_compute_times(p, &fw, &bw, NULL, f1, b1, NULL);
	ok(fabs(fw + bw - 0.020) < 1e-12, "forward + backward = 20 ms (%g)",
	   fw + bw);
	ok(fabs(f1[0] / f1[1] - f0[0] / f0[1]) < 1e-9 &&
	       fabs(b1[0] / f1[0] - b0[0] / f0[0]) < 1e-9,
	   "the layers keep their proportions");
	pl = autosync_planner_run(p, &err);
	ok(pl && autosync_plan_summary(pl, &s) == 0 &&
	       strstr(s.reason, "; compute: 20 ms per step, measured") &&
	       fabs(s.fwd_time + s.bwd_time - 0.020) < 1e-12,
	   "the plan uses it and says so");
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	sc = autosync_model_scale(m, 4, &err);
	is(sc ? autosync_model_compute_source(sc) : err.text, "measured",
	   "a scaled copy keeps the measurement");
	autosync_model_destroy(sc);
	autosync_model_destroy(m);
	/* per-layer measured times survive scaling too (they were replaced by
	 * FLOPs estimated from the parameters) */
	m = parse(
	    "autosync_model: 1\nname: timed\ntensors:\n"
	    "  - {name: a.w, layer: a, dtype: float32, shape: [4000000]}\n"
	    "layers:\n"
	    "  - {name: a, fwd_time: 0.003, bwd_time: 0.006}\n");
	sc = autosync_model_scale(m, 8, &err);
	if (sc) {
		double tf0, tb0, tf1, tb1;
		autosync_planner_t *p0 = planner(m, cluster(2, 8), k,
						 AUTOSYNC_FW_PYTORCH_DDP),
				   *p1 = planner(sc, cluster(2, 8), k,
						 AUTOSYNC_FW_PYTORCH_DDP);
		autosync_planner_compute_times(p0, &tf0, &tb0, NULL, NULL, NULL,
					       NULL);
		autosync_planner_compute_times(p1, &tf1, &tb1, NULL, NULL, NULL,
					       NULL);
		ok(fabs(tf0 - 0.003) < 1e-12 && tf1 == tf0 && tb1 == tb0 &&
		       !strcmp(autosync_model_compute_source(sc), "time"),
		   "a scaled copy keeps measured layer times (%g/%g -> %g/%g)",
		   tf0, tb0, tf1, tb1);
		autosync_planner_destroy(p0);
		autosync_planner_destroy(p1);
	} else {
		ok(0, "scale: %s", err.text);
	}
	autosync_model_destroy(sc);
	autosync_model_destroy(m);
}

/* A scaled-down trial model: every size knob is divided by the scale, so
 * the baselines keep the bucket count they have at full size (absolute
 * knobs gave DDP 2 buckets on VGG-16/32 where the full-size job has 6). */
static void scaled_knobs(void)
{
	autosync_error_t err = {0};
	autosync_model_t *m = autosync_model_open("vgg16", catalog, &err);
	autosync_model_t *s32 = m ? autosync_model_scale(m, 32, &err) : NULL;
	autosync_model_t *s2 = s32 ? autosync_model_scale(s32, 2, &err) : NULL;
	static const int bl[] = {AUTOSYNC_BASELINE_DDP,
				 AUTOSYNC_BASELINE_HOROVOD};
	static const double cap[] = {25 * MiB, 128 * MiB};

	if (!s2) {
		ok(0, "vgg16 scaled: %s", err.text);
		return;
	}
	ok(autosync_model_grad_scale(m) == 1 &&
	       autosync_model_grad_scale(s32) == 32 &&
	       autosync_model_grad_scale(s2) == 64,
	   "gradient scale: 1, 32, and 64 for a copy of the copy");
	for (int i = 0; i < 2; i++) {
		autosync_planner_t *pf =
				       planner(m, cluster(4, 2), ideal_costs(),
					       AUTOSYNC_FW_GENERIC),
				   *ps = planner(s32, cluster(4, 2),
						 ideal_costs(),
						 AUTOSYNC_FW_GENERIC),
				   *pa = planner(s32, cluster(4, 2),
						 ideal_costs(),
						 AUTOSYNC_FW_GENERIC);
		autosync_plan_t *full, *sc, *abs;
		autosync_plan_summary_t a, b;

		autosync_planner_set_scaled_knobs(pa, 0);
		full = autosync_planner_baseline(pf, bl[i], NULL);
		sc = autosync_planner_baseline(ps, bl[i], NULL);
		abs = autosync_planner_baseline(pa, bl[i], NULL);
		autosync_plan_summary(sc, &a);
		autosync_plan_summary(abs, &b);
		ok(autosync_plan_nbuckets(sc) == autosync_plan_nbuckets(full) &&
		       autosync_plan_nbuckets(full) > 2,
		   "%s on vgg16/32: the full-size job's %zu buckets (%zu)",
		   autosync_baseline_name(bl[i]), autosync_plan_nbuckets(full),
		   autosync_plan_nbuckets(sc));
		near(a.bucket_cap, cap[i] / 32, 1e-6,
		     "%s: its cap divided by 32 is recorded",
		     autosync_baseline_name(bl[i]));
		ok(b.bucket_cap == cap[i] &&
		       autosync_plan_nbuckets(abs) < autosync_plan_nbuckets(sc),
		   "%s: absolute knobs give fewer buckets (%zu), as before",
		   autosync_baseline_name(bl[i]), autosync_plan_nbuckets(abs));
		autosync_plan_destroy(full);
		autosync_plan_destroy(sc);
		autosync_plan_destroy(abs);
		autosync_planner_destroy(pf);
		autosync_planner_destroy(ps);
		autosync_planner_destroy(pa);
	}
	autosync_model_destroy(s2);
	autosync_model_destroy(s32);
	autosync_model_destroy(m);
}

/* The simulator's breakdown: the communication parts add up to the
 * buckets' times, compute + exposed to the step, the counts to the plan's;
 * a one-node cluster has nothing inter-node; plan files carry none. */
/* the *_bytes terms: each bucket's bytes in exactly one of ps, tree,
 * hier, ring (ring and NCCL's choice), compressed ones counted again */
static int check_bytes_terms(const autosync_plan_t *pl, const double *t,
			     char *why, size_t wl)
{
	double want[AUTOSYNC_TERM_N] = {0};

	for (size_t b = 0; b < autosync_plan_nbuckets(pl); b++) {
		const autosync_bucket_t *bk = autosync_plan_bucket(pl, b);
		int k =
		    bk->kind == AUTOSYNC_SYNC_PS     ? AUTOSYNC_TERM_PS_BYTES
		    : bk->algo == AUTOSYNC_ALGO_TREE ? AUTOSYNC_TERM_TREE_BYTES
		    : bk->algo == AUTOSYNC_ALGO_HIER ? AUTOSYNC_TERM_HIER_BYTES
						     : AUTOSYNC_TERM_RING_BYTES;
		want[k] += bk->bytes;
		if (bk->compress != AUTOSYNC_COMPRESS_NONE)
			want[AUTOSYNC_TERM_COMPRESSED_BYTES] += bk->bytes;
	}
	for (int k = AUTOSYNC_TERM_PS_BYTES; k < AUTOSYNC_TERM_N; k++)
		if (fabs(t[k] - want[k]) >
		    1e-9 * t[AUTOSYNC_TERM_GRAD_BYTES] + 1e-9)
			return snprintf(why, wl, "%s %.9g, buckets %.9g",
					autosync_term_name(k), t[k], want[k]),
			       0;
	if (fabs(t[AUTOSYNC_TERM_PS_BYTES] + t[AUTOSYNC_TERM_TREE_BYTES] +
		 t[AUTOSYNC_TERM_HIER_BYTES] + t[AUTOSYNC_TERM_RING_BYTES] -
		 t[AUTOSYNC_TERM_GRAD_BYTES]) >
	    1e-9 * t[AUTOSYNC_TERM_GRAD_BYTES] + 1e-9)
		return snprintf(why, wl, "family bytes != grad_bytes"), 0;
	return 1;
}

static int check_terms(const autosync_plan_t *pl, const autosync_model_t *m,
		       unsigned nodes, char *why, size_t wl)
{
	static const int parts[] = {
	    AUTOSYNC_TERM_LAT_INTRA, AUTOSYNC_TERM_LAT_INTER,
	    AUTOSYNC_TERM_BW_INTRA,  AUTOSYNC_TERM_BW_INTER,
	    AUTOSYNC_TERM_SPARSE,    AUTOSYNC_TERM_CAST,
	    AUTOSYNC_TERM_LAUNCH,    AUTOSYNC_TERM_PS_NETWORK,
	    AUTOSYNC_TERM_PS_SERVER, AUTOSYNC_TERM_PS_MESSAGES};
	double t[AUTOSYNC_TERM_N], sum = 0, bytes = 0, wire = 0;
	autosync_plan_summary_t s;

	if (autosync_plan_terms(pl, t) < 0 || autosync_plan_summary(pl, &s) < 0)
		return snprintf(why, wl, "no terms"), 0;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (t[parts[i]] < 0)
			return snprintf(why, wl, "%s < 0",
					autosync_term_name(parts[i])),
			       0;
		sum += t[parts[i]];
	}
	for (size_t b = 0; b < autosync_plan_nbuckets(pl); b++) {
		bytes += autosync_plan_bucket(pl, b)->bytes;
		wire += autosync_plan_bucket(pl, b)->wire_bytes;
	}
	if (fabs(sum - t[AUTOSYNC_TERM_COMM]) > 1e-9 * (sum + 1e-12) ||
	    fabs(t[AUTOSYNC_TERM_COMM] - s.comm_time) > 1e-12 + 1e-9 * sum)
		return snprintf(why, wl, "parts %.9g, comm_s %.9g, plan %.9g",
				sum, t[AUTOSYNC_TERM_COMM], s.comm_time),
		       0;
	if (fabs(t[AUTOSYNC_TERM_FORWARD] + t[AUTOSYNC_TERM_BACKWARD] +
		 t[AUTOSYNC_TERM_OPTIMIZER] + t[AUTOSYNC_TERM_EXPOSED] -
		 s.step_time) > 1e-9 * s.step_time ||
	    fabs(t[AUTOSYNC_TERM_EXPOSED] + t[AUTOSYNC_TERM_HIDDEN] -
		 (t[AUTOSYNC_TERM_COMM] > t[AUTOSYNC_TERM_EXPOSED]
		      ? t[AUTOSYNC_TERM_COMM]
		      : t[AUTOSYNC_TERM_EXPOSED])) > 1e-9 * s.step_time)
		return snprintf(why, wl, "compute + exposed != step %.9g",
				s.step_time),
		       0;
	if (t[AUTOSYNC_TERM_BUCKETS] != (double)autosync_plan_nbuckets(pl) ||
	    fabs(t[AUTOSYNC_TERM_GRAD_BYTES] - bytes) > 1e-6 * bytes ||
	    fabs(t[AUTOSYNC_TERM_WIRE_BYTES] - wire) > 1e-6 * (wire + 1) ||
	    t[AUTOSYNC_TERM_PARAMS] != (double)autosync_model_params(m) ||
	    t[AUTOSYNC_TERM_TENSORS] != (double)autosync_model_ntensors(m) ||
	    t[AUTOSYNC_TERM_LAYERS] != (double)autosync_model_nlayers(m))
		return snprintf(why, wl, "counts"), 0;
	if (nodes == 1 &&
	    (t[AUTOSYNC_TERM_LAT_INTER] != 0 || t[AUTOSYNC_TERM_BW_INTER] != 0))
		return snprintf(why, wl, "inter-node terms on one node"), 0;
	return check_bytes_terms(pl, t, why, wl);
}

static autosync_costs_t default_costs(void)
{
	autosync_costs_t k;
	autosync_costs_default(&k);
	return k;
}

/* the plan as written, read back: the reader checks the hash against the
 * decisions it read, so this fails when the file leaves one out */
static int reads_back(const autosync_plan_t *pl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	autosync_plan_t *back;
	int r;

	if (!fp)
		return 0;
	r = autosync_plan_write(pl, fp, NULL);
	if (fclose(fp) != 0 || r < 0) {
		free(buf);
		return 0;
	}
	back = autosync_plan_parse(buf, len, "mem", NULL);
	r = back && !strcmp(autosync_plan_hash(back), autosync_plan_hash(pl));
	autosync_plan_destroy(back);
	free(buf);
	return r;
}

static void terms(void)
{
	static const char *const models[] = {"resnet50", "ncf", "bert-base"};
	static const unsigned nodes[] = {1, 4};
	autosync_error_t err = {0};
	char why[200] = "";
	int good = 1, n = 0, hier = 0, nback = 0, ps = 0;

	ok(!strcmp(autosync_term_name(0), "forward_s") &&
	       !strcmp(autosync_term_name(AUTOSYNC_TERM_LAYERS), "layers") &&
	       !strcmp(autosync_term_name(AUTOSYNC_TERM_N - 1),
		       "compressed_bytes") &&
	       !autosync_term_name(AUTOSYNC_TERM_N) && !autosync_term_name(-1),
	   "term names");
	for (size_t mi = 0; mi < 3; mi++)
		for (size_t ni = 0; ni < 2; ni++) {
			autosync_model_t *m =
			    autosync_model_open(models[mi], catalog, &err);
			autosync_planner_t *p =
			    m ? planner(m, cluster(nodes[ni], 8),
					default_costs(), AUTOSYNC_FW_GENERIC)
			      : NULL;
			if (!p) {
				ok(0, "%s: %s", models[mi], err.text);
				autosync_model_destroy(m);
				continue;
			}
			autosync_planner_set_compression(p, 1);
			for (int i = -AUTOSYNC_BASELINE_N - 1; i < 30 && good;
			     i++) {
				autosync_plan_t *pl =
				    i < -1 ? autosync_planner_baseline(
						 p, -i - 2, NULL)
				    : i == -1 ? autosync_planner_run(p, NULL)
					      : autosync_planner_random(
						    p, (uint64_t)i, NULL);
				double t[AUTOSYNC_TERM_N];
				if (!pl)
					continue;
				n++;
				if (!check_terms(pl, m, nodes[ni], why,
						 sizeof(why))) {
					autosync_plan_summary_t s;
					autosync_plan_summary(pl, &s);
					good = 0;
					diag("%s on %u nodes, %s: %s",
					     models[mi], nodes[ni], s.strategy,
					     why);
				}
				if (reads_back(pl))
					nback++;
				else {
					autosync_plan_summary_t s;
					autosync_plan_summary(pl, &s);
					diag(
					    "%s on %u nodes, %s: does not read "
					    "back with its hash",
					    models[mi], nodes[ni], s.strategy);
				}
				for (size_t b = 0;
				     b < autosync_plan_nbuckets(pl); b++)
					ps +=
					    autosync_plan_bucket(pl, b)->kind ==
					    AUTOSYNC_SYNC_PS;
				autosync_plan_terms(pl, t);
				hier += nodes[ni] > 1 &&
					t[AUTOSYNC_TERM_LAT_INTRA] > 0 &&
					t[AUTOSYNC_TERM_LAT_INTER] > 0;
				autosync_plan_destroy(pl);
			}
			autosync_planner_destroy(p);
			autosync_model_destroy(m);
		}
	ok(good && n > 150 && hier > 0,
	   "terms add up on %d plans (baselines, search, random; %d with both "
	   "levels)",
	   n, hier);
	ok(nback == n && ps > 0,
	   "every one of them, written and read back, has its hash (%d of %d; "
	   "%d PS buckets)",
	   nback, n, ps);
	{
		autosync_model_t *m =
		    autosync_model_open("resnet50", catalog, &err);
		autosync_planner_t *p = planner(m, cluster(2, 8), ideal_costs(),
						AUTOSYNC_FW_GENERIC);
		autosync_plan_t *pl = autosync_planner_run(p, NULL), *back;
		char *buf = NULL;
		size_t len = 0;
		FILE *fp = open_memstream(&buf, &len);
		double t[AUTOSYNC_TERM_N];
		autosync_plan_write(pl, fp, NULL);
		fclose(fp);
		back = autosync_plan_parse(buf, len, "mem", NULL);
		ok(back && autosync_plan_terms(back, t) == -1 &&
		       errno == ENOENT,
		   "a plan read from a file has no terms (ENOENT)");
		autosync_plan_destroy(back);
		autosync_plan_destroy(pl);
		free(buf);
		autosync_planner_destroy(p);
		autosync_model_destroy(m);
	}
}

/* PowerSGD on one 4096 x 4096 float32 matrix, 16 nodes x 1 GPU, one 12.5
 * GB/s NIC each: P and Q are 4096 x 4 (rank 4, the lowest tried); the
 * bucket's time is two all-reduces of 64 KiB, 6 n m r + 2 n r^2 FLOPs at
 * 100 TFLOP/s and three passes over the 64 MiB gradient at cast_bw. */
static void powersgd(void)
{
	autosync_model_t *m =
	    parse("autosync_model: 1\nname: mat\ntensors:\n"
		  "  - {name: l.w, dtype: float32, shape: [4096, 4096]}\n"
		  "  - {name: l.b, dtype: float32, shape: [4096]}\n");
	autosync_cluster_t c = cluster(16, 1);
	autosync_costs_t k = ideal_costs();
	autosync_error_t err = {""};
	autosync_planner_t *p;
	autosync_plan_t *pl, *back = NULL;
	autosync_plan_summary_t s;
	const autosync_bucket_t *b;
	double n = 4096, r = 4, ar, flops, want;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	c.nics_per_node = 1;
	k.gpu_flops = 100e12;
	for (int fw = 0; fw < AUTOSYNC_FW_N; fw++) {
		p = planner(m, c, k, fw);
		pl = autosync_planner_run(p, &err);
		memset(&s, 0, sizeof(s));
		if (pl)
			autosync_plan_summary(pl, &s);
		ok(pl && s.job_compress == AUTOSYNC_COMPRESS_NONE,
		   "%s, compression not allowed: no PowerSGD (%s)",
		   autosync_framework_name(fw), pl ? s.strategy : err.text);
		autosync_plan_destroy(pl);
		autosync_planner_set_compression(p, 1);
		pl = autosync_planner_run(p, &err);
		memset(&s, 0, sizeof(s));
		if (pl)
			autosync_plan_summary(pl, &s);
		ok(pl && (s.job_compress == AUTOSYNC_COMPRESS_POWERSGD) ==
			     (fw == AUTOSYNC_FW_PYTORCH_DDP),
		   "%s, compression allowed: PowerSGD %s (%s, %s)",
		   autosync_framework_name(fw),
		   fw == AUTOSYNC_FW_PYTORCH_DDP ? "chosen" : "never",
		   pl ? s.strategy : err.text,
		   pl ? autosync_compress_name(s.job_compress) : "-");
		if (fw != AUTOSYNC_FW_PYTORCH_DDP) {
			autosync_plan_destroy(pl);
			autosync_planner_destroy(p);
			continue;
		}
		b = pl ? autosync_plan_bucket(pl, 0) : NULL;
		ok(b && autosync_plan_nbuckets(pl) == 1 &&
		       b->compress == AUTOSYNC_COMPRESS_POWERSGD &&
		       b->powersgd_rank == 4 && s.powersgd_rank == 4,
		   "one bucket, PowerSGD rank 4");
		/* the bias (1-D) is all-reduced as it is */
		near(b ? b->wire_bytes : -1, (n + n) * r * 4 + 4096 * 4, 0,
		     "wire bytes: (n + m) r x 4 B + the bias's 16 KiB");
		near(b ? b->bytes : -1, (n * n + n) * 4, 0,
		     "gradient bytes: 64 MiB + 16 KiB");
		ar = b && b->algo == AUTOSYNC_ALGO_RING
			 ? autosync_sim_ring(16, n * r * 4, 5e-6, 12.5e9)
		     : b && b->algo == AUTOSYNC_ALGO_TREE
			 ? autosync_sim_double_tree(16, n * r * 4, 5e-6, 12.5e9)
			 : fmin(autosync_sim_ring(16, n * r * 4, 5e-6, 12.5e9),
				autosync_sim_double_tree(16, n * r * 4, 5e-6,
							 12.5e9));
		flops = 6 * n * n * r + 2 * n * r * r;
		want =
		    2 * ar + flops / 100e12 + 3 * (n * n + n) * 4 / k.cast_bw;
		want +=
		    b && b->algo == AUTOSYNC_ALGO_RING
			? autosync_sim_ring(16, 4096 * 4, 5e-6, 12.5e9)
		    : b && b->algo == AUTOSYNC_ALGO_TREE
			? autosync_sim_double_tree(16, 4096 * 4, 5e-6, 12.5e9)
			: fmin(autosync_sim_ring(16, 4096 * 4, 5e-6, 12.5e9),
			       autosync_sim_double_tree(16, 4096 * 4, 5e-6,
							12.5e9));
		near(b ? b->comm : -1, want, 1e-12,
		     "bucket time = bias + P + Q all-reduces + %.4g FLOPs + "
		     "error feedback = %.6g s",
		     flops, want);
		ok(autosync_plan_nenv(pl) >= 4, "DDP variables");
		for (size_t i = 0; pl && i < autosync_plan_nenv(pl); i++) {
			const autosync_var_t *v = autosync_plan_env(pl, i);
			if (!strcmp(v->name, "AUTOSYNC_DDP_COMM_HOOK"))
				is(v->value, "powersgd", "%s", v->name);
			if (!strcmp(v->name, "AUTOSYNC_DDP_POWERSGD_RANK"))
				is(v->value, "4", "%s", v->name);
		}
		fp = open_memstream(&text, &len);
		ok(fp && autosync_plan_write(pl, fp, &err) == 0 &&
		       fclose(fp) == 0 &&
		       (back = autosync_plan_parse(text, len, "mem", &err)),
		   "written and read back: %s", err.text);
		ok(back &&
		       !strcmp(autosync_plan_hash(back),
			       autosync_plan_hash(pl)) &&
		       autosync_plan_bucket(back, 0)->powersgd_rank == 4,
		   "the same hash and rank");
		autosync_plan_destroy(back);
		free(text);
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
	}
	autosync_model_destroy(m);
}

/* The same random plan from two planners (random plans ignore the costs)
 * and its terms under each; -1 when either fails. */
static int random_pair(autosync_planner_t *p0, autosync_planner_t *p1,
		       uint64_t seed, autosync_plan_t **a, autosync_plan_t **b,
		       double *ta, double *tb)
{
	*a = autosync_planner_random(p0, seed, NULL);
	*b = autosync_planner_random(p1, seed, NULL);
	return *a && *b && autosync_plan_terms(*a, ta) == 0 &&
		       autosync_plan_terms(*b, tb) == 0
		   ? 0
		   : -1;
}

/* every term but 'moved' and the timeline's sums is the same */
static int only_moved(const double *ta, const double *tb, int moved)
{
	for (int t = 0; t < AUTOSYNC_TERM_N; t++)
		if (t != moved && t != AUTOSYNC_TERM_COMM &&
		    t != AUTOSYNC_TERM_EXPOSED && t != AUTOSYNC_TERM_HIDDEN &&
		    ta[t] != tb[t])
			return 0;
	return 1;
}

/* gamma_half: the reduction of 16-bit data adds to a compressed bucket's
 * cast term exactly (p - 1)/p x its 16-bit bytes x gamma_half (it is
 * measured where it runs, what it adds beyond the transfer); nothing but
 * the cast term and the timeline's sums changes: the same random plans
 * under every constant (random plans ignore the costs) */
static void gamma_half_sim(const autosync_model_t *m)
{
	static const double g[] = {1e-13, 1e-6};
	autosync_costs_t k0 = default_costs();
	autosync_planner_t *p0 =
	    planner(m, cluster(4, 8), k0, AUTOSYNC_FW_PYTORCH_DDP);
	int good[2] = {1, 1}, compressed = 0, n = 0;

	autosync_planner_set_compression(p0, 1);
	for (int gi = 0; gi < 2; gi++) {
		autosync_costs_t k1 = k0;
		autosync_planner_t *p1;

		k1.gamma_half = g[gi];
		p1 = planner(m, cluster(4, 8), k1, AUTOSYNC_FW_PYTORCH_DDP);
		autosync_planner_set_compression(p1, 1);
		for (uint64_t seed = 0; seed < 40; seed++) {
			autosync_plan_t *a, *b;
			double ta[AUTOSYNC_TERM_N], tb[AUTOSYNC_TERM_N];
			double red = 0, d;

			if (random_pair(p0, p1, seed, &a, &b, ta, tb) < 0) {
				good[gi] = 0;
				goto next;
			}
			for (size_t i = 0; i < autosync_plan_nbuckets(a); i++) {
				const autosync_bucket_t *bk =
				    autosync_plan_bucket(a, i);
				if (bk->compress == AUTOSYNC_COMPRESS_FP16 ||
				    bk->compress == AUTOSYNC_COMPRESS_BF16)
					red +=
					    31.0 / 32 * bk->bytes / 2 * g[gi];
			}
			d = tb[AUTOSYNC_TERM_CAST] - ta[AUTOSYNC_TERM_CAST];
			compressed += gi == 0 && red > 0;
			n += gi == 0;
			if (fabs(d - red) > 1e-9 * red + 1e-15) {
				good[gi] = 0;
				diag("seed %d: cast grew %g s, reduction %g s",
				     (int)seed, d, red);
			}
			if (!only_moved(ta, tb, AUTOSYNC_TERM_CAST))
				good[gi] = 0;
			if (fabs(tb[AUTOSYNC_TERM_EXPOSED] +
				 tb[AUTOSYNC_TERM_HIDDEN] -
				 tb[AUTOSYNC_TERM_COMM]) >
			    1e-12 * (1 + tb[AUTOSYNC_TERM_COMM]))
				good[gi] = 0;
		next:
			autosync_plan_destroy(a);
			autosync_plan_destroy(b);
		}
		autosync_planner_destroy(p1);
	}
	ok(good[0] && n == 40 && compressed > 5,
	   "gamma_half 1e-13 s/B: the cast term grows by exactly the "
	   "reduction in all %d random plans with fp16/bf16 buckets (of %d)",
	   compressed, n);
	ok(good[1], "gamma_half 1e-6 s/B: the cast term grows by exactly "
		    "the reduction, nothing else moves");
	autosync_planner_destroy(p0);
}

/* the planner weighs the reduction: on a slow network it compresses to
 * fp16/bf16 while 16-bit reduction is free, and stops once reducing a
 * 16-bit byte costs more than sending the fp32 half it saves (generic:
 * PowerSGD, which would win here, is DDP's) */
static void gamma_half_search(const autosync_model_t *m)
{
	autosync_cluster_t c = cluster(4, 8);
	int nc[2] = {0, 0};

	c.nics_per_node = 1;
	c.nic_bw = 0.05e9;
	for (int gi = 0; gi < 2; gi++) {
		autosync_costs_t k = default_costs();
		autosync_error_t err = {""};
		autosync_planner_t *p;
		autosync_plan_t *pl;

		k.gamma_half = gi ? 1e-6 : 0;
		p = planner(m, c, k, AUTOSYNC_FW_GENERIC);
		autosync_planner_set_compression(p, 1);
		pl = autosync_planner_run(p, &err);
		if (!pl) {
			ok(0, "plan: %s", err.text);
			autosync_planner_destroy(p);
			return;
		}
		for (size_t i = 0; i < autosync_plan_nbuckets(pl); i++) {
			int z = autosync_plan_bucket(pl, i)->compress;
			nc[gi] += z == AUTOSYNC_COMPRESS_FP16 ||
				  z == AUTOSYNC_COMPRESS_BF16;
		}
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
	}
	ok(nc[0] > 0 && nc[1] == 0,
	   "gamma_half: the search compresses %d buckets at 0 s/B, %d at "
	   "1e-6 s/B (want > 0, 0)",
	   nc[0], nc[1]);
}

/* gamma: every all-reduce bucket, a tree's as well, costs (p - 1)/p x its
 * wire bytes x gamma more (docs/planner.md) */
static void gamma_every_algo(const autosync_model_t *m)
{
	const double g = 1e-10;
	autosync_costs_t k0 = default_costs(), k1 = default_costs();
	autosync_planner_t *p0, *p1;
	int good = 1, trees = 0;

	k1.gamma = g;
	p0 = planner(m, cluster(4, 8), k0, AUTOSYNC_FW_GENERIC);
	p1 = planner(m, cluster(4, 8), k1, AUTOSYNC_FW_GENERIC);
	for (uint64_t seed = 0; seed < 40; seed++) {
		autosync_plan_t *a, *b;
		double ta[AUTOSYNC_TERM_N], tb[AUTOSYNC_TERM_N];

		if (random_pair(p0, p1, seed, &a, &b, ta, tb) < 0) {
			good = 0;
			goto next;
		}
		for (size_t i = 0; i < autosync_plan_nbuckets(a); i++) {
			const autosync_bucket_t *x = autosync_plan_bucket(a, i),
						*y = autosync_plan_bucket(b, i);
			double want = 31.0 / 32 * x->wire_bytes * g;
			if (x->kind != AUTOSYNC_SYNC_ALLREDUCE ||
			    !(x->bytes > 0))
				continue;
			trees += x->algo == AUTOSYNC_ALGO_TREE;
			if (fabs(y->comm - x->comm - want) >
			    1e-9 * want + 1e-15) {
				good = 0;
				diag("seed %d bucket %zu (%s): %g s more, want "
				     "%g",
				     (int)seed, i, autosync_algo_name(x->algo),
				     y->comm - x->comm, want);
			}
		}
	next:
		autosync_plan_destroy(a);
		autosync_plan_destroy(b);
	}
	ok(good && trees > 0,
	   "gamma 1e-10 s/B: every all-reduce bucket costs 31/32 x its wire "
	   "bytes x gamma more, the %d tree buckets too",
	   trees);
	autosync_planner_destroy(p0);
	autosync_planner_destroy(p1);
}

static void gamma_half(void)
{
	autosync_error_t err = {0};
	autosync_model_t *m = autosync_model_open("resnet50", catalog, &err);

	if (!m) {
		ok(0, "resnet50: %s", err.text);
		return;
	}
	gamma_half_sim(m);
	gamma_half_search(m);
	gamma_every_algo(m);
	autosync_model_destroy(m);
}

/* hier_bucket: each hierarchical bucket of a pytorch-ddp plan costs that
 * much more (the launch term), nothing else moves; other frameworks and
 * flat buckets are not charged */
static void hier_bucket(void)
{
	static const int fws[] = {AUTOSYNC_FW_PYTORCH_DDP, AUTOSYNC_FW_GENERIC};
	autosync_error_t err = {0};
	autosync_model_t *m = autosync_model_open("resnet50", catalog, &err);
	autosync_costs_t k0 = default_costs(), k1 = k0;

	if (!m) {
		ok(0, "resnet50: %s", err.text);
		return;
	}
	k1.hier_bucket = 1e-3;
	for (int fi = 0; fi < 2; fi++) {
		autosync_planner_t *p0 = planner(m, cluster(4, 8), k0, fws[fi]);
		autosync_planner_t *p1 = planner(m, cluster(4, 8), k1, fws[fi]);
		int good = 1, nh = 0, n = 0;

		for (uint64_t seed = 0; seed < 40; seed++) {
			autosync_plan_t *a, *b;
			double ta[AUTOSYNC_TERM_N], tb[AUTOSYNC_TERM_N];
			double want = 0;
			int hier = 0;

			if (random_pair(p0, p1, seed, &a, &b, ta, tb) < 0) {
				good = 0;
				goto next;
			}
			for (size_t i = 0; i < autosync_plan_nbuckets(a); i++) {
				const autosync_bucket_t *bk =
				    autosync_plan_bucket(a, i);
				if (bk->kind == AUTOSYNC_SYNC_ALLREDUCE &&
				    bk->algo == AUTOSYNC_ALGO_HIER &&
				    bk->bytes > 0) {
					hier = 1;
					if (fws[fi] == AUTOSYNC_FW_PYTORCH_DDP)
						want += 1e-3;
				}
			}
			nh += hier;
			n++;
			if (fabs(tb[AUTOSYNC_TERM_LAUNCH] -
				 ta[AUTOSYNC_TERM_LAUNCH] - want) > 1e-12) {
				good = 0;
				diag("seed %d: launch grew %g s, want %g s",
				     (int)seed,
				     tb[AUTOSYNC_TERM_LAUNCH] -
					 ta[AUTOSYNC_TERM_LAUNCH],
				     want);
			}
			if (!only_moved(ta, tb, AUTOSYNC_TERM_LAUNCH))
				good = 0;
		next:
			autosync_plan_destroy(a);
			autosync_plan_destroy(b);
		}
		ok(good && n == 40 && nh > 5,
		   "hier_bucket 1 ms, %s: the launch term grows by %s "
		   "(%d of %d random plans with hierarchical buckets)",
		   fws[fi] == AUTOSYNC_FW_PYTORCH_DDP ? "pytorch-ddp"
						      : "generic",
		   fws[fi] == AUTOSYNC_FW_PYTORCH_DDP
		       ? "1 ms per hierarchical bucket, nothing else"
		       : "nothing",
		   nh, n);
		autosync_planner_destroy(p0);
		autosync_planner_destroy(p1);
	}
	autosync_model_destroy(m);
}

/* Random spaces: the narrow one is the dataset's, draw for draw (a plan
 * pinned from before the wide one existed); the wide one reaches the
 * planner's range: many buckets, all-PS plans, all-all-reduce plans, and
 * PS only where the framework has it. */
static void random_spaces(void)
{
	autosync_error_t err = {""};
	autosync_model_t *m = autosync_model_open("bert-large", catalog, &err);
	autosync_planner_t *p, *d;
	autosync_plan_t *pl;
	size_t most = 0, allps = 0, nops = 0, ddp_ps = 0, n = 0, bad = 0;

	if (!m)
		bail_out("bert-large: %s", err.text);
	p = planner(m, cluster(4, 8), default_costs(), AUTOSYNC_FW_GENERIC);
	d = planner(m, cluster(4, 8), default_costs(), AUTOSYNC_FW_PYTORCH_DDP);
	autosync_planner_set_compression(p, 1);
	pl = autosync_planner_random(p, 5, NULL);
	ok(pl && !strcmp(autosync_plan_hash(pl), "be09b0886b5eebe5") &&
	       autosync_plan_nbuckets(pl) == 80,
	   "narrow (default): seed 5 is the dataset's plan be09b0886b5eebe5 "
	   "(%s)",
	   pl ? autosync_plan_hash(pl) : "none");
	autosync_plan_destroy(pl);
	ok(autosync_planner_set_random_space(p, 2, &err) < 0 &&
	       errno == EINVAL &&
	       !strcmp(err.text, "planner_set_random_space: 2 is not a "
				 "random space"),
	   "space 2: EINVAL, '%s'", err.text);
	ok(autosync_planner_set_random_space(p, AUTOSYNC_RANDOM_WIDE, &err) ==
		   0 &&
	       autosync_planner_set_random_space(d, AUTOSYNC_RANDOM_WIDE,
						 &err) == 0,
	   "wide space set");
	for (uint64_t seed = 1; seed <= 200; seed++, n++) {
		autosync_plan_t *a = autosync_planner_random(p, seed, NULL);
		autosync_plan_t *b = autosync_planner_random(p, seed, NULL);
		autosync_plan_t *c = autosync_planner_random(d, seed, NULL);
		size_t nb = a ? autosync_plan_nbuckets(a) : 0, ps = 0;
		char why[200];
		autosync_plan_summary_t sum;
		if (!a || !b || !c ||
		    strcmp(autosync_plan_hash(a), autosync_plan_hash(b)) ||
		    !check_terms(a, m, 4, why, sizeof(why)) || !reads_back(a) ||
		    autosync_plan_summary(a, &sum) < 0 ||
		    strncmp(sum.strategy, "random-wide-", 12))
			bad++;
		for (size_t i = 0; i < nb; i++)
			ps += autosync_plan_bucket(a, i)->kind ==
			      AUTOSYNC_SYNC_PS;
		for (size_t i = 0; c && i < autosync_plan_nbuckets(c); i++)
			ddp_ps += autosync_plan_bucket(c, i)->kind ==
				  AUTOSYNC_SYNC_PS;
		if (nb > most)
			most = nb;
		allps += nb > 64 && ps == nb;
		nops += nb > 64 && ps == 0;
		autosync_plan_destroy(a);
		autosync_plan_destroy(b);
		autosync_plan_destroy(c);
	}
	ok(bad == 0,
	   "wide: %zu plans, each the same twice, named "
	   "random-wide-SEED, terms add up, reads back (%zu bad)",
	   n, bad);
	ok(most > 200 && allps >= 5 && nops >= 5 && ddp_ps == 0,
	   "wide: up to %zu buckets; %zu all-PS and %zu all-all-reduce "
	   "plans of more than 64 buckets; %zu PS buckets under pytorch-ddp",
	   most, allps, nops, ddp_ps);
	autosync_planner_destroy(p);
	autosync_planner_destroy(d);
	autosync_model_destroy(m);
}

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR");

	plan(NO_PLAN);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog",
		 src ? src : "..");
	formulas();
	cluster_level();
	overlap();
	baselines();
	properties();
	capabilities();
	budget();
	determinism();
	no_harm();
	no_harm_cases();
	step_compute();
	scaled_knobs();
	terms();
	powersgd();
	gamma_half();
	hier_bucket();
	random_spaces();
	return done_testing();
}
