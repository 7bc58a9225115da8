/*
 * nccl_backend.c - the NCCL transport for the sync runtime (syncrt.h).
 * Built only when configure finds NCCL (HAVE_NCCL) and MPI (bootstrap).
 *
 * The plan walk in syncrt.c is the same as for MPI; this file only maps
 * its operations:
 *   stage_in      copy the host region (a bucket, or its 16-bit staging
 *                 copy) to a device buffer on the backend's stream
 *   allreduce     ncclAllReduce(ncclSum) in place on the device copy;
 *                 fp16/bf16 buckets arrive already converted on the host
 *                 (no cast kernels without nvcc) and are reduced as
 *                 ncclHalf / ncclBfloat16
 *   gather_sum    ncclAllReduce of the touched rows (the same sum, since
 *                 all ranks touch the same rows; not an all-gather)
 *   reduce/bcast  ncclReduce to / ncclBroadcast from the PS server rank,
 *                 inside ncclGroupStart/End
 *   stage_out     copy back, cudaStreamSynchronize (bucket end)
 * All on one CUDA stream. NCCL has no per-call algorithm argument: the
 * plan's NCCL_ALGO hint (or its job algorithm) is exported before the
 * communicator is created, by the first autosync_rt_prepare(); a job's
 * own NCCL_ALGO wins, and later plans cannot change it. Per-bucket
 * algorithms and PS local aggregation/replication are left to NCCL.
 * Device: local rank modulo the visible device count.
 *
 * libnccl and libcudart are dlopened when the backend is opened, not
 * linked: autosync-bench then runs the MPI backend on nodes without CUDA,
 * and a missing library is this backend's clean failure. The headers
 * still give every function's type (__typeof__), so a signature that
 * differs from the loaded library's is a compile error here.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "syncrt.h"

/* The functions used, by their own names, from the two libraries. */
struct api {
	void *cudart, *nccl;
	__typeof__(cudaGetDeviceCount) *cudaGetDeviceCount;
	__typeof__(cudaGetErrorString) *cudaGetErrorString;
	__typeof__(cudaSetDevice) *cudaSetDevice;
	__typeof__(cudaMalloc) *cudaMalloc;
	__typeof__(cudaFree) *cudaFree;
	__typeof__(cudaMemcpyAsync) *cudaMemcpyAsync;
	__typeof__(cudaStreamCreateWithFlags) *cudaStreamCreateWithFlags;
	__typeof__(cudaStreamSynchronize) *cudaStreamSynchronize;
	__typeof__(cudaStreamDestroy) *cudaStreamDestroy;
	__typeof__(ncclGetErrorString) *ncclGetErrorString;
	__typeof__(ncclGetUniqueId) *ncclGetUniqueId;
	__typeof__(ncclCommInitRank) *ncclCommInitRank;
	__typeof__(ncclCommDestroy) *ncclCommDestroy;
	__typeof__(ncclAllReduce) *ncclAllReduce;
	__typeof__(ncclReduce) *ncclReduce;
	__typeof__(ncclBroadcast) *ncclBroadcast;
	__typeof__(ncclGroupStart) *ncclGroupStart;
	__typeof__(ncclGroupEnd) *ncclGroupEnd;
};

#define SYM(lib, f)                              \
	{                                        \
#f, offsetof(struct api, f), lib \
	}
static const struct {
	const char *name;
	size_t off;
	int nccl; /* 0: from libcudart, 1: from libnccl */
} syms[] = {
    SYM(0, cudaGetDeviceCount),
    SYM(0, cudaGetErrorString),
    SYM(0, cudaSetDevice),
    SYM(0, cudaMalloc),
    SYM(0, cudaFree),
    SYM(0, cudaMemcpyAsync),
    SYM(0, cudaStreamCreateWithFlags),
    SYM(0, cudaStreamSynchronize),
    SYM(0, cudaStreamDestroy),
    SYM(1, ncclGetErrorString),
    SYM(1, ncclGetUniqueId),
    SYM(1, ncclCommInitRank),
    SYM(1, ncclCommDestroy),
    SYM(1, ncclAllReduce),
    SYM(1, ncclReduce),
    SYM(1, ncclBroadcast),
    SYM(1, ncclGroupStart),
    SYM(1, ncclGroupEnd),
};

