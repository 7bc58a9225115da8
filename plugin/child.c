/* child.c - see child.h */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "autosync/job.h"
#include "child.h"
#include "common/text.h"

#if defined(__SANITIZE_ADDRESS__)
#define AS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AS_SANITIZED 1
#endif
#endif

/* Result items: "T LEN\n" then LEN bytes. T: E (every task: NAME=VALUE),
 * R (a rank: "R NAME=VALUE"), H ("PLANHASH TOPOHASH PLAN_MS"), S (the
 * summary), F (the feedback record), W (a warning of the pipeline's: it
 * planned, without something it was asked for), X (an error message), K
 * (done). */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ------------------------------------------------------------ the child */

static const char *env_lookup(const char *name, void *arg)
{
	char *const *env = arg;
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], name, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int send_item(int fd, char tag, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) : 0;
	char head[32];
	int n = snprintf(head, sizeof(head), "%c %zu\n", tag,
			 la + (b ? 1 + lb : 0));

	return write_all(fd, head, (size_t)n) < 0 || write_all(fd, a, la) < 0 ||
		       (b &&
			(write_all(fd, "=", 1) < 0 || write_all(fd, b, lb) < 0))
		   ? -1
		   : 0;
}

/* For good: the real, effective and saved ids all become the user's. */
static int drop_privileges(uid_t uid, gid_t gid)
{
	if (getegid() != gid && setresgid(gid, gid, gid) < 0)
		return -1;
	if (setresgid(gid, gid, gid) < 0 && getgid() != gid)
		return -1;
	if (setresuid(uid, uid, uid) < 0)
		return -1;
	return geteuid() == uid && getuid() == uid ? 0 : -1;
}

static void limit(const struct as_child_in *in)
{
	sigset_t none;

	/* slurmstepd's handlers and mask are not ours: the deadline signal
	 * kills, whatever the parent did with SIGALRM */
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	alarm(in->deadline_ms / 1000 + 2);
#ifndef AS_SANITIZED /* ASan reserves terabytes of address space */
	if (in->max_memory) {
		struct rlimit rl = {in->max_memory, in->max_memory};
		(void)setrlimit(RLIMIT_AS, &rl);
	}
#endif
}

/* the pipeline's warnings, kept for the parent (its info notes are not) */
struct warnings {
	char text[AS_CHILD_MAX_WARNINGS][AUTOSYNC_ERROR_LEN];
	size_t n;
};

static void keep_warning(int level, const char *msg, void *arg)
{
	struct warnings *w = arg;

	if (level <= AUTOSYNC_LOG_WARNING && w->n < AS_CHILD_MAX_WARNINGS)
		snprintf(w->text[w->n++], sizeof(w->text[0]), "%s", msg);
}

static int run_pipeline(const struct as_child_in *in, autosync_job_t *j,
			struct warnings *w, autosync_error_t *err)
{
	autosync_job_set_getenv(j, env_lookup, (void *)in->env);
	autosync_job_set_log(j, keep_warning, w);
	return autosync_job_set_site(j, in->site, err) < 0 ||
		       autosync_job_set_model(j, in->model, err) < 0 ||
		       autosync_job_set_plan_file(j, in->plan_file, err) < 0 ||
		       autosync_job_set_compression(j, in->compress, err) < 0 ||
		       autosync_job_set_nodes(j, in->nnodes ? in->nnodes : 1,
					      err) < 0 ||
		       autosync_job_set_tasks_per_node(j, in->ntasks, err) <
			   0 ||
		       (in->cwd && in->cwd[0] &&
			autosync_job_set_cwd(j, in->cwd, err) < 0) ||
		       autosync_job_set_dir(j, in->jobdir, err) < 0 ||
		       autosync_job_run(j, err) < 0 ||
		       autosync_job_write_files(j, err) < 0
		   ? -1
		   : 0;
}

