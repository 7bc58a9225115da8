/*
 * autosync/cluster.h - the planner's view of the machines a job runs on.
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
	AUTOSYNC_LINK_HOST_BRIDGE,  /* same host bridge / root complex, same socket */
	AUTOSYNC_LINK_CROSS_SOCKET, /* across the CPU interconnect */
	AUTOSYNC_LINK_NET,          /* between nodes */
	AUTOSYNC_LINK_NCLASSES
};

typedef struct autosync_cluster {
	unsigned nodes;           /* nodes in the job step (>= 1) */
	unsigned gpus_per_node;   /* GPUs (= ranks) per node (>= 1) */
	/* intra-node: the bottleneck class among the node's GPU pairs */
	int intra_class;          /* enum autosync_link_class */
	double intra_bw;          /* B/s, per GPU, one direction */
	double intra_lat;         /* s */
	/* inter-node */
	unsigned nics_per_node;   /* fabric NICs usable by the job (>= 1) */
	double nic_bw;            /* B/s per NIC, one direction */
	double inter_lat;         /* s, one hop between nodes */
	unsigned nodes_per_switch;/* 0 = unknown / flat */
	char topo_hash[17];       /* hex hash of the node topology, "" if none */
} autosync_cluster_t;

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_CLUSTER_H */
