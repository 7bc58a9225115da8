/* launch.c - see launch.h */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/siteconf.h"
#include "jobfs.h"
#include "launch.h"
#include "step.h"

#ifndef AUTOSYNC_PLUGIN_LIBDIR
#define AUTOSYNC_PLUGIN_LIBDIR "/usr/local/lib"
#endif
#define TUNER_SO "libnccl-tuner-autosync.so"
#define PROFILER_SO "libnccl-profiler-autosync.so"

static long env_num(const char *name)
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

int as_launch_local_rank(const char **src)
{
	static const char *const vars[] = {
		"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK",
		"MPI_LOCALRANKID", "PMIX_RANK",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long v = env_num(vars[i]);
		if (v >= 0) {
			if (src)
				*src = vars[i];
			return (int) v;
		}
	}
	if (src)
		*src = "default";
	return 0;
}

static unsigned ratio(const char *all, const char *local)
{
	long a = env_num(all), l = env_num(local);

	if (a > 0 && l > 0)
		return (unsigned) ((a + l - 1) / l);
	return 0;
}

unsigned as_launch_nnodes(void)
{
	long v;
	unsigned r;

	if ((v = env_num("SLURM_NNODES")) > 0 ||
	    (v = env_num("SLURM_JOB_NUM_NODES")) > 0)
		return (unsigned) v;
	if ((r = ratio("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE")))
		return r;
	if ((v = env_num("PET_NNODES")) > 0)
		return (unsigned) v;
	if ((r = ratio("WORLD_SIZE", "LOCAL_WORLD_SIZE")))
		return r;
	return 1;
}

const char *as_launch_plugin_dir(const struct as_launch_opts *o)
{
	const char *d = getenv("AUTOSYNC_NCCL_PLUGIN_DIR");

	if (o && o->plugin_dir && o->plugin_dir[0])
		return o->plugin_dir;
	if (d && d[0])
		return d;
	return AUTOSYNC_PLUGIN_LIBDIR;
}

/* Did the user set 'name'? Those an earlier autosync listed in
 * AUTOSYNC_INJECTED do not count (the plugin's rule). */
static int user_has_env(const char *name, void *arg)
{
	const char *inj = arg;
	size_t n = strlen(name);

	if (!getenv(name))
		return 0;
	for (const char *p = inj; p && *p;) {
		if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0'))
			return 0;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 1;
}

/* A key shared by the ranks of one job on one node, for the directory. */
static void job_key(char *buf, size_t len)
{
	static const char *const ids[] = {
		"SLURM_JOB_ID", "PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid",
		"TORCHELASTIC_RUN_ID", "HOSTNAME",
	};
	const char *v = NULL;
	size_t i, o = 0;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]) && !v; i++)
		if (getenv(ids[i]) && *getenv(ids[i]))
			v = getenv(ids[i]);
	if (!v || !strcmp(ids[i - 1], "HOSTNAME")) {
		snprintf(buf, len, "p%ld", (long) getppid());
		return;
	}
	for (i = 0; v[i] && o + 1 < len && o < 48; i++)
		buf[o++] = (v[i] >= 'a' && v[i] <= 'z') ||
			   (v[i] >= 'A' && v[i] <= 'Z') ||
			   (v[i] >= '0' && v[i] <= '9') || v[i] == '-' ? v[i]
								       : '_';
	buf[o] = '\0';
	if (getenv("SLURM_STEP_ID") && o + 1 < len)
		o += (size_t) snprintf(buf + o, len - o, ".%.12s",
				       getenv("SLURM_STEP_ID"));
	/* Slurm nodes may share /tmp (one-host test clusters) */
	if (getenv("SLURMD_NODENAME") && o < len && o + 1 < len)
		snprintf(buf + o, len - o, "-%.32s", getenv("SLURMD_NODENAME"));
}

static int make_dir(const struct as_launch_opts *o, int rank, char *out,
		    size_t len, char *err, size_t errlen)
{
	const char *base = getenv("TMPDIR");
	char name[160], key[80];

	if (o->dir && o->dir[0]) {
		char abs[2 * PATH_MAX + 2], cwd[PATH_MAX];
		const char *slash = strrchr(o->dir, '/');
		char parent[sizeof(abs)];

		if (o->dir[0] != '/') {
			if (!getcwd(cwd, sizeof(cwd))) {
				snprintf(err, errlen, "getcwd: %s", strerror(errno));
				return -1;
			}
			snprintf(abs, sizeof(abs), "%s/%s", cwd, o->dir);
		} else {
			snprintf(abs, sizeof(abs), "%s", o->dir);
		}
		slash = strrchr(abs, '/');
		snprintf(parent, sizeof(parent), "%.*s",
			 (int) (slash == abs ? 1 : slash - abs), abs);
		return as_jobdir_make(parent, slash + 1, getuid(), getgid(),
				      out, len, err, errlen);
	}
	if (!base || base[0] != '/')
		base = "/tmp";
	job_key(key, sizeof(key));
	/* one directory per local rank: plan files are written whole by
	 * each rank, never two writers in one directory */
	snprintf(name, sizeof(name), "autosync-launch-%ld-%s-%d",
		 (long) getuid(), key, rank);
	return as_jobdir_make(base, name, getuid(), getgid(), out, len, err,
			      errlen);
}

