/* profagg.c - the profiler's aggregation and report format with synthetic
 * events; the report is read back by the SPANK plugin's own reader. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/feedback.h"
#include "profagg.h"
#include "autosync/feedback.h"
#include "tap.h"

int main(void)
{
	struct as_prof_agg *a = calloc(1, sizeof(*a));
	autosync_feedback_rec_t *rec = calloc(1, sizeof(*rec));
	char *text = NULL;
	long len;

	plan(NO_PLAN);
	if (!a || !rec)
		bail_out("out of memory");

	ok(as_prof_dtype_size("ncclFloat32") == 4 &&
	       as_prof_dtype_size("ncclBfloat16") == 2 &&
	       as_prof_dtype_size("ncclFloat16") == 2 &&
	       as_prof_dtype_size("ncclInt64") == 8 &&
	       as_prof_dtype_size("ncclUint8") == 1 &&
	       as_prof_dtype_size("ncclFloat8e4m3") == 1 &&
	       as_prof_dtype_size("float64") == 8 &&
	       as_prof_dtype_size("mystery") == 1 &&
	       as_prof_dtype_size(NULL) == 1,
	   "datatype sizes");

	/* 3 all-reduces per step, first interval skipped as warm-up */
	as_prof_agg_init(a, 3, 1);
	double t = 10.0;
	int done = 0;
	for (int step = 0; step < 5; step++) {
		for (int k = 0; k < 3; k++)
			done += as_prof_agg_mark(a, t + 0.001 * k);
		t += step == 0
			 ? 0.5
			 : 0.1 +
			       0.01 * step; /* warm-up, then 0.11, 0.12, 0.13 */
	}
	ok(done == 3 && a->steps == 3 && a->skipped == 1 && a->npending == 3,
	   "5 step starts: 4 intervals, the first skipped, 3 kept");
	ok(a->pending[0] > 0.1099 && a->pending[0] < 0.1101 &&
	       a->pending[2] > 0.1299 && a->pending[2] < 0.1301,
	   "intervals between step starts");

	as_prof_agg_coll(a, "AllReduce", "Ring", "Simple", 16, 4 << 20, 100.0,
			 1);
	as_prof_agg_coll(a, "AllReduce", "Ring", "Simple", 16, (4 << 20) + 4,
			 300.0, 1);
	as_prof_agg_coll(a, "AllReduce", "Tree", "LL128", 8, 65536, 20.0, 0);
	as_prof_agg_coll(a, "AllGather", "Ring", "Simple", 16, 0, 5.0, 1);
	as_prof_agg_coll(a, "All Reduce\n", "Ring", NULL, 2, 1, 1.0, 0);
	ok(a->nstats == 4,
	   "keys: same (func, algo, proto, channels, size class) merge (%zu)",
	   a->nstats);

	len = as_prof_agg_format(a,
				 "# autosync-profiler 1 host=h pid=1 rank=0 "
				 "nranks=8 nodes=2 steps_per=3",
				 0, &text);
	ok(len > 0, "periodic flush formats");
	is(text,
	   "# autosync-profiler 1 host=h pid=1 rank=0 nranks=8 nodes=2 "
	   "steps_per=3\n"
	   "0.11\n0.12\n0.13\n",
	   "header, then one step time per line");
	ok(a->npending == 0, "pending steps cleared");
	free(text);

	as_prof_agg_mark(a, t);
	as_prof_agg_mark(a, t + 0.01);
	as_prof_agg_mark(a, t + 0.02);
	as_prof_agg_mark(a, t + 0.2);
	len = as_prof_agg_format(a, NULL, 1, &text);
	ok(len > 0, "final flush formats");
	is(text,
	   "0.14\n0.2\n"
	   "# coll AllGather Ring Simple channels=16 bytes=[0,1) n=1 mean_us=5 "
	   "min_us=5 max_us=5 timing=gpu\n"
	   "# coll AllReduce Tree LL128 channels=8 bytes=[65536,131072) n=1 "
	   "mean_us=20 min_us=20 max_us=20 timing=host\n"
	   "# coll AllReduce Ring Simple channels=16 bytes=[4194304,8388608) "
	   "n=2 mean_us=200 min_us=100 max_us=300 timing=gpu\n"
	   "# coll All_Reduce_ Ring - channels=2 bytes=[1,2) n=1 mean_us=1 "
	   "min_us=1 max_us=1 timing=host\n"
	   "# steps n=5 skipped=1 mean_s=0.14 collectives_per_step=3 "
	   "comm_s_per_step=8.52e-05\n",
	   "the rest of the steps, then per-collective '#' lines sorted, then "
	   "the step summary");

	/* the SPANK plugin's reader takes it as it is */
	ok(autosync_feedback_parse_report(text, rec, NULL) == 2 &&
	       rec->measured_count == 2 && rec->measured[1] == 0.2,
	   "autosync_feedback_parse_report reads the final chunk: 2 steps");
	free(text);
	{
		const char *whole = "# autosync-profiler 1 host=h pid=1 rank=0 "
				    "nranks=8 nodes=2 steps_per=3\n"
				    "0.11\n0.12\n0.13\n0.2\n# coll AllReduce "
				    "Ring Simple channels=16 "
				    "bytes=[4194304,8388608) n=2 mean_us=200 "
				    "min_us=100 max_us=300 timing=gpu\n"
				    "# steps n=4 skipped=1 mean_s=0.14\n";
		ok(autosync_feedback_parse_report(whole, rec, NULL) == 4 &&
		       rec->measured_mean > 0.13999 &&
		       rec->measured_mean < 0.14001,
		   "and a whole report: 4 step times, mean 0.14 s");
	}

	/* unknown step length: no step lines, a note */
	as_prof_agg_init(a, 0, 1);
	ok(as_prof_agg_mark(a, 1.0) == 0 && as_prof_agg_mark(a, 2.0) == 0,
	   "steps_per 0: no steps");
	as_prof_agg_coll(a, "AllReduce", "Ring", "LL", 1, 8, 3.0, 1);
	len = as_prof_agg_format(a, NULL, 1, &text);
	ok(len > 0 && !strncmp(text, "# coll AllReduce", 16) &&
	       strstr(text, "# steps unknown (set AUTOSYNC_STEP_COLLECTIVES"),
	   "only '#' lines, and why");
	ok(autosync_feedback_parse_report(text, rec, NULL) == 0,
	   "the reader finds 0 steps, no error");
	free(text);

	/* a full key table */
	as_prof_agg_init(a, 1, 0);
	for (int i = 0; i < AS_PROF_MAX_KEYS + 5; i++)
		as_prof_agg_coll(a, "AllReduce", "Ring", "Simple", i % 65,
				 (uint64_t)1 << (i / 65), 1.0, 1);
	ok(a->nstats == AS_PROF_MAX_KEYS && a->dropped_keys == 5,
	   "the key table is bounded");
	as_prof_agg_reset_steps(a);
	ok(a->marks == 0 && a->step_start < 0, "reset_steps");
	free(a);
	free(rec);
	return done_testing();
}
