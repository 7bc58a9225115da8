/* webhook-load.c - load generator for autosync-webhook (a benchmark, not a
 * test): C keep-alive HTTPS connections (GnuTLS) POST the same
 * AdmissionReview body, closed loop (a connection sends its next request
 * when the previous answer is complete), until a fixed total of requests is
 * sent; every request's latency (send to full response) is kept.
 *
 * All connections finish their TLS handshakes before the first request is
 * sent, so that no request waits behind another client's handshake: the
 * clients are keep-alive, the handshake is not part of a request. One
 * thread drives all connections through epoll (as wrk or h2load do) rather
 * than a thread per client, so that the generator's own context switches
 * take as little as possible of the CPU it shares with the webhook.
 *
 * Prints the count, HTTP 200s, answers that allow, denials, errors
 * (dropped: no full response, including requests never sent because
 * their connection failed) and latency percentiles.
 * usage: webhook-load HOST PORT CAFILE BODYFILE CLIENTS REQUESTS */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#define BUFCAP (1 << 20)

struct conn {
	gnutls_session_t s;
	int fd;
	long id;     /* the request in flight, -1 when none */
	double t0;   /* when it was sent */
	size_t n;    /* bytes of its answer read so far */
	size_t want; /* the answer's full length, 0 while headers are open */
	int status;  /* its HTTP status */
	char *buf;
};

static const char *host;
static int port;
static char *req;
static size_t reqlen;
static long total, next, done;
static double *lat;
static long nok, nallowed, ndenied, nerr;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int connect_tls(struct conn *c, gnutls_certificate_credentials_t cred)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM, 0);
	inet_pton(AF_INET, host, &a.sin_addr);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
	gnutls_set_default_priority(c->s);
	gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, cred);
	gnutls_session_set_verify_cert(c->s, NULL, 0); /* IP SAN checked */
	gnutls_transport_set_int(c->s, c->fd);
	/* blocking handshake, before any request is timed */
	if (gnutls_handshake(c->s) < 0)
		return -1;
	return fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
}

/* the next request on c, or none when all are handed out */
static int start(struct conn *c)
{
	ssize_t r;

	c->id = next < total ? next++ : -1;
	if (c->id < 0)
		return 0;
	c->n = c->want = 0;
	c->t0 = now();
	do /* 1.3 KiB on loopback: the socket buffer takes it at once */
		r = gnutls_record_send(c->s, req, reqlen);
	while (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED);
	return r == (ssize_t)reqlen ? 0 : -1;
}

static void fail(struct conn *c)
{
	if (c->id >= 0)
		done++;
	c->id = -1;
	if (c->s) {
		close(c->fd); /* epoll forgets it */
		gnutls_deinit(c->s);
		c->s = NULL;
	}
}

static void finish(struct conn *c)
{
	lat[c->id] = now() - c->t0;
	done++;
	if (c->status == 200)
		nok++;
	if (strstr(c->buf, "\"allowed\":true"))
		nallowed++;
	else if (strstr(c->buf, "\"allowed\":false"))
		ndenied++;
	if (start(c) < 0)
		fail(c);
}

/* Read what is there of c's answer (Content-Length framing); GnuTLS may
 * hold decrypted bytes the socket no longer shows, so read until AGAIN. */
