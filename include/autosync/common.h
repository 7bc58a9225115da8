/*
 * autosync/common.h - types shared by every autosync library.
 *
 * Conventions (see docs/ and the house style):
 *  - functions return 0 / -1 (or a pointer / NULL) and set errno;
 *  - an optional autosync_error_t * receives a human-readable message;
 *  - the libraries never print: they log through an optional callback.
 */
#ifndef AUTOSYNC_COMMON_H
#define AUTOSYNC_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AUTOSYNC_ERROR_LEN 512

/* Caller-owned message buffer; text[0] == '\0' means "no message". */
typedef struct autosync_error {
	char text[AUTOSYNC_ERROR_LEN];
} autosync_error_t;

/* Log levels for autosync_log_f, most severe first. */
enum autosync_log_level {
	AUTOSYNC_LOG_ERROR = 0,
	AUTOSYNC_LOG_WARNING = 1,
	AUTOSYNC_LOG_INFO = 2,
	AUTOSYNC_LOG_DEBUG = 3,
};

/* A variable: name and value, borrowed from whoever returns it. */
typedef struct autosync_var {
	const char *name;
	const char *value;
} autosync_var_t;

/* 'msg' is borrowed for the duration of the call only. */
typedef void (*autosync_log_f)(int level, const char *msg, void *arg);

/*
 * Format a message into 'errp' (which may be NULL). Always returns -1 so
 * that callers can write `return autosync_errprintf(errp, ...)`; errno is
 * preserved.
 */
int autosync_errprintf(autosync_error_t *errp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The library's version string, e.g. "0.1.0"; static storage. */
const char *autosync_version(void);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_COMMON_H */
