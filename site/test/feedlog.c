/* Unit tests of the feedback log as a file: appends that fail leave the
 * log as it was, and the reader never blocks on a FIFO, never reads a
 * device without end and never holds an endless line. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "tap.h"

static char dir[] = "/tmp/autosync-feedlog-XXXXXX";

struct seen {
	int n;
	char msg[512];
};

static int count(const autosync_feedback_rec_t *r, void *arg)
{
	(void)r;
	((struct seen *)arg)->n++;
	return 0;
}

static void bad(const char *msg, void *arg)
{
	snprintf(((struct seen *)arg)->msg, 512, "%s", msg);
}

static char *record(void)
{
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r));
	char *line = NULL;
	size_t len = 0;

	snprintf(r->source, sizeof(r->source), "plugin");
	snprintf(r->model, sizeof(r->model), "resnet50");
	snprintf(r->node, sizeof(r->node), "node1");
	snprintf(r->plan_hash, sizeof(r->plan_hash), "00000000deadbeef");
	snprintf(r->framework, sizeof(r->framework), "generic");
	snprintf(r->strategy, sizeof(r->strategy), "ddp-default");
	r->job = 7;
	r->nodes = r->gpus_per_node = 1;
	r->predicted = 0.01;
	r->time = 1700000000;
	if (autosync_feedback_format(r, &line, &len, NULL) < 0)
		bail_out("format");
	free(r);
	return line;
}

static void test_short_write(void)
{
	char log[1100], *line = record();
	struct stat st;
	struct rlimit old, rl;
	int fd;

	/* a full log, truncated (keep 0) to make room, then the write runs
	 * into the file size limit half-way */
	snprintf(log, sizeof(log), "%s/trunc.jsonl", dir);
	if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0640)) < 0)
		bail_out("%s", log);
	for (int i = 0; i < 20; i++)
		if (write(fd, line, strlen(line)) < 0)
			bail_out("write");
	close(fd);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	rl = old;
	rl.rlim_cur = strlen(line) / 2;
	setrlimit(RLIMIT_FSIZE, &rl);
	ok(autosync_feedback_append(log, line, strlen(line), 3 * strlen(line),
				    0, NULL) < 0,
	   "the append that hits the limit fails");
	setrlimit(RLIMIT_FSIZE, &old);
	memset(&st, 0, sizeof(st));
	stat(log, &st);
	ok(st.st_size == 0,
	   "and leaves the truncated log empty, neither half a "
	   "record nor the old size back (%lld bytes)",
	   (long long)st.st_size);
	free(line);
}

static void test_reader(void)
{
	char path[1100], *line = record();
	struct seen n = {0, ""};
	int fd;

	snprintf(path, sizeof(path), "%s/fifo", dir);
	mkfifo(path, 0600);
	alarm(20); /* a reader that blocked would be killed here */
	ok(autosync_feedback_read(path, count, &n, bad, NULL) < 0 &&
	       errno == EINVAL,
	   "a FIFO is refused at once");
	ok(autosync_feedback_read("/dev/zero", count, &n, bad, NULL) < 0,
	   "/dev/zero is refused at once");
	alarm(0);
	/* an endless line between two good records */
	snprintf(path, sizeof(path), "%s/long.jsonl", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640)) < 0)
		bail_out("%s", path);
	if (write(fd, line, strlen(line)) < 0)
		bail_out("write");
	for (int i = 0; i < 3000; i++) {
		char junk[1024];
		memset(junk, 'x', sizeof(junk));
		if (write(fd, junk, sizeof(junk)) < 0)
			bail_out("write");
	}
	if (write(fd, "\n", 1) < 0 || write(fd, line, strlen(line)) < 0)
		bail_out("write");
	close(fd);
	n.n = 0;
	ok(autosync_feedback_read(path, count, &n, bad, NULL) == 0 &&
	       n.n == 2 && strstr(n.msg, ":2: line too long") != NULL,
	   "a 3 MB line is skipped and named, the records around it read: %s",
	   n.msg);
	free(line);
}

int main(void)
{
	plan(NO_PLAN);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_short_write();
	test_reader();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
