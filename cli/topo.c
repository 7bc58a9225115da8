/* topo.c - 'autosync topo': show the (allocated) GPU/NIC topology of this
 * node or of a topology file, or write it as NCCL topology XML. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "autosync/topology.h"
#include "cli.h"

#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define AUTOSYNC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang */
#define AUTOSYNC_ASAN 1
#endif
#endif
#if defined(AUTOSYNC_ASAN)
/* Sanitized builds only: hwloc unloads its PCI plugin when the last
 * topology is destroyed, and libpciaccess's own allocations then look
 * leaked to LeakSanitizer. Holding one topology keeps them reachable. */
static hwloc_topology_t keep_hwloc_plugins;
#define KEEP_HWLOC_PLUGINS()                                      \
	do {                                                      \
		if (!keep_hwloc_plugins &&                        \
		    hwloc_topology_init(&keep_hwloc_plugins) < 0) \
			keep_hwloc_plugins = NULL;                \
	} while (0)
#else
#define KEEP_HWLOC_PLUGINS() \
	do {                 \
	} while (0)
#endif

static void usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: autosync topo [--input FILE] [--gpus LIST] [--cpus SET]\n"
	    "                     [--format text|yaml] [--nccl-xml FILE] "
	    "[--env]\n"
	    "\n"
	    "  -i, --input FILE     read an hwloc XML (v1/v2) or NCCL topology "
	    "XML file\n"
	    "                       instead of this machine (format detected "
	    "by content)\n"
	    "  -g, --gpus LIST      GPUs to keep, CUDA_VISIBLE_DEVICES syntax "
	    "(indices in PCI\n"
	    "                       bus order, GPU UUIDs or bus ids); without "
	    "it, this\n"
	    "                       machine is restricted by "
	    "CUDA_VISIBLE_DEVICES and\n"
	    "                       SLURM_STEP_GPUS / SLURM_JOB_GPUS\n"
	    "  -c, --cpus SET       CPUs to keep (list 0-3,8 or mask 0xff)\n"
	    "  -f, --format FMT     text (default) or yaml\n"
	    "  -x, --nccl-xml FILE  write NCCL topology XML for NCCL_TOPO_FILE "
	    "('-' = stdout)\n"
	    "  -e, --env            print the NCCL environment of every local "
	    "rank\n"
	    "  -h, --help           this help\n");
}

static void log_stderr(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= AUTOSYNC_LOG_WARNING)
		fprintf(stderr, "autosync: topo: %s\n", msg);
}

int autosync_cmd_topo(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"input", required_argument, NULL, 'i'},
	    {"gpus", required_argument, NULL, 'g'},
	    {"cpus", required_argument, NULL, 'c'},
	    {"format", required_argument, NULL, 'f'},
	    {"nccl-xml", required_argument, NULL, 'x'},
	    {"env", no_argument, NULL, 'e'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *input = NULL, *gpus = NULL, *cpus = NULL, *format = "text",
		   *xml = NULL;
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t = NULL;
	int env = 0, c, rv = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:g:c:f:x:eh", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 'g':
			gpus = optarg;
			break;
		case 'c':
			cpus = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'x':
			xml = optarg;
			break;
		case 'e':
			env = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "autosync: topo: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (strcmp(format, "text") != 0 && strcmp(format, "yaml") != 0) {
		fprintf(
		    stderr,
		    "autosync: topo: --format must be text or yaml, not '%s'\n",
		    format);
		return 2;
	}
	KEEP_HWLOC_PLUGINS();
	t = input ? autosync_topo_load_file(input, &err)
		  : autosync_topo_load_live(&err);
	if (!t) {
		fprintf(stderr, "autosync: topo: %s\n", err.text);
		goto out;
	}
	autosync_topo_set_log(t, log_stderr, NULL);
	if (gpus || cpus || !input) {
		int r;

		if (gpus || input)
			r = autosync_topo_restrict(t, gpus, cpus, &err);
		else
			r = autosync_topo_restrict_env(
			    t, getenv("CUDA_VISIBLE_DEVICES"),
			    getenv("SLURM_STEP_GPUS"), getenv("SLURM_JOB_GPUS"),
			    cpus, &err);
		if (r < 0) {
			fprintf(stderr, "autosync: topo: %s\n", err.text);
			goto out;
		}
	}
	if (xml) {
		FILE *fp = strcmp(xml, "-") ? fopen(xml, "w") : stdout;

		if (!fp) {
			fprintf(stderr, "autosync: topo: %s: %s\n", xml,
				strerror(errno));
			goto out;
		}
		if (autosync_topo_write_nccl_xml(t, fp, &err) < 0) {
			fprintf(stderr, "autosync: topo: %s: %s\n", xml,
				err.text);
			if (fp != stdout)
				fclose(fp);
			goto out;
		}
		if (fp != stdout && fclose(fp) != 0) {
			fprintf(stderr, "autosync: topo: %s: %s\n", xml,
				strerror(errno));
			goto out;
		}
		if (fp == stdout) {
			rv = 0;
			goto out;
		}
	}
	if ((!strcmp(format, "yaml")
		 ? autosync_topo_write_yaml(t, stdout, &err)
		 : autosync_topo_write_text(t, stdout, &err)) < 0) {
		fprintf(stderr, "autosync: topo: %s\n", err.text);
		goto out;
	}
	if (env) {
		unsigned n =
		    autosync_topo_ngpus(t) ? autosync_topo_ngpus(t) : 1;

		printf("%s", !strcmp(format, "yaml")
				 ? "env:\n"
				 : "\nenvironment per local rank:\n");
		for (unsigned r = 0; r < n; r++) {
			autosync_env_t e[8];
			size_t ne = 0;

			if (autosync_topo_rank_env(t, r, e, 8, &ne, &err) < 0) {
				fprintf(stderr, "autosync: topo: %s\n",
					err.text);
				goto out;
			}
			printf(!strcmp(format, "yaml")
				   ? "  - rank: %u\n    vars: {"
				   : "  rank %u:",
			       r);
			for (size_t k = 0; k < ne; k++)
				printf(!strcmp(format, "yaml") ? "%s%s: \"%s\""
							       : "%s%s=%s",
				       !strcmp(format, "yaml") ? (k ? ", " : "")
							       : " ",
				       e[k].name, e[k].value);
			printf(!strcmp(format, "yaml") ? "}\n" : "\n");
		}
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "autosync: topo: writing output: %s\n",
			strerror(errno));
		goto out;
	}
	rv = 0;
out:
	autosync_topo_destroy(t);
	return rv;
}
