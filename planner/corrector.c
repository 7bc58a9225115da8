/* corrector.c - a learned simulator file read once, hashed, and handed to
 * learn/'s module, which is dlopen()ed here: by whoever plans (the job
 * pipeline in the SPANK plugin's planning child or the CLI, autosync-bench),
 * never by srun or slurmstepd. Callers fail open: any problem is a
 * reason, and the analytic model plans. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"
#include "common/readfile.h"
#include "common/text.h"

/* a simulator file: a few hundred KiB for 250 trees (learn/learn.h) */
#define MAX_SIMULATOR_BYTES (64u << 20)

struct autosync_simulator {
	void *dl; /* learn/'s module */
	const autosync_simulator_module_t *mod;
	void *h;
	autosync_corrector_t corr; /* what the planner is given */
};

/* the module's interface, or NULL with a reason ("module: why") */
static const autosync_simulator_module_t *
open_module(autosync_simulator_t *s, const char *module, char *why, size_t len)
{
	const autosync_simulator_module_t *m;
	char q[128];

	/* RTLD_LOCAL: XGBoost's symbols stay out of the process's scope */
	if (!(s->dl = dlopen(module, RTLD_NOW | RTLD_LOCAL))) {
		const char *e = dlerror();
		snprintf(why, len, "module %s",
			 e ? e : asi_quote(module, q, sizeof(q)));
		return NULL;
	}
	m = dlsym(s->dl, AUTOSYNC_SIMULATOR_SYMBOL);
	if (!m || m->abi != AUTOSYNC_SIMULATOR_ABI || !m->load || !m->correct ||
	    !m->destroy) {
		snprintf(why, len,
			 "module %s: not an autosync simulator module of this "
			 "version",
			 asi_quote(module, q, sizeof(q)));
		return NULL;
	}
	return m;
}

static autosync_simulator_t *fail(autosync_simulator_t *s,
				  autosync_error_t *errp, const char *why)
{
	autosync_simulator_destroy(s);
	errno = EINVAL;
	autosync_errprintf(errp, "%s", why);
	return NULL;
}

autosync_simulator_t *autosync_simulator_load(const char *path,
					      const char *module,
					      autosync_error_t *errp)
{
	autosync_simulator_t *s = calloc(1, sizeof(*s));
	char why[AUTOSYNC_ERROR_LEN] = "", err[AUTOSYNC_ERROR_LEN] = "",
	     *buf = NULL, q[128];
	size_t n = 0;

	if (!s || !path || !module) {
		free(s);
		errno = s ? EINVAL : ENOMEM;
		autosync_errprintf(errp, "simulator: %s",
				   s ? "invalid argument" : "out of memory");
		return NULL;
	}
	/* the reasons below name the file (the reader's and XGBoost's do) */
	if (asi_read_file(path, MAX_SIMULATOR_BYTES, ASI_READ_OPEN_PREFIX,
			  (uid_t)-1, &buf, &n, why, sizeof(why)) < 0)
		return fail(s, errp, why);
	if (!(s->mod = open_module(s, module, err, sizeof(err)))) {
		/* bounded: the quoted path is < 128 bytes, the rest fits */
		snprintf(why, sizeof(why), "%s: %.360s",
			 asi_quote(path, q, sizeof(q)), err);
		free(buf);
		return fail(s, errp, why);
	}
	/* the hash of the bytes loaded: nodes that read different files
	 * make plans of different hashes */
	autosync_hash_hex(buf, n, s->corr.hash);
	s->h = s->mod->load(buf, n, path, why, sizeof(why));
	free(buf);
	if (!s->h)
		return fail(s, errp, why);
	s->corr.correct = s->mod->correct;
	s->corr.margin = s->mod->margin;
	s->corr.sample_compute = s->mod->sample_compute;
	s->corr.arg = s->h;
	return s;
}

const autosync_corrector_t *
autosync_simulator_corrector(const autosync_simulator_t *s)
{
	return s ? &s->corr : NULL;
}

void autosync_simulator_destroy(autosync_simulator_t *s)
{
	if (!s)
		return;
	if (s->mod && s->h)
		s->mod->destroy(s->h);
	/* the module stays mapped: XGBoost's OpenMP and C++ runtimes do not
	 * all unload cleanly, and a planning process is short-lived */
	free(s);
}
