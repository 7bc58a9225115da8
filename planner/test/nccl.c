/* nccl.c - the NCCL protocol/channel model (autosync_sim_nccl) against
 * hand-computed values of NCCL's formulas, and a plan's NCCL table: its
 * shape, how it follows the buckets and the cost constants, the plan
 * file round trip and bad tables. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"
#include "tap.h"

static char catalog[1024];

static autosync_cluster_t cluster(unsigned nodes, unsigned g)
{
	autosync_cluster_t c;

	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = g;
	c.intra_class = AUTOSYNC_LINK_NVLINK;
	c.intra_bw = 100e9;   /* x intra_eff 0.8 = 80 GB/s */
	c.intra_lat = 3.4e-6; /* NCCL's NVLink Simple ring hop */
	c.nics_per_node = 1;
	c.nic_bw = 25e9;     /* x inter_eff 0.9 = 22.5 GB/s */
	c.inter_lat = 14e-6; /* NCCL's network Simple hop */
	return c;
}

static autosync_plan_t *make_plan(const char *model, unsigned nodes, unsigned g,
				  const autosync_costs_t *k, int baseline)
{
	autosync_error_t err = {""};
	autosync_model_t *m = autosync_model_open(model, catalog, &err);
	autosync_planner_t *p = autosync_planner_create(&err);
	autosync_cluster_t c = cluster(nodes, g);
	autosync_plan_t *pl = NULL;

	c.intra_bw = 240e9;
	c.nics_per_node = 4;
	c.inter_lat = 5e-6;
	if (m && p && autosync_planner_set_model(p, m, &err) == 0 &&
	    autosync_planner_set_cluster(p, &c, &err) == 0 &&
	    (!k || autosync_planner_set_costs(p, k, &err) == 0))
		pl = baseline >= 0
			 ? autosync_planner_baseline(p, baseline, &err)
			 : autosync_planner_run(p, &err);
	/* a framework's default kept carries no table: the table of its
	 * buckets is what these tests look at, derived with the same
	 * constants */
	if (pl && baseline < 0 && autosync_plan_nnccl_rules(pl) == 0 &&
	    nodes * g > 1 && autosync_plan_derive_nccl(pl, k, &err) < 0) {
		autosync_plan_destroy(pl);
		pl = NULL;
	}
	if (!pl)
		diag("make_plan %s: %s", model, err.text);
	autosync_planner_destroy(p);
	autosync_model_destroy(m);
	return pl;
}

static char *to_text(const autosync_plan_t *pl)
{
	char *buf = NULL;
	size_t len;
	FILE *fp = open_memstream(&buf, &len);

	autosync_plan_write(pl, fp, NULL);
	fclose(fp);
	return buf;
}

/* us -> s, compared to 1e-9 relative */
#define NEAR_US(got, us, ...) near((got), (us)*1e-6, (us)*1e-15, __VA_ARGS__)

