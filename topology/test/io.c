/* Unit tests of the topology writers and of bad input: NCCL XML round trip
 * on every NCCL fixture, hwloc -> NCCL XML, YAML well-formedness (libyaml),
 * the live machine, missing / truncated / non-XML / hwloc v3.0 / GPU-less
 * inputs. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>
#include <yaml.h>

#include "autosync/topology.h"
#include "tap.h"
#include "fixdir.h"

static char fixdir[1024], tmpdir[256];
static int have_fixtures;

static const char *fix(const char *name)
{
	static char path[2048];

	snprintf(path, sizeof(path), "%s/%s", fixdir, name);
	return path;
}

static const char *tmp(const char *name)
{
	static char path[2][512];
	static int k;

	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tmpdir, name);
	return path[k];
}

static int write_str(const char *path, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		len = strlen(s);
	FILE *fp = fopen(path, "wb");

	if (!fp)
		return -1;
	fwrite(s, 1, len, fp);
	return fclose(fp);
}

/* every public fact of two topologies' views */
static int same_topo(const autosync_topo_t *a, const autosync_topo_t *b,
		     const char *what)
{
	int same = 1;

	if (autosync_topo_ngpus(a) != autosync_topo_ngpus(b) ||
	    autosync_topo_nnics(a) != autosync_topo_nnics(b)) {
		diag("%s: counts differ", what);
		return 0;
	}
	for (unsigned i = 0; i < autosync_topo_ngpus(a); i++) {
		const autosync_topo_gpu_t *x = autosync_topo_gpu(a, i),
					  *y = autosync_topo_gpu(b, i);

		if (strcmp(x->busid, y->busid) ||
		    x->vendor_id != y->vendor_id ||
		    x->device_id != y->device_id ||
		    x->class_id != y->class_id || x->sm != y->sm ||
		    x->pcie_bw != y->pcie_bw || x->numa != y->numa ||
		    x->package != y->package ||
		    strcmp(x->pcie_switch, y->pcie_switch) ||
		    strcmp(x->cpuset, y->cpuset) ||
		    x->nearest_nic != y->nearest_nic ||
		    x->nic_tier != y->nic_tier ||
		    x->nvlink_bw != y->nvlink_bw) {
			diag("%s: GPU %u differs (%s / %s)", what, i, x->busid,
			     y->busid);
			same = 0;
		}
		for (unsigned j = 0; j < autosync_topo_ngpus(a); j++) {
			int c1, c2;
			double b1, b2, l1, l2;

			autosync_topo_link(a, i, j, &c1, &b1, &l1);
			autosync_topo_link(b, i, j, &c2, &b2, &l2);
			if (c1 != c2 || b1 != b2 || l1 != l2) {
				diag("%s: link %u-%u differs", what, i, j);
				same = 0;
			}
		}
	}
	for (unsigned i = 0; i < autosync_topo_nnics(a); i++) {
		const autosync_topo_nic_t *x = autosync_topo_nic(a, i),
					  *y = autosync_topo_nic(b, i);

		if (strcmp(x->busid, y->busid) ||
		    x->vendor_id != y->vendor_id ||
		    x->class_id != y->class_id || x->kind != y->kind ||
		    strcmp(x->name, y->name) || strcmp(x->netdev, y->netdev) ||
		    x->port != y->port || x->speed != y->speed ||
		    x->pcie_bw != y->pcie_bw || x->numa != y->numa ||
		    strcmp(x->pcie_switch, y->pcie_switch) ||
		    x->management != y->management || x->rdma != y->rdma) {
			diag("%s: NIC %u differs (%s / %s)", what, i, x->busid,
			     y->busid);
			same = 0;
		}
	}
	return same;
}

static int yaml_valid(const char *path)
{
	FILE *fp = fopen(path, "rb");
	yaml_parser_t p;
	yaml_document_t doc;
	int ok = 0;

	if (!fp)
		return 0;
	if (yaml_parser_initialize(&p)) {
		yaml_parser_set_input_file(&p, fp);
		if (yaml_parser_load(&p, &doc)) {
			ok = yaml_document_get_root_node(&doc) != NULL;
			yaml_document_delete(&doc);
		}
		yaml_parser_delete(&p);
	}
	fclose(fp);
	return ok;
}

