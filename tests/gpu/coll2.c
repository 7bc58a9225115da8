/* coll2.c - one rank of a two-rank NCCL job for tests/gpu/nccl-check.sh:
 * all-reduces of several sizes, then one all-gather, reduce-scatter and
 * broadcast, each checked. NCCL refuses two ranks on one GPU of one host,
 * so the script gives each rank its own NCCL_HOSTID (two "nodes" joined by
 * NCCL's socket transport over loopback): then NCCL asks the tuner about
 * every collective, as on a real two-node job.
 *   coll2 RANK IDFILE   (rank 0 writes the unique id there, rank 1 reads it)
 * Prints "coll2: rank R ok" and exits 0 when every result is right.
 * cc -o coll2 coll2.c -I$CUDA/include -L$CUDA/lib64 -lnccl -lcudart */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CUDA(x)                                                \
	do {                                                   \
		cudaError_t e_ = (x);                          \
		if (e_ != cudaSuccess) {                       \
			fprintf(stderr, "coll2: %s: %s\n", #x, \
				cudaGetErrorString(e_));       \
			return 1;                              \
		}                                              \
	} while (0)
#define NCCL(x)                                                \
	do {                                                   \
		ncclResult_t r_ = (x);                         \
		if (r_ != ncclSuccess) {                       \
			fprintf(stderr, "coll2: %s: %s\n", #x, \
				ncclGetErrorString(r_));       \
			return 1;                              \
		}                                              \
	} while (0)

#define NRANKS 2
#define MAXN (16u << 20) /* floats */

static int share_id(int rank, const char *path, ncclUniqueId *id)
{
	char tmp[4096];
	FILE *fp;

	if (rank == 0) {
		if (ncclGetUniqueId(id) != ncclSuccess)
			return -1;
		snprintf(tmp, sizeof(tmp), "%s.tmp", path);
		if (!(fp = fopen(tmp, "wb")) ||
		    fwrite(id, sizeof(*id), 1, fp) != 1 || fclose(fp) != 0 ||
		    rename(tmp, path) != 0)
			return -1;
		return 0;
	}
	for (int i = 0; i < 600; i++) { /* 60 s */
		if ((fp = fopen(path, "rb"))) {
			size_t got = fread(id, sizeof(*id), 1, fp);
			fclose(fp);
			if (got == 1)
				return 0;
		}
		usleep(100000);
	}
	return -1;
}

/* every element of dev[0..n) equal to want */
static int check(const float *dev, float *host, size_t n, float want,
		 const char *what)
{
	if (cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost) !=
	    cudaSuccess)
		return -1;
	for (size_t k = 0; k < n; k++)
		if (host[k] != want) {
			fprintf(stderr,
				"coll2: %s: element %zu is %g, want %g\n", what,
				k, (double)host[k], (double)want);
			return -1;
		}
	return 0;
}

static void fill(float *host, size_t n, float v)
{
	for (size_t k = 0; k < n; k++)
		host[k] = v;
}

int main(int argc, char **argv)
{
	static const size_t counts[] = {1024, 65536, 262144, 4194304, 16777216};
	int rank, iters = 5;
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	float *buf, *out, *host;

	if (argc != 3 || (rank = atoi(argv[1])) < 0 || rank >= NRANKS) {
		fprintf(stderr, "usage: coll2 RANK IDFILE\n");
		return 2;
	}
	if (share_id(rank, argv[2], &id) < 0) {
		fprintf(
		    stderr,
		    "coll2: rank %d: cannot share the NCCL unique id via %s\n",
		    rank, argv[2]);
		return 1;
	}
	CUDA(cudaSetDevice(0));
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc((void **)&buf, MAXN * sizeof(float)));
	CUDA(cudaMalloc((void **)&out, NRANKS * (size_t)MAXN * sizeof(float)));
	if (!(host = malloc(NRANKS * (size_t)MAXN * sizeof(float))))
		return 1;
	NCCL(ncclCommInitRank(&comm, NRANKS, id, rank));

	/* all-reduce: rank r contributes r + 1, the sum is 3 */
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		size_t n = counts[i];
		for (int it = 0; it < iters; it++) {
			fill(host, n, (float)(rank + 1));
			CUDA(cudaMemcpy(buf, host, n * sizeof(float),
					cudaMemcpyHostToDevice));
			NCCL(ncclAllReduce(buf, buf, n, ncclFloat, ncclSum,
					   comm, s));
			CUDA(cudaStreamSynchronize(s));
		}
		if (check(buf, host, n, 3.0f, "all-reduce") < 0)
			return 1;
		printf("coll2: rank %d: all-reduce %zu bytes x %d ok\n", rank,
		       n * sizeof(float), iters);
	}
	/* all-gather of 1 MiB per rank: rank r's block holds r + 1 */
	{
		size_t n = 262144;
		fill(host, n, (float)(rank + 1));
		CUDA(cudaMemcpy(buf, host, n * sizeof(float),
				cudaMemcpyHostToDevice));
		NCCL(ncclAllGather(buf, out, n, ncclFloat, comm, s));
		CUDA(cudaStreamSynchronize(s));
		for (int r = 0; r < NRANKS; r++)
			if (check(out + (size_t)r * n, host, n, (float)(r + 1),
				  "all-gather") < 0)
				return 1;
		/* reduce-scatter of 2 x 1 MiB: each rank keeps the sum of its
		 * block */
		fill(host, NRANKS * n, (float)(rank + 1));
		CUDA(cudaMemcpy(out, host, NRANKS * n * sizeof(float),
				cudaMemcpyHostToDevice));
		NCCL(ncclReduceScatter(out, buf, n, ncclFloat, ncclSum, comm,
				       s));
		CUDA(cudaStreamSynchronize(s));
		if (check(buf, host, n, 3.0f, "reduce-scatter") < 0)
			return 1;
		/* broadcast of 4 MiB from rank 1 */
		n = 1048576;
		fill(host, n, rank == 1 ? 7.0f : 0.0f);
		CUDA(cudaMemcpy(buf, host, n * sizeof(float),
				cudaMemcpyHostToDevice));
		NCCL(ncclBroadcast(buf, buf, n, ncclFloat, 1, comm, s));
		CUDA(cudaStreamSynchronize(s));
		if (check(buf, host, n, 7.0f, "broadcast") < 0)
			return 1;
		printf("coll2: rank %d: all-gather, reduce-scatter, broadcast "
		       "ok\n",
		       rank);
	}
	NCCL(ncclCommFinalize(comm));
	NCCL(ncclCommDestroy(comm));
	CUDA(cudaFree(buf));
	CUDA(cudaFree(out));
	free(host);
	printf("coll2: rank %d ok\n", rank);
	return 0;
}
