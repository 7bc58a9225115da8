/* Unit tests of job reports: the buffer parser and the streaming reader,
 * their agreement, the byte cap, and what a hostile report gets. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "autosync/feedback.h"
#include "tap.h"

/* a record the plugin would write, without measurements */
static void init_record(autosync_feedback_rec_t *r)
{
	r->time = 1764672000;
	snprintf(r->source, sizeof(r->source), "plugin");
	r->job = 42;
	snprintf(r->user, sizeof(r->user), "alice");
	r->uid = 1001;
	snprintf(r->node, sizeof(r->node), "node2");
	r->nodes = 2;
	r->gpus_per_node = 1;
	snprintf(r->model, sizeof(r->model), "resnet50");
	snprintf(r->model_hash, sizeof(r->model_hash), "0123456789abcdef");
	snprintf(r->plan_hash, sizeof(r->plan_hash), "00000000deadbeef");
	snprintf(r->framework, sizeof(r->framework), "pytorch-ddp");
	snprintf(r->strategy, sizeof(r->strategy), "ddp-default");
	r->predicted = 0.2;
}

static int memfile(const char *text, size_t len)
{
	int fd = memfd_create("report", 0);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len ||
	    lseek(fd, 0, SEEK_SET) != 0)
		bail_out("memfd");
	return fd;
}

int main(void)
{
	autosync_feedback_rec_t *r = calloc(1, sizeof(*r));
	autosync_error_t err = {.text = ""};
	static const char good[] = "# step times\n0.5\n 0.25 \n\n0.75";
	int fd, cut;
	char *big;

	plan(NO_PLAN);
	ok(autosync_feedback_parse_report(good, r, &err) == 3 &&
	       r->measured_count == 3 && r->measured_mean == 0.5,
	   "a buffer: three steps, mean 0.5");
	ok(autosync_feedback_parse_report("plan_hash 0123456789abcdef\n0.5\n"
					  "plan_hash\t0123456789abcdef\n0.25\n",
					  r, &err) == 2 &&
	       !strcmp(r->report_plan_hash, "0123456789abcdef"),
	   "the plan the steps ran with (said twice, the same): %s",
	   r->report_plan_hash);
	ok(autosync_feedback_parse_report(good, r, &err) == 3 &&
	       !r->report_plan_hash[0],
	   "a report without one: none");
	fd = memfile(good, strlen(good));
	ok(autosync_feedback_read_report(fd, 1 << 20, r, &cut, &err) == 3 &&
	       !cut && r->measured[2] == 0.75,
	   "a stream: the same three, the last without a newline");
	close(fd);

	/* over the cap: the steps before it are kept, and it is said */
	big = malloc(100000);
	for (int i = 0; i < 10000; i++)
		memcpy(big + 10 * i, "0.0000125\n", 10);
	fd = memfile(big, 100000);
	err.text[0] = '\0';
	ok(autosync_feedback_read_report(fd, 50000, r, &cut, &err) == 5000 &&
	       cut && errno == EFBIG && r->measured_count == 5000 &&
	       r->nmeasured == AUTOSYNC_FEEDBACK_MAX_MEASURED,
	   "a report over the cap: 5000 steps kept, cut, said: %s", err.text);
	ok(strstr(err.text, "longer than 50000 bytes") != NULL,
	   "the message names the cap");
	close(fd);
	fd = memfile(big, 100000);
	ok(autosync_feedback_read_report(fd, 1 << 20, r, &cut, &err) == 10000 &&
	       !cut,
	   "under the cap: all 10000 (%llu kept as values, all counted)",
	   (unsigned long long)r->nmeasured);
	close(fd);
	free(big);

	/* hostile lines */
	static const struct {
		const char *text, *why;
	} bad[] = {
#define RANGE "seconds (1 us to 1 h)"
#define KEPT(n) "; the " #n " step(s) before it are kept"
	    {"0.5\nfast\n0.7\n",
	     "line 2: not a step time in " RANGE ": 'fast'" KEPT(1)},
	    {"-1\n", "line 1: not a step time in " RANGE ": '-1'" KEPT(0)},
	    {"0.5\n0.5\n5000\n",
	     "line 3: not a step time in " RANGE ": '5000'" KEPT(2)},
	    {"1e-7\n", "line 1: not a step time in " RANGE ": '1e-7'" KEPT(0)},
	    {"nan\n", "line 1: not a step time in " RANGE ": 'nan'" KEPT(0)},
	    {"plan_hash 12345\n",
	     "line 1: plan_hash: '12345' is not 16 hex digits" KEPT(0)},
	    {"plan_hash 0123456789ABCDEF\n",
	     "line 1: plan_hash: '0123456789ABCDEF' is not 16 hex "
	     "digits" KEPT(0)},
	    {"plan_hash 0123456789abcdef\n0.5\nplan_hash 1123456789abcdef\n",
	     "line 3: plan_hash 1123456789abcdef after plan_hash "
	     "0123456789abcdef" KEPT(1)},
	    {"0."
	     "1234567890123456789012345678901234567890123456789012345678901234"
	     "\n",
	     "line 1: too long" KEPT(0)},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(autosync_feedback_parse_report(bad[i].text, r, &err) < 0 &&
		       !strcmp(err.text, bad[i].why),
		   "buffer: %s", err.text);
		fd = memfile(bad[i].text, strlen(bad[i].text));
		ok(autosync_feedback_read_report(fd, 1 << 20, r, &cut, &err) <
			   0 &&
		       !strcmp(err.text, bad[i].why),
		   "stream: the same");
		close(fd);
	}
	/* the steps before a bad line make a record that is written */
	{
		char *line = NULL;
		size_t len = 0;
		autosync_feedback_rec_t *rec = calloc(1, sizeof(*rec));
		if (!rec)
			bail_out("out of memory");
		init_record(rec);
		fd = memfile("0.1\n0.3\nnot-a-number\n0.9\n", 25);
		ok(autosync_feedback_read_report(fd, 1 << 20, rec, &cut, &err) <
			   0 &&
		       rec->measured_count == 2 &&
		       fabs(rec->measured_mean - 0.2) < 1e-12 &&
		       autosync_feedback_format(rec, &line, &len, &err) == 0,
		   "a bad line after 2 steps: their mean 0.2, the record is "
		   "written (%s)",
		   err.text);
		free(line);
		free(rec);
		close(fd);
	}
	fd = memfile("0.5\n0.\0"
		     "5\n",
		     8);
	ok(autosync_feedback_read_report(fd, 1 << 20, r, &cut, &err) < 0 &&
	       !strcmp(err.text, "line 2: a NUL byte" KEPT(1)),
	   "a NUL byte in a stream: %s", err.text);
	close(fd);
#undef RANGE
#undef KEPT
	{
		/* a comment of any length up to the line limit is fine */
		char line[5000];
		memset(line, '#', 4000);
		memcpy(line + 4000, "\n0.5\n", 6);
		ok(autosync_feedback_parse_report(line, r, &err) == 1,
		   "a 4000-byte comment");
		memset(line, '#', 4998);
		line[4998] = '\n';
		line[4999] = '\0';
		ok(autosync_feedback_parse_report(line, r, &err) < 0 &&
		       !strcmp(err.text, "line 1: too long; the 0 step(s) "
					 "before it are kept"),
		   "a 4998-byte line: too long");
	}
	free(r);
	return done_testing();
}
