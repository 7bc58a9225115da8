/* module.c - learn/'s simulator.so: the loadable side of a learned
 * simulator (autosync_simulator_module_t in autosync/planner.h). The job
 * pipeline dlopen()s it in the planning process only, so XGBoost (and its
 * OpenMP and C++ runtimes) never enter srun or slurmstepd. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "learn.h"

/* One OpenMP thread in the planning process: XGBoost loads the trees and
 * builds the prediction matrix in a team of one thread per core, whose
 * workers then spin on the cores job start needs; a few dozen candidate
 * rows gain nothing from them. libgomp is XGBoost's, already loaded. */
static void one_omp_thread(void)
{
	void *gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void (*set)(int) = NULL;

	if (!gomp)
		return;
	*(void **)&set = dlsym(gomp, "omp_set_num_threads");
	if (set)
		set(1);
	dlclose(gomp);
}

static void *load(const void *buf, size_t len, const char *name, char *err,
		  size_t errlen)
{
	autosync_error_t e = {.text = ""};
	autosync_learned_t *l;

	one_omp_thread();
	l = autosync_learned_load_buffer(buf, len, name, &e);

	if (!l && err && errlen)
		snprintf(err, errlen, "%s", e.text);
	return l;
}

static int correct(void *h, const autosync_cluster_t *c, size_t n,
		   const double *terms, const double *step, double *out)
{
	return autosync_learned_correct(h, c, n, terms, step, out, NULL);
}

static double margin(void *h, int family)
{
	return autosync_learned_margin(h, family);
}

static double sample_compute(void *h, const char *model_hash)
{
	return autosync_learned_compute(h, model_hash);
}

static void destroy(void *h)
{
	autosync_learned_destroy(h);
}

/* the one symbol the module exports (learn/simulator.map) */
const autosync_simulator_module_t autosync_simulator_module = {
    .abi = AUTOSYNC_SIMULATOR_ABI,
    .load = load,
    .correct = correct,
    .margin = margin,
    .destroy = destroy,
    .sample_compute = sample_compute,
};
