/* feedback.c - feedback records (JSON lines through jansson) and the
 * shared log (autosync/feedback.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <stdarg.h>

#include "autosync/feedback.h"
#include "autosync/planner.h"
#include "common/readfile.h"

/* ------------------------------------------------------------ fields */

/* the JSON names of the AUTOSYNC_FEEDBACK_F_* bits, in bit order */
static const char *const field_names[] = {
    "time",
    "source",
    "job",
    "step",
    "user",
    "uid",
    "node",
    "nodes",
    "gpus_per_node",
    "model",
    "model_hash",
    "topo_hash",
    "plan_hash",
    "framework",
    "strategy",
    "cluster",
    "scale",
    "predicted_step_s",
    "buckets",
    "baselines",
    "measured_step_s",
    "measured_count",
    "measured_mean_s",
    "terms",
    "simulator_hash",
    "learned_step_s",
    "batch_size",
};
#define NFIELDS (sizeof(field_names) / sizeof(field_names[0]))

const char *autosync_feedback_field_name(unsigned field)
{
	for (unsigned i = 0; i < NFIELDS; i++)
		if (field == 1u << i)
			return field_names[i];
	return NULL;
}

/* ------------------------------------------------------------ checking */

static int bad_field(autosync_error_t *errp, const char *field, const char *fmt,
		     ...) __attribute__((format(printf, 3, 4)));

static int bad_field(autosync_error_t *errp, const char *field, const char *fmt,
		     ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	errno = EINVAL;
	return autosync_errprintf(errp, "field '%s': %s", field, why);
}

static int step_time(const char *field, double t, autosync_error_t *errp)
{
	if (t >= AUTOSYNC_FEEDBACK_MIN_STEP && t <= AUTOSYNC_FEEDBACK_MAX_STEP)
		return 0;
	return bad_field(errp, field, "%g is not a step time (1 us to 1 h)", t);
}

static int terminated(const char *s, size_t max)
{
	return strnlen(s, max) < max;
}

static int check_plan(const autosync_feedback_rec_t *r, autosync_error_t *errp)
{
	const struct {
		const char *name, *v;
		size_t max;
	} need[] = {
	    {"model", r->model, sizeof(r->model)},
	    {"plan_hash", r->plan_hash, sizeof(r->plan_hash)},
	    {"framework", r->framework, sizeof(r->framework)},
	    {"strategy", r->strategy, sizeof(r->strategy)},
	};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!terminated(need[i].v, need[i].max) || !need[i].v[0])
			return bad_field(errp, need[i].name, "empty");
	if (r->nodes < 1)
		return bad_field(errp, "nodes",
				 "%u is not a count (at least 1)", r->nodes);
	if (r->gpus_per_node < 1)
		return bad_field(errp, "gpus_per_node",
				 "%u is not a count (at "
				 "least 1)",
				 r->gpus_per_node);
	if (step_time("predicted_step_s", r->predicted, errp) < 0)
		return -1;
	if (!(r->scale == 0 || (r->scale >= 1 && isfinite(r->scale))))
		return bad_field(errp, "scale",
				 "%g is not a scale (at least 1)", r->scale);
	if (r->nbuckets > AUTOSYNC_FEEDBACK_MAX_BUCKETS)
		return bad_field(errp, "buckets", "more than %d",
				 AUTOSYNC_FEEDBACK_MAX_BUCKETS);
	for (size_t i = 0; i < r->nbuckets; i++) {
		const autosync_feedback_bucket_t *b = &r->buckets[i];
		if (b->tensors < 1)
			return bad_field(errp, "buckets",
					 "bucket %zu holds no "
					 "tensor",
					 i);
		if (!(b->bytes >= 0 && isfinite(b->bytes)))
			return bad_field(errp, "buckets",
					 "bucket %zu: %g is not "
					 "a size",
					 i, b->bytes);
		if (!terminated(b->kind, sizeof(b->kind)) ||
		    (strcmp(b->kind, "allreduce") && strcmp(b->kind, "ps")))
			return bad_field(errp, "buckets",
					 "bucket %zu: kind is "
					 "not allreduce or ps",
					 i);
	}
	if (r->nbaselines > AUTOSYNC_FEEDBACK_MAX_BASELINES)
		return bad_field(errp, "baselines", "more than %d",
				 AUTOSYNC_FEEDBACK_MAX_BASELINES);
	for (size_t i = 0; i < r->nbaselines; i++)
		if (!(r->baselines[i].predicted >= 0 &&
		      isfinite(r->baselines[i].predicted)))
			return bad_field(errp, "baselines",
					 "%g is not a step "
					 "time",
					 r->baselines[i].predicted);
	for (int i = 0; r->have_terms && i < AUTOSYNC_TERM_N; i++)
		if (!(r->terms[i] >= 0 && isfinite(r->terms[i])))
			return bad_field(errp, "terms",
					 "%s: %g is not a value >= 0",
					 autosync_term_name(i), r->terms[i]);
	if (!terminated(r->simulator_hash, sizeof(r->simulator_hash)) ||
	    (r->simulator_hash[0] &&
	     (strlen(r->simulator_hash) != 16 ||
	      strspn(r->simulator_hash, "0123456789abcdef") != 16)))
		return bad_field(errp, "simulator_hash", "not 16 hex digits");
	if (r->simulator_hash[0] &&
	    step_time("learned_step_s", r->learned, errp) < 0)
		return -1;
	return 0;
}

