/* siteconf.c - the site configuration (see autosync/siteconf.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "autosync/siteconf.h"
#include "autosync/planner.h"
#include "autosync/topology.h"
#include "common/readfile.h"
#include "common/yamlload.h"
#include "common/ykeys.h"

#define NAME_MAX_LEN 32

struct partition {
	char name[NAME_MAX_LEN * 2];
	int mode;
};

struct autosync_siteconf {
	int default_mode;
	struct partition *parts;
	size_t nparts;
	int allowed;
	char framework[NAME_MAX_LEN];
	char catalog_dir[PATH_MAX];
	char calibration[PATH_MAX];
	char runtime_dir[PATH_MAX];
	char topology_xml[PATH_MAX];
	char feedback_path[PATH_MAX];
	size_t feedback_max;
	unsigned feedback_keep;
	unsigned budget_ms;
	long keep_job_files; /* s */
	size_t max_model;
	size_t plan_memory;
	unsigned version; /* the file's format version, 0 = not given */
	/* network: which fields the file set */
	int has_bw, has_lat, has_nics, has_nps;
	double nic_bw, lat;
	unsigned nics, nps;
	char (*fabric)[NAME_MAX_LEN];
	size_t nfabric;
	int nccl_plugins;
	int nccl_calibrate;
	char nccl_plugin_dir[PATH_MAX];
};

struct ctx {
	const char *path;
	yaml_document_t *doc;
	autosync_siteconf_t *s;
	autosync_siteconf_problem_f fn;
	void *arg;
	int nproblems;
	autosync_error_t *first;
	int nomem;
};

