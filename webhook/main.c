/* main.c - autosync-webhook: the Kubernetes mutating admission webhook
 * (docs/autosync-webhook.8). HTTPS with libmicrohttpd over GnuTLS: POST
 * /mutate answers an AdmissionReview (mutate.h decides), GET /healthz says
 * ok. Bounded: 1 MiB per body, 64 MiB of bodies in all, 1 s per request
 * (a slower or larger upload closes its connection), a fixed thread pool.
 * The certificate and key are read again when their files change (checked
 * at most once a second, at a handshake), so a rotated secret needs no
 * restart; a pair that does not load leaves the old one serving. One JSON
 * line per decision on stdout. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <microhttpd.h>

#include "common/text.h"
#include "mutate.h"

#define MAX_BODY (1u << 20)
#define REQUEST_MS 1000
#define MAX_CERTS 8
#define IDLE_S 30 /* a kept-alive connection between requests */

struct opts {
	const char *cert, *key, *listen;
	unsigned port, threads, max_body, request_ms;
	struct aswh_config cfg;
};

/* ------------------------------------------------------------ TLS pair */

/* A certificate chain and its key. The pairs are kept until exit: GnuTLS
 * may still hold the ones it got for sessions in progress, and rotations
 * are rare; main() frees them all once the daemon has stopped. */
struct pair {
	gnutls_pcert_st pcert[MAX_CERTS];
	unsigned npcert;
	gnutls_privkey_t key;
	struct pair *older;
};

/* The pair in use and the files' identity when it was read. */
static struct {
	pthread_mutex_t lock;
	const char *cert_path, *key_path;
	struct pair *cur;
	struct stat cert_st, key_st;
	struct stat failed_cert_st, failed_key_st; /* the last that failed */
	time_t checked;
} tls = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void free_pairs(void)
{
	while (tls.cur) {
		struct pair *p = tls.cur;
		tls.cur = p->older;
		for (unsigned i = 0; i < p->npcert; i++)
			gnutls_pcert_deinit(&p->pcert[i]);
		gnutls_privkey_deinit(p->key);
		free(p);
	}
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The time for log lines, formatted once a second per thread. */
static const char *log_time(void)
{
	static __thread char ts[32];
	static __thread time_t at = -1;
	time_t now = time(NULL);
	struct tm tm;

	if (now != at) {
		at = now;
		gmtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	return ts;
}

/* One line, one write(2): a pipe (a container's stdout) takes up to
 * PIPE_BUF bytes whole, and Linux keeps a file's offset per write, so
 * short lines may be written side by side (a shared lock). A longer line
 * is written in pieces, so it waits for them and holds them off (the
 * exclusive lock): no line lands inside another. */
static void write_line(const char *line, size_t n)
{
	/* writers first: a long line is not starved by short ones */
	static pthread_rwlock_t out =
	    PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
	int locked = (n > PIPE_BUF ? pthread_rwlock_wrlock(&out)
				   : pthread_rwlock_rdlock(&out)) == 0;

	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, line, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* nowhere to log: the decision still stands */
		line += w;
		n -= (size_t)w;
	}
	if (locked)
		pthread_rwlock_unlock(&out);
}

static void log_line(const char *json)
{
	const char *ts = log_time();
	char buf[PIPE_BUF], *line = buf;
	int n;

	/* the decision object, with the time put first */
	if (json[0] != '{' || json[1] == '}')
		json = "{}";
	n = snprintf(buf, sizeof(buf), "{\"time\":\"%s\"%s%s\n", ts,
		     json[1] == '}' ? "" : ",", json + 1);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf)) {
		if (!(line = malloc((size_t)n + 1)))
			return;
		snprintf(line, (size_t)n + 1, "{\"time\":\"%s\",%s\n", ts,
			 json + 1);
	}
	write_line(line, (size_t)n);
	if (line != buf)
		free(line);
}

static void log_event(const char *event, const char *detail)
{
	char q[600];
	/* detail comes from GnuTLS, errno or a path: quoted (valid UTF-8,
	 * no control characters), then written by jansson like every other
	 * JSON autosync writes */
	json_t *o = json_pack("{s:s, s:s}", "event", event, "detail",
			      asi_quote(detail, q, sizeof(q)));
	char *buf = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER |
					  JSON_ENSURE_ASCII)
		      : NULL;

	log_line(buf ? buf
		     : "{\"event\":\"log\",\"detail\":\"out of memory\"}");
	free(buf);
	json_decref(o);
}

