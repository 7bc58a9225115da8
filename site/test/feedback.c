/* Unit tests for feedback records and the shared feedback log. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "tap.h"

static char dir[] = "/tmp/autosync-feedback-XXXXXX";

static autosync_feedback_rec_t *sample(void)
{
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r));

	r->time = 1764672000; /* 2025-12-02T10:40:00Z */
	snprintf(r->source, sizeof(r->source), "plugin");
	r->job = 42;
	r->step = 4294967291ULL;
	snprintf(r->user, sizeof(r->user), "alice");
	r->uid = 1001;
	snprintf(r->node, sizeof(r->node), "node2");
	r->nodes = 3;
	r->gpus_per_node = 2;
	snprintf(r->model, sizeof(r->model), "bert-large \"quoted\" \\ é");
	snprintf(r->model_hash, sizeof(r->model_hash), "0123456789abcdef");
	snprintf(r->topo_hash, sizeof(r->topo_hash), "fedcba9876543210");
	snprintf(r->plan_hash, sizeof(r->plan_hash), "00000000deadbeef");
	snprintf(r->framework, sizeof(r->framework), "pytorch-ddp");
	snprintf(r->strategy, sizeof(r->strategy), "allreduce-buckets");
	r->predicted = 0.123456789;
	r->nbuckets = 2;
	snprintf(r->buckets[0].kind, 16, "allreduce");
	snprintf(r->buckets[0].algo, 16, "ring");
	snprintf(r->buckets[0].compress, 8, "none");
	r->buckets[0].tensors = 12;
	r->buckets[0].bytes = 26214400;
	snprintf(r->buckets[1].kind, 16, "ps");
	snprintf(r->buckets[1].compress, 8, "none");
	r->buckets[1].servers = 3;
	r->buckets[1].tensors = 1;
	r->buckets[1].bytes = 1e9;
	r->nbaselines = 2;
	snprintf(r->baselines[0].name, 32, "ddp-default");
	r->baselines[0].predicted = 0.2;
	snprintf(r->baselines[1].name, 32, "horovod-default");
	r->baselines[1].predicted = 0.25;
	r->nmeasured = 3;
	r->measured[0] = 0.13;
	r->measured[1] = 0.125;
	r->measured[2] = 0.12;
	r->measured_count = 3;
	r->measured_mean = 0.125;
	r->influenced = AUTOSYNC_FEEDBACK_USER_MEASURED | AUTOSYNC_FEEDBACK_USER_MODEL;
	return r;
}

static void test_format(void)
{
	autosync_feedback_rec_t *r = sample(), *back = calloc(1, sizeof(*back));
	autosync_error_t err = { .text = "" };
	char *line = NULL, *line2 = NULL;
	size_t len = 0, len2 = 0;

	ok(autosync_feedback_format(r, &line, &len, &err) == 0, "format (%s)",
	   err.text);
	ok(line && len > 0 && line[len - 1] == '\n' &&
		   memchr(line, '\n', len - 1) == NULL,
	   "one line ending in a newline");
	ok(line && strncmp(line, "{\"version\": 2, \"time\": \"2025-12-02T10:40:00Z\", "
				 "\"source\": \"plugin\", \"job\": 42, \"step\": "
				 "4294967291, ", 92) == 0,
	   "JSON with an ISO time: %.100s", line ? line : "");
	ok(line && strstr(line, "\"model\": \"bert-large \\\"quoted\\\" \\\\ é\"") != NULL,
	   "quotes and backslashes escaped as JSON does");
	ok(autosync_feedback_parse(line, len, back, &err) == 0, "parse back (%s)",
	   err.text);
	is(back->model, r->model, "model round trip");
	ok(line && strstr(line, ", \"user_influenced\": [\"measured\", \"model\"]}"),
	   "what the user could influence, by name");
	ok(back->influenced == r->influenced && back->version == 2,
	   "and read back, with the version");
	ok(back->time == r->time && back->job == 42 && back->step == r->step &&
		   back->uid == 1001 && back->nodes == 3 && back->gpus_per_node == 2,
	   "numbers round trip");
	ok(back->nbuckets == 2 && back->buckets[1].servers == 3 &&
		   back->buckets[0].bytes == 26214400 && !strcmp(back->buckets[0].algo, "ring"),
	   "buckets round trip");
	ok(back->nbaselines == 2 && back->baselines[1].predicted == 0.25,
	   "baselines round trip");
	ok(back->nmeasured == 3 && back->measured[1] == 0.125 &&
		   back->measured_mean == 0.125,
	   "measurements round trip");
	near(back->predicted, 0.123456789, 1e-12, "prediction round trip");
	ok(autosync_feedback_format(back, &line2, &len2, &err) == 0 && len2 == len &&
		   !memcmp(line, line2, len),
	   "format(parse(x)) == x");
	free(line2);

	snprintf(r->user, sizeof(r->user), "evil\nuser");
	errno = 0;
	ok(autosync_feedback_format(r, &line2, &len2, &err) < 0 && errno == EINVAL,
	   "a newline in a field is refused");
	ok(autosync_feedback_parse("{\"version\": 1, \"job\": -3}\n", 26, back, &err) < 0 &&
		   !strcmp(err.text, "bad field 'job'"),
	   "bad field named: %s", err.text);

	ok(autosync_feedback_parse("[1, 2", 5, back, &err) < 0, "not YAML");
	free(line);
	free(r);
	free(back);
}

