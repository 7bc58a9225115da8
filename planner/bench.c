/* bench.c - planner benchmark (not a test): planning time, memory and
 * their growth for 100 .. 100,000 tensors and 1 .. 1,024 nodes.
 *
 *   planner/bench [--quick] [--framework NAME]
 *   planner/bench --compare CATALOG_DIR   (search strategies on real models)
 *
 * Synthetic models: N tensors in N/2 layers (weight + bias), weight sizes
 * drawn from a fixed LCG between 1 Ki and 4 Mi elements, FLOPs estimated
 * from the parameters; clusters of 8 GPUs per node (NVLink 240 GB/s,
 * 4 x 25 GB/s NICs). Reports the median of several runs, the peak RSS,
 * and the log-log slopes (the targets: <= 1.2 against tensors, <= 1.1
 * against nodes, and <= 50 ms for 1,000 tensors x 128 nodes). */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "autosync/planner.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long rss_kb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static autosync_model_t *synth(size_t n)
{
	autosync_model_t *m = autosync_model_create("synthetic", NULL);
	uint64_t x = 88172645463325252ULL;
	char name[64], layer[64];

	for (size_t i = 0; m && i < n; i++) {
		int64_t shape[2];
		unsigned nd = 1;
		if (i % 2 == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			shape[0] = 1 << (5 + (int)(x % 7)); /* 32 .. 2048 */
			shape[1] = 1 << (5 + (int)((x >> 8) % 7));
			nd = 2;
			snprintf(name, sizeof(name), "l%zu.weight", i / 2);
		} else {
			shape[0] = 1024;
			snprintf(name, sizeof(name), "l%zu.bias", i / 2);
		}
		snprintf(layer, sizeof(layer), "l%zu", i / 2);
		if (autosync_model_add_tensor(m, name, layer,
					      AUTOSYNC_DT_FLOAT32, nd, shape, 0,
					      0, NULL) < 0) {
			autosync_model_destroy(m);
			return NULL;
		}
	}
	return m;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* median planning time in seconds */
static double bench(const autosync_model_t *m, unsigned nodes, int fw, int reps,
		    unsigned long *evals, double *step)
{
	double t[16];
	autosync_cluster_t c;

	memset(&c, 0, sizeof(c));
	c.nodes = nodes;
	c.gpus_per_node = 8;
	c.intra_class = AUTOSYNC_LINK_NVLINK;
	c.intra_bw = 240e9;
	c.intra_lat = 0.6e-6;
	c.nics_per_node = 4;
	c.nic_bw = 25e9;
	c.inter_lat = 2e-6;
	for (int r = 0; r < reps; r++) {
		autosync_error_t err = {""};
		autosync_planner_t *p = autosync_planner_create(&err);
		autosync_plan_t *pl;
		autosync_plan_summary_t s;
		double t0 = now();
		autosync_planner_set_cluster(p, &c, &err);
		autosync_planner_set_model(p, m, &err);
		autosync_planner_set_framework(p, fw, &err);
		pl = autosync_planner_run(p, &err);
		t[r] = now() - t0;
		if (!pl) {
			fprintf(stderr, "bench: %s\n", err.text);
			exit(1);
		}
		autosync_plan_summary(pl, &s);
		*step = s.step_time;
		*evals = autosync_planner_evals(p);
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
	}
	qsort(t, (size_t)reps, sizeof(double), cmpd);
	return t[reps / 2];
}

static double slope(const double *x, const double *y, int n)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++) {
		double lx = log(x[i]), ly = log(y[i]);
		sx += lx;
		sy += ly;
		sxx += lx * lx;
		sxy += lx * ly;
	}
	return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* predicted step time and planning time of one search */
static double plan_once(const autosync_model_t *m, const autosync_cluster_t *c,
			int fw, double *ms)
{
	autosync_error_t err = {""};
	autosync_planner_t *p = autosync_planner_create(&err);
	autosync_costs_t k;
	autosync_plan_t *pl;
	autosync_plan_summary_t s;
	double t0 = now(), step = -1;

	autosync_costs_default(&k);
	k.uncertainty = 0; /* compare the searches themselves */
	autosync_planner_set_cluster(p, c, &err);
	autosync_planner_set_model(p, m, &err);
	autosync_planner_set_costs(p, &k, &err);
	autosync_planner_set_framework(p, fw, &err);
	pl = autosync_planner_run(p, &err);
	*ms = (now() - t0) * 1e3;
	if (pl && autosync_plan_summary(pl, &s) == 0)
		step = s.step_time;
	autosync_plan_destroy(pl);
	autosync_planner_destroy(p);
	return step;
}

/* Why an exact DP over bucket boundaries: compare, on the catalog, the
 * framework-knob sweep (pytorch-ddp: bucket cap x first bucket x one
 * algorithm) with the DP (generic: any boundaries, algorithm per bucket). */