/* the key is the certificate's: a rotation that has replaced one file and
 * not yet the other must not be served (every handshake would fail) */
static int key_matches(struct pair *p)
{
	unsigned char a[64], b[64];
	size_t na = sizeof(a), nb = sizeof(b);
	gnutls_pubkey_t pub = NULL;
	int ok =
	    gnutls_pubkey_init(&pub) == 0 &&
	    gnutls_pubkey_import_privkey(pub, p->key, 0, 0) == 0 &&
	    gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, a, &na) ==
		0 &&
	    gnutls_pubkey_get_key_id(p->pcert[0].pubkey,
				     GNUTLS_KEYID_USE_SHA256, b, &nb) == 0 &&
	    na == nb && !memcmp(a, b, na);

	if (pub)
		gnutls_pubkey_deinit(pub);
	return ok;
}

static int load_pair(const char **why)
{
	struct pair *p = calloc(1, sizeof(*p));
	gnutls_datum_t kd = {NULL, 0};
	struct stat cs, ks;
	int rc;

	if (!p) {
		*why = "out of memory";
		return -1;
	}
	p->npcert = MAX_CERTS;
	if (stat(tls.cert_path, &cs) < 0 || stat(tls.key_path, &ks) < 0) {
		*why = strerror(errno);
		free(p);
		return -1;
	}
	if ((rc = gnutls_pcert_list_import_x509_file(
		 p->pcert, &p->npcert, tls.cert_path, GNUTLS_X509_FMT_PEM, NULL,
		 NULL, 0)) < 0) {
		*why = gnutls_strerror(rc);
		free(p);
		return -1;
	}
	if ((rc = gnutls_load_file(tls.key_path, &kd)) < 0 ||
	    (rc = gnutls_privkey_init(&p->key)) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(
		 p->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		*why = gnutls_strerror(rc);
		gnutls_free(kd.data);
		if (p->key)
			gnutls_privkey_deinit(p->key);
		for (unsigned i = 0; i < p->npcert; i++)
			gnutls_pcert_deinit(&p->pcert[i]);
		free(p);
		return -1;
	}
	gnutls_free(kd.data);
	if (!p->npcert || !key_matches(p)) {
		*why = "the key is not the certificate's";
		gnutls_privkey_deinit(p->key);
		for (unsigned i = 0; i < p->npcert; i++)
			gnutls_pcert_deinit(&p->pcert[i]);
		free(p);
		return -1;
	}
	p->older = tls.cur;
	tls.cur = p;
	tls.cert_st = cs;
	tls.key_st = ks;
	return 0;
}

/* At most once a second: reload when either file changed. */
static void maybe_reload(void)
{
	struct stat cs, ks;
	time_t now = time(NULL);
	const char *why = "";

	if (now == tls.checked)
		return;
	tls.checked = now;
	if (stat(tls.cert_path, &cs) < 0 || stat(tls.key_path, &ks) < 0 ||
	    (same_file(&cs, &tls.cert_st) && same_file(&ks, &tls.key_st)))
		return;
	if (load_pair(&why) == 0) {
		log_event("tls-reloaded", tls.cert_path);
	} else if (!same_file(&cs, &tls.failed_cert_st) ||
		   !same_file(&ks, &tls.failed_key_st)) {
		/* once per pair of files that does not load */
		tls.failed_cert_st = cs;
		tls.failed_key_st = ks;
		log_event("tls-reload-failed", why);
	}
}

static int cert_cb(gnutls_session_t s, const gnutls_datum_t *req_ca, int nreqs,
		   const gnutls_pk_algorithm_t *algos, int nalgos,
		   gnutls_pcert_st **pcert, unsigned *npcert,
		   gnutls_privkey_t *key)
{
	(void)s;
	(void)req_ca;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	pthread_mutex_lock(&tls.lock);
	maybe_reload();
	*pcert = tls.cur->pcert;
	*npcert = tls.cur->npcert;
	*key = tls.cur->key;
	pthread_mutex_unlock(&tls.lock);
	return 0;
}

/* ------------------------------------------------------------ requests */

struct req {
	struct timespec start;
	char *body;
	size_t len; /* also what it counts in 'buffered' */
};

/* Bodies in memory, all requests together: each may hold max_body, and a
 * thousand connections that send most of one and stall would hold a
 * gigabyte; beyond this the webhook answers 503 (or closes) instead. */
#define BUFFERED_MAX ((size_t)64 << 20)
static size_t buffered;

/* 'n' more bytes of bodies in memory, if within BUFFERED_MAX */
static int take_bytes(size_t n)
{
	size_t now = __atomic_add_fetch(&buffered, n, __ATOMIC_RELAXED);

	if (now <= BUFFERED_MAX)
		return 0;
	__atomic_sub_fetch(&buffered, n, __ATOMIC_RELAXED);
	return -1;
}

static void give_bytes(size_t n)
{
	__atomic_sub_fetch(&buffered, n, __ATOMIC_RELAXED);
}

/* the per-request limit as the idle timeout of its connection, in whole
 * seconds (libmicrohttpd's unit), at least 1 */
static unsigned request_s(const struct opts *o)
{
	return (o->request_ms + 999) / 1000;
}

static double since_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* 'own': the body is malloc'ed and MHD frees it (no copy of a 5 KiB
 * answer per review); else MHD copies it. */
