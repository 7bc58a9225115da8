/* record.c - see record.h */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "autosync/common.h"
#include "autosync/feedback.h"
#include "autosync/job.h"
#include "common.h"
#include "common/readfile.h"
#include "record.h"

/* What a job may report of its steps. */
#define REPORT_MAX_BYTES (64u << 20)

/* The job's measurements: its report file, opened as root through the job
 * directory's handle (no path the user could swap), only when the user
 * alone owns it, read as it streams. A report that cannot be used is
 * logged, never silently dropped. */
static void read_report(const struct as_record_step *s,
			autosync_feedback_rec_t *r)
{
	autosync_error_t err = {.text = ""};
	char msg[PATH_MAX + 128];
	int dfd, fd, cut = 0;

	dfd = open(s->jobdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return;
	fd = asi_open_file(dfd, AUTOSYNC_JOB_REPORT_FILE, 0, ASI_READ_NOFOLLOW,
			   s->uid, msg, sizeof(msg));
	close(dfd);
	if (fd < 0) {
		if (errno != ENOENT)
			as_plugin_log(AUTOSYNC_LOG_INFO,
				      "autosync: job %u step %u: report %s: %s",
				      s->job, s->step, s->jobdir, msg);
		return;
	}
	if (autosync_feedback_read_report(fd, REPORT_MAX_BYTES, r, &cut, &err) <
		0 ||
	    cut)
		as_plugin_log(AUTOSYNC_LOG_INFO,
			      "autosync: job %u step %u: report in %s: %s",
			      s->job, s->step, s->jobdir, err.text);
	close(fd);
}

/* The job's identity comes from Slurm, never from the report. */
static void identify(const struct as_record_step *s, autosync_feedback_rec_t *r)
{
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096];

	r->time = (int64_t)time(NULL);
	r->job = s->job;
	r->step = s->step;
	r->uid = (uint32_t)s->uid;
	r->user[0] = '\0';
	if (getpwuid_r(s->uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp)
		snprintf(r->user, sizeof(r->user), "%s", pw.pw_name);
	snprintf(r->node, sizeof(r->node), "%s", s->node);
	snprintf(r->source, sizeof(r->source), "plugin");
}

/* Steps the job says ran with another plan are not this one's. */
static void check_plan(const struct as_record_step *s,
		       autosync_feedback_rec_t *r)
{
	if (r->report_plan_hash[0] &&
	    strcmp(r->report_plan_hash, r->plan_hash)) {
		as_plugin_log(AUTOSYNC_LOG_INFO,
			      "autosync: job %u step %u: the report's steps "
			      "ran with plan %s, not this step's %s: not "
			      "recorded",
			      s->job, s->step, r->report_plan_hash,
			      r->plan_hash);
		r->nmeasured = 0;
		r->measured_count = 0;
		r->measured_mean = 0;
	}
	/* the report is a file the job writes */
	if (r->measured_count)
		r->influenced |= AUTOSYNC_FEEDBACK_F_MEASUREMENTS;
}

/* To the site's log, and beside the plan for the user. */
static void store(const struct as_record_step *s, const char *line, size_t len)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *site = as_plugin_site();
	const char *log = site ? autosync_siteconf_feedback_path(site) : "";

	if (log[0] &&
	    autosync_feedback_append(
		log, line, len, autosync_siteconf_feedback_max_bytes(site),
		autosync_siteconf_feedback_keep(site), &err) < 0)
		as_plugin_log(AUTOSYNC_LOG_ERROR, "autosync: feedback: %s",
			      err.text);
	if (s->jobdir[0] && as_plugin_keep_seconds() > 0 &&
	    autosync_jobdir_write(s->jobdir, AUTOSYNC_JOB_FEEDBACK_FILE, line,
				  len, &err) < 0)
		as_plugin_log(AUTOSYNC_LOG_INFO, "autosync: job %u step %u: %s",
			      s->job, s->step, err.text);
}

void as_record_write(const struct as_record_step *s)
{
	autosync_error_t err = {.text = ""};
	autosync_feedback_rec_t *r;
	char *line = NULL;
	size_t len = 0;

	if (!s->record || !(r = calloc(1, sizeof(*r))))
		return;
	/* the child's part is parsed (checked) again here */
	if (autosync_feedback_parse_part(s->record, strlen(s->record),
					 AUTOSYNC_FEEDBACK_PART_PLAN, r,
					 &err) < 0) {
		as_plugin_log(AUTOSYNC_LOG_ERROR,
			      "autosync: feedback: the planning child's "
			      "record: %s",
			      err.text);
		free(r);
		return;
	}
	identify(s, r);
	if (s->jobdir[0])
		read_report(s, r);
	check_plan(s, r);
	if (autosync_feedback_format(r, &line, &len, &err) < 0)
		as_plugin_log(AUTOSYNC_LOG_ERROR, "autosync: feedback: %s",
			      err.text);
	else
		store(s, line, len);
	free(line);
	free(r);
}

void as_record_leave_jobdir(const char *jobdir, int hold)
{
	if (as_plugin_keep_seconds() > 0) {
		autosync_jobdir_unlink(jobdir, AUTOSYNC_JOB_REPORT_FILE);
		autosync_jobdir_release(hold); /* kept from now on */
	} else {
		if (hold >= 0)
			close(hold);
		autosync_jobdir_remove(jobdir);
	}
}
