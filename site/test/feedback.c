/* Unit tests for feedback records and the shared feedback log. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <math.h>
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
	r->influenced = 0;
	return r;
}

/* A record written before the *_bytes terms gets them from its buckets
 * (a 25 MiB ring bucket, compressed to fp16 here, and a 1e9-byte PS
 * bucket); one holding only some of them is refused. */
static void test_bytes_terms(const char *line)
{
	autosync_feedback_rec_t *back = calloc(1, sizeof(*back));
	autosync_error_t err = {.text = ""};
	char *old = strdup(line), *cut = strstr(old, ", \"ps_bytes\": ");
	char *half = strdup(line), *tree = strstr(half, "\"tree_bytes\": ");
	char *fp16 = strstr(old, "\"compress\": \"none\"");

	if (cut)
		memmove(cut, strchr(cut, '}'), strlen(strchr(cut, '}')) + 1);
	if (fp16)
		memcpy(fp16 + 13, "fp16", 4);
	ok(cut && fp16 &&
	       autosync_feedback_parse(old, strlen(old), back, &err) == 0 &&
	       back->terms[AUTOSYNC_TERM_PS_BYTES] == 1e9 &&
	       back->terms[AUTOSYNC_TERM_RING_BYTES] == 26214400 &&
	       back->terms[AUTOSYNC_TERM_TREE_BYTES] == 0 &&
	       back->terms[AUTOSYNC_TERM_HIER_BYTES] == 0 &&
	       back->terms[AUTOSYNC_TERM_COMPRESSED_BYTES] == 26214400 &&
	       back->terms[AUTOSYNC_TERM_LAYERS] == 0.025,
	   "no *_bytes terms: from the buckets (%s)", err.text);
	{
		/* the record's name of the algorithm is "hierarchical" */
		char *ring = strstr(old, "\"algo\": \"ring\""), *h;
		size_t at = ring ? (size_t)(ring - old) : 0;
		if (ring && (h = malloc(strlen(old) + 16))) {
			sprintf(h, "%.*s\"algo\": \"hierarchical\"%s", (int)at,
				old, ring + 14);
			ok(autosync_feedback_parse(h, strlen(h), back, &err) ==
				   0 &&
			       back->terms[AUTOSYNC_TERM_HIER_BYTES] ==
				   26214400 &&
			       back->terms[AUTOSYNC_TERM_RING_BYTES] == 0,
			   "no *_bytes terms: a hierarchical bucket (%s)",
			   err.text);
			free(h);
		}
	}
	if (tree)
		memcpy(tree, "\"tree_bytez", 11);
	ok(tree &&
	       autosync_feedback_parse(half, strlen(half), back, &err) == -1 &&
	       !strcmp(err.text, "field 'terms': not a valid value"),
	   "some *_bytes terms only: %s", err.text);
	{
		/* all but ps_bytes: refused too, never four replaced */
		char *nops = strdup(line),
		     *ps = nops ? strstr(nops, "\"ps_bytes\"") : NULL;
		if (ps)
			memcpy(ps, "\"ps_bytez\"", 10);
		ok(ps &&
		       autosync_feedback_parse(nops, strlen(nops), back,
					       &err) == -1 &&
		       !strcmp(err.text, "field 'terms': not a valid value"),
		   "the *_bytes terms without ps_bytes: %s", err.text);
		free(nops);
	}
	free(old);
	free(half);
	free(back);
}

