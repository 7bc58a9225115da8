/* report.c - what a job reports of its own steps (AUTOSYNC_REPORT), read
 * into a feedback record: one step time in seconds per line, and "plan_hash
 * HEX16" lines naming the plan the steps ran with (the PyTorch adapter
 * writes one). The file is the user's: every line is checked, and a long
 * report streams. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/feedback.h"

#define VALUE_MAX_LEN 63  /* a step time is a short number */
#define LINE_MAX_LEN 4096 /* a line, blanks and comment included */

struct acc {
	autosync_feedback_rec_t *r;
	double sum;
	unsigned long line;
};

static void acc_start(struct acc *a, autosync_feedback_rec_t *r)
{
	a->r = r;
	a->sum = 0;
	a->line = 0;
	r->report_plan_hash[0] = '\0';
	r->nmeasured = 0;
	r->measured_count = 0;
	r->measured_mean = 0;
}

/* "plan_hash HEX16": every such line names the same plan */
static int plan_hash_line(struct acc *a, const char *v, autosync_error_t *errp)
{
	char *dst = a->r->report_plan_hash;

	while (*v == ' ' || *v == '\t')
		v++;
	if (strlen(v) != 16 || strspn(v, "0123456789abcdef") != 16) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "line %lu: plan_hash: '%.20s' is "
					  "not 16 hex digits",
					  a->line, v);
	}
	if (dst[0] && strcmp(dst, v)) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "line %lu: plan_hash %s after "
					  "plan_hash %s",
					  a->line, v, dst);
	}
	memcpy(dst, v, 17);
	return 0;
}

/* One line (not NUL-terminated, no newline). */
static int acc_line(struct acc *a, const char *p, size_t n,
		    autosync_error_t *errp)
{
	char tmp[VALUE_MAX_LEN + 1], *end;
	double v;

	a->line++;
	if (n > LINE_MAX_LEN) {
		errno = EINVAL;
		return autosync_errprintf(errp, "line %lu: too long", a->line);
	}
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	while (n && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	if (!n || *p == '#')
		return 0;
	if (n > VALUE_MAX_LEN || memchr(p, '\0', n)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "line %lu: %s", a->line,
					  n > VALUE_MAX_LEN ? "too long"
							    : "a NUL byte");
	}
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	if (!strncmp(tmp, "plan_hash", 9))
		return plan_hash_line(a, tmp + 9, errp);
	errno = 0;
	v = strtod(tmp, &end);
	/* the range a record takes: what is read here is always written */
	if (errno || *end || !isfinite(v) || v < AUTOSYNC_FEEDBACK_MIN_STEP ||
	    v > AUTOSYNC_FEEDBACK_MAX_STEP) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "line %lu: not a step time in "
					  "seconds (1 us to 1 h): '%.32s'",
					  a->line, tmp);
	}
	if (a->r->nmeasured < AUTOSYNC_FEEDBACK_MAX_MEASURED)
		a->r->measured[a->r->nmeasured++] = v;
	a->r->measured_count++;
	a->sum += v;
	return 0;
}

static int acc_end(struct acc *a)
{
	autosync_feedback_rec_t *r = a->r;

	if (r->measured_count)
		r->measured_mean = a->sum / (double)r->measured_count;
	return (int)(r->measured_count > 0x7fffffff ? 0x7fffffff
						    : r->measured_count);
}

/* A bad line ends the report: the steps before it stay the record's (as
 * when the report is cut at its size limit), and the message says so.
 * -1 with errno EINVAL. */
static int acc_bad(struct acc *a, autosync_error_t *errp)
{
	char why[AUTOSYNC_ERROR_LEN];

	(void)acc_end(a);
	snprintf(why, sizeof(why), "%s", errp ? errp->text : "");
	errno = EINVAL;
	return autosync_errprintf(
	    errp, "%s; the %llu step(s) before it are kept", why,
	    (unsigned long long)a->r->measured_count);
}

int autosync_feedback_parse_report(const char *buf, autosync_feedback_rec_t *r,
				   autosync_error_t *errp)
{
	struct acc a;

	if (!buf || !r) {
		errno = EINVAL;
		return autosync_errprintf(errp, "report: invalid argument");
	}
	acc_start(&a, r);
	while (*buf) {
		const char *nl = strchr(buf, '\n');
		size_t n = nl ? (size_t)(nl - buf) : strlen(buf);

		if (acc_line(&a, buf, n, errp) < 0)
			return acc_bad(&a, errp);
		if (!nl)
			break;
		buf = nl + 1;
	}
	return acc_end(&a);
}

int autosync_feedback_read_report(int fd, size_t max,
				  autosync_feedback_rec_t *r, int *truncated,
				  autosync_error_t *errp)
{
	char buf[8192], *line = malloc(LINE_MAX_LEN + 1);
	size_t total = 0, ll = 0;
	int cut = 0, rv = -1;
	struct acc a;

	if (fd < 0 || !r || !line) {
		free(line);
		errno = line ? EINVAL : ENOMEM;
		return autosync_errprintf(errp, "report: %s",
					  line ? "invalid argument"
					       : "out of memory");
	}
	if (truncated)
		*truncated = 0;
	acc_start(&a, r);
	while (!cut) {
		size_t want = sizeof(buf);
		ssize_t got;

		if (total >= max) {
			char probe;
			cut = read(fd, &probe, 1) > 0;
			break;
		}
		if (want > max - total)
			want = max - total;
		got = read(fd, buf, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			autosync_errprintf(errp, "report: read: %s",
					   strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		total += (size_t)got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				/* one byte past the limit: acc_line says so */
				if (ll <= LINE_MAX_LEN)
					line[ll++] = buf[i];
				continue;
			}
			if (acc_line(&a, line, ll, errp) < 0) {
				acc_bad(&a, errp);
				goto out;
			}
			ll = 0;
		}
	}
	/* a last line without a newline; not one cut by the limit */
	if (ll && !cut && acc_line(&a, line, ll, errp) < 0) {
		acc_bad(&a, errp);
		goto out;
	}
	if (cut) {
		if (truncated)
			*truncated = 1;
		errno = EFBIG;
		autosync_errprintf(errp,
				   "report: longer than %zu bytes; the "
				   "%llu step(s) before that are kept",
				   max, (unsigned long long)r->measured_count);
	}
	rv = acc_end(&a);
out:
	free(line);
	return rv;
}