static enum MHD_Result reply_body(struct MHD_Connection *c, unsigned status,
				  char *body, int own, const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
	    strlen(body), body,
	    own ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r) {
		if (own)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", type);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *body, const char *type)
{
	return reply_body(c, status, (char *)body, 0, type);
}

static const char *refusal(unsigned status)
{
	switch (status) {
	case MHD_HTTP_CONTENT_TOO_LARGE:
		return "the body is over the limit";
	case MHD_HTTP_REQUEST_TIMEOUT:
		return "the request took over the time limit";
	default:
		return "bodies in memory over the webhook's limit";
	}
}

/* A request refused before its review: one log line, and the answer, or
 * (c NULL, the body still coming) the connection closed at once, so that
 * nobody holds it or its memory by sending slowly or too much. */
static enum MHD_Result refuse(struct MHD_Connection *c, unsigned status)
{
	char line[160];

	snprintf(line, sizeof(line),
		 "{\"decision\":\"bad-request\",\"reason\":\"%s%s\"}",
		 refusal(status), c ? "" : "; connection closed");
	log_line(line);
	return c ? reply(c, status, "{}", "application/json") : MHD_NO;
}

/* The length the client announces, when it does: over the limits, the
 * request is answered before its body is read. */
static unsigned announced(const struct opts *o, struct MHD_Connection *c)
{
	const char *v =
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	unsigned long long n;
	char *end;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n > o->max_body)
		return MHD_HTTP_CONTENT_TOO_LARGE;
	if (__atomic_load_n(&buffered, __ATOMIC_RELAXED) + n > BUFFERED_MAX)
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	return 0; /* counted as it arrives */
}

static enum MHD_Result mutate(const struct opts *o, struct MHD_Connection *c,
			      struct req *q)
{
	char *resp = NULL, *log = NULL;
	enum MHD_Result ret;
	int d;

	if (since_ms(&q->start) > o->request_ms)
		return refuse(c, MHD_HTTP_REQUEST_TIMEOUT);
	d = aswh_review(&o->cfg, q->body ? q->body : "", q->len, &resp, &log);
	if (log)
		log_line(log);
	if (d == ASWH_BAD_REQUEST || !resp) {
		free(resp);
		ret = reply(c, MHD_HTTP_BAD_REQUEST, "{}", "application/json");
	} else {
		ret = reply_body(c, MHD_HTTP_OK, resp, 1, "application/json");
	}
	free(log);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *data,
			      size_t *size, void **ptr)
{
	const struct opts *o = cls;
	struct req *q = *ptr;

	(void)version;
	if (!q) {
		unsigned status;
		if (!(q = calloc(1, sizeof(*q))))
			return MHD_NO;
		clock_gettime(CLOCK_MONOTONIC, &q->start);
		*ptr = q;
		/* a request, not a connection, may idle this long */
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
					  request_s(o));
		if (!strcmp(url, "/mutate") && !strcmp(method, "POST") &&
		    (status = announced(o, c)))
			return refuse(c, status);
		return MHD_YES;
	}
	if (!strcmp(url, "/healthz") && !strcmp(method, "GET"))
		return reply(c, MHD_HTTP_OK, "ok\n", "text/plain");
	if (strcmp(url, "/mutate") || strcmp(method, "POST"))
		return reply(c, MHD_HTTP_NOT_FOUND, "not found\n",
			     "text/plain");
	if (*size) {
		char *b;
		if (since_ms(&q->start) > o->request_ms)
			return refuse(NULL, MHD_HTTP_REQUEST_TIMEOUT);
		if (q->len + *size > o->max_body)
			return refuse(NULL, MHD_HTTP_CONTENT_TOO_LARGE);
		if (take_bytes(*size) < 0)
			return refuse(NULL, MHD_HTTP_SERVICE_UNAVAILABLE);
		if (!(b = realloc(q->body, q->len + *size + 1))) {
			give_bytes(*size);
			return MHD_NO;
		}
		memcpy(b + q->len, data, *size);
		q->body = b;
		q->len += *size;
		b[q->len] = '\0';
		*size = 0;
		return MHD_YES;
	}
	return mutate(o, c, q);
}

