/* siteconf.c - libFuzzer target for the site config reader (an admin's
 * file, read in slurmd, slurmstepd, srun and sbatch). The checker and the
 * loader must agree: a file with no problem loads, one with problems does
 * not. Built by tests/fuzz/run.sh. */
#define _GNU_SOURCE
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "autosync/siteconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	autosync_error_t err;
	autosync_siteconf_t *s;
	char path[64];
	int fd = memfd_create("siteconf", MFD_CLOEXEC), n;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = autosync_siteconf_check(path, NULL, NULL, &err);
	s = autosync_siteconf_load(path, &err);
	if ((n == 0) != (s != NULL))
		abort();
	autosync_siteconf_destroy(s);
	close(fd);
	return 0;
}