static void api_close(struct api *a)
{
	if (a->nccl)
		dlclose(a->nccl);
	if (a->cudart)
		dlclose(a->cudart);
	memset(a, 0, sizeof(*a));
}

/* The libraries of the major versions this was built against (their
 * sonames), then the unversioned names of a development install. */
static void *open_lib(const char *base, int major, char *why, size_t len)
{
	char name[64];
	void *dl;

	snprintf(name, sizeof(name), "%s.so.%d", base, major);
	if ((dl = dlopen(name, RTLD_NOW | RTLD_LOCAL)))
		return dl;
	snprintf(why, len, "%s", dlerror());
	snprintf(name, sizeof(name), "%s.so", base);
	return dlopen(name, RTLD_NOW | RTLD_LOCAL);
}

static int api_open(struct api *a, autosync_error_t *errp)
{
	char why[256] = "";

	memset(a, 0, sizeof(*a));
	if (!(a->cudart = open_lib("libcudart", CUDART_VERSION / 1000, why,
				   sizeof(why))) ||
	    !(a->nccl = open_lib("libnccl", NCCL_MAJOR, why, sizeof(why)))) {
		api_close(a);
		errno = ENODEV;
		return autosync_errprintf(errp,
					  "syncrt: backend 'nccl': cannot "
					  "load the CUDA runtime and NCCL: %s",
					  why);
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p =
		    dlsym(syms[i].nccl ? a->nccl : a->cudart, syms[i].name);
		if (!p) {
			api_close(a);
			errno = ENOSYS;
			return autosync_errprintf(errp,
						  "syncrt: backend 'nccl': "
						  "%s is not in the loaded "
						  "library",
						  syms[i].name);
		}
		memcpy((char *)a + syms[i].off, &p, sizeof(p));
	}
	return 0;
}

struct nccl_be {
	struct api api;
	autosync_rt_t *rt;
	int dev;
	cudaStream_t stream;
	ncclComm_t comm; /* NULL until the first prepare */
	char *dbuf;	 /* device mirror of the staged region */
	size_t dcap;
	char *host; /* the staged host region */
	size_t bytes;
};

static int cuerr(const struct nccl_be *b, cudaError_t e, autosync_error_t *errp,
		 const char *what)
{
	if (e == cudaSuccess)
		return 0;
	errno = EIO;
	return autosync_errprintf(errp, "syncrt nccl: %s: %s", what,
				  b->api.cudaGetErrorString(e));
}

static int ncerr(const struct nccl_be *b, ncclResult_t r,
		 autosync_error_t *errp, const char *what)
{
	if (r == ncclSuccess)
		return 0;
	errno = EIO;
	return autosync_errprintf(errp, "syncrt nccl: %s: %s", what,
				  b->api.ncclGetErrorString(r));
}

static ncclDataType_t dtype(int elem)
{
	return elem == RT_F16	 ? ncclHalf
	       : elem == RT_BF16 ? ncclBfloat16
				 : ncclFloat32;
}

/* device address of host pointer 'p' in the staged region */
static void *dev(struct nccl_be *b, void *p, size_t n, int elem,
		 autosync_error_t *errp)
{
	char *c = p;
	size_t es = elem == RT_F32 ? 4 : 2;

	if (!b->comm) {
		errno = EINVAL;
		autosync_errprintf(errp, "syncrt nccl: no communicator (no "
					 "plan prepared)");
		return NULL;
	}
	if (c < b->host || (size_t)(c - b->host) + n * es > b->bytes) {
		errno = EINVAL;
		autosync_errprintf(errp, "syncrt nccl: buffer outside the "
					 "staged region");
		return NULL;
	}
	return b->dbuf + (c - b->host);
}

