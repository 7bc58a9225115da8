/* tap.c - see tap.h */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int planned = NO_PLAN;
static int run, failed;

void plan(int n)
{
	planned = n;
	if (n >= 0)
		printf("1..%d\n", n);
	fflush(stdout);
}

static void vreport(int pass, const char *file, int line, const char *fmt,
		    va_list ap)
{
	run++;
	if (!pass)
		failed++;
	printf("%sok %d - ", pass ? "" : "not ", run);
	vprintf(fmt, ap);
	printf("\n");
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
}

int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	return pass;
}

int tap_is(const char *got, const char *want, const char *file, int line,
	   const char *fmt, ...)
{
	va_list ap;
	int pass;

	pass = (got && want) ? strcmp(got, want) == 0 : got == want;
	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#          got: '%s'\n#     expected: '%s'\n",
		       got ? got : "(null)", want ? want : "(null)");
	return pass;
}

int tap_near(double got, double want, double tol, const char *file, int line,
	     const char *fmt, ...)
{
	va_list ap;
	int pass = !isnan(got) && fabs(got - want) <= tol;

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf(
		    "#          got: %.9g\n#     expected: %.9g (+/- %.3g)\n",
		    got, want, tol);
	return pass;
}

void diag(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "# ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

void skip(int n, const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < n; i++) {
		run++;
		printf("ok %d # skip ", run);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}

void bail_out(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(255);
}

int done_testing(void)
{
	if (planned == NO_PLAN)
		printf("1..%d\n", run);
	else if (planned != run)
		printf("# planned %d tests but ran %d\n", planned, run);
	fflush(stdout);
	return (failed || (planned != NO_PLAN && planned != run)) ? 1 : 0;
}