static void problem(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char what[AUTOSYNC_ERROR_LEN], msg[AUTOSYNC_ERROR_LEN + PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s:%lu: %s", c->path,
		 n ? (unsigned long)n->start_mark.line + 1 : 1UL, what);
	if (c->nproblems++ == 0 && c->first)
		autosync_errprintf(c->first, "%s", msg);
	if (c->fn)
		c->fn(msg, c->arg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		   ? (const char *)n->data.scalar.value
		   : NULL;
}

/* Quote a user value for a message: bounded, control bytes escaped. */
static const char *q(const char *v, char *buf, size_t len)
{
	size_t o = 0;

	for (; v && *v && o + 8 < len; v++) {
		unsigned char ch = (unsigned char)*v;
		if (ch >= 0x20 && ch != 0x7f)
			buf[o++] = (char)ch;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", ch);
	}
	if (v && *v)
		o += (size_t)snprintf(buf + o, len - o, "...");
	buf[o] = '\0';
	return buf;
}

/* ------------------------------------------------------------ value types */

typedef int (*handler_f)(struct ctx *c, const char *key, yaml_node_t *v,
			 void *dst);

static int want_scalar(struct ctx *c, const char *key, yaml_node_t *v,
		       const char **out)
{
	const char *s = scalar(v);

	if (!s) {
		problem(c, v, "'%s' must be a single value, not a %s", key,
			v->type == YAML_MAPPING_NODE ? "mapping" : "list");
		return -1;
	}
	*out = s;
	return 0;
}

static int parse_mode(const char *s)
{
	if (!strcmp(s, "off"))
		return AUTOSYNC_SITE_MODE_OFF;
	if (!strcmp(s, "auto"))
		return AUTOSYNC_SITE_MODE_AUTO;
	return -1;
}

static int h_mode(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	const char *s;
	char b[80];
	int m;

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	if ((m = parse_mode(s)) < 0) {
		problem(c, v, "'%s': bad value '%s' (expected off or auto)",
			key, q(s, b, sizeof(b)));
		return -1;
	}
	*(int *)dst = m;
	return 0;
}

static int h_path(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	const char *s;
	char b[80];

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	if (!*s) {
		((char *)dst)[0] = '\0';
		return 0;
	}
	if (s[0] != '/' || strlen(s) >= PATH_MAX) {
		problem(c, v,
			"'%s': bad value '%s' (expected an absolute path)", key,
			q(s, b, sizeof(b)));
		return -1;
	}
	snprintf((char *)dst, PATH_MAX, "%s", s);
	return 0;
}

static int h_framework(struct ctx *c, const char *key, yaml_node_t *v,
		       void *dst)
{
	const char *s;
	char b[80];

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	/* the planner's names, so that what validates here also plans */
	if (strlen(s) < NAME_MAX_LEN && autosync_framework_from_name(s) >= 0) {
		snprintf((char *)dst, NAME_MAX_LEN, "%s", s);
		return 0;
	}
	problem(c, v,
		"'%s': bad value '%s' (expected pytorch-ddp, horovod, "
		"autodist or generic)",
		key, q(s, b, sizeof(b)));
	return -1;
}

static int parse_uint(const char *s, unsigned long long max,
		      unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

struct uint_spec {
	unsigned long long min, max;
};

static int uint_value(struct ctx *c, const char *key, yaml_node_t *v,
		      unsigned long long min, unsigned long long max,
		      unsigned long long *out)
{
	const char *s;
	char b[80];

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	if (parse_uint(s, max, out) < 0 || *out < min) {
		problem(c, v,
			"'%s': bad value '%s' (expected an integer from "
			"%llu to %llu)",
			key, q(s, b, sizeof(b)), min, max);
		return -1;
	}
	return 0;
}

/* Sizes: an integer number of bytes with an optional suffix K/M/G/T
 * (1000) or KiB/MiB/GiB/TiB (1024), at most 1TiB. */
static int h_size(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	static const struct {
		const char *sfx;
		unsigned long long mul;
	} sfx[] = {
	    {"", 1},
	    {"B", 1},
	    {"K", 1000ULL},
	    {"KB", 1000ULL},
	    {"M", 1000000ULL},
	    {"MB", 1000000ULL},
	    {"G", 1000000000ULL},
	    {"GB", 1000000000ULL},
	    {"T", 1000000000000ULL},
	    {"TB", 1000000000000ULL},
	    {"KiB", 1ULL << 10},
	    {"MiB", 1ULL << 20},
	    {"GiB", 1ULL << 30},
	    {"TiB", 1ULL << 40},
	};
	const unsigned long long max = 1ULL << 40;
	const char *s;
	char num[32], b[80];
	size_t n = 0;

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	while (s[n] >= '0' && s[n] <= '9' && n < sizeof(num) - 1) {
		num[n] = s[n];
		n++;
	}
	num[n] = '\0';
	for (size_t i = 0; n && i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		unsigned long long base;
		if (strcmp(s + n, sfx[i].sfx))
			continue;
		if (parse_uint(num, max, &base) < 0 ||
		    base > max / sfx[i].mul || base == 0)
			break;
		*(size_t *)dst = (size_t)(base * sfx[i].mul);
		return 0;
	}
	problem(c, v,
		"'%s': bad value '%s' (expected a size such as 1048576, "
		"64MiB or 100MB, at least 1 byte and at most 1TiB)",
		key, q(s, b, sizeof(b)));
	return -1;
}

/* The planning child holds a model file and its parsed form within its
 * address-space cap: a larger limit would only fail every read later. */
#define MAX_MODEL_FILE (256ULL << 20)

static int h_model_size(struct ctx *c, const char *key, yaml_node_t *v,
			void *dst)
{
	char b[80];

	if (h_size(c, key, v, dst) < 0)
		return -1;
	if (*(size_t *)dst <= MAX_MODEL_FILE)
		return 0;
	problem(c, v,
		"'%s': '%s' is more than a model file may be (at most "
		"256MiB: planning holds the file and its parsed form in "
		"memory)",
		key, q((const char *)v->data.scalar.value, b, sizeof(b)));
	return -1;
}

static int h_memory(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	char b[80];

	if (h_size(c, key, v, dst) < 0)
		return -1;
	if (*(size_t *)dst >= (256u << 20))
		return 0;
	problem(c, v, "'%s': '%s' is too little to plan in (at least 256MiB)",
		key, q((const char *)v->data.scalar.value, b, sizeof(b)));
	return -1;
}

static int h_bool(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	static const char *const t[] = {"true", "yes", "on", "1"};
	static const char *const f[] = {"false", "no", "off", "0"};
	const char *s;
	char b[80];

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	for (size_t i = 0; i < 4; i++) {
		if (!strcmp(s, t[i])) {
			*(int *)dst = 1;
			return 0;
		}
		if (!strcmp(s, f[i])) {
			*(int *)dst = 0;
			return 0;
		}
	}
	problem(c, v, "'%s': bad value '%s' (expected true or false)", key,
		q(s, b, sizeof(b)));
	return -1;
}

/* Durations: an integer with s, m, h or d (a bare number is seconds), at
 * most 90 days; 0 is allowed. */
static int h_duration(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	static const struct {
		const char *sfx;
		long mul;
	} sfx[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
	const long max = 90L * 86400;
	const char *s;
	char num[16], b[80];
	size_t n = 0;

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	while (s[n] >= '0' && s[n] <= '9' && n < sizeof(num) - 1) {
		num[n] = s[n];
		n++;
	}
	num[n] = '\0';
	for (size_t i = 0; n && i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		unsigned long long x;
		if (strcmp(s + n, sfx[i].sfx))
			continue;
		if (parse_uint(num, (unsigned long long)max, &x) < 0 ||
		    (long)x > max / sfx[i].mul)
			break;
		*(long *)dst = (long)x * sfx[i].mul;
		return 0;
	}
	problem(c, v,
		"'%s': bad value '%s' (expected a duration such as 0, "
		"3600, 30m, 12h or 7d, at most 90d)",
		key, q(s, b, sizeof(b)));
	return -1;
}

static int h_budget(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	unsigned long long x;

	if (uint_value(c, key, v, 1, 60000, &x) < 0)
		return -1;
	*(unsigned *)dst = (unsigned)x;
	return 0;
}

static int h_keep(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	unsigned long long x;

	if (uint_value(c, key, v, 0, 100, &x) < 0)
		return -1;
	*(unsigned *)dst = (unsigned)x;
	return 0;
}

static int h_version(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	const char *s;
	char b[80];

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	if (strcmp(s, "1") && strcmp(s, "2")) {
		problem(c, v,
			"'%s': unsupported version '%s' (this autosync "
			"reads versions 1 and 2)",
			key, q(s, b, sizeof(b)));
		return -1;
	}
	*(unsigned *)dst = (unsigned)(s[0] - '0');
	return 0;
}
static int h_allowed(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	static const struct {
		const char *name;
		int bit;
	} names[] = {
	    {"off", AUTOSYNC_ALLOW_OFF},
	    {"auto", AUTOSYNC_ALLOW_AUTO},
	    {"required", AUTOSYNC_ALLOW_REQUIRED},
	    {"plan", AUTOSYNC_ALLOW_PLAN},
	};
	int bits = 0, rc = 0;

	if (v->type != YAML_SEQUENCE_NODE) {
		problem(c, v,
			"'%s' must be a list such as [auto, off, "
			"required, plan]",
			key);
		return -1;
	}
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(c->doc, *it);
		const char *s = scalar(e);
		size_t i;
		char b[80];

		for (i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(s, names[i].name))
				break;
		if (!s || i == sizeof(names) / sizeof(names[0])) {
			problem(c, e,
				"'%s': bad entry '%s' (expected auto, off, "
				"required or plan)",
				key, q(s ? s : "(not a value)", b, sizeof(b)));
			rc = -1;
			continue;
		}
		bits |= names[i].bit;
	}
	if (rc == 0)
		*(int *)dst = bits;
	return rc;
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= NAME_MAX_LEN)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-' ||
		      *s == '.' || *s == ':'))
			return 0;
	return 1;
}

