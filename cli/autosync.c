/* autosync.c - the command-line tool: a thin dispatcher over the libraries. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "autosync/common.h"
#include "cli.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "topo", autosync_cmd_topo, "show this node's (allocated) GPU/NIC topology" },
	{ "plan", autosync_cmd_plan, "plan gradient synchronization for a model" },
	{ "config", autosync_cmd_config, "validate a site config (config check FILE)" },
	{ "feedback", autosync_cmd_feedback, "list feedback records: predicted vs measured" },
	{ "bench", autosync_cmd_bench, "trial run: replay training steps of a plan over MPI" },
	{ "launch", autosync_cmd_launch, "apply a plan without the SPANK plugin, then exec a command" },
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: autosync COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(fp, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "\n'autosync COMMAND --help' describes each command; "
		    "see autosync(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("autosync %s\n", autosync_version());
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "autosync: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