static int nb_prepare(void *ctx, const char *hint, autosync_error_t *errp)
{
	struct nccl_be *b = ctx;
	struct {
		ncclUniqueId id;
		int ok;
	} boot;
	MPI_Comm c = autosync_rt_comm(b->rt);

	if (b->comm)
		return 0;
	if (hint && *hint)
		setenv("NCCL_ALGO", hint, 0); /* the job's own value wins */
	/* rank 0 creates the id; everyone learns whether that worked */
	memset(&boot, 0, sizeof(boot));
	if (autosync_rt_rank(b->rt) == 0)
		boot.ok = ncerr(b, b->api.ncclGetUniqueId(&boot.id), errp,
				"ncclGetUniqueId") == 0;
	if (MPI_Bcast(&boot, (int)sizeof(boot), MPI_BYTE, 0, c) !=
	    MPI_SUCCESS) {
		errno = EIO;
		return autosync_errprintf(errp, "syncrt nccl: MPI_Bcast of "
						"the unique id failed");
	}
	if (!boot.ok) {
		errno = EIO;
		return autosync_rt_rank(b->rt) == 0
			   ? -1
			   : autosync_errprintf(errp, "syncrt nccl: rank 0 "
						      "could not create the "
						      "NCCL unique id");
	}
	if (cuerr(b, b->api.cudaSetDevice(b->dev), errp, "cudaSetDevice") < 0)
		return -1;
	if (ncerr(b,
		  b->api.ncclCommInitRank(&b->comm, autosync_rt_size(b->rt),
					  boot.id, autosync_rt_rank(b->rt)),
		  errp, "ncclCommInitRank") < 0) {
		b->comm = NULL;
		return -1;
	}
	return 0;
}

static int nb_stage_in(void *ctx, void *buf, size_t bytes,
		       autosync_error_t *errp)
{
	struct nccl_be *b = ctx;

	if (bytes > b->dcap) {
		void *d = NULL;
		if (b->dbuf)
			b->api.cudaFree(b->dbuf);
		b->dbuf = NULL;
		b->dcap = 0;
		if (cuerr(b, b->api.cudaMalloc(&d, bytes), errp, "cudaMalloc") <
		    0)
			return -1;
		b->dbuf = d;
		b->dcap = bytes;
	}
	b->host = buf;
	b->bytes = bytes;
	if (!bytes)
		return 0;
	return cuerr(b,
		     b->api.cudaMemcpyAsync(b->dbuf, buf, bytes,
					    cudaMemcpyHostToDevice, b->stream),
		     errp, "copy to device");
}

static int nb_stage_out(void *ctx, autosync_error_t *errp)
{
	struct nccl_be *b = ctx;
	int rv = 0;

	if (b->bytes)
		rv = cuerr(b,
			   b->api.cudaMemcpyAsync(b->host, b->dbuf, b->bytes,
						  cudaMemcpyDeviceToHost,
						  b->stream),
			   errp, "copy to host");
	if (cuerr(b, b->api.cudaStreamSynchronize(b->stream), rv ? NULL : errp,
		  "cudaStreamSynchronize") < 0)
		rv = -1;
	b->host = NULL;
	b->bytes = 0;
	return rv;
}

static int nb_allreduce(void *ctx, void *buf, size_t n, int elem, int algo,
			autosync_error_t *errp)
{
	struct nccl_be *b = ctx;
	void *d;

	(void)algo; /* NCCL_ALGO, see above */
	if (!n)
		return 0;
	if (!(d = dev(b, buf, n, elem, errp)))
		return -1;
	return ncerr(b,
		     b->api.ncclAllReduce(d, d, n, dtype(elem), ncclSum,
					  b->comm, b->stream),
		     errp, "ncclAllReduce");
}

static int nb_gather_sum(void *ctx, float *buf, size_t n,
			 autosync_error_t *errp)
{
	return nb_allreduce(ctx, buf, n, RT_F32, AUTOSYNC_ALGO_AUTO, errp);
}

static int nb_reduce(void *ctx, void *buf, size_t n, int elem, int root,
		     autosync_error_t *errp)
{
	struct nccl_be *b = ctx;
	void *d;

	if (!n)
		return 0;
	if (!(d = dev(b, buf, n, elem, errp)))
		return -1;
	return ncerr(b,
		     b->api.ncclReduce(d, d, n, dtype(elem), ncclSum, root,
				       b->comm, b->stream),
		     errp, "ncclReduce");
}