static int h_partitions(struct ctx *c, const char *key, yaml_node_t *v,
			void *dst)
{
	autosync_siteconf_t *s = c->s;
	size_t n;
	int rc = 0;

	(void)dst;
	if (v->type != YAML_MAPPING_NODE) {
		problem(c, v,
			"'%s' must be a mapping of partition name to off "
			"or auto",
			key);
		return -1;
	}
	n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	free(s->parts);
	s->nparts = 0;
	if (!(s->parts = calloc(n ? n : 1, sizeof(*s->parts)))) {
		c->nomem = 1;
		return -1;
	}
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
	     p < v->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *val = yaml_document_get_node(c->doc, p->value);
		const char *name = scalar(k), *m = scalar(val);
		char b[80];
		int mode;

		if (!name || !valid_name(name)) {
			problem(c, k, "'%s': bad partition name '%s'", key,
				q(name ? name : "(not a value)", b, sizeof(b)));
			rc = -1;
			continue;
		}
		for (size_t i = 0; i < s->nparts; i++)
			if (!strcmp(s->parts[i].name, name)) {
				problem(c, k,
					"'%s': partition '%s' given twice", key,
					name);
				rc = -1;
			}
		if (!m || (mode = parse_mode(m)) < 0) {
			problem(c, val,
				"'%s': partition '%s': bad value '%s' "
				"(expected off or auto)",
				key, name,
				q(m ? m : "(not a value)", b, sizeof(b)));
			rc = -1;
			continue;
		}
		snprintf(s->parts[s->nparts].name, sizeof(s->parts[0].name),
			 "%s", name);
		s->parts[s->nparts++].mode = mode;
	}
	return rc;
}

