/* cpucost.c - timing helpers, and the CPU constants of the runtime's
 * compression measured where it runs. In the lab the casts and the 16-bit
 * additions run on host cores shared by every rank, where the cost
 * model's defaults describe a GPU's. */

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "syncrt.h"

double autosync_rt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double autosync_rt_median(const double *v, size_t n)
{
	double *c, m;
	if (!n || !(c = malloc(n * sizeof(double))))
		return 0;
	memcpy(c, v, n * sizeof(double));
	qsort(c, n, sizeof(double), cmp_d);
	m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
	free(c);
	return m;
}

/* values every 16-bit format holds exactly, so sums stay exact */
static void fill(float *a, size_t n, int rank)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (float)(int)((i * 7 + (size_t)rank) % 64);
}

/* one phase on every rank at once: the slowest rank's time */
static int phase(autosync_rt_t *rt, float *a, uint16_t *h, size_t n, int what,
		 double *t, autosync_error_t *errp)
{
	MPI_Comm comm = autosync_rt_comm(rt);
	double t0, dt;
	int rv = 0;

	fill(a, n, autosync_rt_rank(rt));
	MPI_Barrier(comm);
	t0 = autosync_rt_now();
	if (what == 0) {
		for (size_t i = 0; i < n; i++)
			h[i] = autosync_rt_f32_to_f16(a[i]);
		for (size_t i = 0; i < n; i++)
			a[i] = autosync_rt_f16_to_f32(h[i]);
	} else
		rv = autosync_rt_allreduce(rt, a, n, AUTOSYNC_ALGO_RING,
					   what == 1 ? AUTOSYNC_COMPRESS_NONE
						     : AUTOSYNC_COMPRESS_FP16,
					   errp);
	dt = autosync_rt_now() - t0;
	/* every rank takes part in the reduction of the times, so a rank
	 * that failed does not leave the others waiting */
	{
		double in[2] = {dt, rv ? 1.0 : 0.0}, out[2];
		MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_MAX, comm);
		*t = out[0];
		if (out[1] > 0 && !rv) {
			errno = EIO;
			rv = autosync_errprintf(errp, "syncrt: measure: "
						      "another rank failed");
		}
	}
	return rv;
}

int autosync_rt_measure_cpu(autosync_rt_t *rt, size_t n, int reps,
			    double *cast_bw, double *gamma_half,
			    autosync_error_t *errp)
{
	float *a;
	uint16_t *h;
	double *t;
	int rv = 0, p;

	if (!rt || n == 0 || reps < 1 || reps > 100 || !cast_bw ||
	    !gamma_half || n > ((size_t)1 << 28)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt: measure: invalid "
						"argument");
	}
	a = malloc(n * sizeof(*a));
	h = malloc(n * sizeof(*h));
	t = malloc(3 * (size_t)reps * sizeof(*t));
	if (!a || !h || !t) {
		free(a);
		free(h);
		free(t);
		errno = ENOMEM;
		return autosync_errprintf(errp, "syncrt: out of memory");
	}
	/* one warm-up round, then 'reps' rounds of the three phases
	 * interleaved, so that drift weighs on each alike */
	for (int r = -1; r < reps && !rv; r++)
		for (int w = 0; w < 3 && !rv; w++) {
			double dt = 0;
			rv = phase(rt, a, h, n, w, &dt, errp);
			if (r >= 0)
				t[w * reps + r] = dt;
		}
	if (!rv) {
		size_t k = (size_t)reps;
		double tc = autosync_rt_median(t, k),
		       t32 = autosync_rt_median(t + k, k),
		       t16 = autosync_rt_median(t + 2 * k, k), extra;
		p = autosync_rt_size(rt);
		*cast_bw = tc > 0 ? 2.0 * 4.0 * (double)n / tc : 1e15;
		extra = t16 - tc - t32 / 2;
		*gamma_half =
		    p > 1 && extra > 0
			? extra / ((double)(p - 1) / p * 2.0 * (double)n)
			: 0;
	}
	free(a);
	free(h);
	free(t);
	return rv;
}
