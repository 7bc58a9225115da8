/* tunerules.c - the tuner's decision table: plan -> size ranges, the
 * rules file, matching, applying to a cost table, recalibration. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"
#include "tap.h"
#include "tunerules.h"

static int fabs_ok(double got, double want)
{
	double d = got - want;

	return (d < 0 ? -d : d) <= 1e-9 * (want < 0 ? -want : want) + 1e-12;
}

static autosync_plan_t *load(const char *name)
{
	char path[4096];
	const char *src = getenv("AUTOSYNC_SRCDIR");
	autosync_error_t err = {.text = ""};
	autosync_plan_t *p;

	snprintf(path, sizeof(path), "%s/launcher/nccl/test/plans/%s",
		 src ? src : ".", name);
	if (!(p = autosync_plan_load(path, &err)))
		diag("%s: %s", path, err.text);
	return p;
}

static void fill(float c[AS_NALGOS][AS_NPROTOS])
{
	for (int a = 0; a < AS_NALGOS; a++)
		for (int p = 0; p < AS_NPROTOS; p++)
			c[a][p] = 100.0f + (float)(10 * a + p);
}

int main(void)
{
	struct as_tune_table *t = calloc(1, sizeof(*t));
	autosync_plan_t *pl;
	const struct as_tune_rule *r;
	float c[AS_NALGOS][AS_NPROTOS];
	char err[256];
	int n, nch;

	plan(NO_PLAN);
	if (!t)
		bail_out("out of memory");

	/* --- names */
	is(autosync_nccl_algo_name(AS_ALGO_NVLS_TREE), "nvls_tree",
	   "algorithm names");
	ok(autosync_nccl_algo_from_name("RING") == AS_ALGO_RING,
	   "names are case-insensitive");
	ok(autosync_nccl_proto_from_name("ll128") == AS_PROTO_LL128 &&
	       autosync_nccl_func_from_name("reducescatter") ==
		   AS_FUNC_REDUCESCATTER &&
	       autosync_nccl_algo_from_name("hierarchical") == -1,
	   "protocols, functions, unknown names");

	/* --- a plan with its own NCCL table */
	pl = load("table.yaml");
	ok(pl != NULL, "the test plan loads");
	n = as_tune_from_plan(pl, t, err, sizeof(err));
	ok(n == 6 && t->n == 6 && !t->derived,
	   "the plan's 6 NCCL rules, as they are (got %d)", n);
	ok(t->r[1].func == AS_FUNC_ALLREDUCE && t->r[1].algo == AS_ALGO_TREE &&
	       t->r[1].proto == AS_PROTO_LL128 && t->r[1].nchannels == 4 &&
	       t->r[1].min_bytes == 32768 && t->r[1].max_bytes == 1048576 &&
	       t->r[1].nnodes == 2 && t->r[1].nranks == 8 && !t->r[1].from_file,
	   "a rule: all-reduce [32 KiB, 1 MiB) tree/ll128 on 4 channels, for 2 "
	   "nodes x 4 GPUs");
	ok(t->r[3].max_bytes == UINT64_MAX &&
	       t->r[3].proto == AS_PROTO_SIMPLE && t->r[3].nchannels == 0,
	   "the open-ended ring/simple rule leaves channels to NCCL");
	ok(as_tune_match(t, AS_FUNC_ALLREDUCE, 1048575, 8, 2) == &t->r[1] &&
	       as_tune_match(t, AS_FUNC_ALLREDUCE, 1048576, 8, 2) == &t->r[2],
	   "1 MiB - 1: the tree rule; 1 MiB: the ring one");
	ok(as_tune_match(t, AS_FUNC_ALLGATHER, 2 << 20, 8, 2) == NULL &&
	       as_tune_match(t, AS_FUNC_ALLGATHER, 4 << 20, 8, 2) == &t->r[5],
	   "all-gather: 2 MiB falls in the table's gap (NCCL's choice), 4 MiB "
	   "has a rule");
	ok(as_tune_match(t, AS_FUNC_BROADCAST, 4096, 8, 2) == NULL,
	   "broadcast: no rule in this table");
	ok(as_tune_match(t, AS_FUNC_ALLREDUCE, 65536, 16, 4) == NULL,
	   "another communicator shape: no rule");
	ok(fabs_ok(t->inter_lat, 5e-6) && fabs_ok(t->intra_lat, 6e-7),
	   "the plan's link latencies are kept for recalibration");
	ok(strlen(t->plan_hash) == 16, "and its hash");
	autosync_plan_destroy(pl);

	/* --- "nccl: []" (a framework's default kept): NCCL left to itself */
	memset(t, 0, sizeof(*t));
	pl = load("nccl-none.yaml");
	n = as_tune_from_plan(pl, t, err, sizeof(err));
	ok(pl && n == 0 && !t->derived && autosync_plan_nnccl_rules(pl) == 0,
	   "nccl: []: no rules, none derived (%d)", n);
	autosync_plan_destroy(pl);

	/* --- a plan without a table: derived with the default constants */
	memset(t, 0, sizeof(*t));
	pl = load("ring-tree.yaml");
	n = as_tune_from_plan(pl, t, err, sizeof(err));
	ok(n > 6 && t->derived && autosync_plan_nnccl_rules(pl) == (size_t)n,
	   "ring-tree.yaml has no table: %d rules derived", n);
	r = as_tune_match(t, AS_FUNC_ALLREDUCE, 65536, 8, 2);
	ok(r && r->algo == AS_ALGO_TREE, "64 KiB (tree buckets): tree");
	r = as_tune_match(t, AS_FUNC_ALLREDUCE, 4194304, 8, 2);
	ok(r && r->algo == AS_ALGO_RING,
	   "4 MiB (ring bucket, fp16 wire size): ring");
	r = as_tune_match(t, AS_FUNC_ALLGATHER, 1048576, 8, 2);
	ok(r && r->algo == AS_ALGO_RING && r->proto >= 0,
	   "all-gather 1 MiB: a ring rule with a protocol (%s)",
	   r ? autosync_nccl_proto_name(r->proto) : "none");
	ok(as_tune_match(t, AS_FUNC_ALLREDUCE, 1024, 8, 2) != NULL &&
	       as_tune_match(t, AS_FUNC_ALLREDUCE, 1024, 16, 4) == NULL,
	   "1 KiB all-reduce: the model's rule, for the plan's shape only");
	autosync_plan_destroy(pl);

	/* --- job-level hint only */
	memset(t, 0, sizeof(*t));
	pl = load("job-tree.yaml");
	n = as_tune_from_plan(pl, t, err, sizeof(err));
	r = as_tune_match(t, AS_FUNC_ALLREDUCE, 524288, 4, 1);
	ok(n > 0 && r && r->algo == AS_ALGO_TREE &&
	       (r = as_tune_match(t, AS_FUNC_ALLREDUCE, (size_t)1 << 34, 4,
				  1)) &&
	       r->algo == AS_ALGO_TREE && r->max_bytes == UINT64_MAX &&
	       r->nnodes == 1,
	   "an auto bucket under a job-level tree hint: tree from half its "
	   "size up");
	autosync_plan_destroy(pl);

	/* --- rules file: parsed, put before the plan's rules */
	{
		size_t before = t->n;
		static const char rules[] =
		    "# comment\n\n"
		    "allreduce,0,65536,tree,ll,-1,-1,-1\n"
		    " allreduce , 1048576 , -1 , ring , simple , 16 , 2 , 8 # "
		    "big\n"
		    "allgather,0,-1,pat,-1,0,-1,-1\n";
		n = as_tune_parse_rules(rules, sizeof(rules) - 1, t, err,
					sizeof(err));
		ok(n == 3 && t->n == before + 3, "3 rules parsed (got %d: %s)",
		   n, n < 0 ? err : "");
	}
	ok(t->r[0].from_file && t->r[0].proto == AS_PROTO_LL &&
	       t->r[0].max_bytes == 65536 && t->r[1].nchannels == 16 &&
	       t->r[1].max_bytes == UINT64_MAX && t->r[1].nranks == 8 &&
	       t->r[2].func == AS_FUNC_ALLGATHER &&
	       t->r[2].algo == AS_ALGO_PAT && t->r[2].proto == -1 &&
	       !t->r[3].from_file,
	   "fields, wildcards, and file rules first");
	r = as_tune_match(t, AS_FUNC_ALLREDUCE, 2 << 20, 4, 1);
	ok(r && !r->from_file && r->algo == AS_ALGO_TREE,
	   "2 MiB on 1x4: the rule for 2x8 does not match, the plan's tree "
	   "does");
	r = as_tune_match(t, AS_FUNC_ALLREDUCE, 2 << 20, 8, 2);
	ok(r == &t->r[1], "2 MiB on 2x8: the file's ring rule");

	static const struct {
		const char *line, *why;
	} bad[] = {
	    {"allreduce,0,10,ring,simple,-1,-1", "fewer fields"},
	    {"alltoall,0,10,ring,simple,-1,-1,-1", "unknown collective"},
	    {"allreduce,10,10,ring,simple,-1,-1,-1", "empty range"},
	    {"allreduce,0,x,ring,simple,-1,-1,-1", "max_bytes 'x'"},
	    {"allreduce,0,10,hier,simple,-1,-1,-1", "unknown algorithm 'hier'"},
	    {"allreduce,0,10,ring,fast,-1,-1,-1", "unknown protocol"},
	    {"allreduce,0,10,ring,simple,65,-1,-1", "channels '65'"},
	    {"allreduce,0,10,ring,simple,-1,0,-1", "nNodes '0'"},
	    {"allreduce,-5,10,ring,simple,-1,-1,-1", "min_bytes '-5'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t before = t->n;
		char buf[128];
		snprintf(buf, sizeof(buf), "# x\n%s\n", bad[i].line);
		n = as_tune_parse_rules(buf, strlen(buf), t, err, sizeof(err));
		ok(n == -1 && t->n == before && strstr(err, "line 2: ") &&
		       strstr(err, bad[i].why),
		   "bad rule '%s': %s", bad[i].line, err);
	}
	{
		/* everything after a NUL used to be dropped without a word */
		static const char nul[] =
		    "allreduce,0,10,ring,simple,-1,-1,-1\n"
		    "allreduce,10,20,tree\0,simple,-1,-1,-1\n";
		size_t before = t->n;
		n = as_tune_parse_rules(nul, sizeof(nul) - 1, t, err,
					sizeof(err));
		ok(n == -1 && t->n == before &&
		       !strcmp(err, "line 2: a NUL byte"),
		   "a NUL byte in a rules file is an error: %s", err);
	}

	/* --- applying to a cost table */
	struct as_tune_rule ring = {.func = -1,
				    .max_bytes = UINT64_MAX,
				    .algo = AS_ALGO_RING,
				    .proto = -1};
	fill(c);
	c[AS_ALGO_RING][AS_PROTO_LL] = 150.0f;
	c[AS_ALGO_RING][AS_PROTO_LL128] = 105.0f;
	nch = 0;
	ok(as_tune_apply(&ring, &c[0][0], AS_NALGOS, AS_NPROTOS, &nch) ==
	       AS_PROTO_LL128,
	   "no protocol in the rule: the cheapest enabled one of the row");
	{
		int changed = 0;
		for (int a = 0; a < AS_NALGOS; a++)
			for (int p = 0; p < AS_NPROTOS; p++)
				changed +=
				    c[a][p] !=
				    (a == AS_ALGO_RING && p == AS_PROTO_LL
					 ? 150.0f
				     : a == AS_ALGO_RING && p == AS_PROTO_LL128
					 ? 0.0f
					 : 100.0f + (float)(10 * a + p));
		ok(changed == 0 && nch == 0,
		   "exactly ring/ll128 became 0, channels kept");
	}
	fill(c);
	c[AS_ALGO_RING][AS_PROTO_LL128] = -1.0f;
	ring.proto = AS_PROTO_LL128;
	ring.nchannels = 8;
	ok(as_tune_apply(&ring, &c[0][0], AS_NALGOS, AS_NPROTOS, &nch) ==
		   AS_PROTO_LL &&
	       c[AS_ALGO_RING][AS_PROTO_LL128] == -1.0f &&
	       c[AS_ALGO_RING][AS_PROTO_LL] == 0.0f && nch == 8,
	   "the rule's protocol disabled: stays -1, the cheapest enabled one "
	   "instead");
	fill(c);
	for (int p = 0; p < AS_NPROTOS; p++)
		c[AS_ALGO_RING][p] = -1.0f;
	nch = 0;
	ok(as_tune_apply(&ring, &c[0][0], AS_NALGOS, AS_NPROTOS, &nch) == -1 &&
	       c[AS_ALGO_RING][0] == -1.0f && c[AS_ALGO_RING][1] == -1.0f &&
	       c[AS_ALGO_RING][2] == -1.0f && nch == 0,
	   "the whole row disabled: nothing revived, nothing changed");
	ring.algo = AS_ALGO_PAT;
	ok(as_tune_apply(&ring, &c[0][0], 6, AS_NPROTOS, &nch) == -1,
	   "an algorithm beyond numAlgo: ignored");
	/* a table NCCL sized [numAlgo][2]: rows are 2 wide, and nothing past
	 * its end is touched (ASan watches the heap copy) */
	{
		float *narrow = calloc(AS_NALGOS * 2, sizeof(*narrow));
		struct as_tune_rule tr = {.func = -1,
					  .max_bytes = UINT64_MAX,
					  .algo = AS_ALGO_RING,
					  .proto = AS_PROTO_SIMPLE};
		for (int i = 0; narrow && i < AS_NALGOS * 2; i++)
			narrow[i] = 100.0f + (float)i;
		narrow[AS_ALGO_RING * 2 + AS_PROTO_LL128] = 50.0f;
		ok(narrow &&
		       as_tune_apply(&tr, narrow, AS_NALGOS, 2, &nch) ==
			   AS_PROTO_LL128 &&
		       narrow[AS_ALGO_RING * 2 + AS_PROTO_LL128] == 0.0f &&
		       narrow[AS_ALGO_RING * 2 + AS_PROTO_LL] ==
			   100.0f + AS_ALGO_RING * 2,
		   "numProto 2: the row is 2 wide; Simple does not exist, the "
		   "cheapest of the two is chosen");
		free(narrow);
	}

	/* algorithms the planner does not model stay in play for plan rules */
	{
		struct as_tune_rule pr = {.func = -1,
					  .max_bytes = UINT64_MAX,
					  .algo = AS_ALGO_RING,
					  .proto = AS_PROTO_SIMPLE,
					  .nchannels = 8};
		fill(c);
		c[AS_ALGO_NVLS][AS_PROTO_SIMPLE] =
		    50.0f; /* NCCL rates NVLS best */
		nch = 0;
		ok(as_tune_apply(&pr, &c[0][0], AS_NALGOS, AS_NPROTOS, &nch) ==
			   AS_TUNE_UNMODELLED &&
		       c[AS_ALGO_RING][AS_PROTO_SIMPLE] == 112.0f && nch == 0,
		   "plan rule, NVLS cheaper by NCCL's estimate: table and "
		   "channels untouched");
		c[AS_ALGO_NVLS][AS_PROTO_SIMPLE] = 150.0f;
		ok(as_tune_apply(&pr, &c[0][0], AS_NALGOS, AS_NPROTOS, &nch) ==
			   AS_PROTO_SIMPLE &&
		       c[AS_ALGO_RING][AS_PROTO_SIMPLE] == 0.0f && nch == 8,
		   "NVLS dearer than the plan's ring/simple: applied, 8 "
		   "channels");
		fill(c);
		c[AS_ALGO_NVLS][AS_PROTO_SIMPLE] = 50.0f;
		pr.from_file = 1;
		ok(as_tune_apply(&pr, &c[0][0], AS_NALGOS, AS_NPROTOS, &nch) ==
			   AS_PROTO_SIMPLE &&
		       c[AS_ALGO_RING][AS_PROTO_SIMPLE] == 0.0f,
		   "a rules-file rule is the admin's word: applied even then");
	}

	/* --- recalibration: NCCL's defaults in, scaled rows out */
	{
		as_tuner_constants_v5_t k;
		struct as_tune_table cal = {
		    .intra_lat = 6.8e-6, .inter_lat = 7e-6, .intra_nvlink = 1};
		static const double nv[2][3] = {{0.6, 1.25, 4.0},
						{0.6, 1.9, 3.4}};
		static const double pci[2][3] = {{1.0, 1.9, 4.0},
						 {1.0, 2.5, 5.7}};
		static const double net[2][3] = {{5.0, 8.5, 14},
						 {2.7, 4.0, 14.0}};
		int good = 1;

		memset(&k, 0, sizeof(k));
		for (int a = 0; a < 2; a++)
			for (int p = 0; p < 3; p++) {
				k.hwLatencies[AS_HW_NVLINK][a][p] = nv[a][p];
				k.hwLatencies[AS_HW_PCI][a][p] = pci[a][p];
				k.hwLatencies[AS_HW_NET][a][p] = net[a][p];
			}
		k.hwLatencies[AS_HW_NET][AS_ALGO_NVLS][AS_PROTO_SIMPLE] = 18.0;
		ok(as_tune_calibrate(&cal, &k) == 12,
		   "12 latency constants set");
		for (int a = 0; a < 2; a++)
			for (int p = 0; p < 3; p++) {
				good &=
				    fabs_ok(k.hwLatencies[AS_HW_NVLINK][a][p],
					    2 * nv[a][p]);
				good &= fabs_ok(k.hwLatencies[AS_HW_NET][a][p],
						0.5 * net[a][p]);
				good &=
				    k.hwLatencies[AS_HW_PCI][a][p] == pci[a][p];
			}
		ok(good,
		   "NVLink row x2 (Ring/Simple 3.4 -> 6.8 us), NET row x0.5 "
		   "(14 -> 7 us), every protocol of Ring and Tree; PCI "
		   "untouched");
		ok(k.hwLatencies[AS_HW_NET][AS_ALGO_NVLS][AS_PROTO_SIMPLE] ==
			   18.0 &&
		       k.baseLatencies[AS_ALGO_RING][AS_PROTO_SIMPLE] == 0,
		   "other algorithms and the base latencies: untouched");
		cal.intra_nvlink = 0;
		cal.inter_lat = 0;
		cal.intra_lat = 1e-9;
		ok(as_tune_calibrate(&cal, &k) == 6 &&
		       fabs_ok(k.hwLatencies[AS_HW_PCI][AS_ALGO_RING]
					    [AS_PROTO_SIMPLE],
			       0.1) &&
		       fabs_ok(
			   k.hwLatencies[AS_HW_PCI][AS_ALGO_TREE][AS_PROTO_LL],
			   0.1) &&
		       fabs_ok(k.hwLatencies[AS_HW_NET][AS_ALGO_RING]
					    [AS_PROTO_SIMPLE],
			       7.0),
		   "a PCIe plan scales the PCI row; a tiny latency is clamped "
		   "to 0.1 us; "
		   "an unknown one leaves its row alone");
	}
	free(t);
	return done_testing();
}
