/* Unit tests for the bounded reader and the job directories. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "autosync/job.h"
#include "common/readfile.h"
#include "../internal.h"
#include "tap.h"

static char dir[] = "/tmp/autosync-jobfs-XXXXXX";

static void put(const char *name, const char *text)
{
	char p[512];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(fp = fopen(p, "w")))
		bail_out("cannot write %s", p);
	fputs(text, fp);
	fclose(fp);
}

static void test_read(void)
{
	char p[512], l[512], err[512], *buf = NULL;
	size_t len = 0;

	put("model.yaml", "name: x\n");
	snprintf(p, sizeof(p), "%s/model.yaml", dir);
	ok(asi_read_file(p, 1024, ASI_READ_NOFOLLOW, (uid_t)-1, &buf, &len, err,
			 sizeof(err)) == 0 &&
	       len == 8 && !strcmp(buf, "name: x\n"),
	   "reads a regular file");
	free(buf);
	buf = NULL;
	ok(asi_read_file(p, 4, ASI_READ_NOFOLLOW, (uid_t)-1, &buf, &len, err,
			 sizeof(err)) < 0 &&
	       errno == EFBIG,
	   "refuses a file over the limit: %s", err);
	snprintf(l, sizeof(l), "%s/link.yaml", dir);
	if (symlink("/etc/shadow", l) < 0)
		bail_out("symlink");
	ok(asi_read_file(l, 1 << 20, ASI_READ_NOFOLLOW, (uid_t)-1, &buf, &len,
			 err, sizeof(err)) < 0 &&
	       errno == ELOOP,
	   "refuses a symlink (to a root-only file)");
	{
		char want[600];
		snprintf(want, sizeof(want),
			 "%s: is a symbolic link (give the file itself)", l);
		is(err, want, "and says so");
	}
	snprintf(l, sizeof(l), "%s/fifo", dir);
	if (mkfifo(l, 0600) == 0)
		ok(asi_read_file(l, 1024, ASI_READ_NOFOLLOW, (uid_t)-1, &buf,
				 &len, err, sizeof(err)) < 0 &&
		       errno == EINVAL,
		   "refuses a FIFO without blocking: %s", err);
	ok(asi_read_file(dir, 1024, ASI_READ_NOFOLLOW, (uid_t)-1, &buf, &len,
			 err, sizeof(err)) < 0,
	   "refuses a directory");
	ok(asi_read_file("/nonexistent/x", 1024, ASI_READ_NOFOLLOW, (uid_t)-1,
			 &buf, &len, err, sizeof(err)) < 0 &&
	       errno == ENOENT &&
	       !strcmp(err, "/nonexistent/x: No such file or directory"),
	   "missing file: %s", err);
	ok(asi_read_file(p, 1024, ASI_READ_NOFOLLOW, getuid() + 1, &buf, &len,
			 err, sizeof(err)) < 0 &&
	       errno == EPERM,
	   "owner check: %s", err);
	snprintf(l, sizeof(l), "%s/hardlink.yaml", dir);
	if (link(p, l) == 0)
		ok(asi_read_file(p, 1024, ASI_READ_NOFOLLOW, getuid(), &buf,
				 &len, err, sizeof(err)) < 0 &&
		       errno == EPERM,
		   "owner check refuses a file with two links");
}

static void test_jobdir(void)
{
	char out[512], p[600];
	autosync_error_t e = {.text = ""};
	const char *err = e.text;
	struct stat st;
	uid_t me = geteuid();

	ok(autosync_jobdir_create(dir, "job.1", me, getegid(), out, sizeof(out),
				  &e) == 0,
	   "creates the job directory (%s)", err);
	ok(stat(out, &st) == 0 && S_ISDIR(st.st_mode) &&
	       (st.st_mode & 07777) == 0700 && st.st_uid == me,
	   "mode 0700, owned by the user");
	ok(autosync_jobdir_create(dir, "job.1", me, getegid(), out, sizeof(out),
				  &e) == 0,
	   "an existing good directory is accepted");
	snprintf(p, sizeof(p), "%s/planted", dir);
	if (symlink("/etc", p) < 0)
		bail_out("symlink");
	ok(autosync_jobdir_create(dir, "planted", me, getegid(), out,
				  sizeof(out), &e) < 0 &&
	       strstr(err, "not a directory"),
	   "a planted symlink is refused: %s", err);
	snprintf(p, sizeof(p), "%s/open", dir);
	mkdir(p, 0777);
	chmod(p, 0777);
	ok(autosync_jobdir_create(dir, "open", me, getegid(), out, sizeof(out),
				  &e) < 0 &&
	       errno == EPERM,
	   "a directory others can write is refused: %s", err);
	ok(autosync_jobdir_create(dir, "../x", me, getegid(), out, sizeof(out),
				  &e) < 0 &&
	       errno == EINVAL,
	   "a name with '/' is refused");
	if (me == 0) {
		ok(autosync_jobdir_create(dir, "foruser", 4242, 4242, out,
					  sizeof(out), &e) == 0 &&
		       stat(out, &st) == 0 && st.st_uid == 4242 &&
		       st.st_gid == 4242,
		   "root makes it for the user and hands it over");
		ok(autosync_jobdir_create(dir, "job.1", 4242, 4242, out,
					  sizeof(out), &e) < 0 &&
		       errno == EPERM,
		   "another user's directory is refused");
	} else {
		skip(2, "not root");
	}
}

static void test_write_remove(void)
{
	char out[512], err[512], p[600], *buf = NULL;
	autosync_error_t e = {.text = ""};
	size_t len;
	struct stat st;

	autosync_jobdir_create(dir, "job.2", geteuid(), getegid(), out,
			       sizeof(out), &e);
	ok(job_write_in(out, "plan.yaml", "a: 1\n", 5, &e) == 0,
	   "writes a file");
	ok(job_write_in(out, "plan.yaml", "a: 2\n", 5, &e) == 0, "replaces it");
	snprintf(p, sizeof(p), "%s/plan.yaml", out);
	ok(asi_read_file(p, 100, ASI_READ_NOFOLLOW, (uid_t)-1, &buf, &len, err,
			 sizeof(err)) == 0 &&
	       !strcmp(buf, "a: 2\n"),
	   "content");
	free(buf);
	ok(stat(p, &st) == 0 && (st.st_mode & 0777) == 0644, "mode 0644");
	snprintf(p, sizeof(p), "%s/nccl.xml", out);
	if (symlink("/etc/passwd", p) < 0)
		bail_out("symlink");
	ok(job_write_in(out, "nccl.xml", "x", 1, &e) == 0 &&
	       lstat(p, &st) == 0 && S_ISREG(st.st_mode),
	   "a symlink in the way is replaced, its target untouched");
	ok(stat("/etc/passwd", &st) == 0 && st.st_size > 1, "target intact");
	snprintf(p, sizeof(p), "%s/victim", dir);
	put("victim", "keep me\n");
	{
		char l[700];
		snprintf(l, sizeof(l), "%s/link-to-victim", out);
		if (symlink(p, l) < 0)
			bail_out("symlink");
	}
	autosync_jobdir_remove(out);
	ok(access(out, F_OK) != 0, "the job directory is removed");
	ok(access(p, F_OK) == 0, "a linked file outside is not");
}

static void put_at(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	if (fd < 0)
		bail_out("create %s", path);
	close(fd);
}

/* dir/name made, with 'files' files, its times 'age' seconds back */
static void old_dir(const char *name, unsigned files, long age)
{
	char p[512], f[600];
	struct timespec t[2];

	snprintf(p, sizeof(p), "%s/base/%s", dir, name);
	if (mkdir(p, 0700) < 0)
		bail_out("mkdir %s", p);
	for (unsigned i = 0; i < files; i++) {
		int fd;
		snprintf(f, sizeof(f), "%s/f%u", p, i);
		if ((fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600)) < 0)
			bail_out("create %s", f);
		close(fd);
	}
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	if (utimensat(AT_FDCWD, p, t, 0) < 0)
		bail_out("utimensat %s", p);
}