/* Format 3's terms: written by name, read back exactly, each checked. */
static void test_terms(autosync_feedback_rec_t *r)
{
	autosync_feedback_rec_t *back = calloc(1, sizeof(*back));
	autosync_error_t err = {.text = ""};
	char *line = NULL, *cut;
	size_t len = 0;

	for (int i = 0; i < AUTOSYNC_TERM_N; i++)
		r->terms[i] = 0.001 * (i + 1);
	r->have_terms = 1;
	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       strstr(line, ", \"terms\": {\"forward_s\": 0.001, "
			    "\"backward_s\": 0.002, ") &&
	       strstr(line, "\"layers\": 0.025, \"ps_bytes\": 0.026, "
			    "\"tree_bytes\": 0.027, \"hier_bytes\": 0.028, "
			    "\"ring_bytes\": 0.029, \"compressed_bytes\": "
			    "0.03}"),
	   "terms by name, in order (%s)", err.text);
	ok(autosync_feedback_parse(line, len, back, &err) == 0 &&
	       back->have_terms,
	   "terms read back (%s)", err.text);
	for (int i = 0; i < AUTOSYNC_TERM_N; i++)
		if (fabs(back->terms[i] - r->terms[i]) > 1e-9 * r->terms[i])
			ok(0, "term %s: %.17g, not %.17g",
			   autosync_term_name(i), back->terms[i], r->terms[i]);
	test_bytes_terms(line);
	/* a record without one of this version's terms is refused */
	if (line && (cut = strstr(line, "\"forward_s\": 0.001, ")))
		memmove(cut, cut + 20, strlen(cut + 20) + 1);
	ok(autosync_feedback_parse(line, strlen(line), back, &err) == -1 &&
	       !strcmp(err.text, "field 'terms': not a valid value"),
	   "a term missing: %s", err.text);
	free(line);
	r->terms[AUTOSYNC_TERM_EXPOSED] = -1;
	ok(autosync_feedback_format(r, &line, &len, &err) == -1 &&
	       !strcmp(err.text,
		       "field 'terms': exposed_s: -1 is not a value >= 0"),
	   "a negative term: %s", err.text);
	r->have_terms = 0;
	free(back);
}

/* A PowerSGD bucket keeps its whole name (8 letters: it was cut to
 * "powersg" by a field of 8 bytes). */
static void test_powersgd(autosync_feedback_rec_t *r)
{
	autosync_feedback_rec_t *back = calloc(1, sizeof(*back));
	autosync_error_t err = {.text = ""};
	char *line = NULL;
	size_t len = 0;

	snprintf(r->buckets[0].compress, sizeof(r->buckets[0].compress), "%s",
		 autosync_compress_name(AUTOSYNC_COMPRESS_POWERSGD));
	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       strstr(line, "\"compress\": \"powersgd\"") &&
	       autosync_feedback_parse(line, len, back, &err) == 0 &&
	       !strcmp(back->buckets[0].compress, "powersgd"),
	   "a PowerSGD bucket: \"powersgd\", written and read back (%s)",
	   err.text);
	snprintf(r->buckets[0].compress, sizeof(r->buckets[0].compress),
		 "none");
	free(line);
	free(back);
}

/* The batch size a plan was made for (measured compute per sample):
 * written when known, read back, bounded. */
static void test_batch(autosync_feedback_rec_t *r)
{
	autosync_feedback_rec_t *back = calloc(1, sizeof(*back));
	autosync_error_t err = {.text = ""};
	char *line = NULL, *p;
	size_t len = 0;

	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       !strstr(line, "batch_size"),
	   "batch size unknown: not written");
	free(line);
	line = NULL;
	r->batch = 64;
	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       strstr(line, "\"scale\": 1.0, \"batch_size\": 64, ") &&
	       autosync_feedback_parse(line, len, back, &err) == 0 &&
	       back->batch == 64,
	   "batch_size written after scale and read back (%s)", err.text);
	if (line && (p = strstr(line, "\"batch_size\": 64"))) {
		char *big = malloc(len + 16);
		int n = snprintf(
		    big, len + 16, "%.*s\"batch_size\": 16777217%s",
		    (int)(p - line), line, p + strlen("\"batch_size\": 64"));
		ok(autosync_feedback_parse(big, (size_t)n, back, &err) == -1 &&
		       strstr(err.text, "batch_size"),
		   "a batch size over 2^24: refused (%s)", err.text);
		free(big);
	}
	r->batch = 0;
	free(line);
	free(back);
}

