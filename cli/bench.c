/* bench.c - 'autosync bench' (placeholder until its part lands). */
#include "config.h"

#include <stdio.h>

#include "cli.h"

int autosync_cmd_bench(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "autosync: 'bench' is not implemented yet\n");
	return 1;
}
