/*
 * agree.c - the nodes of a step agree on one plan (autosync/agree.h): the
 * launcher's gathering loop and the node's report.
 *
 * Every wait is bounded: a connection has AGREE_LINE_MS to send its line,
 * the nodes AUTOSYNC_AGREE_GATHER_MS (or the set window) from the first
 * report, the whole gathering its total window. Lines are bounded and
 * parsed strictly; anything else closes the connection and counts for
 * nothing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "autosync/agree.h"
#include "internal.h"

#define AGREE_MAGIC "autosync-agree 1"
#define AGREE_TOKEN_HEX 32
#define AGREE_HASH_MAX 64
/* what a connection has to send its line */
#define AGREE_LINE_MS 2000
/* connections beyond one per node (retries, strangers) */
#define AGREE_SPARE_CONNS 64
#define AGREE_TOTAL_MS 600000

struct agree_conn {
	int fd;
	int node; /* -1 until its line is accepted */
	int64_t since;
	size_t len;
	char buf[AUTOSYNC_AGREE_LINE_MAX];
};

struct autosync_agree {
	unsigned nnodes;
	uint32_t job, step;
	int gather_ms, total_ms;
	unsigned port_lo, port_hi; /* 0: the kernel picks */
	int lfd;
	int wake[2]; /* autosync_agree_stop() writes to wake[1] */
	char token[AGREE_TOKEN_HEX + 1];
	struct agree_conn *conn;
	size_t nconn, maxconn;
	char (*hash)[AGREE_HASH_MAX + 1]; /* per node, "" until reported */
	unsigned reported;
	int64_t first; /* when the first report came, 0 before */
	char verdict[AUTOSYNC_AGREE_LINE_MAX];
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int valid_hash(const char *h)
{
	size_t n = strlen(h);

	if (!strcmp(h, "-"))
		return 1;
	if (n == 0 || n > AGREE_HASH_MAX)
		return 0;
	return strspn(h, "0123456789abcdefghijklmnopqrstuvwxyz") == n;
}

/* ------------------------------------------------------------ launcher */

autosync_agree_t *autosync_agree_create(unsigned nnodes, uint32_t job,
					uint32_t step, autosync_error_t *errp)
{
	autosync_agree_t *a;

	if (nnodes < 2 || nnodes > AUTOSYNC_AGREE_MAX_NODES) {
		errno = EINVAL;
		autosync_errprintf(errp, "agree: %u nodes (2 to %u)", nnodes,
				   AUTOSYNC_AGREE_MAX_NODES);
		return NULL;
	}
	if (!(a = calloc(1, sizeof(*a))) ||
	    !(a->hash = calloc(nnodes, sizeof(*a->hash))) ||
	    !(a->conn = calloc(nnodes + AGREE_SPARE_CONNS, sizeof(*a->conn)))) {
		int e = errno;
		if (a)
			free(a->hash);
		free(a);
		errno = e;
		autosync_errprintf(errp, "agree: %s", strerror(e));
		return NULL;
	}
	a->nnodes = nnodes;
	a->job = job;
	a->step = step;
	a->gather_ms = AUTOSYNC_AGREE_GATHER_MS;
	a->total_ms = AGREE_TOTAL_MS;
	a->maxconn = nnodes + AGREE_SPARE_CONNS;
	a->lfd = a->wake[0] = a->wake[1] = -1;
	return a;
}

int autosync_agree_set_windows(autosync_agree_t *a, int gather_ms, int total_ms,
			       autosync_error_t *errp)
{
	if (!a || gather_ms < 1 || gather_ms > AUTOSYNC_AGREE_GATHER_MAX_MS ||
	    total_ms < gather_ms) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp,
		    "agree: windows %d ms and %d ms (1 to %d, total "
		    "at least the gathering)",
		    gather_ms, total_ms, AUTOSYNC_AGREE_GATHER_MAX_MS);
	}
	a->gather_ms = gather_ms;
	a->total_ms = total_ms;
	return 0;
}

int autosync_agree_set_ports(autosync_agree_t *a, unsigned lo, unsigned hi,
			     autosync_error_t *errp)
{
	if (!a || lo < 1 || hi > 65535 || lo > hi) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "agree: ports %u-%u (1 to 65535)", lo, hi);
	}
	a->port_lo = lo;
	a->port_hi = hi;
	return 0;
}

/* IPv6 with IPv4-mapped addresses where the host has IPv6, else IPv4; on
 * 'port' (0: the kernel picks). */
