/* feedback.c - feedback records and the shared log (autosync/feedback.h). */
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
#include <yaml.h>

#include "autosync/feedback.h"
#include "autosync/planner.h"
#include "common/readfile.h"
#include "common/yamlload.h"

/* ------------------------------------------------------------ emitting */

struct out {
	yaml_emitter_t e;
	yaml_event_t ev;
	int failed;
};

static void emit(struct out *o)
{
	if (!o->failed && !yaml_emitter_emit(&o->e, &o->ev))
		o->failed = 1;
}

static void str(struct out *o, const char *s)
{
	if (o->failed)
		return;
	if (!yaml_scalar_event_initialize(&o->ev, NULL, NULL,
					  (yaml_char_t *) s, -1, 1, 1,
					  YAML_DOUBLE_QUOTED_SCALAR_STYLE)) {
		o->failed = 1;
		return;
	}
	emit(o);
}

static void plain(struct out *o, const char *s)
{
	if (o->failed)
		return;
	if (!yaml_scalar_event_initialize(&o->ev, NULL, NULL,
					  (yaml_char_t *) s, -1, 1, 1,
					  YAML_PLAIN_SCALAR_STYLE)) {
		o->failed = 1;
		return;
	}
	emit(o);
}

static void num(struct out *o, double v)
{
	char b[40];

	/* %.9g keeps sub-microsecond step times; JSON has no inf/nan */
	snprintf(b, sizeof(b), "%.9g", isfinite(v) ? v : 0.0);
	plain(o, b);
}

static void u64(struct out *o, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	plain(o, b);
}

static void map_start(struct out *o)
{
	if (o->failed)
		return;
	yaml_mapping_start_event_initialize(&o->ev, NULL, NULL, 1,
					    YAML_FLOW_MAPPING_STYLE);
	emit(o);
}

static void map_end(struct out *o)
{
	if (o->failed)
		return;
	yaml_mapping_end_event_initialize(&o->ev);
	emit(o);
}

static void seq_start(struct out *o)
{
	if (o->failed)
		return;
	yaml_sequence_start_event_initialize(&o->ev, NULL, NULL, 1,
					     YAML_FLOW_SEQUENCE_STYLE);
	emit(o);
}

static void seq_end(struct out *o)
{
	if (o->failed)
		return;
	yaml_sequence_end_event_initialize(&o->ev);
	emit(o);
}