/* A plan of a learned simulator: its hash and corrected prediction ride
 * beside the analytic one, and are checked. */
static void test_simulator(autosync_feedback_rec_t *r)
{
	autosync_feedback_rec_t *back = calloc(1, sizeof(*back));
	autosync_error_t err = {.text = ""};
	char *line = NULL;
	size_t len = 0;

	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       !strstr(line, "simulator_hash") && !strstr(line, "learned"),
	   "no simulator: neither field is written");
	free(line);
	line = NULL;
	snprintf(r->simulator_hash, sizeof(r->simulator_hash),
		 "0a1b2c3d4e5f6789");
	r->learned = 0.25;
	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       strstr(line, "\"simulator_hash\": \"0a1b2c3d4e5f6789\", "
			    "\"learned_step_s\": 0.25"),
	   "simulator_hash and learned_step_s written (%s)", err.text);
	ok(autosync_feedback_parse(line, len, back, &err) == 0 &&
	       !strcmp(back->simulator_hash, r->simulator_hash) &&
	       back->learned == 0.25 && back->predicted == r->predicted,
	   "read back, the analytic prediction beside (%s)", err.text);
	free(line);
	line = NULL;
	r->learned = -1;
	ok(autosync_feedback_format(r, &line, &len, &err) == -1 &&
	       strstr(err.text, "learned_step_s"),
	   "a negative learned prediction is refused: %s", err.text);
	r->learned = 0.25;
	snprintf(r->simulator_hash, sizeof(r->simulator_hash),
		 "NOTHEX\x1b[31m");
	ok(autosync_feedback_format(r, &line, &len, &err) == -1 &&
	       !strcmp(err.text, "field 'simulator_hash': not 16 hex digits"),
	   "a simulator hash that is not 16 hex digits: %s", err.text);
	r->simulator_hash[0] = '\0';
	r->learned = 0;
	free(back);
}

