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

/* --------------------------------------------------------------- topology */

/* Opaque node topology: created by one of the autosync_topo_load_*()
 * functions, freed with autosync_topo_destroy(). Not thread-safe for
 * concurrent modification; concurrent const queries are fine. */
typedef struct autosync_topo autosync_topo_t;

/* How close a GPU's nearest fabric NIC is, best first. */
enum autosync_nic_tier {
	/* below the same PCIe switch / root port */
	AUTOSYNC_NIC_TIER_PCIE_SWITCH = 0,
	AUTOSYNC_NIC_TIER_NUMA,	   /* same NUMA node */
	AUTOSYNC_NIC_TIER_PACKAGE, /* same package (socket) */
	AUTOSYNC_NIC_TIER_SYSTEM,  /* only across the CPU interconnect */
	AUTOSYNC_NIC_TIER_NONE,	   /* no fabric NIC at all */
};

enum autosync_nic_kind {
	AUTOSYNC_NIC_INFINIBAND = 0, /* PCI class 0x0207 or 0x0c06 */
	AUTOSYNC_NIC_ETHERNET,	     /* 0x0200 */
	AUTOSYNC_NIC_OTHER,	     /* 0x0280 and anything else */
};

/* A GPU as the job sees it. Strings are "" when unknown, PCI ids and
 * speeds 0, NUMA/package -1. Valid until the next restrict/destroy of its
 * topology. */
typedef struct autosync_topo_gpu {
	char busid[24]; /* PCI bus id, lowercase "0000:17:00.0" */
	unsigned vendor_id, device_id;
	unsigned class_id; /* 0x0302 or 0x0300 */
	char model[64];	   /* GPUModel (CUDA/NVML/driver), "" unknown */
	char uuid[80];	   /* "GPU-xxxxxxxx-..." when known */
	int sm;		   /* compute capability x 10 (NCCL XML), 0 unknown */
	double pcie_bw;	   /* B/s of its PCIe link, 0 unknown */
	int numa;	   /* NUMA node OS index, -1 unknown */
	int package;	   /* package OS index, -1 unknown */
	char pcie_switch[24]; /* bus id of the PCIe switch above it, "" none */
	/* local CPUs as a list ("0-5,48-53"), within the job's CPU set */
	const char *cpuset;
	int nearest_nic;  /* index for autosync_topo_nic(), -1 none */
	int nic_tier;	  /* enum autosync_nic_tier */
	double nvlink_bw; /* B/s over NVLink (to peers or NVSwitches), 0 none */
} autosync_topo_gpu_t;

/* A network adapter (PCI function). */
typedef struct autosync_topo_nic {
	char busid[24];
	unsigned vendor_id, device_id, class_id;
	int kind;	   /* enum autosync_nic_kind */
	char name[32];	   /* RDMA device (mlx5_0), "" none */
	char netdev[32];   /* network interface (ib0, eth0), "" none */
	int port;	   /* port used, 0 unknown */
	int port_state;	   /* IB port state, 4 = ACTIVE, -1 unknown */
	double speed;	   /* B/s, 0 unknown */
	double pcie_bw;	   /* B/s, 0 unknown */
	int numa, package; /* -1 unknown */
	char pcie_switch[24];
	int management; /* 1: management / low-speed NIC, not for the fabric */
	int rdma;	/* 1: has an RDMA device (IB, RoCE) */
} autosync_topo_nic_t;

/*
 * Load the machine this process runs on through hwloc, with I/O discovery
 * (PCI devices, bridges, OS devices). Also reads, when present,
 * /proc/driver/nvidia/gpus/BUSID/information (model, UUID) and
 * /sys/class/{infiniband,net} (port state, link speed) and NVML (NVLinks,
 * loaded at run time when the NVIDIA driver is there). The job CPU set is
 * the process's allowed CPU set (cgroup). Returns a new topology (caller
 * destroys).
 * Note for sanitized builds: hwloc unloads its PCI plugin when its last
 * topology is destroyed, after which LeakSanitizer reports libpciaccess's
 * allocations; a program that must run leak-clean keeps one
 * hwloc_topology_init()ed topology for its lifetime (see cli/topo.c).
 */