static int send_results(int fd, const autosync_job_t *j,
			const struct warnings *w, autosync_error_t *err)
{
	autosync_feedback_rec_t *rec = calloc(1, sizeof(*rec));
	char *line = NULL, h[80], rank[24];
	size_t len = 0;
	int rv = -1;

	for (size_t i = 0; i < autosync_job_nenv(j); i++)
		if (send_item(fd, 'E', autosync_job_env(j, i)->name,
			      autosync_job_env(j, i)->value) < 0)
			goto out;
	for (unsigned r = 0; r < autosync_job_nranks(j); r++)
		for (size_t i = 0; i < autosync_job_rank_nenv(j, r); i++) {
			const autosync_var_t *v =
			    autosync_job_rank_env(j, r, i);
			char nv[512];
			snprintf(rank, sizeof(rank), "%u", r);
			snprintf(nv, sizeof(nv), "%s %s", rank, v->name);
			if (send_item(fd, 'R', nv, v->value) < 0)
				goto out;
		}
	snprintf(h, sizeof(h), "%s %s %.6f",
		 autosync_plan_hash(autosync_job_plan(j)),
		 autosync_job_topo_hash(j)[0] ? autosync_job_topo_hash(j) : "-",
		 autosync_job_plan_ms(j));
	if (send_item(fd, 'H', h, NULL) < 0 ||
	    send_item(fd, 'S', autosync_job_summary(j), NULL) < 0)
		goto out;
	/* the plan's side only: slurmstepd adds the job's, from Slurm */
	if (rec && autosync_job_feedback(j, rec, err) == 0 &&
	    autosync_feedback_format_part(rec, AUTOSYNC_FEEDBACK_PART_PLAN,
					  &line, &len, err) == 0) {
		line[strcspn(line, "\n")] = '\0';
		if (send_item(fd, 'F', line, NULL) < 0)
			goto out;
	}
	for (size_t i = 0; i < w->n; i++)
		if (send_item(fd, 'W', w->text[i], NULL) < 0)
			goto out;
	rv = send_item(fd, 'K', "", NULL);
out:
	free(line);
	free(rec);
	return rv;
}

static void child_main(int fd, const struct as_child_in *in)
{
	autosync_error_t err = {.text = ""};
	static struct warnings w;
	autosync_job_t *j = NULL;
	int ok;

	if (drop_privileges(in->uid, in->gid) < 0) {
		send_item(fd, 'X', "cannot drop to the job's user", NULL);
		_exit(1);
	}
	limit(in);
	ok = (j = autosync_job_create(&err)) &&
	     run_pipeline(in, j, &w, &err) == 0;
	if (!ok || send_results(fd, j, &w, &err) < 0)
		send_item(fd, 'X', err.text[0] ? err.text : "out of memory",
			  NULL);
	/* no atexit handlers, no stdio flush: they are slurmstepd's */
	_exit(ok ? 0 : 1);
}

/* ------------------------------------------------------------ the parent */