static void test_format(void)
{
	autosync_feedback_rec_t *r = sample(), *back = calloc(1, sizeof(*back));
	autosync_error_t err = {.text = ""};
	char *line = NULL, *line2 = NULL;
	size_t len = 0, len2 = 0;

	r->influenced =
	    AUTOSYNC_FEEDBACK_F_MEASUREMENTS | AUTOSYNC_FEEDBACK_F_MODEL;
	ok(autosync_feedback_format(r, &line, &len, &err) == 0, "format (%s)",
	   err.text);
	ok(line && len > 0 && line[len - 1] == '\n' &&
	       memchr(line, '\n', len - 1) == NULL,
	   "one line ending in a newline");
	ok(line &&
	       strncmp(line,
		       "{\"version\": 3, \"time\": \"2025-12-02T10:40:00Z\", "
		       "\"source\": \"plugin\", \"job\": 42, \"step\": "
		       "4294967291, ",
		       92) == 0,
	   "JSON with an ISO time: %.100s", line ? line : "");
	ok(line && strstr(line,
			  "\"model\": \"bert-large \\\"quoted\\\" \\\\ é\"") !=
		       NULL,
	   "quotes and backslashes escaped as JSON does");
	ok(line &&
	       strstr(line,
		      ", \"user_influenced\": [\"model\", \"measured_step_s\", "
		      "\"measured_count\", \"measured_mean_s\"]}\n"),
	   "the fields the user could influence, by name, last");
	ok(autosync_feedback_parse(line, len, back, &err) == 0,
	   "parse back (%s)", err.text);
	is(back->model, r->model, "model round trip");
	ok(back->version == 3 && back->influenced == r->influenced,
	   "version and influence round trip");
	ok(back->time == r->time && back->job == 42 && back->step == r->step &&
	       back->uid == 1001 && back->nodes == 3 &&
	       back->gpus_per_node == 2,
	   "numbers round trip");
	ok(back->nbuckets == 2 && back->buckets[1].servers == 3 &&
	       back->buckets[0].bytes == 26214400 &&
	       !strcmp(back->buckets[0].algo, "ring"),
	   "buckets round trip");
	ok(back->nbaselines == 2 && back->baselines[1].predicted == 0.25,
	   "baselines round trip");
	ok(back->nmeasured == 3 && back->measured[1] == 0.125 &&
	       back->measured_mean == 0.125,
	   "measurements round trip");
	near(back->predicted, 0.123456789, 1e-12, "prediction round trip");
	ok(autosync_feedback_format(back, &line2, &len2, &err) == 0 &&
	       len2 == len && !memcmp(line, line2, len),
	   "format(parse(x)) == x");
	ok(strstr(line, "\"measured_median_s\": 0.125, \"measured_spread\": "
			"0.08") &&
	       !strstr(line, "\"terms\""),
	   "format 3: the measured median and spread (max - min) / median; "
	   "no terms when the record has none");
	free(line2);
	free(line);
	test_terms(r);
	test_simulator(r);
	test_batch(r);
	test_powersgd(r);

	/* JSON escaping: every byte of a name comes back, on one line */
	snprintf(r->model, sizeof(r->model),
		 "m \"q\" \\ \t\n\x01\x1b[2J\x7f caf\xc3\xa9 "
		 "\xe4\xb8\xad \xe2\x80\xae");
	snprintf(r->node, sizeof(r->node), "node\"1\\");
	snprintf(r->baselines[0].name, sizeof(r->baselines[0].name),
		 "b\"\\\x02");
	ok(autosync_feedback_format(r, &line, &len, &err) == 0 &&
	       memchr(line, '\n', len - 1) == NULL,
	   "control characters in a name: escaped, still one line (%s)",
	   err.text);
	ok(line && strstr(line, "\"model\": \"m \\\"q\\\" \\\\ "
				"\\t\\n\\u0001\\u001B[2J\x7f caf\xc3\xa9 "
				"\xe4\xb8\xad \xe2\x80\xae\""),
	   "JSON escapes: \\\" \\\\ \\t \\n \\u0001; UTF-8 kept: %s",
	   line ? line : "");
	ok(autosync_feedback_parse(line, len, back, &err) == 0 &&
	       !strcmp(back->model, r->model) && !strcmp(back->node, r->node) &&
	       !strcmp(back->baselines[0].name, r->baselines[0].name),
	   "and read back byte for byte (%s)", err.text);
	free(line);
	line = NULL;
	snprintf(r->model, sizeof(r->model), "bad \xff utf-8");
	errno = 0;
	ok(autosync_feedback_format(r, &line, &len, &err) < 0 &&
	       errno == EINVAL && !strcmp(err.text, "field 'model': not UTF-8"),
	   "a name that is not UTF-8 is refused: %s", err.text);
	free(line);
	free(r);
	free(back);
}

/* A whole, valid record as one line with 'from' replaced by 'to'. */
static char *edited(const char *from, const char *to)
{
	autosync_feedback_rec_t *r = sample();
	char *line = NULL, *out, *at;
	size_t len = 0;

	if (autosync_feedback_format(r, &line, &len, NULL) < 0)
		bail_out("format");
	free(r);
	if (!from && !to)
		return line;
	if (!from) {
		free(line);
		return strdup(to);
	}
	if (!(at = strstr(line, from)))
		bail_out("'%s' not in the record", from);
	out = malloc(len + strlen(to) + 1);
	snprintf(out, len + strlen(to) + 1, "%.*s%s%s", (int)(at - line), line,
		 to, at + strlen(from));
	free(line);
	return out;
}

