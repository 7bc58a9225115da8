/* bench.c - 'autosync bench': trial runs of plans over MPI. The work is in
 * launcher/runtime/bench.c (linked only when Open MPI was found). */
#include "config.h"

#include <stdio.h>

#include "cli.h"

#ifdef HAVE_MPI
int autosync_rt_bench_main(int argc, char **argv);
#endif

int autosync_cmd_bench(int argc, char **argv)
{
#ifdef HAVE_MPI
	return autosync_rt_bench_main(argc, argv);
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "autosync: 'bench' needs Open MPI: this autosync was "
			"built without MPI\n");
	return 1;
#endif
}
