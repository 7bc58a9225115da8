/* webhook-review.c - what one review costs inside autosync-webhook (a
 * benchmark, not a test): aswh_review() on the same AdmissionReview body N
 * times in one thread, no network, no TLS; prints microseconds per review.
 * Built by webhook-load.sh against the build's libmutate.
 * usage: webhook-review BODYFILE N */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mutate.h"

int main(int argc, char **argv)
{
	static char body[1 << 20];
	struct aswh_config c;
	struct timespec t0, t1;
	FILE *fp = argc == 3 ? fopen(argv[1], "rb") : NULL;
	size_t len;
	long n = argc == 3 ? atol(argv[2]) : 0;

	if (!fp || n < 1) {
		fprintf(stderr, "usage: webhook-review BODYFILE N\n");
		return 2;
	}
	len = fread(body, 1, sizeof(body), fp);
	fclose(fp);
	aswh_config_default(&c);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		char *resp, *log;
		aswh_review(&c, body, len, &resp, &log);
		free(resp);
		free(log);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("review_us %.2f (%ld reviews of %zu bytes)\n",
	       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
		(double)(t1.tv_nsec - t0.tv_nsec)) /
		   (double)n / 1e3,
	       n, len);
	return 0;
}
