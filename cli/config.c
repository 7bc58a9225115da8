/* config.c - 'autosync config' (placeholder until its library lands). */
#include "config.h"

#include <stdio.h>

#include "cli.h"

int autosync_cmd_config(int argc, char **argv)
{
	(void) argc;
	(void) argv;
	fprintf(stderr, "autosync: 'config' is not implemented yet\n");
	return 1;
}