static int nb_bcast(void *ctx, void *buf, size_t n, int elem, int root,
		    autosync_error_t *errp)
{
	struct nccl_be *b = ctx;
	void *d;

	if (!n)
		return 0;
	if (!(d = dev(b, buf, n, elem, errp)))
		return -1;
	return ncerr(b,
		     b->api.ncclBroadcast(d, d, n, dtype(elem), root, b->comm,
					  b->stream),
		     errp, "ncclBroadcast");
}

static int nb_group_start(void *ctx, autosync_error_t *errp)
{
	struct nccl_be *b = ctx;

	return ncerr(b, b->api.ncclGroupStart(), errp, "ncclGroupStart");
}

static int nb_group_end(void *ctx, autosync_error_t *errp)
{
	struct nccl_be *b = ctx;

	return ncerr(b, b->api.ncclGroupEnd(), errp, "ncclGroupEnd");
}

static void nb_destroy(void *ctx)
{
	struct nccl_be *b = ctx;

	if (!b)
		return;
	if (b->comm)
		b->api.ncclCommDestroy(b->comm);
	if (b->dbuf)
		b->api.cudaFree(b->dbuf);
	if (b->stream)
		b->api.cudaStreamDestroy(b->stream);
	api_close(&b->api);
	free(b);
}

static const struct autosync_rt_backend nccl_backend = {
    .name = "nccl",
    .prepare = nb_prepare,
    .stage_in = nb_stage_in,
    .stage_out = nb_stage_out,
    .allreduce = nb_allreduce,
    .gather_sum = nb_gather_sum,
    .reduce = nb_reduce,
    .bcast = nb_bcast,
    .group_start = nb_group_start,
    .group_end = nb_group_end,
    .destroy = nb_destroy,
};

/* This rank's CUDA devices, loading the libraries first; 0 with the
 * reason in 'errp' when there is none to use. */
static int local_devices(struct nccl_be *b, autosync_error_t *errp)
{
	cudaError_t e;
	int ndev = 0;

	if (!b) {
		errno = ENOMEM;
		autosync_errprintf(errp, "syncrt nccl: out of memory");
		return 0;
	}
	if (api_open(&b->api, errp) < 0)
		return 0;
	e = b->api.cudaGetDeviceCount(&ndev);
	errno = ENODEV;
	if (e != cudaSuccess)
		autosync_errprintf(errp,
				   "syncrt: backend 'nccl': no usable CUDA "
				   "device (cudaGetDeviceCount: %s)",
				   b->api.cudaGetErrorString(e));
	else if (ndev <= 0)
		autosync_errprintf(errp, "syncrt: backend 'nccl': no CUDA "
					 "device (cudaGetDeviceCount found 0)");
	return e == cudaSuccess && ndev > 0 ? ndev : 0;
}

int autosync_rt_nccl_open(autosync_rt_t *rt,
			  const struct autosync_rt_backend **ops, void **ctx,
			  autosync_error_t *errp)
{
	struct nccl_be *b;
	int ndev, mine, all = 0, saved;

	if (!rt || !ops || !ctx) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt nccl: invalid "
						"argument");
	}
	b = calloc(1, sizeof(*b));
	ndev = local_devices(b, errp);
	saved = errno;
	mine = ndev > 0;
	/* every rank must agree, or a later collective would hang */
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, autosync_rt_comm(rt));
	if (!all) {
		nb_destroy(b);
		if (!mine) {
			errno = saved;
			return -1;
		}
		errno = ENODEV;
		return autosync_errprintf(errp, "syncrt: backend 'nccl': some "
						"rank has no CUDA device");
	}
	b->rt = rt;
	b->dev = autosync_rt_local_rank(rt) % ndev;
	if (cuerr(b, b->api.cudaSetDevice(b->dev), errp, "cudaSetDevice") < 0 ||
	    cuerr(b,
		  b->api.cudaStreamCreateWithFlags(&b->stream,
						   cudaStreamNonBlocking),
		  errp, "cudaStreamCreate") < 0) {
		nb_destroy(b);
		return -1;
	}
	*ops = &nccl_backend;
	*ctx = b;
	return 0;
}
