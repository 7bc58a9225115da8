/* topo.c - 'autosync topo': show the (allocated) GPU/NIC topology of this
 * node or of a topology file, or write it as NCCL topology XML. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/topology.h"
#include "cli.h"

#define WHICH (CLI_IN_TOPOLOGY | CLI_IN_CPUS)

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: autosync topo [-T FILE|live] [-g LIST|all] "
		"[--cpus SET] [--format text|yaml]\n"
		"                     [-x FILE] [--env]\n"
		"\n"
		"Show a node's GPUs, NICs, NUMA nodes, nearest NIC per GPU and "
		"the links\nbetween GPUs, as a job step on the kept GPUs sees "
		"them.\n\n");
	cli_input_usage(fp, WHICH, "live",
			"the job's GPUs from\n"
			"CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS"
			"\nand NVIDIA_VISIBLE_DEVICES for live, all for a file",
			NULL);
	cli_help(fp, "    --format text|yaml",
		 "output format (default "
		 "text)");
	cli_help(fp, "-x, --nccl-xml FILE",
		 "write NCCL topology XML for "
		 "NCCL_TOPO_FILE ('-' = stdout)");
	cli_help(fp, "    --env",
		 "print the NCCL environment of every local "
		 "rank");
	cli_help(fp, "-h, --help", "this help");
}

static void log_stderr(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= AUTOSYNC_LOG_WARNING)
		fprintf(stderr, "autosync topo: %s\n", CLI_Q(msg));
}

enum { OPT_FORMAT = CLI_OPT_OWN, OPT_ENV, OLD_INPUT = CLI_OPT_OLD };

int autosync_cmd_topo(int argc, char **argv)
{
	static const struct option opts[] = {
	    CLI_TOPOLOGY_OPTIONS,
	    CLI_CPUS_OPTIONS,
	    {"format", required_argument, NULL, OPT_FORMAT},
	    {"nccl-xml", required_argument, NULL, 'x'},
	    {"env", no_argument, NULL, OPT_ENV},
	    {"help", no_argument, NULL, 'h'},
	    {"input", required_argument, NULL, OLD_INPUT},
	    {NULL, 0, NULL, 0},
	};
	static const char *const formats[] = {"text", "yaml"};
	const char *format = "text", *xml = NULL;
	struct cli_input in = {0};
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t = NULL;
	int env = 0, c, handled, none, rv = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv,
				":" CLI_TOPOLOGY_SHORT "x:h"
				"i:c:f:e",
				opts, NULL)) != -1) {
		/* the old short spellings: -i, -c, -f and -e mean other
		 * things in the other commands */
		switch (c) {
		case 'i':
		case OLD_INPUT:
			cli_deprecated("topo", c == 'i' ? "-i" : "--input",
				       "--topology");
			c = 'T';
			break;
		case 'c':
			cli_deprecated("topo", "-c", "--cpus");
			c = CLI_OPT_CPUS;
			break;
		case 'f':
			cli_deprecated("topo", "-f", "--format");
			c = OPT_FORMAT;
			break;
		case 'e':
			cli_deprecated("topo", "-e", "--env");
			c = OPT_ENV;
			break;
		}
		if ((handled =
			 cli_input_option("topo", WHICH, c, optarg, &in)) < 0)
			return 2;
		if (handled)
			continue;
		switch (c) {
		case OPT_FORMAT:
			format = optarg;
			break;
		case 'x':
			xml = optarg;
			break;
		case OPT_ENV:
			env = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option("topo", c, argv, opts);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "autosync topo: unexpected argument '%s'\n",
			argv[optind]);
		fprintf(stderr, "Try 'autosync help topo'.\n");
		return 2;
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "yaml") != 0)
		return cli_bad_value("topo", "--format", format, formats, 2);
	if (in.topology && !strcmp(in.topology, "none")) {
		fprintf(stderr, "autosync topo: --topology none: no topology "
				"to show\n");
		return 2;
	}
	if (!(t = cli_load_topology(&in, "live", &none, &err))) {
		fprintf(stderr, "autosync topo: %s\n", CLI_Q(err.text));
		goto out;
	}
	autosync_topo_set_log(t, log_stderr, NULL);
	if (xml) {
		struct cli_outfile of = {.fp = stdout};
		FILE *fp;

		if (strcmp(xml, "-") && cli_outfile_open(&of, xml) < 0) {
			fprintf(stderr, "autosync topo: %s: %s\n", CLI_Q(xml),
				strerror(errno));
			goto out;
		}
		fp = of.fp;
		if (autosync_topo_write_nccl_xml(t, fp, &err) < 0) {
			fprintf(stderr, "autosync topo: %s: %s\n", CLI_Q(xml),
				CLI_Q(err.text));
			if (fp != stdout)
				cli_outfile_close(&of, 0);
			goto out;
		}
		/* fflush first: a full disk is ENOSPC, not EIO at close */
		if (fp != stdout &&
		    (fflush(fp) != 0 ? (cli_outfile_close(&of, 0), -1)
				     : cli_outfile_close(&of, 1)) != 0) {
			fprintf(stderr, "autosync topo: %s: %s\n", CLI_Q(xml),
				strerror(errno));
			goto out;
		}
		if (fp == stdout) {
			rv = 0;
			goto out;
		}
	}
	if ((!strcmp(format, "yaml")
		 ? (env ? autosync_topo_write_yaml_env(t, stdout, &err)
			: autosync_topo_write_yaml(t, stdout, &err))
		 : autosync_topo_write_text(t, stdout, &err)) < 0) {
		fprintf(stderr, "autosync topo: %s\n", CLI_Q(err.text));
		goto out;
	}
	if (env && strcmp(format, "yaml") != 0) {
		unsigned n =
		    autosync_topo_ngpus(t) ? autosync_topo_ngpus(t) : 1;

		printf("\nenvironment per local rank:\n");
		for (unsigned r = 0; r < n; r++) {
			autosync_env_t e[8];
			size_t ne = 0;

			if (autosync_topo_rank_env(t, r, e, 8, &ne, &err) < 0) {
				fprintf(stderr, "autosync topo: %s\n",
					CLI_Q(err.text));
				goto out;
			}
			printf("  rank %u:", r);
			for (size_t k = 0; k < ne; k++)
				printf(" %s=%s", e[k].name, CLI_Q(e[k].value));
			printf("\n");
		}
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "autosync topo: writing output: %s\n",
			strerror(errno));
		goto out;
	}
	rv = 0;
out:
	autosync_topo_destroy(t);
	return rv;
}