static int file_has(const char *path, const char *needle)
{
	static char buf[1 << 20];
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (!fp)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static void round_trip(const char *file, const char *gpus)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *a = autosync_topo_load_file(fix(file), &err),
			*b = NULL;
	FILE *fp;

	ok(a != NULL, "%s loads", file);
	if (!a)
		return;
	if (gpus)
		ok(autosync_topo_restrict(a, gpus, NULL, &err) == 0,
		   "%s: restrict %s", file, gpus);
	fp = fopen(tmp("rt.xml"), "w");
	ok(fp && autosync_topo_write_nccl_xml(a, fp, &err) == 0,
	   "%s%s%s: NCCL XML written", file, gpus ? " gpus " : "",
	   gpus ? gpus : "");
	if (fp)
		fclose(fp);
	b = autosync_topo_load_nccl_xml(tmp("rt.xml"), &err);
	ok(b != NULL, "%s: written XML parses (%s)", file, err.text);
	if (b && gpus) {
		/* NCCL XML has no GPU order: select the same GPUs in the same
		 * order */
		char list[512] = "";

		for (unsigned i = 0; i < autosync_topo_ngpus(a); i++)
			snprintf(list + strlen(list),
				 sizeof(list) - strlen(list), "%s%s",
				 i ? "," : "", autosync_topo_gpu(a, i)->busid);
		ok(autosync_topo_restrict(b, list, NULL, &err) == 0,
		   "%s: same GPUs selected (%s)", file, err.text);
	}
	if (b) {
		if (!strncmp(file, "nccl-", 5)) {
			ok(same_topo(a, b, file),
			   "%s: re-emitted file gives the same model", file);
			is(autosync_topo_hash(b), autosync_topo_hash(a),
			   "%s: same hash after round trip", file);
		} else {
			/* hwloc -> NCCL: NCCL XML has no packages, root ports
			 * are not written apart: compare devices, NUMA, NICs,
			 * tiers */
			int same =
			    autosync_topo_ngpus(a) == autosync_topo_ngpus(b);

			for (unsigned i = 0; same && i < autosync_topo_ngpus(a);
			     i++) {
				const autosync_topo_gpu_t *x =
							      autosync_topo_gpu(
								  a, i),
							  *y =
							      autosync_topo_gpu(
								  b, i);

				same = !strcmp(x->busid, y->busid) &&
				       x->numa == y->numa &&
				       x->class_id == y->class_id &&
				       x->device_id == y->device_id &&
				       !strcmp(x->cpuset, y->cpuset) &&
				       x->nic_tier == y->nic_tier &&
				       (x->nearest_nic >= 0) ==
					   (y->nearest_nic >= 0);
				if (same && x->nearest_nic >= 0)
					same = !strcmp(
					    autosync_topo_nic(
						a, (unsigned)x->nearest_nic)
						->name,
					    autosync_topo_nic(
						b, (unsigned)y->nearest_nic)
						->name);
				if (!same)
					diag("GPU %u: %s/%s numa %d/%d tier "
					     "%d/%d",
					     i, x->busid, y->busid, x->numa,
					     y->numa, x->nic_tier, y->nic_tier);
			}
			ok(same,
			   "%s: NCCL XML keeps GPUs, NUMA, CPU sets, nearest "
			   "NICs",
			   file);
		}
	}
	autosync_topo_destroy(b);
	autosync_topo_destroy(a);
}

static void writers(const char *file)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t = file ? autosync_topo_load_file(fix(file), &err)
				  : autosync_topo_load_live(&err);
	const char *name = file ? file : "live";
	FILE *fp;

	if (!t) {
		ok(0, "%s loads (%s)", name, err.text);
		return;
	}
	fp = fopen(tmp("out.yaml"), "w");
	ok(fp && autosync_topo_write_yaml(t, fp, &err) == 0, "%s: YAML written",
	   name);
	if (fp)
		fclose(fp);
	ok(yaml_valid(tmp("out.yaml")), "%s: YAML is well formed (libyaml)",
	   name);
	ok(file_has(tmp("out.yaml"), autosync_topo_hash(t)),
	   "%s: YAML carries the hash", name);
	fp = fopen(tmp("out.txt"), "w");
	ok(fp && autosync_topo_write_text(t, fp, &err) == 0, "%s: text written",
	   name);
	if (fp)
		fclose(fp);
	ok(file_has(tmp("out.txt"), "GPUs:") &&
	       file_has(tmp("out.txt"), "NICs:"),
	   "%s: text has the tables", name);
	autosync_topo_destroy(t);
}

static void live(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t = autosync_topo_load_live(&err);
	char want[64];

	ok(t != NULL, "live machine loads (%s)", err.text);
	if (!t)
		return;
	is(autosync_topo_source(t), "live", "source live");
	diag("live: %u GPU(s), %u NIC(s), CPUs %s, hash %s",
	     autosync_topo_ngpus(t), autosync_topo_nnics(t),
	     autosync_topo_cpuset(t), autosync_topo_hash(t));
	ok(strlen(autosync_topo_cpuset(t)) > 0, "live: CPU set known");
	if (autosync_topo_ngpus(t) == 0) {
		autosync_cluster_t c;
		autosync_env_t e[4];
		size_t n;

		autosync_cluster_default(&c);
		ok(autosync_cluster_from_topo(&c, t, 1, &err) == 0 &&
		       c.gpus_per_node == 1,
		   "CPU-only machine: one rank per node");
		ok(autosync_topo_rank_env(t, 0, e, 4, &n, &err) == 0,
		   "CPU-only machine: rank 0 env");
		ok(autosync_topo_restrict(t, "0", NULL, &err) == -1 &&
		       errno == EINVAL,
		   "CUDA_VISIBLE_DEVICES=0 without GPU: %s", err.text);
	} else {
		snprintf(want, sizeof(want), "%u", autosync_topo_ngpus(t) - 1);
		ok(autosync_topo_restrict(t, want, NULL, &err) == 0 &&
		       autosync_topo_ngpus(t) == 1,
		   "restrict to the last GPU");
	}
	{
		autosync_topo_t *b;
		FILE *fp = fopen(tmp("live.xml"), "w");

		ok(fp && autosync_topo_write_nccl_xml(t, fp, &err) == 0,
		   "live: NCCL XML written");
		if (fp)
			fclose(fp);
		b = autosync_topo_load_file(tmp("live.xml"), &err);
		ok(b != NULL &&
		       autosync_topo_ngpus(b) == autosync_topo_ngpus(t),
		   "live: NCCL XML parses back (%s)", err.text);
		autosync_topo_destroy(b);
	}
	autosync_topo_destroy(t);
}

static void bad(const char *what, const char *content, size_t len,
		const char *want_msg)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t;

	if (content)
		write_str(tmp("bad.xml"), content,
			  len == SIZE_MAX ? strlen(content) : len);
	errno = 0;
	t = autosync_topo_load_file(content ? tmp("bad.xml") : what, &err);
	ok(t == NULL && errno != 0, "%s: refused with errno %d",
	   content ? what : "missing file", errno);
	ok(strstr(err.text, want_msg) != NULL, "%s: message: %s",
	   content ? what : "missing file", err.text);
	autosync_topo_destroy(t);
}

