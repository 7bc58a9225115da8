/*
 * nccl_abi.h - autosync's own declarations of the NCCL plugin ABIs it
 * implements, written from the documented layout of NCCL 2.28.9
 * (docs: shared nccl-and-hwloc.md section 1): tuner v5 (with the v4 and v3
 * entry points, which differ only in init/destroy and getCollInfo) and
 * profiler v5. NCCL ships no plugin headers and the plugins must not
 * include NCCL's internal ones; test/abi.c checks every size and offset
 * below against the documented layout.
 *
 * Nothing here depends on nccl.h: the plugins build without CUDA.
 */
#ifndef AUTOSYNC_NCCL_ABI_H
#define AUTOSYNC_NCCL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ncclResult_t (nccl.h): only the values a plugin returns */
typedef enum {
	AS_NCCL_SUCCESS = 0,
	AS_NCCL_INTERNAL_ERROR = 3,
	AS_NCCL_INVALID_ARGUMENT = 4,
} as_nccl_result_t;

/* ncclDebugLogLevel / ncclDebugLogSubSys */
enum { AS_NCCL_LOG_WARN = 2, AS_NCCL_LOG_INFO = 3, AS_NCCL_LOG_TRACE = 5 };
enum {
	AS_NCCL_INIT = 0x1,
	AS_NCCL_COLL = 0x2,
	AS_NCCL_TUNING = 0x40,
	AS_NCCL_ENV = 0x80,
	AS_NCCL_PROFILE = 0x4000,
};
typedef void (*as_nccl_logger_t)(int level, unsigned long flags,
				 const char *file, int line, const char *fmt,
				 ...);

/* ncclFunc_t: the tuned functions (send/recv are not tuned) */
enum {
	AS_FUNC_BROADCAST = 0,
	AS_FUNC_REDUCE = 1,
	AS_FUNC_ALLGATHER = 2,
	AS_FUNC_REDUCESCATTER = 3,
	AS_FUNC_ALLREDUCE = 4,
	AS_NFUNCS = 5,
};

/* cost-table indices */
enum {
	AS_ALGO_TREE = 0,
	AS_ALGO_RING = 1,
	AS_ALGO_COLLNET_DIRECT = 2,
	AS_ALGO_COLLNET_CHAIN = 3,
	AS_ALGO_NVLS = 4,
	AS_ALGO_NVLS_TREE = 5,
	AS_ALGO_PAT = 6,
	AS_NALGOS = 7,
};
enum {
	AS_PROTO_LL = 0,
	AS_PROTO_LL128 = 1,
	AS_PROTO_SIMPLE = 2,
	AS_NPROTOS = 3
};
#define AS_NCCL_ALGO_PROTO_IGNORE (-1.0f)
enum { AS_HW_NVLINK = 0, AS_HW_PCI = 1, AS_HW_NET = 2, AS_NHW = 3 };
#define AS_NCCL_COMPCAPS 4 /* Volta, Ampere, Hopper, Blackwell */
#define AS_NCCL_SCALES 3   /* 1, 2, >= 4 nodes */

/* ncclNvlDomainInfo_v5_t */
typedef struct {
	int nNvlDomains;
	int minRanksPerNvlDomain;
	int maxRanksPerNvlDomain;
} as_nvl_domain_info_v5_t;

/* ncclTunerConstants_v5_t: all double, in this order */
typedef struct {
	double baseLatencies[AS_NALGOS][AS_NPROTOS];
	double hwLatencies[AS_NHW][AS_NALGOS][AS_NPROTOS];
	double llMaxBws[AS_NCCL_COMPCAPS][AS_NCCL_SCALES];
	double perChMaxRingLL128Bws[AS_NCCL_COMPCAPS][AS_NCCL_SCALES];
	double perChMaxTreeLL128Bws[AS_NCCL_COMPCAPS][AS_NCCL_SCALES];
	double perChMaxTreeBws[AS_NCCL_COMPCAPS][AS_NCCL_SCALES];
	double perChMaxNVLSTreeBws[AS_NCCL_COMPCAPS][AS_NCCL_SCALES];
} as_tuner_constants_v5_t;

