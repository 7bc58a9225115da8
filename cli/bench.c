/* bench.c - 'autosync bench': trial runs of plans over MPI. The options are
 * read here, in the vocabulary of the other commands (the shared topology
 * and network options included); the runs are made by a program of their
 * own, autosync-bench (launcher/runtime/, built when configure finds Open
 * MPI), which this command execs with them in canonical form: the network
 * already combined with the topology. So autosync itself never loads MPI,
 * NCCL or CUDA and runs on any login node or controller. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/planner.h"
#include "cli.h"

#define HELPER "autosync-bench"

#define WHICH (CLI_IN_TOPOLOGY | CLI_IN_NETWORK)
/* a small cluster of ordinary hosts: what the lab emulates */
#define BENCH_NETWORK "intra=host_bridge:2.5GB/s:20us,nics=1x1Gbit/s,lat=100us"

/* The trial-run program: in $AUTOSYNC_LIBEXECDIR (a build tree's
 * launcher/runtime, for the tests) or where it was installed. */
static const char *helper(void)
{
	static char path[4096];
	const char *dir = getenv("AUTOSYNC_LIBEXECDIR");

	if (!dir || !*dir)
		dir = AUTOSYNC_PKGLIBEXECDIR;
	if (snprintf(path, sizeof(path), "%s/" HELPER, dir) >=
	    (int)sizeof(path))
		path[0] = '\0';
	return path;
}

static void usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: mpirun ... autosync bench --model NAME|FILE "
	    "[options]\n"
	    "\n"
	    "Trial run, one rank per (emulated) GPU: replay training steps "
	    "of the model\nwith each strategy's synchronization over MPI and "
	    "report the step times\n(docs/lab.md).\n\n");
	cli_help(fp, "-m, --model NAME|FILE",
		 "catalog model name or model "
		 "file");
	cli_input_usage(fp, WHICH, "none: the network description alone",
			"all for a file, the job's for live", NULL);
	cli_help(fp, "",
		 "(bench: the default network is " BENCH_NETWORK
		 "; nodes and GPUs per node always come from MPI)");
	cli_help(fp, "-f, --framework F",
		 "capability set: generic "
		 "(default), pytorch-ddp, horovod or autodist");
	cli_help(fp, "    --calibration FILE",
		 "cost-model constants (YAML, "
		 "docs/planner.md)");
	cli_help(fp, "    --measure-cpu",
		 "measure the runtime's casts and 16-bit additions on these "
		 "ranks first and plan with them (cast_bw, gamma_half: the "
		 "lab, where they run on shared host cores)");
	cli_help(fp, "    --simulator FILE",
		 "a learned simulator (autosync train): the strategy "
		 "autosync-learned is autosync's plan ranked with it");
	cli_help(fp, "    --allow-compression",
		 "let autosync's plan choose "
		 "fp16/bf16 gradients");
	cli_help(fp, "    --scale S",
		 "divide every gradient by S (default "
		 "1)");
	cli_help(fp, "    --knobs scaled|absolute",
		 "with --scale: divide the "
		 "baselines' and the search's bucket caps and fusion "
		 "threshold by S too, so each keeps its full-size bucket "
		 "count (default scaled)");
	cli_help(fp, "    --strategies LIST",
		 "comma list: autosync, autosync-learned (with "
		 "--simulator), a baseline name, plan:PATH (default "
		 "autosync)");
	cli_help(fp, "-p, --plan FILE", "= --strategies plan:FILE");
	cli_help(fp, "-b, --baseline NAME", "= --strategies NAME");
	cli_help(fp, "    --random N",
		 "also N random valid strategies "
		 "(once)");
	cli_help(fp, "    --seed S", "first random seed (default 1)");
	cli_help(fp, "    --random-space narrow|wide",
		 "where random strategies are drawn: the dataset's "
		 "1..64 buckets (default) or the planner's range, up to "
		 "one bucket per tensor and all-PS plans too");
	cli_help(fp, "    --random-steps N",
		 "steps per random strategy "
		 "(default 3)");
	cli_help(fp, "    --steps N", "timed steps per round (default 5)");
	cli_help(fp, "    --warmup N",
		 "untimed steps per round (default "
		 "1)");
	cli_help(fp, "    --rounds N", "A B A B ... rounds (default 1)");
	cli_help(fp, "    --compute sleep|spin",
		 "emulate compute by waiting "
		 "(default) or busy work");
	cli_help(fp, "    --hier leader|rails",
		 "hierarchical all-reduce: via "
		 "the node leader or one ring per rail (default)");
	cli_help(fp, "    --backend mpi|nccl",
		 "transport (default mpi; nccl "
		 "needs a CUDA device per rank and NCCL)");
	cli_help(fp, "    --feedback FILE",
		 "append one feedback record per "
		 "strategy");
	cli_help(fp, "-o, --output FILE",
		 "JSON lines, one per strategy and "
		 "round");
	cli_help(fp, "    --write-plans DIR",
		 "write every strategy's plan "
		 "there, and replay.json (layer times, tensors)");
	cli_help(fp, "-h, --help", "this help");
	fprintf(fp, "\nThe runs are made by %s%s.\n", helper(),
		access(helper(), X_OK) ? ", which is not installed (it is "
					 "built when configure finds Open MPI)"
				       : "");
}

