/* Unit tests for the nodes' agreement on one plan (autosync/agree.h): a
 * launcher on loopback and nodes in threads, over real sockets. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "autosync/agree.h"
#include "tap.h"

#include <regex.h>

/* evaluates 'got' once */
#define is_int(got, want, ...) ok(same_int((got), (want)), __VA_ARGS__)
#define like(got, re, ...) ok(matches((got), (re)), __VA_ARGS__)

static int same_int(long got, long want)
{
	if (got != want)
		diag("got %ld, want %ld", got, want);
	return got == want;
}

static int matches(const char *s, const char *re)
{
	regex_t r;
	int m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		bail_out("bad regex %s", re);
	m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

#define JOB 77
#define STEP 3

struct launcher {
	autosync_agree_t *a;
	char spec[AUTOSYNC_AGREE_SPEC_MAX];
	pthread_t th;
	int rc;
};

struct node {
	const char *spec;
	uint32_t job, step;
	unsigned id;
	const char *hash;
	pthread_t th;
	int rc;
	char verdict[AUTOSYNC_AGREE_LINE_MAX];
	autosync_error_t err;
};

static void *run_launcher(void *arg)
{
	struct launcher *l = arg;

	l->rc = autosync_agree_run(l->a, NULL);
	return NULL;
}

static void *run_node(void *arg)
{
	struct node *n = arg;

	n->rc = autosync_agree_join("127.0.0.1", n->spec, n->job, n->step,
				    n->id, n->hash, n->verdict,
				    sizeof(n->verdict), &n->err);
	return NULL;
}

static void start(struct launcher *l, unsigned nnodes, int gather_ms)
{
	memset(l, 0, sizeof(*l));
	if (!(l->a = autosync_agree_create(nnodes, JOB, STEP, NULL)) ||
	    autosync_agree_set_windows(l->a, gather_ms, 20000, NULL) < 0 ||
	    autosync_agree_listen(l->a, l->spec, sizeof(l->spec), NULL) < 0 ||
	    pthread_create(&l->th, NULL, run_launcher, l))
		bail_out("cannot start a launcher");
}

static void finish(struct launcher *l)
{
	pthread_join(l->th, NULL);
	autosync_agree_destroy(l->a);
}

/* nodes 0..n-1 with these hashes, all joined */
static void nodes(struct node *n, size_t count, const char *spec,
		  const char **hash)
{
	for (size_t i = 0; i < count; i++) {
		n[i] = (struct node){.spec = spec,
				     .job = JOB,
				     .step = STEP,
				     .id = (unsigned)i,
				     .hash = hash[i]};
		if (pthread_create(&n[i].th, NULL, run_node, &n[i]))
			bail_out("pthread_create");
	}
	for (size_t i = 0; i < count; i++)
		pthread_join(n[i].th, NULL);
}

static void test_same(void)
{
	struct launcher l;
	struct node n[4];
	const char *h[] = {"0123456789abcdef", "0123456789abcdef",
			   "0123456789abcdef", "0123456789abcdef"};
	int all = 1;

	start(&l, 4, 5000);
	nodes(n, 4, l.spec, h);
	finish(&l);
	for (int i = 0; i < 4; i++)
		all &= n[i].rc == AUTOSYNC_AGREE_SAME &&
		       !strcmp(n[i].verdict, "same 0123456789abcdef");
	ok(all, "4 nodes with one plan: every node hears 'same HASH'");
	is_int(l.rc, AUTOSYNC_AGREE_SAME, "and the launcher decided so");
}

/* a step of 100 nodes: one thread gathers them all */
static void test_many(void)
{
	enum { N = 100 };
	static struct node n[N];
	static const char *h[N];
	struct launcher l;
	int all = 1;

	for (int i = 0; i < N; i++)
		h[i] = "feedfacecafe0123";
	start(&l, N, 10000);
	nodes(n, N, l.spec, h);
	finish(&l);
	for (int i = 0; i < N; i++)
		all &= n[i].rc == AUTOSYNC_AGREE_SAME;
	ok(all, "100 nodes: every one hears 'same'");
	is_int(l.rc, AUTOSYNC_AGREE_SAME, "and the launcher decided so");
}

static void test_differ(void)
{
	struct launcher l;
	struct node n[3];
	const char *h[] = {"aaaa", "aaaa", "bbbb"};
	int all = 1;

	start(&l, 3, 5000);
	nodes(n, 3, l.spec, h);
	pthread_join(l.th, NULL);
	for (int i = 0; i < 3; i++)
		all &= n[i].rc == AUTOSYNC_AGREE_DIFFER &&
		       !strcmp(n[i].verdict, "differ 0 aaaa 2 bbbb");
	ok(all, "one node with another plan: every node hears "
		"'differ 0 aaaa 2 bbbb'");
	is_int(l.rc, AUTOSYNC_AGREE_DIFFER, "and the launcher decided so");
	is(autosync_agree_verdict_line(l.a), "differ 0 aaaa 2 bbbb",
	   "the launcher keeps the line");
	autosync_agree_destroy(l.a);

	start(&l, 2, 5000);
	h[0] = "-";
	h[1] = "-";
	nodes(n, 2, l.spec, h);
	finish(&l);
	ok(n[0].rc == AUTOSYNC_AGREE_SAME && n[1].rc == AUTOSYNC_AGREE_SAME &&
	       !strcmp(n[0].verdict, "same -"),
	   "no node has a plan: 'same -' (nothing to apply anywhere)");

	start(&l, 2, 5000);
	h[0] = "aaaa";
	h[1] = "-";
	nodes(n, 2, l.spec, h);
	finish(&l);
	ok(n[0].rc == AUTOSYNC_AGREE_DIFFER &&
	       n[1].rc == AUTOSYNC_AGREE_DIFFER &&
	       !strcmp(n[0].verdict, "differ 0 aaaa 1 -"),
	   "a node without a plan makes the others fall back: %s",
	   n[0].verdict);
}

static int64_t ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_incomplete(void)
{
	struct launcher l;
	struct node n[2];
	const char *h[] = {"aaaa", "aaaa"};

	start(&l, 3, 300);
	nodes(n, 2, l.spec, h);
	pthread_join(l.th, NULL);
	is_int(autosync_agree_reported(l.a), 2, "2 of 3 reported");
	autosync_agree_destroy(l.a);
	ok(n[0].rc == AUTOSYNC_AGREE_INCOMPLETE &&
	       n[1].rc == AUTOSYNC_AGREE_INCOMPLETE &&
	       !strcmp(n[0].verdict, "incomplete 2 3"),
	   "a node that never reports: 'incomplete 2 3' to the others");
	is_int(l.rc, AUTOSYNC_AGREE_INCOMPLETE, "and the launcher decided so");
	is_int(autosync_agree_reported(NULL), 0, "reported() accepts NULL");
}

/* A raw connection that sends 'line' and returns what comes back. */
static void raw(const char *spec, const char *line, char *got, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	sa.sin_port = htons((uint16_t)atoi(spec));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	got[0] = '\0';
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		bail_out("raw connect");
	(void)!write(fd, line, strlen(line));
	n = read(fd, got, len - 1);
	got[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void test_strangers(void)
{
	struct launcher l;
	struct node n[2];
	const char *h[] = {"cafe", "cafe"};
	char token[40], line[400], got[200];
	struct node bad;

	start(&l, 2, 5000);
	sscanf(l.spec, "%*d %39s", token);
	{
		static const char *fmt[][2] = {
		    {"autosync-agree 1 ", " 77 3 0 cafe extra\n"},
		    {"autosync-agree 2 ", " 77 3 0 cafe\n"},
		    {"autosync-agree 1 ", " 78 3 0 cafe\n"},
		    {"autosync-agree 1 ", " 77 4 0 cafe\n"},
		    {"autosync-agree 1 ", " 77 3 2 cafe\n"},
		    {"autosync-agree 1 ", " 77 3 0 CAFE\n"},
		    {"autosync-agree 1 ", " 77 3 0 cafe\r\n"},
		    {"autosync-agree 1 ", "77 3 0 cafe\n"},
		};
		int none = 1;
		for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
			snprintf(line, sizeof(line), "%s%s%s", fmt[i][0], token,
				 fmt[i][1]);
			raw(l.spec, line, got, sizeof(got));
			none &= got[0] == '\0';
		}
		raw(l.spec,
		    "autosync-agree 1 00000000000000000000000000000000 77 3 0 "
		    "cafe\n",
		    got, sizeof(got));
		none &= got[0] == '\0';
		memset(line, 'x', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\0';
		raw(l.spec, line, got, sizeof(got));
		none &= got[0] == '\0';
		ok(none, "wrong token, job, step, node, hash, version, extra "
			 "words or an endless line: closed without an answer");
	}
	/* a wrong token through the API fails on the node's side */
	{
		char spec[AUTOSYNC_AGREE_SPEC_MAX];
		int port;
		sscanf(l.spec, "%d", &port);
		snprintf(spec, sizeof(spec),
			 "%d ffffffffffffffffffffffffffffffff 300", port);
		bad = (struct node){.spec = spec,
				    .job = JOB,
				    .step = STEP,
				    .id = 0,
				    .hash = "cafe"};
		run_node(&bad);
		ok(bad.rc == -1 && strstr(bad.err.text, "closed without"),
		   "a node with another step's token hears nothing: %s",
		   bad.err.text);
	}
	nodes(n, 2, l.spec, h);
	pthread_join(l.th, NULL);
	ok(n[0].rc == AUTOSYNC_AGREE_SAME && n[1].rc == AUTOSYNC_AGREE_SAME,
	   "the real nodes still agree after the strangers");
	is_int(autosync_agree_reported(l.a), 2,
	       "and only they counted: none of the strangers");
	autosync_agree_destroy(l.a);
}

/* a port nobody uses now */
/* a stranger holding every spare slot open, silent: the nodes still get in
 * (the oldest silent connection gives its slot up) */
static void test_hog(void)
{
	struct launcher l;
	struct node n[2];
	const char *h[] = {"cafe", "cafe"};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fds[80], nfd = 0;

	start(&l, 2, 3000);
	sa.sin_port = htons((uint16_t)atoi(l.spec));
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	for (int i = 0; i < 80; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 ||
		    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			bail_out("hog connect");
		fds[nfd++] = fd;
	}
	usleep(100 * 1000); /* all accepted: the table is full */
	nodes(n, 2, l.spec, h);
	finish(&l);
	ok(n[0].rc == AUTOSYNC_AGREE_SAME && n[1].rc == AUTOSYNC_AGREE_SAME &&
	       l.rc == AUTOSYNC_AGREE_SAME,
	   "80 silent connections held open by a stranger (the table holds "
	   "66): both nodes still agree (%d %d %d)",
	   n[0].rc, n[1].rc, l.rc);
	while (nfd)
		close(fds[--nfd]);
}

static unsigned free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned p;

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		bail_out("free port");
	p = ntohs(sa.sin_port);
	close(fd);
	return p;
}

static void test_ports(void)
{
	autosync_error_t err = {.text = ""};
	autosync_agree_t *a = autosync_agree_create(2, JOB, STEP, NULL);
	char spec[AUTOSYNC_AGREE_SPEC_MAX], want[40];
	unsigned p = free_port();
	int rc, e;

	ok(autosync_agree_set_ports(a, 10, 5, &err) < 0 && errno == EINVAL,
	   "a reversed range: %s", err.text);
	ok(autosync_agree_set_ports(a, 0, 5, NULL) < 0 &&
	       autosync_agree_set_ports(a, 5, 65536, NULL) < 0,
	   "port 0 and 65536: refused");
	ok(autosync_agree_set_ports(a, p, p, &err) == 0 &&
	       autosync_agree_listen(a, spec, sizeof(spec), &err) == 0,
	   "a range of one free port: listens");
	snprintf(want, sizeof(want), "%u ", p);
	ok(!strncmp(spec, want, strlen(want)), "on that port: %s", spec);
	{
		/* the same range again: the port is taken */
		autosync_agree_t *b = autosync_agree_create(2, JOB, STEP, NULL);
		autosync_agree_set_ports(b, p, p, NULL);
		rc = autosync_agree_listen(b, spec, sizeof(spec), &err);
		e = errno;
		ok(rc < 0 && e == EADDRINUSE, "every port of the range in use");
		snprintf(want, sizeof(want), "agree: every port of %u-%u", p,
			 p);
		ok(!strncmp(err.text, want, strlen(want)), "says so: %s",
		   err.text);
		autosync_agree_destroy(b);
	}
	autosync_agree_destroy(a);
}

static void test_stop(void)
{
	struct launcher l;

	start(&l, 8, 5000);
	usleep(50000);
	autosync_agree_stop(l.a);
	finish(&l);
	is_int(l.rc, AUTOSYNC_AGREE_NONE,
	       "stopped before any report: no verdict");
}

static void test_bad(void)
{
	autosync_error_t err = {.text = ""};
	char v[AUTOSYNC_AGREE_LINE_MAX];

	ok(!autosync_agree_create(1, 1, 1, &err) && errno == EINVAL,
	   "one node needs no agreement: %s", err.text);
	ok(!autosync_agree_create(AUTOSYNC_AGREE_MAX_NODES + 1, 1, 1, &err) &&
	       errno == EINVAL,
	   "too many nodes: %s", err.text);
	is_int(autosync_agree_join("127.0.0.1", "1 2 3", 1, 1, 0, "aa", v,
				   sizeof(v), &err),
	       -1, "a bad spec");
	is(err.text, "agree: bad spec '1 2 3'", "says which");
	is_int(autosync_agree_join("127.0.0.1",
				   "99 0123456789abcdef0123456789abcdef 999999",
				   1, 1, 0, "aa", v, sizeof(v), &err),
	       -1, "a window over the limit");
	is_int(autosync_agree_join("localhost",
				   "99 0123456789abcdef0123456789abcdef 100", 1,
				   1, 0, "aa", v, sizeof(v), &err),
	       -1, "a host name (no name service in slurmstepd)");
	like(err.text, "^agree: address 'localhost': ", "says so: %s",
	     err.text);
	is_int(autosync_agree_join("127.0.0.1",
				   "99 0123456789abcdef0123456789abcdef 100", 1,
				   1, 0, "a b", v, sizeof(v), &err),
	       -1, "a hash with a space");
	{
		/* a port nobody listens on: refused at once */
		struct launcher l;
		char spec[AUTOSYNC_AGREE_SPEC_MAX];
		start(&l, 2, 100);
		snprintf(spec, sizeof(spec), "%s", l.spec);
		autosync_agree_stop(l.a);
		finish(&l);
		int rc = autosync_agree_join("127.0.0.1", spec, JOB, STEP, 0,
					     "aa", v, sizeof(v), &err);
		int e = errno;
		is_int(rc, -1, "no launcher: -1");
		ok(e == ECONNREFUSED, "refused, not waited for");
		like(err.text,
		     "^agree: connect to 127\\.0\\.0\\.1 port [0-9]+: ",
		     "says so: %s", err.text);
	}
}

/* A launcher that does not answer: the node gives up after the window and
 * 2 s, and a fake launcher naming another hash is a disagreement. */
static void *fake(void *arg)
{
	int *fds = arg, c;
	char b[256];

	if ((c = accept(fds[0], NULL, NULL)) < 0)
		return NULL;
	(void)!read(c, b, sizeof(b));
	if (fds[1])
		(void)!write(c, "same ffff\n", 10);
	else
		usleep(2600 * 1000);
	close(c);
	return NULL;
}

static void test_fake(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int fds[2] = {socket(AF_INET, SOCK_STREAM, 0), 1};
	char spec[AUTOSYNC_AGREE_SPEC_MAX], v[AUTOSYNC_AGREE_LINE_MAX];
	autosync_error_t err = {.text = ""};
	pthread_t th;
	int64_t t0;

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (bind(fds[0], (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fds[0], 4) < 0 ||
	    getsockname(fds[0], (struct sockaddr *)&sa, &sl) < 0)
		bail_out("fake launcher");
	snprintf(spec, sizeof(spec), "%d 0123456789abcdef0123456789abcdef 100",
		 ntohs(sa.sin_port));
	pthread_create(&th, NULL, fake, fds);
	is_int(autosync_agree_join("127.0.0.1", spec, 1, 1, 0, "aaaa", v,
				   sizeof(v), &err),
	       AUTOSYNC_AGREE_DIFFER, "'same' with another hash: differ");
	pthread_join(th, NULL);
	fds[1] = 0;
	pthread_create(&th, NULL, fake, fds);
	t0 = ms();
	is_int(autosync_agree_join("127.0.0.1", spec, 1, 1, 0, "aaaa", v,
				   sizeof(v), &err),
	       -1, "a launcher that never answers: -1");
	ok(ms() - t0 >= 2000, "after the window (100 ms) and 2 s");
	like(err.text, "^agree: no verdict from the launcher: ", "%s",
	     err.text);
	pthread_join(th, NULL);
	close(fds[0]);
}

int main(void)
{
	plan(NO_PLAN);
	test_same();
	test_many();
	test_differ();
	test_incomplete();
	test_strangers();
	test_hog();
	test_stop();
	test_ports();
	test_bad();
	test_fake();
	done_testing();
}
