/*
 * profiler.c - libnccl-profiler-autosync.so, the NCCL profiler plugin that
 * measures what the plan does and feeds the step's report
 * (docs/nccl-plugins.md).
 *
 * It asks NCCL for collective events and their kernel-channel children
 * (GPU timestamps), aggregates per (function, algorithm, protocol,
 * channels, size class), counts step intervals on the largest
 * communicator, and appends to $AUTOSYNC_REPORT every
 * AUTOSYNC_REPORT_EVERY steps and when the last communicator is finalized
 * (or the process exits). Every callback returns success; nothing here can
 * fail a collective.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "autosync/planner.h"
#include "common/text.h"
#include "nccl_abi.h"
#include "profagg.h"

#define EXPORT __attribute__((visibility("default")))
#define POOL 512  /* collective records per communicator (ring) */
#define MAX_CH 64 /* NCCL's MAXCHANNELS */
#define TAG_COLL 0x636f6c6c
#define TAG_CH 0x6368616e

struct rec;
struct chh {
	int tag;
	struct rec *parent;
};

struct pcomm;
struct rec {
	int tag;
	struct pcomm *comm;
	int in_use, stopped, done;
	char func[16], algo[16], proto[16];
	int nch;
	uint64_t bytes;
	double cpu_start, cpu_stop;
	uint64_t gpu_start, gpu_stop;
	int ch_started, ch_stopped;
	struct chh ch[MAX_CH];
};

struct pcomm {
	pthread_mutex_t lock;
	uint64_t id;
	int rank, nranks, nnodes;
	as_nccl_logger_t log;
	unsigned next;
	struct rec pool[POOL];
};

static struct {
	pthread_mutex_t lock;
	pthread_once_t once;
	int enabled, writer, kernel;
	unsigned every;
	char path[4096];
	char why[4700];
	int said, header_done, dirty;
	int ncomms;
	struct pcomm *primary;
	int primary_nranks, primary_rank, primary_nnodes;
	struct as_prof_agg agg;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long env_long(const char *name, long def, long min, long max)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return def;
	return v;
}

/* Local rank 0 (or an unknown local rank) writes the node's report. A
 * per-node launcher's numbering (torchrun's LOCAL_RANK) comes before
 * Slurm's: its workers all inherit the task's SLURM_LOCALID. */
static int local_rank(void)
{
	static const char *const vars[] = {
	    "LOCAL_RANK",      "OMPI_COMM_WORLD_LOCAL_RANK",
	    "MPI_LOCALRANKID", "SLURM_LOCALID",
	    "PMIX_LOCAL_RANK",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i]) && *getenv(vars[i]))
			return (int)env_long(vars[i], -1, 0, 1 << 20);
	return -1;
}

static unsigned plan_allreduces(const char *path)
{
	autosync_plan_t *plan;
	unsigned n = 0;

	if (!path || !*path || !(plan = autosync_plan_load(path, NULL)))
		return 0;
	for (size_t i = 0; i < autosync_plan_nbuckets(plan); i++)
		if (autosync_plan_bucket(plan, i)->kind ==
		    AUTOSYNC_SYNC_ALLREDUCE)
			n++;
	autosync_plan_destroy(plan);
	return n;
}

static void load_once(void)
{
	const char *report = getenv("AUTOSYNC_REPORT");
	const char *off = getenv("AUTOSYNC_PROFILE");
	long per, lr, all;

	if (off && (!strcmp(off, "0") || !strcasecmp(off, "off") ||
		    !strcasecmp(off, "no"))) {
		snprintf(g.why, sizeof(g.why),
			 "autosync profiler: "
			 "AUTOSYNC_PROFILE=%s; not profiling",
			 off);
		return;
	}
	if (!report || !*report) {
		snprintf(g.why, sizeof(g.why),
			 "autosync profiler: no "
			 "AUTOSYNC_REPORT set; not profiling");
		return;
	}
	snprintf(g.path, sizeof(g.path), "%s", report);
	per = env_long("AUTOSYNC_STEP_COLLECTIVES", -1, 1, 1 << 20);
	if (per < 0)
		per = plan_allreduces(getenv("AUTOSYNC_PLAN"));
	as_prof_agg_init(
	    &g.agg, (unsigned)per,
	    (unsigned)env_long("AUTOSYNC_REPORT_SKIP", 1, 0, 1000));
	g.every = (unsigned)env_long("AUTOSYNC_REPORT_EVERY", 100, 1, 1 << 20);
	g.kernel = env_long("AUTOSYNC_PROFILE_KERNEL", 1, 0, 1) == 1;
	lr = local_rank();
	all = env_long("AUTOSYNC_REPORT_ALL_RANKS", 0, 0, 1);
	g.writer = all || lr <= 0;
	g.enabled = 1;
	snprintf(g.why, sizeof(g.why),
		 "autosync profiler: %s to %s, %ld "
		 "collective(s) per step%s",
		 g.writer ? "reporting" : "measuring (local rank 0 reports)",
		 g.path, per,
		 g.kernel ? ", kernel timestamps" : ", host timestamps only");
}

