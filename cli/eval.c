/* eval.c - 'autosync eval': how well the simulator's predictions rank the
 * measured strategies of feedback logs, per model and per cluster, as
 * recorded, corrected by a simulator file, or cross-validated; 'autosync
 * train': fit a simulator file, optionally on top of one trained elsewhere;
 * 'autosync promote': replace the site's simulator file with a candidate
 * only when it is not worse on records given (learn/learn.h;
 * docs/dataset.md). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "cli.h"
#include "common/text.h"
#include "learn/learn.h"

enum { EVAL, TRAIN, PROMOTE };
static const char *const cmd_name[] = {"eval", "train", "promote"};

enum {
	OPT_MIN_STEPS = CLI_OPT_OWN,
	OPT_TIE,
	OPT_SIMULATOR,
	OPT_CV,
	OPT_CAP,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_BASE,
	OPT_CANDIDATE,
	OPT_SITE,
	OPT_PICKS,
	OPT_FORMAT,
};

#define COMMON_OPTIONS                                         \
	{"min-steps", required_argument, NULL, OPT_MIN_STEPS}, \
	    {"since", required_argument, NULL, OPT_SINCE},     \
	    {"until", required_argument, NULL, OPT_UNTIL},     \
	    {"user-cap", required_argument, NULL, OPT_CAP},    \
	{                                                      \
		"help", no_argument, NULL, 'h'                 \
	}

static const struct option eval_opts[] = {
    COMMON_OPTIONS,
    {"tie", required_argument, NULL, OPT_TIE},
    {"simulator", required_argument, NULL, OPT_SIMULATOR},
    {"cv", required_argument, NULL, OPT_CV},
    {"picks", required_argument, NULL, OPT_PICKS},
    {NULL, 0, NULL, 0},
};
static const struct option train_opts[] = {
    COMMON_OPTIONS,
    {"output", required_argument, NULL, 'o'},
    {"base", required_argument, NULL, OPT_BASE},
    {"format", required_argument, NULL, OPT_FORMAT},
    {NULL, 0, NULL, 0},
};
static const struct option promote_opts[] = {
    COMMON_OPTIONS,
    {"tie", required_argument, NULL, OPT_TIE},
    {"candidate", required_argument, NULL, OPT_CANDIDATE},
    {"site", required_argument, NULL, OPT_SITE},
    {NULL, 0, NULL, 0},
};
static const struct option *const mode_opts[] = {eval_opts, train_opts,
						 promote_opts};

static void usage_head(FILE *fp, int mode)
{
	static const char *const head[] = {
	    "usage: autosync eval [OPTIONS] FEEDBACK...\n\nRank the "
	    "measured strategies of the records by the prediction they hold "
	    "(or\na simulator file's) and score it, per model and per "
	    "cluster (docs/dataset.md).\n\n",
	    "usage: autosync train [OPTIONS] -o FILE FEEDBACK...\n\nFit a "
	    "simulator file: boosted trees that correct the analytic "
	    "simulator's predictions\n(docs/dataset.md).\n\n",
	    "usage: autosync promote --candidate FILE --site FILE [OPTIONS] "
	    "FEEDBACK...\n\nReplace the site's simulator file with the "
	    "candidate when, on these records, it\nranks at least as well and "
	    "errs no more (docs/dataset.md).\n\n",
	};
	fputs(head[mode], fp);
}

static void usage(FILE *fp, int mode)
{
	usage_head(fp, mode);
	cli_help(fp, "    --min-steps N",
		 "records with fewer timed steps are left out (default 3)");
	cli_help(fp, "    --since WHEN, --until WHEN",
		 "only records from this time on / before it (2026-12-01, "
		 "epoch seconds, or 7d, 12h, 30m ago)");
	cli_help(fp, "    --user-cap X",
		 "in training, each user but root weighs at most this share "
		 "(default 0.1): step times come from files jobs write");
	if (mode == TRAIN) {
		cli_help(fp, "-o, --output FILE",
			 "the simulator file to write");
		cli_help(fp, "    --base FILE",
			 "keep this file's trees and fit up to 50 more to "
			 "these records, as many as 5-fold cross-validation "
			 "on them says (transfer to a new cluster)");
		cli_help(fp, "    --format binary|json",
			 "binary (default: what job start loads fastest, "
			 "checked against its header) or XGBoost's JSON "
			 "(to read)");
	}
	if (mode != TRAIN)
		cli_help(fp, "    --tie X",
			 "measurements closer than this share are a tie, "
			 "left out of the ranking (default 0.02)");
	if (mode == EVAL) {
		cli_help(fp, "    --simulator FILE",
			 "score the predictions corrected by this "
			 "simulator file");
		cli_help(fp, "    --cv model|cluster",
			 "also score a correction trained without each "
			 "model (cluster) on that model (cluster): "
			 "leave-one-out cross-validation");
		cli_help(fp, "    --picks FILE",
			 "write each group's pick and measured best (plan "
			 "hashes, measured times) for every set of "
			 "predictions scored, as tab-separated lines");
	}
	if (mode == PROMOTE) {
		cli_help(fp, "    --candidate FILE",
			 "the new simulator file (autosync train -o)");
		cli_help(fp, "    --site FILE",
			 "the one the site plans with; replaced atomically "
			 "(absent: compared with the analytic simulator)");
	}
	cli_help(fp, "-h, --help", "this help");
}

struct ctx {
	autosync_dataset_t *d;
	int mode;
	unsigned long records, skipped, bad, outside;
	int64_t since, until; /* 0: no bound */
	const char *simulator, *output, *base, *candidate, *site, *picks;
	struct cli_outfile picks_out; /* renamed to picks on success */
	autosync_learned_t *given;    /* --simulator, --base or --candidate */
	int cv;			      /* -1 none, else enum autosync_by */
	int format; /* train's AUTOSYNC_LEARNED_BINARY or _JSON */
	autosync_error_t err;
};

