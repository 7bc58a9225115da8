/* backend.c - the sync runtime's backends (built only with NCCL):
 * selection by name, a clean failure of "nccl" without a GPU, and a mock
 * backend driven by the shared plan walk whose recorded call sequence
 * must match exactly (the plan walk that drives MPI drives NCCL the same
 * way). usage: backend.t [RANKS_PER_NODE] (backend.sh runs it on 1 rank
 * and on 2 ranks with 1 rank per node; TAP from rank 0 only) */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "syncrt.h"
#include "tap.h"

static int R, P;

#define CHECK(c, ...)                                                         \
	do {                                                                  \
		int l_ = !!(c), a_ = 0;                                       \
		MPI_Allreduce(&l_, &a_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); \
		if (R == 0)                                                   \
			ok(a_, __VA_ARGS__);                                  \
	} while (0)

/* ------------------------------------------------------------ mock */
struct mock {
	char log[4096];
	float *arena;
	size_t narena; /* its elements */
	char *base;    /* staged region */
	int in_arena;
	int f16_ok; /* the fp16 staging held fp16 of the arena values */
};

static void rec(struct mock *m, const char *fmt, ...)
{
	size_t l = strlen(m->log);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->log + l, sizeof(m->log) - l, fmt, ap);
	va_end(ap);
}

/* where p is: arena element offset, or byte offset in a staging copy */
static long where(struct mock *m, void *p)
{
	return m->in_arena ? (long)((float *)p - m->arena)
			   : (long)((char *)p - m->base);
}

static const char *const EN[] = {"f32", "f16", "bf16"};

static int m_prepare(void *c, const char *hint, autosync_error_t *e)
{
	rec(c, "prepare(%s) ", hint);
	return 0;
}
static int m_in(void *c, void *buf, size_t bytes, autosync_error_t *e)
{
	struct mock *m = c;
	m->base = buf;
	/* the arena's real extent: a staging buffer the allocator put just
	 * after it is not in it */
	m->in_arena =
	    (float *)buf >= m->arena && (float *)buf < m->arena + m->narena;
	if (m->in_arena)
		rec(m, "in(%ld,%zu) ", where(m, buf), bytes);
	else
		rec(m, "in(tmp,%zu) ", bytes);
	return 0;
}
static int m_out(void *c, autosync_error_t *e)
{
	rec(c, "out ");
	return 0;
}
static int m_allreduce(void *c, void *buf, size_t n, int el, int algo,
		       autosync_error_t *e)
{
	struct mock *m = c;
	if (el == RT_F16) {
		const uint16_t *h = buf;
		m->f16_ok = 1;
		for (size_t i = 0; i < n; i++)
			if (h[i] != autosync_rt_f32_to_f16((float)(i + 1)))
				m->f16_ok = 0;
	}
	rec(m, "allreduce(%ld,%zu,%s,%s) ", where(m, buf), n, EN[el],
	    autosync_algo_name(algo));
	return 0;
}
static int m_gather(void *c, float *buf, size_t n, autosync_error_t *e)
{
	rec(c, "gather_sum(%ld,%zu) ", where(c, buf), n);
	return 0;
}
static int m_reduce(void *c, void *buf, size_t n, int el, int root,
		    autosync_error_t *e)
{
	rec(c, "reduce(%ld,%zu,%s,root=%d) ", where(c, buf), n, EN[el], root);
	return 0;
}
static int m_bcast(void *c, void *buf, size_t n, int el, int root,
		   autosync_error_t *e)
{
	rec(c, "bcast(%ld,%zu,%s,root=%d) ", where(c, buf), n, EN[el], root);
	return 0;
}
static int m_gs(void *c, autosync_error_t *e)
{
	rec(c, "{ ");
	return 0;
}
static int m_ge(void *c, autosync_error_t *e)
{
	rec(c, "} ");
	return 0;
}

static const struct autosync_rt_backend mock_ops = {
    .name = "mock",
    .prepare = m_prepare,
    .stage_in = m_in,
    .stage_out = m_out,
    .allreduce = m_allreduce,
    .gather_sum = m_gather,
    .reduce = m_reduce,
    .bcast = m_bcast,
    .group_start = m_gs,
    .group_end = m_ge,
};

