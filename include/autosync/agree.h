/*
 * autosync/agree.h - the nodes of a step agree on one plan before its tasks
 * start.
 *
 * Every node plans for itself from the same inputs; when the inputs differ
 * (another simulator file, a node with fewer GPUs) the nodes would run
 * different plans, which a job's collectives do not survive. Jobs that get
 * only environment variables have no channel between ranks at start, so the
 * launcher (srun) holds one: every node reports its plan hash, the launcher
 * answers all of them with one verdict once every node has reported (or
 * when the gathering window ends), and a node applies its plan only when
 * the verdict is that every node has the same one.
 *
 * The verdict is the launcher's alone, so the nodes that hear it act alike.
 * A node that cannot reach the launcher, or does not hear back in time,
 * falls back by itself; the others then fall back too, because its report
 * is missing, unless it was lost after the launcher decided (a connection
 * dropped in the last round trip).
 *
 * Wire format (one line each way, ASCII, at most AUTOSYNC_AGREE_LINE_MAX):
 *   node:     "autosync-agree 1 TOKEN JOB STEP NODE HASH\n"
 *   launcher: "same HASH\n" | "differ NODE HASH NODE HASH\n" |
 *             "incomplete REPORTED NNODES\n"
 * HASH is a plan hash (1-64 of [0-9a-z]) or "-" for a node that has no
 * plan. The TOKEN (random, per step) and the job and step ids keep other
 * steps' nodes and strangers out.
 *
 * Conventions as in autosync/common.h. Nothing here prints or knows Slurm.
 *
 * Launcher:
 *	autosync_agree_t *a = autosync_agree_create(nnodes, job, step, &err);
 *	autosync_agree_listen(a, spec, sizeof(spec), &err);
 *	... pass 'spec' to the nodes (an environment variable) ...
 *	autosync_agree_run(a, &err);   (blocks; autosync_agree_stop() ends it)
 *	autosync_agree_destroy(a);
 * Node:
 *	rc = autosync_agree_join(launcher_ip, spec, job, step, node, hash,
 *				 verdict, sizeof(verdict), &err);
 */
#ifndef AUTOSYNC_AGREE_H
#define AUTOSYNC_AGREE_H

#include <stddef.h>
#include <stdint.h>

#include "autosync/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AUTOSYNC_AGREE_LINE_MAX 160
/* The most nodes one launcher gathers (one socket each). */
#define AUTOSYNC_AGREE_MAX_NODES 16384
/* Default window, from the first report, for the others to report. */
#define AUTOSYNC_AGREE_GATHER_MS 5000
/* The longest window a node accepts from a spec (it waits that long). */
#define AUTOSYNC_AGREE_GATHER_MAX_MS 60000
/* What a spec string needs: "PORT TOKEN GATHER_MS". */
#define AUTOSYNC_AGREE_SPEC_MAX 64

/* The verdicts (autosync_agree_run's and autosync_agree_join's). */
enum autosync_agree_verdict {
	AUTOSYNC_AGREE_NONE = 0,       /* nothing decided (yet) */
	AUTOSYNC_AGREE_SAME = 1,       /* every node has this plan */
	AUTOSYNC_AGREE_DIFFER = 2,     /* two nodes have different plans */
	AUTOSYNC_AGREE_INCOMPLETE = 3, /* not every node reported in time */
};

typedef struct autosync_agree autosync_agree_t;

/* A launcher for a step of 'nnodes' nodes (2..AUTOSYNC_AGREE_MAX_NODES).
 * The caller frees it with autosync_agree_destroy(). */
autosync_agree_t *autosync_agree_create(unsigned nnodes, uint32_t job,
					uint32_t step, autosync_error_t *errp);
/* Windows in ms: 'gather_ms' from the first report (default
 * AUTOSYNC_AGREE_GATHER_MS, at most AUTOSYNC_AGREE_GATHER_MAX_MS),
 * 'total_ms' from autosync_agree_run() for any report at all (default
 * 600000). Before autosync_agree_listen(). */
int autosync_agree_set_windows(autosync_agree_t *a, int gather_ms, int total_ms,
			       autosync_error_t *errp);
/* The ports to listen on, lo..hi (1..65535), e.g. the site's
 * SrunPortRange where a firewall opens only that to the nodes; the first
 * free one from a random start is taken. Default: a port the kernel picks.
 * Before autosync_agree_listen(). */
int autosync_agree_set_ports(autosync_agree_t *a, unsigned lo, unsigned hi,
			     autosync_error_t *errp);
/* Listen on every address (IPv6 and IPv4), on a port of the range (or one
 * the kernel picks), and write the spec the nodes need into 'spec'
 * (AUTOSYNC_AGREE_SPEC_MAX). */
int autosync_agree_listen(autosync_agree_t *a, char *spec, size_t len,
			  autosync_error_t *errp);
/* Gather the reports and answer them; returns the verdict (an
 * enum autosync_agree_verdict, NONE when no node reported before the
 * total window ended or autosync_agree_stop() was called), or -1. */
int autosync_agree_run(autosync_agree_t *a, autosync_error_t *errp);
/* From another thread (or a signal handler): end autosync_agree_run()
 * at once. */
void autosync_agree_stop(autosync_agree_t *a);
/* After autosync_agree_run(): how many nodes reported, and the verdict's
 * line (without the newline; static in 'a'). */
unsigned autosync_agree_reported(const autosync_agree_t *a);
const char *autosync_agree_verdict_line(const autosync_agree_t *a);
/* Accepts NULL. Not while autosync_agree_run() runs. */
void autosync_agree_destroy(autosync_agree_t *a);

/* Report 'hash' (or "-") for node 'node' to the launcher at 'host' (a
 * numeric IPv4 or IPv6 address) with the 'spec' it published, and wait for
 * the verdict at most the spec's window and 2 s more. Returns the verdict
 * (SAME only when it names 'hash' itself), or -1 when none came (errp says
 * why). 'verdict' (may be NULL) receives the launcher's line. */
int autosync_agree_join(const char *host, const char *spec, uint32_t job,
			uint32_t step, unsigned node, const char *hash,
			char *verdict, size_t len, autosync_error_t *errp);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_AGREE_H */
