/*
 * autosync/cluster.h - the planner's view of the machines a job runs on,
 * and the value functions of the common layer around it: bandwidth and
 * duration units, link classes, the compact cluster description.
 *
 * A plain value type (no pointers, copy it freely): the topology library
 * fills it from a node's (restricted) topology plus the site's network
 * description, or from a compact cluster description string; the planner
 * only reads it. Units: bytes per second and seconds.
 */
#ifndef AUTOSYNC_CLUSTER_H
#define AUTOSYNC_CLUSTER_H

#include "autosync/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Link classes between two GPUs of one node, best first. */
enum autosync_link_class {
	AUTOSYNC_LINK_NVLINK = 0,   /* NVLink or NVSwitch */
	AUTOSYNC_LINK_PCIE_SWITCH,  /* same PCIe switch */
	AUTOSYNC_LINK_HOST_BRIDGE,  /* same host bridge / root complex, same
				       socket */
	AUTOSYNC_LINK_CROSS_SOCKET, /* across the CPU interconnect */
	AUTOSYNC_LINK_NET,	    /* between nodes */
	AUTOSYNC_LINK_NCLASSES
};

/* How ranks on different nodes reach each other: what NCCL's network
 * layer would use (NET/IB for InfiniBand and RoCE, NET/Socket for TCP). */
enum autosync_transport {
	AUTOSYNC_TRANSPORT_UNKNOWN = 0,
	AUTOSYNC_TRANSPORT_TCP,	 /* kernel sockets */
	AUTOSYNC_TRANSPORT_IB,	 /* InfiniBand verbs */
	AUTOSYNC_TRANSPORT_ROCE, /* RDMA over Converged Ethernet */
	AUTOSYNC_TRANSPORT_COUNT
};

typedef struct autosync_cluster {
	unsigned nodes;		/* nodes in the job step (>= 1) */
	unsigned gpus_per_node; /* GPUs (= ranks) per node (>= 1) */
	/* intra-node: the bottleneck class among the node's GPU pairs */
	int intra_class;  /* enum autosync_link_class */
	double intra_bw;  /* B/s, per GPU, one direction */
	double intra_lat; /* s */
	/* inter-node */
	unsigned nics_per_node;	   /* fabric NICs usable by the job (>= 1) */
	double nic_bw;		   /* B/s per NIC, one direction */
	double inter_lat;	   /* s, one hop between nodes */
	unsigned nodes_per_switch; /* 0 = unknown / flat */
	char topo_hash[17]; /* hex hash of the node topology, "" if none */
	int transport;	    /* enum autosync_transport */
} autosync_cluster_t;

/* ------------------------------------------------------------------ units */

/*
 * Parse a bandwidth: a finite number > 0, optional blanks, then a unit
 * [PREFIX](B|b|bit)/s where B = bytes, b/bit = bits and PREFIX is one of
 * k K M G T P (powers of 1000) or Ki Mi Gi Ti (powers of 1024).
 * Examples: "200Gbit/s", "200Gb/s", "25GB/s", "300 GB/s", "12.5e9B/s",
 * "100Mbit/s". The unit is required. Stores bytes per second in *bytes_per_s.
 * Errors: EINVAL with a message naming the value.
 */
int autosync_parse_bandwidth(const char *s, double *bytes_per_s,
			     autosync_error_t *errp);

/*
 * Parse a duration: a finite number >= 0, optional blanks, then one of the
 * units s, ms, us, µs (U+00B5 or U+03BC), ns. Examples: "2us", "2µs",
 * "1.5ms", "5e-6s", "800ns". The unit is required. Stores seconds.
 */
int autosync_parse_duration(const char *s, double *seconds,
			    autosync_error_t *errp);

/* The ranges every reader of a network takes (cluster descriptions, the
 * site config's network): bandwidths in bytes/s, latencies in seconds. */