/* ------------------------------------------------------------ plan */
static const char PLAN[] =
    "autosync_plan: 1\n"
    "inputs:\n"
    "  model: \"mock\"\n"
    "  model_hash: \"\"\n"
    "  batch_size: 1\n"
    "  framework: \"generic\"\n"
    "  topology_hash: \"\"\n"
    "  cluster:\n"
    "    nodes: 2\n"
    "    gpus_per_node: 1\n"
    "    intra_class: nvlink\n"
    "    intra_bw: 1e+10\n"
    "    intra_lat: 1e-06\n"
    "    nics_per_node: 1\n"
    "    nic_bw: 1e+09\n"
    "    inter_lat: 1e-05\n"
    "    nodes_per_switch: 0\n"
    "strategy: \"mock\"\n"
    "reason: \"test\"\n"
    "job:\n"
    "  nccl_algo: auto\n"
    "  compression: none\n"
    "  bucket_cap_bytes: 0\n"
    "  first_bucket_bytes: 0\n"
    "  cycle_time: 0\n"
    "prediction:\n"
    "  step_time: 1\n"
    "  forward: 0\n"
    "  backward: 0\n"
    "  optimizer: 0\n"
    "  communication: 0\n"
    "  exposed_communication: 0\n"
    "  bound: 0\n"
    "baselines: []\n"
    "env:\n"
    "  NCCL_ALGO: \"Tree\"\n"
    "buckets:\n"
    "  - {id: 0, kind: allreduce, algorithm: ring, compression: none,"
    " bytes: 0, wire_bytes: 0, ready: 0, start: 0, end: 0,"
    " tensors: [\"a\", \"b\"]}\n"
    "  - {id: 1, kind: allreduce, algorithm: tree, compression: fp16,"
    " bytes: 0, wire_bytes: 0, ready: 0, start: 0, end: 0,"
    " tensors: [\"c\"]}\n"
    "  - {id: 2, kind: ps, servers: 2, local_aggregation: false,"
    " local_replication: false, bytes: 0, wire_bytes: 0, ready: 0,"
    " start: 0, end: 0, tensors: [\"d\", \"e\"], tensor_servers: [1, -1]}\n"
    "  - {id: 3, kind: allreduce, algorithm: hierarchical,"
    " compression: bf16, bytes: 0, wire_bytes: 0, ready: 0, start: 0,"
    " end: 0, tensors: [\"f\"]}\n";

static autosync_model_t *mock_model(void)
{
	static const struct {
		const char *n;
		int64_t d;
	} T[] = {{"a", 10}, {"b", 6}, {"c", 4}, {"d", 8}, {"e", 5}, {"f", 3}};
	autosync_error_t err;
	autosync_model_t *m = autosync_model_create("mock", &err);
	for (size_t i = 0; m && i < sizeof(T) / sizeof(T[0]); i++)
		if (autosync_model_add_tensor(m, T[i].n, T[i].n,
					      AUTOSYNC_DT_FLOAT32, 1, &T[i].d,
					      0, 0, &err) < 0)
			return NULL;
	return m;
}

