/* Unit tests for the site configuration reader. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autosync/siteconf.h"
#include "autosync/topology.h"
#include "tap.h"

static char dir[] = "/tmp/autosync-siteconf-XXXXXX";

static const char *write_tmp(const char *name, const char *text)
{
	static char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(fp = fopen(path, "w")))
		bail_out("cannot write %s", path);
	fputs(text, fp);
	fclose(fp);
	return path;
}

struct probs {
	int n;
	char text[16][512];
};

static void collect(const char *msg, void *arg)
{
	struct probs *p = arg;

	if (p->n < 16)
		snprintf(p->text[p->n], sizeof(p->text[0]), "%s", msg);
	p->n++;
}

static void test_example(void)
{
	char path[4096];
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s;
	autosync_cluster_t c;

	snprintf(path, sizeof(path), "%s/etc/autosync.yaml.example",
		 getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".");
	s = autosync_siteconf_load(path, &err);
	ok(s != NULL, "the shipped example loads (%s)", err.text);
	if (!s)
		return;
	ok(autosync_siteconf_default_mode(s, NULL) == AUTOSYNC_SITE_MODE_OFF,
	   "default_mode off");
	ok(autosync_siteconf_default_mode(s, "gpu") == AUTOSYNC_SITE_MODE_AUTO,
	   "partition gpu: auto");
	ok(autosync_siteconf_default_mode(s, "other") == AUTOSYNC_SITE_MODE_OFF,
	   "unknown partition: default");
	is(autosync_siteconf_framework(s), "pytorch-ddp", "framework");
	is(autosync_siteconf_catalog_dir(s), "/usr/share/autosync/models",
	   "catalog_dir");
	ok(autosync_siteconf_plan_budget_ms(s) == 1000,
	   "budget: 1000 ms by default");
	ok(autosync_siteconf_keep_job_files(s) == 86400,
	   "keep_job_files: a day by default");
	ok(autosync_siteconf_max_model_bytes(s) == 16u << 20,
	   "max_model_bytes");
	ok(autosync_siteconf_feedback_max_bytes(s) == 64u << 20,
	   "feedback max");
	/* another site's NIC names would make planning fail on every node
	 * without them: the example leaves them commented out */
	ok(autosync_siteconf_nfabric_nics(s) == 0,
	   "the example names no fabric NIC");
	ok(autosync_siteconf_allow_compression(s) == 1,
	   "jobs may allow compression");
	memset(&c, 0, sizeof(c));
	autosync_siteconf_apply_network(s, &c);
	near(c.nic_bw, 25e9, 1, "200Gbit/s = 25e9 B/s");
	near(c.inter_lat, 2e-6, 1e-12, "2us");
	ok(c.nics_per_node == 4 && c.nodes_per_switch == 16, "nics, nps");
	autosync_siteconf_destroy(s);
}

static void test_fabric_nics(void)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s = autosync_siteconf_load(
	    write_tmp("nics.yaml",
		      "network:\n  fabric_nics: [mlx5_0, mlx5_1, mlx5_2, "
		      "ib3]\n"),
	    &err);

	ok(s != NULL, "fabric_nics loads (%s)", err.text);
	if (!s)
		return;
	ok(autosync_siteconf_nfabric_nics(s) == 4, "4 fabric NICs");
	is(autosync_siteconf_fabric_nic(s, 3), "ib3", "4th fabric NIC");
	ok(autosync_siteconf_fabric_nic(s, 0) &&
	       !strcmp(autosync_siteconf_fabric_nic(s, 0), "mlx5_0"),
	   "1st fabric NIC");
	autosync_siteconf_destroy(s);
}

static void test_transport(void)
{
	autosync_error_t err = {.text = ""};
	autosync_cluster_t c;
	autosync_siteconf_t *s = autosync_siteconf_load(
	    write_tmp("tr.yaml", "network:\n  transport: roce\n"), &err);

	ok(s != NULL, "network.transport loads (%s)", err.text);
	if (s) {
		autosync_cluster_default(&c);
		autosync_siteconf_apply_network(s, &c);
		ok(c.transport == AUTOSYNC_TRANSPORT_ROCE, "transport roce");
		autosync_siteconf_destroy(s);
	}
	s = autosync_siteconf_load(write_tmp("tr.yaml", "network: {}\n"), &err);
	if (s) {
		autosync_cluster_default(&c);
		c.transport = AUTOSYNC_TRANSPORT_IB;
		autosync_siteconf_apply_network(s, &c);
		ok(c.transport == AUTOSYNC_TRANSPORT_IB,
		   "no transport in the file: the cluster's is kept");
		autosync_siteconf_destroy(s);
	}
	s = autosync_siteconf_load(
	    write_tmp("tr.yaml", "network:\n  transport: infiniband\n"), &err);
	ok(!s && strstr(err.text, "tr.yaml:2: network.transport: bad value "
				  "'infiniband' (expected tcp, ib, roce or "
				  "unknown)"),
	   "a bad transport is refused: %s", err.text);
}