/* 1,025 GPUs on one node: more than a cluster description may hold */
static void too_many_gpus(void)
{
	size_t cap = 1 << 20, n = 0;
	char *x = malloc(cap);

	if (!x)
		bail_out("malloc");
	n += (size_t)snprintf(x + n, cap - n,
			      "<system version=\"1\">\n  <cpu "
			      "numaid=\"0\" affinity=\"ffffffff\" "
			      "arch=\"x86_64\" vendor=\"GenuineIntel\" "
			      "familyid=\"6\" modelid=\"106\">\n");
	for (unsigned g = 0; g < 1025; g++)
		n += (size_t)snprintf(
		    x + n, cap - n,
		    "    <pci busid=\"0000:%02x:%02x.%x\" class=\"0x030000\" "
		    "link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">"
		    "<gpu dev=\"%u\" sm=\"80\" rank=\"%u\" gdr=\"1\"/></pci>\n",
		    1 + g / 256, (g / 8) % 32, g % 8, g, g);
	n += (size_t)snprintf(x + n, cap - n, "  </cpu>\n</system>\n");
	bad("1025 GPUs on a node", x, n,
	    "1025 GPUs and 0 NICs: more than one "
	    "node can hold (1024, 1024)");
	free(x);
}

static void bad_inputs(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t;
	char *buf;
	size_t len;
	FILE *fp;

	bad("/nonexistent/topo.xml", NULL, 0, "No such file");
	/* the one bounded reader: never blocks on a FIFO, never reads a
	 * device */
	bad("/dev/zero", NULL, 0, "/dev/zero: not a regular file");
	if (mkfifo(tmp("fifo.xml"), 0600) == 0)
		bad(tmp("fifo.xml"), NULL, 0, "fifo.xml: not a regular file");
	bad("empty file", "", 0, "not an XML file");
	bad("plain text", "GPU0 GPU1\n", SIZE_MAX, "not an XML file");
	bad("binary",
	    "\x7f"
	    "ELF\0\0\1",
	    7, "not an XML file");
	bad("JSON", "{\"system\": 1}", SIZE_MAX, "not an XML file");
	bad("other root", "<?xml version=\"1.0\"?><html><body/></html>",
	    SIZE_MAX, "neither hwloc");
	bad("hwloc v3.0",
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology "
	    "SYSTEM \"hwloc3.dtd\">\n"
	    "<topology version=\"3.0\">\n  <object type=\"Machine\" "
	    "os_index=\"0\" cpuset=\"0x1\" "
	    "complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" "
	    "complete_nodeset=\"0x1\" "
	    "allowed_nodeset=\"0x1\" gp_index=\"1\"/>\n</topology>\n",
	    SIZE_MAX, "version 3.0");
	bad("truncated hwloc",
	    "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object "
	    "type=\"Machine\" os_ind",
	    SIZE_MAX, "hwloc cannot load");
	bad("NCCL version 2",
	    "<system version=\"2\"><cpu numaid=\"0\"/></system>", SIZE_MAX,
	    "version");
	bad("NCCL no version", "<system><cpu numaid=\"0\"/></system>", SIZE_MAX,
	    "version");
	bad("NCCL bad busid",
	    "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"zz\" "
	    "class=\"0x030200\"/></cpu></system>",
	    SIZE_MAX, "busid");
	bad("NCCL bad class",
	    "<system version=\"1\"><cpu numaid=\"0\"><pci "
	    "busid=\"0000:01:00.0\" class=\"0xzz\"/></cpu></system>",
	    SIZE_MAX, "class");
	/* found by the fuzzer: hwloc's own mask parser asserts on this */
	bad("NCCL affinity with empty words",
	    "<system version=\"1\"><cpu numaid=\"0\" "
	    "affinity=\",,,,,,,,,,,02020700\">"
	    "<nic><net name=\"eth0\" dev=\"1\"/></nic></cpu></system>",
	    SIZE_MAX, "affinity");
	/* names reach NCCL_IB_HCA / NCCL_SOCKET_IFNAME and the logs */
	bad("NCCL net name with an escape",
	    "<system version=\"1\"><cpu numaid=\"0\" affinity=\"1\">"
	    "<nic><net name=\"ml\x1b]0;x\" dev=\"0\"/></nic></cpu></system>",
	    SIZE_MAX, "<net>: bad name 'ml\x1b]0;x' (1 to 31 letters");
	bad("NCCL net name with a comma",
	    "<system version=\"1\"><cpu numaid=\"0\" affinity=\"1\">"
	    "<nic><net name=\"mlx5_0,mlx5_1\" dev=\"0\"/></nic></cpu>"
	    "</system>",
	    SIZE_MAX, "bad name 'mlx5_0,mlx5_1'");
	bad("NCCL net name too long",
	    "<system version=\"1\"><cpu numaid=\"0\" affinity=\"1\">"
	    "<nic><net name=\"mlx5_0123456789012345678901234567\" "
	    "dev=\"0\"/></nic></cpu></system>",
	    SIZE_MAX, "bad name 'mlx5_0123456789012345678901234567'");
	bad("NCCL affinity word too long",
	    "<system version=\"1\"><cpu numaid=\"0\" "
	    "affinity=\"1ffffffff,0\"/></system>",
	    SIZE_MAX, "affinity");
	bad("NCCL bad numaid",
	    "<system version=\"1\"><cpu numaid=\"x\"/></system>", SIZE_MAX,
	    "numaid");
	bad("NCCL mismatched tags",
	    "<system version=\"1\"><cpu numaid=\"0\"></pci></system>", SIZE_MAX,
	    "does not match");
	bad("NCCL two roots", "<system version=\"1\"/><system version=\"1\"/>",
	    SIZE_MAX, "more than one root");
	bad("NCCL bad entity", "<system version=\"1\" name=\"a&bogus;\"/>",
	    SIZE_MAX, "entity");
	bad("NCCL unterminated comment",
	    "<system version=\"1\"><!-- x </system>", SIZE_MAX, "comment");
	bad("NCCL duplicate attribute", "<system version=\"1\" version=\"1\"/>",
	    SIZE_MAX, "twice");
	bad("NCCL bad speed",
	    "<system version=\"1\"><cpu numaid=\"0\"><pci "
	    "busid=\"0000:01:00.0\" class=\"0x020700\">"
	    "<nic><net name=\"mlx5_0\" dev=\"0\" "
	    "speed=\"fast\"/></nic></pci></cpu></system>",
	    SIZE_MAX, "speed");
	bad("NCCL duplicate GPU",
	    "<system version=\"1\"><cpu numaid=\"0\"><pci "
	    "busid=\"0000:01:00.0\" class=\"0x030200\"/>"
	    "<pci busid=\"0000:01:00.0\" class=\"0x030200\"/></cpu></system>",
	    SIZE_MAX, "twice");
	{
		/* 100 nested elements */
		char deep[2000] = "<system version=\"1\">";

		for (int i = 0; i < 100; i++)
			strcat(deep, "<a>");
		bad("NCCL nested too deep", deep, strlen(deep), "deeply");
	}

	/* truncated copies of an NCCL fixture, at many lengths: never a crash
	 */
	fp = fopen(fix("nccl-8xRTX3090-1xCX6-ib.xml"), "rb");
	buf = malloc(1 << 16);
	len = fp && buf ? fread(buf, 1, 1 << 16, fp) : 0;
	if (fp)
		fclose(fp);
	if (len > 100) {
		int refused = 0, total = 0;

		for (size_t cut = 0; cut < len - 10; cut += 37, total++) {
			write_str(tmp("cut.xml"), buf, cut);
			t = autosync_topo_load_file(tmp("cut.xml"), &err);
			refused += t == NULL;
			autosync_topo_destroy(t);
		}
		ok(refused == total,
		   "all %d truncated copies of the RTX 3090 dump refused",
		   total);
		write_str(tmp("cut.xml"), buf, len / 2);
		t = autosync_topo_load_file(tmp("cut.xml"), &err);
		ok(t == NULL && strstr(err.text, "truncated"), "half file: %s",
		   err.text);
	}
	free(buf);

	/* what NCCL accepts loads here: empty link_speed / link_width / speed
	 * (cloud VMs with passthrough GPUs) and <pci> without a class
	 * (hand-written files NCCL completes from sysfs); unknown stays so */
	write_str(
	    tmp("cloud.xml"),
	    "<system version=\"1\">\n <cpu numaid=\"0\" "
	    "affinity=\"000000ff\" arch=\"x86_64\">\n"
	    "  <pci busid=\"0000:10:00.0\" link_speed=\"\" link_width=\"\">\n"
	    "   <pci busid=\"0000:11:00.0\" class=\"0x030200\" "
	    "vendor=\"0x10de\" link_speed=\"\" link_width=\"\">"
	    "<gpu dev=\"0\" sm=\"80\"/></pci>\n"
	    "   <pci busid=\"0000:12:00.0\"><gpu dev=\"1\" sm=\"80\"/></pci>\n"
	    "   <pci busid=\"0000:13:00.0\" link_speed=\"\"><nic><net "
	    "name=\"mlx5_0\" dev=\"0\" speed=\"\" port=\"1\" latency=\"\"/>"
	    "</nic></pci>\n  </pci>\n </cpu>\n</system>\n",
	    SIZE_MAX);
	t = autosync_topo_load_file(tmp("cloud.xml"), &err);
	ok(t != NULL,
	   "NCCL XML with empty link_speed/link_width/speed and "
	   "class-less <pci>: loads (%s)",
	   err.text);
	if (t) {
		FILE *mem;
		char *text = NULL;
		size_t tl = 0;
		ok(autosync_topo_ngpus(t) == 2 && autosync_topo_nnics(t) == 1,
		   "a class-less <pci> with <gpu> is a GPU, with <nic> a NIC");
		ok(autosync_topo_gpu(t, 0)->pcie_bw == 0 &&
		       autosync_topo_nic(t, 0)->speed == 0,
		   "empty speeds stay unknown (0)");
		ok(!strcmp(autosync_topo_gpu(t, 0)->pcie_switch,
			   "0000:10:00.0"),
		   "the class-less parent is their PCIe switch");
		mem = open_memstream(&text, &tl);
		ok(mem && autosync_topo_write_text(t, mem, &err) == 0 &&
		       fclose(mem) == 0 && strstr(text, " unknown "),
		   "autosync topo says the link speed is unknown");
		free(text);
		autosync_topo_destroy(t);
	}

	/* sysfs's "Unknown" link speed, as NCCL copies it: unknown here too;
	 * a CPU of unknown NUMA node is written -1, as NCCL writes it */
	write_str(tmp("unk.xml"),
		  "<system version=\"1\">\n <cpu numaid=\"0\" "
		  "affinity=\"0000000f\" arch=\"x86_64\">\n"
		  "  <pci busid=\"0000:11:00.0\" class=\"0x030200\" "
		  "vendor=\"0x10de\" link_speed=\"Unknown\" link_width=\"0\">"
		  "<gpu dev=\"0\" sm=\"80\"/></pci>\n </cpu>\n"
		  " <cpu numaid=\"-1\" affinity=\"000000f0\" arch=\"x86_64\">\n"
		  "  <pci busid=\"0000:21:00.0\" class=\"0x030200\" "
		  "vendor=\"0x10de\" link_speed=\"16.0 GT/s PCIe\" "
		  "link_width=\"16\"><gpu dev=\"1\" sm=\"80\"/></pci>\n"
		  " </cpu>\n</system>\n",
		  SIZE_MAX);
	err.text[0] = '\0';
	t = autosync_topo_load_file(tmp("unk.xml"), &err);
	ok(t && autosync_topo_gpu(t, 0)->pcie_bw == 0,
	   "link_speed=\"Unknown\": loads, the speed unknown (%s)", err.text);
	if (t) {
		FILE *mem;
		char *text = NULL;
		const char *p;
		size_t tl = 0;
		int zeros = 0, written;
		mem = open_memstream(&text, &tl);
		written = mem &&
			  autosync_topo_write_nccl_xml(t, mem, &err) == 0 &&
			  fclose(mem) == 0;
		for (p = written ? text : NULL;
		     p && (p = strstr(p, "<cpu numaid=\"0\"")); p++)
			zeros++;
		ok(written && zeros == 1 && strstr(text, "<cpu numaid=\"-1\""),
		   "a CPU of unknown NUMA node is written numaid=\"-1\", not a "
		   "second \"0\" (%d)",
		   zeros);
		free(text);
		autosync_topo_destroy(t);
	}

	/* a GPU-less NCCL file and a GPU-less hwloc file are valid */
	write_str(tmp("nogpu.xml"),
		  "<system version=\"1\">\n <cpu numaid=\"0\" "
		  "affinity=\"0000000f\" arch=\"x86_64\" "
		  "vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n  "
		  "<pci busid=\"0000:3b:00.0\" class=\"0x020000\" "
		  "vendor=\"0x8086\" device=\"0x1592\" link_speed=\"16.0 GT/s "
		  "PCIe\" link_width=\"16\">\n   <nic><net "
		  "name=\"eth0\" dev=\"0\" speed=\"100000\"/></nic>\n  "
		  "</pci>\n </cpu>\n</system>\n",
		  SIZE_MAX);
	t = autosync_topo_load_file(tmp("nogpu.xml"), &err);
	ok(t != NULL && autosync_topo_ngpus(t) == 0 &&
	       autosync_topo_nnics(t) == 1,
	   "GPU-less NCCL file (%s)", err.text);
	if (t) {
		autosync_env_t e[4];
		size_t n;

		ok(autosync_topo_rank_env(t, 0, e, 4, &n, &err) == 0 &&
		       n == 1 && !strcmp(e[0].name, "NCCL_SOCKET_IFNAME") &&
		       !strcmp(e[0].value, "=eth0"),
		   "GPU-less, Ethernet: NCCL_SOCKET_IFNAME==eth0");
		ok(autosync_topo_restrict(t, "0", NULL, &err) == -1 &&
		       strstr(err.text, "does not exist"),
		   "CUDA_VISIBLE_DEVICES=0 on a GPU-less node: %s", err.text);
		ok(!autosync_topo_nic(t, 0)->management,
		   "100 Gbit/s Ethernet is fabric");
		{
			autosync_cluster_t c;

			autosync_cluster_default(&c);
			ok(autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
			       c.transport == AUTOSYNC_TRANSPORT_TCP,
			   "Ethernet without RDMA: transport tcp");
		}
		autosync_topo_destroy(t);
	}
	/* the same port with an RDMA device: RoCE */
	write_str(tmp("roce.xml"),
		  "<system version=\"1\">\n <cpu numaid=\"0\" "
		  "affinity=\"0000000f\" arch=\"x86_64\" "
		  "vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n  "
		  "<pci busid=\"0000:3b:00.0\" class=\"0x020000\" "
		  "vendor=\"0x15b3\" device=\"0x101d\" link_speed=\"16.0 GT/s "
		  "PCIe\" link_width=\"16\">\n   <nic><net "
		  "name=\"mlx5_0\" dev=\"0\" speed=\"100000\"/></nic>\n  "
		  "</pci>\n </cpu>\n</system>\n",
		  SIZE_MAX);
	err.text[0] = '\0';
	t = autosync_topo_load_file(tmp("roce.xml"), &err);
	ok(t != NULL, "RoCE NIC file (%s)", err.text);
	if (t) {
		autosync_cluster_t c;

		autosync_cluster_default(&c);
		ok(autosync_topo_nic(t, 0)->rdma &&
		       autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
		       c.transport == AUTOSYNC_TRANSPORT_ROCE,
		   "Ethernet with an RDMA device: transport roce");
		autosync_topo_destroy(t);
	}
	{
		hwloc_topology_t h;

		if (hwloc_topology_init(&h) == 0) {
			if (hwloc_topology_set_synthetic(
				h, "pack:2 numa:1 core:2 pu:1") == 0 &&
			    hwloc_topology_load(h) == 0)
				hwloc_topology_export_xml(h, tmp("synth.xml"),
							  0);
			hwloc_topology_destroy(h);
		}
		t = autosync_topo_load_file(tmp("synth.xml"), &err);
		if (t) {
			static const struct {
				const char *in, *want;
			} cs[] = {
			    {"0xf", "0-3"},
			    {"0x00000001,0x00000000", "32"},
			    {"00000001,00000000",
			     "0-1"}, /* a list, not a mask */
			    {"0x1ffffffffff", "0-40"},
			    {"0x,,ff", NULL},
			    {"0xff,,", NULL},
			    {"0x1ffffffff,0", NULL},
			    {"0-3,8", "0-3,8"},
			    {"2", "2"},
			    {"0-", NULL},
			    {"3-1", NULL},
			    {"1,,2", NULL},
			    {"-1", NULL},
			    {"0-1048576", NULL},
			    {"", NULL},
			    {"0x0", NULL}, /* empty set */
			};

			for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]);
			     i++) {
				int r = autosync_topo_restrict(t, NULL,
							       cs[i].in, &err);

				if (cs[i].want)
					ok(r == 0 &&
					       !strcmp(autosync_topo_cpuset(t),
						       cs[i].want),
					   "CPU set '%s' = %s (%s)", cs[i].in,
					   cs[i].want, autosync_topo_cpuset(t));
				else
					ok(r == -1 && errno == EINVAL,
					   "CPU set '%s' refused: %s", cs[i].in,
					   err.text);
			}
			autosync_topo_restrict(t, NULL, NULL, &err);
		}
		ok(t != NULL && autosync_topo_ngpus(t) == 0 &&
		       autosync_topo_nnics(t) == 0,
		   "GPU-less hwloc XML is a valid topology (%s)", err.text);
		if (t) {
			is(autosync_topo_cpuset(t), "0-3", "synthetic: 4 PUs");
			FILE *fp2 = fopen(tmp("rt.xml"), "w");

			ok(fp2 &&
			       autosync_topo_write_nccl_xml(t, fp2, &err) == 0,
			   "NCCL XML of a GPU-less node");
			if (fp2)
				fclose(fp2);
		}
		autosync_topo_destroy(t);
		/* hwloc v1 export of the same machine */
		if (hwloc_topology_init(&h) == 0) {
			if (hwloc_topology_set_synthetic(
				h, "pack:2 numa:1 core:2 pu:1") == 0 &&
			    hwloc_topology_load(h) == 0)
				hwloc_topology_export_xml(
				    h, tmp("synth-v1.xml"),
				    HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1);
			hwloc_topology_destroy(h);
		}
		t = autosync_topo_load_file(tmp("synth-v1.xml"), &err);
		ok(t != NULL && autosync_topo_ngpus(t) == 0,
		   "hwloc v1 XML loads (%s)", err.text);
		autosync_topo_destroy(t);
	}
	errno = 0;
	ok(autosync_topo_load_file(NULL, &err) == NULL && errno == EINVAL,
	   "NULL path: EINVAL");
	if (have_fixtures) {
		ok(autosync_topo_load_hwloc_xml(
		       fix("nccl-aws-p4d-8xA100-4xEFA.xml"), &err) == NULL,
		   "NCCL file given to the hwloc reader: %s", err.text);
		ok(autosync_topo_load_nccl_xml(
		       fix("hwloc-power8-4xP100-nvlink.xml"), &err) == NULL,
		   "hwloc file given to the NCCL reader: %s", err.text);
	}
	autosync_topo_destroy(NULL);
	ok(autosync_topo_ngpus(NULL) == 0 && autosync_topo_gpu(NULL, 0) == NULL,
	   "NULL topology queries");
}

