/*
 * autosync/topology.h - what the job was really given: GPUs, NICs, NUMA and
 * PCIe paths (read through hwloc or from NCCL topology XML), and the compact
 * cluster description for nodes the plugin cannot see.
 *
 * Conventions (see autosync/common.h): functions return 0 / -1 (or a pointer
 * / NULL) and set errno; 'errp' may always be NULL; nothing here prints.
 * Units: bytes per second and seconds.
 */
#ifndef AUTOSYNC_TOPOLOGY_H
#define AUTOSYNC_TOPOLOGY_H

#include <stdint.h>
#include <stdio.h>

#include "autosync/cluster.h"
#include "autosync/common.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* --------------------------------------------------------- cluster values */

/*
 * The documented default cluster: 4 nodes x 8 GPUs joined by NVLink
 * (240 GB/s, 0.6 us per GPU), 4 x 200 Gbit/s fabric NICs per node, 2 us
 * between nodes, nodes_per_switch 0 (flat / unknown), no topology hash.
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
 * BW: autosync_parse_bandwidth(), 1 Mbit/s .. 100 TB/s; LAT:
 * autosync_parse_duration(), 1 ns .. 1 s (intra may be 0).
 * Example: "nodes=4,gpus=8,intra=nvlink:300GB/s:1us,nics=4x200Gbit/s,lat=2us"
 * An empty string gives the defaults. Errors: EINVAL, the message names the
 * key and the value. 'c' is written only on success.
 */
int autosync_cluster_parse(autosync_cluster_t *c, const char *spec,
			   autosync_error_t *errp);

/*
 * Write 'c' as a spec that autosync_cluster_parse() reads back to the same
 * values (up to printing precision, %.17g). Returns the length that was
 * needed (snprintf semantics), or -1 (EINVAL).
 */
int autosync_cluster_format(const autosync_cluster_t *c, char *buf,
			    size_t len);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_TOPOLOGY_H */