static int check_job(const autosync_feedback_rec_t *r, autosync_error_t *errp)
{
	if (r->time <= 0)
		return bad_field(errp, "time", "missing");
	if (!terminated(r->source, sizeof(r->source)) || !r->source[0])
		return bad_field(errp, "source", "empty");
	/* a trial run outside Slurm has no job (0); a step always has one */
	if ((r->job < 1 && strcmp(r->source, "bench")) || r->job > INT64_MAX)
		return bad_field(errp, "job", "%" PRIu64 " is not a job id",
				 r->job);
	if (r->step > INT64_MAX)
		return bad_field(errp, "step", "%" PRIu64 " is not a step id",
				 r->step);
	if (!terminated(r->node, sizeof(r->node)) || !r->node[0])
		return bad_field(errp, "node", "empty");
	if (r->nmeasured > AUTOSYNC_FEEDBACK_MAX_MEASURED)
		return bad_field(errp, "measured_step_s", "more than %d",
				 AUTOSYNC_FEEDBACK_MAX_MEASURED);
	if (r->nmeasured > r->measured_count || r->measured_count > INT64_MAX)
		return bad_field(errp, "measured_count",
				 "%" PRIu64 " is less "
				 "than the %zu step times given",
				 r->measured_count, r->nmeasured);
	for (size_t i = 0; i < r->nmeasured; i++)
		if (step_time("measured_step_s", r->measured[i], errp) < 0)
			return -1;
	if (r->measured_count &&
	    step_time("measured_mean_s", r->measured_mean, errp) < 0)
		return -1;
	if (!r->measured_count && r->measured_mean != 0)
		return bad_field(errp, "measured_mean_s",
				 "%g without any "
				 "measured step",
				 r->measured_mean);
	return 0;
}