static int listen_on(unsigned port, autosync_error_t *errp)
{
	struct sockaddr_in6 s6 = {.sin6_family = AF_INET6,
				  .sin6_addr = IN6ADDR_ANY_INIT,
				  .sin6_port = htons((uint16_t)port)};
	struct sockaddr_in s4 = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_ANY),
				 .sin_port = htons((uint16_t)port)};
	int fd, off = 0;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 &&
	    (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0 ||
	     bind(fd, (struct sockaddr *)&s6, sizeof(s6)) < 0)) {
		int e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	if (fd < 0 && errno != EADDRINUSE) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		if (fd >= 0 &&
		    bind(fd, (struct sockaddr *)&s4, sizeof(s4)) < 0) {
			int e = errno;
			close(fd);
			errno = e;
			fd = -1;
		}
	}
	/* every node connects at about the same time */
	if (fd >= 0 && listen(fd, SOMAXCONN) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	if (fd < 0)
		autosync_errprintf(errp, "agree: listen on port %u: %s", port,
				   strerror(errno));
	return fd;
}

/* The first port of the range that is free, from a random start. */
static int listen_range(const autosync_agree_t *a, unsigned start,
			autosync_error_t *errp)
{
	unsigned n = a->port_hi - a->port_lo + 1;

	if (!a->port_lo)
		return listen_on(0, errp);
	for (unsigned i = 0; i < n; i++) {
		int fd = listen_on(a->port_lo + (start + i) % n, errp);
		if (fd >= 0 || errno != EADDRINUSE)
			return fd;
	}
	errno = EADDRINUSE;
	return autosync_errprintf(errp, "agree: every port of %u-%u is in use",
				  a->port_lo, a->port_hi);
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int autosync_agree_listen(autosync_agree_t *a, char *spec, size_t len,
			  autosync_error_t *errp)
{
	unsigned char r[AGREE_TOKEN_HEX / 2 + sizeof(unsigned)];
	unsigned start;
	int port;

	if (!a || !spec || a->lfd >= 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "agree: listen: bad call");
	}
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return autosync_errprintf(errp, "agree: getrandom: %s",
					  strerror(errno));
	for (size_t i = 0; i < AGREE_TOKEN_HEX / 2; i++)
		snprintf(a->token + 2 * i, 3, "%02x", r[i]);
	memcpy(&start, r + AGREE_TOKEN_HEX / 2, sizeof(start));
	if (pipe2(a->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		a->wake[0] = a->wake[1] = -1;
		return autosync_errprintf(errp, "agree: pipe: %s",
					  strerror(errno));
	}
	if ((a->lfd = listen_range(a, start, errp)) < 0)
		return -1;
	if ((port = bound_port(a->lfd)) < 0)
		return autosync_errprintf(errp, "agree: getsockname: %s",
					  strerror(errno));
	if ((size_t)snprintf(spec, len, "%d %s %d", port, a->token,
			     a->gather_ms) >= len) {
		errno = ENOSPC;
		return autosync_errprintf(errp, "agree: spec buffer too small");
	}
	return 0;
}

static void conn_close(autosync_agree_t *a, size_t i)
{
	close(a->conn[i].fd);
	a->conn[i] = a->conn[--a->nconn];
}

/* the oldest connection that has not sent a valid line, or -1 */
static long oldest_silent(const autosync_agree_t *a)
{
	long o = -1;

	for (size_t i = 0; i < a->nconn; i++)
		if (a->conn[i].node < 0 &&
		    (o < 0 || a->conn[i].since < a->conn[o].since))
			o = (long)i;
	return o;
}

/* Take what is waiting. Connections are accepted before any token is
 * seen, so a full table (or a process out of descriptors) gives the oldest
 * silent connection up: a stranger holding connections open cannot keep
 * the nodes out. 1 when nothing could be freed and the listener should
 * wait (out of descriptors: poll would wake at once again), else 0. */
static int accept_all(autosync_agree_t *a, int64_t t)
{
	for (;;) {
		int fd =
		    accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		long o;

		if (fd < 0 && errno == EINTR)
			continue;
		if (fd < 0 && errno != EMFILE && errno != ENFILE &&
		    errno != ENOBUFS && errno != ENOMEM)
			return 0; /* drained (EAGAIN) or a client's error */
		if (fd < 0 || a->nconn == a->maxconn) {
			if ((o = oldest_silent(a)) < 0) {
				if (fd >= 0)
					close(fd);
				return fd < 0;
			}
			conn_close(a, (size_t)o);
			if (fd < 0)
				continue;
		}
		a->conn[a->nconn++] =
		    (struct agree_conn){.fd = fd, .node = -1, .since = t};
	}
}

int job_agree_parse_report(const char *line, struct job_agree_report *r)
{
	int end = 0;

	if (strncmp(line, AGREE_MAGIC " ", sizeof(AGREE_MAGIC)) ||
	    sscanf(line + sizeof(AGREE_MAGIC), "%33s %u %u %u %65s%n", r->token,
		   &r->job, &r->step, &r->node, r->hash, &end) != 5 ||
	    line[sizeof(AGREE_MAGIC) + end] != '\0' || !valid_hash(r->hash) ||
	    strlen(r->token) != AGREE_TOKEN_HEX ||
	    strspn(r->token, "0123456789abcdef") != AGREE_TOKEN_HEX)
		return -1;
	return 0;
}

/* Accept a node's line: -1 when it is not a valid report for this step. */
static int take_line(autosync_agree_t *a, const char *line)
{
	struct job_agree_report r;

	if (job_agree_parse_report(line, &r) < 0 || strcmp(r.token, a->token) ||
	    r.job != a->job || r.step != a->step || r.node >= a->nnodes ||
	    a->hash[r.node][0])
		return -1; /* strangers, other steps, and a second report */
	memcpy(a->hash[r.node], r.hash, strlen(r.hash) + 1); /* valid: fits */
	a->reported++;
	return (int)r.node;
}

/* Read what a connection sent; close it when it is done or bad. */
static void read_conn(autosync_agree_t *a, size_t i, int64_t t)
{
	struct agree_conn *c = &a->conn[i];
	ssize_t n;
	char *nl;

	if (c->node >= 0) { /* reported: only waits for the verdict */
		char b[64];
		ssize_t r = read(c->fd, b, sizeof(b));
		/* gone (its node decides alone), or talking out of turn */
		if (r >= 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(a, i);
		return;
	}
	n = read(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			conn_close(a, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (!(nl = memchr(c->buf, '\n', c->len))) {
		if (c->len == sizeof(c->buf) - 1)
			conn_close(a, i); /* a line too long */
		return;
	}
	*nl = '\0';
	if (nl != c->buf + c->len - 1 || (c->node = take_line(a, c->buf)) < 0) {
		conn_close(a, i);
		return;
	}
	if (a->reported == 1)
		a->first = t;
}

static void decide(autosync_agree_t *a)
{
	const char *h0 = a->hash[0];

	if (a->reported < a->nnodes) {
		snprintf(a->verdict, sizeof(a->verdict), "incomplete %u %u",
			 a->reported, a->nnodes);
		return;
	}
	for (unsigned i = 1; i < a->nnodes; i++)
		if (strcmp(a->hash[i], h0)) {
			snprintf(a->verdict, sizeof(a->verdict),
				 "differ 0 %s %u %s", h0, i, a->hash[i]);
			return;
		}
	snprintf(a->verdict, sizeof(a->verdict), "same %s", h0);
}

/* Every node that reported hears the verdict; the connections close. */
static void answer(autosync_agree_t *a)
{
	char line[AUTOSYNC_AGREE_LINE_MAX + 1];
	int n = snprintf(line, sizeof(line), "%s\n", a->verdict);

	while (a->nconn) {
		if (a->conn[0].node >= 0)
			/* a short line into an empty socket buffer: a node
			 * that does not read loses only its own verdict */
			(void)send(a->conn[0].fd, line, (size_t)n,
				   MSG_NOSIGNAL | MSG_DONTWAIT);
		conn_close(a, 0);
	}
}

static int verdict_code(const autosync_agree_t *a)
{
	if (!strncmp(a->verdict, "same ", 5))
		return AUTOSYNC_AGREE_SAME;
	if (!strncmp(a->verdict, "differ ", 7))
		return AUTOSYNC_AGREE_DIFFER;
	if (!strncmp(a->verdict, "incomplete ", 11))
		return AUTOSYNC_AGREE_INCOMPLETE;
	return AUTOSYNC_AGREE_NONE;
}

/* The next deadline: the gathering window, or a connection's line. */
static int64_t next_deadline(const autosync_agree_t *a, int64_t end)
{
	int64_t d = end;

	if (a->first && a->first + a->gather_ms < d)
		d = a->first + a->gather_ms;
	for (size_t i = 0; i < a->nconn; i++)
		if (a->conn[i].node < 0 && a->conn[i].since + AGREE_LINE_MS < d)
			d = a->conn[i].since + AGREE_LINE_MS;
	return d;
}

static void drop_slow(autosync_agree_t *a, int64_t t)
{
	for (size_t i = a->nconn; i-- > 0;)
		if (a->conn[i].node < 0 &&
		    t >= a->conn[i].since + AGREE_LINE_MS)
			conn_close(a, i);
}

int autosync_agree_run(autosync_agree_t *a, autosync_error_t *errp)
{
	struct pollfd *p;
	int64_t end, paused = 0; /* the listener waits until then */

	if (!a || a->lfd < 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "agree: run before listen");
	}
	if (!(p = calloc(a->maxconn + 2, sizeof(*p))))
		return autosync_errprintf(errp, "agree: %s", strerror(errno));
	end = now_ms() + a->total_ms;
	for (;;) {
		int64_t t = now_ms(), d = next_deadline(a, end);
		size_t np = a->nconn;
		int listen_now = t >= paused;

		if (a->reported == a->nnodes ||
		    (a->first && t >= a->first + a->gather_ms)) {
			decide(a);
			answer(a);
			break;
		}
		if (t >= end) {
			if (a->reported) { /* late reports: they hear it too */
				decide(a);
				answer(a);
			}
			break;
		}
		drop_slow(a, t);
		np = a->nconn;
		for (size_t i = 0; i < np; i++)
			p[i] = (struct pollfd){.fd = a->conn[i].fd,
					       .events = POLLIN};
		p[np] = (struct pollfd){.fd = listen_now ? a->lfd : -1,
					.events = POLLIN};
		p[np + 1] = (struct pollfd){.fd = a->wake[0], .events = POLLIN};
		if (!listen_now && paused < d)
			d = paused;
		if (poll(p, np + 2, (int)(d > t ? d - t : 0)) < 0 &&
		    errno != EINTR) {
			int e = errno;
			free(p);
			errno = e;
			return autosync_errprintf(errp, "agree: poll: %s",
						  strerror(e));
		}
		if (p[np + 1].revents)
			break; /* stopped */
		t = now_ms();
		/* backwards: conn_close() moves the last one into i */
		for (size_t i = np; i-- > 0;)
			if (p[i].revents)
				read_conn(a, i, t);
		if (p[np].revents && accept_all(a, t))
			paused = t + 50; /* out of descriptors: no spin */
	}
	free(p);
	while (a->nconn)
		conn_close(a, 0);
	return verdict_code(a);
}

void autosync_agree_stop(autosync_agree_t *a)
{
	if (a && a->wake[1] >= 0)
		(void)!write(a->wake[1], "x", 1);
}

unsigned autosync_agree_reported(const autosync_agree_t *a)
{
	return a ? a->reported : 0;
}

const char *autosync_agree_verdict_line(const autosync_agree_t *a)
{
	return a ? a->verdict : "";
}

void autosync_agree_destroy(autosync_agree_t *a)
{
	if (!a)
		return;
	while (a->nconn)
		conn_close(a, 0);
	if (a->lfd >= 0)
		close(a->lfd);
	if (a->wake[0] >= 0)
		close(a->wake[0]);
	if (a->wake[1] >= 0)
		close(a->wake[1]);
	free(a->conn);
	free(a->hash);
	free(a);
}

/* ---------------------------------------------------------------- node */

int job_agree_parse_spec(const char *spec, struct job_agree_spec *s,
			 autosync_error_t *errp)
{
	unsigned port;
	int end = 0;

	if (!spec || strlen(spec) >= AUTOSYNC_AGREE_SPEC_MAX ||
	    sscanf(spec, "%u %32s %d%n", &port, s->token, &s->gather_ms,
		   &end) != 3 ||
	    spec[end] != '\0' || port == 0 || port > 65535 ||
	    strlen(s->token) != AGREE_TOKEN_HEX ||
	    strspn(s->token, "0123456789abcdef") != AGREE_TOKEN_HEX ||
	    s->gather_ms < 1 || s->gather_ms > AUTOSYNC_AGREE_GATHER_MAX_MS) {
		errno = EINVAL;
		return autosync_errprintf(errp, "agree: bad spec '%.40s'",
					  spec ? spec : "");
	}
	snprintf(s->port, sizeof(s->port), "%u", port);
	return 0;
}

/* Wait for 'events' on 'fd' until 'end'; 0, or -1 with errno (ETIMEDOUT). */
static int wait_fd(int fd, short events, int64_t end)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int64_t t = now_ms();
		int rc;

		if (t >= end) {
			errno = ETIMEDOUT;
			return -1;
		}
		rc = poll(&p, 1, (int)(end - t));
		if (rc > 0)
			return 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

static int connect_to(const char *host, const char *port, int64_t end,
		      autosync_error_t *errp)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV},
			*res = NULL;
	int fd = -1, rc, err = 0;
	socklen_t sl = sizeof(err);

	/* numeric only: no name service inside slurmstepd */
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		errno = EINVAL;
		return autosync_errprintf(errp, "agree: address '%.64s': %s",
					  host, gai_strerror(rc));
	}
	fd = socket(res->ai_family,
		    res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || (connect(fd, res->ai_addr, res->ai_addrlen) < 0 &&
		       errno != EINPROGRESS)) {
		err = errno;
		goto fail;
	}
	if (wait_fd(fd, POLLOUT, end) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) < 0) {
		err = errno;
		goto fail;
	}
	if (err)
		goto fail;
	freeaddrinfo(res);
	return fd;