/* NVLink and socket-attached NICs in NCCL XML (not in the fixtures) */
static const char nvl_xml[] =
    "<?xml version=\"1.0\"?>\n"
    "<!-- hand-written: GPUs 0,1 joined directly, 2,3 through NVSwitches -->\n"
    "<system version=\"1\">\n"
    "  <cpu numaid=\"0\" affinity=\"000000ff\" arch=\"x86_64\" "
    "vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"106\">\n"
    "    <pci busid=\"0000:17:00.0\" class=\"0x030200\" vendor=\"0x10de\" "
    "device=\"0x20b2\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"><nvlink "
    "target=\"0000:18:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:18:00.0\" class=\"0x030200\" vendor=\"0x10de\" "
    "device=\"0x20b2\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\"><nvlink "
    "target=\"0000:17:00.0\" count=\"4\" tclass=\"0x030200\"/></gpu>\n"
    "    </pci>\n"
    "    <nic><net name=\"eth0\" dev=\"1\" speed=\"10000\" port=\"0\" "
    "gdr=\"0\"/></nic>\n"
    "  </cpu>\n"
    "  <cpu numaid=\"1\" affinity=\"0000ff00\" arch=\"x86_64\" "
    "vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"106\">\n"
    "    <pci busid=\"0000:a7:00.0\" class=\"0x030200\" vendor=\"0x10de\" "
    "device=\"0x20b2\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"2\" sm=\"80\" rank=\"2\" gdr=\"1\"><nvlink "
    "target=\"fffffff:ff:ff.0\" count=\"12\" tclass=\"0x068000\"/></gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:A8:00.0\" class=\"0x030200\" vendor=\"0x10de\" "
    "device=\"0x20b2\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <gpu dev=\"3\" sm=\"80\" rank=\"3\" gdr=\"1\"><nvlink "
    "target=\"fffffff:ff:ff.0\" count=\"12\" tclass=\"0x068000\"/></gpu>\n"
    "    </pci>\n"
    "    <pci busid=\"0000:a9:00.0\" class=\"0x020700\" vendor=\"0x15b3\" "
    "device=\"0x101b\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
    "      <nic><net name=\"mlx5_0\" dev=\"0\" speed=\"200000\" port=\"1\" "
    "gdr=\"1\"/><net name=\"mlx5_0\" dev=\"2\" speed=\"200000\" port=\"2\" "
    "gdr=\"1\"/></nic>\n"
    "    </pci>\n"
    "  </cpu>\n"
    "</system>\n";