static void test_validation(void)
{
	static const struct {
		const char *from, *to, *want;
	} bad[] = {
	    {NULL, "{}\n", "field 'version': missing"},
	    {NULL, "[]\n", "not a record (a JSON object)"},
	    {NULL, "{\"version\": 2}\n", "field 'time': missing"},
	    {"\"predicted_step_s\": 0.123456789", "\"predicted_step_s\": -0.1",
	     "field 'predicted_step_s': -0.1 is not a step time (1 us to 1 h)"},
	    {"\"predicted_step_s\": 0.123456789", "\"predicted_step_s\": 0",
	     "field 'predicted_step_s': 0 is not a step time (1 us to 1 h)"},
	    {"\"predicted_step_s\": 0.123456789",
	     "\"predicted_step_s\": 3601.0",
	     "field 'predicted_step_s': 3601 is not a step time (1 us to 1 h)"},
	    {"\"predicted_step_s\": 0.123456789",
	     "\"predicted_step_s\": \"0.1\"",
	     "field 'predicted_step_s': not a valid value"},
	    {"\"measured_step_s\": [0.13", "\"measured_step_s\": [1e-7",
	     "field 'measured_step_s': 1e-07 is not a step time (1 us to 1 h)"},
	    {"\"measured_mean_s\": 0.125", "\"measured_mean_s\": 7200.0",
	     "field 'measured_mean_s': 7200 is not a step time (1 us to 1 h)"},
	    {"\"measured_count\": 3", "\"measured_count\": 2",
	     "field 'measured_count': 2 is less than the 3 step times given"},
	    {"\"nodes\": 3", "\"nodes\": 0",
	     "field 'nodes': 0 is not a count (at least 1)"},
	    {"\"nodes\": 3", "\"nodes\": -3",
	     "field 'nodes': not a valid value"},
	    {"\"gpus_per_node\": 2", "\"gpus_per_node\": 0",
	     "field 'gpus_per_node': 0 is not a count (at least 1)"},
	    {"\"tensors\": 12", "\"tensors\": 0",
	     "field 'buckets': bucket 0 holds no tensor"},
	    {"\"job\": 42", "\"job\": 0", "field 'job': 0 is not a job id"},
	    {"\"node\": \"node2\"", "\"node\": \"\"", "field 'node': empty"},
	    {"\"source\": \"plugin\", ", "", "field 'source': missing"},
	    {"\"model\": \"bert-large \\\"quoted\\\" \\\\ é\"",
	     "\"model\": \"\"", "field 'model': empty"},
	    {"\"plan_hash\": \"00000000deadbeef\", ", "",
	     "field 'plan_hash': missing"},
	    {"\"strategy\": \"allreduce-buckets\"", "\"strategy\": 7",
	     "field 'strategy': not a valid value"},
	    {", \"user_influenced\": []", "",
	     "field 'user_influenced': missing"},
	    {"\"user_influenced\": []", "\"user_influenced\": [\"everything\"]",
	     "field 'user_influenced': not a valid value"},
	    {"\"version\": 3", "\"version\": 4",
	     "field 'version': format 4 is not one this autosync reads (1 to "
	     "3)"},
	    {"\"version\": 3", "\"version\": \"2\"",
	     "field 'version': not a number"},
	    {"\"step\": 4294967291, ", "\"step\": 1, \"step\": 2, ",
	     "not JSON: duplicate object key near '\"step\"' (column 95)"},
	    {"\"time\": \"2025-12-02T10:40:00Z\"", "\"time\": \"yesterday\"",
	     "field 'time': not a valid value"},
	};
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r));
	autosync_error_t err;
	char *line;

	line = edited(NULL, NULL);
	ok(autosync_feedback_parse(line, strlen(line), r, &err) == 0,
	   "the sample record is valid (%s)", err.text);
	free(line);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		line = edited(bad[i].from, bad[i].to);
		err.text[0] = '\0';
		errno = 0;
		ok(autosync_feedback_parse(line, strlen(line), r, &err) < 0 &&
		       errno == EINVAL && !strcmp(err.text, bad[i].want),
		   "refused: %s (got: %s)", bad[i].want, err.text);
		free(line);
	}

	/* on writing, the same checks */
	{
		autosync_feedback_rec_t *w = sample();
		char *l = NULL;
		size_t n;

		w->predicted = -0.5;
		ok(autosync_feedback_format(w, &l, &n, &err) < 0 &&
		       errno == EINVAL &&
		       !strcmp(err.text,
			       "field 'predicted_step_s': -0.5 is not a "
			       "step time (1 us to 1 h)"),
		   "a negative prediction is not written: %s", err.text);
		w->predicted = 0.1;
		w->node[0] = '\0';
		ok(autosync_feedback_format(w, &l, &n, &err) < 0 &&
		       !strcmp(err.text, "field 'node': empty"),
		   "nor a record without its node: %s", err.text);
		ok(autosync_feedback_format_part(w, AUTOSYNC_FEEDBACK_PART_PLAN,
						 &l, &n, &err) == 0,
		   "the plan's side alone is (%s)", err.text);
		free(l);
		w->job = 0;
		snprintf(w->node, sizeof(w->node), "n1");
		ok(autosync_feedback_format(w, &l, &n, &err) < 0 &&
		       !strcmp(err.text, "field 'job': 0 is not a job id"),
		   "a step's record needs its job id");
		snprintf(w->source, sizeof(w->source), "bench");
		ok(autosync_feedback_format(w, &l, &n, &err) == 0,
		   "a trial run outside Slurm has none (%s)", err.text);
		free(l);
		free(w);
	}

	/* version 1: read, and said so; every field counts as influenced */
	line = edited("\"version\": 3", "\"version\": 2");
	ok(autosync_feedback_parse(line, strlen(line), r, &err) == 0 &&
	       r->version == 2,
	   "a format 2 record is read (%s)", err.text);
	free(line);
	line = edited("\"version\": 3", "\"version\": 1");
	{
		char *cut = strstr(line, ", \"user_influenced\"");
		strcpy(cut, "}\n");
	}
	ok(autosync_feedback_parse(line, strlen(line), r, &err) == 0 &&
	       r->version == 1 && r->influenced == AUTOSYNC_FEEDBACK_F_ALL,
	   "a version 1 record is read as version 1, all of it the user's (%s)",
	   err.text);
	free(line);
	is(autosync_feedback_field_name(AUTOSYNC_FEEDBACK_F_PREDICTED),
	   "predicted_step_s", "field names");
	ok(autosync_feedback_field_name(3) == NULL, "one bit at a time");
	free(r);
}

