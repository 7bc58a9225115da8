/* feedback.c - 'autosync feedback': list and summarise feedback records. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "autosync/siteconf.h"
#include "cli.h"
#include "common/text.h"

/* models summarised; the records of further ones are counted and said */
#define MAX_MODELS 65536

struct summary {
	char model[256];
	unsigned long records, measured;
	double pred_sum, meas_sum, ape_sum; /* APE over records with both */
};

struct ctx {
	int64_t since;
	unsigned long job; /* --job: 0 = all */
	const char *model;
	int quiet;
	unsigned long shown;
	unsigned long v1; /* records of format 1 read */
	size_t nmodels, cap;
	struct summary *models;
	unsigned long unsummarised; /* records past MAX_MODELS models */
};

/* the model's summary, added when new; NULL past MAX_MODELS (or memory) */
static struct summary *summary_of(struct ctx *c, const char *model)
{
	for (size_t i = 0; i < c->nmodels; i++)
		if (!strcmp(c->models[i].model, model))
			return &c->models[i];
	if (c->nmodels == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct summary *m;
		if (cap > MAX_MODELS ||
		    !(m = realloc(c->models, cap * sizeof(*m))))
			return NULL;
		c->models = m;
		c->cap = cap;
	}
	memset(&c->models[c->nmodels], 0, sizeof(c->models[0]));
	snprintf(c->models[c->nmodels].model, sizeof(c->models[0].model), "%s",
		 model);
	return &c->models[c->nmodels++];
}

static void usage(FILE *fp)
{
	char text[512];

	fprintf(fp,
		"usage: autosync feedback [--file LOG | --config FILE | "
		"--job ID [--dir DIR]]\n"
		"                         [--since WHEN] [--model NAME] "
		"[--summary]\n\n"
		"List feedback records (plan, strategy, prediction, "
		"measurement) and\nsummarise predicted against measured step "
		"times per model.\n\n");
	cli_help(fp, "    --file LOG",
		 "the feedback log (default: the site "
		 "config's feedback.path)");
	snprintf(text, sizeof(text), "site config (default %s)",
		 cli_site_config_path());
	cli_help(fp, "-c, --config FILE", text);
	cli_help(fp, "    --job ID",
		 "the records a job's steps left on this "
		 "node, in their job directories (kept for the site's "
		 "keep_job_files)");
	cli_help(fp, "-d, --dir DIR",
		 "where those are (default: the site's "
		 "runtime_dir, else /run/autosync)");
	cli_help(fp, "    --since WHEN",
		 "2026-12-01, 2026-12-01T10:00:00Z, "
		 "epoch seconds, or 30m, 12h, 7d ago");
	cli_help(fp, "-m, --model NAME", "only this model");
	cli_help(fp, "    --summary", "only the per-model summary");
	cli_help(fp, "-h, --help", "this help");
}

static int each(const autosync_feedback_rec_t *r, void *arg)
{
	struct ctx *c = arg;
	struct summary *s = NULL;
	char when[32];
	struct tm tm;
	time_t t = (time_t)r->time;

	if (r->time < c->since || (c->model && strcmp(c->model, r->model)) ||
	    (c->job && r->job != c->job))
		return 0;
	c->v1 += r->version == 1;
	if (!(s = summary_of(c, r->model)))
		c->unsummarised++;
	if (s) {
		s->records++;
		s->pred_sum += r->predicted;
		if (r->measured_count > 0 && r->measured_mean > 0) {
			s->measured++;
			s->meas_sum += r->measured_mean;
			s->ape_sum += fabs(r->predicted - r->measured_mean) /
				      r->measured_mean;
		}
	}
	if (c->quiet)
		return 0;
	if (!c->shown++)
		printf("%-20s %-14s %-8s %-16s %7s %-22s %12s %12s %8s\n",
		       "time", "job.step", "node", "model", "nodesxg",
		       "strategy", "predicted_ms", "measured_ms", "error");
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	{
		char js[32], ng[16], meas[16] = "-", err[16] = "-";
		if (r->step == 4294967291ULL)
			snprintf(js, sizeof(js), "%" PRIu64 ".batch", r->job);
		else
			snprintf(js, sizeof(js), "%" PRIu64 ".%" PRIu64, r->job,
				 r->step);
		snprintf(ng, sizeof(ng), "%ux%u", r->nodes, r->gpus_per_node);
		if (r->measured_count > 0 && r->measured_mean > 0) {
			snprintf(meas, sizeof(meas), "%.3f",
				 r->measured_mean * 1e3);
			snprintf(err, sizeof(err), "%+.1f%%",
				 (r->predicted - r->measured_mean) /
				     r->measured_mean * 100);
		}
		/* names come from jobs: no control or bidi character reaches
		 * the terminal */
		char node[80], model[300], strat[80];
		printf("%-20s %-14s %-8s %-16s %7s %-22s %12.3f %12s %8s\n",
		       when, js, asi_quote(r->node, node, sizeof(node)),
		       asi_quote(r->model, model, sizeof(model)), ng,
		       r->strategy[0]
			   ? asi_quote(r->strategy, strat, sizeof(strat))
			   : "-",
		       r->predicted * 1e3, meas, err);
	}
	return 0;
}