static int clean(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n == max)
		return 0; /* not terminated */
	for (; *s; s++)
		if ((unsigned char) *s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

static int write_handler(void *data, unsigned char *buf, size_t size)
{
	FILE *fp = data;

	return fwrite(buf, 1, size, fp) == size;
}

/* the names of the AUTOSYNC_FEEDBACK_USER_* bits, in bit order */
static const char *const user_names[] = { "measured", "model", "plan", "env",
					  "unknown" };
#define NUSER (sizeof(user_names) / sizeof(user_names[0]))

static int step_ok(double t)
{
	return t >= AUTOSYNC_FEEDBACK_MIN_STEP && t <= AUTOSYNC_FEEDBACK_MAX_STEP;
}

static int range(const char *field, double v, autosync_error_t *errp)
{
	errno = EINVAL;
	return autosync_errprintf(errp, "field '%s': %g is not a step time "
				  "(%g to %g s)", field, v,
				  AUTOSYNC_FEEDBACK_MIN_STEP,
				  AUTOSYNC_FEEDBACK_MAX_STEP);
}

static int missing(const char *field, autosync_error_t *errp)
{
	errno = EINVAL;
	return autosync_errprintf(errp, "field '%s' is missing or empty",
				  field);
}

int autosync_feedback_check(const autosync_feedback_rec_t *r,
			    autosync_error_t *errp)
{
	const struct {
		const char *name, *v;
	} need[] = {
		{ "source", r ? r->source : NULL },
		{ "node", r ? r->node : NULL },
		{ "model", r ? r->model : NULL },
		{ "plan_hash", r ? r->plan_hash : NULL },
		{ "framework", r ? r->framework : NULL },
		{ "strategy", r ? r->strategy : NULL },
	};

	if (!r) {
		errno = EINVAL;
		return autosync_errprintf(errp, "invalid argument");
	}
	if (r->time <= 0)
		return missing("time", errp);
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!need[i].v[0])
			return missing(need[i].name, errp);
	if (r->nodes < 1 || r->gpus_per_node < 1) {
		errno = EINVAL;
		return autosync_errprintf(errp, "field '%s': 0 is not a count "
					  "(at least 1)", r->nodes < 1
					  ? "nodes" : "gpus_per_node");
	}
	if (!step_ok(r->predicted))
		return range("predicted_step_s", r->predicted, errp);
	for (size_t i = 0; i < r->nmeasured; i++)
		if (!step_ok(r->measured[i]))
			return range("measured_step_s", r->measured[i], errp);
	if (r->nmeasured > r->measured_count) {
		errno = EINVAL;
		return autosync_errprintf(errp, "field 'measured_count': %" PRIu64
					  " is less than the %zu step times "
					  "given", r->measured_count,
					  r->nmeasured);
	}
	if (r->measured_count && !step_ok(r->measured_mean))
		return range("measured_mean_s", r->measured_mean, errp);
	if (!(r->scale == 0 || (r->scale >= 1 && isfinite(r->scale)))) {
		errno = EINVAL;
		return autosync_errprintf(errp, "field 'scale': %g is not a "
					  "scale (at least 1)", r->scale);
	}
	for (size_t i = 0; i < r->nbaselines; i++)
		if (!(r->baselines[i].predicted >= 0 &&
		      isfinite(r->baselines[i].predicted))) {
			errno = EINVAL;
			return autosync_errprintf(errp, "field 'baselines': %g "
						  "is not a step time",
						  r->baselines[i].predicted);
		}
	return 0;
}