int main(int argc, char **argv)
{
	autosync_error_t err = {{0}};
	autosync_rt_t *rt;
	int ppn;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &R);
	MPI_Comm_size(MPI_COMM_WORLD, &P);
	ppn = argc > 1 ? atoi(argv[1]) : 0;
	if (R == 0)
		plan(NO_PLAN);
	rt = autosync_rt_create_ppn(MPI_COMM_WORLD, ppn, &err);
	CHECK(rt != NULL, "runtime: %s", err.text);
	if (!rt)
		goto out;

	/* (a)+(b) selection by name */
	CHECK(!strcmp(autosync_rt_backend_name(rt), "mpi"), "default is mpi");
	CHECK(autosync_rt_set_backend(rt, "mpi", &err) == 0 &&
		  !strcmp(autosync_rt_backend_name(rt), "mpi"),
	      "select mpi");
	err.text[0] = 0;
	CHECK(autosync_rt_set_backend(rt, "gloo", &err) < 0 &&
		  strstr(err.text, "unknown backend 'gloo'"),
	      "unknown backend refused: %s", err.text);
	/* "nccl": here (no GPU, or no CUDA libraries to load) it must fail
	 * cleanly and leave mpi in place; on a machine with a GPU it is
	 * selected */
	err.text[0] = 0;
	if (autosync_rt_set_backend(rt, "nccl", &err) < 0) {
		CHECK((strstr(err.text, "CUDA device") != NULL ||
		       strstr(err.text, "cannot load the CUDA runtime") !=
			   NULL) &&
			  !strcmp(autosync_rt_backend_name(rt), "mpi"),
		      "nccl without a GPU fails cleanly: %s", err.text);
	} else {
		CHECK(!strcmp(autosync_rt_backend_name(rt), "nccl"),
		      "nccl selected (a GPU is present)");
		CHECK(autosync_rt_set_backend(rt, "mpi", &err) == 0,
		      "back to mpi");
	}

	/* (c) the shared plan walk drives a recording mock */
	err.text[0] = 0;
	{
		static struct mock mk;
		autosync_plan_t *pl =
		    autosync_plan_parse(PLAN, strlen(PLAN), "mock.yaml", &err);
		autosync_model_t *m = pl ? mock_model() : NULL;
		autosync_rt_plan_t *rp = NULL;
		char want[2048];
		size_t n;
		float *g;
		int good = 1;

		CHECK(pl && m, "mock plan and model: %s", err.text);
		if (!pl || !m)
			goto out;
		autosync_rt_set_backend_ops(rt, &mock_ops, &mk);
		CHECK(!strcmp(autosync_rt_backend_name(rt), "mock"),
		      "mock installed");
		rp = autosync_rt_prepare(rt, pl, m, &err);
		CHECK(rp != NULL, "prepare on the mock: %s", err.text);
		if (!rp)
			goto out;
		mk.arena = autosync_rt_plan_arena(rp, &n);
		mk.narena = n;
		g = autosync_rt_plan_grad(rp, 2, &n); /* c */
		for (size_t i = 0; i < n; i++)
			g[i] = (float)(i + 1);
		for (size_t b = 0; b < autosync_rt_plan_nbuckets(rp); b++)
			if (autosync_rt_sync_bucket(rp, b, &err) < 0)
				good = 0;
		CHECK(good, "walk over the mock: %s", err.text);
		snprintf(want, sizeof(want), "%s%s%s%s%s", "prepare(Tree) ",
			 "in(0,64) allreduce(0,16,f32,ring) out ",
			 "in(tmp,8) allreduce(0,4,f16,tree) out ",
			 P == 1 || ppn != 1
			     ? "in(20,52) { reduce(20,8,f32,root=0) "
			       "reduce(28,5,f32,root=0) } { "
			       "bcast(20,8,f32,root=0) "
			       "bcast(28,5,f32,root=0) } out "
			     : "in(20,52) { reduce(20,8,f32,root=1) "
			       "reduce(28,3,f32,root=0) "
			       "reduce(31,2,f32,root=1) } { "
			       "bcast(20,8,f32,root=1) "
			       "bcast(28,3,f32,root=0) "
			       "bcast(31,2,f32,root=1) } out ",
			 "in(tmp,6) allreduce(0,3,bf16,hierarchical) out ");
		CHECK(!strcmp(mk.log, want), "exact call sequence");
		if (R == 0 && strcmp(mk.log, want))
			diag("got:  %s\nwant: %s", mk.log, want);
		CHECK(mk.f16_ok, "the fp16 bucket reached the backend as fp16");
		autosync_rt_plan_destroy(rp);

		/* the same plan on the MPI backend gives the sums */
		autosync_rt_set_backend_ops(rt, NULL, NULL);
		CHECK(!strcmp(autosync_rt_backend_name(rt), "mpi"),
		      "mpi again");
		rp = autosync_rt_prepare(rt, pl, m, &err);
		good = rp != NULL;
		if (rp) {
			float *a = autosync_rt_plan_arena(rp, &n);
			for (size_t i = 0; i < n; i++)
				a[i] = 1.0f;
			for (size_t b = 0; b < autosync_rt_plan_nbuckets(rp);
			     b++)
				if (autosync_rt_sync_bucket(rp, b, &err) < 0)
					good = 0;
			for (size_t i = 0; good && i < n; i++)
				if (a[i] != (float)P)
					good = 0;
		}
		CHECK(good, "the same plan on mpi sums on %d ranks: %s", P,
		      err.text);
		autosync_rt_plan_destroy(rp);
		autosync_model_destroy(m);
		autosync_plan_destroy(pl);
	}
out:
	autosync_rt_destroy(rt);
	if (R == 0)
		done_testing();
	MPI_Finalize();
	return 0;
}
