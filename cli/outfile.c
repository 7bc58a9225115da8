/* outfile.c - output files that a failed command leaves as they were:
 * written beside the name and renamed over it on success (cli.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_outfile_open(struct cli_outfile *o, const char *path)
{
	struct stat st;
	const char *name = path;

	o->path = path;
	o->tmp[0] = 0;
	/* Only a regular file is replaced through rename(2): renaming over
	 * /dev/null as root would make it a regular file. */
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) {
		if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%ld", path,
			     (long)getpid()) >= (int)sizeof(o->tmp)) {
			o->tmp[0] = 0;
			errno = ENAMETOOLONG;
			return -1;
		}
		name = o->tmp;
	}
	return (o->fp = fopen(name, "w")) ? 0 : -1;
}

int cli_outfile_close(struct cli_outfile *o, int keep)
{
	int rv = fclose(o->fp) == 0 ? 0 : -1, e;

	o->fp = NULL;
	if (!o->tmp[0])
		return keep ? rv : 0;
	if (rv == 0 && keep && rename(o->tmp, o->path) == 0)
		return 0;
	e = errno;
	unlink(o->tmp);
	errno = e;
	return keep ? -1 : 0;
}
