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
#include "common/text.h"
#include "common/ykeys.h"

#define NAME_MAX_LEN 32

struct partition {
	char name[NAME_MAX_LEN * 2];
	int mode;
	unsigned long line;
};

struct autosync_siteconf {
	unsigned version;			  /* of the file read */
	char note[AUTOSYNC_ERROR_LEN + PATH_MAX]; /* about it, or "" */
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
	/* network: which fields the file set */
	int has_bw, has_lat, has_nics, has_nps;
	int transport; /* enum autosync_transport; unknown: not given */
	double nic_bw, lat;
	unsigned nics, nps;
	char (*fabric)[NAME_MAX_LEN];
	size_t nfabric;
	int nccl_plugins;
	int nccl_calibrate;
	int allow_compression;
	char nccl_plugin_dir[PATH_MAX];
	char simulator[PATH_MAX];
	char simulator_module[PATH_MAX];
};

/* ------------------------------------------------------------ value types */

static int h_path(asi_yreader_t *r, yaml_node_t *v, const char *key, char *dst)
{
	const char *s;
	char b[96];

	if (asi_yget_str(r, v, key, &s) < 0)
		return -1;
	if (*s && (s[0] != '/' || strlen(s) >= PATH_MAX))
		return asi_yproblem(
		    r, v, "%s: bad value '%s' (expected an absolute path)", key,
		    asi_quote(s, b, sizeof(b)));
	snprintf(dst, PATH_MAX, "%s", s);
	return 0;
}

#define PATH_KEY(field)                                              \
	static int h_##field(asi_yreader_t *r, yaml_node_t *v,       \
			     const char *key, void *base)            \
	{                                                            \
		return h_path(r, v, key,                             \
			      ((autosync_siteconf_t *)base)->field); \
	}
PATH_KEY(catalog_dir)
PATH_KEY(calibration)
PATH_KEY(runtime_dir)
PATH_KEY(topology_xml)
PATH_KEY(feedback_path)
PATH_KEY(nccl_plugin_dir)
PATH_KEY(simulator)
PATH_KEY(simulator_module)
#undef PATH_KEY

static int h_framework(asi_yreader_t *r, yaml_node_t *v, const char *key,
		       void *base)
{
	/* the planner's names, so that what validates here also plans */
	static const struct asi_ykey k = {
	    .name = "default_framework",
	    .type = ASI_Y_ENUM,
	    .conv = autosync_framework_from_name,
	    .name_of = autosync_framework_name,
	};
	autosync_siteconf_t *s = base;
	int fw;

	if (asi_yget_enum(r, v, key, &k, &fw) < 0)
		return -1;
	snprintf(s->framework, sizeof(s->framework), "%s",
		 autosync_framework_name(fw));
	return 0;
}

/* Durations: an integer with s, m, h or d (a bare number is seconds), at
 * most 90 days; 0 is allowed. */
static int h_duration(asi_yreader_t *r, yaml_node_t *v, const char *key,
		      void *base)
{
	static const struct {
		const char *sfx;
		long mul;
	} sfx[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
	const long max = 90L * 86400;
	const char *s;
	char num[16], b[96], *end;
	size_t n = 0;

	if (asi_yget_str(r, v, key, &s) < 0)
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
		errno = 0;
		x = strtoull(num, &end, 10);
		if (errno || *end || x > (unsigned long long)(max / sfx[i].mul))
			break;
		((autosync_siteconf_t *)base)->keep_job_files =
		    (long)x * sfx[i].mul;
		return 0;
	}
	return asi_yproblem(r, v,
			    "%s: bad value '%s' (expected a duration such as "
			    "0, 3600, 30m, 12h or 7d, at most 90d)",
			    key, asi_quote(s, b, sizeof(b)));
}

