/* job-start.c - one job-start planning run as the SPANK plugin's planning
 * child makes it: libautosync alone (no XGBoost linked in, as in
 * slurmstepd), the job pipeline on a topology file, with or without a
 * learned simulator. Prints the milliseconds autosync_job_run() took and
 * the plan's simulator hash ("-" for none). Built and run by
 * tests/bench/simulator-time.sh; a benchmark driver, not a test.
 * usage: job-start CATALOG TOPOLOGY NODES MODEL SIMULATOR|none MODULE */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <autosync/job.h>
#include <autosync/planner.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* a warning (the simulator not loaded) must not pass as a fast run */
static void note(int level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	fprintf(stderr, "job-start: %s\n", msg);
}

int main(int argc, char **argv)
{
	autosync_error_t err = {.text = ""};
	autosync_plan_summary_t s;
	autosync_job_t *j;
	double t0, t1;

	if (argc != 7) {
		fprintf(stderr, "usage: job-start CATALOG TOPOLOGY NODES "
				"MODEL SIMULATOR|none MODULE\n");
		return 2;
	}
	if (!(j = autosync_job_create(&err)))
		goto fail;
	autosync_job_set_log(j, note, NULL);
	if (autosync_job_set_catalog_dir(j, argv[1], &err) < 0 ||
	    autosync_job_set_topology(j, argv[2], &err) < 0 ||
	    autosync_job_set_gpus(j, "all", &err) < 0 ||
	    autosync_job_set_nodes(j, (unsigned)atoi(argv[3]), &err) < 0 ||
	    autosync_job_set_model(j, argv[4], &err) < 0 ||
	    autosync_job_set_simulator(j, argv[5], &err) < 0 ||
	    autosync_job_set_simulator_module(j, argv[6], &err) < 0)
		goto fail;
	t0 = now_ms();
	if (autosync_job_run(j, &err) < 0)
		goto fail;
	t1 = now_ms();
	if (autosync_plan_summary(autosync_job_plan(j), &s) < 0)
		goto fail;
	printf("%.3f %s\n", t1 - t0,
	       s.simulator_hash && *s.simulator_hash ? s.simulator_hash : "-");
	autosync_job_destroy(j);
	return 0;
fail:
	fprintf(stderr, "job-start: %s\n", err.text);
	autosync_job_destroy(j);
	return 1;
}
