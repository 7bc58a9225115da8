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
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "autosync/job.h"
#include "internal.h"

/* A name nobody can guess: 'name' and 8 random letters and digits. */
static int random_name(const char *name, char *out, size_t len)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[8];
	char sfx[9];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	for (size_t i = 0; i < sizeof(r); i++)
		sfx[i] = abc[r[i] % (sizeof(abc) - 1)];
	sfx[8] = '\0';
	return (size_t)snprintf(out, len, "%s.%s", name, sfx) < len ? 0 : -1;
}

/* 'base' may hold job directories: owned by root or the user; when others
 * may write to it (a shared /tmp), *shared is set. */
static int check_base(int bfd, const char *base, uid_t uid, int *shared,
		      autosync_error_t *errp)
{
	struct stat st;

	if (fstat(bfd, &st) < 0)
		return autosync_errprintf(errp, "%s: %s", base,
					  strerror(errno));
	if (st.st_uid != 0 && st.st_uid != uid) {
		errno = EPERM;
		return autosync_errprintf(errp,
					  "%s: owned by uid %u, not root "
					  "or the job's user",
					  base, (unsigned)st.st_uid);
	}
	*shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
	if (*shared && !(st.st_mode & S_ISVTX)) {
		errno = EPERM;
		return autosync_errprintf(errp,
					  "%s: others may write to it and "
					  "it is not sticky",
					  base);
	}
	return 0;
}

/* Create base/name (0700), or accept it when it is the user's exactly. */
static int make_or_accept(int bfd, const char *name, const char *full,
			  int must_create, uid_t uid, gid_t gid,
			  autosync_error_t *errp)
{
	struct stat st;
	int dfd, rv = -1, saved, created = 0;

	if (mkdirat(bfd, name, 0700) == 0)
		created = 1;
	else if (errno != EEXIST || must_create)
		return autosync_errprintf(errp, "%s: cannot create: %s", full,
					  strerror(errno));
	/* Whether we made it or it was there, what we hand on must be a real
	 * directory (not a link someone planted) that only the user owns. */
	dfd =
	    openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return autosync_errprintf(errp, "%s: %s", full,
					  errno == ELOOP || errno == ENOTDIR
					      ? "exists and is not a directory"
					      : strerror(errno));
	if (fstat(dfd, &st) < 0) {
		autosync_errprintf(errp, "%s: %s", full, strerror(errno));
		goto out;
	}
	if (created && st.st_uid != uid) {
		/* made by root for the user: hand it over */
		if (fchown(dfd, uid, gid) < 0 || fstat(dfd, &st) < 0) {
			autosync_errprintf(errp, "%s: chown: %s", full,
					   strerror(errno));
			goto out;
		}
	}
	if (st.st_uid != uid || (st.st_mode & 07777) != 0700) {
		errno = EPERM;
		autosync_errprintf(errp,
				   "%s: exists with owner %u mode %04o "
				   "(expected %u, 0700)",
				   full, (unsigned)st.st_uid,
				   (unsigned)(st.st_mode & 07777),
				   (unsigned)uid);
		goto out;
	}
	rv = 0;
out:
	saved = errno;
	close(dfd);
	errno = saved;
	return rv;
}

int autosync_jobdir_create(const char *base, const char *name, uid_t uid,
			   gid_t gid, char *out, size_t outlen,
			   autosync_error_t *errp)
{
	char rnd[NAME_MAX + 1];
	int bfd, shared = 0, rv = -1, saved;

	if (!base || !name || !out || base[0] != '/' || !name[0] ||
	    strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strlen(name) > NAME_MAX - 16) {
		errno = EINVAL;
		return autosync_errprintf(errp, "invalid job directory %s/%s",
					  base ? base : "?", name ? name : "?");
	}
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return autosync_errprintf(errp, "%s: %s", base,
					  strerror(errno));
	if (check_base(bfd, base, uid, &shared, errp) < 0)
		goto out;
	/* in a shared directory anyone could create a predictable name
	 * first: take one nobody can guess, and never an existing one */
	if (shared && random_name(name, rnd, sizeof(rnd)) < 0) {
		autosync_errprintf(errp, "%s: no random name: %s", base,
				   strerror(errno));
		goto out;
	}
	if ((size_t)snprintf(out, outlen, "%s/%s", base, shared ? rnd : name) >=
	    outlen) {
		errno = ENAMETOOLONG;
		autosync_errprintf(errp, "job directory path too long");
		goto out;
	}
	rv = make_or_accept(bfd, shared ? rnd : name, out, shared, uid, gid,
			    errp);
out:
	saved = errno;
	close(bfd);
	errno = saved;
	return rv;
}

int autosync_jobdir_base(const char *path, autosync_error_t *errp)
{
	struct stat st;

	if (!path || path[0] != '/') {
		errno = EINVAL;
		return autosync_errprintf(errp, "runtime directory must be an "
						"absolute path");
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return autosync_errprintf(errp, "%s: cannot create: %s", path,
					  strerror(errno));
	if (lstat(path, &st) < 0)
		return autosync_errprintf(errp, "%s: %s", path,
					  strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		errno = EPERM;
		return autosync_errprintf(errp,
					  "%s: not a directory that root "
					  "alone owns and writes",
					  path);
	}
	return 0;
}

int job_write_in(const char *dir, const char *name, const void *data,
		 size_t len, autosync_error_t *errp)
{
	char tmp[NAME_MAX + 1];
	int dfd, fd = -1, rv = -1, saved;
	size_t off = 0;

	/* unique per writer: two processes may write into one directory */
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name,
			     (long)getpid()) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return autosync_errprintf(errp, "%s: name too long", name);
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return autosync_errprintf(errp, "%s: %s", dir, strerror(errno));
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		autosync_errprintf(errp, "%s/%s: %s", dir, tmp,
				   strerror(errno));
		goto out;
	}
	while (off < len) {
		ssize_t w = write(fd, (const char *)data + off, len - off);
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
		off += (size_t)w;
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
		(void)unlinkat(dfd, tmp, 0);
	close(dfd);
	errno = saved;
	return rv;
}

