/* profiler.c - the built libnccl-profiler-autosync.so, dlopened and fed
 * synthetic NCCL events (collectives with kernel-channel children, GPU
 * timestamps); the report it writes is read back with the SPANK plugin's
 * reader. Each scenario runs in a child (the plugin configures itself once
 * per process). */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "nccl_abi.h"
#include "autosync/feedback.h"
#include "tap.h"

static char plugin[4096], dir[4096];
static int kernels_on; /* what the plugin asked for */

struct out {
	int ok, mask_a, mask_b, rc_bad, bad_handle_null;
};

static void coll(const as_profiler_v5_t *p, void *ctx, const char *func,
		 size_t count, int nch, uint64_t t0, uint64_t dur_ns,
		 int kernels)
{
	as_prof_descr_v5_t d;
	void *h = NULL, *ch[4] = {NULL};
	as_prof_state_args_v5_t a;

	memset(&d, 0, sizeof(d));
	d.type = AS_PROF_COLL;
	d.coll.func = func;
	d.coll.count = count;
	d.coll.datatype = "ncclFloat32";
	d.coll.nChannels = (uint8_t)nch;
	d.coll.algo = "Ring";
	d.coll.proto = "Simple";
	p->startEvent(ctx, &h, &d);
	p->stopEvent(
	    h); /* enqueued: NCCL stops a Coll before its kernels run */
	if (!kernels || !kernels_on)
		return;
	for (int c = 0; c < nch; c++) {
		memset(&d, 0, sizeof(d));
		d.type = AS_PROF_KERNEL_CH;
		d.parentObj = h;
		d.kernelCh.channelId = (uint8_t)c;
		d.kernelCh.pTimer = t0 + (uint64_t)c * 10;
		p->startEvent(ctx, &ch[c], &d);
	}
	for (int c = 0; c < nch; c++) {
		a.kernelCh.pTimer = t0 + dur_ns - (uint64_t)c * 10;
		p->recordEventState(ch[c], AS_PROF_STATE_KERNEL_CH_STOP, &a);
		p->stopEvent(ch[c]);
	}
}

static void pause_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* mode 0: normal; 1: exit without finalize */
static void child(const char *const *env, int mode, struct out *o)
{
	void *h, *a = NULL, *b = NULL, *hb = (void *)1;
	const as_profiler_v5_t *p;
	as_prof_descr_v5_t d;
	int mask = -1;

	unsetenv("AUTOSYNC_REPORT");
	unsetenv("SLURM_LOCALID");
	for (size_t i = 0; env[i]; i++)
		putenv((char *)env[i]);
	if (!(h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL)) ||
	    !(p = dlsym(h, "ncclProfiler_v5")))
		return;
	p->init(&a, 0xa, &mask, "world", 2, 8, 0, NULL);
	o->mask_a = mask;
	kernels_on = (mask & AS_PROF_KERNEL_CH) != 0;
	p->init(&b, 0xb, &mask, "pair", 1, 2, 0, NULL);
	o->mask_b = mask;
	if (a) {
		uint64_t t = 1000000;
		for (int step = 0; step < 4; step++) {
			coll(p, a, "AllReduce", 1 << 20, 2, t, 50000,
			     1); /* 4 MiB, 50 µs */
			coll(p, b, "AllReduce", 1024, 1, t, 3000,
			     1); /* 4 KiB, other comm */
			coll(p, a, "AllReduce", 1 << 20, 2, t + 100000, 70000,
			     1);
			t += 1000000;
			pause_ms(2);
		}
		coll(p, a, "AllGather", 256, 2, 0, 0, 0); /* no kernel events */
		/* a KernelCh whose parent is not ours */
		memset(&d, 0, sizeof(d));
		d.type = AS_PROF_KERNEL_CH;
		d.parentObj = &d;
		o->rc_bad = p->startEvent(a, &hb, &d);
		o->bad_handle_null = hb == NULL;
		o->rc_bad |= p->stopEvent(NULL);
		o->rc_bad |= p->recordEventState(
		    NULL, AS_PROF_STATE_KERNEL_CH_STOP, NULL);
	}
	o->ok = 1;
	if (mode == 1)
		return; /* the caller exits: the destructor writes the summary
			 */
	p->finalize(b);
	p->finalize(a);
}