/* A record is checked on write and on read: required fields, step times
 * within 1 us .. 1 h, counts of at least 1; version 1 records still read. */
static void test_validation(void)
{
	static const struct {
		const char *what, *from, *to, *want;
	} cases[] = {
		{ "a negative prediction", "\"predicted_step_s\": 0.123456789",
		  "\"predicted_step_s\": -1", "field 'predicted_step_s': -1 is not a step time (1e-06 to 3600 s)" },
		{ "a prediction of two hours", "\"predicted_step_s\": 0.123456789",
		  "\"predicted_step_s\": 7200", "field 'predicted_step_s': 7200 is not a step time" },
		{ "a zero step time", "\"measured_step_s\": [0.13, ",
		  "\"measured_step_s\": [0, ", "field 'measured_step_s': 0 is not a step time" },
		{ "no nodes", "\"nodes\": 3", "\"nodes\": 0", "field 'nodes': 0 is not a count (at least 1)" },
		{ "an empty node", "\"node\": \"node2\"", "\"node\": \"\"", "field 'node' is missing or empty" },
		{ "no strategy", "\"strategy\": \"allreduce-buckets\", ", "", "field 'strategy' is missing" },
		{ "no user_influenced in version 2", ", \"user_influenced\": [\"measured\", \"model\"]", "",
		  "field 'user_influenced' is missing" },
		{ "an unknown influence", "[\"measured\", \"model\"]", "[\"magic\"]", "bad field 'user_influenced'" },
		{ "a key given twice", "\"nodes\": 3", "\"nodes\": 3, \"nodes\": 4", "key 'nodes' given twice" },
		{ "a count below its step times", "\"measured_count\": 3", "\"measured_count\": 2",
		  "field 'measured_count': 2 is less than the 3 step times given" },
		{ "a future version", "\"version\": 2", "\"version\": 3", "bad field 'version'" },
	};
	autosync_feedback_rec_t *r = sample(), *back = calloc(1, sizeof(*back));
	autosync_error_t err = { .text = "" };
	char *line = NULL, buf[8192];
	size_t len = 0;

	if (autosync_feedback_format(r, &line, &len, &err) < 0)
		bail_out("format: %s", err.text);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *at = strstr(line, cases[i].from);
		if (!at)
			bail_out("'%s' not in the record", cases[i].from);
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int) (at - line), line, cases[i].to,
			 at + strlen(cases[i].from));
		ok(autosync_feedback_parse(buf, strlen(buf), back, &err) < 0 && errno == EINVAL &&
			   strstr(err.text, cases[i].want),
		   "read: %s is refused (%s)", cases[i].what, err.text);
	}
	ok(autosync_feedback_parse("{}", 2, back, &err) < 0 &&
		   !strcmp(err.text, "field 'version' is missing"),
	   "read: {} is no record (%s)", err.text);
	/* the same checks on write */
	r->predicted = -0.5;
	ok(autosync_feedback_format(r, &line, &len, &err) < 0 &&
		   !strcmp(err.text, "field 'predicted_step_s': -0.5 is not a step time (1e-06 to 3600 s)"),
	   "write: a negative prediction is refused (%s)", err.text);
	r->predicted = 0.1;
	r->gpus_per_node = 0;
	ok(autosync_feedback_format(r, &line, &len, &err) < 0 &&
		   strstr(err.text, "'gpus_per_node': 0 is not a count"),
	   "write: no GPUs is refused (%s)", err.text);
	r->gpus_per_node = 2;
	r->plan_hash[0] = '\0';
	ok(autosync_feedback_format(r, &line, &len, &err) < 0 &&
		   !strcmp(err.text, "field 'plan_hash' is missing or empty"),
	   "write: no plan hash is refused (%s)", err.text);
	free(line);
	/* version 1: no user_influenced; read, and said */
	snprintf(buf, sizeof(buf), "{\"version\": 1, \"time\": \"2025-12-02T10:40:00Z\", "
		 "\"source\": \"plugin\", \"job\": 1, \"step\": 0, \"node\": \"n\", "
		 "\"nodes\": 2, \"gpus_per_node\": 4, \"model\": \"m\", \"model_hash\": \"\", "
		 "\"plan_hash\": \"p\", \"framework\": \"generic\", \"strategy\": \"s\", "
		 "\"predicted_step_s\": 0.5, \"measured_count\": 0, \"measured_mean_s\": 0}\n");
	ok(autosync_feedback_parse(buf, strlen(buf), back, &err) == 0 && back->version == 1 &&
		   back->influenced == AUTOSYNC_FEEDBACK_USER_UNKNOWN,
	   "a version 1 record reads, marked as not saying what the user influenced (%s)",
	   err.text);
	free(back);
	free(r);
}