autosync_topo_t *autosync_topo_load_live(autosync_error_t *errp);
/* Load an hwloc XML file (v1 or v2.0; hwloc 2.x refuses v3.0). */
autosync_topo_t *autosync_topo_load_hwloc_xml(const char *path,
					      autosync_error_t *errp);
/* Load an NCCL topology XML file (<system version="1">). */
autosync_topo_t *autosync_topo_load_nccl_xml(const char *path,
					     autosync_error_t *errp);
/* Load either format, detected by the root element (<topology> / <system>). */
autosync_topo_t *autosync_topo_load_file(const char *path,
					 autosync_error_t *errp);
/* Accepts NULL. */
void autosync_topo_destroy(autosync_topo_t *t);
/* Optional log callback, used by later calls on 't' (restrictions): a GPU
 * with none of the job's CPUs local to it (warning), a GPU whose nearest
 * NIC is across sockets or that has none (info). 'arg' is borrowed. */
void autosync_topo_set_log(autosync_topo_t *t, autosync_log_f fn, void *arg);

/*
 * Restrict the view to what the job may use; always relative to the full
 * topology (calling it again replaces the previous restriction).
 *  'gpus': NULL = every GPU; else CUDA_VISIBLE_DEVICES syntax: a comma list
 *          of indices (into the node's GPUs in PCI bus id order), GPU UUIDs
 *          ("GPU-..."; a unique prefix is enough) or PCI bus ids; "" or
 *          "NoDevFiles" = no GPU. Order is kept: GPU i of the view is the
 *          device CUDA numbers i. MIG UUIDs and unknown devices: EINVAL.
 *  'cpuset': NULL = keep all CPUs; else a CPU list "0-3,8" or a hex mask
 *          "0xff"; GPU/NIC local CPU sets are intersected with it.
 */
int autosync_topo_restrict(autosync_topo_t *t, const char *gpus,
			   const char *cpuset, autosync_error_t *errp);
/*
 * The site's list of fabric NICs (site config network.fabric_nics): NICs
 * whose RDMA device or network interface name is in 'names' carry the
 * fabric, every other NIC is management (never a rank's NIC, not counted
 * in the cluster's NICs), replacing the built-in classification. Names the
 * node lacks are ignored; none of them on the node fails with ENOENT
 * naming the list. n == 0 keeps the classification. Apply before
 * restricting (either order works; the view is rebuilt).
 */
int autosync_topo_set_fabric_nics(autosync_topo_t *t, const char *const *names,
				  size_t n, autosync_error_t *errp);
/*
 * The same from the job's environment values (any may be NULL = unset):
 * SLURM_STEP_GPUS, else SLURM_JOB_GPUS, names node GPU indices (PCI bus
 * order); CUDA_VISIBLE_DEVICES then selects among those (indices relative
 * to the Slurm list when Slurm constrains devices, i.e. when the lists
 * differ; UUIDs and bus ids match absolutely).
 */
int autosync_topo_restrict_env(autosync_topo_t *t,
			       const char *cuda_visible_devices,
			       const char *slurm_step_gpus,
			       const char *slurm_job_gpus, const char *cpuset,
			       autosync_error_t *errp);
/*
 * The same inside a container (Kubernetes' device plugin, the NVIDIA
 * container toolkit), where hwloc sees every GPU of the node:
 * NVIDIA_VISIBLE_DEVICES lists the node GPUs the container got (indices or
 * UUIDs; unset, empty, "all" or "void": no list; "none": no GPU, ENODEV)
 * and CUDA_VISIBLE_DEVICES counts within that list (an index beyond it:
 * EINVAL). With a Slurm list the container's list is not used.
 */
int autosync_topo_restrict_container(
    autosync_topo_t *t, const char *nvidia_visible_devices,
    const char *cuda_visible_devices, const char *slurm_step_gpus,
    const char *slurm_job_gpus, const char *cpuset, autosync_error_t *errp);

/* Counts and items of the restricted view; items are borrowed (NULL when
 * out of range). NICs are all the node's NICs, in PCI bus order. */
unsigned autosync_topo_ngpus(const autosync_topo_t *t);
const autosync_topo_gpu_t *autosync_topo_gpu(const autosync_topo_t *t,
					     unsigned i);
