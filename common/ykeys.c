/* ykeys.c - the key-table YAML reader (see ykeys.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "readfile.h"
#include "text.h"
#include "ykeys.h"
#include "yamlload.h"

/* room for a quoted value in a message */
#define QLEN 96
/* room for a key's full name ("feedback.max_bytes", "tensors[12].shape") */
#define KEYLEN 128

/* ------------------------------------------------------------ documents */

int asi_yreader_load(asi_yreader_t *r, const char *buf, size_t len,
		     const char *fname, size_t max_nodes, int empty_ok)
{
	autosync_error_t e = {.text = ""};
	yaml_node_t *root;

	r->fname = fname ? fname : "(input)";
	r->loaded = 0;
	if (asi_yaml_load(&r->doc, buf, len, r->fname, max_nodes, &e) < 0) {
		int saved = errno;
		r->nproblems++;
		autosync_errprintf(r->errp, "%s", e.text);
		if (r->problem)
			r->problem(e.text, r->arg);
		errno = saved;
		return -1;
	}
	r->loaded = 1;
	if (!r->collect &&
	    asi_yaml_no_duplicates(&r->doc, r->fname, r->errp) < 0) {
		int saved = errno;
		r->nproblems++;
		asi_yreader_free(r);
		errno = saved;
		return -1;
	}
	root = asi_yroot(r);
	if (!root && !empty_ok) {
		int rv = asi_yproblem(r, NULL, "empty document");
		asi_yreader_free(r);
		errno = EINVAL;
		return rv;
	}
	return 0;
}

int asi_yreader_load_file(asi_yreader_t *r, const char *path, size_t max,
			  size_t max_nodes, int empty_ok)
{
	char *buf = NULL, msg[AUTOSYNC_ERROR_LEN];
	size_t len = 0;
	int rv, saved;

	r->fname = path;
	if (asi_read_file(path, max, ASI_READ_OPEN_PREFIX, (uid_t)-1, &buf,
			  &len, msg, sizeof(msg)) < 0) {
		saved = errno;
		r->nproblems++;
		autosync_errprintf(r->errp, "%s", msg);
		if (r->problem)
			r->problem(msg, r->arg);
		errno = saved;
		return -1;
	}
	rv = asi_yreader_load(r, buf, len, path, max_nodes, empty_ok);
	saved = errno;
	free(buf);
	errno = saved;
	return rv;
}

void asi_yreader_free(asi_yreader_t *r)
{
	if (r && r->loaded)
		yaml_document_delete(&r->doc);
	if (r)
		r->loaded = 0;
}

yaml_node_t *asi_yroot(asi_yreader_t *r)
{
	yaml_node_t *root = yaml_document_get_root_node(&r->doc);

	/* an empty document reads as an empty plain scalar */
	if (root && root->type == YAML_SCALAR_NODE &&
	    root->data.scalar.length == 0 &&
	    root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		return NULL;
	return root;
}

yaml_node_t *asi_ynode(asi_yreader_t *r, int id)
{
	return yaml_document_get_node(&r->doc, id);
}

unsigned long asi_yline(const yaml_node_t *n)
{
	return n ? (unsigned long)n->start_mark.line + 1 : 1UL;
}

const char *asi_yscalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		   ? (const char *)n->data.scalar.value
		   : NULL;
}

/* ------------------------------------------------------------ problems */