static void bad_line(const char *msg, void *arg)
{
	char q[1024];

	(void)arg;
	fprintf(stderr, "autosync: skipped %s\n", asi_quote(msg, q, sizeof(q)));
}

/* "autosync-<uid>-<job>.<step>.<node>[.random]": this job's, and the
 * caller's unless root */
static int job_entry(const char *name, unsigned long job)
{
	unsigned long uid, j;
	int n = 0;

	if (sscanf(name, "autosync-%lu-%lu.%n", &uid, &j, &n) != 2 || !n)
		return 0;
	return j == job && (getuid() == 0 || uid == (unsigned long)getuid());
}

/* The records a job's steps left in their job directories under 'base'. */
static int read_job(const char *base, struct ctx *c, autosync_error_t *err)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[4096];
	int found = 0;

	if (!d)
		return autosync_errprintf(err, "%s: %s", base, strerror(errno));
	while ((e = readdir(d))) {
		if (!job_entry(e->d_name, c->job))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s/%s", base,
				     e->d_name,
				     "feedback.json") >= sizeof(path) ||
		    access(path, R_OK) < 0)
			continue; /* still running, or not planned */
		if (autosync_feedback_read(path, each, c, bad_line, err) < 0) {
			closedir(d);
			return -1;
		}
		found++;
	}
	closedir(d);
	if (!found) {
		errno = ENOENT;
		return autosync_errprintf(err,
					  "no records of job %lu in %s "
					  "(a job's directories stay on the "
					  "nodes that ran it, for the site's "
					  "keep_job_files)",
					  c->job, base);
	}
	return 0;
}