static void test_durations(void)
{
	static const struct {
		const char *v;
		long want; /* -1: refused */
	} cases[] = {
	    {"0", 0},	    {"3600", 3600},   {"30m", 1800}, {"12h", 43200},
	    {"7d", 604800}, {"90d", 7776000}, {"91d", -1},   {"1w", -1},
	    {"-1", -1},	    {"h", -1},	      {"1.5h", -1},
	};
	char text[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		autosync_error_t err = {.text = ""};
		autosync_siteconf_t *s;
		snprintf(text, sizeof(text), "keep_job_files: %s\n",
			 cases[i].v);
		s = autosync_siteconf_load(write_tmp("keep.yaml", text), &err);
		if (cases[i].want < 0)
			ok(!s &&
			       strstr(err.text,
				      ":1: keep_job_files: bad value") &&
			       strstr(err.text, "at most 90d"),
			   "keep_job_files: %s refused (%s)", cases[i].v,
			   err.text);
		else
			ok(s && autosync_siteconf_keep_job_files(s) ==
				    cases[i].want,
			   "keep_job_files: %s = %ld s", cases[i].v,
			   cases[i].want);
		autosync_siteconf_destroy(s);
	}
}

static void test_sizes(void)
{
	static const struct {
		const char *v;
		size_t want; /* 0: refused */
	} cases[] = {
	    {"16MiB", 16u << 20}, {"256MiB", 256u << 20},
	    {"100MB", 100000000}, {"1048576", 1048576},
	    {"257MiB", 0},	  {"1GiB", 0},
	    {"1024GiB", 0},	  {"1TiB", 0},
	};
	char text[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		autosync_error_t err = {.text = ""};
		autosync_siteconf_t *s;
		snprintf(text, sizeof(text), "max_model_bytes: %s\n",
			 cases[i].v);
		s = autosync_siteconf_load(write_tmp("size.yaml", text), &err);
		if (!cases[i].want)
			ok(!s &&
			       strstr(err.text, ":1: max_model_bytes: bad "
						"value ") &&
			       strstr(err.text, "(expected a size from 1 to "
						"256MiB, such as 1048576, "
						"64MiB or 100MB)"),
			   "max_model_bytes: %s refused at config check (%s)",
			   cases[i].v, err.text);
		else
			ok(s && autosync_siteconf_max_model_bytes(s) ==
				    cases[i].want,
			   "max_model_bytes: %s", cases[i].v);
		autosync_siteconf_destroy(s);
	}
	{
		autosync_error_t err = {.text = ""};
		autosync_siteconf_t *s = autosync_siteconf_load(
		    write_tmp("m.yaml", "version: 1\n"), &err);
		ok(s && autosync_siteconf_plan_memory(s) == (size_t)4 << 30,
		   "plan_memory: 4GiB by default");
		autosync_siteconf_destroy(s);
		s = autosync_siteconf_load(
		    write_tmp("m.yaml", "plan_memory: 8GiB\n"), &err);
		ok(s && autosync_siteconf_plan_memory(s) == (size_t)8 << 30,
		   "plan_memory: 8GiB");
		autosync_siteconf_destroy(s);
		s = autosync_siteconf_load(
		    write_tmp("m.yaml", "plan_memory: 100MiB\n"), &err);
		ok(!s && strstr(err.text, ":1: plan_memory: bad value '100MiB' "
					  "(expected a size from 256MiB to "
					  "1TiB"),
		   "plan_memory under 256MiB refused (%s)", err.text);
		autosync_siteconf_destroy(s);
	}
	{
		autosync_error_t err = {.text = ""};
		autosync_siteconf_t *s = autosync_siteconf_load(
		    write_tmp("tib.yaml", "feedback:\n  max_bytes: 1TiB\n"),
		    &err);
		ok(s && autosync_siteconf_feedback_max_bytes(s) == (size_t)1
								       << 40,
		   "TiB is a suffix like the others (%s)", err.text);
		autosync_siteconf_destroy(s);
	}
}

static void test_compression(void)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s = autosync_siteconf_create(&err);
	struct probs p = {0};
	const char *path;
	char want[1024];

	ok(s && autosync_siteconf_allow_compression(s) == 1,
	   "by default jobs may allow compression");
	autosync_siteconf_destroy(s);
	path = write_tmp("nocomp.yaml", "version: 2\nallow_compression: no\n");
	s = autosync_siteconf_load(path, &err);
	ok(s && autosync_siteconf_allow_compression(s) == 0,
	   "allow_compression: no forbids it (%s)", err.text);
	autosync_siteconf_destroy(s);
	path = write_tmp("badcomp.yaml", "version: 2\nallow_compression: "
					 "lossy\n");
	ok(autosync_siteconf_check(path, collect, &p, &err) == 1,
	   "a bad value is one problem");
	snprintf(want, sizeof(want),
		 "%s:2: allow_compression: bad value 'lossy' (expected true "
		 "or false)",
		 path);
	is(p.text[0], want, "and says which file, line and value");
}

