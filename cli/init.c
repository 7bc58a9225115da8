/* init.c - 'autosync init [options] DIR': plan for this node before the
 * ranks start, from another process than theirs (a Kubernetes init
 * container), and leave in DIR what they need: the plan, the NCCL topology
 * file, nccl.conf for NCCL_CONF_FILE, an env file to source, copies of the
 * NCCL plugins (an application image need not have them) and a status
 * line. The job pipeline (autosync/job.h) decides everything, as in the
 * SPANK plugin; this adds what a pod knows: the operators' variables, the
 * container's GPUs (NVIDIA_VISIBLE_DEVICES) and the pod's annotations as
 * downward-API files. It fails open: on any problem the files say "no
 * autosync" and the exit status is 0, unless the mode is required. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/job.h"
#include "autosync/siteconf.h"
#include "cli.h"
#include "common/readfile.h"
#include "common/text.h"

#define WHICH (CLI_IN_TOPOLOGY | CLI_IN_NETWORK | CLI_IN_NODES)
#define PODINFO_DEFAULT "/etc/autosync-podinfo"
#define PODINFO_MAX 256	       /* bytes of one annotation file */
#define PLUGIN_MAX (64u << 20) /* bytes of one NCCL plugin */
#define TEXT_MAX 16384	       /* nccl.conf, env */

enum { MODE_AUTO = 0, MODE_OFF, MODE_REQUIRED };

struct iopts {
	struct cli_input in;
	const char *dir, *config, *catalog, *podinfo, *plugin_dir;
	char model[PODINFO_MAX], framework[PODINFO_MAX];
	int mode, compress, quiet;
	int podinfo_given; /* --podinfo or AUTOSYNC_PODINFO_DIR */
};

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: autosync init [options] DIR\n"
		"\n"
		"Plan for this node of a job before its ranks start (a "
		"Kubernetes init\ncontainer) and write into DIR: plan.yaml, "
		"nccl-topo.xml, nccl.conf (for\nNCCL_CONF_FILE), env (to "
		"source), lib/ (the NCCL plugins) and status.\nThe model, "
		"mode and framework come from the pod's annotations as "
		"downward-API\nfiles; options override them. Fails open: on "
		"a problem the files hold no\nsettings, status says why and "
		"the exit status is 0, unless the mode is\nrequired.\n\n");
	cli_help(fp, "-m, --model NAME|FILE",
		 "the model (default: PODINFO/model)");
	cli_help(fp, "    --mode auto|off|required",
		 "(default: PODINFO/mode, "
		 "else auto)");
	cli_help(fp, "-f, --framework NAME",
		 "(default: PODINFO/framework, "
		 "else the site's default_framework)");
	cli_help(fp, "    --allow-compression",
		 "allow lossy gradient "
		 "compression (default: PODINFO/compression, "
		 "$AUTOSYNC_COMPRESSION)");
	cli_help(fp, "    --podinfo DIR",
		 "the downward-API files (default "
		 "$AUTOSYNC_PODINFO_DIR, " PODINFO_DEFAULT ")");
	cli_help(fp, "-c, --config FILE|none",
		 "site config (default: the "
		 "installed one if it exists)");
	cli_help(fp, "    --catalog DIR", "catalog directory");
	cli_help(fp, "    --plugin-dir DIR",
		 "where the NCCL plugins to copy "
		 "are (default $AUTOSYNC_NCCL_PLUGIN_DIR, the site's, the "
		 "installed ones)");
	cli_input_usage(fp, WHICH, "the site's topology_xml, else live",
			"NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES",
			"OMPI_COMM_WORLD_SIZE / _LOCAL_SIZE, PET_NNODES, "
			"WORLD_SIZE / LOCAL_WORLD_SIZE, SLURM_NNODES, "
			"AUTOSYNC_NNODES, else 1");
	cli_help(fp, "-q, --quiet", "no summary line on success");
	cli_help(fp, "-h, --help", "this help");
}

/* ------------------------------------------------------------ podinfo */

/* One annotation file into 'out' (trimmed; "" when empty). Kubernetes
 * writes them as links into a ..data directory of the same volume, so
 * links are followed. 1 read, 0 absent, -1 unreadable (message in err). */