static int each(const autosync_feedback_rec_t *r, void *arg)
{
	struct ctx *c = arg;
	int rv;

	c->records++;
	if ((c->since && r->time < c->since) ||
	    (c->until && r->time >= c->until)) {
		c->outside++;
		return 0;
	}
	rv = autosync_dataset_add(c->d, r, &c->err);
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

static int share(struct ctx *c, const char *opt, const char *arg,
		 int (*set)(autosync_dataset_t *, double, autosync_error_t *),
		 const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || set(c->d, v, NULL) < 0) {
		fprintf(stderr, "autosync %s: %s: '%s' is not %s\n",
			cmd_name[c->mode], opt, arg, what);
		return 2;
	}
	return 0;
}

static int when(struct ctx *c, const char *opt, const char *arg, int64_t *out)
{
	if (cli_when(arg, out) < 0) {
		fprintf(stderr,
			"autosync %s: %s: bad time '%s' (2026-12-01, "
			"2026-12-01T10:00:00Z, epoch seconds, or 30m, 12h, 7d "
			"ago)\n",
			cmd_name[c->mode], opt, arg);
		return 2;
	}
	return 0;
}

/* one option; 0, 2 (usage, printed) or -1 (help printed) */
static int option(struct ctx *c, int o, char **argv)
{
	static const char *const cvs[] = {"model", "cluster"};
	static const char *const formats[] = {"binary", "json"};
	const char *cmd = cmd_name[c->mode];
	unsigned long n;

	switch (o) {
	case 'o':
		c->output = optarg;
		return 0;
	case OPT_SIMULATOR:
		c->simulator = optarg;
		return 0;
	case OPT_BASE:
		c->base = optarg;
		return 0;
	case OPT_CANDIDATE:
		c->candidate = optarg;
		return 0;
	case OPT_SITE:
		c->site = optarg;
		return 0;
	case OPT_SINCE:
		return when(c, "--since", optarg, &c->since);
	case OPT_UNTIL:
		return when(c, "--until", optarg, &c->until);
	case OPT_CAP:
		return share(c, "--user-cap", optarg,
			     autosync_dataset_set_user_cap,
			     "a share above 0 and at most 1");
	case OPT_TIE:
		return share(c, "--tie", optarg, autosync_dataset_set_tie,
			     "a share from 0 to 1");
	case OPT_CV:
		if (!strcmp(optarg, "model"))
			c->cv = AUTOSYNC_BY_MODEL;
		else if (!strcmp(optarg, "cluster"))
			c->cv = AUTOSYNC_BY_CLUSTER;
		else
			return cli_bad_value(cmd, "--cv", optarg, cvs, 2);
		return 0;
	case OPT_PICKS:
		c->picks = optarg;
		return 0;
	case OPT_FORMAT:
		if (!strcmp(optarg, "binary"))
			c->format = AUTOSYNC_LEARNED_BINARY;
		else if (!strcmp(optarg, "json"))
			c->format = AUTOSYNC_LEARNED_JSON;
		else
			return cli_bad_value(cmd, "--format", optarg, formats,
					     2);
		return 0;
	case OPT_MIN_STEPS:
		if (cli_uint(cmd, "--min-steps", optarg, 1, 1000000, &n) < 0)
			return 2;
		autosync_dataset_set_min_steps(c->d, (unsigned)n, NULL);
		return 0;
	case 'h':
		usage(stdout, c->mode);
		return -1;
	default:
		return cli_bad_option(cmd, o, argv, mode_opts[c->mode]);
	}
}