static void readable(struct conn *c)
{
	while (c->id >= 0) {
		ssize_t r =
		    gnutls_record_recv(c->s, c->buf + c->n, BUFCAP - c->n - 1);
		char *h;

		if (r == GNUTLS_E_AGAIN)
			return;
		if (r == GNUTLS_E_INTERRUPTED)
			continue;
		if (r <= 0 || c->n + (size_t)r + 1 >= BUFCAP)
			return fail(c);
		c->n += (size_t)r;
		c->buf[c->n] = '\0';
		if (!c->want && (h = strstr(c->buf, "\r\n\r\n"))) {
			char *cl = strcasestr(c->buf, "Content-Length:");
			if (!cl || cl > h)
				return fail(c);
			c->want = (size_t)(h + 4 - c->buf) +
				  strtoul(cl + 15, NULL, 10);
			c->status = atoi(c->buf + 9);
		}
		if (c->want && c->n >= c->want)
			finish(c);
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static char *slurp(const char *path, long *len)
{
	FILE *fp = fopen(path, "rb");
	char *b = NULL;

	if (fp && fseek(fp, 0, SEEK_END) == 0 && (*len = ftell(fp)) > 0 &&
	    fseek(fp, 0, SEEK_SET) == 0 && (b = malloc((size_t)*len)) &&
	    fread(b, 1, (size_t)*len, fp) != (size_t)*len) {
		free(b);
		b = NULL;
	}
	if (fp)
		fclose(fp);
	return b;
}

static void report(int clients, double wall)
{
	double *ok = malloc((size_t)total * sizeof(double));
	long n = 0;

	for (long i = 0; i < total; i++)
		if (lat[i] >= 0)
			ok[n++] = lat[i] * 1e3;
	nerr = total - n;
	qsort(ok, (size_t)n, sizeof(double), cmp);
	printf("requests %ld clients %d wall_s %.3f rps %.0f http200 %ld "
	       "allowed %ld denied %ld dropped %ld",
	       total, clients, wall, (double)n / wall, nok, nallowed, ndenied,
	       nerr);
	if (n)
		printf(" p50_ms %.3f p90_ms %.3f p99_ms %.3f max_ms %.3f",
		       ok[n / 2], ok[n * 9 / 10], ok[n * 99 / 100], ok[n - 1]);
	printf("\n");
	free(ok);
}

int main(int argc, char **argv)
{
	gnutls_certificate_credentials_t cred;
	struct epoll_event ev[256];
	struct conn *c;
	char *body;
	long blen = 0;
	int clients, ep;
	double t0;

	if (argc != 7) {
		fprintf(stderr, "usage: webhook-load HOST PORT CAFILE BODYFILE "
				"CLIENTS REQUESTS\n");
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	clients = atoi(argv[5]);
	total = atol(argv[6]);
	if (clients < 1 || total < 1 || !(body = slurp(argv[4], &blen)))
		return fprintf(stderr, "%s: cannot read\n", argv[4]), 1;
	req = malloc((size_t)blen + 512);
	reqlen = (size_t)sprintf(req,
				 "POST /mutate HTTP/1.1\r\nHost: %s:%d\r\n"
				 "Content-Type: application/json\r\n"
				 "Content-Length: %ld\r\n\r\n",
				 host, port, blen);
	memcpy(req + reqlen, body, (size_t)blen);
	reqlen += (size_t)blen;
	lat = malloc((size_t)total * sizeof(double));
	for (long i = 0; i < total; i++)
		lat[i] = -1; /* dropped until answered */
	c = calloc((size_t)clients, sizeof(*c));
	gnutls_global_init();
	gnutls_certificate_allocate_credentials(&cred);
	if (gnutls_certificate_set_x509_trust_file(cred, argv[3],
						   GNUTLS_X509_FMT_PEM) <= 0)
		return fprintf(stderr, "%s: no CA\n", argv[3]), 1;
	ep = epoll_create1(0);
	for (int i = 0; i < clients; i++) {
		struct epoll_event e = {.events = EPOLLIN, .data.ptr = &c[i]};
		c[i].id = -1;
		c[i].buf = malloc(BUFCAP);
		if (connect_tls(&c[i], cred) < 0 ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &e) < 0)
			return fprintf(stderr, "client %d: cannot connect\n",
				       i),
			       1;
	}
	t0 = now();
	for (int i = 0; i < clients; i++)
		if (start(&c[i]) < 0)
			fail(&c[i]);
	while (done < total) {
		int k = epoll_wait(ep, ev, 256, 10000);
		if (k <= 0) /* ten seconds without an answer: the rest drop */
			break;
		for (int i = 0; i < k; i++)
			readable(ev[i].data.ptr);
	}
	report(clients, now() - t0);
	return 0;
}