static void done(void *cls, struct MHD_Connection *c, void **ptr,
		 enum MHD_RequestTerminationCode code)
{
	struct req *q = *ptr;

	(void)cls;
	if (q && code == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		(void)refuse(NULL, MHD_HTTP_REQUEST_TIMEOUT); /* it stalled */
	if (q) {
		give_bytes(q->len);
		free(q->body);
		free(q);
		*ptr = NULL;
	}
	/* between requests, a kept-alive connection idles as long as before */
	if (c)
		MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
					  (unsigned)IDLE_S);
}

/* ------------------------------------------------------------- options */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: autosync-webhook --cert FILE --key FILE [options]\n"
		"\n"
		"The mutating admission webhook of autosync: adds the init "
		"container that\nplans on the node (autosync init) to pods "
		"that opt in. HTTPS only.\n\n"
		"  --cert FILE          PEM certificate chain (reloaded when "
		"it changes)\n"
		"  --key FILE           PEM private key (reloaded with it)\n"
		"  --listen ADDR        IPv4 address to listen on (default "
		"0.0.0.0)\n"
		"  --port N             (default 8443)\n"
		"  --threads N          request threads (default: one per CPU "
		"it may\n"
		"                       run on, at most 16)\n"
		"  --prefix DOMAIN      annotation and label prefix (default "
		"autosync.dev)\n"
		"  --image IMAGE        the init container's image (default "
		"autosync:%s)\n"
		"  --pull-policy P      its imagePullPolicy (default "
		"IfNotPresent)\n"
		"  --mount PATH         the shared volume's path (default "
		"/autosync)\n"
		"  --site-config NAME   the site config's ConfigMap (default "
		"autosync-site)\n"
		"  --resource NAME      a device resource the init container "
		"requests like\n"
		"                       the app (repeatable; NAME/ is a "
		"prefix; default\n"
		"                       nvidia.com/gpu and rdma/)\n"
		"  --max-body BYTES     (default 1048576)\n"
		"  --request-ms MS      time limit per request (default "
		"1000)\n"
		"  -h, --help\n",
		PACKAGE_VERSION);
}

static int set(char *dst, size_t len, const char *what, const char *v)
{
	if (!*v || strlen(v) >= len) {
		fprintf(stderr, "autosync-webhook: %s: bad value '%.64s'\n",
			what, v);
		return -1;
	}
	snprintf(dst, len, "%s", v);
	return 0;
}

