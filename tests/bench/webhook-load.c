/* webhook-load.c - load generator for autosync-webhook (a benchmark, not a
 * test): C client threads, each on one keep-alive HTTPS connection
 * (GnuTLS), POST the same AdmissionReview body until a fixed total of
 * requests is sent, and every request's latency (send to full response)
 * is kept. Prints the count, HTTP 200s, answers that allow, denials,
 * errors (dropped: no full response) and latency percentiles.
 * usage: webhook-load HOST PORT CAFILE BODYFILE CLIENTS REQUESTS */
#define _GNU_SOURCE /* strcasestr */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

static const char *host, *cafile;
static int port;
static char *req;
static size_t reqlen;
static long total;
static long next; /* requests handed out */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double *lat;
static long nok, nallowed, ndenied, nerr;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long take(void)
{
	long i;

	pthread_mutex_lock(&lock);
	i = next < total ? next++ : -1;
	pthread_mutex_unlock(&lock);
	return i;
}

/* Read one HTTP/1.1 response (Content-Length framing) into buf. */
static int read_response(gnutls_session_t s, char *buf, size_t cap, int *status)
{
	size_t n = 0, want = 0;
	char *hdr_end = NULL;

	for (;;) {
		ssize_t r = gnutls_record_recv(s, buf + n, cap - n - 1);
		if (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED)
			continue;
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = '\0';
		if (!hdr_end && (hdr_end = strstr(buf, "\r\n\r\n"))) {
			char *cl = strcasestr(buf, "Content-Length:");
			if (!cl || cl > hdr_end)
				return -1;
			want = (size_t)(hdr_end + 4 - buf) +
			       strtoul(cl + 15, NULL, 10);
			*status = atoi(buf + 9);
		}
		if (hdr_end && n >= want)
			return 0;
		if (n + 1 >= cap)
			return -1;
	}
}

static gnutls_session_t connect_tls(gnutls_certificate_credentials_t cred)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	gnutls_session_t s;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	inet_pton(AF_INET, host, &a.sin_addr);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return NULL;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	gnutls_init(&s, GNUTLS_CLIENT);
	gnutls_set_default_priority(s);
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
	gnutls_session_set_verify_cert(s, NULL, 0); /* IP SAN checked */
	gnutls_transport_set_int(s, fd);
	if (gnutls_handshake(s) < 0) {
		gnutls_deinit(s);
		close(fd);
		return NULL;
	}
	return s;
}

static void *client(void *arg)
{
	gnutls_certificate_credentials_t cred = arg;
	gnutls_session_t s = connect_tls(cred);
	char *buf = malloc(1 << 20);
	long i;

	while ((i = take()) >= 0) {
		double t0 = now();
		int status = 0;

		if (!s ||
		    gnutls_record_send(s, req, reqlen) != (ssize_t)reqlen ||
		    read_response(s, buf, 1 << 20, &status) < 0) {
			__atomic_add_fetch(&nerr, 1, __ATOMIC_RELAXED);
			lat[i] = -1;
			continue;
		}
		lat[i] = now() - t0;
		if (status == 200)
			__atomic_add_fetch(&nok, 1, __ATOMIC_RELAXED);
		if (strstr(buf, "\"allowed\":true"))
			__atomic_add_fetch(&nallowed, 1, __ATOMIC_RELAXED);
		else if (strstr(buf, "\"allowed\":false"))
			__atomic_add_fetch(&ndenied, 1, __ATOMIC_RELAXED);
	}
	if (s) {
		gnutls_bye(s, GNUTLS_SHUT_WR);
		close(gnutls_transport_get_int(s));
		gnutls_deinit(s);
	}
	free(buf);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	gnutls_certificate_credentials_t cred;
	FILE *fp;
	char *body;
	long blen, n = 0;
	int clients;
	pthread_t *th;
	double t0, wall, *ok;

	if (argc != 7) {
		fprintf(stderr, "usage: webhook-load HOST PORT CAFILE BODYFILE "
				"CLIENTS REQUESTS\n");
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	cafile = argv[3];
	clients = atoi(argv[5]);
	total = atol(argv[6]);
	if (!(fp = fopen(argv[4], "rb")))
		return perror(argv[4]), 1;
	fseek(fp, 0, SEEK_END);
	blen = ftell(fp);
	rewind(fp);
	body = malloc((size_t)blen);
	if (fread(body, 1, (size_t)blen, fp) != (size_t)blen)
		return 1;
	fclose(fp);
	req = malloc((size_t)blen + 512);
	reqlen = (size_t)sprintf(req,
				 "POST /mutate HTTP/1.1\r\nHost: %s:%d\r\n"
				 "Content-Type: application/json\r\n"
				 "Content-Length: %ld\r\n\r\n",
				 host, port, blen);
	memcpy(req + reqlen, body, (size_t)blen);
	reqlen += (size_t)blen;
	lat = calloc((size_t)total, sizeof(double));
	gnutls_global_init();
	gnutls_certificate_allocate_credentials(&cred);
	if (gnutls_certificate_set_x509_trust_file(cred, cafile,
						   GNUTLS_X509_FMT_PEM) <= 0)
		return fprintf(stderr, "%s: no CA\n", cafile), 1;
	th = calloc((size_t)clients, sizeof(*th));
	t0 = now();
	for (int i = 0; i < clients; i++)
		pthread_create(&th[i], NULL, client, cred);
	for (int i = 0; i < clients; i++)
		pthread_join(th[i], NULL);
	wall = now() - t0;
	ok = malloc((size_t)total * sizeof(double));
	for (long i = 0; i < total; i++)
		if (lat[i] >= 0)
			ok[n++] = lat[i] * 1e3;
	qsort(ok, (size_t)n, sizeof(double), cmp);
	printf("requests %ld clients %d wall_s %.3f rps %.0f http200 %ld "
	       "allowed %ld denied %ld dropped %ld",
	       total, clients, wall, (double)n / wall, nok, nallowed, ndenied,
	       nerr);
	if (n)
		printf(" p50_ms %.3f p90_ms %.3f p99_ms %.3f max_ms %.3f",
		       ok[n / 2], ok[n * 9 / 10], ok[n * 99 / 100], ok[n - 1]);
	printf("\n");
	return 0;
}