static void nvlink_xml(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t, *b;
	double bw, lat;
	int c;
	FILE *fp;

	write_str(tmp("nvl.xml"), nvl_xml, SIZE_MAX);
	t = autosync_topo_load_file(tmp("nvl.xml"), &err);
	ok(t != NULL, "NCCL XML with nvlink elements (%s)", err.text);
	if (!t)
		return;
	ok(autosync_topo_ngpus(t) == 4 && autosync_topo_nnics(t) == 3,
	   "4 GPUs, 3 NICs (one per <net>)");
	is(autosync_topo_gpu(t, 3)->busid, "0000:a8:00.0", "bus id lowercased");
	autosync_topo_link(t, 0, 1, &c, &bw, &lat);
	ok(c == AUTOSYNC_LINK_NVLINK, "GPU 0-1 direct NVLink");
	near(bw, 4 * 20e9, 1, "4 links x 20 GB/s (SM80)");
	autosync_topo_link(t, 2, 3, &c, &bw, &lat);
	ok(c == AUTOSYNC_LINK_NVLINK, "GPU 2-3 through NVSwitch");
	near(bw, 12 * 20e9, 1, "12 links x 20 GB/s");
	autosync_topo_link(t, 1, 2, &c, &bw, &lat);
	ok(c == AUTOSYNC_LINK_CROSS_SOCKET, "GPU 1-2 across CPUs");
	is(autosync_topo_nic(t, 0)->busid, "",
	   "socket-attached NIC has no bus id");
	is(autosync_topo_nic(t, 0)->netdev, "eth0", "socket NIC netdev");
	ok(autosync_topo_nic(t, 0)->management,
	   "10 Gbit/s Ethernet beside IB is management");
	ok(autosync_topo_nic(t, 1)->port == 1 &&
	       autosync_topo_nic(t, 2)->port == 2,
	   "two ports of mlx5_0");
	ok(autosync_topo_gpu(t, 2)->nearest_nic == 1 &&
	       autosync_topo_gpu(t, 3)->nearest_nic == 2,
	   "GPUs 2,3 spread over the two ports");
	ok(autosync_topo_gpu(t, 2)->nic_tier == AUTOSYNC_NIC_TIER_NUMA,
	   "same NUMA, no common switch");
	fp = fopen(tmp("nvl2.xml"), "w");
	ok(fp && autosync_topo_write_nccl_xml(t, fp, &err) == 0, "re-emitted");
	if (fp)
		fclose(fp);
	b = autosync_topo_load_file(tmp("nvl2.xml"), &err);
	/* the management NIC is not re-emitted: compare GPUs and links only */
	ok(b && autosync_topo_ngpus(b) == 4 && autosync_topo_nnics(b) == 2,
	   "re-read: 4 GPUs, fabric NICs (%s)", err.text);
	if (b) {
		int same = 1;

		for (unsigned i = 0; i < 4; i++)
			for (unsigned j = 0; j < 4; j++) {
				double b1, b2;
				int c1, c2;

				autosync_topo_link(t, i, j, &c1, &b1, NULL);
				autosync_topo_link(b, i, j, &c2, &b2, NULL);
				same &= c1 == c2 && b1 == b2;
			}
		ok(same, "NVLinks survive the round trip");
		ok(file_has(tmp("nvl2.xml"),
			    "<nvlink target=\"fffffff:ff:ff.0\" count=\"12\" "
			    "tclass=\"0x068000\"/>"),
		   "NVSwitch link written back");
		ok(file_has(tmp("nvl2.xml"),
			    "<net name=\"mlx5_0\" dev=\"2\" speed=\"200000\" "
			    "port=\"2\" gdr=\"1\"/>"),
		   "second port written back");
	}
	autosync_topo_destroy(b);
	autosync_topo_destroy(t);
	unlink(tmp("nvl.xml"));
	unlink(tmp("nvl2.xml"));
}

