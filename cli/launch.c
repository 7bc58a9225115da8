/* launch.c - 'autosync launch [--plan FILE | --model NAME] -- CMD ARGS...':
 * apply a plan without the SPANK plugin (mpirun, containers, Kubernetes
 * pods), then exec the command. The environment comes from the same
 * function as the plugin's (plugin/step.c, via launcher/nccl/launch.c). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../launcher/nccl/launch.h"

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: autosync launch [options] -- COMMAND [ARGS...]\n"
		"\n"
		"Plan (or load a plan), set the environment the SPANK plugin "
		"would set for\nthis rank, point NCCL at autosync's tuner and "
		"profiler plugins, and exec\nCOMMAND. Without a plan or model "
		"the command runs unchanged.\n"
		"\n"
		"  -p, --plan FILE        use this plan (autosync plan -o FILE)\n"
		"  -m, --model NAME|FILE  plan for this model at start-up\n"
		"  -c, --config FILE      site config (default "
		"%s/autosync/autosync.yaml if present)\n"
		"  -d, --dir DIR          private directory for the plan, NCCL "
		"topology and report\n"
		"                         (default $TMPDIR/autosync-launch-UID-"
		"JOB-RANK)\n"
		"  -N, --nodes N          nodes in the job (default: from "
		"SLURM_/OMPI_/PET_/WORLD_ variables)\n"
		"      --local-rank R     this process's local rank (default: "
		"SLURM_LOCALID,\n"
		"                         OMPI_COMM_WORLD_LOCAL_RANK, LOCAL_RANK, "
		"MPI_LOCALRANKID, PMIX_RANK)\n"
		"      --plugin-dir DIR   where the NCCL plugins are (default "
		"$AUTOSYNC_NCCL_PLUGIN_DIR\n"
		"                         or %s)\n"
		"      --no-tuner         do not set NCCL_TUNER_PLUGIN\n"
		"      --no-profiler      do not set NCCL_PROFILER_PLUGIN\n"
		"  -s, --strict           fail instead of running the command "
		"without autosync\n"
		"  -e, --explain          print the plan summary on stderr\n"
		"  -q, --quiet            no messages\n"
		"  -h, --help\n",
		AUTOSYNC_SYSCONFDIR, as_launch_plugin_dir(NULL));
}

static void run(char **cmd)
{
	execvp(cmd[0], cmd);
	fprintf(stderr, "autosync: launch: %s: %s\n", cmd[0], strerror(errno));
}

int autosync_cmd_launch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "plan", required_argument, NULL, 'p' },
		{ "model", required_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'c' },
		{ "dir", required_argument, NULL, 'd' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "local-rank", required_argument, NULL, 'R' },
		{ "plugin-dir", required_argument, NULL, 'P' },
		{ "no-tuner", no_argument, NULL, 'T' },
		{ "no-profiler", no_argument, NULL, 'F' },
		{ "strict", no_argument, NULL, 's' },
		{ "explain", no_argument, NULL, 'e' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct as_launch_opts o = { .local_rank = -1, .tuner = 1,
				    .profiler = 1, .log = stderr };
	char err[1024];
	int c, strict = 0;
	char *end;
	long v;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:m:c:d:N:seqh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'p': o.plan_file = optarg; break;
		case 'm': o.model = optarg; break;
		case 'c': o.config = optarg; break;
		case 'd': o.dir = optarg; break;
		case 'N':
		case 'R':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < (c == 'N') ||
			    v > (1L << 20)) {
				fprintf(stderr, "autosync: launch: bad %s '%s'\n",
					c == 'N' ? "--nodes" : "--local-rank",
					optarg);
				return 2;
			}
			if (c == 'N')
				o.nnodes = (unsigned) v;
			else
				o.local_rank = (int) v;
			break;
		case 'P': o.plugin_dir = optarg; break;
		case 'T': o.tuner = 0; break;
		case 'F': o.profiler = 0; break;
		case 's': strict = 1; break;
		case 'e': o.explain = stderr; break;
		case 'q': o.log = NULL; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "autosync: launch: unknown option '%s'\n",
				argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "autosync: launch: no command (autosync launch "
			"[options] -- COMMAND ARGS...)\n");
		return 2;
	}
	if (o.plan_file && o.model) {
		fprintf(stderr, "autosync: launch: --plan and --model exclude "
			"each other\n");
		return 2;
	}
	if (!o.plan_file && !o.model) {
		/* nothing to plan: the command runs as given */
		if (o.log)
			fprintf(o.log, "autosync: launch: no --plan or --model; "
				"running the command unchanged\n");
		run(argv + optind);
		return 127;
	}
	if (as_launch_prepare(&o, err, sizeof(err)) < 0) {
		if (strict) {
			fprintf(stderr, "autosync: %s\n", err);
			return 1;
		}
		if (o.log)
			fprintf(o.log, "autosync: %s; running without autosync\n",
				err);
	}
	run(argv + optind);
	return 127;
}