static int number(const char *what, const char *v, unsigned long lo,
		  unsigned long hi, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi) {
		fprintf(stderr,
			"autosync-webhook: %s: bad value '%.64s' (expected "
			"%lu..%lu)\n",
			what, v, lo, hi);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"cert", required_argument, NULL, 'c'},
	    {"key", required_argument, NULL, 'k'},
	    {"listen", required_argument, NULL, 'l'},
	    {"port", required_argument, NULL, 'p'},
	    {"threads", required_argument, NULL, 't'},
	    {"prefix", required_argument, NULL, 'P'},
	    {"image", required_argument, NULL, 'i'},
	    {"pull-policy", required_argument, NULL, 'u'},
	    {"mount", required_argument, NULL, 'm'},
	    {"site-config", required_argument, NULL, 's'},
	    {"resource", required_argument, NULL, 'r'},
	    {"max-body", required_argument, NULL, 'b'},
	    {"request-ms", required_argument, NULL, 'T'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, own_res = 0;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->cert = optarg;
			break;
		case 'k':
			o->key = optarg;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case 'p':
			if (number("--port", optarg, 1, 65535, &o->port) < 0)
				return 2;
			break;
		case 't':
			if (number("--threads", optarg, 1, 256, &o->threads) <
			    0)
				return 2;
			break;
		case 'P':
			/* a DNS subdomain: it becomes label and annotation
			 * keys, and it reaches the log lines unescaped */
			if (strspn(optarg,
				   "abcdefghijklmnopqrstuvwxyz0123456789"
				   ".-") != strlen(optarg) ||
			    set(o->cfg.prefix, sizeof(o->cfg.prefix),
				"--prefix", optarg) < 0) {
				fprintf(stderr,
					"autosync-webhook: --prefix: a DNS "
					"subdomain such as ml.example.com\n");
				return 2;
			}
			break;
		case 'i':
			if (set(o->cfg.image, sizeof(o->cfg.image), "--image",
				optarg) < 0)
				return 2;
			break;
		case 'u':
			if (strcmp(optarg, "Always") &&
			    strcmp(optarg, "IfNotPresent") &&
			    strcmp(optarg, "Never")) {
				fprintf(stderr,
					"autosync-webhook: --pull-policy: bad "
					"value '%.64s' (expected Always, "
					"IfNotPresent or Never)\n",
					optarg);
				return 2;
			}
			set(o->cfg.pull_policy, sizeof(o->cfg.pull_policy),
			    "--pull-policy", optarg);
			break;
		case 'm':
			if (optarg[0] != '/' ||
			    set(o->cfg.mount, sizeof(o->cfg.mount), "--mount",
				optarg) < 0) {
				fprintf(stderr, "autosync-webhook: --mount: "
						"an absolute path\n");
				return 2;
			}
			break;
		case 's':
			if (set(o->cfg.site_config, sizeof(o->cfg.site_config),
				"--site-config", optarg) < 0)
				return 2;
			break;
		case 'r':
			if (!own_res++)
				o->cfg.nresources = 0;
			if (o->cfg.nresources >= ASWH_MAX_RESOURCES ||
			    set(o->cfg.resources[o->cfg.nresources],
				sizeof(o->cfg.resources[0]), "--resource",
				optarg) < 0)
				return 2;
			o->cfg.nresources++;
			break;
		case 'b':
			if (number("--max-body", optarg, 1024, 64u << 20,
				   &o->max_body) < 0)
				return 2;
			break;
		case 'T':
			if (number("--request-ms", optarg, 10, 60000,
				   &o->request_ms) < 0)
				return 2;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !o->cert || !o->key) {
		fprintf(stderr, "autosync-webhook: --cert and --key are "
				"required (see --help)\n");
		return 2;
	}
	return 0;
}

/* ---------------------------------------------------------------- main */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* One request thread per CPU the process may run on: more only take turns
 * on the same cores, and requests queued behind a preempted thread wait a
 * whole time slice (results/2026-12-06-webhook-cjson). */
static unsigned cpu_threads(void)
{
	cpu_set_t set;
	int n =
	    sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 4;

	return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
}

int main(int argc, char **argv)
{
	struct opts o = {.listen = "0.0.0.0",
			 .port = 8443,
			 .threads = cpu_threads(),
			 .max_body = MAX_BODY,
			 .request_ms = REQUEST_MS};
	struct sockaddr_in addr = {.sin_family = AF_INET};
	struct MHD_Daemon *d;
	const char *why = "";
	char line[256];
	int rc;

	aswh_config_default(&o.cfg);
	if ((rc = parse(argc, argv, &o)))
		return rc;
	if (inet_pton(AF_INET, o.listen, &addr.sin_addr) != 1) {
		fprintf(stderr,
			"autosync-webhook: --listen: bad address '%s'\n",
			o.listen);
		return 2;
	}
	addr.sin_port = htons((uint16_t)o.port);
	tls.cert_path = o.cert;
	tls.key_path = o.key;
	if (load_pair(&why) < 0) {
		fprintf(stderr, "autosync-webhook: %s, %s: %s\n", o.cert, o.key,
			why);
		return 1;
	}
	tls.checked = time(NULL);
	d = MHD_start_daemon(
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS,
	    (uint16_t)o.port, NULL, NULL, handle, &o, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&addr, MHD_OPTION_HTTPS_CERT_CALLBACK, cert_cb,
	    MHD_OPTION_THREAD_POOL_SIZE, o.threads,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_S,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)1000,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024),
	    MHD_OPTION_NOTIFY_COMPLETED, done, NULL, MHD_OPTION_END);
	if (!d) {
		free_pairs();
		fprintf(stderr,
			"autosync-webhook: cannot listen on %s:%u (in use, or "
			"TLS unavailable)\n",
			o.listen, o.port);
		return 1;
	}
	snprintf(line, sizeof(line),
		 "{\"event\":\"listening\",\"address\":\"%s:%u\","
		 "\"prefix\":\"%s\"}",
		 o.listen, o.port, o.cfg.prefix);
	log_line(line);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	while (!stop)
		pause();
	MHD_stop_daemon(d);
	free_pairs();
	log_line("{\"event\":\"stopped\"}");
	return 0;
}
