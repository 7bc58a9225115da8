/*
 * readfile.h - the one bounded file reader of autosync (internal: not
 * installed, not exported from libautosync.so). Used for site configs (an
 * admin's file, links followed) and, by the SPANK plugin, for users' files
 * (never through a symbolic link, optionally only the user's own).
 */
#ifndef AUTOSYNC_READFILE_H
#define AUTOSYNC_READFILE_H

#include <stddef.h>
#include <sys/types.h>

enum {
	ASI_READ_NOFOLLOW = 1 << 0, /* refuse a symbolic link (ELOOP) */
	ASI_READ_OPEN_PREFIX =
	    1 << 1 /* "PATH: cannot open: why" on open errors */
};

/*
 * Read the regular file 'path', at most 'max' bytes, with the caller's
 * credentials; FIFOs and devices are refused without blocking. If 'owner'
 * is not (uid_t) -1 the file must be owned by it and have one link.
 * '*buf' is malloc'ed and NUL-terminated (the caller frees it). Returns 0,
 * or -1 with errno and a one-line message naming the path in 'err'.
 */
int asi_read_file(const char *path, size_t max, int flags, uid_t owner,
		  char **buf, size_t *len, char *err, size_t errlen);

/*
 * The same checks, for a reader that streams: open 'path' relative to the
 * directory 'dirfd' (AT_FDCWD for the working directory) and return the
 * descriptor of a regular file (of 'owner' alone unless (uid_t) -1, at
 * most 'max' bytes unless 0), or -1 with errno and a message in 'err'.
 */
int asi_open_file(int dirfd, const char *path, size_t max, int flags,
		  uid_t owner, char *err, size_t errlen);

#endif
