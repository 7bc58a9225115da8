/* yaml.c - how the planner's readers load their YAML documents: through
 * the one bounded reader and the key-table reader of common/. */
#include "config.h"

#include <string.h>

#include "internal.h"

char *planner_xstrdup(const char *s)
{
	char *r = strdup(s ? s : "");
	return r;
}

/* a model of AUTOSYNC_MAX_TENSORS tensors in flow style needs about ten
 * nodes per tensor */
#define MAX_NODES ((size_t)AUTOSYNC_MAX_TENSORS * 16)

int planner_yload(asi_yreader_t *r, const char *buf, size_t len,
		  const char *fname, autosync_error_t *errp)
{
	memset(r, 0, sizeof(*r));
	r->errp = errp;
	return asi_yreader_load(r, buf, len, fname, MAX_NODES, 0);
}

int planner_yload_file(asi_yreader_t *r, const char *path, size_t max,
		       autosync_error_t *errp)
{
	memset(r, 0, sizeof(*r));
	r->errp = errp;
	return asi_yreader_load_file(r, path, max, MAX_NODES, 0);
}