static int podinfo_file(const char *dir, const char *name, char *out,
			size_t len, char *err, size_t errlen)
{
	char path[PATH_MAX], *buf = NULL;
	size_t n = 0, a = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (asi_read_file(path, PODINFO_MAX, 0, (uid_t)-1, &buf, &n, err,
			  errlen) < 0)
		return errno == ENOENT ? 0 : -1;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' ||
		     buf[n - 1] == '\t' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	while (buf[a] == ' ' || buf[a] == '\t')
		a++;
	snprintf(out, len, "%s", buf + a);
	free(buf);
	return 1;
}

static int parse_mode(const char *s)
{
	if (!*s || !strcmp(s, "auto"))
		return MODE_AUTO;
	if (!strcmp(s, "off"))
		return MODE_OFF;
	if (!strcmp(s, "required"))
		return MODE_REQUIRED;
	return -1;
}

/* Fill what the options left unset from the podinfo files. 0, or -1 with
 * a one-line reason in 'why' (the caller fails open). */
static int read_podinfo(struct iopts *o, int mode_given, int compress_given,
			char *why, size_t len)
{
	char v[PODINFO_MAX], err[AUTOSYNC_ERROR_LEN], q[PODINFO_MAX * 4];
	struct stat st;
	int r = 0;

	if (stat(o->podinfo, &st) < 0) {
		if (!o->podinfo_given)
			return 0; /* not in a pod that has them */
		snprintf(why, len, "%s: %s", o->podinfo, strerror(errno));
		return -1;
	}
	if (!mode_given) {
		if ((r = podinfo_file(o->podinfo, "mode", v, sizeof(v), err,
				      sizeof(err))) < 0) {
			snprintf(why, len, "%s", err);
			return -1;
		}
		if (r && parse_mode(v) < 0) {
			snprintf(why, len,
				 "%s/mode: unknown mode '%s' (expected auto, "
				 "off or required)",
				 o->podinfo, asi_quote(v, q, sizeof(q)));
			return -1;
		}
		if (r)
			o->mode = parse_mode(v);
	}
	if (!o->model[0]) {
		if ((r = podinfo_file(o->podinfo, "model", o->model,
				      sizeof(o->model), err, sizeof(err))) <
		    0) {
			snprintf(why, len, "%s", err);
			return -1;
		}
		if (!r && o->mode != MODE_OFF) {
			snprintf(why, len, "%s/model: no such file",
				 o->podinfo);
			return -1;
		}
		/* a pod's annotation names a catalog model, never a file
		 * of the init container's (as the webhook checks too) */
		if (r && strchr(o->model, '/')) {
			snprintf(why, len,
				 "%s/model: '%s' is not a catalog model name",
				 o->podinfo, asi_quote(o->model, q, sizeof(q)));
			o->model[0] = '\0';
			return -1;
		}
	}
	if (!o->framework[0] &&
	    podinfo_file(o->podinfo, "framework", o->framework,
			 sizeof(o->framework), err, sizeof(err)) < 0) {
		snprintf(why, len, "%s", err);
		return -1;
	}
	if (!compress_given &&
	    (r = podinfo_file(o->podinfo, "compression", v, sizeof(v), err,
			      sizeof(err))) < 0) {
		snprintf(why, len, "%s", err);
		return -1;
	}
	if (!compress_given && r > 0 && v[0]) {
		if (asi_parse_bool(v) < 0) {
			snprintf(why, len,
				 "%s/compression: bad value '%s' (expected "
				 "yes or no)",
				 o->podinfo, asi_quote(v, q, sizeof(q)));
			return -1;
		}
		o->compress = asi_parse_bool(v);
	}
	return 0;
}

/* ------------------------------------------------------------ outputs */

static int put(const char *dir, const char *name, const char *text,
	       autosync_error_t *err)
{
	return autosync_jobdir_write(dir, name, text, strlen(text), err);
}