int asi_yproblem(asi_yreader_t *r, const yaml_node_t *n, const char *fmt, ...)
{
	char what[AUTOSYNC_ERROR_LEN], msg[AUTOSYNC_ERROR_LEN * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s:%lu: %s", r->fname, asi_yline(n), what);
	if (r->nproblems++ == 0 || !r->collect)
		autosync_errprintf(r->errp, "%s", msg);
	if (r->problem)
		r->problem(msg, r->arg);
	errno = EINVAL;
	return -1;
}

int asi_ynomem(asi_yreader_t *r)
{
	r->nomem = 1;
	r->nproblems++;
	autosync_errprintf(r->errp, "%s: out of memory", r->fname);
	errno = ENOMEM;
	return -1;
}

static const char *kind_name(const yaml_node_t *n)
{
	switch (n ? n->type : YAML_NO_NODE) {
	case YAML_SCALAR_NODE:
		return "a single value";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

int asi_yexpect(asi_yreader_t *r, yaml_node_t *n, yaml_node_type_t type,
		const char *key)
{
	static const yaml_node_t want[] = {
	    {.type = YAML_NO_NODE},
	    {.type = YAML_SCALAR_NODE},
	    {.type = YAML_SEQUENCE_NODE},
	    {.type = YAML_MAPPING_NODE},
	};
	char q[QLEN];

	if (n && n->type == type)
		return 0;
	if (n && n->type == YAML_SCALAR_NODE)
		return asi_yproblem(r, n, "%s: expected %s, not '%s'", key,
				    kind_name(&want[type]),
				    asi_quote(asi_yscalar(n), q, sizeof(q)));
	return asi_yproblem(r, n, "%s: expected %s, not %s", key,
			    kind_name(&want[type]), kind_name(n));
}

yaml_node_t *asi_ymap_get(asi_yreader_t *r, yaml_node_t *map, const char *name)
{
	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		const char *k = asi_yscalar(asi_ynode(r, p->key));
		if (k && !strcmp(k, name))
			return asi_ynode(r, p->value);
	}
	return NULL;
}

/* ------------------------------------------------------------ values */

static int bad_value(asi_yreader_t *r, yaml_node_t *n, const char *key,
		     const char *expected)
{
	char q[QLEN];

	return asi_yproblem(r, n, "%s: bad value '%s' (expected %s)", key,
			    asi_quote(asi_yscalar(n), q, sizeof(q)), expected);
}

int asi_yget_str(asi_yreader_t *r, yaml_node_t *n, const char *key,
		 const char **out)
{
	if (asi_yexpect(r, n, YAML_SCALAR_NODE, key) < 0)
		return -1;
	*out = asi_yscalar(n);
	return 0;
}

/* a whole decimal number, no sign, no blanks */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int asi_yget_u64(asi_yreader_t *r, yaml_node_t *n, const char *key,
		 uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s;
	char exp[96];
	uint64_t v;

	if (asi_yget_str(r, n, key, &s) < 0)
		return -1;
	if (parse_u64(s, &v) < 0 || v < min || v > max) {
		snprintf(exp, sizeof(exp),
			 "an integer from %" PRIu64 " to %" PRIu64, min, max);
		return bad_value(r, n, key, exp);
	}
	*out = v;
	return 0;
}

int asi_yget_i64(asi_yreader_t *r, yaml_node_t *n, const char *key, int64_t min,
		 int64_t max, int64_t *out)
{
	const char *s;
	char *end, exp[96];
	long long v;

	if (asi_yget_str(r, n, key, &s) < 0)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno || s[*s == '-'] < '0' || s[*s == '-'] > '9' ||
	    v < min || v > max) {
		snprintf(exp, sizeof(exp),
			 "an integer from %" PRId64 " to %" PRId64, min, max);
		return bad_value(r, n, key, exp);
	}
	*out = v;
	return 0;
}

int asi_yget_double(asi_yreader_t *r, yaml_node_t *n, const char *key,
		    double min, double max, double *out)
{
	const char *s;
	char *end, exp[96];
	double v;

	if (asi_yget_str(r, n, key, &s) < 0)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < min || v > max) {
		snprintf(exp, sizeof(exp), "a number from %g to %g", min, max);
		return bad_value(r, n, key, exp);
	}
	*out = v;
	return 0;
}