enum {
	OPT_CALIB = CLI_OPT_OWN,
	OPT_SIMULATOR,
	OPT_COMPRESS,
	OPT_SCALE,
	OPT_KNOBS,
	OPT_STRATEGIES,
	OPT_RANDOM,
	OPT_SEED,
	OPT_RANDOM_SPACE,
	OPT_RANDOM_STEPS,
	OPT_STEPS,
	OPT_WARMUP,
	OPT_ROUNDS,
	OPT_COMPUTE,
	OPT_HIER,
	OPT_MEASURE_CPU,
	OPT_BACKEND,
	OPT_FEEDBACK,
	OPT_WRITE_PLANS,
	OLD_CLUSTER = CLI_OPT_OLD,
	OLD_COMPRESS,
	OLD_OUT,
};

static const struct option opts[] = {
    {"model", required_argument, NULL, 'm'},
    CLI_TOPOLOGY_OPTIONS,
    CLI_NETWORK_OPTIONS,
    {"framework", required_argument, NULL, 'f'},
    {"calibration", required_argument, NULL, OPT_CALIB},
    {"simulator", required_argument, NULL, OPT_SIMULATOR},
    {"measure-cpu", no_argument, NULL, OPT_MEASURE_CPU},
    {"allow-compression", no_argument, NULL, OPT_COMPRESS},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"knobs", required_argument, NULL, OPT_KNOBS},
    {"strategies", required_argument, NULL, OPT_STRATEGIES},
    {"plan", required_argument, NULL, 'p'},
    {"baseline", required_argument, NULL, 'b'},
    {"random", required_argument, NULL, OPT_RANDOM},
    {"seed", required_argument, NULL, OPT_SEED},
    {"random-space", required_argument, NULL, OPT_RANDOM_SPACE},
    {"random-steps", required_argument, NULL, OPT_RANDOM_STEPS},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    {"hier", required_argument, NULL, OPT_HIER},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"feedback", required_argument, NULL, OPT_FEEDBACK},
    {"output", required_argument, NULL, 'o'},
    {"write-plans", required_argument, NULL, OPT_WRITE_PLANS},
    {"help", no_argument, NULL, 'h'},
    {"cluster", required_argument, NULL, OLD_CLUSTER},
    {"compress", no_argument, NULL, OLD_COMPRESS},
    {"out", required_argument, NULL, OLD_OUT},
    {NULL, 0, NULL, 0},
};

/* The runtime's arguments: canonical long options. */
struct args {
	char *v[256];
	int n, full;
};

static void add(struct args *a, const char *name, const char *val)
{
	if (a->n + 3 >= (int)(sizeof(a->v) / sizeof(a->v[0]))) {
		a->full = 1;
		return;
	}
	a->v[a->n++] = (char *)name;
	if (val)
		a->v[a->n++] = (char *)val;
	a->v[a->n] = NULL;
}

