/* args.c - see args.h */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "args.h"
#include "common/text.h"

void as_args_init(struct as_args *a)
{
	memset(a, 0, sizeof(*a));
	a->mode = AS_MODE_UNSET;
}

const char *as_mode_name(int mode)
{
	switch (mode) {
	case AS_MODE_OFF:
		return "off";
	case AS_MODE_AUTO:
		return "auto";
	case AS_MODE_REQUIRED:
		return "required";
	case AS_MODE_PLAN:
		return "plan";
	default:
		return "unset";
	}
}

/* Printable ASCII without spaces: what a path or name given on a command
 * line may hold. Anything else is refused rather than sanitised. */
static int printable(const char *s)
{
	for (; *s; s++)
		if (*s <= 0x20 || *s >= 0x7f)
			return 0;
	return 1;
}

static int is_catalog_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > AS_MODEL_NAME_MAX)
		return 0;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		      *s == '.'))
			return 0;
	return 1;
}

/* A path must say it is one (contain '/'), so that a typo such as
 * --autosync=atuo is refused instead of being taken for a file name. */
static int is_path(const char *s)
{
	return strchr(s, '/') != NULL && strlen(s) < PATH_MAX && printable(s);
}

int as_args_set_mode(struct as_args *a, const char *val, int src,
		     const char *what, char *err, size_t errlen)
{
	char q[96];
	int mode;

	if (!val || !*val) {
		snprintf(err, errlen,
			 "autosync: invalid %s value '' (expected auto, off, "
			 "required or a path to a plan file)",
			 what);
		return -1;
	}
	if (!strcmp(val, "auto"))
		mode = AS_MODE_AUTO;
	else if (!strcmp(val, "off"))
		mode = AS_MODE_OFF;
	else if (!strcmp(val, "required"))
		mode = AS_MODE_REQUIRED;
	else if (is_path(val))
		mode = AS_MODE_PLAN;
	else {
		snprintf(err, errlen,
			 "autosync: invalid %s value '%s' (expected auto, off, "
			 "required or a path to a plan file)",
			 what, asi_quote(val, q, sizeof(q)));
		return -1;
	}
	if (src < a->mode_src)
		return 0;
	a->mode = mode;
	a->mode_src = src;
	if (mode == AS_MODE_PLAN)
		snprintf(a->plan_path, sizeof(a->plan_path), "%s", val);
	else
		a->plan_path[0] = '\0';
	return 0;
}

int as_args_set_model(struct as_args *a, const char *val, int src,
		      const char *what, char *err, size_t errlen)
{
	char q[96];

	if (!val || (!is_catalog_name(val) && !is_path(val))) {
		snprintf(err, errlen,
			 "autosync: invalid %s value '%s' (expected a catalog "
			 "model name such as resnet50, or a path to a model "
			 "file)",
			 what, asi_quote(val, q, sizeof(q)));
		return -1;
	}
	if (src < a->model_src)
		return 0;
	snprintf(a->model, sizeof(a->model), "%s", val);
	a->model_src = src;
	return 0;
}

int as_args_set_compression(struct as_args *a, const char *val, int src,
			    const char *what, char *err, size_t errlen)
{
	char q[96];
	int on = val ? asi_parse_bool(val) : 1;

	if (on < 0) {
		snprintf(err, errlen,
			 "autosync: invalid %s value '%s' (expected yes or no)",
			 what, asi_quote(val, q, sizeof(q)));
		return -1;
	}
	if (src < a->compress_src)
		return 0;
	a->compress = on;
	a->compress_src = src;
	return 0;
}

int as_args_effective_mode(const struct as_args *a, int site_default)
{
	if (a->mode != AS_MODE_UNSET)
		return a->mode;
	if (a->model[0])
		return AS_MODE_AUTO;
	return site_default;
}