static void model(void)
{
	autosync_costs_t k;
	autosync_cluster_t c1 = cluster(1, 8), c2 = cluster(2, 4);
	double t;

	autosync_costs_default(&k);
	/* one node, 8 GPUs on NVLink */
	NEAR_US(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 2,
				  0),
		56.0,
		"NCCL's test vector: ring/simple all-reduce, 8 NVLink GPUs: "
		"8.4 + 14 x 3.4 = 56 us");
	NEAR_US(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 2,
				  1e6),
		56.0 + 1e6 * 14 / (24e9 * 8) * 1e6,
		"1 MB on 2 channels of 12 GB/s: + 1e6 x 14 / (24e9 x 8) = "
		"72.9 us");
	NEAR_US(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 32,
				  1e6),
		77.875, "32 channels: the 80 GB/s link is the limit");
	NEAR_US(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_LL, 32,
				  1e6),
		58.75, "LL: 6.6 + 14 x 0.6 us, half the bandwidth");
	NEAR_US(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_TREE, AUTOSYNC_NCCL_LL, 8, 0),
		15.2, "tree/LL on one node: 6.8 + 2 x 7 x 0.6 us");
	c1.intra_lat = 6.8e-6;
	NEAR_US(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_LL, 8, 0),
		23.4,
		"a link twice NCCL's Simple hop doubles every protocol's "
		"hop: 6.6 + 14 x 1.2 us");
	/* two nodes x 4 GPUs, one 25 GB/s NIC each */
	NEAR_US(autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 1,
				  0),
		77.2,
		"2x4 ring/simple: 8.4 + 12 x max(3.4, 3 net overhead) + "
		"2 x 14 us");
	NEAR_US(autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 32,
				  8e6),
		108.08 + 8e6 * 14 / (22.5e9 * 8) * 1e6,
		"8 MB: latency x 1.4 (NCCL's multi-node Simple penalty), the "
		"22.5 GB/s NIC is the limit");
	NEAR_US(autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLREDUCE,
				  AUTOSYNC_NCCL_TREE, AUTOSYNC_NCCL_LL, 4, 0),
		20.4, "2x4 tree/LL: 6.8 + 2 x (3 x 0.6 + log2(2) x 5.0) us");
	NEAR_US(autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_BROADCAST,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_LL, 4, 0),
		13.5, "broadcast ring/LL: 6.6 + 7 x 0.6 + 1 x 2.7 us");
	NEAR_US(autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLGATHER,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_LL128, 4,
				  0),
		29.4, "all-gather ring/LL128: 14 + 6 x 1.9 + 1 x 4.0 us");
	NEAR_US(autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLGATHER,
				  AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 32,
				  7e6),
		8.4 + 6 * 3.4 + 14 + 7e6 * 7 / (22.5e9 * 8) * 1e6,
		"all-gather 7 MB: (p - 1) / p of the buffer crosses the link");

	errno = 0;
	t = autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLGATHER,
			      AUTOSYNC_NCCL_TREE, AUTOSYNC_NCCL_LL, 4, 0);
	ok(t < 0 && errno == ENOTSUP,
	   "tree all-gather: ENOTSUP (NCCL has none)");
	errno = 0;
	t = autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLREDUCE,
			      AUTOSYNC_NCCL_NVLS, AUTOSYNC_NCCL_SIMPLE, 4, 0);
	ok(t < 0 && errno == ENOTSUP, "NVLS: ENOTSUP (not modelled)");
	errno = 0;
	t = autosync_sim_nccl(&c2, &k, AUTOSYNC_NCCL_ALLREDUCE,
			      AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 0, 0);
	ok(t < 0 && errno == EINVAL, "0 channels: EINVAL");
	errno = 0;
	t = autosync_sim_nccl(&c2, &k, 9, AUTOSYNC_NCCL_RING,
			      AUTOSYNC_NCCL_SIMPLE, 1, 0);
	ok(t < 0 && errno == EINVAL, "an unknown collective: EINVAL");
	c1 = cluster(1, 1);
	ok(autosync_sim_nccl(&c1, &k, AUTOSYNC_NCCL_ALLREDUCE,
			     AUTOSYNC_NCCL_RING, AUTOSYNC_NCCL_SIMPLE, 1,
			     1e6) == 0,
	   "one rank: 0");

	is(autosync_nccl_algo_name(AUTOSYNC_NCCL_NVLS_TREE), "nvls_tree",
	   "algorithm names are NCCL's");
	ok(autosync_nccl_func_from_name("AllReduce") ==
		   AUTOSYNC_NCCL_ALLREDUCE &&
	       autosync_nccl_proto_from_name("LL128") == AUTOSYNC_NCCL_LL128 &&
	       autosync_nccl_algo_from_name("hierarchical") == -1,
	   "names: case-insensitive; unknown -1");
}

/* every collective's rules: contiguous from 0, the last open; returns
 * a description of the first violation or "" */