static int scenario(const char *const *env, int mode, struct out *o)
{
	int fd[2], st;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(fd) < 0 || (pid = fork()) < 0)
		bail_out("pipe/fork");
	if (pid == 0) {
		struct out r;
		memset(&r, 0, sizeof(r));
		close(fd[0]);
		child(env, mode, &r);
		if (write(fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		exit(0); /* not _exit: library destructors run */
	}
	close(fd[1]);
	if (read(fd[0], o, sizeof(*o)) != (ssize_t)sizeof(*o))
		o->ok = 0;
	close(fd[0]);
	waitpid(pid, &st, 0);
	return o->ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *b;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	b = calloc(1, (size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(fp);
	return b;
}

static int count_lines(const char *s, const char *prefix)
{
	int n = 0;
	size_t k = strlen(prefix);

	for (const char *p = s; p && *p;) {
		if (!strncmp(p, prefix, k))
			n++;
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	return n;
}

int main(void)
{
	const char *b = getenv("AUTOSYNC_BUILDDIR");
	char rep[4200], e1[4300], *text;
	autosync_feedback_rec_t *rec = calloc(1, sizeof(*rec));
	struct out o;

	plan(NO_PLAN);
	snprintf(plugin, sizeof(plugin),
		 "%s/launcher/nccl/.libs/libnccl-profiler-autosync.so",
		 b ? b : ".");
	snprintf(dir, sizeof(dir), "%s", "/tmp/autosync-prof.XXXXXX");
	if (!rec || !mkdtemp(dir))
		bail_out("setup");
	{
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		ok(h && dlsym(h, "ncclProfiler_v5") &&
		       !dlsym(h, "as_prof_agg_coll"),
		   "dlopen: exports ncclProfiler_v5 and nothing of autosync's");
		if (!h)
			return done_testing();
		is(((const as_profiler_v5_t *)dlsym(h, "ncclProfiler_v5"))
		       ->name,
		   "autosync", "its name");
		dlclose(h);
	}

	/* 1. local rank 0 reports: 2 all-reduces per step on the largest comm
	 */
	snprintf(rep, sizeof(rep), "%s/report", dir);
	snprintf(e1, sizeof(e1), "AUTOSYNC_REPORT=%s", rep);
	{
		const char *env[] = {e1,
				     "AUTOSYNC_STEP_COLLECTIVES=2",
				     "AUTOSYNC_REPORT_SKIP=0",
				     "AUTOSYNC_REPORT_EVERY=2",
				     "SLURM_LOCALID=0",
				     NULL};
		ok(scenario(env, 0, &o), "events scenario ran");
		ok(o.mask_a == (AS_PROF_COLL | AS_PROF_KERNEL_CH) &&
		       o.mask_b == o.mask_a,
		   "activation mask: Coll + KernelCh (%d)", o.mask_a);
		ok(o.rc_bad == 0 && o.bad_handle_null,
		   "foreign parents and NULL handles: ignored, success");
		text = slurp(rep);
		ok(text != NULL, "the report was written");
		if (!text)
			text = calloc(1, 1);
		diag("report:\n%s", text);
		ok(!strncmp(text, "# autosync-profiler 1 host=", 27) &&
		       strstr(text, " rank=0 nranks=8 nodes=2 steps_per=2\n"),
		   "header: the step-defining communicator (8 ranks, not the "
		   "2-rank one)");
		ok(count_lines(text, "# autosync-profiler") == 1,
		   "one header over two flushes");
		ok(strstr(text,
			  "# coll AllReduce Ring Simple channels=2 "
			  "bytes=[4194304,8388608) n=8 "
			  "mean_us=60 min_us=50 max_us=70 timing=gpu\n") !=
		       NULL,
		   "4 MiB all-reduces: GPU time from the first channel start "
		   "to the last channel stop");
		ok(strstr(text,
			  "# coll AllReduce Ring Simple channels=1 "
			  "bytes=[4096,8192) n=4 "
			  "mean_us=3 min_us=3 max_us=3 timing=gpu\n") != NULL,
		   "the other communicator's collectives are measured too");
		ok(strstr(text, "# coll AllGather Ring Simple channels=2 "
				"bytes=[1024,2048) n=1 ") &&
		       strstr(text, "timing=host\n"),
		   "no kernel events: host (enqueue) time, flagged");
		ok(strstr(text, "# steps n=3 skipped=0 ") != NULL,
		   "3 step intervals from 4 step starts");
		ok(autosync_feedback_parse_report(text, rec, NULL) == 3 &&
		       rec->measured[0] > 0.001 && rec->measured[0] < 5.0,
		   "the SPANK plugin's reader: 3 step times in seconds");
		free(text);
	}
	/* 2. another local rank measures but does not write */
	unlink(rep);
	{
		const char *env[] = {e1, "AUTOSYNC_STEP_COLLECTIVES=2",
				     "SLURM_LOCALID=1", NULL};
		ok(scenario(env, 0, &o) &&
		       o.mask_a == (AS_PROF_COLL | AS_PROF_KERNEL_CH),
		   "local rank 1 runs");
		ok(access(rep, F_OK) != 0,
		   "and writes no report (local rank 0 does)");
	}
	/* 3. exit without finalize: the summary still lands */
	{
		const char *env[] = {e1, "AUTOSYNC_STEP_COLLECTIVES=2",
				     "AUTOSYNC_REPORT_SKIP=1",
				     "AUTOSYNC_PROFILE_KERNEL=0", NULL};
		ok(scenario(env, 1, &o) && o.mask_a == AS_PROF_COLL,
		   "AUTOSYNC_PROFILE_KERNEL=0: Coll events only");
		text = slurp(rep);
		ok(text && strstr(text, "# steps n=2 skipped=1 ") &&
		       autosync_feedback_parse_report(text, rec, NULL) == 2,
		   "a process that never finalizes still reports (destructor), "
		   "first step skipped");
		ok(text && strstr(text, "timing=host"),
		   "host timing without kernel events");
		free(text);
	}
	/* 4. no AUTOSYNC_REPORT, AUTOSYNC_PROFILE=0: nothing asked of NCCL */
	unlink(rep);
	{
		const char *env[] = {"AUTOSYNC_STEP_COLLECTIVES=2", NULL};
		ok(scenario(env, 0, &o) && o.mask_a == 0 && o.mask_b == 0,
		   "no AUTOSYNC_REPORT: activation mask 0");
		const char *env2[] = {e1, "AUTOSYNC_PROFILE=0", NULL};
		ok(scenario(env2, 0, &o) && o.mask_a == 0 &&
		       access(rep, F_OK) != 0,
		   "AUTOSYNC_PROFILE=0: mask 0, no report");
	}
	unlink(rep);
	rmdir(dir);
	free(rec);
	return done_testing();
}
