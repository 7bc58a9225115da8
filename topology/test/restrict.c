/* Restriction by environment (autosync_topo_restrict_env, and
 * autosync_topo_restrict_container in a container), edge by edge, on
 * the DGX-2 fixture (16 GPUs with UUIDs, in PCI bus order):
 *   0 0000:34:00.0 GPU-d3977428-...   8 0000:b7:00.0 GPU-27ce06e8-...
 *   1 0000:36:00.0 GPU-5bfda7ef-...   ...
 *   4 0000:57:00.0 GPU-d256cac8-...  15 0000:e7:00.0
 * Each row gives the variables and what the job then sees, as indices of
 * the unrestricted view, or the failure: errno and words of the message. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/topology.h"
#include "tap.h"
#include "fixdir.h"

#define FIXTURE "hwloc-dgx2h-16xV100-12xNVSwitch.xml"

static const struct row {
	const char *what;
	/* the variables and the CPU set; NULL = unset */
	const char *cvd, *step, *job, *cpuset;
	/* what the job sees, as GPU indices; NULL = the call fails */
	const char *want;
	/* then: words of the message */
	const char *msg;
} rows[] = {
    /* the Slurm lists */
    {"nothing set: every GPU", NULL, NULL, NULL, NULL,
     "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", NULL},
    {"SLURM_STEP_GPUS set but empty: no GPU", NULL, "", NULL, NULL, "", NULL},
    {"a Slurm list is taken in ascending order", NULL, "3,1", NULL, NULL, "1,3",
     NULL},
    {"ranges, and a GPU named twice counts once", NULL, "0-2,2", NULL, NULL,
     "0,1,2", NULL},
    {"SLURM_STEP_GPUS before SLURM_JOB_GPUS", NULL, "1", "0-15", NULL, "1",
     NULL},
    {"SLURM_JOB_GPUS without a step list", NULL, NULL, "4,5", NULL, "4,5",
     NULL},
    {"a reversed range", NULL, "5-3", NULL, NULL, NULL,
     "SLURM_STEP_GPUS=5-3: range 5-3 is reversed"},
    {"a range without its end", NULL, "1-", NULL, NULL, NULL,
     "want GPU indices"},
    {"a GPU the node lacks", NULL, "16", NULL, NULL, NULL,
     "this node has 16 GPUs"},
    {"an error names the variable it came from", NULL, NULL, "99", NULL, NULL,
     "SLURM_JOB_GPUS"},
    {"a Slurm list that is not indices", NULL, "0,x", NULL, NULL, NULL,
     "want GPU indices"},

    /* CUDA_VISIBLE_DEVICES alone: node indices, in the order given */
    {"order kept, spaces around entries ignored", " 2 , 0 ", NULL, NULL, NULL,
     "2,0", NULL},
    {"a trailing comma", "0,1,", NULL, NULL, NULL, "0,1", NULL},
    {"a full UUID", "GPU-d256cac8-f12b-b2a2-5487-ee294f6e4617", NULL, NULL,
     NULL, "4", NULL},
    {"a unique UUID prefix, any case", "GPU-D39", NULL, NULL, NULL, "0", NULL},
    {"a UUID prefix two GPUs share", "GPU-d", NULL, NULL, NULL, NULL,
     "more than one GPU"},
    {"an unknown UUID", "GPU-ffff", NULL, NULL, NULL, NULL, "no GPU with UUID"},
    {"a bus id, in upper case", "0000:B7:00.0", NULL, NULL, NULL, "8", NULL},
    {"one GPU listed twice, by index and by UUID", "0,GPU-d3977428", NULL, NULL,
     NULL, NULL, "listed twice"},
    {"one GPU listed twice, by index and by bus id", "1,0000:36:00.0", NULL,
     NULL, NULL, NULL, "listed twice"},
    {"-1 is not an index", "-1", NULL, NULL, NULL, NULL, "no GPU '-1'"},
    {"an index past the node's GPUs", "16", NULL, NULL, NULL, NULL,
     "16 GPUs visible"},
    {"a MIG instance", "MIG-GPU-d3977428/1/0", NULL, NULL, NULL, NULL,
     "MIG instance"},

    /* both: indices relative to the Slurm list unless equal to it */
    {"relative to SLURM_STEP_GPUS, in the order given", "2,0", "4,6,8", NULL,
     NULL, "8,4", NULL},
    {"equal to the Slurm list: node indices", "4,6", "4,6", NULL, NULL, "4,6",
     NULL},
    {"the Slurm list's GPUs in another order: still node indices", "6,4", "4,6",
     NULL, NULL, "6,4", NULL},
    {"relative, past the Slurm list", "2", "4,6", NULL, NULL, NULL,
     "2 GPUs visible"},
    {"a bus id outside the Slurm list", "0000:36:00.0", "0", NULL, NULL, NULL,
     "is not in SLURM_STEP_GPUS"},
    {"a UUID inside the Slurm list", "GPU-d256cac8", "4,5", NULL, NULL, "4",
     NULL},
    {"relative indices repeated", "1,1", "4,6", NULL, NULL, NULL,
     "listed twice"},
    {"CUDA_VISIBLE_DEVICES empty beside a Slurm list: no GPU", "", "0,1", NULL,
     NULL, "", NULL},
    {"NoDevFiles beside a Slurm list: no GPU", "NoDevFiles", "0,1", NULL, NULL,
     "", NULL},

    /* the CPU set */
    {"a CPU list", NULL, "0", NULL, "0-1", "0", NULL},
    {"a CPU mask", NULL, "0", NULL, "0x3", "0", NULL},
    {"an empty CPU mask", NULL, NULL, NULL, "0x0", NULL, "bad CPU set"},
    {"a CPU set that is not one", NULL, NULL, NULL, "cpus", NULL,
     "bad CPU set"},
    {"a bad CPU set fails before the GPUs are looked at", "0", NULL, NULL, "",
     NULL, "bad CPU set"},
};

