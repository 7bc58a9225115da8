/* abi.c - the plugin ABI declarations (nccl_abi.h) against the layout NCCL
 * 2.28.9 documents (tuner v5, profiler v5; LP64). */
#include "config.h"

#include <stddef.h>

#include "nccl_abi.h"
#include "tap.h"

#define OFF(t, f, want)                                                    \
	ok(offsetof(t, f) == (want), #t "." #f " at %d (got %zu)", (want), \
	   offsetof(t, f))
#define SIZE(t, want)                                                   \
	ok(sizeof(t) == (want), "sizeof " #t " = %d (got %zu)", (want), \
	   sizeof(t))

int main(void)
{
	plan(NO_PLAN);
	ok(sizeof(void *) == 8, "LP64 (the layout below assumes it)");

	/* indices the cost table and the constants use */
	ok(AS_ALGO_TREE == 0 && AS_ALGO_RING == 1 &&
	       AS_ALGO_COLLNET_DIRECT == 2 && AS_ALGO_COLLNET_CHAIN == 3 &&
	       AS_ALGO_NVLS == 4 && AS_ALGO_NVLS_TREE == 5 &&
	       AS_ALGO_PAT == 6 && AS_NALGOS == 7,
	   "algorithm indices");
	ok(AS_PROTO_LL == 0 && AS_PROTO_LL128 == 1 && AS_PROTO_SIMPLE == 2,
	   "protocol indices");
	ok(AS_FUNC_BROADCAST == 0 && AS_FUNC_REDUCE == 1 &&
	       AS_FUNC_ALLGATHER == 2 && AS_FUNC_REDUCESCATTER == 3 &&
	       AS_FUNC_ALLREDUCE == 4,
	   "function indices");

	/* ncclNvlDomainInfo_v5_t: three ints */
	SIZE(as_nvl_domain_info_v5_t, 12);
	/* ncclTunerConstants_v5_t: doubles [7][3], [3][7][3], then five [4][3]
	 */
	OFF(as_tuner_constants_v5_t, baseLatencies, 0);
	OFF(as_tuner_constants_v5_t, hwLatencies, 21 * 8);
	OFF(as_tuner_constants_v5_t, llMaxBws, (21 + 63) * 8);
	OFF(as_tuner_constants_v5_t, perChMaxRingLL128Bws, (21 + 63 + 12) * 8);
	OFF(as_tuner_constants_v5_t, perChMaxTreeLL128Bws, (21 + 63 + 24) * 8);
	OFF(as_tuner_constants_v5_t, perChMaxTreeBws, (21 + 63 + 36) * 8);
	OFF(as_tuner_constants_v5_t, perChMaxNVLSTreeBws, (21 + 63 + 48) * 8);
	SIZE(as_tuner_constants_v5_t, (21 + 63 + 60) * 8);
	ok(offsetof(as_tuner_constants_v5_t,
		    hwLatencies[AS_HW_NET][AS_ALGO_RING][AS_PROTO_SIMPLE]) ==
	       (21 + 2 * 21 + 1 * 3 + 2) * 8,
	   "hwLatencies[NET][RING][SIMPLE] is double #%d", 21 + 42 + 5);

	/* the tuner structs: name + 3 function pointers */
	OFF(as_tuner_v5_t, name, 0);
	OFF(as_tuner_v5_t, init, 8);
	OFF(as_tuner_v5_t, getCollInfo, 16);
	OFF(as_tuner_v5_t, finalize, 24);
	SIZE(as_tuner_v5_t, 32);
	SIZE(as_tuner_v4_t, 32);
	SIZE(as_tuner_v3_t, 32);

	/* profiler v5 event descriptor */
	OFF(as_prof_descr_v5_t, type, 0);
	OFF(as_prof_descr_v5_t, parentObj, 8);
	OFF(as_prof_descr_v5_t, rank, 16);
	OFF(as_prof_descr_v5_t, coll.seqNumber, 24);
	OFF(as_prof_descr_v5_t, coll.func, 32);
	OFF(as_prof_descr_v5_t, coll.sendBuff, 40);
	OFF(as_prof_descr_v5_t, coll.recvBuff, 48);
	OFF(as_prof_descr_v5_t, coll.count, 56);
	OFF(as_prof_descr_v5_t, coll.root, 64);
	OFF(as_prof_descr_v5_t, coll.datatype, 72);
	OFF(as_prof_descr_v5_t, coll.nChannels, 80);
	OFF(as_prof_descr_v5_t, coll.nWarps, 81);
	OFF(as_prof_descr_v5_t, coll.algo, 88);
	OFF(as_prof_descr_v5_t, coll.proto, 96);
	OFF(as_prof_descr_v5_t, coll.parentGroup, 104);
	OFF(as_prof_descr_v5_t, kernelCh.channelId, 24);
	OFF(as_prof_descr_v5_t, kernelCh.pTimer, 32);
	OFF(as_prof_descr_v5_t, proxyOp.pid, 24);
	OFF(as_prof_descr_v5_t, proxyOp.channelId, 28);
	OFF(as_prof_descr_v5_t, collApi.graphCaptured, 64);
	SIZE(as_prof_descr_v5_t, 112);
	SIZE(as_prof_state_args_v5_t, 8);
	OFF(as_profiler_v5_t, name, 0);
	OFF(as_profiler_v5_t, init, 8);
	OFF(as_profiler_v5_t, startEvent, 16);
	OFF(as_profiler_v5_t, stopEvent, 24);
	OFF(as_profiler_v5_t, recordEventState, 32);
	OFF(as_profiler_v5_t, finalize, 40);
	SIZE(as_profiler_v5_t, 48);
	ok(AS_PROF_COLL == 2 && AS_PROF_KERNEL_CH == 64 &&
	       AS_PROF_STATE_KERNEL_CH_STOP == 22,
	   "event bits and the KernelCh stop state");
	return done_testing();
}