static const char *shape(const autosync_plan_t *pl, unsigned maxch, int *nfuncs)
{
	static char why[200];
	uint64_t next[AUTOSYNC_NCCL_NFUNCS];
	int lastproto[AUTOSYNC_NCCL_NFUNCS];
	size_t n = autosync_plan_nnccl_rules(pl);

	for (int f = 0; f < AUTOSYNC_NCCL_NFUNCS; f++) {
		next[f] = 0;
		lastproto[f] = -1;
	}
	why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const autosync_nccl_rule_t *r = autosync_plan_nccl_rule(pl, i);
		if (r->min_bytes != next[r->func]) {
			snprintf(why, sizeof(why),
				 "rule %zu: %s starts at %llu, "
				 "not %llu",
				 i, autosync_nccl_func_name(r->func),
				 (unsigned long long)r->min_bytes,
				 (unsigned long long)next[r->func]);
			return why;
		}
		if (r->channels > maxch || (r->algo != AUTOSYNC_NCCL_RING &&
					    r->algo != AUTOSYNC_NCCL_TREE)) {
			snprintf(why, sizeof(why), "rule %zu: %u channels, %s",
				 i, r->channels,
				 autosync_nccl_algo_name(r->algo));
			return why;
		}
		/* ring-only collectives: LL, then LL128, then Simple */
		if (r->func != AUTOSYNC_NCCL_ALLREDUCE &&
		    r->proto < lastproto[r->func]) {
			snprintf(why, sizeof(why),
				 "rule %zu: protocol goes "
				 "back to %s",
				 i, autosync_nccl_proto_name(r->proto));
			return why;
		}
		lastproto[r->func] = r->proto;
		next[r->func] = r->max_bytes;
	}
	*nfuncs = 0;
	for (int f = 0; f < AUTOSYNC_NCCL_NFUNCS; f++) {
		if (next[f] == 0)
			continue;
		(*nfuncs)++;
		if (next[f] != UINT64_MAX) {
			snprintf(why, sizeof(why), "%s ends at %llu",
				 autosync_nccl_func_name(f),
				 (unsigned long long)next[f]);
			return why;
		}
	}
	return why;
}

static const autosync_nccl_rule_t *match(const autosync_plan_t *pl, int f,
					 double bytes)
{
	for (size_t i = 0; i < autosync_plan_nnccl_rules(pl); i++) {
		const autosync_nccl_rule_t *r = autosync_plan_nccl_rule(pl, i);
		if (r->func == f && bytes >= (double)r->min_bytes &&
		    bytes < (double)r->max_bytes)
			return r;
	}
	return NULL;
}