static int one_of(const char *opt, const char *val, const char *const *names,
		  size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(val, names[i]))
			return 0;
	return cli_bad_value("bench", opt, val, names, n);
}

/* Each item of a --strategies list: autosync, autosync-learned,
 * plan:PATH or a baseline. */
static int strategies(const char *opt, const char *list)
{
	const char *names[AUTOSYNC_BASELINE_N + 2] = {"autosync",
						      "autosync-learned"};
	char item[256];

	for (int i = 0; i < AUTOSYNC_BASELINE_N; i++)
		names[i + 2] = autosync_baseline_name(i);
	for (const char *p = list; *p;) {
		size_t l = strcspn(p, ",");

		snprintf(item, sizeof(item), "%.*s", (int)l, p);
		if (strncmp(item, "plan:", 5) && !(item[0] == '\0' && !p[l]) &&
		    one_of(opt, item, names, AUTOSYNC_BASELINE_N + 2))
			return 2;
		p += l + (p[l] == ',');
	}
	return 0;
}

static int number(const char *opt, const char *s, unsigned long min,
		  unsigned long max)
{
	unsigned long v;

	return cli_uint("bench", opt, s, min, max, &v) < 0 ? 2 : 0;
}

/* The network the runtime plans for: --network over the bench default,
 * the node part from the topology when there is one. */
static int network(const struct cli_input *in, char *buf, size_t len)
{
	autosync_error_t err = {""};
	autosync_cluster_t cl;
	autosync_topo_t *t;
	int none;

	if (autosync_cluster_parse(&cl, BENCH_NETWORK, &err) < 0 ||
	    (in->network &&
	     autosync_cluster_update(&cl, in->network, &err) < 0)) {
		fprintf(stderr, "autosync bench: --network: %s\n",
			CLI_Q(err.text));
		return 2;
	}
	t = cli_load_topology(in, "none", &none, &err);
	if (!t && !none) {
		fprintf(stderr, "autosync bench: %s\n", CLI_Q(err.text));
		return 1;
	}
	if (t && autosync_cluster_from_topo(&cl, t, 1, &err) < 0) {
		fprintf(stderr, "autosync bench: %s\n", CLI_Q(err.text));
		autosync_topo_destroy(t);
		return 1;
	}
	autosync_topo_destroy(t);
	autosync_cluster_format(&cl, buf, len);
	return 0;
}

/* Replace this process with the trial runs: under mpirun each rank
 * execs, keeping its pid and the launcher's environment. */
static int run_helper(struct args *a)
{
	const char *path = helper();

	a->v[0] = (char *)path;
	execv(path, a->v);
	fprintf(stderr, "autosync bench: cannot run %s: %s%s\n", CLI_Q(path),
		strerror(errno),
		errno == ENOENT ? " (it is built when configure finds Open MPI)"
				: "");
	return 1;
}