static void add_injected(char *list, size_t len, const char *name)
{
	size_t n = strlen(list), k = strlen(name);

	for (const char *p = list; *p;) {
		if (!strncmp(p, name, k) && (p[k] == ',' || p[k] == '\0'))
			return;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	if (n + k + 2 < len)
		snprintf(list + n, len - n, "%s%s", n ? "," : "", name);
}

static void say(const struct as_launch_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct as_launch_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->log)
		return;
	va_start(ap, fmt);
	fputs("autosync: ", o->log);
	vfprintf(o->log, fmt, ap);
	fputc('\n', o->log);
	va_end(ap);
}

static int prepare(const struct as_launch_opts *o, struct as_step_out *out)
{
	autosync_error_t err = { .text = "" };
	autosync_siteconf_t *site = NULL;
	char dir[PATH_MAX], cwd[PATH_MAX], conf[PATH_MAX], injected[2048] = "";
	char inherited[2048] = "", path[PATH_MAX + 64], num[24];
	const char *rank_src, *pdir, *inh = getenv("AUTOSYNC_INJECTED");
	struct as_step_in in;
	int rank, rv = -1;
	unsigned idx;

	if (inh)
		snprintf(inherited, sizeof(inherited), "%s", inh);
	rank = o->local_rank >= 0 ? o->local_rank : as_launch_local_rank(&rank_src);
	if (o->config && o->config[0]) {
		if (!(site = autosync_siteconf_load(o->config, &err))) {
			snprintf(out->err, sizeof(out->err), "%s", err.text);
			goto out;
		}
	} else {
		snprintf(conf, sizeof(conf), "%s/autosync/autosync.yaml",
			 AUTOSYNC_SYSCONFDIR);
		if (access(conf, R_OK) == 0 &&
		    !(site = autosync_siteconf_load(conf, &err))) {
			snprintf(out->err, sizeof(out->err), "%s", err.text);
			goto out;
		}
	}
	if (make_dir(o, rank, dir, sizeof(dir), out->err, sizeof(out->err)) < 0)
		goto out;
	in = (struct as_step_in) {
		.model = o->model ? o->model : "",
		.site = site,
		.plan_file = o->plan_file,
		.nnodes = o->nnodes ? o->nnodes : as_launch_nnodes(),
		.uid = getuid(),
		.cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES"),
		.step_gpus = getenv("SLURM_STEP_GPUS"),
		.job_gpus = getenv("SLURM_JOB_GPUS"),
		.cwd = getcwd(cwd, sizeof(cwd)) ? cwd : NULL,
		.jobdir = dir,
		.has_env = user_has_env,
		.env_arg = inherited,
	};
	if (as_step_plan(&in, out) < 0)
		goto out;

	/* what the plugin sets in every task ... */
	for (size_t i = 0; i < out->nenv; i++)
		if (strcmp(out->env[i].name, "AUTOSYNC_INJECTED"))
			setenv(out->env[i].name, out->env[i].value, 1);
		else
			snprintf(injected, sizeof(injected), "%s",
				 out->env[i].value);
	/* ... and in the task of this local rank */
	if (out->nranks) {
		idx = out->nranks == 1 ? 0 : (unsigned) rank % out->nranks;
		if ((unsigned) rank >= out->nranks && out->nranks > 1)
			say(o, "local rank %d but %u GPU(s) here: using GPU "
			    "%u's settings", rank, out->nranks, idx);
		for (size_t i = 0; i < out->rank_nenv[idx]; i++) {
			setenv(out->rank_env[idx][i].name,
			       out->rank_env[idx][i].value, 1);
			add_injected(injected, sizeof(injected),
				     out->rank_env[idx][i].name);
		}
	}
	/* the NCCL plugins (the wrapper's addition to the plugin's set) */
	pdir = as_launch_plugin_dir(o);
	for (int k = 0; k < 2; k++) {
		const char *var = k ? "NCCL_PROFILER_PLUGIN" : "NCCL_TUNER_PLUGIN";
		const char *so = k ? PROFILER_SO : TUNER_SO;
		int shared = 0;
		if (!(k ? o->profiler : o->tuner))
			continue;
		/* as_step_plan() already set it (site nccl_plugins) */
		for (size_t i = 0; i < out->nenv; i++)
			shared |= !strcmp(out->env[i].name, var);
		if (shared)
			continue;
		if (user_has_env(var, inherited)) {
			say(o, "kept the user's %s=%s", var, getenv(var));
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", pdir, so);
		if (access(path, R_OK) < 0) {
			say(o, "%s: %s; NCCL runs without it", path,
			    strerror(errno));
			continue;
		}
		setenv(var, path, 1);
		add_injected(injected, sizeof(injected), var);
	}
	snprintf(num, sizeof(num), "%d", rank);
	setenv("AUTOSYNC_LOCAL_RANK", num, 1);
	if (injected[0])
		setenv("AUTOSYNC_INJECTED", injected, 1);
	rv = 0;
out:
	autosync_siteconf_destroy(site);
	return rv;
}

int as_launch_prepare(const struct as_launch_opts *o, char *err,
		      size_t errlen)
{
	struct as_step_out *out = calloc(1, sizeof(*out));
	int rv;

	if (!out) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rv = prepare(o, out);
	if (rv < 0)
		snprintf(err, errlen, "%s", out->err);
	else if (o->explain)
		fputs(out->summary, o->explain);
	free(out);
	return rv;
}