static void table(void)
{
	autosync_costs_t k;
	autosync_plan_t *pl, *back;
	autosync_error_t err = {""};
	char *a, *b;
	int nf = 0;
	size_t n;

	pl = make_plan("bert-large", 2, 8, NULL, -1);
	if (!pl)
		bail_out("no plan");
	n = autosync_plan_nnccl_rules(pl);
	ok(n >= 5 && n <= 200, "bert-large on 2x8: %zu NCCL rules", n);
	is(shape(pl, 32, &nf), "",
	   "every collective from 0 bytes up, "
	   "contiguous, open-ended; ring-only ones go LL -> LL128 -> Simple");
	ok(nf == AUTOSYNC_NCCL_NFUNCS, "all five collectives have rules");
	{
		const autosync_nccl_rule_t *s = match(pl,
						      AUTOSYNC_NCCL_ALLGATHER,
						      1024),
					   *l = match(pl,
						      AUTOSYNC_NCCL_ALLGATHER,
						      1e9);
		ok(s && l && s->proto == AUTOSYNC_NCCL_LL &&
		       l->proto == AUTOSYNC_NCCL_SIMPLE &&
		       s->channels < l->channels + (l->channels == 0) * 64,
		   "1 KiB all-gather: LL on few channels; 1 GB: Simple on "
		   "more");
	}
	a = to_text(pl);
	ok(a &&
	       strstr(a,
		      "\nnccl:\n- {coll: broadcast, min_bytes: 0, max_bytes: "),
	   "written as a 'nccl' list of flow mappings");
	back = autosync_plan_parse(a, strlen(a), "t.yaml", &err);
	b = back ? to_text(back) : NULL;
	ok(back && !strcmp(a, b), "write(parse(write)) is byte-identical %s",
	   err.text);
	ok(back && !strcmp(autosync_plan_hash(back), autosync_plan_hash(pl)) &&
	       autosync_plan_nnccl_rules(back) == n,
	   "same hash, same rules");
	free(b);
	autosync_plan_destroy(back);

	/* the table is part of the hash: an edited channel count is caught */
	{
		char *e = strdup(a), *p = strstr(e, "channels: ");
		p += strlen("channels: ");
		*p = *p == '9' ? '8' : '9';
		back = autosync_plan_parse(e, strlen(e), "edited.yaml", &err);
		ok(!back && strstr(err.text, "edited.yaml:3: hash: ") &&
		       strstr(err.text, "does not match"),
		   "an edited rule fails the hash check: %s", err.text);
		autosync_plan_destroy(back);
		free(e);
	}
	/* without the table, deriving it again with the same costs gives the
	 * same plan */
	{
		char *e = strdup(a), *s = strstr(e, "\nnccl:\n"),
		     *t = strstr(e, "\nbuckets:");
		const char *h1 = strstr(e, "hash: \"");
		memmove(s, t, strlen(t) + 1);
		memmove((char *)h1, strchr(h1, '\n') + 1,
			strlen(strchr(h1, '\n') + 1) + 1);
		back = autosync_plan_parse(e, strlen(e), "old.yaml", &err);
		ok(back && autosync_plan_nnccl_rules(back) == 0,
		   "a plan without a table (and without a hash) loads: %s",
		   err.text);
		ok(back && autosync_plan_derive_nccl(back, NULL, &err) == 0 &&
		       autosync_plan_nnccl_rules(back) == n &&
		       !strcmp(autosync_plan_hash(back),
			       autosync_plan_hash(pl)),
		   "derived again with the default constants: the same %zu "
		   "rules and hash",
		   n);
		autosync_plan_destroy(back);
		free(e);
	}
	free(a);
	autosync_plan_destroy(pl);

	/* the cost constants steer the channel counts */
	autosync_costs_default(&k);
	k.nccl_channel_bw = 1e13; /* one channel fills any link */
	pl = make_plan("bert-large", 2, 8, &k, -1);
	{
		int all1 = pl != NULL;
		for (size_t i = 0; pl && i < autosync_plan_nnccl_rules(pl); i++)
			all1 &= autosync_plan_nccl_rule(pl, i)->channels == 1;
		ok(all1, "a channel that fills the link: 1 channel everywhere");
	}
	autosync_plan_destroy(pl);
	autosync_costs_default(&k);
	k.nccl_max_channels = 4;
	k.nccl_channel_slack = 0;
	pl = make_plan("bert-large", 2, 8, &k, -1);
	is(pl ? shape(pl, 2, &nf) : "no plan", "",
	   "at most 4 channels, no slack: 1 or 2 channels or NCCL's own (0)");
	ok(pl && match(pl, AUTOSYNC_NCCL_ALLREDUCE, 1e9)->channels == 0,
	   "a bandwidth-bound 1 GB all-reduce needs all 4: left to NCCL (0)");
	autosync_plan_destroy(pl);

	/* job.nccl_calibrate: written, read back, hashed */
	{
		autosync_error_t e2 = {""};
		autosync_model_t *m =
		    autosync_model_open("resnet50", catalog, &e2);
		autosync_planner_t *p = autosync_planner_create(&e2);
		autosync_cluster_t c = cluster(2, 4);
		autosync_plan_t *p0 = NULL, *p1 = NULL, *p2 = NULL;
		char *t0 = NULL, *t1 = NULL, *t2 = NULL;

		if (m && p && autosync_planner_set_model(p, m, &e2) == 0 &&
		    autosync_planner_set_cluster(p, &c, &e2) == 0) {
			p0 = autosync_planner_run(p, &e2);
			autosync_planner_set_nccl_calibrate(p, 1);
			p1 = autosync_planner_run(p, &e2);
		}
		t0 = p0 ? to_text(p0) : NULL;
		t1 = p1 ? to_text(p1) : NULL;
		ok(t1 &&
		       strstr(t1,
			      "  cycle_time: 0\n  nccl_calibrate: true\n") &&
		       t0 && !strstr(t0, "nccl_calibrate"),
		   "autosync_planner_set_nccl_calibrate: job.nccl_calibrate: "
		   "true, absent otherwise");
		p2 = t1 ? autosync_plan_parse(t1, strlen(t1), "cal.yaml", &e2)
			: NULL;
		t2 = p2 ? to_text(p2) : NULL;
		ok(p0 && p1 && p2 && t2 && !strcmp(t1, t2) &&
		       strcmp(autosync_plan_hash(p0), autosync_plan_hash(p1)) &&
		       !strcmp(autosync_plan_hash(p1), autosync_plan_hash(p2)),
		   "read back the same; the flag changes the hash %s", e2.text);
		free(t0);
		free(t1);
		free(t2);
		autosync_plan_destroy(p0);
		autosync_plan_destroy(p1);
		autosync_plan_destroy(p2);
		autosync_planner_destroy(p);
		autosync_model_destroy(m);
	}

	pl = make_plan("resnet50", 1, 1, NULL, -1);
	ok(pl && autosync_plan_nnccl_rules(pl) == 0, "one rank: no table");
	autosync_plan_destroy(pl);
	pl = make_plan("resnet50", 2, 8, NULL, AUTOSYNC_BASELINE_DDP);
	ok(pl && autosync_plan_nnccl_rules(pl) == 0,
	   "a baseline plan has no table (it is what NCCL does alone)");
	a = pl ? to_text(pl) : NULL;
	ok(a && strstr(a, "\nnccl: []\n"),
	   "and says so: nccl: [] (the tuner derives none)");
	back = a ? autosync_plan_parse(a, strlen(a), "b.yaml", &err) : NULL;
	{
		autosync_plan_summary_t bs;
		ok(back && autosync_plan_summary(back, &bs) == 0 &&
		       bs.nccl_none && autosync_plan_nnccl_rules(back) == 0 &&
		       !strcmp(autosync_plan_hash(back),
			       autosync_plan_hash(pl)),
		   "read back: still none, the same hash");
	}
	autosync_plan_destroy(back);
	free(a);
	autosync_plan_destroy(pl);
	{
		/* the planner keeping the framework's default (bert-large on
		 * 2 nodes of 8 GPUs: no plan beyond the margin) */
		autosync_error_t e2 = {""};
		autosync_model_t *m =
		    autosync_model_open("bert-large", catalog, &e2);
		autosync_planner_t *p = autosync_planner_create(&e2);
		autosync_cluster_t c = cluster(2, 8);
		autosync_plan_summary_t ks = {0};
		autosync_plan_t *kept = NULL;

		autosync_planner_set_framework(p, AUTOSYNC_FW_PYTORCH_DDP, &e2);
		if (m && p && autosync_planner_set_model(p, m, &e2) == 0 &&
		    autosync_planner_set_cluster(p, &c, &e2) == 0)
			kept = autosync_planner_run(p, &e2);
		if (kept)
			autosync_plan_summary(kept, &ks);
		ok(kept && ks.strategy && !strcmp(ks.strategy, "ddp-default") &&
		       ks.nccl_none && autosync_plan_nnccl_rules(kept) == 0,
		   "the framework's default kept: no table, so NCCL decides "
		   "as without autosync (%s)",
		   ks.strategy ? ks.strategy : e2.text);
		autosync_plan_destroy(kept);
		autosync_planner_destroy(p);
		autosync_model_destroy(m);
	}
}