/* ncclTuner_v5_t, exported as 'const ncclTuner_v5_t ncclTunerPlugin_v5' */
typedef struct {
	const char *name;
	as_nccl_result_t (*init)(void **ctx, uint64_t commId, size_t nRanks,
				 size_t nNodes, as_nccl_logger_t logFunction,
				 as_nvl_domain_info_v5_t *nvlDomainInfo,
				 as_tuner_constants_v5_t *constants);
	/* collCostTable is a float[AS_NALGOS][AS_NPROTOS] cast to float** */
	as_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes,
					int numPipeOps, float **collCostTable,
					int numAlgo, int numProto, int regBuff,
					int *nChannels);
	as_nccl_result_t (*finalize)(void *ctx);
} as_tuner_v5_t;

/* ncclTuner_v4_t */
typedef struct {
	const char *name;
	as_nccl_result_t (*init)(size_t nRanks, size_t nNodes,
				 as_nccl_logger_t logFunction, void **ctx);
	as_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes,
					int numPipeOps, float **collCostTable,
					int numAlgo, int numProto, int regBuff,
					int *nChannels);
	as_nccl_result_t (*destroy)(void *ctx);
} as_tuner_v4_t;

/* ncclTuner_v3_t */
typedef struct {
	const char *name;
	as_nccl_result_t (*init)(size_t nRanks, size_t nNodes,
				 as_nccl_logger_t logFunction, void **ctx);
	as_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes,
					int numPipeOps, float **collCostTable,
					int numAlgo, int numProto,
					int *nChannels);
	as_nccl_result_t (*destroy)(void *ctx);
} as_tuner_v3_t;

/* ------------------------------------------------------------ profiler v5 */

/* event types (also the activation-mask bits) */
enum {
	AS_PROF_GROUP = 1 << 0,
	AS_PROF_COLL = 1 << 1,
	AS_PROF_P2P = 1 << 2,
	AS_PROF_PROXY_OP = 1 << 3,
	AS_PROF_PROXY_STEP = 1 << 4,
	AS_PROF_PROXY_CTRL = 1 << 5,
	AS_PROF_KERNEL_CH = 1 << 6,
	AS_PROF_NET_PLUGIN = 1 << 7,
	AS_PROF_GROUP_API = 1 << 8,
	AS_PROF_COLL_API = 1 << 9,
	AS_PROF_P2P_API = 1 << 10,
	AS_PROF_KERNEL_LAUNCH = 1 << 11,
};
/* ncclProfilerEventState_v5_t: the state autosync uses */
enum { AS_PROF_STATE_KERNEL_CH_STOP = 22 };

/* ncclProfilerEventDescr_v5_t */
typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			bool graphCaptured;
			int groupDepth;
		} groupApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			bool graphCaptured;
		} collApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			bool graphCaptured;
		} p2pApi;
		struct {
			void *stream;
		} kernelLaunch;
		struct {
			uint64_t seqNumber;
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct {
			pid_t pid;
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;
			int isSend;
		} proxyOp;
		struct {
			int step;
		} proxyStep;
		struct {
			uint8_t channelId;
			uint64_t pTimer; /* GPU globaltimer, ns */
		} kernelCh;
		struct {
			int64_t id;
			void *data;
		} netPlugin;
	};
} as_prof_descr_v5_t;

/* ncclProfilerEventStateArgs_v5_t */
typedef union {
	struct {
		size_t transSize;
	} proxyStep;
	struct {
		int appendedProxyOps;
	} proxyCtrl;
	struct {
		void *data;
	} netPlugin;
	struct {
		uint64_t pTimer;
	} kernelCh;
} as_prof_state_args_v5_t;

/* ncclProfiler_v5_t, exported as 'ncclProfiler_v5' */
typedef struct {
	const char *name;
	as_nccl_result_t (*init)(void **ctx, uint64_t commId,
				 int *eActivationMask, const char *commName,
				 int nNodes, int nranks, int rank,
				 as_nccl_logger_t logfn);
	as_nccl_result_t (*startEvent)(void *ctx, void **eHandle,
				       as_prof_descr_v5_t *eDescr);
	as_nccl_result_t (*stopEvent)(void *eHandle);
	as_nccl_result_t (*recordEventState)(void *eHandle, int eState,
					     as_prof_state_args_v5_t *args);
	as_nccl_result_t (*finalize)(void *ctx);
} as_profiler_v5_t;

#endif