static void test_bad(void)
{
	autosync_error_t err = {.text = ""};
	struct probs p = {0};
	const char *path;
	char want[1024];
	int n;

	path = write_tmp("bad.yaml", "version: 1\n"
				     "default_mode: sometimes\n"
				     "colour: blue\n"
				     "plan_budget_ms: -5\n"
				     "network:\n"
				     "  nic_bandwidth: fast\n"
				     "  nics_per_node: 0\n"
				     "default_mode: auto\n");
	n = autosync_siteconf_check(path, collect, &p, &err);
	ok(n == 6, "six problems found (%d)", n);
	snprintf(want, sizeof(want),
		 "%s:2: default_mode: bad value 'sometimes' (expected off or "
		 "auto)",
		 path);
	is(p.text[0], want, "problem 1 names file, line, key and value");
	ok(strstr(p.text[1], ":3: unknown key 'colour'") != NULL,
	   "unknown key with its line: %s", p.text[1]);
	ok(strstr(p.text[2],
		  ":4: plan_budget_ms: bad value '-5' (expected an integer "
		  "from 1 to 60000)") != NULL,
	   "negative budget: %s", p.text[2]);
	ok(strstr(p.text[3], ":6: network.nic_bandwidth: ") != NULL &&
	       strstr(p.text[3], "fast") != NULL,
	   "bad bandwidth: %s", p.text[3]);
	ok(strstr(p.text[4], ":7: network.nics_per_node: bad value '0'") !=
	       NULL,
	   "zero NICs: %s", p.text[4]);
	ok(strstr(p.text[5], ":8: key 'default_mode' given twice (first on "
			     "line 2)") != NULL,
	   "duplicate key: %s", p.text[5]);
	ok(autosync_siteconf_load(path, &err) == NULL && errno == EINVAL,
	   "load refuses it (EINVAL)");
	is(err.text, want, "load reports the first problem");

	/* the ranges of --network and cluster descriptions */
	path = write_tmp("ranges.yaml", "version: 2\n"
					"network:\n"
					"  nic_bandwidth: 1e-300Gbit/s\n"
					"  latency: 1000s\n");
	memset(&p, 0, sizeof(p));
	n = autosync_siteconf_check(path, collect, &p, &err);
	ok(n == 2 &&
	       strstr(p.text[0], ":3: network.nic_bandwidth: '1e-300Gbit/s' "
				 "out of range 1Mbit/s..100TB/s") &&
	       strstr(p.text[1],
		      ":4: network.latency: '1000s' out of range 1ns..1s"),
	   "a bandwidth and a latency out of range: refused as --network "
	   "refuses them (%s / %s)",
	   p.text[0], p.text[1]);
	path = write_tmp("zero.yaml", "version: 2\nnetwork:\n  latency: 0ns\n");
	memset(&p, 0, sizeof(p));
	ok(autosync_siteconf_check(path, collect, &p, &err) == 1 &&
	       strstr(p.text[0], "'0ns' out of range 1ns..1s"),
	   "a latency of 0: refused (%s)", p.text[0]);

	path = write_tmp("broken.yaml", "default_mode: [off\n");
	memset(&p, 0, sizeof(p));
	ok(autosync_siteconf_check(path, collect, &p, &err) == 1 &&
	       strstr(p.text[0], "not valid YAML") != NULL,
	   "broken YAML: %s", p.text[0]);
	path = write_tmp("list.yaml", "- a\n- b\n");
	ok(autosync_siteconf_load(path, &err) == NULL &&
	       strstr(err.text,
		      ":1: the file: expected a mapping, not a list") != NULL,
	   "a list is not a config: %s", err.text);
	ok(autosync_siteconf_load("/nonexistent/autosync.yaml", &err) == NULL &&
	       errno == ENOENT,
	   "missing file: ENOENT");
	is(err.text,
	   "/nonexistent/autosync.yaml: cannot open: No such file or "
	   "directory",
	   "missing file message");
	ok(autosync_siteconf_load(dir, &err) == NULL &&
	       strstr(err.text, "not a regular file") != NULL,
	   "a directory is refused");
	path = write_tmp("empty.yaml", "");
	{
		autosync_siteconf_t *s = autosync_siteconf_load(path, &err);
		ok(s && autosync_siteconf_default_mode(s, "x") ==
			    AUTOSYNC_SITE_MODE_OFF,
		   "an empty file gives the defaults");
		autosync_siteconf_destroy(s);
	}
	{
		/* one byte over the limit */
		size_t big = AUTOSYNC_SITECONF_MAX_BYTES + 1;
		char *buf = malloc(big + 1);
		memset(buf, '#', big);
		buf[big] = '\0';
		path = write_tmp("big.yaml", buf);
		free(buf);
		ok(autosync_siteconf_load(path, &err) == NULL && errno == EFBIG,
		   "oversized file refused: %s", err.text);
	}
	path = write_tmp("types.yaml", "partitions: [gpu]\n"
				       "allowed_modes: [auto, sometimes]\n"
				       "catalog_dir: relative/dir\n"
				       "max_model_bytes: 12XB\n"
				       "feedback: {keep: 1000}\n");
	memset(&p, 0, sizeof(p));
	n = autosync_siteconf_check(path, collect, &p, &err);
	ok(n == 5, "five type problems (%d)", n);
	ok(strstr(p.text[1], ":2: allowed_modes: bad value 'sometimes' "
			     "(expected off, auto, required or plan)") != NULL,
	   "bad allowed mode: %s", p.text[1]);
	ok(strstr(p.text[2], "expected an absolute path") != NULL,
	   "relative path: %s", p.text[2]);
}