int autosync_feedback_format(const autosync_feedback_rec_t *r, char **line,
			     size_t *len, autosync_error_t *errp)
{
	struct out o = { .failed = 0 };
	char tbuf[32], *buf = NULL;
	size_t blen = 0;
	struct tm tm;
	time_t t;
	FILE *fp = NULL;
	int rv = -1;
	const struct {
		const char *v;
		size_t max;
	} strs[] = {
		{ r->source, sizeof(r->source) },
		{ r->user, sizeof(r->user) },
		{ r->node, sizeof(r->node) },
		{ r->model, sizeof(r->model) },
		{ r->model_hash, sizeof(r->model_hash) },
		{ r->topo_hash, sizeof(r->topo_hash) },
		{ r->plan_hash, sizeof(r->plan_hash) },
		{ r->framework, sizeof(r->framework) },
		{ r->strategy, sizeof(r->strategy) },
		{ r->cluster, sizeof(r->cluster) },
	};

	if (r && autosync_feedback_check(r, errp) < 0)
		return -1;
	if (!r || !line || !len || r->nbuckets > AUTOSYNC_FEEDBACK_MAX_BUCKETS ||
	    r->nbaselines > AUTOSYNC_FEEDBACK_MAX_BASELINES ||
	    r->nmeasured > AUTOSYNC_FEEDBACK_MAX_MEASURED) {
		errno = EINVAL;
		return autosync_errprintf(errp, "feedback: invalid record");
	}
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!clean(strs[i].v, strs[i].max)) {
			errno = EINVAL;
			return autosync_errprintf(errp, "feedback: a string field "
						  "holds control characters");
		}
	t = (time_t) r->time;
	if (!gmtime_r(&t, &tm) ||
	    !strftime(tbuf, sizeof(tbuf), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "feedback: bad time %" PRId64,
					  r->time);
	}
	if (!(fp = open_memstream(&buf, &blen)))
		return autosync_errprintf(errp, "feedback: %s", strerror(errno));
	if (!yaml_emitter_initialize(&o.e)) {
		fclose(fp);
		free(buf);
		errno = ENOMEM;
		return autosync_errprintf(errp, "feedback: out of memory");
	}
	yaml_emitter_set_output(&o.e, write_handler, fp);
	yaml_emitter_set_width(&o.e, -1); /* never fold: one record, one line */
	yaml_emitter_set_unicode(&o.e, 1);

	yaml_stream_start_event_initialize(&o.ev, YAML_UTF8_ENCODING);
	emit(&o);
	yaml_document_start_event_initialize(&o.ev, NULL, NULL, NULL, 1);
	emit(&o);
	map_start(&o);
	str(&o, "version"), u64(&o, AUTOSYNC_FEEDBACK_VERSION);
	str(&o, "time"), str(&o, tbuf);
	str(&o, "source"), str(&o, r->source);
	str(&o, "job"), u64(&o, r->job);
	str(&o, "step"), u64(&o, r->step);
	str(&o, "user"), str(&o, r->user);
	str(&o, "uid"), u64(&o, r->uid);
	str(&o, "node"), str(&o, r->node);
	str(&o, "nodes"), u64(&o, r->nodes);
	str(&o, "gpus_per_node"), u64(&o, r->gpus_per_node);
	str(&o, "model"), str(&o, r->model);
	str(&o, "model_hash"), str(&o, r->model_hash);
	str(&o, "topo_hash"), str(&o, r->topo_hash);
	str(&o, "plan_hash"), str(&o, r->plan_hash);
	str(&o, "framework"), str(&o, r->framework);
	str(&o, "strategy"), str(&o, r->strategy);
	str(&o, "cluster"), str(&o, r->cluster);
	str(&o, "scale"), num(&o, r->scale > 0 ? r->scale : 1);
	str(&o, "predicted_step_s"), num(&o, r->predicted);
	str(&o, "buckets"), seq_start(&o);
	for (size_t i = 0; i < r->nbuckets; i++) {
		const autosync_feedback_bucket_t *b = &r->buckets[i];
		if (!clean(b->kind, sizeof(b->kind)) ||
		    !clean(b->algo, sizeof(b->algo)) ||
		    !clean(b->compress, sizeof(b->compress))) {
			o.failed = 2;
			break;
		}
		map_start(&o);
		str(&o, "kind"), str(&o, b->kind);
		str(&o, "algo"), str(&o, b->algo);
		str(&o, "compress"), str(&o, b->compress);
		str(&o, "servers"), u64(&o, b->servers);
		str(&o, "tensors"), u64(&o, b->tensors);
		str(&o, "bytes"), num(&o, b->bytes);
		map_end(&o);
	}
	seq_end(&o);
	str(&o, "baselines"), map_start(&o);
	for (size_t i = 0; i < r->nbaselines; i++) {
		if (!clean(r->baselines[i].name, sizeof(r->baselines[i].name))) {
			o.failed = 2;
			break;
		}
		str(&o, r->baselines[i].name), num(&o, r->baselines[i].predicted);
	}
	map_end(&o);
	str(&o, "measured_step_s"), seq_start(&o);
	for (size_t i = 0; i < r->nmeasured; i++)
		num(&o, r->measured[i]);
	seq_end(&o);
	str(&o, "measured_count"), u64(&o, r->measured_count);
	str(&o, "measured_mean_s"), num(&o, r->measured_mean);
	str(&o, "user_influenced"), seq_start(&o);
	for (size_t i = 0; i < NUSER; i++)
		if (r->influenced & (1u << i))
			str(&o, user_names[i]);
	seq_end(&o);
	map_end(&o);
	if (!o.failed) {
		yaml_document_end_event_initialize(&o.ev, 1);
		emit(&o);
		yaml_stream_end_event_initialize(&o.ev);
		emit(&o);
	}
	yaml_emitter_delete(&o.e);
	if (fclose(fp) != 0)
		o.failed = 1;
	fp = NULL;
	if (o.failed) {
		errno = o.failed == 2 ? EINVAL : ENOMEM;
		autosync_errprintf(errp, "feedback: cannot format the record%s",
				   o.failed == 2 ? ": control characters" : "");
		goto out;
	}
	/* libyaml ends a document with "\n" (and may add "...\n"); keep one line */
	{
		char *nl = memchr(buf, '\n', blen);
		if (!nl) {
			errno = EINVAL;
			autosync_errprintf(errp, "feedback: unexpected emitter output");
			goto out;
		}
		blen = (size_t) (nl - buf) + 1;
		buf[blen] = '\0';
	}
	*line = buf;
	*len = blen;
	buf = NULL;
	rv = 0;
