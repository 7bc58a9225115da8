/*
 * bench.c - 'autosync bench': trial runs of plans over MPI.
 *
 * Run under mpirun or srun, one rank per (emulated) GPU. For every
 * strategy it replays training steps: the forward and backward pass take
 * the model's per-layer compute times (the same numbers the simulator
 * uses: FLOPs / gpu_flops), emulated by a timed wait by default (a GPU
 * does not occupy the host CPU; '--compute spin' burns the CPU instead),
 * and every bucket is synchronized by the sync runtime as soon as its
 * last tensor is ready, in the plan's order. Gradients are filled with
 * integers before each step and the sums are checked after the first
 * step of every strategy. Step time = slowest rank, barrier to barrier.
 *
 * Scaling: '--scale S' divides every gradient by S (trial.h) and keeps
 * the compute; the plans are made for the scaled model on the cluster
 * the job really runs on ('--network', nodes and ranks per node taken
 * from MPI), so predictions and measurements describe the same thing.
 *
 * The options come from cli/bench.c, which reads the user's and passes
 * them here in canonical form (the network combined with the topology).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <mpi.h>

#include "autosync/feedback.h"
#include "autosync/planner.h"
#include "autosync/topology.h"
#include "syncrt.h"
#include "trial.h"

int autosync_rt_bench_main(int argc, char **argv);

struct strat {
	char name[80];
	autosync_plan_t *plan;
	int random;
	double *t; /* measured step times */
	size_t nt, cap;
};

struct opts {
	const char *model, *cluster, *calib, *feedback, *out, *plans_dir;
	const char *simulator; /* --simulator: the strategy autosync-learned */
	double scale;
	int fw, compress, steps, warmup, rounds, spin, nrandom, rsteps, hier;
	int absolute_knobs;  /* --knobs absolute */
	int measure_cpu;     /* --measure-cpu */
	int space;	     /* --random-space: AUTOSYNC_RANDOM_* */
	const char *backend; /* "mpi" (default) or "nccl" */
	unsigned long seed;
	char *list;
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: mpirun ... autosync bench --model NAME|FILE "
		"--network SPEC [options]\n('autosync help bench' describes "
		"them)\n");
}