static int parse(int argc, char **argv, struct ctx *c)
{
	const char *cmd = cmd_name[c->mode];
	int o, rv;

	optind = 1;
	opterr = 0;
	c->cv = -1;
	while ((o = getopt_long(argc, argv, c->mode == TRAIN ? ":ho:" : ":h",
				mode_opts[c->mode], NULL)) != -1)
		if ((rv = option(c, o, argv)) != 0)
			return rv;
	if (optind >= argc) {
		fprintf(stderr, "autosync %s: no feedback file given\n", cmd);
		usage(stderr, c->mode);
		return 2;
	}
	if (c->mode == TRAIN && !c->output) {
		fprintf(stderr, "autosync train: no output file (-o FILE)\n");
		return 2;
	}
	if (c->mode == PROMOTE && (!c->candidate || !c->site)) {
		fprintf(stderr, "autosync promote: give --candidate FILE and "
				"--site FILE\n");
		return 2;
	}
	return 0;
}

/* Leave-one-out: each label's points predicted by a correction trained
 * without them, then scored together. */
static int cross_validate(struct ctx *c, int by, const autosync_learned_t *base)
{
	size_t n = autosync_dataset_nlabels(c->d, by);
	const char **l = calloc(n + 1, sizeof(char *));

	if (!l)
		return -1;
	for (size_t i = 0; i < n; i++)
		l[i] = autosync_dataset_label(c->d, by, i);
	for (size_t i = 0; i < n; i++) {
		autosync_learned_t *m =
		    autosync_learned_adapt(base, c->d, by, l[i], &c->err);
		if (!m ||
		    autosync_learned_apply(m, c->d, by, l[i], &c->err) < 0) {
			autosync_learned_destroy(m);
			free(l);
			return -1;
		}
		autosync_learned_destroy(m);
	}
	free(l);
	return 0;
}

/* the picks of the predictions now in the dataset, as 'set' */
static int write_picks(struct ctx *c, const char *set)
{
	autosync_pick_t *p;
	ssize_t n;

	if (!c->picks_out.fp)
		return 0;
	if ((n = autosync_dataset_picks(c->d, &p, &c->err)) < 0)
		return -1;
	for (ssize_t i = 0; i < n; i++)
		fprintf(c->picks_out.fp, "%s\t%s\t%s\t%s\t%s\t%.9g\t%.9g\n",
			set, p[i].label[AUTOSYNC_BY_MODEL],
			p[i].label[AUTOSYNC_BY_CLUSTER], p[i].picked, p[i].best,
			p[i].picked_s, p[i].best_s);
	free(p);
	return 0;
}

/* the no-harm margins a file gives the planner, one line */
static void print_margins(const autosync_learned_t *l)
{
	const char *sep = "";

	printf("# its no-harm margins:");
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++) {
		double m = autosync_learned_margin(l, f);
		if (m >= 0)
			printf("%s %s %.1f%%", sep, autosync_family_name(f),
			       m * 100);
		else
			printf("%s %s: the cost constants'", sep,
			       autosync_family_name(f));
		sep = ",";
	}
	printf("\n");
}

/* The 90th percentile of the optimism of the picks of the predictions now
 * in the dataset, per family (autosync_dataset_margins), after 'what'. One
 * line. */
static int print_dataset_margins(struct ctx *c, const char *what)
{
	double m[AUTOSYNC_FAMILY_N];
	size_t counts[AUTOSYNC_FAMILY_N];
	const char *sep = "";

	if (autosync_dataset_margins(c->d, m, counts, &c->err) < 0)
		return -1;
	printf("# %s (90th percentile of the optimism of its picks):", what);
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++) {
		if (m[f] >= 0)
			printf("%s %s %.1f%% (%zu groups)", sep,
			       autosync_family_name(f), m[f] * 100, counts[f]);
		else
			printf("%s %s: %zu groups, too few", sep,
			       autosync_family_name(f), counts[f]);
		sep = ",";
	}
	printf("\n");
	return 0;
}