fail:
	freeaddrinfo(res);
	if (fd >= 0)
		close(fd);
	errno = err;
	return autosync_errprintf(errp, "agree: connect to %.64s port %s: %s",
				  host, port, strerror(err));
}

/* Read one line (the verdict) until 'end'. */
static int read_line(int fd, char *buf, size_t len, int64_t end,
		     autosync_error_t *errp)
{
	size_t have = 0;

	for (;;) {
		ssize_t n;
		char *nl;

		if (wait_fd(fd, POLLIN, end) < 0)
			return autosync_errprintf(
			    errp, "agree: no verdict from the launcher: %s",
			    strerror(errno));
		n = read(fd, buf + have, len - 1 - have);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			errno = n == 0 ? ECONNRESET : errno;
			return autosync_errprintf(
			    errp,
			    "agree: the launcher closed without a verdict");
		}
		have += (size_t)n;
		buf[have] = '\0';
		if ((nl = memchr(buf, '\n', have))) {
			*nl = '\0';
			return 0;
		}
		if (have == len - 1) {
			errno = EPROTO;
			return autosync_errprintf(errp,
						  "agree: verdict too long");
		}
	}
}

int job_agree_parse_verdict(const char *line, const char *hash)
{
	char h1[AGREE_HASH_MAX + 2], h2[AGREE_HASH_MAX + 2];
	unsigned n1, n2;
	int end = 0;

	/* "same " and exactly a hash: only that lets a node apply its plan */
	if (!strncmp(line, "same ", 5) && valid_hash(line + 5))
		return strcmp(line + 5, hash) ? AUTOSYNC_AGREE_DIFFER
					      : AUTOSYNC_AGREE_SAME;
	if (!strncmp(line, "differ ", 7) &&
	    sscanf(line, "differ %u %65s %u %65s%n", &n1, h1, &n2, h2, &end) ==
		4 &&
	    !line[end])
		return AUTOSYNC_AGREE_DIFFER;
	end = 0;
	if (!strncmp(line, "incomplete ", 11) &&
	    sscanf(line, "incomplete %u %u%n", &n1, &n2, &end) == 2 &&
	    !line[end])
		return AUTOSYNC_AGREE_INCOMPLETE;
	return -1;
}

