/* eval.c - 'autosync eval': how well the simulator's predictions rank the
 * measured strategies of feedback logs, per model and per cluster, as
 * recorded, corrected by a simulator file, or cross-validated; 'autosync
 * train': fit a simulator file (learn/learn.h; docs/dataset.md). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/feedback.h"
#include "cli.h"
#include "common/text.h"
#include "learn/learn.h"

enum { OPT_MIN_STEPS = CLI_OPT_OWN, OPT_TIE, OPT_SIMULATOR, OPT_CV, OPT_CAP };

static const struct option eval_opts[] = {
    {"min-steps", required_argument, NULL, OPT_MIN_STEPS},
    {"tie", required_argument, NULL, OPT_TIE},
    {"simulator", required_argument, NULL, OPT_SIMULATOR},
    {"cv", required_argument, NULL, OPT_CV},
    {"user-cap", required_argument, NULL, OPT_CAP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
static const struct option train_opts[] = {
    {"min-steps", required_argument, NULL, OPT_MIN_STEPS},
    {"output", required_argument, NULL, 'o'},
    {"user-cap", required_argument, NULL, OPT_CAP},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *fp, int train)
{
	if (train)
		fprintf(fp, "usage: autosync train [OPTIONS] -o FILE "
			    "FEEDBACK...\n\nFit a simulator file: boosted "
			    "trees that correct the analytic simulator's "
			    "predictions\n(docs/dataset.md).\n\n");
	else
		fprintf(fp, "usage: autosync eval [OPTIONS] FEEDBACK...\n\n"
			    "Rank the measured strategies of the records by "
			    "the prediction they hold (or\na simulator "
			    "file's) and score it, per model and per cluster "
			    "(docs/dataset.md).\n\n");
	cli_help(fp, "    --min-steps N",
		 "records with fewer timed steps are left out (default 3)");
	if (train) {
		cli_help(fp, "-o, --output FILE",
			 "the simulator file to write");
	} else {
		cli_help(fp, "    --tie X",
			 "measurements closer than this share are a tie, "
			 "left out of the ranking (default 0.02)");
		cli_help(fp, "    --simulator FILE",
			 "score the predictions corrected by this "
			 "simulator file");
		cli_help(fp, "    --cv model|cluster",
			 "also score a correction trained without each "
			 "model (cluster) on that model (cluster): "
			 "leave-one-out cross-validation");
	}
	cli_help(fp, "    --user-cap X",
		 "in training, each user but root weighs at most this share "
		 "(default 0.1): step times come from files jobs write");
	cli_help(fp, "-h, --help", "this help");
}

struct ctx {
	autosync_dataset_t *d;
	unsigned long records, skipped, bad;
	const char *simulator, *output;
	int cv; /* -1 none, else enum autosync_by */
	autosync_error_t err;
};

static int each(const autosync_feedback_rec_t *r, void *arg)
{
	struct ctx *c = arg;
	int rv = autosync_dataset_add(c->d, r, &c->err);

	c->records++;
	if (rv == 0)
		c->skipped++;
	return rv < 0 ? -1 : 0;
}

static void bad_line(const char *msg, void *arg)
{
	struct ctx *c = arg;
	char q[1024];

	c->bad++;
	fprintf(stderr, "autosync: skipped %s\n", asi_quote(msg, q, sizeof(q)));
}

/* a metric, or "-" when no group had one; 'pct': as a signed percent */
static void num(char *buf, size_t n, int pct, double v)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else if (pct)
		snprintf(buf, n, pct > 1 ? "%+.1f%%" : "%.1f%%", 100 * v);
	else
		snprintf(buf, n, "%.3f", v);
}

static void row(const char *by, const char *label, const autosync_eval_t *e)
{
	char pw[16], tau[16], rho[16], reg[16], abs[16], sig[16], q[300];

	num(pw, sizeof(pw), 0, e->pairwise);
	num(tau, sizeof(tau), 0, e->tau_b);
	num(rho, sizeof(rho), 0, e->spearman);
	num(reg, sizeof(reg), 0, e->regret);
	num(abs, sizeof(abs), 1, e->mean_abs);
	num(sig, sizeof(sig), 2, e->mean_signed);
	printf("%-8s %-24s %6zu %6zu %6zu %8s %6s %8s %7s %8s %8s\n", by,
	       asi_quote(label, q, sizeof(q)), e->groups, e->points, e->pairs,
	       pw, tau, rho, reg, abs, sig);
}

static const char *const by_name[] = {"model", "cluster"};

static int report(const autosync_dataset_t *d, autosync_error_t *err)
{
	autosync_eval_t e;

	printf("%-8s %-24s %6s %6s %6s %8s %6s %8s %7s %8s %8s\n", "by",
	       "label", "groups", "points", "pairs", "pairwise", "tau_b",
	       "spearman", "regret", "mean_abs", "mean_err");
	for (int by = 0; by < AUTOSYNC_BY_N; by++)
		for (size_t i = 0; i < autosync_dataset_nlabels(d, by); i++) {
			const char *l = autosync_dataset_label(d, by, i);
			if (autosync_dataset_eval(d, by, l, &e, err) < 0)
				return -1;
			row(by_name[by], l, &e);
		}
	if (autosync_dataset_eval(d, AUTOSYNC_BY_MODEL, NULL, &e, err) < 0)
		return -1;
	row("all", "-", &e);
	return 0;
}