int autosync_jobdir_write(const char *dir, const char *name, const void *data,
			  size_t len, autosync_error_t *errp)
{
	if (!dir || !name || (!data && len) || strchr(name, '/')) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "jobdir_write: invalid argument");
	}
	return job_write_in(dir, name, data, len, errp);
}

void autosync_jobdir_unlink(const char *dir, const char *name)
{
	int dfd;

	if (!dir || !name || strchr(name, '/'))
		return;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	(void)unlinkat(dfd, name, 0);
	close(dfd);
}

/* Entries one removal deletes at most: a user fills their own directory,
 * and root empties it at a step start or end (about 0.1 s for this many);
 * what is left goes at a later step start. */
#define REMOVE_MAX 10000

/* Subdirectories a user made in their job directory are emptied this deep
 * (one descriptor a level); a deeper tree is left where it is. */
#define REMOVE_DEPTH 8

/* the entries of the open directory 'dfd' (its handle is taken), at most
 * *budget of them, subdirectories emptied and removed down to
 * REMOVE_DEPTH, all through handles: nothing is followed, whoever owns
 * it. 0 when it is empty, -1 otherwise */
static int empty_dir(int dfd, unsigned *budget, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	int rv = 0;

	if (!d) {
		close(dfd);
		return -1;
	}
	while ((e = readdir(d))) {
		struct stat st;
		int sub;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!*budget) {
			rv = -1;
			break;
		}
		(*budget)--;
		if (!S_ISDIR(st.st_mode)) { /* a link goes, not its target */
			(void)unlinkat(dfd, e->d_name, 0);
			continue;
		}
		sub = depth < REMOVE_DEPTH ? openat(dfd, e->d_name,
						    O_RDONLY | O_DIRECTORY |
							O_NOFOLLOW | O_CLOEXEC)
					   : -1;
		if (sub < 0 || empty_dir(sub, budget, depth + 1) < 0 ||
		    unlinkat(dfd, e->d_name, AT_REMOVEDIR) < 0)
			rv = -1;
	}
	closedir(d);
	return rv;
}

int autosync_jobdir_hold(const char *dir, int inherit)
{
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				     (inherit ? 0 : O_CLOEXEC))
		     : -1;

	if (fd < 0) {
		if (!dir)
			errno = EINVAL;
		return -1;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void autosync_jobdir_release(int fd)
{
	if (fd < 0)
		return;
	(void)futimens(fd, NULL); /* its age counts from now */
	close(fd);
}

/* One candidate of prune: removed when no step holds it, it has not
 * changed for max_age and 'owner' owns it; 1 when removed. A directory
 * left partly emptied gets its times back, so that the next step start
 * goes on with it. */
static int prune_one(int bfd, const char *name, uid_t owner, long max_age,
		     time_t now, unsigned *budget)
{
	int dfd =
	    openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int rv = 0;

	if (dfd < 0)
		return 0;
	if (flock(dfd, LOCK_EX | LOCK_NB) < 0 || fstat(dfd, &st) < 0 ||
	    now - st.st_mtime <= max_age ||
	    (owner != (uid_t)-1 && st.st_uid != owner)) {
		close(dfd); /* held: its step runs */
		return 0;
	}
	{
		int keep = dup(dfd); /* the lock, while it is emptied */
		if (keep < 0) {
			close(dfd);
			return 0;
		}
		if (empty_dir(dfd, budget, 0) == 0)
			rv = unlinkat(bfd, name, AT_REMOVEDIR) == 0;
		else {
			struct timespec t[2] = {st.st_atim, st.st_mtim};
			(void)futimens(keep, t);
		}
		close(keep);
	}
	return rv;
}

unsigned autosync_jobdir_prune(const char *base, const char *prefix,
			       uid_t owner, long max_age, unsigned max_remove,
			       unsigned max_scan)
{
	int bfd =
	    base ? open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		 : -1;
	size_t plen = prefix ? strlen(prefix) : 0;
	time_t now = time(NULL);
	unsigned removed = 0, scanned = 0, budget = REMOVE_MAX;
	DIR *d;
	struct dirent *e;

	if (bfd < 0)
		return 0;
	if (!(d = fdopendir(bfd))) {
		close(bfd);
		return 0;
	}
	while (removed < max_remove && budget && scanned++ < max_scan &&
	       (e = readdir(d))) {
		/* 'prefix' and a digit: not "autosync-launch-..." */
		if (!prefix || strncmp(e->d_name, prefix, plen) ||
		    e->d_name[plen] < '0' || e->d_name[plen] > '9')
			continue;
		removed += (unsigned)prune_one(bfd, e->d_name, owner, max_age,
					       now, &budget);
	}
	closedir(d);
	return removed;
}

void autosync_jobdir_remove(const char *dir)
{
	int dfd =
	    dir ? open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		: -1;
	unsigned budget = REMOVE_MAX;

	if (dfd >= 0 && empty_dir(dfd, &budget, 0) == 0)
		(void)rmdir(dir);
}