/* hwloc v2: a ConnectX-2 (class 0x0c06, mlx4_0 with port 2 ACTIVE, port 1
 * DOWN) and a GeForce (class 0x0300) on one socket, hand-written */
static const char cx2_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n"
    "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\" allowed_cpuset=\"0x00000003\" "
    "nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" "
    "allowed_nodeset=\"0x00000001\" gp_index=\"1\">\n"
    "    <object type=\"Package\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" "
    "complete_nodeset=\"0x00000001\" gp_index=\"2\">\n"
    "      <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" "
    "complete_nodeset=\"0x00000001\" gp_index=\"3\" "
    "local_memory=\"1073741824\"/>\n"
    "      <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" "
    "complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" "
    "complete_nodeset=\"0x00000001\" gp_index=\"4\">\n"
    "        <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" "
    "complete_cpuset=\"0x00000001\" nodeset=\"0x00000001\" "
    "complete_nodeset=\"0x00000001\" gp_index=\"5\"/>\n"
    "        <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" "
    "complete_cpuset=\"0x00000002\" nodeset=\"0x00000001\" "
    "complete_nodeset=\"0x00000001\" gp_index=\"6\"/>\n"
    "      </object>\n"
    "      <object type=\"Bridge\" gp_index=\"7\" bridge_type=\"0-1\" "
    "depth=\"0\" bridge_pci=\"0000:[00-02]\">\n"
    "        <object type=\"Bridge\" gp_index=\"8\" bridge_type=\"1-1\" "
    "depth=\"1\" bridge_pci=\"0000:[01-01]\" pci_busid=\"0000:00:01.0\" "
    "pci_type=\"0604 [8086:3408] [0000:0000] 13\" "
    "pci_link_speed=\"0.000000\">\n"
    "          <object type=\"PCIDev\" gp_index=\"9\" "
    "pci_busid=\"0000:01:00.0\" pci_type=\"0c06 [15b3:673c] [15b3:0018] b0\" "
    "pci_link_speed=\"4.000000\">\n"
    "            <object type=\"OSDev\" gp_index=\"10\" name=\"ib0\" "
    "osdev_type=\"2\">\n"
    "              <info name=\"Address\" "
    "value=\"80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:07:a3:05\"/>\n"
    "            </object>\n"
    "            <object type=\"OSDev\" gp_index=\"11\" name=\"mlx4_0\" "
    "osdev_type=\"3\">\n"
    "              <info name=\"NodeGUID\" value=\"0002:c903:0007:a304\"/>\n"
    "              <info name=\"Port1State\" value=\"1\"/>\n"
    "              <info name=\"Port2State\" value=\"4\"/>\n"
    "            </object>\n"
    "          </object>\n"
    "        </object>\n"
    "        <object type=\"Bridge\" gp_index=\"12\" bridge_type=\"1-1\" "
    "depth=\"1\" bridge_pci=\"0000:[02-02]\" pci_busid=\"0000:00:03.0\" "
    "pci_type=\"0604 [8086:340a] [0000:0000] 13\" "
    "pci_link_speed=\"0.000000\">\n"
    "          <object type=\"PCIDev\" gp_index=\"13\" "
    "pci_busid=\"0000:02:00.0\" pci_type=\"0300 [10de:1b80] [10de:119e] a1\" "
    "pci_link_speed=\"15.753846\"/>\n"
    "        </object>\n"
    "      </object>\n"
    "    </object>\n"
    "  </object>\n"
    "</topology>\n";