static int evaluate(struct ctx *c)
{
	printf("# predictions as recorded (the analytic simulator)\n");
	/* the analytic model was never fitted to the records: what an admin
	 * can put in a costs file's margin_* keys for a site without a
	 * simulator file */
	if (report(c->d, &c->err) < 0 || write_picks(c, "recorded") < 0 ||
	    print_dataset_margins(c, "the analytic model's margins here") < 0)
		return -1;
	if (c->given) {
		if (autosync_learned_apply(c->given, c->d, 0, NULL, &c->err) <
		    0)
			return -1;
		printf("\n# corrected by %s\n", c->simulator);
		if (report(c->d, &c->err) < 0 ||
		    write_picks(c, "corrected") < 0)
			return -1;
		print_margins(c->given);
		/* its margins' check, on records it was not trained on */
		if (print_dataset_margins(
			c, "its picks here, to check them where it was not "
			   "trained") < 0)
			return -1;
		autosync_dataset_reset(c->d);
	}
	if (c->cv >= 0) {
		if (cross_validate(c, c->cv, NULL) < 0)
			return -1;
		printf("\n# learned, leave-one-%s-out\n", by_name[c->cv]);
		if (report(c->d, &c->err) < 0 ||
		    write_picks(c, c->cv == AUTOSYNC_BY_MODEL
				       ? "cv-model"
				       : "cv-cluster") < 0)
			return -1;
		autosync_dataset_reset(c->d);
	}
	return 0;
}

/* One held-out pass's margins (autosync_dataset_margins) into out[] */
static int held_out_margins(struct ctx *c, int by,
			    const autosync_learned_t *base, double *out,
			    size_t *counts)
{
	int rv =
	    cross_validate(c, by, base) < 0 ||
		    autosync_dataset_margins(c->d, out, counts, &c->err) < 0
		? -1
		: 0;

	autosync_dataset_reset(c->d);
	return rv;
}

static void say_margin(int f, double v, const double (*by)[AUTOSYNC_FAMILY_N],
		       size_t count)
{
	char how[96];

	if (v < 0) {
		fprintf(stderr,
			"autosync train: margin for %s: the cost constants' "
			"(picked in %zu groups, fewer than %d)\n",
			autosync_family_name(f), count,
			AUTOSYNC_LEARNED_MIN_FAMILY);
		return;
	}
	if (by[AUTOSYNC_BY_MODEL][f] >= 0 && by[AUTOSYNC_BY_CLUSTER][f] >= 0)
		snprintf(how, sizeof(how),
			 "the wider of leave-one-model-out %.1f%% and "
			 "leave-one-cluster-out %.1f%%",
			 by[AUTOSYNC_BY_MODEL][f] * 100,
			 by[AUTOSYNC_BY_CLUSTER][f] * 100);
	else
		snprintf(how, sizeof(how), "leave-one-%s-out",
			 by[AUTOSYNC_BY_MODEL][f] >= 0 ? "model" : "cluster");
	fprintf(stderr,
		"autosync train: margin for %s: %.1f%% (90th percentile of "
		"the held-out optimism of its picks, %s; %zu groups)\n",
		autosync_family_name(f), v * 100, how, count);
}

/* The planner's no-harm margins, from held-out predictions: a plan is
 * used on models and on clusters the file never saw, so each family's
 * margin is the wider of leave-one-model-out and leave-one-cluster-out
 * (either alone where the records have one model or one cluster); said on
 * stderr. */
static int margins(struct ctx *c, autosync_learned_t *m,
		   const autosync_learned_t *base)
{
	double by[AUTOSYNC_BY_N][AUTOSYNC_FAMILY_N];
	size_t counts[AUTOSYNC_FAMILY_N];
	int passes = 0;

	for (int b = 0; b < AUTOSYNC_BY_N; b++) {
		for (int f = 0; f < AUTOSYNC_FAMILY_N; f++)
			by[b][f] = -1;
		if (autosync_dataset_nlabels(c->d, b) < 2)
			continue;
		if (held_out_margins(c, b, base, by[b], counts) < 0)
			return -1;
		passes++;
	}
	if (!passes) {
		fprintf(stderr, "autosync train: one model on one cluster: no "
				"held-out margins (the planner keeps the cost "
				"constants')\n");
		return 0;
	}
	for (int f = 0; f < AUTOSYNC_FAMILY_N; f++) {
		double v =
		    fmax(by[AUTOSYNC_BY_MODEL][f], by[AUTOSYNC_BY_CLUSTER][f]);
		if (autosync_learned_set_margin(m, f, v, &c->err) < 0)
			return -1;
		say_margin(f, v, (const double(*)[AUTOSYNC_FAMILY_N])by,
			   counts[f]);
	}
	return 0;
}

