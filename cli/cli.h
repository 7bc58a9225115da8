/* cli.h - subcommands of the autosync command-line tool and what they share
 * (cli/options.c). Each subcommand returns the process exit status: 0
 * success, 1 failure, 2 usage error. */
#ifndef AUTOSYNC_CLI_H
#define AUTOSYNC_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "autosync/job.h"
#include "autosync/topology.h"
#include "common/text.h"

int autosync_cmd_topo(int argc, char **argv);
int autosync_cmd_plan(int argc, char **argv);
int autosync_cmd_config(int argc, char **argv);
int autosync_cmd_feedback(int argc, char **argv);
int autosync_cmd_bench(int argc, char **argv);
int autosync_cmd_launch(int argc, char **argv);
int autosync_cmd_init(int argc, char **argv);
int autosync_cmd_eval(int argc, char **argv);
int autosync_cmd_train(int argc, char **argv);
int autosync_cmd_promote(int argc, char **argv);

/* ------------------------------------------- the shared input options */
/*
 * One set of topology and cluster input options for every subcommand that
 * reads a topology (topo, plan, bench, launch), parsed by one function, with
 * one help text, the way hwloc's utilities share utils/hwloc/misc.h:
 *   -T, --topology FILE|live|none   -g, --gpus LIST|all   --cpus SET
 *   --network SPEC   -N, --nodes N   --gpus-per-node G
 * A command lists the groups it takes (CLI_IN_*) and puts the matching
 * CLI_*_OPTIONS in its getopt_long table and CLI_*_SHORT in its short
 * options.
 */
enum {
	CLI_IN_TOPOLOGY = 1 << 0, /* --topology, --gpus */
	CLI_IN_CPUS = 1 << 1,	  /* --cpus */
	CLI_IN_NETWORK = 1 << 2,  /* --network */
	CLI_IN_NODES = 1 << 3,	  /* --nodes */
	CLI_IN_GPN = 1 << 4,	  /* --gpus-per-node */
};

/* getopt values of the long-only shared options; a command numbers its
 * own long-only options from CLI_OPT_OWN and its old spellings (hidden
 * from help and suggestions) from CLI_OPT_OLD. */
enum {
	CLI_OPT_CPUS = 0x100,
	CLI_OPT_NETWORK,
	CLI_OPT_GPN,
	CLI_OPT_OWN = 0x200,
	CLI_OPT_OLD = 0x300,
};

/* Text that may come from files, names or paths, quoted for the terminal
 * (control and bidi characters escaped): a buffer that lives as long as
 * the statement that uses it. */
#define CLI_Q(s)                                          \
	asi_quote((s), (char[4 * AUTOSYNC_ERROR_LEN]){0}, \
		  4 * AUTOSYNC_ERROR_LEN)

#define CLI_TOPOLOGY_SHORT "T:g:"
#define CLI_TOPOLOGY_OPTIONS                         \
	{"topology", required_argument, NULL, 'T'},  \
	{                                            \
		"gpus", required_argument, NULL, 'g' \
	}
#define CLI_CPUS_OPTIONS                                      \
	{                                                     \
		"cpus", required_argument, NULL, CLI_OPT_CPUS \
	}
#define CLI_NETWORK_OPTIONS                                         \
	{                                                           \
		"network", required_argument, NULL, CLI_OPT_NETWORK \
	}
#define CLI_NODES_SHORT "N:"
#define CLI_NODES_OPTIONS                             \
	{                                             \
		"nodes", required_argument, NULL, 'N' \
	}
#define CLI_GPN_OPTIONS                                               \
	{                                                             \
		"gpus-per-node", required_argument, NULL, CLI_OPT_GPN \
	}

struct cli_input {
	const char *topology; /* FILE, "live" or "none"; NULL: the default */
	const char *gpus;     /* CUDA_VISIBLE_DEVICES syntax or "all" */
	const char *cpus;     /* "0-3,8" or "0xff" */
	const char *network;  /* a compact cluster description */
	unsigned long nodes, gpus_per_node; /* 0: not given */
};

/* Handle getopt_long's result 'c' (with 'arg') if it is a shared option of
 * a group in 'which': 1 when it was (stored in *in), 0 when it is not a
 * shared option, -1 on a bad value (the message is printed; exit 2). */
int cli_input_option(const char *cmd, unsigned which, int c, const char *arg,
		     struct cli_input *in);
/* The help lines of the groups in 'which'; the *_default describe the
 * command's defaults. */
void cli_input_usage(FILE *fp, unsigned which, const char *topology_default,
		     const char *gpus_default, const char *nodes_default);
/* After parsing: --gpus or --cpus need a topology. 'has_default' says
 * whether the command has one without --topology; 'or' names where else
 * it may come from (for the message; "" if nowhere). 0 or 2 (printed). */
int cli_input_check(const char *cmd, const struct cli_input *in,
		    int has_default, const char * or);
/* The topology the options name, 'dflt' when --topology is not given,
 * restricted to --gpus/--cpus (a live topology without --gpus: to the
 * job's GPUs from CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS;
 * a file without --gpus: all its GPUs). For "none": NULL with *none = 1.
 * The caller destroys the result. */
autosync_topo_t *cli_load_topology(const struct cli_input *in, const char *dflt,
				   int *none, autosync_error_t *err);
/* Give the options to a job; a topology file without --gpus means all
 * its GPUs when 'file_all_gpus' (a file describes some machine), else
 * the job's GPUs from the environment (as the plugin reads topology_xml). */