out:
	free(buf);
	return rv;
}

/* ------------------------------------------------------------ parsing */

static const char *sc(yaml_document_t *d, yaml_node_t *n)
{
	(void) d;
	return n && n->type == YAML_SCALAR_NODE ? (const char *) n->data.scalar.value
						: NULL;
}

static int get_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int get_num(const char *s, double *v)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	return errno || *end || !isfinite(*v) ? -1 : 0;
}

/* A string field: what the writer would refuse (control characters) the
 * reader refuses too, so that every record read can be written again. */
static int get_str(const char *s, char *dst, size_t max)
{
	if (!s || strlen(s) >= max || !clean(s, max))
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int parse_time(const char *s, int64_t *out)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *end)
		return -1;
	*out = (int64_t) timegm(&tm);
	return 0;
}

static int parse_bucket(yaml_document_t *d, yaml_node_t *m,
			autosync_feedback_bucket_t *b)
{
	if (m->type != YAML_MAPPING_NODE)
		return -1;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		const char *k = sc(d, yaml_document_get_node(d, p->key));
		const char *v = sc(d, yaml_document_get_node(d, p->value));
		uint64_t u;
		int bad = 0;

		if (!k)
			return -1;
		if (!strcmp(k, "kind"))
			bad = get_str(v, b->kind, sizeof(b->kind));
		else if (!strcmp(k, "algo"))
			bad = get_str(v, b->algo, sizeof(b->algo));
		else if (!strcmp(k, "compress"))
			bad = get_str(v, b->compress, sizeof(b->compress));
		else if (!strcmp(k, "servers"))
			bad = get_u64(v, &u) || u > UINT_MAX ? -1 : (b->servers = (unsigned) u, 0);
		else if (!strcmp(k, "tensors"))
			bad = get_u64(v, &u) || u > UINT_MAX ? -1 : (b->tensors = (unsigned) u, 0);
		else if (!strcmp(k, "bytes"))
			bad = get_num(v, &b->bytes);
		if (bad)
			return -1;
	}
	return 0;
}

/* the keys every record has */
static const char *const required[] = {
	"version",	"time",	     "source",		 "job",
	"step",		"node",	     "nodes",		 "gpus_per_node",
	"model",	"model_hash", "plan_hash",	 "framework",
	"strategy",	"predicted_step_s", "measured_count", "user_influenced",
};
#define NREQ (sizeof(required) / sizeof(required[0]))

/* "user_influenced": a list of the names in user_names */
static int parse_user(yaml_document_t *d, yaml_node_t *n, unsigned *user)
{
	if (!n || n->type != YAML_SEQUENCE_NODE)
		return -1;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		const char *v = sc(d, yaml_document_get_node(d, *it));
		size_t i = 0;
		while (v && i < NUSER && strcmp(v, user_names[i]))
			i++;
		if (!v || i == NUSER)
			return -1;
		*user |= 1u << i;
	}
	return 0;
}