int autosync_agree_join(const char *host, const char *spec, uint32_t job,
			uint32_t step, unsigned node, const char *hash,
			char *verdict, size_t len, autosync_error_t *errp)
{
	char line[AUTOSYNC_AGREE_LINE_MAX + 1];
	struct job_agree_spec s;
	int64_t end;
	int fd, n, v;

	if (verdict && len)
		verdict[0] = '\0';
	if (!host || !hash || !valid_hash(hash)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "agree: bad host or hash");
	}
	if (job_agree_parse_spec(spec, &s, errp) < 0)
		return -1;
	end = now_ms() + s.gather_ms + 2000;
	if ((fd = connect_to(host, s.port, end, errp)) < 0)
		return -1;
	n = snprintf(line, sizeof(line), AGREE_MAGIC " %s %u %u %u %s\n",
		     s.token, (unsigned)job, (unsigned)step, node, hash);
	if (wait_fd(fd, POLLOUT, end) < 0 ||
	    send(fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
		int e = errno;
		close(fd);
		errno = e;
		return autosync_errprintf(errp, "agree: send: %s", strerror(e));
	}
	if (read_line(fd, line, sizeof(line), end, errp) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	if ((v = job_agree_parse_verdict(line, hash)) < 0) {
		errno = EPROTO;
		return autosync_errprintf(errp, "agree: not a verdict: '%.64s'",
					  line);
	}
	if (verdict && len)
		snprintf(verdict, len, "%s", line);
	return v;
}