int autosync_feedback_check(const autosync_feedback_rec_t *r, unsigned parts,
			    autosync_error_t *errp)
{
	if (!r || !parts || (parts & ~AUTOSYNC_FEEDBACK_PART_ALL)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "feedback: invalid argument");
	}
	if ((parts & AUTOSYNC_FEEDBACK_PART_JOB) && check_job(r, errp) < 0)
		return -1;
	if ((parts & AUTOSYNC_FEEDBACK_PART_PLAN) && check_plan(r, errp) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------ formatting */

/* jansson refuses strings that are not UTF-8 (NULL): 'bad' names it */
static void set(json_t *o, const char *key, json_t *v, const char **bad)
{
	if (json_object_set_new(o, key, v) < 0 && !*bad)
		*bad = key;
}

static const char *str_v(const char *s, size_t max)
{
	return terminated(s, max) ? s : NULL;
}

#define STRF(o, r, f, bad) \
	set(o, #f, json_string(str_v((r)->f, sizeof((r)->f))), bad)

static json_t *bucket_json(const autosync_feedback_bucket_t *b,
			   const char **bad)
{
	json_t *o = json_object();

	STRF(o, b, kind, bad);
	STRF(o, b, algo, bad);
	STRF(o, b, compress, bad);
	set(o, "servers", json_integer(b->servers), bad);
	set(o, "tensors", json_integer(b->tensors), bad);
	set(o, "bytes", json_real(b->bytes), bad);
	return o;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The median and spread ((max - min) / median) of the kept step times:
 * what a learner reads instead of every step. */
static void measured_stats(const autosync_feedback_rec_t *r, double *median,
			   double *spread)
{
	double v[AUTOSYNC_FEEDBACK_MAX_MEASURED];
	size_t n = r->nmeasured;
	char num[40];

	/* from the step times as written (9 digits), so that a record read
	 * back formats to the same line (the fuzz target checks it) */
	for (size_t i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%.9g", r->measured[i]);
		v[i] = strtod(num, NULL);
	}
	qsort(v, n, sizeof(double), cmp_double);
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	*spread = (v[n - 1] - v[0]) / *median;
}

static json_t *terms_json(const autosync_feedback_rec_t *r, const char **bad)
{
	json_t *o = json_object();

	for (int i = 0; i < AUTOSYNC_TERM_N; i++)
		set(o, autosync_term_name(i), json_real(r->terms[i]), bad);
	return o;
}

static json_t *record_json(const autosync_feedback_rec_t *r, const char *when,
			   const char **bad)
{
	json_t *o = json_object(), *a;

	set(o, "version", json_integer(AUTOSYNC_FEEDBACK_VERSION), bad);
	set(o, "time", json_string(when), bad);
	STRF(o, r, source, bad);
	set(o, "job", json_integer((json_int_t)r->job), bad);
	set(o, "step", json_integer((json_int_t)r->step), bad);
	STRF(o, r, user, bad);
	set(o, "uid", json_integer(r->uid), bad);
	STRF(o, r, node, bad);
	set(o, "nodes", json_integer(r->nodes), bad);
	set(o, "gpus_per_node", json_integer(r->gpus_per_node), bad);
	STRF(o, r, model, bad);
	STRF(o, r, model_hash, bad);
	STRF(o, r, topo_hash, bad);
	STRF(o, r, plan_hash, bad);
	STRF(o, r, framework, bad);
	STRF(o, r, strategy, bad);
	STRF(o, r, cluster, bad);
	set(o, "scale", json_real(r->scale > 0 ? r->scale : 1), bad);
	if (r->batch)
		set(o, "batch_size", json_integer(r->batch), bad);
	set(o, "predicted_step_s", json_real(r->predicted), bad);
	a = json_array();
	for (size_t i = 0; i < r->nbuckets; i++)
		if (json_array_append_new(a, bucket_json(&r->buckets[i], bad)) <
			0 &&
		    !*bad)
			*bad = "buckets";
	set(o, "buckets", a, bad);
	a = json_object();
	for (size_t i = 0; i < r->nbaselines; i++) {
		const autosync_feedback_baseline_t *b = &r->baselines[i];
		const char *name = str_v(b->name, sizeof(b->name));
		if (!name ||
		    json_object_set_new(a, name, json_real(b->predicted)) < 0)
			*bad = *bad ? *bad : "baselines";
	}
	set(o, "baselines", a, bad);
	a = json_array();
	for (size_t i = 0; i < r->nmeasured; i++)
		if (json_array_append_new(a, json_real(r->measured[i])) < 0)
			*bad = *bad ? *bad : "measured_step_s";
	set(o, "measured_step_s", a, bad);
	set(o, "measured_count", json_integer((json_int_t)r->measured_count),
	    bad);
	set(o, "measured_mean_s", json_real(r->measured_mean), bad);
	if (r->nmeasured) {
		double med, spread;
		measured_stats(r, &med, &spread);
		set(o, "measured_median_s", json_real(med), bad);
		set(o, "measured_spread", json_real(spread), bad);
	}
	if (r->have_terms)
		set(o, "terms", terms_json(r, bad), bad);
	if (r->simulator_hash[0]) {
		STRF(o, r, simulator_hash, bad);
		set(o, "learned_step_s", json_real(r->learned), bad);
	}
	a = json_array();
	for (unsigned i = 0; i < NFIELDS; i++)
		if (r->influenced & (1u << i))
			json_array_append_new(a, json_string(field_names[i]));
	set(o, "user_influenced", a, bad);
	return o;
}

int autosync_feedback_format_part(const autosync_feedback_rec_t *r,
				  unsigned parts, char **line, size_t *len,
				  autosync_error_t *errp)
{
	char when[32] = "", *buf;
	const char *bad = NULL;
	struct tm tm;
	time_t t;
	json_t *o;
	size_t n;

	if (!r || !line || !len) {
		errno = EINVAL;
		return autosync_errprintf(errp, "feedback: invalid record");
	}
	if (autosync_feedback_check(r, parts, errp) < 0)
		return -1;
	t = (time_t)r->time;
	if (r->time &&
	    (!gmtime_r(&t, &tm) ||
	     !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm)))
		return bad_field(errp, "time", "%" PRId64 " is not a time",
				 r->time);
	if (!(o = record_json(r, when, &bad)) || bad) {
		json_decref(o);
		errno = EINVAL;
		return autosync_errprintf(errp,
					  bad ? "field '%s': not UTF-8"
					      : "feedback: out of memory",
					  bad);
	}
	/* one line: jansson escapes control characters, never breaks lines */
	buf = json_dumps(o, JSON_REAL_PRECISION(9));
	json_decref(o);
	if (!buf || !(n = strlen(buf)) || !(*line = malloc(n + 2))) {
		free(buf);
		errno = ENOMEM;
		return autosync_errprintf(errp, "feedback: out of memory");
	}
	memcpy(*line, buf, n);
	(*line)[n] = '\n';
	(*line)[n + 1] = '\0';
	*len = n + 1;
	free(buf);
	return 0;
}

int autosync_feedback_format(const autosync_feedback_rec_t *r, char **line,
			     size_t *len, autosync_error_t *errp)
{
	return autosync_feedback_format_part(r, AUTOSYNC_FEEDBACK_PART_ALL,
					     line, len, errp);
}

/* ------------------------------------------------------------ parsing */

static int get_u64(json_t *v, uint64_t max, uint64_t *out)
{
	json_int_t i;

	if (!json_is_integer(v) || (i = json_integer_value(v)) < 0 ||
	    (uint64_t)i > max)
		return -1;
	*out = (uint64_t)i;
	return 0;
}

static int get_num(json_t *v, double *out)
{
	if (!json_is_number(v))
		return -1;
	*out = json_number_value(v);
	return isfinite(*out) ? 0 : -1;
}

static int get_str(json_t *v, char *dst, size_t max)
{
	size_t n;

	if (!json_is_string(v) || (n = json_string_length(v)) >= max ||
	    memchr(json_string_value(v), '\0', n))
		return -1;
	memcpy(dst, json_string_value(v), n + 1);
	return 0;
}

static int parse_time(json_t *v, int64_t *out)
{
	struct tm tm;
	const char *end, *s = json_string_value(v);

	memset(&tm, 0, sizeof(tm));
	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *end)
		return -1;
	*out = (int64_t)timegm(&tm);
	return 0;
}

static int parse_bucket(json_t *m, autosync_feedback_bucket_t *b)
{
	uint64_t u;

	if (!json_is_object(m) ||
	    get_str(json_object_get(m, "kind"), b->kind, sizeof(b->kind)) ||
	    get_str(json_object_get(m, "algo"), b->algo, sizeof(b->algo)) ||
	    get_str(json_object_get(m, "compress"), b->compress,
		    sizeof(b->compress)) ||
	    get_num(json_object_get(m, "bytes"), &b->bytes))
		return -1;
	if (get_u64(json_object_get(m, "servers"), UINT_MAX, &u))
		return -1;
	b->servers = (unsigned)u;
	if (get_u64(json_object_get(m, "tensors"), UINT_MAX, &u))
		return -1;
	b->tensors = (unsigned)u;
	return 0;
}

/* The *_bytes terms of a record written before the analytic simulator
 * had them, from its buckets as the simulator counts them (which works
 * while the record holds every bucket of its plan). */
static void bytes_terms(autosync_feedback_rec_t *r)
{
	double *t = r->terms;

	for (size_t i = 0; i < r->nbuckets; i++) {
		const autosync_feedback_bucket_t *b = &r->buckets[i];
		t[autosync_bytes_term(
		    !strcmp(b->kind, "ps") ? AUTOSYNC_SYNC_PS
					   : AUTOSYNC_SYNC_ALLREDUCE,
		    autosync_algo_from_name(b->algo))] += b->bytes;
		if (b->compress[0] && strcmp(b->compress, "none"))
			t[AUTOSYNC_TERM_COMPRESSED_BYTES] += b->bytes;
	}
}

/* The terms (after the buckets): those before AUTOSYNC_TERM_PS_BYTES are
 * required; the later ones all present, or all absent and derived. */
static int parse_terms(json_t *v, autosync_feedback_rec_t *r)
{
	int have_bytes = 0;

	/* any one of them present: all must be (never four silently replaced
	 * by values derived from the buckets) */
	for (int t = AUTOSYNC_TERM_PS_BYTES; t < AUTOSYNC_TERM_N; t++)
		have_bytes |= json_is_object(v) &&
			      json_object_get(v, autosync_term_name(t)) != NULL;
	for (int t = 0; t < AUTOSYNC_TERM_N; t++) {
		if (t >= AUTOSYNC_TERM_PS_BYTES && !have_bytes)
			continue;
		if (!json_is_object(v) ||
		    get_num(json_object_get(v, autosync_term_name(t)),
			    &r->terms[t]))
			return -1;
	}
	if (!have_bytes)
		bytes_terms(r);
	return 0;
}

static int parse_lists(json_t *root, autosync_feedback_rec_t *r,
		       const char **bad)
{
	json_t *v, *x;
	const char *k;
	size_t i;

	if ((v = json_object_get(root, "buckets"))) {
		if (!json_is_array(v) ||
		    json_array_size(v) > AUTOSYNC_FEEDBACK_MAX_BUCKETS)
			return *bad = "buckets", -1;
		json_array_foreach(v, i, x)
		{
			if (parse_bucket(x, &r->buckets[i]))
				return *bad = "buckets", -1;
			r->nbuckets = i + 1;
		}
	}
	if ((v = json_object_get(root, "baselines"))) {
		if (!json_is_object(v) ||
		    json_object_size(v) > AUTOSYNC_FEEDBACK_MAX_BASELINES)
			return *bad = "baselines", -1;
		json_object_foreach(v, k, x)
		{
			autosync_feedback_baseline_t *b =
			    &r->baselines[r->nbaselines];
			if (strlen(k) >= sizeof(b->name) ||
			    get_num(x, &b->predicted))
				return *bad = "baselines", -1;
			memcpy(b->name, k, strlen(k) + 1);
			r->nbaselines++;
		}
	}
	if ((v = json_object_get(root, "measured_step_s"))) {
		if (!json_is_array(v) ||
		    json_array_size(v) > AUTOSYNC_FEEDBACK_MAX_MEASURED)
			return *bad = "measured_step_s", -1;
		json_array_foreach(v, i, x)
		{
			if (get_num(x, &r->measured[i]))
				return *bad = "measured_step_s", -1;
			r->nmeasured = i + 1;
		}
	}
	if ((v = json_object_get(root, "terms"))) {
		/* every term this version knows; newer ones are ignored */
		if (parse_terms(v, r))
			return *bad = "terms", -1;
		r->have_terms = 1;
	}
	if (r->version < 2) {
		r->influenced = AUTOSYNC_FEEDBACK_F_ALL; /* it does not say */
		return 0;
	}
	v = json_object_get(root, "user_influenced");
	if (!json_is_array(v))
		return *bad = "user_influenced", -1;
	json_array_foreach(v, i, x)
	{
		const char *s = json_string_value(x);
		unsigned f = 0;
		while (s && f < NFIELDS && strcmp(s, field_names[f]))
			f++;
		if (!s || f == NFIELDS)
			return *bad = "user_influenced", -1;
		r->influenced |= 1u << f;
	}
	return 0;
}

/* The keys a record of 'version' must have, for the parts asked for. */
static const struct {
	const char *key;
	unsigned part, since;
} required[] = {
    {"time", AUTOSYNC_FEEDBACK_PART_JOB, 1},
    {"source", AUTOSYNC_FEEDBACK_PART_JOB, 1},
    {"job", AUTOSYNC_FEEDBACK_PART_JOB, 1},
    {"step", AUTOSYNC_FEEDBACK_PART_JOB, 1},
    {"node", AUTOSYNC_FEEDBACK_PART_JOB, 1},
    {"nodes", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"gpus_per_node", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"model", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"model_hash", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"plan_hash", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"framework", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"strategy", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"predicted_step_s", AUTOSYNC_FEEDBACK_PART_PLAN, 1},
    {"measured_count", AUTOSYNC_FEEDBACK_PART_JOB, 1},
    {"user_influenced", AUTOSYNC_FEEDBACK_PART_ALL, 2},
};

static int parse_fields(json_t *root, unsigned parts,
			autosync_feedback_rec_t *r, const char **bad)
{
	uint64_t u;
	json_t *v;

	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if ((required[i].part & parts) &&
		    r->version >= required[i].since &&
		    !json_object_get(root, required[i].key))
			return *bad = required[i].key, 1;
#define STR(f)                                         \
	do {                                           \
		if ((v = json_object_get(root, #f)) && \
		    get_str(v, r->f, sizeof(r->f)))    \
			return *bad = #f, -1;          \
	} while (0)
#define U64(f, key, max)                                \
	do {                                            \
		if ((v = json_object_get(root, key))) { \
			if (get_u64(v, max, &u))        \
				return *bad = key, -1;  \
			r->f = u;                       \
		}                                       \
	} while (0)
#define NUM(f, key)                                                        \
	do {                                                               \
		if ((v = json_object_get(root, key)) && get_num(v, &r->f)) \
			return *bad = key, -1;                             \
	} while (0)
	/* "" : a part without the job's side (no time yet) */
	if ((v = json_object_get(root, "time")) &&
	    !(json_is_string(v) && !json_string_length(v)) &&
	    parse_time(v, &r->time))
		return *bad = "time", -1;
	STR(source);
	STR(user);
	STR(node);
	STR(model);
	STR(model_hash);
	STR(topo_hash);
	STR(plan_hash);
	STR(framework);
	STR(strategy);
	STR(cluster);
	STR(simulator_hash);
	U64(job, "job", INT64_MAX);
	U64(step, "step", INT64_MAX);
	U64(uid, "uid", UINT32_MAX);
	U64(nodes, "nodes", UINT_MAX);
	U64(gpus_per_node, "gpus_per_node", UINT_MAX);
	U64(batch, "batch_size", AUTOSYNC_FEEDBACK_MAX_BATCH);
	U64(measured_count, "measured_count", INT64_MAX);
	NUM(predicted, "predicted_step_s");
	NUM(scale, "scale");
	NUM(measured_mean, "measured_mean_s");
	NUM(learned, "learned_step_s");
#undef STR
#undef U64
#undef NUM
	return parse_lists(root, r, bad);
}

int autosync_feedback_parse_part(const char *line, size_t len, unsigned parts,
				 autosync_feedback_rec_t *r,
				 autosync_error_t *errp)
{
	json_error_t jerr;
	json_t *root, *v;
	const char *bad = NULL;
	uint64_t version = 0;
	int rv;

	if (!line || !r || !parts || (parts & ~AUTOSYNC_FEEDBACK_PART_ALL)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "invalid argument");
	}
	memset(r, 0, sizeof(*r));
	/* a key given twice is an error, as in every autosync reader */
	if (!(root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr))) {
		errno = EINVAL;
		return autosync_errprintf(errp, "not JSON: %s (column %d)",
					  jerr.text, jerr.column);
	}
	if (!json_is_object(root)) {
		json_decref(root);
		errno = EINVAL;
		return autosync_errprintf(errp, "not a record (a JSON object)");
	}
	v = json_object_get(root, "version");
	if (!v) {
		json_decref(root);
		return bad_field(errp, "version", "missing");
	}
	if (get_u64(v, UINT_MAX, &version) || version < 1 ||
	    version > AUTOSYNC_FEEDBACK_VERSION) {
		int num = json_is_integer(v);
		json_int_t given = num ? json_integer_value(v) : 0;

		json_decref(root);
		if (!num)
			return bad_field(errp, "version", "not a number");
		return bad_field(errp, "version",
				 "format %" JSON_INTEGER_FORMAT
				 " is not one this autosync reads (1 to %d)",
				 given, AUTOSYNC_FEEDBACK_VERSION);
	}
	r->version = (unsigned)version;
	rv = parse_fields(root, parts, r, &bad);
	json_decref(root);
	if (rv > 0)
		return bad_field(errp, bad, "missing");
	if (rv < 0)
		return bad_field(errp, bad, "not a valid value");
	return autosync_feedback_check(r, parts, errp);
}

int autosync_feedback_parse(const char *line, size_t len,
			    autosync_feedback_rec_t *r, autosync_error_t *errp)
{
	return autosync_feedback_parse_part(
	    line, len, AUTOSYNC_FEEDBACK_PART_ALL, r, errp);
}

/* ------------------------------------------------------------ the log */

static int rotate(const char *path, unsigned keep, autosync_error_t *errp)
{
	char from[PATH_MAX], to[PATH_MAX];

	if (keep == 0)
		return 0; /* caller truncates */
	for (unsigned i = keep; i >= 1; i--) {
		if (i == 1)
			snprintf(from, sizeof(from), "%s", path);
		else
			snprintf(from, sizeof(from), "%s.%u", path, i - 1);
		snprintf(to, sizeof(to), "%s.%u", path, i);
		if (rename(from, to) < 0 && errno != ENOENT)
			return autosync_errprintf(errp, "%s: rotate to %s: %s",
						  from, to, strerror(errno));
	}
	return 0;
}

int autosync_feedback_append(const char *path, const char *line, size_t len,
			     size_t max_bytes, unsigned keep,
			     autosync_error_t *errp)
{
	int fd = -1, rv = -1, tries = 0;
	struct stat st, pst;
	off_t base;

	if (!path || !line || !len || line[len - 1] != '\n' ||
	    memchr(line, '\n', len - 1) || strlen(path) + 12 >= PATH_MAX) {
		errno = EINVAL;
		return autosync_errprintf(errp, "feedback: invalid argument");
	}
again:
	fd = open(path,
		  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
		      O_NOCTTY | O_NONBLOCK,
		  0640);
	if (fd < 0) {
		autosync_errprintf(errp, "%s: cannot open: %s", path,
				   strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX) < 0) {
		autosync_errprintf(errp, "%s: cannot lock: %s", path,
				   strerror(errno));
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		autosync_errprintf(errp, "%s: not a regular file", path);
		goto out;
	}
	/* Another writer may have rotated the file while we waited for the
	 * lock: then 'fd' is the old log, so start over on the new one. */
	if (lstat(path, &pst) < 0 || pst.st_ino != st.st_ino ||
	    pst.st_dev != st.st_dev) {
		close(fd);
		fd = -1;
		if (++tries > 100) {
			errno = EAGAIN;
			autosync_errprintf(errp, "%s: keeps being replaced",
					   path);
			goto out;
		}
		goto again;
	}
	base = st.st_size;
	if (max_bytes && st.st_size > 0 &&
	    (size_t)st.st_size + len > max_bytes) {
		if (keep == 0) {
			base = 0;
			if (ftruncate(fd, 0) < 0) {
				autosync_errprintf(errp, "%s: truncate: %s",
						   path, strerror(errno));
				goto out;
			}
		} else {
			if (rotate(path, keep, errp) < 0)
				goto out;
			close(fd); /* releases the lock on the rotated file */
			fd = -1;
			goto again;
		}
	}
	{
		ssize_t w = write(fd, line, len);
		if (w < 0 || (size_t)w != len) {
			int saved = w < 0 ? errno : ENOSPC;
			/* never leave half a record behind (nor grow a log
			 * that was just truncated back to its old size) */
			if (w > 0 && ftruncate(fd, base) < 0) {
				/* nothing more we can do */
			}
			errno = saved;
			autosync_errprintf(errp, "%s: write: %s", path,
					   strerror(errno));
			goto out;
		}
	}
	rv = 0;
out:
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return rv;
}

/* One line of at most 'cap' - 1 bytes into 'buf' (NUL-terminated); the
 * rest of a longer line is skipped without being held. Returns its
 * length (cap - 1 or more: too long), 0 at the end. */
static size_t read_line(FILE *fp, char *buf, size_t cap, int *more)
{
	size_t n = 0, total = 0;
	int c;

	while ((c = getc(fp)) != EOF) {
		if (n + 1 < cap)
			buf[n++] = (char)c;
		total++;
		if (c == '\n')
			break;
	}
	buf[n] = '\0';
	*more = c != EOF;
	return total > n ? cap : total;
}

int autosync_feedback_read(const char *path, autosync_feedback_each_f fn,
			   void *arg, void (*bad)(const char *msg, void *arg),
			   autosync_error_t *errp)
{
	FILE *fp;
	char *line = malloc(AUTOSYNC_FEEDBACK_MAX_LINE + 2), msg[512];
	size_t n;
	unsigned long lineno = 0;
	int rv = 0, fd, more = 1;
	autosync_feedback_rec_t *r = malloc(sizeof(*r));

	if (!path || !fn || !line || !r) {
		free(line);
		free(r);
		errno = path && fn ? ENOMEM : EINVAL;
		return autosync_errprintf(
		    errp, path && fn ? "out of memory" : "invalid argument");
	}
	/* a log is a regular file: never block on a FIFO, never read a
	 * device without end */
	if ((fd = asi_open_file(AT_FDCWD, path, 0, ASI_READ_OPEN_PREFIX,
				(uid_t)-1, msg, sizeof(msg))) < 0 ||
	    !(fp = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		free(line);
		free(r);
		return autosync_errprintf(errp, "%s", msg);
	}
	while (more && (n = read_line(fp, line, AUTOSYNC_FEEDBACK_MAX_LINE + 2,
				      &more)) > 0) {
		autosync_error_t e = {.text = ""};
		char msg2[AUTOSYNC_ERROR_LEN + PATH_MAX];

		lineno++;
		if (n == 1 && line[0] == '\n')
			continue;
		if (n > AUTOSYNC_FEEDBACK_MAX_LINE) {
			snprintf(e.text, sizeof(e.text),
				 "line too long (over "
				 "%d bytes)",
				 AUTOSYNC_FEEDBACK_MAX_LINE);
		} else if (autosync_feedback_parse(line, n, r, &e) == 0) {
			if ((rv = fn(r, arg)) != 0)
				break;
			continue;
		}
		if (bad) {
			snprintf(msg2, sizeof(msg2), "%s:%lu: %s", path, lineno,
				 e.text);
			bad(msg2, arg);
		}
	}
	free(line);
	free(r);
	fclose(fp);
	return rv;
}

/* ------------------------------------------------------------ plans */

static void set_bucket(autosync_feedback_bucket_t *fb,
		       const autosync_bucket_t *b)
{
	int ps = b->kind == AUTOSYNC_SYNC_PS;

	snprintf(fb->kind, sizeof(fb->kind), "%s", ps ? "ps" : "allreduce");
	snprintf(fb->algo, sizeof(fb->algo), "%s",
		 ps ? "" : autosync_algo_name(b->algo));
	snprintf(fb->compress, sizeof(fb->compress), "%s",
		 autosync_compress_name(b->compress));
	fb->servers = ps ? b->servers : 0;
	fb->tensors = (unsigned)b->ntensors;
	fb->bytes = b->bytes;
}

int autosync_feedback_set_plan(autosync_feedback_rec_t *r,
			       const autosync_plan_t *plan,
			       autosync_error_t *errp)
{
	autosync_plan_summary_t s;

	if (!r || autosync_plan_summary(plan, &s) < 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "feedback: no plan");
	}
	r->nodes = s.cluster.nodes;
	r->gpus_per_node = s.cluster.gpus_per_node;
	r->batch = s.batch <= AUTOSYNC_FEEDBACK_MAX_BATCH ? s.batch : 0;
	snprintf(r->model, sizeof(r->model), "%s", s.model ? s.model : "");
	snprintf(r->model_hash, sizeof(r->model_hash), "%s",
		 s.model_hash ? s.model_hash : "");
	snprintf(r->topo_hash, sizeof(r->topo_hash), "%s",
		 s.topo_hash ? s.topo_hash : "");
	snprintf(r->plan_hash, sizeof(r->plan_hash), "%s",
		 autosync_plan_hash(plan));
	snprintf(r->framework, sizeof(r->framework), "%s",
		 s.framework ? s.framework : "");
	snprintf(r->strategy, sizeof(r->strategy), "%s",
		 s.strategy ? s.strategy : "");
	(void)autosync_cluster_format(&s.cluster, r->cluster,
				      sizeof(r->cluster));
	/* the analytic prediction: what a learned simulator corrects */
	r->predicted = s.simulator_hash && s.simulator_hash[0]
			   ? s.analytic_step_time
			   : s.step_time;
	snprintf(r->simulator_hash, sizeof(r->simulator_hash), "%s",
		 s.simulator_hash ? s.simulator_hash : "");
	r->learned = r->simulator_hash[0] ? s.step_time : 0;
	r->have_terms = autosync_plan_terms(plan, r->terms) == 0;
	r->nbuckets = 0;
	for (size_t i = 0; i < autosync_plan_nbuckets(plan) &&
			   r->nbuckets < AUTOSYNC_FEEDBACK_MAX_BUCKETS;
	     i++)
		set_bucket(&r->buckets[r->nbuckets++],
			   autosync_plan_bucket(plan, i));
	r->nbaselines = 0;
	for (size_t i = 0; i < autosync_plan_nbaselines(plan) &&
			   r->nbaselines < AUTOSYNC_FEEDBACK_MAX_BASELINES;
	     i++) {
		const autosync_plan_baseline_t *b =
		    autosync_plan_baseline(plan, i);
		snprintf(r->baselines[r->nbaselines].name,
			 sizeof(r->baselines[0].name), "%s", b->name);
		r->baselines[r->nbaselines++].predicted = b->step_time;
	}
	return 0;
}
