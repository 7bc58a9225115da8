/*
 * jobfs.h - the plugin's file handling in slurmstepd, where part of the
 * work runs as root on behalf of a user: bounded reads that never follow a
 * symbolic link at the last component, a job-private directory that the
 * user owns, atomic writes into it. Pure POSIX, unit-tested.
 */
#ifndef AUTOSYNC_PLUGIN_JOBFS_H
#define AUTOSYNC_PLUGIN_JOBFS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read the regular file 'path' with the caller's effective credentials, at
 * most 'max' bytes; a symbolic link as the last component is refused
 * (ELOOP), as is a FIFO or device. If 'owner' is not (uid_t) -1 the file
 * must also be owned by it and have a single link (so that a hard link to
 * someone else's file is refused when reading as root). '*buf' is
 * malloc'ed and NUL-terminated; the caller frees it.
 */
int as_read_file(const char *path, size_t max, uid_t owner, char **buf,
		 size_t *len, char *err, size_t errlen);

/*
 * Make 'base'/'name' a directory owned by uid:gid, mode 0700 (creating it,
 * or accepting an existing one only if it is exactly that and no symbolic
 * link). 'base' must be an absolute path to an existing directory. The
 * full path is written to 'out'.
 */
int as_jobdir_make(const char *base, const char *name, uid_t uid, gid_t gid,
		   char *out, size_t outlen, char *err, size_t errlen);

/* Write 'len' bytes to dir/name through a temporary file and rename(2),
 * mode 0644, never through a symbolic link. A full disk is reported as
 * such. */
int as_write_in(const char *dir, const char *name, const void *data,
		size_t len, char *err, size_t errlen);

/* Remove the non-directory entries of 'dir' and the directory itself,
 * without following any symbolic link. Best effort. */
void as_jobdir_remove(const char *dir);

#endif