/* Inside a container (autosync_topo_restrict_container): the container's
 * list, then CUDA_VISIBLE_DEVICES within it; Slurm's list wins. */
static const struct crow {
	const char *what, *nvd, *cvd, *step;
	const char *want; /* NULL: fails with errno 'err' and words 'msg' */
	int err;
	const char *msg;
} crows[] = {
    {"unset: every GPU", NULL, NULL, NULL,
     "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", 0, NULL},
    {"all: every GPU", "all", NULL, NULL,
     "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15", 0, NULL},
    {"void: no list", "void", "2", NULL, "2", 0, NULL},
    {"empty: no list", "", "2", NULL, "2", 0, NULL},
    {"node indices: those GPUs", "1,3", NULL, NULL, "1,3", 0, NULL},
    {"UUIDs: those GPUs", "GPU-5bfda7ef-6aec-a775-5ae1-a1c3dcaef094", NULL,
     NULL, "1", 0, NULL},
    {"CUDA_VISIBLE_DEVICES counts within the list", "1,3", "1", NULL, "3", 0,
     NULL},
    {"and may reorder it", "1,3,5", "2,0", NULL, "5,1", 0, NULL},
    {"a UUID in CUDA_VISIBLE_DEVICES is absolute", "1,3",
     "GPU-76965b61-2da3-d640-e0fd-94e26018d1e8", NULL, "3", 0, NULL},
    {"a Slurm list: the container's is not used", "1,3", NULL, "4,5", "4,5", 0,
     NULL},
    {"none: no GPU", "none", NULL, NULL, NULL, ENODEV,
     "NVIDIA_VISIBLE_DEVICES=none: the container has no GPU"},
    {"an index beyond the container's GPUs", "1,3", "2", NULL, NULL, EINVAL,
     "CUDA_VISIBLE_DEVICES: GPU 2, but NVIDIA_VISIBLE_DEVICES=1,3 gives the "
     "container 2"},
    {"blanks around an entry are not a node index", "4,5", "0,1 ", NULL, "4,5",
     0, NULL},
    {"a UUID of a GPU the container does not have", "1,3",
     "GPU-d256cac8-f12b-b2a2-5487-ee294f6e4617", NULL, NULL, EINVAL,
     "CUDA_VISIBLE_DEVICES: 'GPU-d256cac8-f12b-b2a2-5487-ee294f6e4617' is "
     "not one of the container's GPUs (NVIDIA_VISIBLE_DEVICES=1,3)"},
    {"a bus id of a GPU the container does not have", "4,5", "0000:34:00.0",
     NULL, NULL, EINVAL,
     "CUDA_VISIBLE_DEVICES: '0000:34:00.0' is not one of the container's "
     "GPUs (NVIDIA_VISIBLE_DEVICES=4,5)"},
    {"one of its GPUs by UUID, the container listing UUIDs",
     "GPU-5bfda7ef-6aec-a775-5ae1-a1c3dcaef094", "GPU-5bfda7ef", NULL, "1", 0,
     NULL},
    {"an index twice: refused before the list is written",
     "GPU-5bfda7ef-"
     "6aec-a775-5ae1-a1c3dcaef094",
     "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0", NULL,
     NULL, EINVAL,
     "CUDA_VISIBLE_DEVICES: the container's GPU "
     "'GPU-5bfda7ef-6aec-a775-5ae1-a1c3dcaef094' listed twice"},
};