#define HEAD(job_algo)                                                       \
	"autosync_plan: 1\ninputs:\n  model: \"t\"\n  model_hash: \"\"\n"    \
	"  batch_size: 1\n  framework: \"generic\"\n  topology_hash: \"\"\n" \
	"  cluster:\n    nodes: 2\n    gpus_per_node: 4\n"                   \
	"    intra_class: nvlink\n    intra_bw: 1e11\n    intra_lat: 1e-6\n" \
	"    nics_per_node: 1\n    nic_bw: 2.5e10\n    inter_lat: 5e-6\n"    \
	"    nodes_per_switch: 0\nstrategy: \"s\"\nreason: \"r\"\njob:\n"    \
	"  nccl_algo: " job_algo "\n  compression: none\n"                   \
	"  bucket_cap_bytes: 0\n"                                            \
	"  first_bucket_bytes: 0\n  cycle_time: 0\nprediction:\n"            \
	"  step_time: 1\n  forward: 0\n  backward: 0\n  optimizer: 0\n"      \
	"  communication: 0\n  exposed_communication: 0\n  bound: 0\n"       \
	"baselines: []\nenv: {}\n"

#define BUCKET(id, algo, bytes)                                       \
	"  - {id: " #id ", kind: allreduce, algorithm: " algo         \
	", compression: none, bytes: " #bytes ", wire_bytes: " #bytes \
	", ready: 0, start: 0, end: 0, tensors: [\"t" #id "\"]}\n"