static const struct {
	const char *sfx;
	uint64_t mul;
} size_sfx[] = {
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

int asi_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char num[24];
	size_t n = 0;
	uint64_t base;

	if (!s) {
		errno = EINVAL;
		return -1;
	}
	while (s[n] >= '0' && s[n] <= '9' && n < sizeof(num) - 1) {
		num[n] = s[n];
		n++;
	}
	num[n] = '\0';
	for (size_t i = 0; n && i < sizeof(size_sfx) / sizeof(size_sfx[0]);
	     i++) {
		if (strcmp(s + n, size_sfx[i].sfx))
			continue;
		if (parse_u64(num, &base) < 0 ||
		    base > UINT64_MAX / size_sfx[i].mul)
			break;
		base *= size_sfx[i].mul;
		if (base < min || base > max) {
			errno = ERANGE;
			return -1;
		}
		*out = base;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

char *asi_format_size(uint64_t v, char *buf, size_t len)
{
	/* the largest unit that divides v exactly */
	for (size_t i = sizeof(size_sfx) / sizeof(size_sfx[0]); i-- > 2;) {
		if (v && v % size_sfx[i].mul == 0 && v >= size_sfx[i].mul &&
		    size_sfx[i].sfx[1] == 'i') {
			snprintf(buf, len, "%" PRIu64 "%s", v / size_sfx[i].mul,
				 size_sfx[i].sfx);
			return buf;
		}
	}
	for (size_t i = 9; i >= 2; i -= 2) {
		if (v && v % size_sfx[i].mul == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", v / size_sfx[i].mul,
				 size_sfx[i].sfx);
			return buf;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static int get_size(asi_yreader_t *r, yaml_node_t *n, const char *key,
		    uint64_t min, uint64_t max, uint64_t *out)
{
	const char *s;
	char exp[160], a[32], b[32];

	if (asi_yget_str(r, n, key, &s) < 0)
		return -1;
	if (asi_parse_size(s, min, max, out) == 0)
		return 0;
	snprintf(exp, sizeof(exp),
		 "a size from %s to %s, such as 1048576, 64MiB or 100MB",
		 asi_format_size(min, a, sizeof(a)),
		 asi_format_size(max, b, sizeof(b)));
	return bad_value(r, n, key, exp);
}

/* The names of an enumeration, for a message and for suggestions. */
static size_t enum_names(const struct asi_ykey *k, const char **names,
			 size_t max)
{
	size_t n = 0;

	if (k->values)
		for (; n < max && k->values[n]; n++)
			names[n] = k->values[n];
	else if (k->name_of)
		for (const char *s; n < max && (s = k->name_of((int)n)); n++)
			names[n] = s;
	return n;
}

int asi_yget_enum(asi_yreader_t *r, yaml_node_t *n, const char *key,
		  const struct asi_ykey *k, int *out)
{
	const char *s, *names[64], *sug;
	char list[512], exp[640], q[QLEN];
	size_t nn;
	int v = -1;

	if (asi_yget_str(r, n, key, &s) < 0)
		return -1;
	if (k->conv)
		v = k->conv(s);
	else
		for (size_t i = 0; k->values && k->values[i]; i++)
			if (!strcmp(k->values[i], s))
				v = (int)i;
	if (v >= 0) {
		*out = v;
		return 0;
	}
	nn = enum_names(k, names, sizeof(names) / sizeof(names[0]));
	asi_list(names, nn, list, sizeof(list));
	if ((sug = asi_suggest(s, names, nn)))
		snprintf(exp, sizeof(exp), "did you mean '%s'? expected %s",
			 sug, list);
	else
		snprintf(exp, sizeof(exp), "expected %s", list);
	return asi_yproblem(r, n, "%s: bad value '%s' (%s)", key,
			    asi_quote(s, q, sizeof(q)), exp);
}

static int get_version(asi_yreader_t *r, yaml_node_t *n,
		       const struct asi_ykey *k, const char *key, unsigned *out)
{
	const char *s;
	char q[QLEN], reads[64];
	uint64_t v;

	if (asi_yget_str(r, n, key, &s) < 0)
		return -1;
	if (parse_u64(s, &v) == 0 && v >= k->umin && v <= k->umax) {
		*out = (unsigned)v;
		return 0;
	}
	if (k->umin == k->umax)
		snprintf(reads, sizeof(reads), "version %" PRIu64, k->umax);
	else
		snprintf(reads, sizeof(reads), "versions %" PRIu64 "%s%" PRIu64,
			 k->umin, k->umax == k->umin + 1 ? " and " : " to ",
			 k->umax);
	asi_yproblem(r, n,
		     "%s: version '%s' is not supported (this autosync reads "
		     "%s)",
		     key, asi_quote(s, q, sizeof(q)), reads);
	errno = ENOTSUP;
	return -1;
}

/* One value into its destination. */
static int read_value(asi_yreader_t *r, yaml_node_t *v,
		      const struct asi_ykey *k, const char *key, void *base)
{
	char *dst = (char *)base + k->off, q[QLEN];
	const char *s;
	uint64_t u;

	switch (k->type) {
	case ASI_Y_STR:
	case ASI_Y_BUF:
		if (asi_yget_str(r, v, key, &s) < 0)
			return -1;
		if (!*s && !(k->flags & ASI_Y_EMPTY_OK))
			return asi_yproblem(r, v, "%s: must not be empty", key);
		if (k->type == ASI_Y_BUF) {
			if (strlen(s) >= k->size)
				return asi_yproblem(
				    r, v,
				    "%s: bad value '%s' (longer than %zu "
				    "bytes)",
				    key, asi_quote(s, q, sizeof(q)),
				    k->size - 1);
			memcpy(dst, s, strlen(s) + 1);
			return 0;
		} else {
			char *c = strdup(s);
			if (!c)
				return asi_ynomem(r);
			free(*(char **)dst);
			*(char **)dst = c;
			return 0;
		}
	case ASI_Y_BOOL: {
		int b;
		if (asi_yget_str(r, v, key, &s) < 0)
			return -1;
		if ((b = asi_parse_bool(s)) < 0)
			return bad_value(r, v, key, "true or false");
		*(int *)dst = b;
		return 0;
	}
	case ASI_Y_UINT:
		if (asi_yget_u64(r, v, key, k->umin, k->umax, &u) < 0)
			return -1;
		*(unsigned *)dst = (unsigned)u;
		return 0;
	case ASI_Y_U64:
		return asi_yget_u64(r, v, key, k->umin, k->umax,
				    (uint64_t *)(void *)dst);
	case ASI_Y_DOUBLE:
		return asi_yget_double(r, v, key, k->dmin, k->dmax,
				       (double *)(void *)dst);
	case ASI_Y_SIZE:
		if (get_size(r, v, key, k->umin, k->umax, &u) < 0)
			return -1;
		*(size_t *)(void *)dst = (size_t)u;
		return 0;
	case ASI_Y_ENUM:
		return asi_yget_enum(r, v, key, k, (int *)(void *)dst);
	case ASI_Y_VERSION:
		return get_version(r, v, k, key, (unsigned *)(void *)dst);
	case ASI_Y_MAP:
		return asi_ykeys_read(r, v, k->sub, base, key);
	case ASI_Y_NODE:
		if (!k->cb) {
			*(yaml_node_t **)(void *)dst = v;
			return 0;
		}
		return k->cb(r, v, key, base);
	}
	return asi_yproblem(r, v, "%s: no reader for this key", key);
}

/* ------------------------------------------------------------ tables */

static int unknown_key(asi_yreader_t *r, yaml_node_t *kn,
		       const struct asi_ykey *keys, const char *where)
{
	const char *names[64], *name = asi_yscalar(kn), *sug;
	char list[768], q[QLEN], hint[96] = "";
	size_t n = 0;

	for (; keys[n].name && n < sizeof(names) / sizeof(names[0]); n++)
		names[n] = keys[n].name;
	asi_list(names, n, list, sizeof(list));
	if (name && (sug = asi_suggest(name, names, n)))
		snprintf(hint, sizeof(hint), "did you mean '%s'? ", sug);
	return asi_yproblem(
	    r, kn, "unknown key '%s%s%s' (%sknown: %s)", where,
	    *where ? "." : "",
	    name ? asi_quote(name, q, sizeof(q)) : "(not a value)", hint, list);
}

static const char *full_name(char *buf, size_t len, const char *where,
			     const char *name)
{
	snprintf(buf, len, "%s%s%s", where, *where ? "." : "", name);
	return buf;
}

int asi_ykeys_read(asi_yreader_t *r, yaml_node_t *map,
		   const struct asi_ykey *keys, void *base, const char *where)
{
	unsigned long first[64] = {0}; /* line of each key seen, 0: not */
	char key[KEYLEN];
	size_t nk = 0, i;
	int rv = 0;

	where = where ? where : "";
	while (keys[nk].name)
		nk++;
	if (nk > sizeof(first) / sizeof(first[0])) {
		errno = EINVAL;
		return asi_yproblem(r, map, "%s: key table too long", where);
	}
	if (!map || map->type != YAML_MAPPING_NODE)
		return asi_yexpect(r, map, YAML_MAPPING_NODE,
				   *where ? where : "the file");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = asi_ynode(r, p->key);
		yaml_node_t *vn = asi_ynode(r, p->value);
		const char *name = asi_yscalar(kn);

		for (i = 0; name && i < nk; i++)
			if (!strcmp(keys[i].name, name))
				break;
		if (!name || i == nk) {
			rv = unknown_key(r, kn, keys, where);
		} else if (first[i]) {
			rv = asi_yproblem(
			    r, kn, "key '%s' given twice (first on line %lu)",
			    full_name(key, sizeof(key), where, name), first[i]);
		} else {
			first[i] = asi_yline(kn);
			if (read_value(r, vn, &keys[i],
				       full_name(key, sizeof(key), where, name),
				       base) < 0)
				rv = -1;
		}
		if (rv < 0 && (!r->collect || r->nomem))
			return -1;
	}
	for (i = 0; i < nk; i++) {
		if (first[i] || !(keys[i].flags & ASI_Y_REQUIRED))
			continue;
		if (keys[i].type == ASI_Y_VERSION)
			rv = asi_yproblem(
			    r, map, "not %s (no '%s: %" PRIu64 "')",
			    keys[i].what ? keys[i].what : "an autosync file",
			    keys[i].name, keys[i].umax);
		else
			rv = asi_yproblem(
			    r, map, "missing key '%s'",
			    full_name(key, sizeof(key), where, keys[i].name));
		if (!r->collect)
			return -1;
	}
	return rv;
}

/* ------------------------------------------------------------ versions */

const char *asi_yversion_note(char *buf, size_t len, const char *fname,
			      const char *format, unsigned v, unsigned current,
			      const char *what_changed)
{
	if (!len)
		return NULL;
	buf[0] = '\0';
	if (v == current)
		return NULL;
	snprintf(buf, len, "%s: %s version %u, read as version %u%s%s",
		 fname ? fname : "(input)", format, v, current,
		 what_changed && *what_changed ? ": " : "",
		 what_changed ? what_changed : "");
	return buf;
}
