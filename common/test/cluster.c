/* Unit tests for the unit parsers and the compact cluster description. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "autosync/cluster.h"
#include "tap.h"

static const struct {
	const char *s;
	double want;
} bw_ok[] = {
    {"200Gbit/s", 25e9}, {"200Gb/s", 25e9},	{"25GB/s", 25e9},
    {"300 GB/s", 300e9}, {"12.5e9B/s", 12.5e9}, {"100Mbit/s", 12.5e6},
    {"1kB/s", 1e3},	 {"1KiB/s", 1024},	{"2GiB/s", 2147483648.0},
    {"1TB/s", 1e12},	 {"  8 bit/s", 1},	{".5GB/s", 0.5e9},
};

static const char *const bw_bad[] = {
    "",		 "200",		 "200G",       "200Gbit",   "GB/s",
    "-5GB/s",	 "0GB/s",	 "inf GB/s",   "nanGB/s",   "0x10GB/s",
    "200gbit/s", "200 Gbit / s", "200Gbit/s ", "1e999GB/s", "200mb/s",
    "200Gbps",	 "2 00GB/s",
};

static const struct {
	const char *s;
	double want;
} dur_ok[] = {
    {"2us", 2e-6},     {"2\xc2\xb5s", 2e-6}, {"2\xce\xbcs", 2e-6},
    {"1.5ms", 1.5e-3}, {"5e-6s", 5e-6},	     {"800ns", 800e-9},
    {"0s", 0},	       {"3 s", 3},
};

static const char *const dur_bad[] = {
    "", "2", "2 u", "us", "-1us", "2min", "1e999s", "nan s", "2uss", "2 us x",
};

static const struct {
	const char *spec;
	const char *why;
} spec_bad[] = {
    {"nodes=0", "nodes"},
    {"nodes=65537", "nodes"},
    {"nodes=4,nodes=4", "twice"},
    {"gpus=1025", "gpus"},
    {"gpus=-1", "gpus"},
    {"gpus=8x", "gpus"},
    {"colour=blue", "colour"},
    {"nodes", "key=value"},
    {"nodes=4,,gpus=8", "empty item"},
    {"nodes=4,", "empty item"},
    {"intra=warp", "warp"},
    {"intra=net", "net"},
    {"intra=nvlink:300", "intra"},
    {"intra=nvlink:300GB/s:1", "intra"},
    {"nics=0x200Gbit/s", "nics"},
    {"nics=65", "nics"},
    {"nics=4x", "nics"},
    {"nic_bw=1bit/s", "nic_bw"},
    {"nic_bw=1PB/s", "nic_bw"},
    {"lat=0s", "lat"},
    {"lat=2s", "lat"},
    {"lat=2", "lat"},
    {"nodes_per_switch=70000", "nodes_per_switch"},
    {"hash=xyz", "hash"},
    {"hash=0123456789abcdefg", "hash"},
    {"=4", "unknown key"},
    {"nodes=", "nodes"},
    {"transport=IB", "transport='IB': want tcp, ib, roce or unknown"},
    {"transport=", "transport=''"},
};

int main(void)
{
	autosync_error_t err = {.text = ""};
	autosync_cluster_t c, d, e;
	char buf[512];
	double v;

	plan(NO_PLAN);

	for (size_t i = 0; i < sizeof(bw_ok) / sizeof(bw_ok[0]); i++) {
		v = -1;
		ok(autosync_parse_bandwidth(bw_ok[i].s, &v, &err) == 0,
		   "bandwidth '%s' parses", bw_ok[i].s);
		near(v, bw_ok[i].want, bw_ok[i].want * 1e-12,
		     "bandwidth '%s' value", bw_ok[i].s);
	}
	for (size_t i = 0; i < sizeof(bw_bad) / sizeof(bw_bad[0]); i++) {
		err.text[0] = '\0';
		errno = 0;
		ok(autosync_parse_bandwidth(bw_bad[i], &v, &err) == -1 &&
		       errno == EINVAL,
		   "bandwidth '%s' refused with EINVAL", bw_bad[i]);
		ok(strstr(err.text, "bad bandwidth") != NULL, "message: %s",
		   err.text);
	}
	for (size_t i = 0; i < sizeof(dur_ok) / sizeof(dur_ok[0]); i++) {
		v = -1;
		ok(autosync_parse_duration(dur_ok[i].s, &v, &err) == 0,
		   "duration '%s' parses", dur_ok[i].s);
		near(v, dur_ok[i].want, 1e-18, "duration '%s' value",
		     dur_ok[i].s);
	}
	for (size_t i = 0; i < sizeof(dur_bad) / sizeof(dur_bad[0]); i++) {
		err.text[0] = '\0';
		errno = 0;
		ok(autosync_parse_duration(dur_bad[i], &v, &err) == -1 &&
		       errno == EINVAL,
		   "duration '%s' refused with EINVAL", dur_bad[i]);
		ok(strstr(err.text, "bad duration") != NULL, "message: %s",
		   err.text);
	}
	errno = 0;
	ok(autosync_parse_duration(NULL, &v, NULL) == -1 && errno == EINVAL,
	   "NULL duration: EINVAL");
	ok(autosync_parse_bandwidth("1GB/s", NULL, NULL) == -1 &&
	       errno == EINVAL,
	   "NULL out: EINVAL");

	/* link classes */
	is(autosync_link_class_name(AUTOSYNC_LINK_NVLINK), "nvlink",
	   "class name nvlink");
	is(autosync_link_class_name(AUTOSYNC_LINK_CROSS_SOCKET), "cross_socket",
	   "class name cross_socket");
	is(autosync_link_class_name(99), "unknown", "class name out of range");
	ok(autosync_link_class_from_name("pcie_switch") ==
	       AUTOSYNC_LINK_PCIE_SWITCH,
	   "class from name");
	ok(autosync_link_class_from_name("bogus") == -1, "class from bad name");
	ok(autosync_link_class_default(AUTOSYNC_LINK_NCLASSES, &v, NULL) == -1,
	   "class default out of range");
	for (int k = 0; k < AUTOSYNC_LINK_NCLASSES - 2; k++) {
		double b1, b2;

		autosync_link_class_default(k, &b1, NULL);
		autosync_link_class_default(k + 1, &b2, NULL);
		ok(b1 >= b2, "class %s not slower than %s",
		   autosync_link_class_name(k),
		   autosync_link_class_name(k + 1));
	}

	/* defaults */
	autosync_cluster_default(&c);
	ok(c.nodes == 4 && c.gpus_per_node == 8 && c.nics_per_node == 4,
	   "default 4 x 8 GPUs, 4 NICs");
	ok(c.intra_class == AUTOSYNC_LINK_NVLINK, "default intra nvlink");
	near(c.nic_bw, 25e9, 1, "default NIC 200 Gbit/s");
	near(c.inter_lat, 2e-6, 1e-15, "default inter lat 2us");
	is(c.topo_hash, "", "default no hash");
	autosync_cluster_default(NULL);

	/* a full description */
	ok(autosync_cluster_parse(
	       &c,
	       "nodes=16, "
	       "gpus=4,intra=pcie_switch:24GB/s:1.5us,nics=2x100Gbit/s,"
	       "lat=5us,nodes_per_switch=8,hash=0123456789ABCDEF",
	       &err) == 0,
	   "full spec parses (%s)", err.text);
	ok(c.nodes == 16 && c.gpus_per_node == 4, "nodes 16, gpus 4");
	ok(c.intra_class == AUTOSYNC_LINK_PCIE_SWITCH, "intra class");
	near(c.intra_bw, 24e9, 1, "intra bw");
	near(c.intra_lat, 1.5e-6, 1e-15, "intra lat");
	ok(c.nics_per_node == 2, "2 NICs");
	near(c.nic_bw, 12.5e9, 1, "NIC bw");
	near(c.inter_lat, 5e-6, 1e-15, "inter lat");
	ok(c.nodes_per_switch == 8, "nodes per switch");
	is(c.topo_hash, "0123456789abcdef", "hash lowercased");

	/* format round trip */
	ok(autosync_cluster_format(&c, buf, sizeof(buf)) > 0, "format: %s",
	   buf);
	ok(autosync_cluster_parse(&d, buf, &err) == 0,
	   "formatted spec parses back (%s)", err.text);
	ok(memcmp(&c, &d, sizeof(c)) == 0, "round trip identical");
	ok(strstr(buf, "transport") == NULL,
	   "an unknown transport is not written");

	/* transport: written when known, read back */
	ok(autosync_cluster_parse(&c, "nodes=2,transport=roce", &err) == 0 &&
	       c.transport == AUTOSYNC_TRANSPORT_ROCE,
	   "transport=roce parses (%s)", err.text);
	ok(autosync_cluster_format(&c, buf, sizeof(buf)) > 0 &&
	       strlen(buf) > 15 &&
	       !strcmp(buf + strlen(buf) - 15, ",transport=roce"),
	   "transport written last: %s", buf);
	ok(autosync_cluster_parse(&d, buf, &err) == 0 &&
	       d.transport == AUTOSYNC_TRANSPORT_ROCE,
	   "and read back");
	ok(autosync_cluster_update(&c, "transport=unknown", &err) == 0 &&
	       c.transport == AUTOSYNC_TRANSPORT_UNKNOWN,
	   "transport=unknown clears it");
	is(autosync_transport_name(AUTOSYNC_TRANSPORT_IB), "ib",
	   "transport name ib");
	is(autosync_transport_name(-1), "unknown", "transport out of range");
	ok(autosync_transport_from_name("tcp") == AUTOSYNC_TRANSPORT_TCP &&
	       autosync_transport_from_name("Socket") == -1,
	   "transport from name");
	autosync_cluster_default(&c);
	ok(c.transport == AUTOSYNC_TRANSPORT_UNKNOWN,
	   "default transport unknown");

	/* partial: defaults elsewhere; class default bw, overrides in any order
	 */
	ok(autosync_cluster_parse(&c, "intra_bw=50GB/s,intra=host_bridge",
				  &err) == 0,
	   "intra_bw before intra");
	near(c.intra_bw, 50e9, 1, "intra_bw wins over class default");
	ok(autosync_cluster_parse(&c, "intra=cross_socket", &err) == 0,
	   "class only");
	autosync_link_class_default(AUTOSYNC_LINK_CROSS_SOCKET, &v, NULL);
	near(c.intra_bw, v, 1, "class default bandwidth");
	ok(c.nodes == 4 && c.gpus_per_node == 8, "other keys default");
	ok(autosync_cluster_parse(&c, "nics=3", &err) == 0 &&
	       c.nics_per_node == 3,
	   "nics without speed");
	near(c.nic_bw, 25e9, 1, "nic speed default kept");
	ok(autosync_cluster_parse(&c, "", &err) == 0, "empty spec");
	autosync_cluster_default(&e);
	ok(memcmp(&c, &e, sizeof(c)) == 0, "empty spec = defaults");
	ok(autosync_cluster_parse(&c, "  ", &err) == 0, "blank spec");

	/* errors leave c alone and name the key */
	for (size_t i = 0; i < sizeof(spec_bad) / sizeof(spec_bad[0]); i++) {
		autosync_cluster_default(&c);
		c.nodes = 77;
		err.text[0] = '\0';
		errno = 0;
		ok(autosync_cluster_parse(&c, spec_bad[i].spec, &err) == -1 &&
		       errno == EINVAL,
		   "'%s' refused", spec_bad[i].spec);
		ok(strstr(err.text, spec_bad[i].why) != NULL,
		   "message names '%s': %s", spec_bad[i].why, err.text);
		ok(c.nodes == 77, "'%s' leaves the cluster unchanged",
		   spec_bad[i].spec);
	}
	{
		char big[5000];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		ok(autosync_cluster_parse(&c, big, &err) == -1 &&
		       errno == EINVAL,
		   "over-long spec refused");
	}
	ok(autosync_cluster_parse(NULL, "", NULL) == -1 && errno == EINVAL,
	   "NULL cluster: EINVAL");
	ok(autosync_cluster_parse(&c, NULL, NULL) == -1 && errno == EINVAL,
	   "NULL spec: EINVAL");
	return done_testing();
}