int autosync_feedback_parse(const char *line, size_t len,
			    autosync_feedback_rec_t *r, autosync_error_t *errp)
{
	yaml_document_t doc;
	yaml_node_t *root;
	autosync_error_t e = { .text = "" };
	const char *bad = NULL;
	unsigned seen = 0;
	int rv = -1;

	if (!line || !r) {
		errno = EINVAL;
		return autosync_errprintf(errp, "invalid argument");
	}
	memset(r, 0, sizeof(*r));
	/* a record has a few nodes per bucket, baseline and step time */
	if (asi_yaml_load(&doc, line, len, "record",
			  4 * (AUTOSYNC_FEEDBACK_MAX_BUCKETS * 14 +
			       AUTOSYNC_FEEDBACK_MAX_MEASURED + 256),
			  &e) < 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "not a record: %s", e.text);
	}
	if (asi_yaml_no_duplicates(&doc, "record", &e) < 0) {
		yaml_document_delete(&doc);
		errno = EINVAL;
		return autosync_errprintf(errp, "not a record: %s", e.text);
	}
	root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		errno = EINVAL;
		autosync_errprintf(errp, "not a record");
		goto out;
	}
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top && !bad; p++) {
		yaml_node_t *vn = yaml_document_get_node(&doc, p->value);
		const char *k = sc(&doc, yaml_document_get_node(&doc, p->key));
		const char *v = sc(&doc, vn);
		uint64_t u = 0;

		if (!k) {
			bad = "a key is not a string";
			break;
		}
#define STR(key, field) \
	else if (!strcmp(k, key)) { if (get_str(v, r->field, sizeof(r->field))) bad = key; }
#define U64(key, field, max) \
	else if (!strcmp(k, key)) { if (get_u64(v, &u) || u > (max)) bad = key; else r->field = u; }
		for (size_t i = 0; i < NREQ; i++)
			if (!strcmp(k, required[i]))
				seen |= 1u << i;
		if (!strcmp(k, "version")) {
			if (get_u64(v, &u) || u < 1 || u > AUTOSYNC_FEEDBACK_VERSION)
				bad = "version";
			else
				r->version = (unsigned) u;
		} else if (!strcmp(k, "user_influenced")) {
			if (parse_user(&doc, vn, &r->influenced))
				bad = k;
		} else if (!strcmp(k, "time")) {
			if (parse_time(v, &r->time))
				bad = "time";
		}
		STR("source", source) STR("user", user) STR("node", node)
		STR("model", model) STR("model_hash", model_hash)
		STR("topo_hash", topo_hash) STR("plan_hash", plan_hash)
		STR("framework", framework) STR("strategy", strategy)
		STR("cluster", cluster)
		U64("job", job, UINT64_MAX) U64("step", step, UINT64_MAX)
		U64("uid", uid, UINT32_MAX) U64("nodes", nodes, UINT_MAX)
		U64("gpus_per_node", gpus_per_node, UINT_MAX)
		U64("measured_count", measured_count, UINT64_MAX)
		else if (!strcmp(k, "predicted_step_s")) {
			if (get_num(v, &r->predicted))
				bad = k;
		} else if (!strcmp(k, "scale")) {
			if (get_num(v, &r->scale) || r->scale <= 0)
				bad = k;
		} else if (!strcmp(k, "measured_mean_s")) {
			if (get_num(v, &r->measured_mean))
				bad = k;
		} else if (!strcmp(k, "buckets")) {
			if (vn->type != YAML_SEQUENCE_NODE) {
				bad = k;
				break;
			}
			for (yaml_node_item_t *it = vn->data.sequence.items.start;
			     it < vn->data.sequence.items.top; it++) {
				if (r->nbuckets == AUTOSYNC_FEEDBACK_MAX_BUCKETS ||
				    parse_bucket(&doc, yaml_document_get_node(&doc, *it),
						 &r->buckets[r->nbuckets++])) {
					bad = k;
					break;
				}
			}
		} else if (!strcmp(k, "baselines")) {
			if (vn->type != YAML_MAPPING_NODE) {
				bad = k;
				break;
			}
			for (yaml_node_pair_t *q = vn->data.mapping.pairs.start;
			     q < vn->data.mapping.pairs.top; q++) {
				autosync_feedback_baseline_t *b =
					&r->baselines[r->nbaselines];
				if (r->nbaselines == AUTOSYNC_FEEDBACK_MAX_BASELINES ||
				    get_str(sc(&doc, yaml_document_get_node(&doc, q->key)),
					    b->name, sizeof(b->name)) ||
				    get_num(sc(&doc, yaml_document_get_node(&doc, q->value)),
					    &b->predicted)) {
					bad = k;
					break;
				}
				r->nbaselines++;
			}
		} else if (!strcmp(k, "measured_step_s")) {
			if (vn->type != YAML_SEQUENCE_NODE) {
				bad = k;
				break;
			}
			for (yaml_node_item_t *it = vn->data.sequence.items.start;
			     it < vn->data.sequence.items.top; it++) {
				if (r->nmeasured == AUTOSYNC_FEEDBACK_MAX_MEASURED ||
				    get_num(sc(&doc, yaml_document_get_node(&doc, *it)),
					    &r->measured[r->nmeasured++])) {
					bad = k;
					break;
				}
			}
		}
		/* unknown keys: ignored, so that newer writers stay readable */
#undef STR
#undef U64
	}
	if (bad) {
		errno = EINVAL;
		autosync_errprintf(errp, "bad field '%s'", bad);
		goto out;
	}
	for (size_t i = 0; i < NREQ; i++)
		/* a version 1 record says nothing of its user */
		if (!(seen & (1u << i)) &&
		    !(r->version == 1 && !strcmp(required[i], "user_influenced"))) {
			errno = EINVAL;
			autosync_errprintf(errp, "field '%s' is missing",
					   required[i]);
			goto out;
		}
	if (r->version == 1)
		r->influenced |= AUTOSYNC_FEEDBACK_USER_UNKNOWN;
	if (autosync_feedback_check(r, errp) < 0)
		goto out;
	rv = 0;