#define AUTOSYNC_BW_MIN (1e6 / 8) /* 1 Mbit/s */
#define AUTOSYNC_BW_MAX 100e12	  /* 100 TB/s */
#define AUTOSYNC_LAT_MIN 1e-9
#define AUTOSYNC_LAT_MAX 1.0

/* ------------------------------------------------------------ link classes */

/* "nvlink", "pcie_switch", "host_bridge", "cross_socket", "net"; static
 * storage; "unknown" for an out-of-range value. */
const char *autosync_link_class_name(int cls);
/* The enum autosync_link_class value for a name above, or -1 (EINVAL). */
int autosync_link_class_from_name(const char *name);
/*
 * Built-in estimate for a link class (per GPU, one direction); see
 * docs/topology.md for the values and their sources. A topology keeps its
 * own copy of this table (autosync_topo_set_link_class()).
 */
int autosync_link_class_default(int cls, double *bw, double *lat);

/* "unknown", "tcp", "ib", "roce"; static storage; "unknown" for an
 * out-of-range value. */
const char *autosync_transport_name(int transport);
/* The enum autosync_transport value for a name above, or -1 (EINVAL). */
int autosync_transport_from_name(const char *name);

/* --------------------------------------------------------- cluster values */

/*
 * The documented default cluster: 4 nodes x 8 GPUs joined by NVLink
 * (240 GB/s, 0.6 us per GPU), 4 x 200 Gbit/s fabric NICs per node, 2 us
 * between nodes, nodes_per_switch 0 (flat / unknown), no topology hash,
 * transport unknown.
 */
void autosync_cluster_default(autosync_cluster_t *c);

/*
 * Parse a compact cluster description into *c. The fields not named in
 * 'spec' keep the values of autosync_cluster_default() (*c is overwritten
 * entirely, and only on success). Syntax: comma-separated key=value items,
 * blanks around keys and values ignored, each key at most once, units
 * required:
 *   nodes=N                  nodes in the step, 1..65536
 *   gpus=N                   GPUs (= ranks) per node, 1..1024
 *   intra=CLASS[:BW[:LAT]]   bottleneck GPU-GPU link class in a node (nvlink,
 *                            pcie_switch, host_bridge, cross_socket); BW and
 *                            LAT default to the class's built-in estimate
 *   intra_bw=BW, intra_lat=LAT   override the two values separately
 *   nics=N[xBW]              fabric NICs per node 1..64, optional speed each
 *   nic_bw=BW                speed of one NIC
 *   lat=LAT                  latency of one hop between nodes
 *   nodes_per_switch=N       0 (flat / unknown) .. 65536
 *   hash=HEX16               topology hash (16 hex digits) or "" / "none"
 *   transport=NAME           tcp, ib, roce or unknown (the default)
 * BW: autosync_parse_bandwidth(), 1 Mbit/s .. 100 TB/s; LAT:
 * autosync_parse_duration(), 1 ns .. 1 s (intra may be 0).
 * Example: "nodes=4,gpus=8,intra=nvlink:300GB/s:1us,nics=4x200Gbit/s,lat=2us"
 * An empty string gives the defaults. Errors: EINVAL, the message names the
 * key and the value. 'c' is written only on success.
 */
int autosync_cluster_parse(autosync_cluster_t *c, const char *spec,
			   autosync_error_t *errp);

/* The same items applied over *c: fields 'spec' does not name keep their
 * values in *c ("" changes nothing). 'c' is written only on success. */
int autosync_cluster_update(autosync_cluster_t *c, const char *spec,
			    autosync_error_t *errp);

/*
 * Write 'c' as a spec that autosync_cluster_parse() reads back to the same
 * values (up to printing precision, %.17g). transport= is written only
 * when known, so a cluster without one formats as it did before the key
 * existed. Returns the length that was needed (snprintf semantics), or -1
 * (EINVAL).
 */
int autosync_cluster_format(const autosync_cluster_t *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_CLUSTER_H */