static int h_bandwidth(struct ctx *c, const char *key, yaml_node_t *v,
		       void *dst)
{
	autosync_error_t e = {.text = ""};
	const char *s;

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	if (autosync_parse_bandwidth(s, (double *)dst, &e) < 0) {
		problem(c, v, "'%s': %s", key, e.text);
		return -1;
	}
	c->s->has_bw = 1;
	return 0;
}

static int h_latency(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	autosync_error_t e = {.text = ""};
	const char *s;

	if (want_scalar(c, key, v, &s) < 0)
		return -1;
	if (autosync_parse_duration(s, (double *)dst, &e) < 0) {
		problem(c, v, "'%s': %s", key, e.text);
		return -1;
	}
	c->s->has_lat = 1;
	return 0;
}

static int h_nics(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	unsigned long long x;

	if (uint_value(c, key, v, 1, 64, &x) < 0)
		return -1;
	*(unsigned *)dst = (unsigned)x;
	c->s->has_nics = 1;
	return 0;
}

static int h_nps(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	unsigned long long x;

	if (uint_value(c, key, v, 0, 65536, &x) < 0)
		return -1;
	*(unsigned *)dst = (unsigned)x;
	c->s->has_nps = 1;
	return 0;
}

static int h_fabric(struct ctx *c, const char *key, yaml_node_t *v, void *dst)
{
	autosync_siteconf_t *s = c->s;
	size_t n;
	int rc = 0;

	(void)dst;
	if (v->type != YAML_SEQUENCE_NODE) {
		problem(c, v,
			"'%s' must be a list of NIC names such as "
			"[mlx5_0, mlx5_1]",
			key);
		return -1;
	}
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	free(s->fabric);
	s->nfabric = 0;
	if (!(s->fabric = calloc(n ? n : 1, sizeof(*s->fabric)))) {
		c->nomem = 1;
		return -1;
	}
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(c->doc, *it);
		const char *name = scalar(e);
		char b[80];

		if (!name || !valid_name(name)) {
			problem(c, e, "'%s': bad NIC name '%s'", key,
				q(name ? name : "(not a value)", b, sizeof(b)));
			rc = -1;
			continue;
		}
		snprintf(s->fabric[s->nfabric++], NAME_MAX_LEN, "%s", name);
	}
	return rc;
}

struct key {
	const char *name;
	handler_f fn;
	size_t off;
	const struct key *sub; /* for nested mappings */
};

static int walk(struct ctx *c, yaml_node_t *map, const struct key *keys,
		const char *prefix);

static const struct key network_keys[] = {
    {"nic_bandwidth", h_bandwidth, offsetof(autosync_siteconf_t, nic_bw), NULL},
    {"latency", h_latency, offsetof(autosync_siteconf_t, lat), NULL},
    {"nics_per_node", h_nics, offsetof(autosync_siteconf_t, nics), NULL},
    {"fabric_nics", h_fabric, 0, NULL},
    {"nodes_per_switch", h_nps, offsetof(autosync_siteconf_t, nps), NULL},
    {NULL, NULL, 0, NULL},
};

static const struct key feedback_keys[] = {
    {"path", h_path, offsetof(autosync_siteconf_t, feedback_path), NULL},
    {"max_bytes", h_size, offsetof(autosync_siteconf_t, feedback_max), NULL},
    {"keep", h_keep, offsetof(autosync_siteconf_t, feedback_keep), NULL},
    {NULL, NULL, 0, NULL},
};

static const struct key top_keys[] = {
    {"version", h_version, offsetof(autosync_siteconf_t, version), NULL},
    {"default_mode", h_mode, offsetof(autosync_siteconf_t, default_mode), NULL},
    {"partitions", h_partitions, 0, NULL},
    {"allowed_modes", h_allowed, offsetof(autosync_siteconf_t, allowed), NULL},
    {"default_framework", h_framework, offsetof(autosync_siteconf_t, framework),
     NULL},
    {"catalog_dir", h_path, offsetof(autosync_siteconf_t, catalog_dir), NULL},
    {"calibration", h_path, offsetof(autosync_siteconf_t, calibration), NULL},
    {"runtime_dir", h_path, offsetof(autosync_siteconf_t, runtime_dir), NULL},
    {"keep_job_files", h_duration,
     offsetof(autosync_siteconf_t, keep_job_files), NULL},
    {"topology_xml", h_path, offsetof(autosync_siteconf_t, topology_xml), NULL},
    {"plan_budget_ms", h_budget, offsetof(autosync_siteconf_t, budget_ms),
     NULL},
    {"max_model_bytes", h_model_size, offsetof(autosync_siteconf_t, max_model),
     NULL},
    {"plan_memory", h_memory, offsetof(autosync_siteconf_t, plan_memory), NULL},
    {"nccl_plugins", h_bool, offsetof(autosync_siteconf_t, nccl_plugins), NULL},
    {"nccl_plugin_dir", h_path, offsetof(autosync_siteconf_t, nccl_plugin_dir),
     NULL},
    {"nccl_calibrate", h_bool, offsetof(autosync_siteconf_t, nccl_calibrate),
     NULL},
    {"network", NULL, 0, network_keys},
    {"feedback", NULL, 0, feedback_keys},
    {NULL, NULL, 0, NULL},
};