/* explicit tree, ring, auto under a job-level ring and hierarchical
 * buckets: what the table must keep */
static void buckets(void)
{
	static const char text[] =
	    HEAD("ring") "buckets:\n" BUCKET(0, "tree", 65536)
		BUCKET(1, "tree", 262144) BUCKET(2, "ring", 4194304)
		    BUCKET(3, "auto", 16777216)
			BUCKET(4, "hierarchical", 268435456);
	static const struct {
		double bytes;
		int algo; /* -1: the model's choice */
		const char *why;
	} at[] = {
	    {32768, AUTOSYNC_NCCL_TREE, "half the smallest tree bucket"},
	    {65536, AUTOSYNC_NCCL_TREE, "the 64 KiB tree bucket"},
	    {1048575, AUTOSYNC_NCCL_TREE,
	     "just below the geometric mean of 256 KiB and 4 MiB"},
	    {1048576, AUTOSYNC_NCCL_RING,
	     "1 MiB: the 4 MiB ring bucket's range"},
	    {16777216, AUTOSYNC_NCCL_RING,
	     "the auto bucket under the job's ring"},
	    {67108863, AUTOSYNC_NCCL_RING,
	     "just below the geometric mean of 16 and 256 MiB"},
	};
	autosync_error_t err = {""};
	autosync_plan_t *pl =
	    autosync_plan_parse(text, sizeof(text) - 1, "b.yaml", &err);
	int nf = 0;

	ok(pl && autosync_plan_derive_nccl(pl, NULL, &err) == 0,
	   "a plan with explicit buckets: table derived %s", err.text);
	if (!pl)
		return;
	is(shape(pl, 32, &nf), "", "contiguous and open-ended");
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		const autosync_nccl_rule_t *r =
		    match(pl, AUTOSYNC_NCCL_ALLREDUCE, at[i].bytes);
		ok(r && r->algo == at[i].algo, "%.0f bytes: %s (%s)",
		   at[i].bytes, r ? autosync_nccl_algo_name(r->algo) : "none",
		   at[i].why);
	}
	autosync_plan_destroy(pl);
}