static void connectx2(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t;
	autosync_env_t e[4];
	size_t n;

	write_str(tmp("cx2.xml"), cx2_xml, SIZE_MAX);
	t = autosync_topo_load_file(tmp("cx2.xml"), &err);
	ok(t != NULL, "ConnectX-2 hwloc XML loads (%s)", err.text);
	if (t) {
		const autosync_topo_nic_t *nic = autosync_topo_nic(t, 0);

		ok(autosync_topo_ngpus(t) == 1 &&
		       autosync_topo_gpu(t, 0)->class_id == 0x0300,
		   "GeForce class 0x0300 is a GPU");
		ok(nic && nic->kind == AUTOSYNC_NIC_INFINIBAND &&
		       nic->class_id == 0x0c06,
		   "class 0x0c06 is InfiniBand");
		ok(nic && nic->port == 2 && nic->port_state == 4,
		   "the ACTIVE port (2) is used, not port 1 (DOWN)");
		ok(nic && !strcmp(nic->name, "mlx4_0") &&
		       !strcmp(nic->netdev, "ib0"),
		   "mlx4_0 / ib0");
		ok(autosync_topo_gpu(t, 0)->nic_tier == AUTOSYNC_NIC_TIER_NUMA,
		   "different root ports, same NUMA node");
		ok(autosync_topo_rank_env(t, 0, e, 4, &n, &err) == 0 &&
		       n == 1 && !strcmp(e[0].value, "=mlx4_0:2"),
		   "NCCL_IB_HCA==mlx4_0:2, no GDR level off the switch");
		autosync_topo_destroy(t);
	}
	unlink(tmp("cx2.xml"));
}

