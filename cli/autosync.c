/* autosync.c - the command-line tool: a thin dispatcher over the libraries. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "autosync/common.h"
#include "common/text.h"
#include "cli.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
    {"topo", autosync_cmd_topo,
     "show this node's (allocated) GPU/NIC topology"},
    {"plan", autosync_cmd_plan, "plan gradient synchronization for a model"},
    {"config", autosync_cmd_config,
     "validate a site config, on this node too (config check [--node] FILE)"},
    {"feedback", autosync_cmd_feedback,
     "list feedback records: predicted vs measured"},
    {"eval", autosync_cmd_eval,
     "score the predictions of feedback logs: ranking and error"},
    {"train", autosync_cmd_train,
     "fit a simulator file from feedback logs (learned correction)"},
    {"promote", autosync_cmd_promote,
     "replace the site's simulator file by a candidate not worse"},
    {"bench", autosync_cmd_bench,
     "trial run: replay training steps of a plan over MPI"},
    {"launch", autosync_cmd_launch,
     "apply a plan without the SPANK plugin, then exec a command"},
    {"init", autosync_cmd_init,
     "plan before the ranks start and write the files (init container)"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *fp)
{
	fprintf(fp, "usage: autosync COMMAND [OPTIONS]\n"
		    "       autosync help [COMMAND]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "  %-9s %s\n", commands[i].name,
			commands[i].summary);
	fprintf(fp, "  %-9s %s\n", "help",
		"this list, or a command's "
		"options (the same as COMMAND --help)");
	fprintf(fp, "  %-9s %s\n", "version", "print the version");
	fprintf(fp,
		"\ntopo, plan, bench, launch and init share the topology "
		"options (-T/--topology,\n-g/--gpus, --network, -N/--nodes); "
		"see autosync(1).\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* An unknown command: the closest one and every one. 2. */
static int unknown(const char *name)
{
	const char *names[NCOMMANDS + 2], *best;
	char list[256], q[256];
	size_t n = 0;

	for (size_t i = 0; i < NCOMMANDS; i++)
		names[n++] = commands[i].name;
	names[n++] = "help";
	names[n++] = "version";
	best = asi_suggest(name, names, n);
	asi_quote(name, q, sizeof(q));
	asi_list(names, n, list, sizeof(list));
	if (best)
		fprintf(stderr,
			"autosync: unknown command '%s' (did you mean "
			"'%s'?); one of %s\n",
			q, best, list);
	else
		fprintf(stderr, "autosync: unknown command '%s'; one of %s\n",
			q, list);
	return 2;
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		/* 'autosync help CMD' is 'autosync CMD --help' */
		char *help[] = {argv[2], "--help", NULL};

		if (argc > 3) {
			fprintf(stderr, "autosync help: one command at a "
					"time\n");
			return 2;
		}
		if (!strcmp(argv[2], "help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[2], "version")) {
			printf("usage: autosync version\n");
			return 0;
		}
		if (!(c = find(argv[2])))
			return unknown(argv[2]);
		return c->run(2, help);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("autosync %s\n", autosync_version());
		return 0;
	}
	if (!(c = find(argv[1])))
		return unknown(argv[1]);
	return c->run(argc - 1, argv + 1);
}