static void bad(void)
{
	static const struct {
		const char *rules, *want;
	} cases[] = {
	    {"  - {coll: allreduce, min_bytes: 0, algorithm: ring, protocol: "
	     "fast, channels: 1}\n",
	     "bad.yaml:39: nccl[0].protocol: bad value 'fast' (expected ll, "
	     "ll128 or simple)"},
	    {"  - {coll: alltoall, min_bytes: 0, algorithm: ring, protocol: "
	     "ll, channels: 1}\n",
	     "bad.yaml:39: nccl[0].coll: bad value 'alltoall' (expected "
	     "broadcast, reduce, allgather, reducescatter or allreduce)"},
	    {"  - {coll: allreduce, min_bytes: 0, algorithm: ring, protocol: "
	     "ll, channels: 65}\n",
	     "bad.yaml:39: nccl[0].channels: bad value '65' (expected an "
	     "integer from 0 to 64)"},
	    {"  - {coll: allreduce, min_bytes: 0, algorithm: ring, protocol: "
	     "ll, channels: 1, nvls: 1}\n",
	     "bad.yaml:39: unknown key 'nccl[0].nvls' (known: coll, min_bytes, "
	     "max_bytes, algorithm, protocol or channels)"},
	    {"  - {coll: allreduce, min_bytes: 10, max_bytes: 10, algorithm: "
	     "ring, protocol: ll, channels: 1}\n",
	     "bad.yaml:39: nccl[0].max_bytes: bad value '10' (expected an "
	     "integer from 11 to 18446744073709551614, past min_bytes)"},
	    {"  - {coll: allreduce, min_bytes: 0, max_bytes: 100, algorithm: "
	     "ring, protocol: ll, channels: 1}\n"
	     "  - {coll: allgather, min_bytes: 0, algorithm: ring, protocol: "
	     "ll, channels: 1}\n"
	     "  - {coll: allreduce, min_bytes: 50, algorithm: tree, protocol: "
	     "ll, channels: 1}\n",
	     "bad.yaml:41: nccl: allreduce rule from 50 bytes overlaps or "
	     "precedes the one before it (to 100)"},
	    {"  - {coll: allreduce, min_bytes: 0, algorithm: ring, protocol: "
	     "ll}\n",
	     "bad.yaml:39: missing key 'nccl[0].channels'"},
	};
	static const char head[] =
	    HEAD("auto") "buckets: []\n# line 39\nnccl:\n";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		autosync_error_t err = {""};
		char buf[4096];
		autosync_plan_t *pl;

		snprintf(buf, sizeof(buf), "%s%s", head, cases[i].rules);
		pl = autosync_plan_parse(buf, strlen(buf), "bad.yaml", &err);
		ok(!pl && strstr(err.text, cases[i].want), "bad table %zu: %s",
		   i, err.text);
		autosync_plan_destroy(pl);
	}
	{
		autosync_error_t err = {""};
		char buf[4096];
		autosync_plan_t *pl;

		snprintf(
		    buf, sizeof(buf), "%s%s", head,
		    "  - {coll: allgather, min_bytes: 0, max_bytes: 4096, "
		    "algorithm: ring, protocol: ll, channels: 2}\n"
		    "  - {coll: allgather, min_bytes: 65536, algorithm: pat, "
		    "protocol: simple, channels: 0}\n");
		pl = autosync_plan_parse(buf, strlen(buf), "ok.yaml", &err);
		ok(pl && autosync_plan_nnccl_rules(pl) == 2 &&
		       autosync_plan_nccl_rule(pl, 1)->algo ==
			   AUTOSYNC_NCCL_PAT &&
		       autosync_plan_nccl_rule(pl, 1)->max_bytes ==
			   UINT64_MAX &&
		       autosync_plan_nccl_rule(pl, 0)->channels == 2,
		   "a hand-written table with a gap and any NCCL algorithm "
		   "loads: %s",
		   err.text);
		autosync_plan_destroy(pl);
	}
}

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR");

	plan(NO_PLAN);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog",
		 src ? src : "..");
	model();
	table();
	buckets();
	bad();
	return done_testing();
}