/* The files of a job that runs without autosync, and why. */
static int write_nothing(const char *dir, const char *status,
			 autosync_error_t *err)
{
	char line[AUTOSYNC_ERROR_LEN + 32];

	snprintf(line, sizeof(line), "%s\n", status);
	for (char *p = line; *p && p[1]; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' '; /* one line, whatever the reason held */
	return put(dir, "nccl.conf", "", err) < 0 ||
		       put(dir, "env", "# autosync: no settings\n", err) < 0 ||
		       put(dir, "status", line, err) < 0
		   ? -1
		   : 0;
}

/* Copy the NCCL plugins into DIR/lib. 1 when both are there, else 0 (the
 * pipeline then leaves NCCL's own tuner and profiler alone). */
static int copy_plugins(const char *from, const char *dir,
			autosync_error_t *err)
{
	static const char *const names[] = {
	    "libnccl-tuner-autosync.so",
	    "libnccl-profiler-autosync.so",
	};
	char lib[PATH_MAX], src[PATH_MAX], e[AUTOSYNC_ERROR_LEN];
	int all = 1;

	snprintf(lib, sizeof(lib), "%s/lib", dir);
	if (mkdir(lib, 0755) < 0 && errno != EEXIST)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *buf = NULL;
		size_t n = 0;

		snprintf(src, sizeof(src), "%s/%s", from, names[i]);
		if (asi_read_file(src, PLUGIN_MAX, 0, (uid_t)-1, &buf, &n, e,
				  sizeof(e)) < 0 ||
		    autosync_jobdir_write(lib, names[i], buf, n, err) < 0)
			all = 0;
		free(buf);
	}
	return all;
}

/* NAME='value' with ' as '\'' : safe for any POSIX shell. */
static size_t shell_quote(char *out, size_t len, const char *v)
{
	size_t o = 0;

	if (o + 1 < len)
		out[o++] = '\'';
	for (; *v && o + 5 < len; v++) {
		if (*v == '\'') {
			memcpy(out + o, "'\\''", 4);
			o += 4;
		} else {
			out[o++] = *v;
		}
	}
	if (o + 1 < len)
		out[o++] = '\'';
	out[o] = '\0';
	return o;
}

static int write_settings(const struct iopts *o, const autosync_job_t *j,
			  autosync_error_t *err)
{
	char conf[TEXT_MAX], env[TEXT_MAX], q[PATH_MAX * 2], status[64];
	size_t nc = 0, ne = 0;

	conf[0] = env[0] = '\0';
	for (size_t i = 0; i < autosync_job_nenv(j); i++) {
		const autosync_var_t *v = autosync_job_env(j, i);

		if (strchr(v->value, '\n'))
			continue; /* neither format can carry it */
		/* the app container mounts the directory read-only, and no
		 * one collects a pod's report: no place to measure into */
		if (!strcmp(v->name, "AUTOSYNC_REPORT"))
			continue;
		if (!strncmp(v->name, "NCCL_", 5) && nc < sizeof(conf))
			nc += (size_t)snprintf(conf + nc, sizeof(conf) - nc,
					       "%s=%s\n", v->name, v->value);
		shell_quote(q, sizeof(q), v->value);
		/* autosync's own variables as they are; NCCL's and Horovod's
		 * only where the app container has none (init cannot see its
		 * environment, and a user's setting wins, as NCCL lets
		 * nccl.conf lose to the environment) */
		if (ne < sizeof(env))
			ne += (size_t)snprintf(
			    env + ne, sizeof(env) - ne,
			    strncmp(v->name, "AUTOSYNC_", 9)
				? "[ -n \"${%s+x}\" ] || export %s=%s\n"
				: "export %s%.0s=%s\n",
			    v->name, v->name, q);
	}
	if (nc >= sizeof(conf) || ne >= sizeof(env)) {
		errno = E2BIG;
		return autosync_errprintf(err, "the settings exceed %d bytes",
					  TEXT_MAX);
	}
	snprintf(status, sizeof(status), "planned %s\n",
		 autosync_plan_hash(autosync_job_plan(j)));
	return put(o->dir, "nccl.conf", conf, err) < 0 ||
		       put(o->dir, "env", env, err) < 0 ||
		       put(o->dir, "status", status, err) < 0
		   ? -1
		   : 0;
}

/* ------------------------------------------------------------ pipeline */

static void job_log(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level <= AUTOSYNC_LOG_WARNING)
		fprintf(stderr, "autosync init: %s\n", CLI_Q(msg));
}

