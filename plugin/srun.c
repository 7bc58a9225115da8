/* srun.c - see srun.h */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/agree.h"
#include "autosync/common.h"
#include "common.h"
#include "options.h"
#include "srun.h"

static struct {
	autosync_agree_t *agree;
	pthread_t thread;
	int verdict; /* what the gathering decided */
} srun;

static void *agree_main(void *arg)
{
	(void)arg;
	srun.verdict = autosync_agree_run(srun.agree, NULL);
	return NULL;
}

/* The thread takes no signal: srun's own threads handle them. */
static int thread_start(void)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&srun.thread, NULL, agree_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Only a step on two nodes or more that names a model or a plan file makes
 * plans on its nodes. */
static int wants_agreement(spank_t sp, uint32_t *nnodes, uint32_t *job,
			   uint32_t *step)
{
	const struct as_pconf *pc = as_plugin_pconf();
	const struct as_args *a = as_options_args();
	int mode = as_args_effective_mode(a, AS_MODE_OFF);

	if (!pc || !pc->agree || mode == AS_MODE_OFF ||
	    !(a->model[0] || mode == AS_MODE_PLAN))
		return 0;
	return spank_get_item(sp, S_JOB_NNODES, nnodes) == ESPANK_SUCCESS &&
	       spank_get_item(sp, S_JOB_ID, job) == ESPANK_SUCCESS &&
	       spank_get_item(sp, S_JOB_STEPID, step) == ESPANK_SUCCESS &&
	       *nnodes >= 2;
}

void as_srun_local_user_init(spank_t sp)
{
	autosync_error_t err = {.text = ""};
	const struct as_pconf *pc = as_plugin_pconf();
	char spec[AUTOSYNC_AGREE_SPEC_MAX];
	uint32_t nnodes = 0, job = 0, step = 0;
	int gather;

	unsetenv(AS_AGREE_VAR); /* never another step's */
	if (!wants_agreement(sp, &nnodes, &job, &step))
		return;
	/* the window covers the slowest node's planning budget */
	gather = (as_plugin_site()
		      ? autosync_siteconf_plan_budget_ms(as_plugin_site())
		      : 1000) +
		 4000;
	if (gather > AUTOSYNC_AGREE_GATHER_MAX_MS)
		gather = AUTOSYNC_AGREE_GATHER_MAX_MS;
	if (!(srun.agree = autosync_agree_create(nnodes, job, step, &err)) ||
	    autosync_agree_set_windows(srun.agree, gather, 600000, &err) < 0 ||
	    (pc->agree_ports[0] &&
	     autosync_agree_set_ports(srun.agree, pc->agree_ports[0],
				      pc->agree_ports[1], &err) < 0) ||
	    autosync_agree_listen(srun.agree, spec, sizeof(spec), &err) < 0 ||
	    setenv(AS_AGREE_VAR, spec, 1) < 0 || thread_start() != 0) {
		as_plugin_log(AUTOSYNC_LOG_INFO,
			      "autosync: the nodes cannot agree through srun "
			      "(%s); they plan unchecked",
			      err.text[0] ? err.text : strerror(errno));
		unsetenv(AS_AGREE_VAR);
		autosync_agree_destroy(srun.agree);
		srun.agree = NULL;
		return;
	}
	as_plugin_log(
	    AUTOSYNC_LOG_INFO,
	    "autosync: gathering the %u nodes' plan hashes on port %d",
	    (unsigned)nnodes, atoi(spec));
}

void as_srun_exit(void)
{
	if (!srun.agree)
		return;
	autosync_agree_stop(srun.agree);
	pthread_join(srun.thread, NULL);
	if (srun.verdict > AUTOSYNC_AGREE_NONE)
		as_plugin_log(AUTOSYNC_LOG_INFO,
			      "autosync: the nodes' plans: %s",
			      autosync_agree_verdict_line(srun.agree));
	autosync_agree_destroy(srun.agree);
	memset(&srun, 0, sizeof(srun));
}