/* Models' measured compute per sample, for model files without FLOPs;
 * said on stderr. */
static int measured_compute(struct ctx *c, autosync_learned_t *m)
{
	int n = autosync_learned_set_compute(m, c->d, &c->err);

	if (n < 0)
		return -1;
	fprintf(stderr,
		"autosync train: measured compute for %d model(s) (records "
		"with a batch size and at most %.0f%% communication, at "
		"least %d per model)\n",
		n, AUTOSYNC_LEARNED_COMPUTE_COMM * 100,
		AUTOSYNC_LEARNED_MIN_COMPUTE);
	return 0;
}

/* how many trees went on top of the base, and how that was decided */
static void adapted(const struct ctx *c, const autosync_learned_t *m)
{
	size_t n = autosync_dataset_npoints(c->d);
	size_t k =
	    n < AUTOSYNC_LEARNED_CV_FOLDS ? n : AUTOSYNC_LEARNED_CV_FOLDS;

	if (k < 2)
		fprintf(stderr,
			"autosync train: %s as it is (one point: nothing to "
			"cross-validate on)\n",
			c->base);
	else
		fprintf(stderr,
			"autosync train: %d of at most %d trees on top of %s "
			"(%zu-fold cross-validation on these records)\n",
			autosync_learned_adapted(m),
			AUTOSYNC_LEARNED_ADAPT_TREES, c->base, k);
}

static int train(struct ctx *c)
{
	const autosync_learned_t *b = c->given;
	autosync_learned_t *m = NULL;
	int rv = -1;

	if ((m = autosync_learned_adapt(b, c->d, 0, NULL, &c->err)) && b)
		adapted(c, m);
	if (m && margins(c, m, b) == 0 && measured_compute(c, m) == 0)
		rv = autosync_learned_save(m, c->output, c->format, &c->err);
	autosync_learned_destroy(m);
	return rv;
}

/* the metrics over all groups with 'l' applied (NULL: as recorded) */
static int score(struct ctx *c, const autosync_learned_t *l, autosync_eval_t *e)
{
	autosync_dataset_reset(c->d);
	if (l && autosync_learned_apply(l, c->d, 0, NULL, &c->err) < 0)
		return -1;
	return autosync_dataset_eval(c->d, AUTOSYNC_BY_MODEL, NULL, e, &c->err);
}

/* not worse: ranks at least as well, picks a best no slower beyond a
 * tie (a pick within the tie share of another is the lab's noise, as in
 * the pairwise count), errs no more (NaN: no groups) */
static int not_worse(const autosync_eval_t *n, const autosync_eval_t *o,
		     double tie)
{
	int rank = !isfinite(o->pairwise) ||
		   (isfinite(n->pairwise) && n->pairwise >= o->pairwise);
	int pick = !isfinite(o->regret) ||
		   (isfinite(n->regret) && n->regret <= o->regret * (1 + tie));
	return rank && pick && n->mean_abs <= o->mean_abs;
}

/* the candidate as the site's file: written beside it, renamed; binary,
 * whatever the candidate's format (job start reads it) */
static int install(struct ctx *c, const autosync_learned_t *cand)
{
	char tmp[4096];

	/* the process's own name: two promotes at once do not share one */
	if (snprintf(tmp, sizeof(tmp), "%s.new.%ld", c->site, (long)getpid()) >=
	    (int)sizeof(tmp))
		return autosync_errprintf(&c->err, "%s: name too long",
					  c->site);
	if (autosync_learned_save(cand, tmp, AUTOSYNC_LEARNED_BINARY, &c->err) <
	    0)
		return -1;
	if (rename(tmp, c->site) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return autosync_errprintf(&c->err, "%s: %s", c->site,
					  strerror(e));
	}
	return 0;
}