static const char *const all_files[] = {
    "hwloc-juwels-booster-4xA100-4xHDR.xml",
    "hwloc-dgx2h-16xV100-12xNVSwitch.xml",
    "hwloc-power8-4xP100-nvlink.xml",
    "hwloc-supermicro-x9drg-3xM2075-1xIB-wholeio.xml",
    "nccl-8xRTX3090-1xCX6-ib.xml",
    "nccl-aws-p4d-8xA100-4xEFA.xml",
    "nccl-azure-ndv4-8xA100-8xHDR.xml",
};

/* hwloc unloads its plugins (libpciaccess) when the last topology goes; the
 * plugin's own allocations then look leaked to LeakSanitizer. Keep one
 * topology for the life of the process so they stay reachable. */
static hwloc_topology_t keep_plugins;

int main(void)
{
	char tmpl[] = "/tmp/autosync-topo-test.XXXXXX";

	plan(NO_PLAN);
	if (hwloc_topology_init(&keep_plugins) < 0)
		keep_plugins = NULL;
	have_fixtures = find_fixdir(fixdir, sizeof(fixdir)) == 0;
	if (!mkdtemp(tmpl))
		bail_out("mkdtemp: %s", strerror(errno));
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);

	if (have_fixtures) {
		for (size_t i = 0; i < sizeof(all_files) / sizeof(all_files[0]);
		     i++) {
			round_trip(all_files[i], NULL);
			writers(all_files[i]);
		}
		{
			/* hwloc link speed 7.876923 GB/s = Gen3 x8 (not Gen2
			 * x16 = 8.0); 15.753846 = Gen3 x16 */
			autosync_error_t e2;
			autosync_topo_t *p8 = autosync_topo_load_file(
			    fix("hwloc-power8-4xP100-nvlink.xml"), &e2);
			FILE *fp = fopen(tmp("p8.xml"), "w");

			ok(p8 && fp &&
			       autosync_topo_write_nccl_xml(p8, fp, &e2) == 0,
			   "power8 NCCL XML");
			if (fp)
				fclose(fp);
			ok(file_has(
			       tmp("p8.xml"),
			       "busid=\"0002:00:00.0\" class=\"0x060400\" "
			       "vendor=\"0x1014\" device=\"0x03dc\" "
			       "subsystem_vendor=\"0x0000\" "
			       "subsystem_device=\"0x0000\" "
			       "link_speed=\"8.0 GT/s PCIe\" link_width=\"8\""),
			   "power8 root port: 8.0 GT/s x8");
			ok(file_has(
			       tmp("p8.xml"),
			       "busid=\"0002:01:00.0\" class=\"0x030200\"") &&
			       file_has(tmp("p8.xml"),
					"link_speed=\"8.0 GT/s PCIe\" "
					"link_width=\"16\"/>"),
			   "power8 GPU: 8.0 GT/s x16");
			unlink(tmp("p8.xml"));
			autosync_topo_destroy(p8);
		}
		round_trip("nccl-8xRTX3090-1xCX6-ib.xml", "7,4");
		ok(file_has(tmp("rt.xml"), "<gpu sm=\"86\" gdr=\"0\"/>") &&
		       !file_has(tmp("rt.xml"), "<gpu dev=") &&
		       !file_has(tmp("rt.xml"), "rank="),
		   "restricted NCCL XML: neither dev (NCCL's NVML index, which "
		   "it fills itself) nor rank");
		round_trip("hwloc-juwels-booster-4xA100-4xHDR.xml", "3,1");
	} else {
		skip(1, "tests/fixtures/topologies not found: fixture round "
			"trips");
	}
	nvlink_xml();
	connectx2();
	writers(NULL);
	live();
	bad_inputs();
	too_many_gpus();

	{
		const char *names[] = {
		    "rt.xml",	 "out.yaml",  "out.txt",
		    "live.xml",	 "bad.xml",   "cut.xml",
		    "nogpu.xml", "synth.xml", "synth-v1.xml"};

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(tmp(names[i]));
		rmdir(tmpdir);
	}
	return done_testing();
}
