/* topo.c - 'autosync topo' (placeholder until its library lands). */
#include "config.h"

#include <stdio.h>

#include "cli.h"

int autosync_cmd_topo(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "autosync: 'topo' is not implemented yet\n");
	return 1;
}