/* Read everything the child sends until EOF, the cap or the deadline. */
static int read_result(int fd, double deadline, char **bufp, size_t *lenp,
		       autosync_error_t *err)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap + 1);

	if (!buf) {
		errno = ENOMEM;
		return autosync_errprintf(err, "out of memory");
	}
	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		double left = deadline - now_ms();
		ssize_t r;
		int pr;

		if (left <= 0 ||
		    (pr = poll(&p, 1, (int)(left < 1 ? 1 : left))) == 0) {
			free(buf);
			errno = ETIME;
			return -2;
		}
		if (pr < 0 && errno == EINTR)
			continue;
		if (len == cap) {
			char *nb;
			if (cap >= AS_CHILD_MAX_RESULT) {
				free(buf);
				errno = EFBIG;
				return autosync_errprintf(
				    err,
				    "the planning child sent more than %u "
				    "bytes",
				    AS_CHILD_MAX_RESULT);
			}
			cap *= 2;
			if (!(nb = realloc(buf, cap + 1))) {
				free(buf);
				errno = ENOMEM;
				return autosync_errprintf(err, "out of memory");
			}
			buf = nb;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

static int add_var(struct as_child_var **arr, size_t *n, const char *nv,
		   size_t len)
{
	const char *eq = memchr(nv, '=', len);
	struct as_child_var *a;

	if (!eq || !(a = realloc(*arr, (*n + 1) * sizeof(*a))))
		return -1;
	*arr = a;
	a[*n].name = strndup(nv, (size_t)(eq - nv));
	a[*n].value = strndup(eq + 1, len - (size_t)(eq - nv) - 1);
	if (!a[*n].name || !a[*n].value) {
		free(a[*n].name);
		free(a[*n].value);
		return -1;
	}
	(*n)++;
	return 0;
}

static int add_rank_var(struct as_child_out *out, const char *p, size_t len)
{
	char *end;
	unsigned long r = strtoul(p, &end, 10);

	if (end == p || *end != ' ' || r >= AUTOSYNC_JOB_MAX_RANKS)
		return -1;
	if (r >= out->nranks) {
		size_t *n = realloc(out->rank_n, (r + 1) * sizeof(*n));
		struct as_child_var **v;
		if (!n)
			return -1;
		out->rank_n = n;
		v = realloc(out->rank_env, (r + 1) * sizeof(*v));
		if (!v)
			return -1;
		out->rank_env = v;
		for (unsigned i = out->nranks; i <= r; i++) {
			out->rank_n[i] = 0;
			out->rank_env[i] = NULL;
		}
		out->nranks = (unsigned)r + 1;
	}
	end++;
	return add_var(&out->rank_env[r], &out->rank_n[r], end,
		       len - (size_t)(end - p));
}

/* One item into 'out'; -1 on anything unexpected. */
static int take_item(struct as_child_out *out, char tag, const char *p,
		     size_t len, int *done, autosync_error_t *err)
{
	switch (tag) {
	case 'E':
		return add_var(&out->env, &out->nenv, p, len);
	case 'R':
		return add_rank_var(out, p, len);
	case 'H':
		return sscanf(p, "%16s %16s %lf", out->plan_hash,
			      out->topo_hash, &out->plan_ms) == 3
			   ? 0
			   : -1;
	case 'S':
		free(out->summary);
		return (out->summary = strndup(p, len)) ? 0 : -1;
	case 'F':
		free(out->record);
		return (out->record = strndup(p, len)) ? 0 : -1;
	case 'W':
		if (out->nwarnings >= AS_CHILD_MAX_WARNINGS)
			return -1;
		return (out->warnings[out->nwarnings] = strndup(p, len))
			   ? (out->nwarnings++, 0)
			   : -1;
	case 'X':
		autosync_errprintf(err, "%.*s", (int)(len < 400 ? len : 400),
				   p);
		return -2;
	case 'K':
		*done = 1;
		return 0;
	default:
		return -1;
	}
}

/* Every variable the child set must be one the pipeline may set. */
static int check_vars(struct as_child_out *out, autosync_error_t *err)
{
	char q[96];

	for (size_t i = 0; i < out->nenv; i++)
		if (!autosync_job_env_allowed(out->env[i].name, 0)) {
			errno = EPERM;
			return autosync_errprintf(
			    err,
			    "the planning child set '%s', which autosync "
			    "never sets",
			    asi_quote(out->env[i].name, q, sizeof(q)));
		}
	for (unsigned r = 0; r < out->nranks; r++)
		for (size_t i = 0; i < out->rank_n[r]; i++)
			if (!autosync_job_env_allowed(out->rank_env[r][i].name,
						      1)) {
				errno = EPERM;
				return autosync_errprintf(
				    err,
				    "the planning child set '%s' for a "
				    "rank, which autosync never sets",
				    asi_quote(out->rank_env[r][i].name, q,
					      sizeof(q)));
			}
	if (strlen(out->plan_hash) != 16) {
		errno = EINVAL;
		return autosync_errprintf(err,
					  "the planning child sent no plan");
	}
	if (!strcmp(out->topo_hash, "-"))
		out->topo_hash[0] = '\0';
	return 0;
}

int as_child_parse_result(const char *buf, size_t len, struct as_child_out *out,
			  autosync_error_t *err)
{
	size_t off = 0;
	int done = 0;

	while (off < len) {
		const char *nl;
		char tag, *end, *item;
		unsigned long n;
		int rc;

		if (!(nl = memchr(buf + off, '\n', len - off)) ||
		    nl - (buf + off) < 3 || buf[off + 1] != ' ')
			break;
		tag = buf[off];
		if (buf[off + 2] < '0' || buf[off + 2] > '9')
			break;
		n = strtoul(buf + off + 2, &end, 10);
		if (end != nl || n > len - (size_t)(nl + 1 - buf))
			break;
		/* items are C strings: a NUL inside one is a forgery */
		if (memchr(nl + 1, '\0', n))
			break;
		/* every item as a C string of its own: nothing reads past it */
		if (!(item = strndup(nl + 1, n)))
			break;
		rc = take_item(out, tag, item, n, &done, err);
		free(item);
		if (rc == -2)
			return -1;
		if (rc < 0)
			break;
		off = (size_t)(nl + 1 - buf) + n;
	}
	if (!done) {
		errno = EPROTO;
		return autosync_errprintf(err,
					  "the planning child's result does "
					  "not parse");
	}
	return check_vars(out, err);
}

/* How long slurmstepd waits for the child to be gone once it has sent its
 * result or been killed. A process in an uninterruptible wait (a file on
 * a hung FUSE or NFS mount) dies only when the file system answers: the
 * step does not wait for that, and the child is left to slurmstepd. */
#define REAP_MS 200

static pid_t wait_bounded(pid_t pid, int *st)
{
	for (unsigned t = 0;; t++) {
		pid_t w = waitpid(pid, st, WNOHANG);
		if (w > 0 || (w < 0 && errno != EINTR))
			return w;
		if (t >= REAP_MS)
			return 0;
		usleep(1000);
	}
}

/* The child's end: a normal exit, or why not. */
static int reap(pid_t pid, int killed, const struct as_child_in *in,
		autosync_error_t *err)
{
	int st = 0;
	pid_t w;

	if (killed)
		kill(pid, SIGKILL);
	if ((w = wait_bounded(pid, &st)) == 0 && !killed) {
		/* its result is in; it does not exit */
		kill(pid, SIGKILL);
		(void)wait_bounded(pid, &st);
		return 0;
	}
	if (killed) {
		errno = ETIME;
		return autosync_errprintf(err,
					  "planning did not finish within "
					  "the site's budget of %u ms; stopped",
					  in->deadline_ms);
	}
	/* ECHILD: slurmstepd reaped it; the result says how it went */
	if (w == pid && WIFSIGNALED(st)) {
		errno = ECHILD;
		return autosync_errprintf(
		    err, "the planning child died of signal %d%s", WTERMSIG(st),
		    WTERMSIG(st) == SIGALRM ? " (its deadline)" : "");
	}
	return 0;
}

int as_child_plan(const struct as_child_in *in, struct as_child_out *out,
		  autosync_error_t *err)
{
	double t0 = now_ms();
	int p[2], rc;
	char *buf = NULL;
	size_t len = 0;
	pid_t pid;

	if (!in || !out || !in->jobdir) {
		errno = EINVAL;
		return autosync_errprintf(err, "child_plan: invalid argument");
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return autosync_errprintf(err, "pipe: %s", strerror(errno));
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return autosync_errprintf(err, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(p[0]);
		child_main(p[1], in);
	}
	close(p[1]);
	rc = read_result(p[0], t0 + in->deadline_ms, &buf, &len, err);
	close(p[0]);
	if (reap(pid, rc == -2, in, err) < 0 || rc < 0) {
		free(buf);
		return -1;
	}
	rc = as_child_parse_result(buf, len, out, err);
	if (rc < 0)
		as_child_out_free(out);
	free(buf);
	out->total_ms = now_ms() - t0;
	return rc;
}

void as_child_out_free(struct as_child_out *out)
{
	if (!out)
		return;
	for (size_t i = 0; i < out->nenv; i++) {
		free(out->env[i].name);
		free(out->env[i].value);
	}
	free(out->env);
	for (unsigned r = 0; r < out->nranks; r++) {
		for (size_t i = 0; i < out->rank_n[r]; i++) {
			free(out->rank_env[r][i].name);
			free(out->rank_env[r][i].value);
		}
		free(out->rank_env[r]);
	}
	free(out->rank_env);
	free(out->rank_n);
	free(out->summary);
	free(out->record);
	for (size_t i = 0; i < out->nwarnings; i++)
		free(out->warnings[i]);
	memset(out, 0, sizeof(*out));
}

const char *as_child_env(const struct as_child_out *out, const char *name)
{
	for (size_t i = 0; out && i < out->nenv; i++)
		if (!strcmp(out->env[i].name, name))
			return out->env[i].value;
	return NULL;
}
