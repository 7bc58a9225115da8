/* simulator.c - the job pipeline's learned simulator: the site's file
 * (or the caller's) read once, hashed, and handed to learn/'s module,
 * which is dlopen()ed here, in the planning process only (the SPANK
 * plugin's planning child, the CLI), never in srun or slurmstepd.
 * Fail-open: any problem is a reason, and the analytic model plans. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/readfile.h"
#include "common/text.h"
#include "internal.h"

/* a simulator file is XGBoost's JSON: a few hundred KiB for 250 trees */
#define MAX_SIMULATOR_BYTES (64u << 20)

/* the module's interface, or NULL with a reason ("module: why") */
static const autosync_simulator_module_t *
open_module(struct job_simulator *s, const char *module, char *why, size_t len)
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

int job_simulator_load(struct job_simulator *s, const char *path,
		       const char *module, char *why, size_t len)
{
	char err[AUTOSYNC_ERROR_LEN] = "", *buf = NULL, q[128];
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	/* the reasons below name the file (the reader's and XGBoost's do) */
	if (asi_read_file(path, MAX_SIMULATOR_BYTES, ASI_READ_OPEN_PREFIX,
			  (uid_t)-1, &buf, &n, why, len) < 0)
		return 0;
	if (!(s->mod = open_module(s, module, err, sizeof(err)))) {
		snprintf(why, len, "%s: %s", asi_quote(path, q, sizeof(q)),
			 err);
		free(buf);
		return 0;
	}
	/* the hash of the bytes loaded: nodes that read different files
	 * make plans of different hashes */
	autosync_hash_hex(buf, n, s->corr.hash);
	s->h = s->mod->load(buf, n, path, why, len);
	free(buf);
	if (!s->h)
		return 0;
	s->corr.correct = s->mod->correct;
	s->corr.margin = s->mod->margin;
	s->corr.arg = s->h;
	return 1;
}

void job_simulator_unload(struct job_simulator *s)
{
	if (s->mod && s->h)
		s->mod->destroy(s->h);
	/* the module stays mapped: XGBoost's OpenMP and C++ runtimes do not
	 * all unload cleanly, and a planning process is short-lived */
	memset(s, 0, sizeof(*s));
}