static int h_allowed(asi_yreader_t *r, yaml_node_t *v, const char *key,
		     void *base)
{
	static const char *const names[] = {"off", "auto", "required", "plan",
					    NULL};
	static const int bit[] = {AUTOSYNC_ALLOW_OFF, AUTOSYNC_ALLOW_AUTO,
				  AUTOSYNC_ALLOW_REQUIRED, AUTOSYNC_ALLOW_PLAN};
	static const struct asi_ykey k = {
	    .name = "allowed_modes", .type = ASI_Y_ENUM, .values = names};
	int bits = 0, rc = 0;

	if (asi_yexpect(r, v, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		int i;
		if (asi_yget_enum(r, asi_ynode(r, *it), key, &k, &i) < 0) {
			rc = -1;
			if (!r->collect)
				return -1;
			continue;
		}
		bits |= bit[i];
	}
	if (rc == 0)
		((autosync_siteconf_t *)base)->allowed = bits;
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

static const char *const mode_names[] = {
    [AUTOSYNC_SITE_MODE_OFF] = "off", [AUTOSYNC_SITE_MODE_AUTO] = "auto", NULL};

/* one partition: name -> mode */
static int partition(asi_yreader_t *r, autosync_siteconf_t *s,
		     yaml_node_pair_t *p, const char *key)
{
	static const struct asi_ykey k = {
	    .name = "partitions", .type = ASI_Y_ENUM, .values = mode_names};
	yaml_node_t *kn = asi_ynode(r, p->key);
	const char *name = asi_yscalar(kn);
	char b[96], full[160];
	int mode;

	if (!name || !valid_name(name))
		return asi_yproblem(
		    r, kn, "%s: bad partition name '%s'", key,
		    asi_quote(name ? name : "(not a value)", b, sizeof(b)));
	for (size_t i = 0; i < s->nparts; i++)
		if (!strcmp(s->parts[i].name, name))
			return asi_yproblem(r, kn,
					    "key '%s.%s' given twice (first "
					    "on line %lu)",
					    key, name, s->parts[i].line);
	snprintf(full, sizeof(full), "%s.%s", key, name);
	if (asi_yget_enum(r, asi_ynode(r, p->value), full, &k, &mode) < 0)
		return -1;
	snprintf(s->parts[s->nparts].name, sizeof(s->parts[0].name), "%s",
		 name);
	s->parts[s->nparts].line = asi_yline(kn);
	s->parts[s->nparts++].mode = mode;
	return 0;
}

static int h_partitions(asi_yreader_t *r, yaml_node_t *v, const char *key,
			void *base)
{
	autosync_siteconf_t *s = base;
	size_t n;
	int rc = 0;

	if (asi_yexpect(r, v, YAML_MAPPING_NODE, key) < 0)
		return -1;
	n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	free(s->parts);
	s->nparts = 0;
	if (!(s->parts = calloc(n ? n : 1, sizeof(*s->parts))))
		return asi_ynomem(r);
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start;
	     p < v->data.mapping.pairs.top; p++)
		if (partition(r, s, p, key) < 0) {
			rc = -1;
			if (!r->collect)
				break;
		}
	return rc;
}

static int h_bandwidth(asi_yreader_t *r, yaml_node_t *v, const char *key,
		       void *base)
{
	autosync_siteconf_t *s = base;
	autosync_error_t e = {.text = ""};
	const char *t;
	char q[96];

	if (asi_yget_str(r, v, key, &t) < 0)
		return -1;
	if (autosync_parse_bandwidth(t, &s->nic_bw, &e) < 0)
		return asi_yproblem(r, v, "%s: %s", key, e.text);
	if (s->nic_bw < AUTOSYNC_BW_MIN || s->nic_bw > AUTOSYNC_BW_MAX)
		return asi_yproblem(r, v,
				    "%s: '%s' out of range 1Mbit/s..100TB/s",
				    key, asi_quote(t, q, sizeof(q)));
	s->has_bw = 1;
	return 0;
}

static int h_latency(asi_yreader_t *r, yaml_node_t *v, const char *key,
		     void *base)
{
	autosync_siteconf_t *s = base;
	autosync_error_t e = {.text = ""};
	const char *t;
	char q[96];

	if (asi_yget_str(r, v, key, &t) < 0)
		return -1;
	if (autosync_parse_duration(t, &s->lat, &e) < 0)
		return asi_yproblem(r, v, "%s: %s", key, e.text);
	if (s->lat < AUTOSYNC_LAT_MIN || s->lat > AUTOSYNC_LAT_MAX)
		return asi_yproblem(r, v, "%s: '%s' out of range 1ns..1s", key,
				    asi_quote(t, q, sizeof(q)));
	s->has_lat = 1;
	return 0;
}

static int h_transport(asi_yreader_t *r, yaml_node_t *v, const char *key,
		       void *base)
{
	autosync_siteconf_t *s = base;
	const char *t;
	char q[96];
	int x;

	if (asi_yget_str(r, v, key, &t) < 0)
		return -1;
	if ((x = autosync_transport_from_name(t)) < 0)
		return asi_yproblem(
		    r, v,
		    "%s: bad value '%s' (expected tcp, ib, roce or "
		    "unknown)",
		    key, asi_quote(t, q, sizeof(q)));
	s->transport = x;
	return 0;
}

static int h_fabric(asi_yreader_t *r, yaml_node_t *v, const char *key,
		    void *base)
{
	autosync_siteconf_t *s = base;
	size_t n;
	int rc = 0;

	if (asi_yexpect(r, v, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	free(s->fabric);
	s->nfabric = 0;
	if (!(s->fabric = calloc(n ? n : 1, sizeof(*s->fabric))))
		return asi_ynomem(r);
	for (yaml_node_item_t *it = v->data.sequence.items.start;
	     it < v->data.sequence.items.top; it++) {
		yaml_node_t *e = asi_ynode(r, *it);
		const char *name = asi_yscalar(e);
		char b[96];

		if (!name || !valid_name(name)) {
			rc = asi_yproblem(
			    r, e, "%s: bad NIC name '%s'", key,
			    asi_quote(name ? name : "(not a value)", b,
				      sizeof(b)));
			if (!r->collect)
				break;
			continue;
		}
		snprintf(s->fabric[s->nfabric++], NAME_MAX_LEN, "%s", name);
	}
	return rc;
}

#define SC(f) offsetof(autosync_siteconf_t, f)
#define FN(n, f)                                       \
	{                                              \
		.name = n, .type = ASI_Y_NODE, .cb = f \
	}
#define SIZE(n, f, lo, hi)                                               \
	{                                                                \
		.name = n, .type = ASI_Y_SIZE, .off = SC(f), .umin = lo, \
		.umax = hi                                               \
	}
#define UNS(n, f, lo, hi)                                                \
	{                                                                \
		.name = n, .type = ASI_Y_UINT, .off = SC(f), .umin = lo, \
		.umax = hi                                               \
	}
#define BOOL(n, f)                                          \
	{                                                   \
		.name = n, .type = ASI_Y_BOOL, .off = SC(f) \
	}

static const struct asi_ykey network_keys[] = {
    FN("nic_bandwidth", h_bandwidth),
    FN("latency", h_latency),
    UNS("nics_per_node", nics, 1, 64),
    FN("fabric_nics", h_fabric),
    UNS("nodes_per_switch", nps, 0, 65536),
    FN("transport", h_transport),
    {.name = NULL},
};

static const struct asi_ykey feedback_keys[] = {
    FN("path", h_feedback_path),
    SIZE("max_bytes", feedback_max, 1, 1ULL << 40),
    UNS("keep", feedback_keep, 0, 100),
    {.name = NULL},
};

static const struct asi_ykey top_keys[] = {
    {.name = "version",
     .type = ASI_Y_VERSION,
     .off = SC(version),
     .umin = AUTOSYNC_SITECONF_VERSION - 1,
     .umax = AUTOSYNC_SITECONF_VERSION,
     .what = "an autosync site config"},
    {.name = "default_mode",
     .type = ASI_Y_ENUM,
     .off = SC(default_mode),
     .values = mode_names},
    FN("partitions", h_partitions),
    FN("allowed_modes", h_allowed),
    FN("default_framework", h_framework),
    FN("catalog_dir", h_catalog_dir),
    FN("calibration", h_calibration),
    FN("simulator", h_simulator),
    FN("simulator_module", h_simulator_module),
    FN("runtime_dir", h_runtime_dir),
    FN("keep_job_files", h_duration),
    FN("topology_xml", h_topology_xml),
    UNS("plan_budget_ms", budget_ms, 1, 60000),
    /* a larger limit would only fail every model read later */
    SIZE("max_model_bytes", max_model, 1, AUTOSYNC_MAX_MODEL_BYTES),
    SIZE("plan_memory", plan_memory, 256ULL << 20, 1ULL << 40),
    BOOL("nccl_plugins", nccl_plugins),
    FN("nccl_plugin_dir", h_nccl_plugin_dir),
    BOOL("nccl_calibrate", nccl_calibrate),
    BOOL("allow_compression", allow_compression),
    {.name = "network", .type = ASI_Y_MAP, .sub = network_keys},
    {.name = "feedback", .type = ASI_Y_MAP, .sub = feedback_keys},
    {.name = NULL},
};
#undef SC
#undef FN
#undef SIZE
#undef UNS
#undef BOOL

static void set_defaults(autosync_siteconf_t *s)
{
	s->version = AUTOSYNC_SITECONF_VERSION;
	s->default_mode = AUTOSYNC_SITE_MODE_OFF;
	s->allowed = AUTOSYNC_ALLOW_OFF | AUTOSYNC_ALLOW_AUTO |
		     AUTOSYNC_ALLOW_REQUIRED | AUTOSYNC_ALLOW_PLAN;
	snprintf(s->framework, sizeof(s->framework), "pytorch-ddp");
	s->feedback_max = 64u << 20;
	s->feedback_keep = 3;
	s->budget_ms = 1000;
	s->allow_compression = 1;
	s->keep_job_files = 86400;
	s->max_model = 16u << 20;
	s->plan_memory = (size_t)4 << 30;
	s->nps = UINT_MAX; /* not given */
	snprintf(s->nccl_plugin_dir, sizeof(s->nccl_plugin_dir), "%s",
		 AUTOSYNC_LIBDIR);
	snprintf(s->simulator_module, sizeof(s->simulator_module), "%s",
		 AUTOSYNC_LIBDIR "/autosync-simulator.so");
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

/* what a version 1 file meant differently */
static void version_note(autosync_siteconf_t *s, const char *path)
{
	asi_yversion_note(s->note, sizeof(s->note), path, "site config",
			  s->version, AUTOSYNC_SITECONF_VERSION,
			  "plan_budget_ms now defaults to 1000 and covers "
			  "loading the model and topology; plan_memory "
			  "(default 4GiB) and keep_job_files (default 1d) "
			  "are new; set 'version: 2' once checked");
}

/* Parse and validate; returns the handle (even with problems) or NULL when
 * the file could not be read or parsed at all. */
static autosync_siteconf_t *load(const char *path,
				 autosync_siteconf_problem_f fn, void *arg,
				 int *nproblems, autosync_error_t *errp)
{
	asi_yreader_t r = {
	    .errp = errp, .problem = fn, .arg = arg, .collect = 1};
	autosync_siteconf_t *s = NULL;
	yaml_node_t *root;
	char *buf = NULL, msg[AUTOSYNC_ERROR_LEN];
	size_t len = 0;

	*nproblems = 0;
	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "site config: no path given");
		return NULL;
	}
	if (asi_read_file(path, AUTOSYNC_SITECONF_MAX_BYTES,
			  ASI_READ_OPEN_PREFIX, (uid_t)-1, &buf, &len, msg,
			  sizeof(msg)) < 0) {
		autosync_errprintf(errp, "%s", msg);
		return NULL;
	}
	/* a site config is a few dozen keys: the bound is generous; an
	 * empty file is a valid config with every default */
	if (asi_yreader_load(&r, buf, len, path, 100000, 1) < 0) {
		*nproblems = r.nproblems; /* the YAML itself is broken */
		free(buf);
		return NULL;
	}
	if (!(s = autosync_siteconf_create(errp)))
		goto out;
	if ((root = asi_yroot(&r)))
		asi_ykeys_read(&r, root, top_keys, s, "");
	s->has_nics = s->nics != 0;
	s->has_nps = s->nps != UINT_MAX;
	if (!s->has_nps)
		s->nps = 0;
	version_note(s, path);
	if (r.nomem) {
		errno = ENOMEM;
		autosync_siteconf_destroy(s);
		s = NULL;
		goto out;
	}
	*nproblems = r.nproblems;
out:
	asi_yreader_free(&r);
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
GETTER(const char *, simulator, simulator)
GETTER(const char *, simulator_module, simulator_module)
GETTER(const char *, runtime_dir, runtime_dir)
GETTER(const char *, topology_xml, topology_xml)
GETTER(const char *, feedback_path, feedback_path)
GETTER(size_t, feedback_max_bytes, feedback_max)
GETTER(unsigned, feedback_keep, feedback_keep)
GETTER(unsigned, plan_budget_ms, budget_ms)
GETTER(long, keep_job_files, keep_job_files)
GETTER(size_t, max_model_bytes, max_model)
GETTER(size_t, plan_memory, plan_memory)
GETTER(size_t, nfabric_nics, nfabric)
GETTER(int, nccl_plugins, nccl_plugins)
GETTER(int, nccl_calibrate, nccl_calibrate)
GETTER(int, allow_compression, allow_compression)
GETTER(const char *, nccl_plugin_dir, nccl_plugin_dir)
GETTER(unsigned, version, version)
#undef GETTER

const char *autosync_siteconf_note(const autosync_siteconf_t *s)
{
	return s && s->note[0] ? s->note : NULL;
}

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
	if (s->transport != AUTOSYNC_TRANSPORT_UNKNOWN)
		c->transport = s->transport;
}