/* the one unknown-key message of every autosync file (common/ykeys.c) */
static void unknown_key(struct ctx *c, yaml_node_t *k, const struct key *keys,
			const char *prefix, const char *name)
{
	const char *names[64];
	char msg[1400];
	size_t n = 0;

	while (keys[n].name && n < sizeof(names) / sizeof(names[0])) {
		names[n] = keys[n].name;
		n++;
	}
	asi_ykey_unknown(name ? name : "(not a value)", names, n, msg,
			 sizeof(msg));
	problem(c, k, "%s%s%s", prefix, prefix[0] ? ": " : "", msg);
}

static int walk(struct ctx *c, yaml_node_t *map, const struct key *keys,
		const char *prefix)
{
	unsigned char seen[32] = {0};

	if (map->type != YAML_MAPPING_NODE) {
		problem(c, map, "%s%s must be a mapping of key: value",
			prefix[0] ? "'" : "", prefix[0] ? prefix : "the file");
		return -1;
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *name = scalar(k);
		char full[128];
		size_t i;

		for (i = 0; name && keys[i].name; i++)
			if (!strcmp(keys[i].name, name))
				break;
		if (!name || !keys[i].name) {
			unknown_key(c, k, keys, prefix, name);
			continue;
		}
		snprintf(full, sizeof(full), "%s%s%s", prefix,
			 prefix[0] ? "." : "", name);
		if (seen[i]++) {
			problem(c, k, "key '%s' given twice", full);
			continue;
		}
		if (keys[i].sub)
			walk(c, v, keys[i].sub, full);
		else
			keys[i].fn(c, full, v, (char *)c->s + keys[i].off);
	}
	return 0;
}

static void set_defaults(autosync_siteconf_t *s)
{
	s->default_mode = AUTOSYNC_SITE_MODE_OFF;
	s->allowed = AUTOSYNC_ALLOW_OFF | AUTOSYNC_ALLOW_AUTO |
		     AUTOSYNC_ALLOW_REQUIRED | AUTOSYNC_ALLOW_PLAN;
	snprintf(s->framework, sizeof(s->framework), "pytorch-ddp");
	s->feedback_max = 64u << 20;
	s->feedback_keep = 3;
	s->budget_ms = 1000;
	s->keep_job_files = 86400;
	s->max_model = 16u << 20;
	s->plan_memory = (size_t)4 << 30;
	snprintf(s->nccl_plugin_dir, sizeof(s->nccl_plugin_dir), "%s",
		 AUTOSYNC_LIBDIR);
}

autosync_siteconf_t *autosync_siteconf_create(autosync_error_t *errp)
{
	autosync_siteconf_t *s = calloc(1, sizeof(*s));

	if (!s) {
		autosync_errprintf(errp, "out of memory");
		return NULL;
	}
	set_defaults(s);
	return s;
}

void autosync_siteconf_destroy(autosync_siteconf_t *s)
{
	if (!s)
		return;
	free(s->parts);
	free(s->fabric);
	free(s);
}

/* Read a whole regular file of at most 'max' bytes. */
static char *read_file(const char *path, size_t max, size_t *lenp,
		       autosync_error_t *errp)
{
	char *buf = NULL, msg[AUTOSYNC_ERROR_LEN];

	if (asi_read_file(path, max, ASI_READ_OPEN_PREFIX, (uid_t)-1, &buf,
			  lenp, msg, sizeof(msg)) < 0) {
		autosync_errprintf(errp, "%s", msg);
		return NULL;
	}
	return buf;
}

/* Parse and validate; returns the handle (even with problems) or NULL when
 * the file could not be read or parsed at all. */
