/* launch.c - 'autosync launch' (placeholder until its part lands). */
#include "config.h"

#include <stdio.h>

#include "cli.h"

int autosync_cmd_launch(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "autosync: 'launch' is not implemented yet\n");
	return 1;
}
