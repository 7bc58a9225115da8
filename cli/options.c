/* options.c - what the subcommands share: the topology and cluster input
 * options (one parser, one help text, one loader), help lines, option
 * errors with "did you mean", enumerated values and old spellings. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include "autosync/cluster.h"
#include "autosync/planner.h"
#include "autosync/siteconf.h"
#include "common/text.h"
#include "cli.h"

#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define AUTOSYNC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang */
#define AUTOSYNC_ASAN 1
#endif
#endif

/* Sanitized builds only: hwloc unloads its PCI plugin when the last
 * topology is destroyed, and libpciaccess's own allocations then look
 * leaked to LeakSanitizer. Holding one topology keeps them reachable. */
static void keep_hwloc_plugins(void)
{
#if defined(AUTOSYNC_ASAN)
	static hwloc_topology_t keep;

	if (!keep && hwloc_topology_init(&keep) < 0)
		keep = NULL;
#endif
}

const char *cli_site_config_path(void)
{
	const char *e = getenv("AUTOSYNC_SITE_CONFIG");

	return e && *e ? e : AUTOSYNC_SYSCONFDIR "/autosync/autosync.yaml";
}

/* ------------------------------------------- the launchers' variables */

long cli_env_num(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || (*end && *end != ':' && *end != '(') ||
	    v < 0 || v > (1L << 24))
		return -1;
	return v;
}

static unsigned ratio(const char *all, const char *local)
{
	long a = cli_env_num(all), l = cli_env_num(local);

	if (a > 0 && l > 0)
		return (unsigned)((a + l - 1) / l);
	return 0;
}

unsigned cli_job_nodes(void)
{
	long v;
	unsigned r;

	if ((v = cli_env_num("SLURM_NNODES")) > 0 ||
	    (v = cli_env_num("SLURM_JOB_NUM_NODES")) > 0)
		return (unsigned)v;
	if ((r = ratio("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE")))
		return r;
	if ((v = cli_env_num("PET_NNODES")) > 0)
		return (unsigned)v;
	if ((r = ratio("WORLD_SIZE", "LOCAL_WORLD_SIZE")))
		return r;
	if ((v = cli_env_num("AUTOSYNC_NNODES")) > 0)
		return (unsigned)v;
	return 0;
}

unsigned cli_job_ranks_per_node(void)
{
	static const char *const vars[] = {
	    "AUTOSYNC_NPROC_PER_NODE", "PET_NPROC_PER_NODE", "LOCAL_WORLD_SIZE",
	    "OMPI_COMM_WORLD_LOCAL_SIZE"};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long v = cli_env_num(vars[i]);
		if (v > 0)
			return (unsigned)v;
	}
	return 0;
}

unsigned cli_launch_nodes(const struct cli_input *in)
{
	unsigned n = cli_job_nodes();
	autosync_cluster_t c;

	if (n || in->nodes)
		return n;
	/* a --network that names the nodes is the user's word */
	autosync_cluster_default(&c);
	c.nodes = 0;
	if (in->network &&
	    autosync_cluster_update(&c, in->network, NULL) == 0 && c.nodes)
		return 0;
	return 1;
}

const char *cli_plugin_dir(const char *option, const autosync_siteconf_t *site)
{
	const char *d = getenv("AUTOSYNC_NCCL_PLUGIN_DIR");

	if (option && option[0])
		return option;
	if (d && d[0])
		return d;
	if (site && autosync_siteconf_nccl_plugins(site))
		return autosync_siteconf_nccl_plugin_dir(site);
	return AUTOSYNC_LIBDIR;
}

int cli_simulator_module(autosync_job_t *j, autosync_error_t *err)
{
	const char *m = getenv("AUTOSYNC_SIMULATOR_MODULE");

	return m && m[0] ? autosync_job_set_simulator_module(j, m, err) : 0;
}