static char fix[1200];

/* The view as indices of the unrestricted topology 'full'. */
static void view_of(const autosync_topo_t *t, const autosync_topo_t *full,
		    char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < autosync_topo_ngpus(t); i++) {
		const char *b = autosync_topo_gpu(t, i)->busid;
		int k = -1;

		for (unsigned j = 0; j < autosync_topo_ngpus(full); j++)
			if (!strcmp(autosync_topo_gpu(full, j)->busid, b))
				k = (int)j;
		off += (size_t)snprintf(out + off, len - off, "%s%d",
					i ? "," : "", k);
		if (off >= len)
			return;
	}
}

static void run_row(autosync_topo_t *t, const autosync_topo_t *full,
		    const struct row *r)
{
	autosync_error_t err = {.text = ""};
	char before[256], after[256], hash[32];
	int rc;

	/* start from a known view: GPUs 0 and 1 */
	(void)autosync_topo_restrict_env(t, "0,1", NULL, NULL, NULL, NULL);
	view_of(t, full, before, sizeof(before));
	snprintf(hash, sizeof(hash), "%s", autosync_topo_hash(t));
	errno = 0;
	rc = autosync_topo_restrict_env(t, r->cvd, r->step, r->job, r->cpuset,
					&err);
	view_of(t, full, after, sizeof(after));
	if (r->want) {
		ok(rc == 0 && !strcmp(after, r->want), "%s: [%s] (%s)", r->what,
		   after, err.text);
		return;
	}
	ok(rc == -1 && errno == EINVAL && strstr(err.text, r->msg), "%s: %s",
	   r->what, err.text);
	ok(!strcmp(before, after) && !strcmp(hash, autosync_topo_hash(t)),
	   "%s: the previous view and hash are kept", r->what);
}

int main(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t, *full;
	char path[1300];

	if (find_fixdir(fix, sizeof(fix)) < 0) {
		/* e.g. a release tarball built away from the clone */
		printf("1..0 # SKIP tests/fixtures/topologies not found\n");
		return 0;
	}
	plan(NO_PLAN);
	snprintf(path, sizeof(path), "%s/%s", fix, FIXTURE);
	t = autosync_topo_load_file(path, &err);
	full = autosync_topo_load_file(path, &err);
	if (!t || !full || autosync_topo_ngpus(full) != 16) {
		bail_out("%s does not load: %s", FIXTURE, err.text);
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(t, full, &rows[i]);

	for (size_t i = 0; i < sizeof(crows) / sizeof(crows[0]); i++) {
		const struct crow *r = &crows[i];
		char after[256];
		int rc;

		err.text[0] = '\0';
		errno = 0;
		rc = autosync_topo_restrict_container(
		    t, r->nvd, r->cvd, r->step, NULL, NULL, &err);
		view_of(t, full, after, sizeof(after));
		if (r->want)
			ok(rc == 0 && !strcmp(after, r->want),
			   "container, %s: [%s] (%s)", r->what, after,
			   err.text);
		else
			ok(rc == -1 && errno == r->err &&
			       !strcmp(err.text, r->msg),
			   "container, %s: %s", r->what, err.text);
	}

	/* the CPU set is the job's: GPUs' local CPUs are cut to it */
	if (autosync_topo_restrict_env(t, NULL, "0,8", NULL, "0-1", &err) < 0)
		bail_out("SLURM_STEP_GPUS=0,8 with CPUs 0-1: %s", err.text);
	is(autosync_topo_cpuset(t), "0-1", "CPU set 0-1: the job's CPUs");
	is(autosync_topo_gpu(t, 0)->cpuset, "0-1", "GPU 0: its local CPUs");
	is(autosync_topo_gpu(t, 1)->cpuset, "",
	   "GPU 8: none of its local CPUs (24-25) is the job's");
	/* a restriction replaces the previous one, it does not narrow it */
	ok(autosync_topo_restrict_env(t, NULL, NULL, NULL, NULL, &err) == 0 &&
	       autosync_topo_ngpus(t) == 16 &&
	       !strcmp(autosync_topo_hash(t), autosync_topo_hash(full)),
	   "nothing set again: the whole node and its hash");
	errno = 0;
	ok(autosync_topo_restrict_env(NULL, "0", NULL, NULL, NULL, &err) ==
		   -1 &&
	       errno == EINVAL,
	   "no topology: EINVAL (%s)", err.text);
	errno = 0;
	ok(autosync_topo_restrict_env(t, "99", NULL, NULL, NULL, NULL) == -1 &&
	       errno == EINVAL,
	   "errp may be NULL");
	autosync_topo_destroy(t);
	autosync_topo_destroy(full);
	done_testing();
}
