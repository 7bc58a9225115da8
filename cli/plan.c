/* plan.c - 'autosync plan' (placeholder until its library lands). */
#include "config.h"

#include <stdio.h>

#include "cli.h"

int autosync_cmd_plan(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "autosync: 'plan' is not implemented yet\n");
	return 1;
}