static autosync_siteconf_t *load(const char *path,
				 autosync_siteconf_problem_f fn, void *arg,
				 int *nproblems, autosync_error_t *errp)
{
	yaml_document_t doc;
	autosync_siteconf_t *s = NULL;
	char *buf = NULL;
	size_t len = 0;
	int have_doc = 0;
	struct ctx c = {.path = path, .fn = fn, .arg = arg, .first = errp};

	*nproblems = 0;
	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "site config: no path given");
		return NULL;
	}
	if (!(buf = read_file(path, AUTOSYNC_SITECONF_MAX_BYTES, &len, errp)))
		goto out;
	if (!(s = autosync_siteconf_create(errp)))
		goto out;
	/* a site config is a few dozen keys; the bound is generous */
	if (asi_yaml_load(&doc, buf, len, path, 100000, errp) < 0) {
		if (fn)
			fn(errp ? errp->text : "not valid YAML", arg);
		*nproblems = 1;
		goto fail;
	}
	have_doc = 1;
	c.doc = &doc;
	c.s = s;
	{
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		/* an empty file is a valid config with every default */
		if (root && !(root->type == YAML_SCALAR_NODE &&
			      root->data.scalar.length == 0))
			walk(&c, root, top_keys, "");
	}
	if (c.nomem) {
		autosync_errprintf(errp, "out of memory");
		errno = ENOMEM;
		goto fail;
	}
	*nproblems = c.nproblems;
	goto out;
fail:
	autosync_siteconf_destroy(s);
	s = NULL;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	free(buf);
	return s;
}

autosync_siteconf_t *autosync_siteconf_load(const char *path,
					    autosync_error_t *errp)
{
	int n;
	autosync_siteconf_t *s = load(path, NULL, NULL, &n, errp);

	if (s && n > 0) {
		autosync_siteconf_destroy(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

int autosync_siteconf_check(const char *path, autosync_siteconf_problem_f fn,
			    void *arg, autosync_error_t *errp)
{
	int n;
	autosync_siteconf_t *s = load(path, fn, arg, &n, errp);

	if (!s)
		return n > 0 ? n : -1; /* n > 0: the YAML itself is broken */
	autosync_siteconf_destroy(s);
	return n;
}

int autosync_siteconf_default_mode(const autosync_siteconf_t *s,
				   const char *partition)
{
	if (!s)
		return AUTOSYNC_SITE_MODE_OFF;
	for (size_t i = 0; partition && i < s->nparts; i++)
		if (!strcmp(s->parts[i].name, partition))
			return s->parts[i].mode;
	return s->default_mode;
}

int autosync_siteconf_mode_allowed(const autosync_siteconf_t *s, int allow_bit)
{
	return s ? (s->allowed & allow_bit) != 0 : 1;
}

#define GETTER(type, name, field)                                   \
	type autosync_siteconf_##name(const autosync_siteconf_t *s) \
	{                                                           \
		return s->field;                                    \
	}
GETTER(const char *, framework, framework)
GETTER(const char *, catalog_dir, catalog_dir)
GETTER(const char *, calibration, calibration)
GETTER(const char *, runtime_dir, runtime_dir)
GETTER(const char *, topology_xml, topology_xml)
GETTER(const char *, feedback_path, feedback_path)
GETTER(size_t, feedback_max_bytes, feedback_max)
GETTER(unsigned, feedback_keep, feedback_keep)
GETTER(unsigned, plan_budget_ms, budget_ms)
GETTER(long, keep_job_files, keep_job_files)
GETTER(size_t, max_model_bytes, max_model)
GETTER(size_t, plan_memory, plan_memory)
GETTER(unsigned, version, version)
GETTER(size_t, nfabric_nics, nfabric)
GETTER(int, nccl_plugins, nccl_plugins)
GETTER(int, nccl_calibrate, nccl_calibrate)
GETTER(const char *, nccl_plugin_dir, nccl_plugin_dir)
#undef GETTER

const char *autosync_siteconf_fabric_nic(const autosync_siteconf_t *s, size_t i)
{
	return i < s->nfabric ? s->fabric[i] : NULL;
}

void autosync_siteconf_apply_network(const autosync_siteconf_t *s,
				     autosync_cluster_t *c)
{
	if (!s || !c)
		return;
	if (s->has_bw)
		c->nic_bw = s->nic_bw;
	if (s->has_lat)
		c->inter_lat = s->lat;
	if (s->has_nics)
		c->nics_per_node = s->nics;
	if (s->has_nps)
		c->nodes_per_switch = s->nps;
}