static int plan(const struct iopts *o, autosync_job_t *j,
		const autosync_siteconf_t *site, autosync_error_t *err)
{
	char lib[PATH_MAX];
	int fw = -1, have;

	if (o->framework[0] &&
	    (fw = autosync_framework_from_name(o->framework)) < 0) {
		char q[PODINFO_MAX * 4];

		errno = EINVAL;
		return autosync_errprintf(
		    err, "unknown framework '%s'",
		    asi_quote(o->framework, q, sizeof(q)));
	}
	have = copy_plugins(cli_plugin_dir(o->plugin_dir, site), o->dir, err);
	snprintf(lib, sizeof(lib), "%s/lib", o->dir);
	autosync_job_set_log(j, job_log, NULL);
	/* one process plans for the pod, which may host several ranks:
	 * node-wide settings only, NCCL picks each rank's NIC from the
	 * topology file */
	return autosync_job_set_site(j, site, err) < 0 ||
		       cli_simulator_module(j, err) < 0 ||
		       autosync_job_set_model(j, o->model, err) < 0 ||
		       (o->catalog &&
			autosync_job_set_catalog_dir(j, o->catalog, err) < 0) ||
		       (fw >= 0 &&
			autosync_job_set_framework(j, fw, err) < 0) ||
		       autosync_job_set_compression(j, o->compress > 0, err) <
			   0 ||
		       (cli_launch_nodes(&o->in) &&
			autosync_job_set_nodes(j, cli_launch_nodes(&o->in),
					       err) < 0) ||
		       autosync_job_set_tasks_per_node(j, 1, err) < 0 ||
		       /* a pod running fewer ranks than it has GPUs */
		       (!o->in.gpus_per_node && cli_job_ranks_per_node() &&
			autosync_job_set_gpus_per_node(
			    j, cli_job_ranks_per_node(), err) < 0) ||
		       cli_input_to_job(&o->in, j, 0, err) < 0 ||
		       (have &&
			autosync_job_set_nccl_plugins(
			    j, lib, AUTOSYNC_JOB_TUNER | AUTOSYNC_JOB_PROFILER,
			    err) < 0) ||
		       autosync_job_set_dir(j, o->dir, err) < 0 ||
		       autosync_job_run(j, err) < 0 ||
		       autosync_job_write_files(j, err) < 0
		   ? -1
		   : 0;
}

/* 0 planned, -1 failed (err says why) */
static int run_init(struct iopts *o, autosync_job_t **jp, autosync_error_t *err)
{
	autosync_siteconf_t *site = NULL;
	int rv = -1;

	if (cli_load_site(o->config, &site, err) < 0)
		return -1;
	if (!(*jp = autosync_job_create(err)))
		goto out;
	if (plan(o, *jp, site, err) < 0)
		goto out;
	rv = write_settings(o, *jp, err);
out:
	autosync_siteconf_destroy(site);
	return rv;
}

/* ------------------------------------------------------------ command */

enum {
	OPT_CATALOG = CLI_OPT_OWN,
	OPT_MODE,
	OPT_PODINFO,
	OPT_PLUGIN_DIR,
	OPT_COMPRESS,
};

static int finish(struct iopts *o, const char *why)
{
	autosync_error_t err = {.text = ""};
	char status[AUTOSYNC_ERROR_LEN + 32];
	int required = o->mode == MODE_REQUIRED;

	snprintf(status, sizeof(status), "%s: %s",
		 required ? "failed" : "fail-open", CLI_Q(why));
	fprintf(stderr, "autosync init: %s%s\n", CLI_Q(why),
		required ? "" : "; the job runs without autosync");
	if (write_nothing(o->dir, status, &err) < 0)
		fprintf(stderr, "autosync init: %s: %s\n", CLI_Q(o->dir),
			CLI_Q(err.text));
	return required ? 1 : 0;
}

