/*
 * tap.h - a small Test Anything Protocol producer for autosync's unit tests,
 * read by automake's tap-driver.sh. Output goes to stdout, diagnostics to
 * stderr prefixed with '#'.
 */
#ifndef AUTOSYNC_TAP_H
#define AUTOSYNC_TAP_H

#define NO_PLAN (-1)

void plan(int n);
int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tap_is(const char *got, const char *want, const char *file, int line,
	   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int tap_near(double got, double want, double tol, const char *file, int line,
	     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void skip(int n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bail_out(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));
/* Print the plan if none was given and return the process exit status. */
int done_testing(void);

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is(got, want, ...) \
	tap_is((got), (want), __FILE__, __LINE__, __VA_ARGS__)
/* |got - want| <= tol (absolute) */
#define near(got, want, tol, ...) \
	tap_near((got), (want), (tol), __FILE__, __LINE__, __VA_ARGS__)

#endif