int cli_input_to_job(const struct cli_input *in, autosync_job_t *j,
		     int file_all_gpus, autosync_error_t *err);

/* ------------------------------------------------------ messages, help */
/* One help entry: "  OPT" padded to the help column, then 'text' wrapped
 * at 79 columns, continued at the help column. */
void cli_help(FILE *fp, const char *opt, const char *text);
/* getopt_long's '?' or ':' (short options start with ':'): names the
 * option, suggests the closest one of 'lo', says where help is. 2. */
int cli_bad_option(const char *cmd, int c, char **argv,
		   const struct option *lo);
/* An old spelling that still works: one line on stderr. */
void cli_deprecated(const char *cmd, const char *old, const char *now);
/* "autosync CMD: OPT: unknown value 'VAL' (did you mean 'X'?); one of A, B
 * or C". 2. */
int cli_bad_value(const char *cmd, const char *opt, const char *val,
		  const char *const *names, size_t n);
/* The framework (enum autosync_framework) or baseline named 'val', or
 * -1 after cli_bad_value(). */
int cli_framework(const char *cmd, const char *opt, const char *val);
int cli_baseline(const char *cmd, const char *opt, const char *val);
/* A catalog model name that is not in the catalog: the catalog's error,
 * a suggestion and the catalog's models. 0 when 'spec' is a path or a
 * model the catalog has, 1 after the message. */
int cli_check_model(const char *cmd, const char *spec, const char *catalog_dir);
/* The same as text to append to a message ("; did you mean 'x'? (models:
 * ...)"), or "" when 'spec' is a path or a model the catalog has. */
const char *cli_model_hint(const char *spec, const char *catalog_dir, char *buf,
			   size_t len);
/* An integer in [min, max], or -1 after a message naming 'opt'. */
int cli_uint(const char *cmd, const char *opt, const char *s, unsigned long min,
	     unsigned long max, unsigned long *out);
/* 'autosync config check --node' (nodecheck.c): the valid site config
 * 'site' read from 'path' against this node (or in->topology) with the
 * job pipeline; 'model' for the mode lines. 0, or 1 after problems. */
int cli_config_node(const char *path, const autosync_siteconf_t *site,
		    const struct cli_input *in, const char *model);
/* A time for --since and --until: 2026-12-01, 2026-12-01T10:00:00Z, epoch
 * seconds, or 30m, 12h, 7d ago. -1 on a bad value (nothing printed). */
int cli_when(const char *s, int64_t *out);
/* The site config read when --config is not given: $AUTOSYNC_SITE_CONFIG
 * (a pod's mounted ConfigMap, which the webhook names), else the one
 * installed with autosync. */
const char *cli_site_config_path(void);

/* ------------------------------------------- the launchers' variables */
/* An integer variable of the environment (a launcher's: "4", "4(x2)"),
 * or -1 when unset or not a count. */
long cli_env_num(const char *name);
/* Nodes of the job: SLURM_NNODES / SLURM_JOB_NUM_NODES, Open MPI's world
 * over local size, PET_NNODES, WORLD_SIZE over LOCAL_WORLD_SIZE,
 * AUTOSYNC_NNODES (a webhook's, from the workload object); else 0
 * (unknown: --network or --nodes may say, else 1). */
unsigned cli_job_nodes(void);
/* Ranks on each node of a pod's job: AUTOSYNC_NPROC_PER_NODE (a webhook's,
 * from the workload object), PET_NPROC_PER_NODE, LOCAL_WORLD_SIZE,
 * OMPI_COMM_WORLD_LOCAL_SIZE; else 0 (one per GPU). */
unsigned cli_job_ranks_per_node(void);
/* The nodes a launched job plans for: cli_job_nodes(), else 0 when
 * --nodes or a --network naming the nodes will say, else 1. */
unsigned cli_launch_nodes(const struct cli_input *in);
/* Where the NCCL plugins are: 'option', $AUTOSYNC_NCCL_PLUGIN_DIR, the
 * site's nccl_plugin_dir when it enables them, the installed ones. */
const char *cli_plugin_dir(const char *option, const autosync_siteconf_t *site);
/* $AUTOSYNC_SIMULATOR_MODULE, when set, is the module that loads a learned
 * simulator (a build that is not installed); else the site's. */
int cli_simulator_module(autosync_job_t *j, autosync_error_t *err);
/* --config: "none" = no site config (NULL); a path; NULL = the installed
 * one when it exists. 0, or -1 with 'err'. The caller destroys *site. */
int cli_load_site(const char *config, autosync_siteconf_t **site,
		  autosync_error_t *err);

/* ------------------------------------------- output files (outfile.c) */
/* An output a failed command leaves as it was: opened as PATH.tmp.PID and
 * renamed over PATH when closed with 'keep' (else removed). A PATH that
 * exists and is not a regular file (/dev/stdout, a FIFO) is written in
 * place. 'path' must outlive the handle. */
struct cli_outfile {
	FILE *fp;
	const char *path;
	char tmp[4096]; /* "" when written in place */
};
/* 0, or -1 with errno (fp NULL) */
int cli_outfile_open(struct cli_outfile *o, const char *path);
/* Closes fp. With 'keep': 0, or -1 with errno when the file could not be
 * written or renamed (the temporary is then removed); without: 0. */
int cli_outfile_close(struct cli_outfile *o, int keep);

#endif