int autosync_cmd_init(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"model", required_argument, NULL, 'm'},
	    {"mode", required_argument, NULL, OPT_MODE},
	    {"framework", required_argument, NULL, 'f'},
	    {"allow-compression", no_argument, NULL, OPT_COMPRESS},
	    {"podinfo", required_argument, NULL, OPT_PODINFO},
	    {"catalog", required_argument, NULL, OPT_CATALOG},
	    {"config", required_argument, NULL, 'c'},
	    {"plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR},
	    CLI_TOPOLOGY_OPTIONS,
	    CLI_NETWORK_OPTIONS,
	    CLI_NODES_OPTIONS,
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct iopts o = {.compress = -1};
	autosync_error_t err = {.text = ""};
	autosync_job_t *j = NULL;
	char why[AUTOSYNC_ERROR_LEN + PATH_MAX], absdir[PATH_MAX];
	int c, r, mode_given = 0, rv;
	const char *env;

	optind = 1;
	opterr = 0;
	while (
	    (c = getopt_long(argc, argv,
			     ":m:f:c:" CLI_TOPOLOGY_SHORT CLI_NODES_SHORT "qh",
			     longopts, NULL)) != -1) {
		if ((r = cli_input_option("init", WHICH, c, optarg, &o.in)) < 0)
			return 2;
		if (r)
			continue;
		switch (c) {
		case 'm':
			snprintf(o.model, sizeof(o.model), "%s", optarg);
			break;
		case OPT_MODE:
			if ((o.mode = parse_mode(optarg)) < 0 || !*optarg) {
				static const char *const modes[] = {
				    "auto", "off", "required"};
				return cli_bad_value("init", "--mode", optarg,
						     modes, 3);
			}
			mode_given = 1;
			break;
		case 'f':
			if (cli_framework("init", "--framework", optarg) < 0)
				return 2;
			snprintf(o.framework, sizeof(o.framework), "%s",
				 optarg);
			break;
		case OPT_COMPRESS:
			o.compress = 1;
			break;
		case OPT_PODINFO:
			o.podinfo = optarg;
			break;
		case OPT_CATALOG:
			o.catalog = optarg;
			break;
		case 'c':
			o.config = optarg;
			break;
		case OPT_PLUGIN_DIR:
			o.plugin_dir = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option("init", c, argv, longopts);
		}
	}
	if (cli_input_check("init", &o.in, 1, ""))
		return 2;
	if (optind + 1 != argc) {
		fprintf(stderr,
			"autosync init: %s (autosync init [options] "
			"DIR)\n",
			optind >= argc ? "no directory" : "one directory only");
		return 2;
	}
	o.dir = argv[optind];
	env = getenv("AUTOSYNC_PODINFO_DIR");
	o.podinfo_given = o.podinfo || (env && *env);
	if (!o.podinfo)
		o.podinfo = env && *env ? env : PODINFO_DEFAULT;
	if (o.compress < 0 && (env = getenv("AUTOSYNC_COMPRESSION")) &&
	    asi_parse_bool(env) >= 0)
		o.compress = asi_parse_bool(env);
	/* the mode first: a directory that cannot be made fails only a pod
	 * that asked for required */
	r = read_podinfo(&o, mode_given, o.compress >= 0, why, sizeof(why));
	if (mkdir(o.dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "autosync init: %s: %s%s\n", CLI_Q(o.dir),
			strerror(errno),
			o.mode == MODE_REQUIRED
			    ? ""
			    : "; the job runs without autosync");
		return o.mode == MODE_REQUIRED ? 1 : 0;
	}
	/* absolute: the files name each other, read from anywhere */
	if (!realpath(o.dir, absdir)) {
		fprintf(stderr, "autosync init: %s: %s\n", CLI_Q(o.dir),
			strerror(errno));
		return o.mode == MODE_REQUIRED ? 1 : 0;
	}
	o.dir = absdir;
	if (r < 0)
		return finish(&o, why);
	if (o.mode == MODE_OFF) {
		if (write_nothing(o.dir, "off", &err) < 0)
			fprintf(stderr, "autosync init: %s\n",
				CLI_Q(err.text)); /* off: nothing to fail */
		return 0;
	}
	if (!o.model[0])
		return finish(&o, "no model (--model or the pod's model "
				  "annotation)");
	if (run_init(&o, &j, &err) < 0) {
		rv = finish(&o, err.text);
	} else {
		rv = 0;
		autosync_plan_summary_t sum;

		autosync_plan_summary(autosync_job_plan(j), &sum);
		if (!o.quiet)
			printf("autosync init: plan %s for %s, %u node(s) x "
			       "%u GPU(s), in %s\n",
			       autosync_plan_hash(autosync_job_plan(j)),
			       o.model, sum.cluster.nodes,
			       sum.cluster.gpus_per_node, o.dir);
	}
	autosync_job_destroy(j);
	return rv;
}
