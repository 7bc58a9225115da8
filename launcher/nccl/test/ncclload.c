/* ncclload.c - the real libnccl (linked) and both plugins (dlopened) live in
 * one process: no symbol clash, and NCCL answers ncclGetVersion. Needs no
 * GPU. Built only when configure found NCCL. */
#include "config.h"

#include <dlfcn.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include "nccl_abi.h"
#include "tap.h"

int main(void)
{
	const char *b = getenv("AUTOSYNC_BUILDDIR");
	char path[4096];
	void *t, *p;
	int v = 0;

	plan(NO_PLAN);
	ok(ncclGetVersion(&v) == ncclSuccess && v >= 22800,
	   "libnccl loads and reports version %d (>= 2.28)", v);
	diag("NCCL_VERSION_CODE of the header: %d", NCCL_VERSION_CODE);
	snprintf(path, sizeof(path),
		 "%s/launcher/nccl/.libs/libnccl-tuner-autosync.so",
		 b ? b : ".");
	t = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ok(t && dlsym(t, "ncclTunerPlugin_v5"), "the tuner loads next to it");
	snprintf(path, sizeof(path),
		 "%s/launcher/nccl/.libs/libnccl-profiler-autosync.so",
		 b ? b : ".");
	p = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ok(p && dlsym(p, "ncclProfiler_v5"), "the profiler loads next to it");
	ok(ncclGetVersion(&v) == ncclSuccess, "NCCL still answers");
	ok((int)ncclSuccess == (int)AS_NCCL_SUCCESS &&
	       (int)ncclInternalError == (int)AS_NCCL_INTERNAL_ERROR &&
	       (int)ncclInvalidArgument == (int)AS_NCCL_INVALID_ARGUMENT,
	   "our ncclResult_t values match nccl.h");
	if (t)
		dlclose(t);
	if (p)
		dlclose(p);
	return done_testing();
}