int autosync_cmd_bench(int argc, char **argv)
{
	static const char *const computes[] = {"sleep", "spin"};
	static const char *const hiers[] = {"leader", "rails"};
	static const char *const knobs[] = {"scaled", "absolute"};
	static const char *const spaces[] = {"narrow", "wide"};
	static const char *const backends[] = {"mpi", "nccl"};
	struct cli_input in = {0};
	struct args a = {.v = {"bench"}, .n = 1};
	const char *model = NULL;
	char net[512], *end;
	int c, r, rc;

	optind = 1;
	opterr = 0;
	while (
	    (c = getopt_long(argc, argv, ":m:" CLI_TOPOLOGY_SHORT "f:p:b:o:h",
			     opts, NULL)) != -1) {
		switch (c) {
		case OLD_CLUSTER:
			cli_deprecated("bench", "--cluster", "--network");
			c = CLI_OPT_NETWORK;
			break;
		case OLD_COMPRESS:
			cli_deprecated("bench", "--compress",
				       "--allow-compression");
			c = OPT_COMPRESS;
			break;
		case OLD_OUT:
			cli_deprecated("bench", "--out", "--output");
			c = 'o';
			break;
		}
		if ((r = cli_input_option("bench", WHICH, c, optarg, &in)) < 0)
			return 2;
		if (r)
			continue;
		rc = 0;
		switch (c) {
		case 'm':
			model = optarg;
			add(&a, "--model", optarg);
			break;
		case 'f':
			if (cli_framework("bench", "--framework", optarg) < 0)
				return 2;
			add(&a, "--framework", optarg);
			break;
		case OPT_CALIB:
			add(&a, "--calibration", optarg);
			break;
		case OPT_SIMULATOR:
			add(&a, "--simulator", optarg);
			break;
		case OPT_MEASURE_CPU:
			add(&a, "--measure-cpu", NULL);
			break;
		case OPT_COMPRESS:
			add(&a, "--allow-compression", NULL);
			break;
		case OPT_SCALE:
			if (!(strtod(optarg, &end) >= 1) || *end) {
				fprintf(stderr,
					"autosync bench: --scale: '%s' "
					"is not a number >= 1\n",
					optarg);
				return 2;
			}
			add(&a, "--scale", optarg);
			break;
		case OPT_STRATEGIES:
			rc = strategies("--strategies", optarg);
			add(&a, "--strategies", optarg);
			break;
		case 'p':
			add(&a, "--plan", optarg);
			break;
		case 'b':
			if (cli_baseline("bench", "--baseline", optarg) < 0)
				return 2;
			add(&a, "--baseline", optarg);
			break;
		case OPT_RANDOM:
			rc = number("--random", optarg, 0, 100000);
			add(&a, "--random", optarg);
			break;
		case OPT_SEED:
			rc = number("--seed", optarg, 0, 0xffffffffUL);
			add(&a, "--seed", optarg);
			break;
		case OPT_RANDOM_STEPS:
			rc = number("--random-steps", optarg, 1, 1000000);
			add(&a, "--random-steps", optarg);
			break;
		case OPT_STEPS:
			rc = number("--steps", optarg, 0, 1000000);
			add(&a, "--steps", optarg);
			break;
		case OPT_WARMUP:
			rc = number("--warmup", optarg, 0, 1000000);
			add(&a, "--warmup", optarg);
			break;
		case OPT_ROUNDS:
			rc = number("--rounds", optarg, 1, 1000000);
			add(&a, "--rounds", optarg);
			break;
		case OPT_COMPUTE:
			rc = one_of("--compute", optarg, computes, 2);
			add(&a, "--compute", optarg);
			break;
		case OPT_KNOBS:
			rc = one_of("--knobs", optarg, knobs, 2);
			add(&a, "--knobs", optarg);
			break;
		case OPT_HIER:
			rc = one_of("--hier", optarg, hiers, 2);
			add(&a, "--hier", optarg);
			break;
		case OPT_RANDOM_SPACE:
			rc = one_of("--random-space", optarg, spaces, 2);
			add(&a, "--random-space", optarg);
			break;
		case OPT_BACKEND:
			rc = one_of("--backend", optarg, backends, 2);
			add(&a, "--backend", optarg);
			break;
		case OPT_FEEDBACK:
			add(&a, "--feedback", optarg);
			break;
		case 'o':
			add(&a, "--output", optarg);
			break;
		case OPT_WRITE_PLANS:
			add(&a, "--write-plans", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option("bench", c, argv, opts);
		}
		if (rc)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr,
			"autosync bench: unexpected argument '%s'\n"
			"Try 'autosync help bench'.\n",
			argv[optind]);
		return 2;
	}
	if (!model) {
		fprintf(stderr, "autosync bench: --model is required\n"
				"Try 'autosync help bench'.\n");
		return 2;
	}
	if ((rc = cli_input_check("bench", &in, 0, "")) ||
	    (rc = cli_check_model("bench", model, NULL)) ||
	    (rc = network(&in, net, sizeof(net))))
		return rc;
	add(&a, "--network", net);
	if (a.full) {
		fprintf(stderr, "autosync bench: too many options\n");
		return 2;
	}
	return run_helper(&a);
}
