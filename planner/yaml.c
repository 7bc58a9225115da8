/* yaml.c - small helpers over libyaml's document API with messages that
 * name the file, the line and the offending value. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/readfile.h"
#include "common/yamlload.h"
#include "internal.h"

char *planner_xstrdup(const char *s)
{
	char *r = strdup(s ? s : "");
	return r;
}

/* The files the planner reads by path (models, plans, cost constants)
 * through the one bounded reader: regular files only, at most 256 MiB (a
 * FIFO or /dev/zero is refused, not read). */
int planner_read_file(const char *path, char **bufp, size_t *lenp,
		      autosync_error_t *errp)
{
	char msg[PATH_MAX + 128];

	if (!path || !bufp || !lenp) {
		errno = EINVAL;
		return autosync_errprintf(errp, "read_file: invalid argument");
	}
	if (asi_read_file(path, (size_t)256 << 20, ASI_READ_OPEN_PREFIX,
			  (uid_t)-1, bufp, lenp, msg, sizeof(msg)) < 0)
		return autosync_errprintf(errp, "%s", msg);
	return 0;
}

/* a model of AUTOSYNC_MAX_TENSORS tensors in flow style needs about ten
 * nodes per tensor */
#define MAX_NODES ((size_t)AUTOSYNC_MAX_TENSORS * 16)

int planner_ydoc_load(struct ydoc *d, const char *buf, size_t len,
		      const char *fname, autosync_error_t *errp)
{
	memset(d, 0, sizeof(*d));
	d->fname = fname ? fname : "(input)";
	if (asi_yaml_load(&d->doc, buf, len, d->fname, MAX_NODES, errp) < 0)
		return -1;
	d->loaded = 1;
	if (asi_yaml_no_duplicates(&d->doc, d->fname, errp) < 0) {
		int saved = errno;
		planner_ydoc_free(d);
		errno = saved;
		return -1;
	}
	if (!yaml_document_get_root_node(&d->doc)) {
		errno = EINVAL;
		planner_ydoc_free(d);
		return autosync_errprintf(errp, "%s: empty document", d->fname);
	}
	return 0;
}

void planner_ydoc_free(struct ydoc *d)
{
	if (d && d->loaded)
		yaml_document_delete(&d->doc);
	if (d)
		d->loaded = 0;
}

yaml_node_t *planner_ydoc_root(struct ydoc *d)
{
	return yaml_document_get_root_node(&d->doc);
}

yaml_node_t *planner_ydoc_node(struct ydoc *d, int id)
{
	return yaml_document_get_node(&d->doc, id);
}

unsigned planner_ynode_line(const yaml_node_t *n)
{
	return n ? (unsigned)n->start_mark.line + 1 : 0;
}

const char *planner_yscalar(const yaml_node_t *n)
{
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)n->data.scalar.value;
}

yaml_node_t *planner_ymap_get(struct ydoc *d, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *pr;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (pr = map->data.mapping.pairs.start;
	     pr < map->data.mapping.pairs.top; pr++) {
		const char *k = planner_yscalar(planner_ydoc_node(d, pr->key));
		if (k && !strcmp(k, key))
			return planner_ydoc_node(d, pr->value);
	}
	return NULL;
}

static const char *type_name(yaml_node_type_t t)
{
	switch (t) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

int planner_yexpect(struct ydoc *d, yaml_node_t *n, yaml_node_type_t type,
		    const char *what, autosync_error_t *errp)
{
	if (!n) {
		errno = EINVAL;
		return autosync_errprintf(errp, "%s: %s: missing", d->fname,
					  what);
	}
	if (n->type != type) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: expected %s, got %s%s%s%s", d->fname,
		    planner_ynode_line(n), what, type_name(type),
		    type_name(n->type), planner_yscalar(n) ? " '" : "",
		    planner_yscalar(n) ? planner_yscalar(n) : "",
		    planner_yscalar(n) ? "'" : "");
	}
	return 0;
}

int planner_yget_str(struct ydoc *d, yaml_node_t *n, const char *what,
		     const char **out, autosync_error_t *errp)
{
	if (planner_yexpect(d, n, YAML_SCALAR_NODE, what, errp) < 0)
		return -1;
	*out = planner_yscalar(n);
	return 0;
}

int planner_yget_i64(struct ydoc *d, yaml_node_t *n, const char *what,
		     int64_t *out, autosync_error_t *errp)
{
	const char *s;
	char *end;
	long long v;

	if (planner_yget_str(d, n, what, &s, errp) < 0)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (!*s || *end || errno) {
		int e = errno == ERANGE ? ERANGE : EINVAL;
		errno = e;
		return autosync_errprintf(
		    errp, "%s:%u: %s: '%s' is not %s", d->fname,
		    planner_ynode_line(n), what, s,
		    e == ERANGE ? "a representable integer" : "an integer");
	}
	*out = v;
	return 0;
}

int planner_yget_u64(struct ydoc *d, yaml_node_t *n, const char *what,
		     uint64_t min, uint64_t max, uint64_t *out,
		     autosync_error_t *errp)
{
	const char *s;
	char *end;
	unsigned long long v;

	if (planner_yget_str(d, n, what, &s, errp) < 0)
		return -1;
	errno = 0;
	if (*s == '-') {
		errno = EINVAL;
		return autosync_errprintf(errp, "%s:%u: %s: '%s' is negative",
					  d->fname, planner_ynode_line(n), what,
					  s);
	}
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno) {
		int e = errno == ERANGE ? EOVERFLOW : EINVAL;
		errno = e;
		return autosync_errprintf(
		    errp, "%s:%u: %s: '%s' is not %s", d->fname,
		    planner_ynode_line(n), what, s,
		    e == EOVERFLOW ? "a representable integer" : "an integer");
	}
	if (v < min || v > max) {
		errno = v > max ? EOVERFLOW : EINVAL;
		return autosync_errprintf(
		    errp,
		    "%s:%u: %s: '%s' is out of range [%" PRIu64 ", %" PRIu64
		    "]",
		    d->fname, planner_ynode_line(n), what, s, min, max);
	}
	*out = v;
	return 0;
}

int planner_yget_double(struct ydoc *d, yaml_node_t *n, const char *what,
			double min, double max, double *out,
			autosync_error_t *errp)
{
	const char *s;
	char *end;
	double v;

	if (planner_yget_str(d, n, what, &s, errp) < 0)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v)) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: '%s' is not a finite number", d->fname,
		    planner_ynode_line(n), what, s);
	}
	if (v < min || v > max) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: '%s' is out of range [%g, %g]", d->fname,
		    planner_ynode_line(n), what, s, min, max);
	}
	*out = v;
	return 0;
}

int planner_yget_bool(struct ydoc *d, yaml_node_t *n, const char *what,
		      int *out, autosync_error_t *errp)
{
	const char *s;

	if (planner_yget_str(d, n, what, &s, errp) < 0)
		return -1;
	if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "1")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	errno = EINVAL;
	return autosync_errprintf(errp, "%s:%u: %s: '%s' is not true or false",
				  d->fname, planner_ynode_line(n), what, s);
}
