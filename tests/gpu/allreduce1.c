/* allreduce1.c - one-rank NCCL all-reduces of a few sizes on GPU 0, for
 * tests/gpu/nccl-check.sh. Exits 0 and prints "allreduce1: ok" when every
 * result is right.
 * cc -o allreduce1 allreduce1.c -I$CUDA/include -L$CUDA/lib64 -lnccl -lcudart */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "allreduce1: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)
#define NCCL(x) do { ncclResult_t r_ = (x); if (r_ != ncclSuccess) { \
	fprintf(stderr, "allreduce1: %s: %s\n", #x, ncclGetErrorString(r_)); return 1; } } while (0)

int main(void)
{
	static const size_t counts[] = { 1024, 262144, 4194304, 16777216 };
	const size_t max = 16777216;
	int dev = 0, iters = 5;
	ncclComm_t comm;
	cudaStream_t s;
	float *buf, *host;

	CUDA(cudaSetDevice(0));
	CUDA(cudaStreamCreate(&s));
	CUDA(cudaMalloc((void **) &buf, max * sizeof(float)));
	if (!(host = malloc(max * sizeof(float))))
		return 1;
	NCCL(ncclCommInitAll(&comm, 1, &dev));
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		for (size_t k = 0; k < counts[i]; k++)
			host[k] = 1.5f;
		CUDA(cudaMemcpy(buf, host, counts[i] * sizeof(float), cudaMemcpyHostToDevice));
		for (int it = 0; it < iters; it++)
			NCCL(ncclAllReduce(buf, buf, counts[i], ncclFloat, ncclSum, comm, s));
		CUDA(cudaStreamSynchronize(s));
		CUDA(cudaMemcpy(host, buf, counts[i] * sizeof(float), cudaMemcpyDeviceToHost));
		if (host[0] != 1.5f || host[counts[i] - 1] != 1.5f) {
			fprintf(stderr, "allreduce1: wrong sum %g for %zu floats\n",
				(double) host[0], counts[i]);
			return 1;
		}
		printf("allreduce1: %zu bytes x %d ok\n", counts[i] * sizeof(float), iters);
	}
	NCCL(ncclCommFinalize(comm));
	NCCL(ncclCommDestroy(comm));
	CUDA(cudaFree(buf));
	free(host);
	printf("allreduce1: ok\n");
	return 0;
}