out:
	yaml_document_delete(&doc);
	return rv;
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
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
				O_NOCTTY | O_NONBLOCK, 0640);
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
			autosync_errprintf(errp, "%s: keeps being replaced", path);
			goto out;
		}
		goto again;
	}
	base = st.st_size;
	if (max_bytes && st.st_size > 0 && (size_t) st.st_size + len > max_bytes) {
		if (keep == 0) {
			base = 0;
			if (ftruncate(fd, 0) < 0) {
				autosync_errprintf(errp, "%s: truncate: %s", path,
						   strerror(errno));
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
		if (w < 0 || (size_t) w != len) {
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
			buf[n++] = (char) c;
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
		return autosync_errprintf(errp, path && fn ? "out of memory"
							   : "invalid argument");
	}
	/* a log is a regular file: never block on a FIFO, never read a
	 * device without end */
	if ((fd = asi_open_file(AT_FDCWD, path, 0, ASI_READ_OPEN_PREFIX,
				(uid_t) -1, msg, sizeof(msg))) < 0 ||
	    !(fp = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		free(line);
		free(r);
		return autosync_errprintf(errp, "%s", msg);
	}
	while (more && (n = read_line(fp, line, AUTOSYNC_FEEDBACK_MAX_LINE + 2,
				      &more)) > 0) {
		autosync_error_t e = { .text = "" };
		char msg2[AUTOSYNC_ERROR_LEN + PATH_MAX];

		lineno++;
		if (n == 1 && line[0] == '\n')
			continue;
		if (n > AUTOSYNC_FEEDBACK_MAX_LINE) {
			snprintf(e.text, sizeof(e.text), "line too long (over "
				 "%d bytes)", AUTOSYNC_FEEDBACK_MAX_LINE);
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

static void set_bucket(autosync_feedback_bucket_t *fb, const autosync_bucket_t *b)
{
	int ps = b->kind == AUTOSYNC_SYNC_PS;

	snprintf(fb->kind, sizeof(fb->kind), "%s", ps ? "ps" : "allreduce");
	snprintf(fb->algo, sizeof(fb->algo), "%s",
		 ps ? "" : autosync_algo_name(b->algo));
	snprintf(fb->compress, sizeof(fb->compress), "%s",
		 autosync_compress_name(b->compress));
	fb->servers = ps ? b->servers : 0;
	fb->tensors = (unsigned) b->ntensors;
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
	(void) autosync_cluster_format(&s.cluster, r->cluster,
				       sizeof(r->cluster));
	r->predicted = s.step_time;
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
		const autosync_plan_baseline_t *b = autosync_plan_baseline(plan, i);
		snprintf(r->baselines[r->nbaselines].name,
			 sizeof(r->baselines[0].name), "%s", b->name);
		r->baselines[r->nbaselines++].predicted = b->step_time;
	}
	return 0;
}