/* version 2 is current; version 1 reads with a note; others are refused */
static void versions(void)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s;
	const char *path;

	s = autosync_siteconf_load(write_tmp("v2.yaml", "version: 2\n"), &err);
	ok(s && autosync_siteconf_version(s) == 2 && !autosync_siteconf_note(s),
	   "version 2 is read, without a note (%s)", err.text);
	autosync_siteconf_destroy(s);
	s = autosync_siteconf_load(write_tmp("v0.yaml", "default_mode: off\n"),
				   &err);
	ok(s && autosync_siteconf_version(s) == AUTOSYNC_SITECONF_VERSION &&
	       !autosync_siteconf_note(s),
	   "no version: the current one, no note");
	autosync_siteconf_destroy(s);
	path = write_tmp("v1.yaml", "version: 1\nplan_memory: 8GiB\n");
	s = autosync_siteconf_load(path, &err);
	ok(s && autosync_siteconf_version(s) == 1 &&
	       autosync_siteconf_plan_budget_ms(s) == 1000 &&
	       autosync_siteconf_plan_memory(s) == (size_t)8 << 30 &&
	       autosync_siteconf_note(s) &&
	       strstr(autosync_siteconf_note(s),
		      "v1.yaml: site config version 1, read as version 2: "
		      "plan_budget_ms now defaults to 1000"),
	   "version 1 is read, with a note: %s",
	   s && autosync_siteconf_note(s) ? autosync_siteconf_note(s) : "");
	autosync_siteconf_destroy(s);
	s = autosync_siteconf_load(write_tmp("v3.yaml", "version: 3\n"), &err);
	ok(!s && strstr(err.text, ":1: version: version '3' is not supported "
				  "(this autosync reads versions 1 and 2)"),
	   "version 3 is refused: %s", err.text);
}

/* the size suffixes are the same for every size key */
static void sizes(void)
{
	static const struct {
		const char *key, *v;
		size_t want;
	} cases[] = {
	    {"feedback:\n  max_bytes", "1TB", 1000000000000ULL},
	    {"feedback:\n  max_bytes", "900G", 900000000000ULL},
	    {"feedback:\n  max_bytes", "3KiB", 3072},
	    {"max_model_bytes", "100MB", 100000000},
	    {"max_model_bytes", "256MiB", 256u << 20},
	    {"plan_memory", "1TiB", (size_t)1 << 40},
	    {"plan_memory", "1024GiB", (size_t)1 << 40},
	    {"plan_memory", "300000000B", 300000000},
	};
	char text[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		autosync_error_t err = {.text = ""};
		autosync_siteconf_t *s;
		size_t got = 0;
		snprintf(text, sizeof(text), "%s: %s\n", cases[i].key,
			 cases[i].v);
		s = autosync_siteconf_load(write_tmp("sz.yaml", text), &err);
		if (s && !strncmp(cases[i].key, "feedback", 8))
			got = autosync_siteconf_feedback_max_bytes(s);
		else if (s && !strcmp(cases[i].key, "max_model_bytes"))
			got = autosync_siteconf_max_model_bytes(s);
		else if (s)
			got = autosync_siteconf_plan_memory(s);
		ok(got == cases[i].want, "%s: %s (%s)", cases[i].key,
		   cases[i].v, err.text);
		autosync_siteconf_destroy(s);
	}
}

int main(void)
{
	plan(NO_PLAN);
	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	test_example();
	test_fabric_nics();
	test_transport();
	test_compression();
	test_bad();
	test_durations();
	test_sizes();
	versions();
	sizes();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
