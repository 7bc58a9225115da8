/* jobfs.c - job directories and the files written into them, where part
 * of the work runs as root on behalf of a user: mkdirat + openat with
 * O_NOFOLLOW, owner and mode checks, O_EXCL temporary files, removal
 * through a directory handle. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/job.h"
#include "internal.h"

int autosync_jobdir_create(const char *base, const char *name, uid_t uid,
			   gid_t gid, char *out, size_t outlen,
			   autosync_error_t *errp)
{
	struct stat st;
	int bfd = -1, dfd = -1, rv = -1, saved, created = 0;

	if (!base || !name || !out || base[0] != '/' || !name[0] ||
	    strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		errno = EINVAL;
		return autosync_errprintf(errp, "invalid job directory %s/%s",
					  base ? base : "?", name ? name : "?");
	}
	if ((size_t) snprintf(out, outlen, "%s/%s", base, name) >= outlen) {
		errno = ENAMETOOLONG;
		return autosync_errprintf(errp, "job directory path too long");
	}
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0) {
		autosync_errprintf(errp, "%s: %s", base, strerror(errno));
		goto out;
	}
	if (mkdirat(bfd, name, 0700) == 0)
		created = 1;
	else if (errno != EEXIST) {
		autosync_errprintf(errp, "%s: cannot create: %s", out,
				   strerror(errno));
		goto out;
	}
	/* Whether we made it or it was there, what we hand on must be a real
	 * directory (not a link someone planted) that only the user owns. */
	dfd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		autosync_errprintf(errp, "%s: %s", out,
				   errno == ELOOP || errno == ENOTDIR
					   ? "exists and is not a directory"
					   : strerror(errno));
		goto out;
	}
	if (fstat(dfd, &st) < 0) {
		autosync_errprintf(errp, "%s: %s", out, strerror(errno));
		goto out;
	}
	if (created && st.st_uid != uid) {
		/* made by root for the user: hand it over */
		if (fchown(dfd, uid, gid) < 0 || fstat(dfd, &st) < 0) {
			autosync_errprintf(errp, "%s: chown: %s", out,
					   strerror(errno));
			goto out;
		}
	}
	if (st.st_uid != uid || (st.st_mode & 07777) != 0700) {
		errno = EPERM;
		autosync_errprintf(errp, "%s: exists with owner %u mode %04o "
				   "(expected %u, 0700)", out,
				   (unsigned) st.st_uid,
				   (unsigned) (st.st_mode & 07777),
				   (unsigned) uid);
		goto out;
	}
	rv = 0;
out:
	saved = errno;
	if (dfd >= 0)
		close(dfd);
	if (bfd >= 0)
		close(bfd);
	errno = saved;
	return rv;
}

int job_write_in(const char *dir, const char *name, const void *data,
		 size_t len, autosync_error_t *errp)
{
	char tmp[NAME_MAX + 1];
	int dfd, fd = -1, rv = -1, saved;
	size_t off = 0;

	/* unique per writer: two processes may write into one directory */
	if ((size_t) snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name,
			      (long) getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return autosync_errprintf(errp, "%s: name too long", name);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return autosync_errprintf(errp, "%s: %s", dir, strerror(errno));
	(void) unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0) {
		autosync_errprintf(errp, "%s/%s: %s", dir, tmp, strerror(errno));
		goto out;
	}
	while (off < len) {
		ssize_t w = write(fd, (const char *) data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = ENOSPC;
			autosync_errprintf(errp, "%s/%s: %s", dir, name,
					   errno == ENOSPC || errno == EDQUOT
						   ? "disk full"
						   : strerror(errno));
			goto out;
		}
		off += (size_t) w;
	}
	if (fsync(fd) < 0 && errno != EINVAL) {
		autosync_errprintf(errp, "%s/%s: %s", dir, name,
				   errno == ENOSPC ? "disk full"
						   : strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		autosync_errprintf(errp, "%s/%s: %s", dir, name,
				   strerror(errno));
		goto out;
	}
	fd = -1;
	if (renameat(dfd, tmp, dfd, name) < 0) {
		autosync_errprintf(errp, "%s/%s: %s", dir, name,
				   strerror(errno));
		goto out;
	}
	rv = 0;
out:
	saved = errno;
	if (fd >= 0)
		close(fd);
	if (rv < 0)
		(void) unlinkat(dfd, tmp, 0);
	close(dfd);
	errno = saved;
	return rv;
}

void autosync_jobdir_remove(const char *dir)
{
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		      : -1;
	DIR *d;
	struct dirent *e;

	if (dfd < 0)
		return;
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISDIR(st.st_mode))
			(void) unlinkat(dfd, e->d_name, 0); /* removes links, not targets */
	}
	closedir(d);
	(void) rmdir(dir);
}