/* wait until absolute monotonic time 'until' */
static void wait_until(double until, int spin)
{
	double t = autosync_rt_now();
	if (t >= until)
		return;
	if (spin) {
		volatile double x = 1;
		while (autosync_rt_now() < until)
			for (int i = 0; i < 1000; i++)
				x = x * 1.0000001 + 1e-9;
		return;
	}
	{
		struct timespec ts;
		double d = until - t;
		ts.tv_sec = (time_t)d;
		ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

static int add_time(struct strat *s, double t)
{
	if (s->nt == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		double *n = realloc(s->t, nc * sizeof(double));
		if (!n)
			return -1;
		s->t = n;
		s->cap = nc;
	}
	s->t[s->nt++] = t;
	return 0;
}

/* value of element i of rank r's gradient: small integers, so that fp32
 * sums are exact and 16-bit sums are exact for up to 8 ranks */
static float grad_val(int r, size_t i)
{
	return (float)((r + 1) * (int)((i % 7) + 1));
}

/* fill, one step, check; returns 0 ok, 1 wrong sums, -1 error */
/* The rounding a sum check allows, relative to the value and per rank
 * added: the bench's values are small integers (rank r sends (r + 1) times
 * 1..7), exact in fp32 and in a 16-bit format while the largest sum, 'max',
 * fits its mantissa (fp16 2048, bf16 256: 8 ranks); beyond, one unit of
 * the widest compression's roundoff per addition. */
static float sum_unit(const autosync_plan_t *plan, float max)
{
	float u = 0;

	for (size_t b = 0; b < autosync_plan_nbuckets(plan); b++) {
		int c = autosync_plan_bucket(plan, b)->compress;
		if (c == AUTOSYNC_COMPRESS_FP16 && max > 2048 && u < 0x1p-11f)
			u = 0x1p-11f;
		if (c == AUTOSYNC_COMPRESS_BF16 && max > 256)
			u = 0x1p-8f;
	}
	return u;
}

static int run_step(autosync_rt_plan_t *rp, const autosync_plan_t *plan,
		    const float *pristine, int rank, int size, int spin,
		    int check, double *step, autosync_error_t *errp)
{
	autosync_plan_summary_t s;
	size_t n, nb = autosync_rt_plan_nbuckets(rp);
	float *a = autosync_rt_plan_arena(rp, &n);
	double t0, t1, comp_end;
	int bad = 0, allbad = 0;

	(void)rank;
	autosync_plan_summary(plan, &s);
	memcpy(a, pristine, n * sizeof(float));
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = autosync_rt_now();
	for (size_t b = 0; b < nb; b++) {
		const autosync_bucket_t *B = autosync_plan_bucket(plan, b);
		wait_until(t0 + B->ready, spin);
		if (autosync_rt_sync_bucket(rp, b, errp) < 0)
			return -1;
	}
	comp_end = t0 + s.fwd_time + s.bwd_time;
	wait_until(comp_end, spin);
	wait_until(
	    (autosync_rt_now() > comp_end ? autosync_rt_now() : comp_end) +
		s.opt_time,
	    spin);
	t1 = autosync_rt_now() - t0;
	MPI_Allreduce(&t1, step, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (check) {
		float want_mul = (float)size * (float)(size + 1) / 2, *g;
		float u = sum_unit(plan, 7 * want_mul);
		size_t gn;
		/* each tensor's part that this rank gets back summed */
		for (size_t t = 0;
		     !bad && (g = autosync_rt_plan_grad(rp, t, &gn)); t++)
			for (size_t j = 0, i = (size_t)(g - a);
			     j < autosync_rt_plan_grad_synced(rp, t);
			     j++, i++) {
				float want = want_mul * (float)((i % 7) + 1);
				if (fabsf(a[i] - want) >
				    u * (float)(size + 1) * want) {
					bad = 1;
					break;
				}
			}
		MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX,
			      MPI_COMM_WORLD);
		return allbad ? 1 : 0;
	}
	return 0;
}

static int write_plan_file(const char *dir, const char *name,
			   const autosync_plan_t *plan, autosync_error_t *errp)
{
	char path[4096], safe[128];
	FILE *fp;
	int rv;
	size_t i;

	for (i = 0; name[i] && i < sizeof(safe) - 1; i++)
		safe[i] = (name[i] == '/' || name[i] == ':') ? '_' : name[i];
	safe[i] = 0;
	snprintf(path, sizeof(path), "%s/%s.yaml", dir, safe);
	if (!(fp = fopen(path, "w")))
		return autosync_errprintf(errp, "%s: %s", path,
					  strerror(errno));
	rv = autosync_plan_write(plan, fp, errp);
	if (fclose(fp) != 0)
		rv = -1;
	return rv;
}

/* mkdir -p */
static int mkdirs(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n >= sizeof(p)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++)
		if (p[i] == '/' || p[i] == 0) {
			char c = p[i];
			p[i] = 0;
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				return -1;
			p[i] = c;
		}
	return 0;
}

static int write_plans(const char *dir, const struct strat *st, size_t ns,
		       const autosync_model_t *m, autosync_planner_t *rpl,
		       autosync_error_t *errp)
{
	char path[4096];
	FILE *fp;
	int r;

	if (mkdirs(dir) < 0)
		return autosync_errprintf(errp, "%s: %s", dir, strerror(errno));
	for (size_t i = 0; i < ns; i++)
		if (write_plan_file(dir, st[i].name, st[i].plan, errp) < 0)
			return -1;
	snprintf(path, sizeof(path), "%s/replay.json", dir);
	if (!(fp = fopen(path, "w")))
		return autosync_errprintf(errp, "%s: %s", path,
					  strerror(errno));
	r = autosync_trial_write_replay(rpl, m, fp, errp);
	if (fclose(fp) != 0 || r < 0)
		return autosync_errprintf(errp, "%s: write error", path);
	return 0;
}

/* One JSON line per strategy and round (--output), through jansson:
 * every name escaped, no inf/nan (a step time that is not finite fails). */
static int bench_line(FILE *out, const struct opts *o,
		      const autosync_model_t *orig, const autosync_model_t *m,
		      const struct strat *s, const autosync_plan_summary_t *ps,
		      int size, int nodes, int round, int check, size_t first)
{
	json_t *steps = json_array(), *line;
	int rv = -1;

	for (size_t j = first; steps && j < s->nt; j++)
		if (json_array_append_new(steps, json_real(s->t[j])) < 0) {
			json_decref(steps);
			return -1;
		}
	line =
	    json_pack("{s:s, s:s, s:f, s:s, s:i, s:i, s:s, s:s, s:b, s:i, s:f, "
		      "s:I, s:b, s:o}",
		      "model", autosync_model_name(orig), "scaled",
		      autosync_model_name(m), "scale", o->scale, "knobs",
		      o->absolute_knobs ? "absolute" : "scaled", "ranks", size,
		      "nodes", nodes, "strategy", s->name, "plan_strategy",
		      ps->strategy ? ps->strategy : "", "random", s->random,
		      "round", round, "predicted", ps->step_time, "nbuckets",
		      (json_int_t)autosync_plan_nbuckets(s->plan), "ok", !check,
		      "steps", steps);
	if (line && json_dumpf(line, out, JSON_REAL_PRECISION(6)) == 0 &&
	    fputc('\n', out) != EOF)
		rv = 0;
	json_decref(line);
	return rv;
}

static void fill_record(autosync_feedback_rec_t *r, const struct opts *o,
			const autosync_model_t *orig,
			const autosync_model_t *scaled, const struct strat *s,
			int nodes, int gpn)
{
	autosync_plan_summary_t ps;
	struct passwd *pw;
	const char *job = getenv("SLURM_JOB_ID");
	const char *stp = getenv("SLURM_STEP_ID");
	double sum = 0;

	memset(r, 0, sizeof(*r));
	autosync_plan_summary(s->plan, &ps);
	(void)autosync_feedback_set_plan(r, s->plan, NULL);
	r->time = (int64_t)time(NULL);
	snprintf(r->source, sizeof(r->source), "bench");
	r->job = job ? strtoull(job, NULL, 10) : 0;
	r->step = stp ? strtoull(stp, NULL, 10) : 0;
	r->uid = (uint32_t)getuid();
	if ((pw = getpwuid(getuid())))
		snprintf(r->user, sizeof(r->user), "%s", pw->pw_name);
	gethostname(r->node, sizeof(r->node) - 1);
	r->nodes = (unsigned)nodes;
	r->gpus_per_node = (unsigned)gpn;
	/* the full-size model's name; the scaled one's hash */
	snprintf(r->model, sizeof(r->model), "%s", autosync_model_name(orig));
	snprintf(r->model_hash, sizeof(r->model_hash), "%s",
		 autosync_model_hash(scaled));
	if (!ps.strategy)
		snprintf(r->strategy, sizeof(r->strategy), "%.*s",
			 (int)sizeof(r->strategy) - 1, s->name);
	r->scale = o->scale;
	for (size_t i = 0; i < s->nt; i++) {
		if (r->nmeasured < AUTOSYNC_FEEDBACK_MAX_MEASURED)
			r->measured[r->nmeasured++] = s->t[i];
		sum += s->t[i];
	}
	r->measured_count = s->nt;
	r->measured_mean = s->nt ? sum / (double)s->nt : 0;
	/* a trial run is the user's from end to end; only the uid is not */
	r->influenced =
	    AUTOSYNC_FEEDBACK_F_ALL &
	    ~(AUTOSYNC_FEEDBACK_F_UID | AUTOSYNC_FEEDBACK_F_USER |
	      AUTOSYNC_FEEDBACK_F_TIME | AUTOSYNC_FEEDBACK_F_SOURCE);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"model", required_argument, 0, 'm'},
	    {"scale", required_argument, 0, 's'},
	    {"network", required_argument, 0, 'c'},
	    {"calibration", required_argument, 0, 'k'},
	    {"simulator", required_argument, 0, 'L'},
	    {"measure-cpu", no_argument, 0, 'M'},
	    {"framework", required_argument, 0, 'f'},
	    {"allow-compression", no_argument, 0, 'z'},
	    {"strategies", required_argument, 0, 'S'},
	    {"plan", required_argument, 0, 'p'},
	    {"baseline", required_argument, 0, 'b'},
	    {"random", required_argument, 0, 'r'},
	    {"seed", required_argument, 0, 'e'},
	    {"random-steps", required_argument, 0, 'R'},
	    {"random-space", required_argument, 0, 'X'},
	    {"steps", required_argument, 0, 'n'},
	    {"warmup", required_argument, 0, 'w'},
	    {"rounds", required_argument, 0, 'o'},
	    {"compute", required_argument, 0, 'C'},
	    {"hier", required_argument, 0, 'H'},
	    {"knobs", required_argument, 0, 'K'},
	    {"backend", required_argument, 0, 'B'},
	    {"feedback", required_argument, 0, 'F'},
	    {"output", required_argument, 0, 'O'},
	    {"write-plans", required_argument, 0, 'W'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	o->scale = 1;
	o->steps = 5;
	o->hier = RT_HIER_RAILS;
	o->warmup = 1;
	o->rounds = 1;
	o->rsteps = 3;
	o->seed = 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *e = NULL, *nl;
		size_t l;
		const char *add = NULL, *pre = "";
		switch (c) {
		case 'm':
			o->model = optarg;
			break;
		case 's':
			o->scale = strtod(optarg, &e);
			if (*e || !(o->scale >= 1)) {
				fprintf(stderr, "autosync bench: --scale: "
						"need a number >= 1\n");
				return -1;
			}
			break;
		case 'c':
			o->cluster = optarg;
			break;
		case 'k':
			o->calib = optarg;
			break;
		case 'M':
			o->measure_cpu = 1;
			break;
		case 'L':
			o->simulator = optarg;
			break;
		case 'f':
			if ((o->fw = autosync_framework_from_name(optarg)) <
			    0) {
				fprintf(stderr,
					"autosync bench: unknown "
					"framework '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'z':
			o->compress = 1;
			break;
		case 'S':
			add = optarg;
			break;
		case 'p':
			add = optarg;
			pre = "plan:";
			break;
		case 'b':
			add = optarg;
			break;
		case 'r':
			o->nrandom = atoi(optarg);
			break;
		case 'e':
			o->seed = strtoul(optarg, NULL, 10);
			break;
		case 'R':
			o->rsteps = atoi(optarg);
			break;
		case 'X':
			if (!strcmp(optarg, "wide"))
				o->space = AUTOSYNC_RANDOM_WIDE;
			else if (strcmp(optarg, "narrow")) {
				fprintf(stderr,
					"autosync bench: --random-space "
					"narrow|wide\n");
				return -1;
			}
			break;
		case 'n':
			o->steps = atoi(optarg);
			break;
		case 'w':
			o->warmup = atoi(optarg);
			break;
		case 'o':
			o->rounds = atoi(optarg);
			break;
		case 'C':
			if (!strcmp(optarg, "spin"))
				o->spin = 1;
			else if (strcmp(optarg, "sleep")) {
				fprintf(stderr, "autosync bench: --compute "
						"sleep|spin\n");
				return -1;
			}
			break;
		case 'K':
			if (!strcmp(optarg, "absolute"))
				o->absolute_knobs = 1;
			else if (strcmp(optarg, "scaled")) {
				fprintf(stderr, "autosync bench: --knobs "
						"scaled|absolute\n");
				return -1;
			}
			break;
		case 'H':
			if (!strcmp(optarg, "leader"))
				o->hier = RT_HIER_LEADER;
			else if (strcmp(optarg, "rails")) {
				fprintf(stderr, "autosync bench: --hier "
						"leader|rails\n");
				return -1;
			}
			break;
		case 'B':
			if (strcmp(optarg, "mpi") && strcmp(optarg, "nccl")) {
				fprintf(stderr, "autosync bench: --backend "
						"mpi|nccl\n");
				return -1;
			}
			o->backend = optarg;
			break;
		case 'F':
			o->feedback = optarg;
			break;
		case 'O':
			o->out = optarg;
			break;
		case 'W':
			o->plans_dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
		if (add) {
			l = (o->list ? strlen(o->list) + 1 : 0) + strlen(pre) +
			    strlen(add) + 1;
			if (!(nl = malloc(l)))
				return -1;
			snprintf(nl, l, "%s%s%s%s", o->list ? o->list : "",
				 o->list ? "," : "", pre, add);
			free(o->list);
			o->list = nl;
		}
	}
	if (!o->model || !o->cluster || optind < argc || o->steps < 0 ||
	    o->warmup < 0 || o->rounds < 1 || o->nrandom < 0 || o->rsteps < 1) {
		usage(stderr);
		return -1;
	}
	if (!o->list && !(o->list = strdup("autosync")))
		return -1;
	return 0;
}

int autosync_rt_bench_main(int argc, char **argv)
{
	struct opts o;
	autosync_error_t err = {{0}};
	autosync_rt_t *rt = NULL;
	autosync_model_t *orig = NULL, *m = NULL;
	autosync_planner_t *pl = NULL, *rpl = NULL, *lpl = NULL;
	autosync_simulator_t *sim = NULL;
	autosync_cluster_t cl;
	autosync_costs_t k;
	struct strat *st = NULL;
	size_t ns = 0, nnamed;
	int rank = 0, size = 1, rv = 1, inited = 0, wrong = 0;
	FILE *out = NULL;
	char *save = NULL, *tok;

	if ((rv = parse_opts(argc, argv, &o)) != 0) {
		free(o.list);
		return rv < 0 ? 2 : 0;
	}
	rv = 1;
	MPI_Initialized(&inited);
	if (!inited)
		MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#define FAIL(...)                                                        \
	do {                                                             \
		if (rank == 0) {                                         \
			fprintf(stderr, "autosync bench: " __VA_ARGS__); \
			fputc('\n', stderr);                             \
		}                                                        \
		goto out;                                                \
	} while (0)
	if (!(rt = autosync_rt_create(MPI_COMM_WORLD, &err)))
		FAIL("%s", err.text);
	autosync_rt_set_hier(rt, o.hier);
	if (autosync_rt_set_backend(rt, o.backend ? o.backend : "mpi", &err) <
	    0)
		FAIL("--backend: %s", err.text);
	if (!(orig = autosync_model_open(o.model, NULL, &err)) ||
	    !(m = autosync_model_scale(orig, o.scale, &err)))
		FAIL("%s", err.text);
	if (autosync_cluster_parse(&cl, o.cluster, &err) < 0)
		FAIL("--network: %s", err.text);
	cl.nodes = (unsigned)autosync_rt_nodes(rt);
	cl.gpus_per_node = (unsigned)autosync_rt_local_size(rt);
	{
		/* the planner's nodes are alike; ranks planning with their own
		 * node's count would run different plans and hang */
		int l = (int)cl.gpus_per_node, lo = 0, hi = 0;
		MPI_Allreduce(&l, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		MPI_Allreduce(&l, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		if (lo != hi)
			FAIL("the nodes run %d to %d ranks: run the same "
			     "number on every node",
			     lo, hi);
	}
	autosync_costs_default(&k);
	if (o.calib && autosync_costs_load(&k, o.calib, &err) < 0)
		FAIL("%s", err.text);
	/* 4 MiB of fp32: long enough to time on a slow link, short enough
	 * for a cell's start */
	if (o.measure_cpu &&
	    autosync_rt_measure_cpu(rt, (size_t)1 << 20, 3, &k.cast_bw,
				    &k.gamma_half, &err) < 0)
		FAIL("--measure-cpu: %s", err.text);
	/* within what a calibration file may say (planner/costs.c) */
	k.cast_bw = fmin(fmax(k.cast_bw, 1e6), 1e15);
	k.gamma_half = fmin(k.gamma_half, 1);
	if (!(pl = autosync_planner_create(&err)) ||
	    autosync_planner_set_cluster(pl, &cl, &err) < 0 ||
	    autosync_planner_set_model(pl, m, &err) < 0 ||
	    autosync_planner_set_costs(pl, &k, &err) < 0 ||
	    autosync_planner_set_framework(pl, o.fw, &err) < 0)
		FAIL("%s", err.text);
	autosync_planner_set_compression(pl, o.compress);
	autosync_planner_set_scaled_knobs(pl, !o.absolute_knobs);
	/* autosync-learned: the same planner with a learned simulator (the
	 * module as the site installs it, or $AUTOSYNC_SIMULATOR_MODULE) */
	if (o.simulator) {
		const char *mod = getenv("AUTOSYNC_SIMULATOR_MODULE");
		if (!(sim =
			  autosync_simulator_load(o.simulator,
						  mod && *mod ? mod
							      : AUTOSYNC_LIBDIR
						      "/autosync-simulator.so",
						  &err)))
			FAIL("--simulator: %s", err.text);
		if (!(lpl = autosync_planner_create(&err)) ||
		    autosync_planner_set_cluster(lpl, &cl, &err) < 0 ||
		    autosync_planner_set_model(lpl, m, &err) < 0 ||
		    autosync_planner_set_costs(lpl, &k, &err) < 0 ||
		    autosync_planner_set_framework(lpl, o.fw, &err) < 0 ||
		    autosync_planner_set_corrector(
			lpl, autosync_simulator_corrector(sim), &err) < 0)
			FAIL("%s", err.text);
		autosync_planner_set_compression(lpl, o.compress);
		autosync_planner_set_scaled_knobs(lpl, !o.absolute_knobs);
	}
	/* random strategies: everything the plan format can say */
	if (!(rpl = autosync_planner_create(&err)) ||
	    autosync_planner_set_cluster(rpl, &cl, &err) < 0 ||
	    autosync_planner_set_model(rpl, m, &err) < 0 ||
	    autosync_planner_set_costs(rpl, &k, &err) < 0 ||
	    autosync_planner_set_framework(rpl, AUTOSYNC_FW_GENERIC, &err) < 0)
		FAIL("%s", err.text);
	autosync_planner_set_compression(rpl, 1);
	if (autosync_planner_set_random_space(rpl, o.space, &err) < 0)
		FAIL("%s", err.text);
	/* strategies */
	nnamed = 1;
	for (const char *c = o.list; *c; c++)
		nnamed += *c == ',';
	if (!(st = calloc(nnamed + (size_t)o.nrandom, sizeof(*st))))
		FAIL("out of memory");
	for (tok = strtok_r(o.list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct strat *s = &st[ns];
		int b;
		snprintf(s->name, sizeof(s->name), "%s", tok);
		if (!strcmp(tok, "autosync"))
			s->plan = autosync_planner_run(pl, &err);
		else if (!strcmp(tok, "autosync-learned") && !lpl)
			FAIL("autosync-learned needs --simulator FILE");
		else if (!strcmp(tok, "autosync-learned"))
			s->plan = autosync_planner_run(lpl, &err);
		else if (!strncmp(tok, "plan:", 5))
			s->plan = autosync_plan_load(tok + 5, &err);
		else if ((b = autosync_baseline_from_name(tok)) >= 0)
			s->plan = autosync_planner_baseline(pl, b, &err);
		else
			FAIL("unknown strategy '%s' (autosync, plan:PATH or a "
			     "baseline name)",
			     tok);
		if (!s->plan)
			FAIL("%s: %s", tok, err.text);
		ns++;
	}
	for (int i = 0; i < o.nrandom; i++) {
		struct strat *s = &st[ns];
		snprintf(s->name, sizeof(s->name), "random-%s%lu",
			 o.space == AUTOSYNC_RANDOM_WIDE ? "wide-" : "",
			 o.seed + (unsigned long)i);
		s->random = 1;
		if (!(s->plan = autosync_planner_random(
			  rpl, o.seed + (uint64_t)i, &err)))
			FAIL("%s: %s", s->name, err.text);
		ns++;
	}
	if (rank == 0) {
		char cs[512] = "";
		autosync_cluster_format(&cl, cs, sizeof(cs));
		printf("# autosync bench: model %s (%s), %d ranks on %d nodes, "
		       "cluster %s, compute %s, hier %s\n",
		       autosync_model_name(m), autosync_model_hash(m), size,
		       autosync_rt_nodes(rt), cs, o.spin ? "spin" : "sleep",
		       autosync_rt_hier(rt) == RT_HIER_RAILS ? "rails"
							     : "leader");
		if (o.measure_cpu)
			printf("# cpu, measured on these ranks: cast_bw %.3g "
			       "B/s, gamma_half %.3g s/B\n",
			       k.cast_bw, k.gamma_half);
		printf("# %-5s %-24s %10s %10s %10s %10s %s\n", "round",
		       "strategy", "pred_s", "median_s", "min_s", "max_s",
		       "check");
		fflush(stdout);
	}
	/* rank 0's files: every rank learns whether that worked (a failure on
	 * rank 0 alone must not leave the others waiting in a collective) */
	{
		int bad = 0, anybad = 0;
		if (rank == 0) {
			if (o.out && !(out = fopen(o.out, "a"))) {
				fprintf(stderr, "autosync bench: %s: %s\n",
					o.out, strerror(errno));
				bad = 1;
			}
			if (!bad && o.plans_dir &&
			    write_plans(o.plans_dir, st, ns, m, rpl, &err) <
				0) {
				fprintf(stderr, "autosync bench: %s\n",
					err.text);
				bad = 1;
			}
		}
		MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX,
			      MPI_COMM_WORLD);
		if (anybad)
			goto out;
	}
	/* rounds: every named strategy once per round (A B A B ...); the
	 * random ones once, after the first round */
	for (int round = 0; round < o.rounds; round++) {
		for (size_t i = 0; i < ns; i++) {
			struct strat *s = &st[i];
			autosync_rt_plan_t *rp;
			autosync_plan_summary_t ps;
			float *pristine;
			size_t n;
			int steps = s->random ? o.rsteps : o.steps, check = 0;
			double t, *mine;
			size_t first = s->nt;
			if (s->random && round > 0)
				continue;
			if (!(rp = autosync_rt_prepare(rt, s->plan, m, &err)))
				FAIL("%s: %s", s->name, err.text);
			autosync_rt_plan_arena(rp, &n);
			if (!(pristine = malloc((n ? n : 1) * sizeof(float)))) {
				autosync_rt_plan_destroy(rp);
				FAIL("out of memory");
			}
			for (size_t j = 0; j < n; j++)
				pristine[j] = grad_val(rank, j);
			for (int w = 0; w < o.warmup + steps; w++) {
				int r =
				    run_step(rp, s->plan, pristine, rank, size,
					     o.spin, w == 0, &t, &err);
				if (r < 0) {
					free(pristine);
					autosync_rt_plan_destroy(rp);
					FAIL("%s: %s", s->name, err.text);
				}
				if (w == 0)
					check = r;
				if (w >= o.warmup && add_time(s, t) < 0)
					FAIL("out of memory");
			}
			free(pristine);
			autosync_rt_plan_destroy(rp);
			wrong |= check;
			autosync_plan_summary(s->plan, &ps);
			mine = s->t + first;
			if (rank == 0) {
				double mn = INFINITY, mx = 0,
				       md = autosync_rt_median(mine,
							       s->nt - first);
				for (size_t j = first; j < s->nt; j++) {
					mn = s->t[j] < mn ? s->t[j] : mn;
					mx = s->t[j] > mx ? s->t[j] : mx;
				}
				printf(
				    "  %-5d %-24s %10.4f %10.4f %10.4f %10.4f "
				    "%s\n",
				    round, s->name, ps.step_time, md, mn, mx,
				    check ? "WRONG" : "ok");
				fflush(stdout);
				if (out &&
				    bench_line(out, &o, orig, m, s, &ps, size,
					       autosync_rt_nodes(rt), round,
					       check, first) < 0)
					FAIL("%s: cannot write a JSON line "
					     "(a name that is not UTF-8?)",
					     s->name);
				if (out)
					fflush(out);
			}
		}
	}
	if (rank == 0 && o.feedback)
		for (size_t i = 0; i < ns; i++) {
			autosync_feedback_rec_t *r = malloc(sizeof(*r));
			char *line = NULL;
			size_t len;
			if (!r)
				FAIL("out of memory");
			fill_record(r, &o, orig, m, &st[i],
				    autosync_rt_nodes(rt),
				    autosync_rt_local_size(rt));
			if (autosync_feedback_format(r, &line, &len, &err) <
				0 ||
			    autosync_feedback_append(o.feedback, line, len,
						     64u << 20, 4, &err) < 0) {
				free(line);
				free(r);
				FAIL("feedback: %s", err.text);
			}
			free(line);
			free(r);
		}
	rv = wrong ? 3 : 0;
	if (wrong && rank == 0)
		fprintf(stderr, "autosync bench: WRONG sums (see 'check')\n");
out:
	if (out)
		fclose(out);
	for (size_t i = 0; st && i < ns; i++) {
		autosync_plan_destroy(st[i].plan);
		free(st[i].t);
	}
	free(st);
	free(o.list);
	autosync_planner_destroy(pl);
	autosync_planner_destroy(lpl);
	autosync_simulator_destroy(sim);
	autosync_planner_destroy(rpl);
	autosync_model_destroy(m);
	autosync_model_destroy(orig);
	autosync_rt_destroy(rt);
	/* every rank must agree on the exit status */
	{
		int all = rv;
		MPI_Allreduce(&rv, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		rv = all;
	}
	if (!inited)
		MPI_Finalize();
	return rv;
#undef FAIL
}