static int there(const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/base/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void test_prune(void)
{
	char base[256], p[512];
	struct stat st;
	unsigned n;
	int hold;

	snprintf(base, sizeof(base), "%s/base", dir);
	if (mkdir(base, 0755) < 0)
		bail_out("mkdir %s", base);
	old_dir("autosync-1000-7.0.0", 2, 3 * 86400);
	old_dir("autosync-1000-8.0.0", 2, 3 * 86400);
	old_dir("autosync-1000-9.0.0", 2, 60);
	old_dir("autosync-launch-1000-x-0", 2, 3 * 86400);
	snprintf(p, sizeof(p), "%s/autosync-1000-8.0.0", base);
	hold = autosync_jobdir_hold(p, 0);
	ok(hold >= 0, "a job directory is held");
	ok(hold >= 0 && (fcntl(hold, F_GETFD) & FD_CLOEXEC),
	   "  close-on-exec unless asked to be inherited");
	n = autosync_jobdir_prune(base, "autosync-", (uid_t)-1, 86400, 16,
				  4096);
	ok(n == 1 && !there("autosync-1000-7.0.0"),
	   "prune: an old directory nobody holds goes (%u removed)", n);
	ok(there("autosync-1000-8.0.0"),
	   "  one as old that a running step holds stays");
	ok(there("autosync-1000-9.0.0"), "  a young one stays");
	ok(there("autosync-launch-1000-x-0"),
	   "  'autosync-' and no digit: a launch directory is not the "
	   "plugin's");
	autosync_jobdir_release(hold);
	ok(stat(p, &st) == 0 && time(NULL) - st.st_mtime < 60,
	   "released at the end of its step: its age starts now");
	n = autosync_jobdir_prune(base, "autosync-", (uid_t)-1, 86400, 16,
				  4096);
	ok(n == 0 && there("autosync-1000-8.0.0"),
	   "  so it stays for the time kept (%u removed)", n);
	n = autosync_jobdir_prune(base, "autosync-launch-", (uid_t)-1, 86400,
				  16, 4096);
	ok(n == 1 && !there("autosync-launch-1000-x-0"),
	   "a launch directory goes with its own prefix");

	old_dir("autosync-1000-10.0.0", 10005, 3 * 86400);
	n = autosync_jobdir_prune(base, "autosync-", (uid_t)-1, 86400, 16,
				  4096);
	snprintf(p, sizeof(p), "%s/autosync-1000-10.0.0", base);
	ok(n == 0 && stat(p, &st) == 0 && time(NULL) - st.st_mtime > 86400,
	   "10,005 files: 10,000 deleted, the rest left with the directory's "
	   "age (%u removed)",
	   n);
	n = autosync_jobdir_prune(base, "autosync-", (uid_t)-1, 86400, 16,
				  4096);
	ok(n == 1 && !there("autosync-1000-10.0.0"),
	   "  the next prune removes it (%u removed)", n);
	old_dir("autosync-1000-11.0.0", 10001, 0);
	snprintf(p, sizeof(p), "%s/autosync-1000-11.0.0", base);
	autosync_jobdir_remove(p);
	ok(there("autosync-1000-11.0.0"),
	   "remove at a step's end stops after 10,000 files: left for prune");
	{
		/* what a user made inside: subdirectories go too */
		char sub[700];
		old_dir("autosync-1000-12.0.0", 1, 3 * 86400);
		snprintf(sub, sizeof(sub), "%s/autosync-1000-12.0.0/a", base);
		if (mkdir(sub, 0700) < 0)
			bail_out("mkdir %s", sub);
		strcat(sub, "/b");
		if (mkdir(sub, 0700) < 0)
			bail_out("mkdir %s", sub);
		strcat(sub, "/stash");
		put_at(sub);
		snprintf(sub, sizeof(sub), "%s/autosync-1000-12.0.0", base);
		{
			struct timespec t[2];
			clock_gettime(CLOCK_REALTIME, &t[0]);
			t[0].tv_sec -= 3 * 86400;
			t[1] = t[0];
			utimensat(AT_FDCWD, sub, t, 0);
		}
		n = autosync_jobdir_prune(base, "autosync-", (uid_t)-1, 86400,
					  16, 4096);
		ok(n == 1 && !there("autosync-1000-12.0.0"),
		   "a directory with subdirectories (a/b/stash) is removed "
		   "whole (%u removed)",
		   n);
		old_dir("autosync-1000-13.0.0", 0, 0);
		snprintf(sub, sizeof(sub), "%s/autosync-1000-13.0.0/x", base);
		if (mkdir(sub, 0700) < 0)
			bail_out("mkdir %s", sub);
		snprintf(sub, sizeof(sub), "%s/autosync-1000-13.0.0", base);
		autosync_jobdir_remove(sub);
		ok(!there("autosync-1000-13.0.0"),
		   "and at a step's end (keep_job_files: 0)");
	}
	ok(autosync_jobdir_hold(NULL, 0) < 0 && errno == EINVAL,
	   "hold: no directory, EINVAL");
}

int main(void)
{
	plan(NO_PLAN);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_read();
	test_jobdir();
	test_write_remove();
	test_prune();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