/* Append text to the report in one write(2) under flock. Called with
 * g.lock held. */
static void write_report(const char *text, size_t len)
{
	int fd;

	if (!len)
		return;
	fd = open(g.path,
		  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX) == 0) {
		ssize_t w = write(fd, text, len);
		(void)w;
		flock(fd, LOCK_UN);
	}
	close(fd);
}

static void flush_locked(int final)
{
	char hdr[512], host[128] = "", *text = NULL;
	long len;

	if (!g.enabled)
		return;
	if (!g.writer) {
		g.agg.npending = 0;
		return;
	}
	if (!final && g.agg.npending == 0)
		return;
	if (!g.header_done) {
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		snprintf(hdr, sizeof(hdr),
			 "# autosync-profiler 1 host=%s "
			 "pid=%ld rank=%d nranks=%d nodes=%d steps_per=%u",
			 host, (long)getpid(), g.primary_rank, g.primary_nranks,
			 g.primary_nnodes, g.agg.steps_per);
	}
	len = as_prof_agg_format(&g.agg, g.header_done ? NULL : hdr, final,
				 &text);
	if (len < 0)
		return;
	g.header_done = 1;
	write_report(text, (size_t)len);
	free(text);
	if (final)
		g.dirty = 0;
}

static void say_once(as_nccl_logger_t log)
{
	int say;

	pthread_mutex_lock(&g.lock);
	say = !g.said;
	g.said = 1;
	pthread_mutex_unlock(&g.lock);
	if (say && log) {
		/* the report's path comes from the job: escaped */
		char q[4 * sizeof(g.why)];
		log(AS_NCCL_LOG_INFO, AS_NCCL_INIT | AS_NCCL_PROFILE, __FILE__,
		    __LINE__, "%s", asi_quote(g.why, q, sizeof(q)));
	}
}

