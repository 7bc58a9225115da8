/* error.c - error buffers shared by the autosync libraries. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "autosync/common.h"

int autosync_errprintf(autosync_error_t *errp, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (errp && fmt) {
		va_start(ap, fmt);
		/* truncation is acceptable: the message is advisory */
		(void)vsnprintf(errp->text, sizeof(errp->text), fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return -1;
}

const char *autosync_version(void)
{
	return PACKAGE_VERSION;
}