static int count_cb(const autosync_feedback_rec_t *r, void *arg)
{
	(*(unsigned long *)arg) += r->job;
	return 0;
}

static void count_bad(const char *msg, void *arg)
{
	(void)arg;
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
	autosync_error_t err = {.text = ""};
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
				r->job = (uint64_t)(p * 1000 + i + 1);
				if (autosync_feedback_format(r, &line, &len,
							     NULL) < 0 ||
				    autosync_feedback_append(path, line, len, 0,
							     0, NULL) < 0)
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
			want += (unsigned long)(p * 1000 + i + 1);
	ok(failed == 0, "16 concurrent writers succeed");
	scan(path, 0, &sum, &lines);
	ok(lines == (unsigned long)(procs * per), "%lu lines for %d records",
	   lines, procs * per);
	ok(sum == want, "every record parses, none lost or mixed");

	/* The same with rotation every few records. */
	unlink(path);
	sum = lines = 0;
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (int i = 0; i < per; i++) {
				r->job = (uint64_t)(p * 1000 + i + 1);
				if (autosync_feedback_format(r, &line, &len,
							     NULL) < 0 ||
				    autosync_feedback_append(
					path, line, len, 20000, 1000, NULL) < 0)
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
	ok(lines == (unsigned long)(procs * per) && sum == want,
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
		ok(stat(path, &st) == 0 && (size_t)st.st_size <= 4 * len,
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
