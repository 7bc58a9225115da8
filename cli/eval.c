/* eval.c - 'autosync eval': how well the simulator's predictions rank the
 * measured strategies of feedback logs, per model and per cluster
 * (learn/learn.h; docs/dataset.md). */
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

enum { OPT_MIN_STEPS = CLI_OPT_OWN, OPT_TIE };

static const struct option opts[] = {
    {"min-steps", required_argument, NULL, OPT_MIN_STEPS},
    {"tie", required_argument, NULL, OPT_TIE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: autosync eval [OPTIONS] FEEDBACK...\n\n"
		    "Rank the measured strategies of the records by the "
		    "prediction they hold and\nscore it, per model and per "
		    "cluster (docs/dataset.md).\n\n");
	cli_help(fp, "    --min-steps N",
		 "records with fewer timed steps are left out (default 3)");
	cli_help(fp, "    --tie X",
		 "measurements closer than this share are a tie, left out "
		 "of the ranking (default 0.02)");
	cli_help(fp, "-h, --help", "this help");
}

struct ctx {
	autosync_dataset_t *d;
	unsigned long records, skipped, bad;
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

static int report(const autosync_dataset_t *d, autosync_error_t *err)
{
	static const char *const by_name[] = {"model", "cluster"};
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

static int parse(int argc, char **argv, struct ctx *c)
{
	unsigned long n;
	char *end;
	double tie;
	int o;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (o) {
		case OPT_MIN_STEPS:
			if (cli_uint("eval", "--min-steps", optarg, 1, 1000000,
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
			usage(stdout);
			return -1;
		default:
			return cli_bad_option("eval", o, argv, opts);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "autosync eval: no feedback file given\n");
		usage(stderr);
		return 2;
	}
	return 0;
}

int autosync_cmd_eval(int argc, char **argv)
{
	struct ctx c = {0};
	int rv = 1, p;

	if (!(c.d = autosync_dataset_create(&c.err))) {
		fprintf(stderr, "autosync eval: %s\n", c.err.text);
		return 1;
	}
	if ((p = parse(argc, argv, &c)) != 0) {
		autosync_dataset_destroy(c.d);
		return p < 0 ? 0 : p;
	}
	for (int i = optind; i < argc; i++)
		if (autosync_feedback_read(argv[i], each, &c, bad_line,
					   &c.err) != 0) {
			fprintf(stderr, "autosync eval: %s\n", c.err.text);
			goto out;
		}
	fprintf(stderr,
		"autosync eval: %lu records: %zu points (%zu pooled with "
		"the same model, cluster and plan), %lu left out (fewer "
		"steps, no measurement or no cluster), %lu unreadable\n",
		c.records, autosync_dataset_npoints(c.d),
		autosync_dataset_npooled(c.d), c.skipped, c.bad);
	if (report(c.d, &c.err) < 0) {
		fprintf(stderr, "autosync eval: %s\n", c.err.text);
		goto out;
	}
	rv = 0;
out:
	autosync_dataset_destroy(c.d);
	return rv;
}