unsigned autosync_topo_nnics(const autosync_topo_t *t);
const autosync_topo_nic_t *autosync_topo_nic(const autosync_topo_t *t,
					     unsigned i);
/* GPUs of the whole node, before restriction. */
unsigned autosync_topo_ngpus_total(const autosync_topo_t *t);

/* Link between GPUs i and j of the view: class, estimated bandwidth (B/s,
 * one direction) and latency (s). NVLink pairs use the measured/declared
 * NVLink bandwidth when known; other classes the topology's class table. */
int autosync_topo_link(const autosync_topo_t *t, unsigned i, unsigned j,
		       int *cls, double *bw, double *lat);
/* Overwrite one entry of the class table (e.g. from a calibration). */
int autosync_topo_set_link_class(autosync_topo_t *t, int cls, double bw,
				 double lat, autosync_error_t *errp);

/* 16 lowercase hex digits: a 64-bit FNV-1a hash of the hardware facts of
 * the restricted view in canonical order; static in 't'. */
const char *autosync_topo_hash(const autosync_topo_t *t);
/* "live", "hwloc-xml" or "nccl-xml"; static storage. */
const char *autosync_topo_source(const autosync_topo_t *t);
/* The job CPU set as a list ("" = unknown); valid while 't' is unchanged. */
const char *autosync_topo_cpuset(const autosync_topo_t *t);

const char *autosync_nic_tier_name(int tier); /* "pcie_switch", ... */
const char *autosync_nic_kind_name(int kind); /* "infiniband", ... */

/* ---------------------------------------------------------------- writers */

/* Human table; YAML (one document); NCCL topology XML for NCCL_TOPO_FILE
 * (restricted GPUs, fabric NICs, the PCI bridges above them). 'fp' is
 * borrowed. Errors: EIO when writing fails. */
int autosync_topo_write_text(const autosync_topo_t *t, FILE *fp,
			     autosync_error_t *errp);
int autosync_topo_write_yaml(const autosync_topo_t *t, FILE *fp,
			     autosync_error_t *errp);
/* The same YAML with 'env': each local rank's variables
 * (autosync_topo_rank_env) as {rank: N, vars: {NAME: "value", ...}}. */
int autosync_topo_write_yaml_env(const autosync_topo_t *t, FILE *fp,
				 autosync_error_t *errp);
int autosync_topo_write_nccl_xml(const autosync_topo_t *t, FILE *fp,
				 autosync_error_t *errp);

/* One environment variable for a task; plain value type. */
typedef struct autosync_env {
	char name[32];
	char value[224];
} autosync_env_t;

/*
 * The NCCL environment for local rank 'r' (GPU r of the view; rank 0 of a
 * GPU-less node uses the first fabric NIC): NCCL_IB_HCA="=mlx5_0:1" for an
 * RDMA NIC, else NCCL_SOCKET_IFNAME="=eth0"; NCCL_NET_GDR_LEVEL=PXB when the
 * NIC shares the GPU's PCIe switch; NCCL_P2P_LEVEL = the worst path to the
 * other GPUs of the view (NVL, PXB or PHB; not set across sockets). Writes
 * at most 'max' entries to 'env' and their number to *n. Nothing is set in
 * this process. Errors: EINVAL (bad rank), ENOSPC ('max' too small).
 */
int autosync_topo_rank_env(const autosync_topo_t *t, unsigned r,
			   autosync_env_t *env, size_t max, size_t *n,
			   autosync_error_t *errp);

/*
 * Fill the node part of 'c' from the restricted topology: gpus_per_node
 * (a GPU-less node counts as 1, one rank per node), intra_class/bw/lat
 * (the worst pair of the view; with fewer than two GPUs the intra
 * values of c are kept), nics_per_node / nic_bw (the distinct nearest NICs of
 * the view's GPUs, all fabric NICs on a GPU-less node; the slowest known speed;
 * left as in c when there is none or the speed is unknown), topo_hash. 'nodes'
 * (>= 1) sets c->nodes; inter_lat and nodes_per_switch are not visible on a
 * node and keep the values the caller put in c (site config or
 * autosync_cluster_default()).
 */
int autosync_cluster_from_topo(autosync_cluster_t *c, const autosync_topo_t *t,
			       unsigned nodes, autosync_error_t *errp);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_TOPOLOGY_H */
