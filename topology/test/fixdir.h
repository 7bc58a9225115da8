/* fixdir.h - find ../shared/fixtures/topologies for the topology tests:
 * beside $AUTOSYNC_SRCDIR (a clone), or beside one of its parents (make
 * distcheck unpacks the tarball in a build directory inside the clone). */
#ifndef AUTOSYNC_TEST_FIXDIR_H
#define AUTOSYNC_TEST_FIXDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0 and the directory in 'out', or -1 when not found */
static int find_fixdir(char *out, size_t len)
{
	const char *src = getenv("AUTOSYNC_SRCDIR");
	char dir[901];

	snprintf(dir, sizeof(dir), "%s", src && *src ? src : ".");
	for (int up = 0; up < 8; up++) {
		char probe[1200];
		FILE *fp;
		char *slash;

		snprintf(probe, sizeof(probe),
			 "%.900s/../shared/fixtures/topologies/SOURCES.md",
			 dir);
		if ((fp = fopen(probe, "r"))) {
			fclose(fp);
			if ((size_t)snprintf(
				out, len,
				"%.900s/../shared/fixtures/topologies",
				dir) >= len)
				return -1;
			return 0;
		}
		if (!(slash = strrchr(dir, '/')) || slash == dir)
			break;
		*slash = '\0';
	}
	return -1;
}

#endif
