/* Unit tests for the shared error buffer. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "autosync/common.h"
#include "tap.h"

int main(void)
{
	autosync_error_t err = {.text = ""};
	char big[2 * AUTOSYNC_ERROR_LEN];

	plan(NO_PLAN);

	errno = ENOENT;
	ok(autosync_errprintf(&err, "%s: line %d: bad value '%s'", "a.yaml", 3,
			      "x") == -1,
	   "errprintf returns -1");
	ok(errno == ENOENT, "errprintf preserves errno");
	is(err.text, "a.yaml: line 3: bad value 'x'", "message formatted");

	ok(autosync_errprintf(NULL, "ignored %d", 1) == -1,
	   "NULL buffer is fine");

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	autosync_errprintf(&err, "%s", big);
	ok(strlen(err.text) == AUTOSYNC_ERROR_LEN - 1,
	   "long message truncated");

	is(autosync_version(), PACKAGE_VERSION, "version string");
	return done_testing();
}