int cli_load_site(const char *config, autosync_siteconf_t **site,
		  autosync_error_t *err)
{
	*site = NULL;
	if (config && !strcmp(config, "none"))
		return 0;
	if (config && config[0])
		return (*site = autosync_siteconf_load(config, err)) ? 0 : -1;
	if (access(cli_site_config_path(), R_OK) == 0 &&
	    !(*site = autosync_siteconf_load(cli_site_config_path(), err)))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ messages */

#define HELP_COLUMN 27
#define HELP_WIDTH 79

void cli_help(FILE *fp, const char *opt, const char *text)
{
	int col = fprintf(fp, "  %s", opt);
	const char *p = text;

	if (col >= HELP_COLUMN) {
		fputc('\n', fp);
		col = 0;
	}
	fprintf(fp, "%*s", HELP_COLUMN - col, "");
	col = HELP_COLUMN;
	/* words, wrapped at HELP_WIDTH ('\n' in 'text' is a blank) */
	while (*p) {
		size_t w = strcspn(p, " \n");

		if (col > HELP_COLUMN && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(fp, "\n%*s", HELP_COLUMN, "");
			col = HELP_COLUMN;
		} else if (col > HELP_COLUMN) {
			fputc(' ', fp);
			col++;
		}
		fwrite(p, 1, w, fp);
		col += (int)w;
		p += w;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	fputc('\n', fp);
}

void cli_deprecated(const char *cmd, const char *old, const char *now)
{
	fprintf(stderr, "autosync %s: %s is deprecated; use %s\n", cmd, old,
		now);
}

/* The long options a user should see: not the old spellings. */
#define OLD(v) ((v) >= CLI_OPT_OLD)

int cli_bad_option(const char *cmd, int c, char **argv, const struct option *lo)
{
	const char *arg = argv[optind - 1], *best = NULL;
	char name[64], *eq;
	const char *names[128];
	size_t n = 0;

	if (c == ':') {
		for (size_t i = 0; lo[i].name; i++)
			if (lo[i].val == optopt && optopt > 0xff) {
				fprintf(stderr,
					"autosync %s: --%s needs a "
					"value\n",
					cmd, lo[i].name);
				goto hint;
			}
		if (!strncmp(arg, "--", 2))
			fprintf(stderr, "autosync %s: %s needs a value\n", cmd,
				arg);
		else
			fprintf(stderr, "autosync %s: -%c needs a value\n", cmd,
				optopt);
		goto hint;
	}
	snprintf(name, sizeof(name), "%s", arg);
	if ((eq = strchr(name, '=')))
		*eq = '\0';
	if (optopt && !strncmp(arg, "--", 2) && eq) { /* --flag=value */
		fprintf(stderr, "autosync %s: %s takes no value\n", cmd, name);
		goto hint;
	}
	if (optopt) {
		fprintf(stderr, "autosync %s: unknown option '-%c'\n", cmd,
			optopt);
		goto hint;
	}
	for (size_t i = 0; lo[i].name && n < 128; i++)
		if (!OLD(lo[i].val))
			names[n++] = lo[i].name;
	if (!strncmp(name, "--", 2))
		best = asi_suggest(name + 2, names, n);
	for (size_t i = 0; !best && name[2] && lo[i].name; i++)
		if (!OLD(lo[i].val) &&
		    !strncmp(lo[i].name, name + 2, strlen(name + 2)))
			best = ""; /* a prefix of several: ambiguous */
	if (best && !*best)
		fprintf(stderr, "autosync %s: ambiguous option '%s'\n", cmd,
			name);
	else if (best)
		fprintf(stderr,
			"autosync %s: unknown option '%s' (did you "
			"mean '--%s'?)\n",
			cmd, name, best);
	else
		fprintf(stderr, "autosync %s: unknown option '%s'\n", cmd,
			name);
hint:
	fprintf(stderr, "Try 'autosync help %s'.\n", cmd);
	return 2;
}

int cli_bad_value(const char *cmd, const char *opt, const char *val,
		  const char *const *names, size_t n)
{
	char list[1024], q[256];
	const char *best = asi_suggest(val, names, n);

	asi_quote(val, q, sizeof(q));
	asi_list(names, n, list, sizeof(list));
	if (best)
		fprintf(stderr,
			"autosync %s: %s: unknown value '%s' (did you "
			"mean '%s'?); one of %s\n",
			cmd, opt, q, best, list);
	else
		fprintf(stderr,
			"autosync %s: %s: unknown value '%s'; one of "
			"%s\n",
			cmd, opt, q, list);
	return 2;
}

int cli_framework(const char *cmd, const char *opt, const char *val)
{
	const char *names[AUTOSYNC_FW_N];
	int fw = autosync_framework_from_name(val);

	if (fw >= 0)
		return fw;
	for (int i = 0; i < AUTOSYNC_FW_N; i++)
		names[i] = autosync_framework_name(i);
	cli_bad_value(cmd, opt, val, names, AUTOSYNC_FW_N);
	return -1;
}

int cli_baseline(const char *cmd, const char *opt, const char *val)
{
	const char *names[AUTOSYNC_BASELINE_N];
	int b = autosync_baseline_from_name(val);

	if (b >= 0)
		return b;
	for (int i = 0; i < AUTOSYNC_BASELINE_N; i++)
		names[i] = autosync_baseline_name(i);
	cli_bad_value(cmd, opt, val, names, AUTOSYNC_BASELINE_N);
	return -1;
}

/* as autosync_model_open() tells paths from names */
static int is_path(const char *s)
{
	size_t l = strlen(s);

	return strchr(s, '/') || (l > 5 && !strcmp(s + l - 5, ".yaml")) ||
	       (l > 4 && !strcmp(s + l - 4, ".yml"));
}

const char *cli_model_hint(const char *spec, const char *catalog_dir, char *buf,
			   size_t len)
{
	autosync_model_t *m;
	char **names = NULL, list[2048] = "";
	const char *best = NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (!spec || is_path(spec))
		return buf;
	if ((m = autosync_model_open(spec, catalog_dir, NULL))) {
		autosync_model_destroy(m);
		return buf;
	}
	if (errno != ENOENT ||
	    autosync_catalog_list(catalog_dir, &names, &n, NULL) < 0)
		return buf;
	best = asi_suggest(spec, (const char *const *)names, n);
	asi_list((const char *const *)names, n, list, sizeof(list));
	snprintf(buf, len, "%s%s%s (models: %s)",
		 best ? "; did you mean '" : "", best ? best : "",
		 best ? "'?" : "", n ? list : "none");
	autosync_catalog_free(names);
	return buf;
}

int cli_check_model(const char *cmd, const char *spec, const char *catalog_dir)
{
	autosync_error_t err = {""};
	autosync_model_t *m;
	char hint[2304];

	if (!spec || is_path(spec))
		return 0;
	if ((m = autosync_model_open(spec, catalog_dir, &err))) {
		autosync_model_destroy(m);
		return 0;
	}
	if (errno != ENOENT)
		return 0; /* the job says what is wrong with it */
	fprintf(stderr, "autosync %s: %s%s\n", cmd, CLI_Q(err.text),
		cli_model_hint(spec, catalog_dir, hint, sizeof(hint)));
	return 1;
}

int cli_uint(const char *cmd, const char *opt, const char *s, unsigned long min,
	     unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v < min || v > max || *s == '-') {
		fprintf(stderr,
			"autosync %s: %s: '%s' is not an integer in "
			"[%lu, %lu]\n",
			cmd, opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------ the shared input set */

/* An empty value would silently mean a default: refuse it, naming the
 * option and what it takes. */
static int empty(const char *cmd, const char *opt, const char *arg,
		 const char *give)
{
	if (arg[strspn(arg, " \t")])
		return 0;
	fprintf(stderr, "autosync %s: %s: an empty value (give %s)\n", cmd, opt,
		give);
	return 1;
}

int cli_input_option(const char *cmd, unsigned which, int c, const char *arg,
		     struct cli_input *in)
{
	autosync_error_t err = {""};
	autosync_cluster_t cl;

	if ((which & CLI_IN_TOPOLOGY) && c == 'T') {
		if (empty(cmd, "--topology", arg, "FILE, live or none"))
			return -1;
		in->topology = arg;
		return 1;
	}
	if ((which & CLI_IN_TOPOLOGY) && c == 'g') {
		if (empty(cmd, "--gpus", arg, "a list such as 0,1 or all"))
			return -1;
		in->gpus = arg;
		return 1;
	}
	if ((which & CLI_IN_CPUS) && c == CLI_OPT_CPUS) {
		if (empty(cmd, "--cpus", arg,
			  "a list such as 0-3,8 or a "
			  "mask such as 0xff"))
			return -1;
		in->cpus = arg;
		return 1;
	}
	if ((which & CLI_IN_NETWORK) && c == CLI_OPT_NETWORK) {
		if (empty(cmd, "--network", arg,
			  "items such as "
			  "nodes=4,gpus=8"))
			return -1;
		autosync_cluster_default(&cl);
		if (autosync_cluster_update(&cl, arg, &err) < 0) {
			fprintf(stderr, "autosync %s: --network: %s\n", cmd,
				CLI_Q(err.text));
			return -1;
		}
		in->network = arg;
		return 1;
	}
	if ((which & CLI_IN_NODES) && c == 'N')
		return cli_uint(cmd, "--nodes", arg, 1, 65536, &in->nodes) < 0
			   ? -1
			   : 1;
	if ((which & CLI_IN_GPN) && c == CLI_OPT_GPN)
		return cli_uint(cmd, "--gpus-per-node", arg, 1, 1024,
				&in->gpus_per_node) < 0
			   ? -1
			   : 1;
	return 0;
}

void cli_input_usage(FILE *fp, unsigned which, const char *topology_default,
		     const char *gpus_default, const char *nodes_default)
{
	char text[1024];

	if (which & CLI_IN_TOPOLOGY) {
		snprintf(text, sizeof(text),
			 "node topology: an hwloc (v1/v2) "
			 "or NCCL topology XML\nfile, live (this machine) or "
			 "none (default: %s)",
			 topology_default);
		cli_help(fp, "-T, --topology FILE|live|none", text);
		snprintf(text, sizeof(text),
			 "the GPUs to keep, as a job step "
			 "on them sees\nthem: CUDA_VISIBLE_DEVICES syntax "
			 "(indices in PCI\nbus order, UUIDs, bus ids) or all "
			 "(default: %s)",
			 gpus_default);
		cli_help(fp, "-g, --gpus LIST|all", text);
	}
	if (which & CLI_IN_CPUS)
		cli_help(fp, "    --cpus SET",
			 "the CPUs to keep (list 0-3,8 "
			 "or mask 0xff)");
	if (which & CLI_IN_NETWORK)
		cli_help(fp, "    --network SPEC",
			 "cluster description over "
			 "the site's network, e.g.\n"
			 "nodes=4,gpus=8,intra=nvlink,nics=4x200Gbit/s,lat=2us"
			 " (docs/cluster-spec.md); the topology fills the "
			 "node part");
	if (which & CLI_IN_NODES) {
		snprintf(text, sizeof(text), "nodes in the job (default: %s)",
			 nodes_default);
		cli_help(fp, "-N, --nodes N", text);
	}
	if (which & CLI_IN_GPN)
		cli_help(fp, "    --gpus-per-node G",
			 "GPUs (ranks) per node, "
			 "over the topology's");
}

int cli_input_check(const char *cmd, const struct cli_input *in,
		    int has_default, const char * or)
{
	const char *opt = in->gpus ? "--gpus" : in->cpus ? "--cpus" : NULL;

	if (!opt)
		return 0;
	if (in->topology ? strcmp(in->topology, "none") == 0 : !has_default) {
		fprintf(stderr, "autosync %s: %s needs --topology%s\n", cmd,
			opt, or);
		return 2;
	}
	return 0;
}

autosync_topo_t *cli_load_topology(const struct cli_input *in, const char *dflt,
				   int *none, autosync_error_t *err)
{
	const char *src = in->topology ? in->topology : dflt;
	int live = !strcmp(src, "live"), r = 0;
	autosync_topo_t *t;

	*none = !strcmp(src, "none");
	if (*none)
		return NULL;
	keep_hwloc_plugins();
	if (!(t = live ? autosync_topo_load_live(err)
		       : autosync_topo_load_file(src, err)))
		return NULL;
	if (in->gpus)
		r = autosync_topo_restrict(
		    t, strcmp(in->gpus, "all") ? in->gpus : NULL, in->cpus,
		    err);
	else if (live)
		r = autosync_topo_restrict_container(
		    t, getenv("NVIDIA_VISIBLE_DEVICES"),
		    getenv("CUDA_VISIBLE_DEVICES"), getenv("SLURM_STEP_GPUS"),
		    getenv("SLURM_JOB_GPUS"), in->cpus, err);
	else if (in->cpus)
		r = autosync_topo_restrict(t, NULL, in->cpus, err);
	if (r < 0) {
		autosync_topo_destroy(t);
		return NULL;
	}
	return t;
}

int cli_input_to_job(const struct cli_input *in, autosync_job_t *j,
		     int file_all_gpus, autosync_error_t *err)
{
	const char *gpus = in->gpus;

	if (!gpus && file_all_gpus && in->topology &&
	    strcmp(in->topology, "live") && strcmp(in->topology, "none"))
		gpus = "all";
	return (in->topology &&
		autosync_job_set_topology(j, in->topology, err) < 0) ||
		       (gpus && autosync_job_set_gpus(j, gpus, err) < 0) ||
		       (in->network &&
			autosync_job_set_network(j, in->network, err) < 0) ||
		       (in->nodes && autosync_job_set_nodes(
					 j, (unsigned)in->nodes, err) < 0) ||
		       (in->gpus_per_node &&
			autosync_job_set_gpus_per_node(
			    j, (unsigned)in->gpus_per_node, err) < 0)
		   ? -1
		   : 0;
}

int cli_when(const char *s, int64_t *out)
{
	struct tm tm;
	const char *end;
	char *e;
	long long v, mul;

	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm)) && !*end) {
		*out = (int64_t)timegm(&tm);
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	if ((end = strptime(s, "%Y-%m-%d", &tm)) && !*end) {
		*out = (int64_t)timegm(&tm);
		return 0;
	}
	errno = 0;
	v = strtoll(s, &e, 10);
	if (errno || e == s || v < 0)
		return -1;
	if (!*e) {
		*out = v;
		return 0;
	}
	if (e[1])
		return -1;
	switch (*e) {
	case 'm':
		mul = 60;
		break;
	case 'h':
		mul = 3600;
		break;
	case 'd':
		mul = 86400;
		break;
	default:
		return -1;
	}
	/* further back than the epoch is no time a record has */
	if (v > (long long)time(NULL) / mul)
		return -1;
	*out = (int64_t)time(NULL) - v * mul;
	return 0;
}