static int parse(int argc, char **argv, struct ctx *c, int train)
{
	static const char *const cvs[] = {"model", "cluster"};
	const char *cmd = train ? "train" : "eval";
	const struct option *lo = train ? train_opts : eval_opts;
	unsigned long n;
	char *end;
	double tie;
	int o;

	optind = 1;
	opterr = 0;
	c->cv = -1;
	while ((o = getopt_long(argc, argv, train ? ":ho:" : ":h", lo, NULL)) !=
	       -1) {
		switch (o) {
		case 'o':
			c->output = optarg;
			break;
		case OPT_SIMULATOR:
			c->simulator = optarg;
			break;
		case OPT_CAP:
			errno = 0;
			tie = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    autosync_dataset_set_user_cap(c->d, tie, NULL) <
				0) {
				fprintf(
				    stderr,
				    "autosync %s: --user-cap: '%s' is not a "
				    "share above 0 and at most 1\n",
				    cmd, optarg);
				return 2;
			}
			break;
		case OPT_CV:
			if (!strcmp(optarg, "model"))
				c->cv = AUTOSYNC_BY_MODEL;
			else if (!strcmp(optarg, "cluster"))
				c->cv = AUTOSYNC_BY_CLUSTER;
			else
				return cli_bad_value("eval", "--cv", optarg,
						     cvs, 2);
			break;
		case OPT_MIN_STEPS:
			if (cli_uint(cmd, "--min-steps", optarg, 1, 1000000,
				     &n) < 0)
				return 2;
			autosync_dataset_set_min_steps(c->d, (unsigned)n, NULL);
			break;
		case OPT_TIE:
			errno = 0;
			tie = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    autosync_dataset_set_tie(c->d, tie, NULL) < 0) {
				fprintf(stderr,
					"autosync eval: --tie: '%s' is not a "
					"share from 0 to 1\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout, train);
			return -1;
		default:
			return cli_bad_option(cmd, o, argv, lo);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "autosync %s: no feedback file given\n", cmd);
		usage(stderr, train);
		return 2;
	}
	if (train && !c->output) {
		fprintf(stderr, "autosync train: no output file (-o FILE)\n");
		return 2;
	}
	return 0;
}

/* Leave-one-out: each label's points predicted by a correction trained
 * without them, then scored together. */
static int cross_validate(struct ctx *c)
{
	size_t n = autosync_dataset_nlabels(c->d, c->cv);
	const char **l = calloc(n + 1, sizeof(char *));

	if (!l)
		return -1;
	for (size_t i = 0; i < n; i++)
		l[i] = autosync_dataset_label(c->d, c->cv, i);
	for (size_t i = 0; i < n; i++) {
		autosync_learned_t *m =
		    autosync_learned_fit(c->d, c->cv, l[i], &c->err);
		if (!m ||
		    autosync_learned_apply(m, c->d, c->cv, l[i], &c->err) < 0) {
			autosync_learned_destroy(m);
			free(l);
			return -1;
		}
		autosync_learned_destroy(m);
	}
	free(l);
	return 0;
}

static int evaluate(struct ctx *c)
{
	autosync_learned_t *m = NULL;

	printf("# predictions as recorded (the analytic simulator)\n");
	if (report(c->d, &c->err) < 0)
		return -1;
	if (c->simulator) {
		if (!(m = autosync_learned_load(c->simulator, &c->err)) ||
		    autosync_learned_apply(m, c->d, 0, NULL, &c->err) < 0) {
			autosync_learned_destroy(m);
			return -1;
		}
		autosync_learned_destroy(m);
		printf("\n# corrected by %s\n", c->simulator);
		if (report(c->d, &c->err) < 0)
			return -1;
		autosync_dataset_reset(c->d);
	}
	if (c->cv >= 0) {
		if (cross_validate(c) < 0)
			return -1;
		printf("\n# learned, leave-one-%s-out\n", by_name[c->cv]);
		if (report(c->d, &c->err) < 0)
			return -1;
		autosync_dataset_reset(c->d);
	}
	return 0;
}

static int train(struct ctx *c)
{
	autosync_learned_t *m = autosync_learned_fit(c->d, 0, NULL, &c->err);
	int rv = m ? autosync_learned_save(m, c->output, &c->err) : -1;

	autosync_learned_destroy(m);
	return rv;
}

static int run(int argc, char **argv, int training)
{
	const char *cmd = training ? "train" : "eval";
	struct ctx c = {0};
	int rv = 1, p;

	if (!(c.d = autosync_dataset_create(&c.err))) {
		fprintf(stderr, "autosync %s: %s\n", cmd, c.err.text);
		return 1;
	}
	if ((p = parse(argc, argv, &c, training)) != 0) {
		autosync_dataset_destroy(c.d);
		return p < 0 ? 0 : p;
	}
	for (int i = optind; i < argc; i++)
		if (autosync_feedback_read(argv[i], each, &c, bad_line,
					   &c.err) != 0) {
			fprintf(stderr, "autosync %s: %s\n", cmd, c.err.text);
			goto out;
		}
	fprintf(stderr,
		"autosync %s: %lu records: %zu points (%zu pooled with "
		"the same model, cluster and plan), %lu left out (fewer "
		"steps, no measurement or no cluster), %lu unreadable\n",
		cmd, c.records, autosync_dataset_npoints(c.d),
		autosync_dataset_npooled(c.d), c.skipped, c.bad);
	if ((training ? train(&c) : evaluate(&c)) < 0) {
		fprintf(stderr, "autosync %s: %s\n", cmd, c.err.text);
		goto out;
	}
	rv = 0;
out:
	autosync_dataset_destroy(c.d);
	return rv;
}

int autosync_cmd_eval(int argc, char **argv)
{
	return run(argc, argv, 0);
}

int autosync_cmd_train(int argc, char **argv)
{
	return run(argc, argv, 1);
}