static int promote(struct ctx *c)
{
	const autosync_learned_t *cand = c->given;
	autosync_learned_t *cur = NULL;
	autosync_eval_t en, eo;
	int rv = -1, have_site = access(c->site, F_OK) == 0;
	autosync_error_t e2 = {.text = ""};

	if (have_site && !(cur = autosync_learned_load(c->site, &e2)))
		fprintf(stderr,
			"autosync promote: %s; compared with the analytic "
			"simulator\n",
			e2.text);
	if (score(c, cur, &eo) < 0 || score(c, cand, &en) < 0)
		goto out;
	if (!en.points) {
		printf("kept %s: no records to compare on\n", c->site);
		rv = 0;
		goto out;
	}
	printf("candidate %s: pairwise %.3f, top-1 regret %.3f, mean abs. "
	       "error %.1f %% on %zu points; %s: pairwise %.3f, regret %.3f, "
	       "%.1f %%\n",
	       c->candidate, en.pairwise, en.regret, 100 * en.mean_abs,
	       en.points, cur ? c->site : "the analytic simulator", eo.pairwise,
	       eo.regret, 100 * eo.mean_abs);
	if (!not_worse(&en, &eo, autosync_dataset_tie(c->d))) {
		printf("kept %s: the candidate is worse\n", c->site);
		rv = 0;
	} else if ((rv = install(c, cand)) == 0) {
		printf("promoted: %s is the candidate now\n", c->site);
	}
out:
	autosync_learned_destroy(cur);
	return rv;
}

/* the simulator file the command was given, read before any record: a bad
 * name fails at once, not after a long read */
static int load_given(struct ctx *c)
{
	const char *f = c->mode == TRAIN     ? c->base
			: c->mode == PROMOTE ? c->candidate
					     : c->simulator;

	if (f && !(c->given = autosync_learned_load(f, &c->err)))
		return -1;
	return 0;
}

static int run(int argc, char **argv, int mode)
{
	const char *cmd = cmd_name[mode];
	struct ctx c = {.mode = mode, .format = AUTOSYNC_LEARNED_BINARY};
	int rv = 1, p;

	if (!(c.d = autosync_dataset_create(&c.err))) {
		fprintf(stderr, "autosync %s: %s\n", cmd, CLI_Q(c.err.text));
		return 1;
	}
	if ((p = parse(argc, argv, &c)) != 0) {
		autosync_dataset_destroy(c.d);
		return p < 0 ? 0 : p;
	}
	if (load_given(&c) < 0) {
		fprintf(stderr, "autosync %s: %s\n", cmd, CLI_Q(c.err.text));
		goto out;
	}
	if (c.picks && cli_outfile_open(&c.picks_out, c.picks) < 0) {
		fprintf(stderr, "autosync %s: --picks: %s: %s\n", cmd, c.picks,
			strerror(errno));
		goto out;
	}
	for (int i = optind; i < argc; i++)
		if (autosync_feedback_read(argv[i], each, &c, bad_line,
					   &c.err) != 0) {
			fprintf(stderr, "autosync %s: %s\n", cmd,
				CLI_Q(c.err.text));
			goto out;
		}
	fprintf(stderr,
		"autosync %s: %lu records: %zu points (%zu pooled with "
		"the same user, model, cluster and plan), %lu left out (fewer "
		"steps, no measurement or no cluster), %lu unreadable\n",
		cmd, c.records - c.outside, autosync_dataset_npoints(c.d),
		autosync_dataset_npooled(c.d), c.skipped, c.bad);
	if ((mode == TRAIN     ? train(&c)
	     : mode == PROMOTE ? promote(&c)
			       : evaluate(&c)) < 0) {
		fprintf(stderr, "autosync %s: %s\n", cmd, CLI_Q(c.err.text));
		goto out;
	}
	rv = 0;
out:
	if (c.picks_out.fp && cli_outfile_close(&c.picks_out, rv == 0) < 0 &&
	    rv == 0) {
		fprintf(stderr, "autosync %s: --picks: %s: %s\n", cmd, c.picks,
			strerror(errno));
		rv = 1;
	}
	autosync_learned_destroy(c.given);
	autosync_dataset_destroy(c.d);
	return rv;
}

int autosync_cmd_eval(int argc, char **argv)
{
	return run(argc, argv, EVAL);
}

int autosync_cmd_train(int argc, char **argv)
{
	return run(argc, argv, TRAIN);
}

int autosync_cmd_promote(int argc, char **argv)
{
	return run(argc, argv, PROMOTE);
}
