/* readfile.c - see readfile.h */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readfile.h"

int asi_open_file(int dirfd, const char *path, size_t max, int flags,
		  uid_t owner, char *err, size_t errlen)
{
	struct stat st;
	int fd, saved;

	fd = openat(dirfd, path,
		    O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
			(flags & ASI_READ_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0) {
		saved = errno;
		if (saved == ELOOP && (flags & ASI_READ_NOFOLLOW))
			snprintf(err, errlen,
				 "%s: is a symbolic link (give "
				 "the file itself)",
				 path);
		else
			snprintf(err, errlen, "%s: %s%s", path,
				 flags & ASI_READ_OPEN_PREFIX ? "cannot open: "
							      : "",
				 strerror(saved));
		errno = saved;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		errno = EINVAL;
		goto fail;
	}
	if (owner != (uid_t)-1 && (st.st_uid != owner || st.st_nlink != 1)) {
		snprintf(err, errlen, "%s: not owned by uid %u alone", path,
			 (unsigned)owner);
		errno = EPERM;
		goto fail;
	}
	if (max && (unsigned long long)st.st_size > max) {
		snprintf(err, errlen, "%s: too large (%lld bytes, limit %zu)",
			 path, (long long)st.st_size, max);
		errno = EFBIG;
		goto fail;
	}
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

int asi_read_file(const char *path, size_t max, int flags, uid_t owner,
		  char **bufp, size_t *lenp, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, cap;
	struct stat st;
	int fd, saved;

	if ((fd = asi_open_file(AT_FDCWD, path, max, flags, owner, err,
				errlen)) < 0)
		return -1;
	/* as much as the file holds (and one byte to see it grow), not the
	 * limit: a generous limit must not cost memory on every read */
	cap = fstat(fd, &st) == 0 && (size_t)st.st_size < max
		  ? (size_t)st.st_size
		  : max;
	if (!(buf = malloc(cap + 2))) {
		snprintf(err, errlen, "%s: out of memory", path);
		errno = ENOMEM;
		goto fail;
	}
	for (;;) {
		ssize_t r;
		if (len == cap + 1 && cap < max) {
			/* it grew while we read it: take up to the limit */
			char *nb;
			cap = max - cap > cap ? 2 * cap + 4096 : max;
			if (cap > max)
				cap = max;
			if (!(nb = realloc(buf, cap + 2))) {
				snprintf(err, errlen, "%s: out of memory",
					 path);
				errno = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap + 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: read: %s", path,
				 strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max) { /* grew while we read it */
			snprintf(err, errlen, "%s: too large (limit %zu)", path,
				 max);
			errno = EFBIG;
			goto fail;
		}
	}
	buf[len] = '\0';
	close(fd);
	*bufp = buf;
	*lenp = len;
	return 0;
fail:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return -1;
}