static int compare(const char *dir)
{
	static const struct {
		const char *name;
		unsigned nodes, nics;
		double nic_bw;
	} clusters[] = {
	    {"4x8, 4x200G", 4, 4, 25e9},
	    {"16x8, 1x100G", 16, 1, 12.5e9},
	    {"64x8, 4x200G", 64, 4, 25e9},
	};
	char **names = NULL;
	size_t nnames = 0;
	autosync_error_t err = {""};

	if (autosync_catalog_list(dir, &names, &nnames, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.text);
		return 1;
	}
	printf("%-16s %-13s %11s %11s %9s %11s %9s %7s\n", "model", "cluster",
	       "ddp-def ms", "sweep ms", "(plan ms)", "DP ms", "(plan ms)",
	       "DP gain");
	for (size_t i = 0; i < nnames; i++) {
		autosync_model_t *m = autosync_model_open(names[i], dir, &err);
		if (!m)
			continue;
		for (size_t j = 0; j < sizeof(clusters) / sizeof(clusters[0]);
		     j++) {
			autosync_cluster_t c;
			autosync_planner_t *p = autosync_planner_create(&err);
			autosync_plan_t *pl;
			autosync_plan_summary_t s;
			double ms1, ms2, sw, dp, ddp = -1;
			memset(&c, 0, sizeof(c));
			c.nodes = clusters[j].nodes;
			c.gpus_per_node = 8;
			c.intra_class = AUTOSYNC_LINK_NVLINK;
			c.intra_bw = 240e9;
			c.intra_lat = 0.6e-6;
			c.nics_per_node = clusters[j].nics;
			c.nic_bw = clusters[j].nic_bw;
			c.inter_lat = 2e-6;
			autosync_planner_set_cluster(p, &c, &err);
			autosync_planner_set_model(p, m, &err);
			pl = autosync_planner_baseline(p, AUTOSYNC_BASELINE_DDP,
						       &err);
			if (pl && autosync_plan_summary(pl, &s) == 0)
				ddp = s.step_time;
			autosync_plan_destroy(pl);
			autosync_planner_destroy(p);
			sw = plan_once(m, &c, AUTOSYNC_FW_PYTORCH_DDP, &ms1);
			dp = plan_once(m, &c, AUTOSYNC_FW_GENERIC, &ms2);
			printf("%-16s %-13s %11.3f %11.3f %9.2f %11.3f %9.2f "
			       "%6.3fx\n",
			       names[i], clusters[j].name, ddp * 1e3, sw * 1e3,
			       ms1, dp * 1e3, ms2, dp > 0 ? sw / dp : 0);
		}
		autosync_model_destroy(m);
	}
	autosync_catalog_free(names);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t tensors[] = {100, 1000, 10000, 100000};
	static const unsigned nodes[] = {1, 4, 16, 128, 1024};
	int quick = 0, fw = AUTOSYNC_FW_GENERIC;
	double tx[8], ty[8], nx[8], ny[8];
	int nt = 0, nn = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--compare") && i + 1 < argc)
			return compare(argv[++i]);
		else if (!strcmp(argv[i], "--framework") && i + 1 < argc)
			fw = autosync_framework_from_name(argv[++i]);
		else {
			fprintf(stderr,
				"usage: bench [--quick] [--framework NAME]\n");
			return 2;
		}
	}
	if (fw < 0) {
		fprintf(stderr, "bench: unknown framework\n");
		return 2;
	}
	printf("autosync planner benchmark, framework %s (times: median)\n",
	       autosync_framework_name(fw));
	printf("%9s %6s %12s %10s %12s %12s\n", "tensors", "nodes", "plan ms",
	       "evals", "step ms", "max RSS MB");
	for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); i++) {
		autosync_model_t *m;
		if (quick && tensors[i] > 10000)
			continue;
		m = synth(tensors[i]);
		if (!m)
			return 1;
		for (size_t j = 0; j < sizeof(nodes) / sizeof(nodes[0]); j++) {
			unsigned long ev = 0;
			double step = 0;
			int reps = tensors[i] >= 100000	 ? 1
				   : tensors[i] >= 10000 ? 3
							 : 7;
			double t = bench(m, nodes[j], fw, reps, &ev, &step);
			printf("%9zu %6u %12.3f %10lu %12.3f %12.1f\n",
			       tensors[i], nodes[j], t * 1e3, ev, step * 1e3,
			       rss_kb() / 1024.0);
			fflush(stdout);
			if (nodes[j] == 128) {
				tx[nt] = (double)tensors[i];
				ty[nt++] = t;
			}
			if (tensors[i] == 1000) {
				nx[nn] = nodes[j];
				ny[nn++] = t;
			}
		}
		autosync_model_destroy(m);
	}
	if (nt > 1)
		printf("log-log slope of planning time vs tensors (128 nodes): "
		       "%.3f (goal <= 1.2)\n",
		       slope(tx, ty, nt));
	if (nn > 1)
		printf("log-log slope of planning time vs nodes (1000 "
		       "tensors): %.3f (goal <= 1.1)\n",
		       slope(nx, ny, nn));
	return 0;
}