static as_nccl_result_t prof_init(void **ctx, uint64_t id, int *mask,
				  const char *name, int nnodes, int nranks,
				  int rank, as_nccl_logger_t log)
{
	struct pcomm *c;

	(void)name;
	if (!ctx || !mask)
		return AS_NCCL_INVALID_ARGUMENT;
	*ctx = NULL;
	pthread_once(&g.once, load_once);
	say_once(log);
	if (!g.enabled) {
		*mask = 0;
		return AS_NCCL_SUCCESS;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		*mask = 0;
		return AS_NCCL_SUCCESS;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->id = id;
	c->rank = rank;
	c->nranks = nranks;
	c->nnodes = nnodes;
	c->log = log;
	pthread_mutex_lock(&g.lock);
	g.ncomms++;
	if (nranks > g.primary_nranks ||
	    (!g.primary && nranks == g.primary_nranks)) {
		g.primary = c;
		g.primary_nranks = nranks;
		g.primary_rank = rank;
		g.primary_nnodes = nnodes;
		as_prof_agg_reset_steps(&g.agg);
	}
	pthread_mutex_unlock(&g.lock);
	*mask = AS_PROF_COLL | (g.kernel ? AS_PROF_KERNEL_CH : 0);
	*ctx = c;
	return AS_NCCL_SUCCESS;
}

/* Account a record once. Called with its communicator's lock held. */
static void account(struct rec *r)
{
	double us;
	int gpu = r->gpu_stop > r->gpu_start && r->gpu_start > 0;

	if (r->done)
		return;
	r->done = 1;
	if (gpu)
		us = (double)(r->gpu_stop - r->gpu_start) * 1e-3;
	else if (r->stopped)
		us = (r->cpu_stop - r->cpu_start) * 1e6;
	else
		us = 0;
	pthread_mutex_lock(&g.lock);
	as_prof_agg_coll(&g.agg, r->func, r->algo, r->proto, r->nch, r->bytes,
			 us, gpu);
	g.dirty = 1;
	pthread_mutex_unlock(&g.lock);
}

static void maybe_complete(struct rec *r)
{
	int want = r->nch > 0 ? r->nch : r->ch_started;

	if (!r->done && r->stopped && !g.kernel) {
		account(r); /* no kernel events asked: enqueue time only */
		return;
	}
	if (!r->done && r->stopped && r->ch_started > 0 &&
	    r->ch_stopped >= want && r->ch_stopped >= r->ch_started)
		account(r);
}

static void name_copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static as_nccl_result_t prof_start(void *ctx, void **handle,
				   as_prof_descr_v5_t *d)
{
	struct pcomm *c = ctx;

	if (!handle)
		return AS_NCCL_SUCCESS;
	*handle = NULL;
	if (!c || !d)
		return AS_NCCL_SUCCESS;
	if (d->type == AS_PROF_COLL) {
		struct rec *r;
		double t = now_s();
		int mark;

		pthread_mutex_lock(&c->lock);
		r = &c->pool[c->next++ % POOL];
		if (r->in_use && !r->done)
			account(r); /* its kernels never showed up */
		memset(r, 0, offsetof(struct rec, ch));
		r->tag = TAG_COLL;
		r->comm = c;
		r->in_use = 1;
		name_copy(r->func, sizeof(r->func), d->coll.func);
		name_copy(r->algo, sizeof(r->algo), d->coll.algo);
		name_copy(r->proto, sizeof(r->proto), d->coll.proto);
		r->nch = d->coll.nChannels;
		r->bytes = (uint64_t)d->coll.count *
			   as_prof_dtype_size(d->coll.datatype);
		r->cpu_start = t;
		for (int i = 0; i < MAX_CH; i++) {
			r->ch[i].tag = TAG_CH;
			r->ch[i].parent = r;
		}
		pthread_mutex_unlock(&c->lock);
		mark = d->coll.func && !strcasecmp(d->coll.func, "AllReduce");
		pthread_mutex_lock(&g.lock);
		if (mark && g.primary == c && as_prof_agg_mark(&g.agg, t) &&
		    g.agg.npending >= g.every)
			flush_locked(0);
		pthread_mutex_unlock(&g.lock);
		*handle = r;
	} else if (d->type == AS_PROF_KERNEL_CH) {
		struct rec *r = d->parentObj;
		struct chh *h;

		/* only our own records of this communicator */
		if ((char *)r < (char *)c->pool ||
		    (char *)r >= (char *)(c->pool + POOL) ||
		    ((char *)r - (char *)c->pool) % sizeof(struct rec))
			return AS_NCCL_SUCCESS;
		pthread_mutex_lock(&c->lock);
		if (r->tag == TAG_COLL && r->in_use && !r->done) {
			h = &r->ch[d->kernelCh.channelId % MAX_CH];
			r->ch_started++;
			if (d->kernelCh.pTimer &&
			    (!r->gpu_start ||
			     d->kernelCh.pTimer < r->gpu_start))
				r->gpu_start = d->kernelCh.pTimer;
			*handle = h;
		}
		pthread_mutex_unlock(&c->lock);
	}
	return AS_NCCL_SUCCESS;
}

static as_nccl_result_t prof_stop(void *handle)
{
	int tag = handle ? *(int *)handle : 0;

	if (tag == TAG_COLL) {
		struct rec *r = handle;
		pthread_mutex_lock(&r->comm->lock);
		if (r->in_use && !r->stopped) {
			r->stopped = 1;
			r->cpu_stop = now_s();
			maybe_complete(r);
		}
		pthread_mutex_unlock(&r->comm->lock);
	} else if (tag == TAG_CH) {
		struct rec *r = ((struct chh *)handle)->parent;
		pthread_mutex_lock(&r->comm->lock);
		if (r->in_use && !r->done) {
			r->ch_stopped++;
			maybe_complete(r);
		}
		pthread_mutex_unlock(&r->comm->lock);
	}
	return AS_NCCL_SUCCESS;
}

static as_nccl_result_t prof_state(void *handle, int state,
				   as_prof_state_args_v5_t *args)
{
	struct rec *r;

	if (!handle || *(int *)handle != TAG_CH ||
	    state != AS_PROF_STATE_KERNEL_CH_STOP || !args)
		return AS_NCCL_SUCCESS;
	r = ((struct chh *)handle)->parent;
	pthread_mutex_lock(&r->comm->lock);
	if (r->in_use && !r->done && args->kernelCh.pTimer > r->gpu_stop)
		r->gpu_stop = args->kernelCh.pTimer;
	pthread_mutex_unlock(&r->comm->lock);
	return AS_NCCL_SUCCESS;
}

static as_nccl_result_t prof_fini(void *ctx)
{
	struct pcomm *c = ctx;

	if (!c)
		return AS_NCCL_SUCCESS;
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < POOL; i++)
		if (c->pool[i].in_use && !c->pool[i].done)
			account(&c->pool[i]);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&g.lock);
	if (g.primary == c)
		g.primary = NULL; /* keep primary_nranks: a smaller comm
				     does not take over the step count */
	if (--g.ncomms == 0)
		flush_locked(1);
	pthread_mutex_unlock(&g.lock);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return AS_NCCL_SUCCESS;
}

/* A process that exits without finalizing its communicators (common in
 * training scripts) still leaves its summary. */
__attribute__((destructor)) static void prof_exit(void)
{
	pthread_mutex_lock(&g.lock);
	if (g.enabled && (g.dirty || g.agg.npending))
		flush_locked(1);
	pthread_mutex_unlock(&g.lock);
}

EXPORT const as_profiler_v5_t ncclProfiler_v5 = {
    .name = "autosync",
    .init = prof_init,
    .startEvent = prof_start,
    .stopEvent = prof_stop,
    .recordEventState = prof_state,
    .finalize = prof_fini,
};
