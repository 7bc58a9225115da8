/* The NVML reader (topology/topo_nvml.c) against a stand-in NVML library
 * (nvml_mock.c), applied to the JUWELS Booster fixture's four A100s. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../topo_internal.h"
#include "fixdir.h"
#include "tap.h"

static autosync_topo_t *load(const char *fixdir)
{
	char path[1200];
	autosync_error_t err;

	snprintf(path, sizeof(path), "%s/hwloc-juwels-booster-4xA100-4xHDR.xml",
		 fixdir);
	return autosync_topo_load_file(path, &err);
}

int main(void)
{
	const char *b = getenv("AUTOSYNC_BUILDDIR");
	char fixdir[1024], lib[1024];
	autosync_error_t err;
	autosync_topo_t *t;
	double bw;
	int c;

	plan(NO_PLAN);
	if (find_fixdir(fixdir, sizeof(fixdir)) < 0) {
		skip(1, "tests/fixtures/topologies not found");
		return done_testing();
	}
	snprintf(lib, sizeof(lib), "%s/topology/test/.libs/libnvmlmock.so",
		 b && *b ? b : ".");

	/* no NVML at all */
	t = load(fixdir);
	ok(t && topo_nvml_enrich(t, "/nonexistent/libnvidia-ml.so.1") == 0,
	   "no NVML library: nothing added");
	autosync_topo_destroy(t);

	setenv("NVML_MOCK", "fail", 1);
	t = load(fixdir);
	ok(t && topo_nvml_enrich(t, lib) == 0, "nvmlInit fails: nothing added");
	autosync_topo_destroy(t);

	setenv("NVML_MOCK", "switch", 1);
	t = load(fixdir);
	ok(t != NULL, "fixture loads");
	if (t) {
		int all = 1;

		ok(topo_nvml_enrich(t, lib) == 48, "4 GPUs x 12 NVLinks");
		ok(topo_refresh(t, &err) == 0, "refresh");
		for (unsigned i = 0; i < 4; i++)
			for (unsigned j = i + 1; j < 4; j++) {
				autosync_topo_link(t, i, j, &c, &bw, NULL);
				all &= c == AUTOSYNC_LINK_NVLINK && bw == 300e9;
			}
		ok(all, "every pair NVLink through NVSwitches, 12 x 25 GB/s");
		is(autosync_topo_gpu(t, 2)->uuid, "GPU-mock-2",
		   "UUID from NVML");
		is(autosync_topo_gpu(t, 0)->model, "NVIDIA A100-SXM4-40GB",
		   "model from NVML");
		ok(topo_nvml_enrich(t, lib) == 0,
		   "GPUs that already have NVLinks are left alone");
		ok(autosync_topo_restrict(t, "GPU-mock-3", NULL, &err) == 0 &&
		       !strcmp(autosync_topo_gpu(t, 0)->busid, "0000:c4:00.0"),
		   "restriction by an NVML UUID");
		autosync_topo_destroy(t);
	}

	setenv("NVML_MOCK", "peer", 1);
	t = load(fixdir);
	if (t) {
		ok(topo_nvml_enrich(t, lib) == 20, "4 GPUs x 5 active links");
		ok(topo_refresh(t, &err) == 0, "refresh");
		autosync_topo_link(t, 0, 1, &c, &bw, NULL);
		ok(c == AUTOSYNC_LINK_NVLINK && bw == 100e9,
		   "GPU 0-1: 4 direct links, 100 GB/s");
		autosync_topo_link(t, 2, 3, &c, &bw, NULL);
		ok(c == AUTOSYNC_LINK_NVLINK, "GPU 2-3 direct");
		autosync_topo_link(t, 0, 2, &c, &bw, NULL);
		ok(c == AUTOSYNC_LINK_CROSS_SOCKET,
		   "GPU 0-2 not joined: a CPU NVLink is no GPU peer");
		ok(autosync_topo_gpu(t, 0)->nvlink_bw == 100e9,
		   "GPU 0 peer NVLink bandwidth (the CPU link not counted)");
		autosync_topo_destroy(t);
	}
	return done_testing();
}