static int count_cb(const autosync_feedback_rec_t *r, void *arg)
{
	(*(unsigned long *) arg) += r->job;
	return 0;
}

static void count_bad(const char *msg, void *arg)
{
	(void) arg;
	diag("bad: %s", msg);
}

/* Sum of job ids over a log and its rotated files, and the line count. */
static void scan(const char *path, unsigned keep, unsigned long *sum,
		 unsigned long *lines)
{
	char p[512];

	for (unsigned i = 0; i <= keep; i++) {
		FILE *fp;
		int ch;

		if (i == 0)
			snprintf(p, sizeof(p), "%s", path);
		else
			snprintf(p, sizeof(p), "%s.%u", path, i);
		if (!(fp = fopen(p, "r")))
			continue;
		while ((ch = fgetc(fp)) != EOF)
			*lines += ch == '\n';
		fclose(fp);
		autosync_feedback_read(p, count_cb, sum, count_bad, NULL);
	}
}

static void test_log(void)
{
	autosync_feedback_rec_t *r = sample();
	autosync_error_t err = { .text = "" };
	char path[256], link[256], *line = NULL;
	size_t len = 0;
	const int procs = 16, per = 40;
	unsigned long sum = 0, lines = 0, want = 0;
	int failed = 0;

	snprintf(path, sizeof(path), "%s/feedback.jsonl", dir);
	/* Many writers at once, no rotation: every record, whole. */
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < per; i++) {
				r->job = (uint64_t) (p * 1000 + i);
				if (autosync_feedback_format(r, &line, &len, NULL) < 0 ||
				    autosync_feedback_append(path, line, len, 0, 0, NULL) < 0)
					_exit(1);
				free(line);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < procs; p++) {
		int st;
		wait(&st);
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	for (int p = 0; p < procs; p++)
		for (int i = 0; i < per; i++)
			want += (unsigned long) (p * 1000 + i);
	ok(failed == 0, "16 concurrent writers succeed");
	scan(path, 0, &sum, &lines);
	ok(lines == (unsigned long) (procs * per), "%lu lines for %d records",
	   lines, procs * per);
	ok(sum == want, "every record parses, none lost or mixed");

	/* The same with rotation every few records. */
	unlink(path);
	sum = lines = 0;
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < per; i++) {
				r->job = (uint64_t) (p * 1000 + i);
				if (autosync_feedback_format(r, &line, &len, NULL) < 0 ||
				    autosync_feedback_append(path, line, len, 20000, 1000,
							     NULL) < 0)
					_exit(1);
				free(line);
			}
			_exit(0);
		}
	}
	failed = 0;
	for (int p = 0; p < procs; p++) {
		int st;
		wait(&st);
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	ok(failed == 0, "concurrent writers with rotation succeed");
	scan(path, 1000, &sum, &lines);
	ok(lines == (unsigned long) (procs * per) && sum == want,
	   "rotation loses and mixes nothing (%lu lines)", lines);

	/* Bounded: keep=2 leaves at most 3 files, each under the limit. */
	snprintf(path, sizeof(path), "%s/bounded.jsonl", dir);
	autosync_feedback_format(r, &line, &len, NULL);
	for (int i = 0; i < 50; i++)
		autosync_feedback_append(path, line, len, 4 * len, 2, NULL);
	{
		char p3[300];
		struct stat st;
		snprintf(p3, sizeof(p3), "%s.3", path);
		ok(access(p3, F_OK) != 0, "keep=2: no third rotated file");
		ok(stat(path, &st) == 0 && (size_t) st.st_size <= 4 * len,
		   "the live log stays under max_bytes");
	}

	/* Never follow a symlink. */
	snprintf(link, sizeof(link), "%s/link.jsonl", dir);
	if (symlink("/etc/passwd", link) == 0) {
		errno = 0;
		ok(autosync_feedback_append(link, line, len, 0, 0, &err) < 0 &&
			   errno == ELOOP,
		   "a symlinked log is refused: %s", err.text);
	}
	ok(autosync_feedback_append(path, "two\nlines\n", 10, 0, 0, &err) < 0 &&
		   errno == EINVAL,
	   "a multi-line record is refused");

	/* Malformed lines are reported and skipped. */
	{
		FILE *fp;
		char p2[300];
		unsigned long s2 = 0;
		snprintf(p2, sizeof(p2), "%s/mixed.jsonl", dir);
		fp = fopen(p2, "w");
		fputs(line, fp);
		fputs("garbage {\n", fp);
		fputs(line, fp);
		fclose(fp);
		ok(autosync_feedback_read(p2, count_cb, &s2, NULL, NULL) == 0 &&
			   s2 == 2 * r->job,
		   "bad line skipped, good ones read");
	}
	free(line);
	free(r);
}

int main(void)
{
	plan(NO_PLAN);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_format();
	test_validation();
	test_log();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