int autosync_cmd_feedback(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"file", required_argument, NULL, 'f'},
	    {"config", required_argument, NULL, 'c'},
	    {"since", required_argument, NULL, 's'},
	    {"model", required_argument, NULL, 'm'},
	    {"summary", no_argument, NULL, 'S'},
	    {"job", required_argument, NULL, 'j'},
	    {"dir", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	autosync_error_t err = {.text = ""};
	struct ctx *c = calloc(1, sizeof(*c));
	const char *file = NULL, *config = NULL, *jobdirs = NULL;
	char defconf[4096], logpath[4096];
	autosync_siteconf_t *site = NULL;
	int opt, rv = 1;

	if (!c) {
		fprintf(stderr, "autosync: out of memory\n");
		return 1;
	}
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:m:d:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			file = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 's':
			if (cli_when(optarg, &c->since) < 0) {
				fprintf(
				    stderr,
				    "autosync feedback: --since: bad "
				    "value '%s' (expected e.g. 2026-12-01, 12h "
				    "or 7d)\n",
				    optarg);
				rv = 2;
				goto out;
			}
			break;
		case 'm':
			c->model = optarg;
			break;
		case 'S':
			c->quiet = 1;
			break;
		case 'j': {
			char *e;
			errno = 0;
			c->job = strtoul(optarg, &e, 10);
			if (errno || e == optarg || *e || !c->job ||
			    *optarg == '-') {
				fprintf(
				    stderr,
				    "autosync feedback: --job: bad "
				    "value '%s' (expected a Slurm job id)\n",
				    optarg);
				rv = 2;
				goto out;
			}
			break;
		}
		case 'd':
			jobdirs = optarg;
			break;
		case 'h':
			usage(stdout);
			rv = 0;
			goto out;
		default:
			rv = cli_bad_option("feedback", opt, argv, opts);
			goto out;
		}
	}
	if (optind != argc) {
		fprintf(stderr,
			"autosync feedback: unexpected argument '%s'\n"
			"Try 'autosync help feedback'.\n",
			argv[optind]);
		rv = 2;
		goto out;
	}
	if (c->job && !file) {
		if (!jobdirs) {
			snprintf(defconf, sizeof(defconf),
				 "%s/autosync/autosync.yaml",
				 AUTOSYNC_SYSCONFDIR);
			if ((config || access(defconf, F_OK) == 0) &&
			    !(site = autosync_siteconf_load(
				  config ? config : defconf, &err))) {
				fprintf(stderr, "autosync: %s\n",
					CLI_Q(err.text));
				goto out;
			}
			snprintf(logpath, sizeof(logpath), "%s",
				 site && autosync_siteconf_runtime_dir(site)[0]
				     ? autosync_siteconf_runtime_dir(site)
				     : "/run/autosync");
			jobdirs = logpath;
		}
		if (read_job(jobdirs, c, &err) < 0) {
			fprintf(stderr, "autosync: %s\n", CLI_Q(err.text));
			goto out;
		}
	} else if (!file) {
		if (!config) {
			snprintf(defconf, sizeof(defconf),
				 "%s/autosync/autosync.yaml",
				 AUTOSYNC_SYSCONFDIR);
			config = defconf;
		}
		if (!(site = autosync_siteconf_load(config, &err))) {
			fprintf(stderr, "autosync: %s\n", CLI_Q(err.text));
			goto out;
		}
		if (!autosync_siteconf_feedback_path(site)[0]) {
			fprintf(stderr,
				"autosync: %s sets no feedback.path; "
				"use --file\n",
				config);
			goto out;
		}
		snprintf(logpath, sizeof(logpath), "%s",
			 autosync_siteconf_feedback_path(site));
		file = logpath;
	}
	if (file && autosync_feedback_read(file, each, c, bad_line, &err) < 0) {
		fprintf(stderr, "autosync: %s\n", CLI_Q(err.text));
		goto out;
	}
	if (c->shown || c->quiet)
		printf("%s", c->quiet ? "" : "\n");
	if (c->v1)
		fprintf(stderr,
			"autosync: note: %lu record%s of feedback format "
			"1 (they do not say which fields the job's user could "
			"influence: all are counted as the user's)\n",
			c->v1, c->v1 == 1 ? "" : "s");
	printf("%-24s %8s %9s %13s %13s %8s\n", "model", "records", "measured",
	       "mean_pred_ms", "mean_meas_ms", "MAPE");
	for (size_t i = 0; i < c->nmodels; i++) {
		struct summary *s = &c->models[i];
		char mm[16] = "-", mape[16] = "-";
		if (s->measured) {
			snprintf(mm, sizeof(mm), "%.3f",
				 s->meas_sum / s->measured * 1e3);
			snprintf(mape, sizeof(mape), "%.1f%%",
				 s->ape_sum / s->measured * 100);
		}
		char model[300];
		printf("%-24s %8lu %9lu %13.3f %13s %8s\n",
		       asi_quote(s->model, model, sizeof(model)), s->records,
		       s->measured, s->pred_sum / s->records * 1e3, mm, mape);
	}
	if (c->unsummarised)
		fprintf(stderr,
			"autosync: note: %lu record%s of models past the "
			"first %d not summarised\n",
			c->unsummarised, c->unsummarised == 1 ? "" : "s",
			MAX_MODELS);
	rv = 0;
out:
	autosync_siteconf_destroy(site);
	if (c)
		free(c->models);
	free(c);
	return rv;
}
