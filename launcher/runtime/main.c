/* main.c - autosync-bench, the trial runs behind 'autosync bench': a
 * program of its own so that only it links MPI (and reaches NCCL and
 * CUDA, at run time). 'autosync bench' reads the user's options and execs
 * it with their canonical form; it is not meant to be run by hand. */
#include "config.h"

int autosync_rt_bench_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return autosync_rt_bench_main(argc, argv);
}
