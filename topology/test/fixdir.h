/* fixdir.h - the real machines' topology files for the topology tests:
 * $AUTOSYNC_FIXTURES (set by make check), else tests/fixtures/topologies
 * of $AUTOSYNC_SRCDIR. */
#ifndef AUTOSYNC_TEST_FIXDIR_H
#define AUTOSYNC_TEST_FIXDIR_H

#include <stdio.h>
#include <stdlib.h>

/* 0 and the directory in 'out', or -1 when not found */
static int find_fixdir(char *out, size_t len)
{
	const char *fx = getenv("AUTOSYNC_FIXTURES");
	const char *src = getenv("AUTOSYNC_SRCDIR");
	char probe[1200];
	FILE *fp;

	if (fx && *fx)
		snprintf(out, len, "%s", fx);
	else if ((size_t)snprintf(out, len, "%s/tests/fixtures/topologies",
				  src && *src ? src : ".") >= len)
		return -1;
	snprintf(probe, sizeof(probe), "%.1000s/SOURCES.md", out);
	if (!(fp = fopen(probe, "r")))
		return -1;
	fclose(fp);
	return 0;
}

#endif
