/* topo_internal.h - the topology model shared by the readers and writers
 * (not installed). One autosync_topo holds every device that was read, in
 * PCI bus order, plus the restricted view (the GPUs the job may use, in CUDA
 * order). Readers fill the raw arrays and call topo_finish(). */
#ifndef AUTOSYNC_TOPO_INTERNAL_H
#define AUTOSYNC_TOPO_INTERNAL_H

#include <hwloc.h>

#include "autosync/topology.h"

#define BUSID_LEN 24
/* per node, refused above: the cluster description allows 1..1024 GPUs per
 * node (docs/cluster-spec.md), so a bigger node could never be planned */
#define TOPO_MAX_GPUS 1024
#define TOPO_MAX_NICS 1024

enum topo_source { SRC_LIVE, SRC_HWLOC_XML, SRC_NCCL_XML };

/* A CPU locality (NUMA node): NCCL's <cpu> element. */
struct tcpu {
	int numa;	       /* OS index, -1 unknown */
	int package;	       /* OS index, -1 unknown */
	hwloc_bitmap_t cpuset; /* owned, may be NULL */
	char arch[16], vendor[32], familyid[16],
	    modelid[16]; /* NCCL attrs, "" unknown */
};

/* PCI facts common to bridges, GPUs and NICs. */
struct tpci {
	char busid[BUSID_LEN]; /* lowercase "dddd:bb:dd.f" */
	unsigned class_id;     /* 16-bit class, e.g. 0x0302 */
	unsigned progif;       /* low byte of NCCL's 24-bit class */
	int has_ids;	       /* vendor/device known */
	unsigned vendor, device, subvendor, subdevice;
	double gbs;	       /* link GB/s as hwloc reports it, 0 unknown */
	double gts;	       /* GT/s per lane, 0 unknown */
	unsigned width;	       /* lanes, 0 unknown */
	int parent;	       /* index in t->bridges, -1 at CPU level */
	int cpu;	       /* index in t->cpus, -1 unknown */
	hwloc_bitmap_t cpuset; /* owned, may be NULL: local CPUs */
};

struct tbridge {
	struct tpci pci;
	int root_port; /* parent is a host bridge (hwloc) */
};

struct tnvlink { /* NCCL <nvlink>, or an hwloc NVLinkBandwidth entry */
	char target[BUSID_LEN]; /* peer bus id, "" for a CPU */
	int count;		/* links, 0 unknown (hwloc) */
	unsigned
	    tclass; /* 24-bit: 0x030200 GPU, 0x068000 NVSwitch, 0x068001 CPU */
	double bw;  /* B/s, total over the links */
};

struct tgpu {
	struct tpci pci;
	char model[64], uuid[80];
	/* NCCL <gpu> attributes, -1 = absent */
	int has_gpu_elem, dev, sm, rank, gdr;
	struct tnvlink *nvl;
	unsigned nnvl;
	double nvswitch_bw;   /* B/s to NVSwitches, 0 none */
	double cpu_nvlink_bw; /* B/s to a CPU over NVLink, 0 none */
};

struct tnic {
	struct tpci pci;
	char ofname[32]; /* OpenFabrics / NCCL net name: mlx5_0 */
	char netdev[32]; /* ib0, eth0 */
	int port;	 /* 1.., 0 unknown */
	int port_state;	 /* 4 = ACTIVE, -1 unknown */
	double speed;	 /* B/s, 0 unknown */
	/* NCCL <net> attributes as read (strings, "" absent) */
	int has_net_elem;
	char n_dev[16], n_speed[24], n_port[16], n_latency[32], n_guid[40],
	    n_maxconn[24], n_gdr[8], n_coll[8];
	int nic_under_cpu; /* <nic> directly under <cpu> (no PCI) */
	int management;
};

struct autosync_topo {
	enum topo_source source;
	char path[256];
	autosync_log_f log;
	void *log_arg;

	struct tcpu *cpus;
	unsigned ncpus;
	struct tbridge *bridges;
	unsigned nbridges;
	struct tgpu *gpus; /* all GPUs, PCI bus order after topo_finish */
	unsigned ngpus;
	struct tnic *nics; /* all NICs, PCI bus order after topo_finish */
	unsigned nnics;
	double *nvbw;		       /* ngpus x ngpus direct NVLink B/s */
	hwloc_bitmap_t machine_cpuset; /* all CPUs known, may be NULL */

	/* the restricted view */
	unsigned *view; /* indices in gpus[], CUDA order */
	unsigned nview;
	hwloc_bitmap_t allowed; /* job CPU set, NULL = all */
	double link_bw[AUTOSYNC_LINK_NCLASSES],
	    link_lat[AUTOSYNC_LINK_NCLASSES];

	/* public copies, rebuilt by topo_rebuild() */
	autosync_topo_gpu_t *pub_gpus;
	char **pub_cpusets;
	unsigned npub; /* entries in pub_gpus / pub_cpusets */
	autosync_topo_nic_t *pub_nics;
	char cpuset_str[1024];
	char hash[17];
};

struct autosync_topo *topo_alloc(enum topo_source src, const char *path);
int topo_finish(struct autosync_topo *t, autosync_error_t *errp);
int topo_refresh(struct autosync_topo *t, autosync_error_t *errp);
/* NVLinks from NVML ('lib' NULL: libnvidia-ml.so.1) for GPUs that have
 * none yet; returns the number of links added (0 without NVML). */
int topo_nvml_enrich(struct autosync_topo *t, const char *lib);
void topo_logf(const struct autosync_topo *t, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int topo_busid_parse(const char *s, unsigned *dom, unsigned *bus, unsigned *dev,
		     unsigned *fn);
void topo_busid_norm(char *dst, size_t len, const char *src);
double topo_pcie_gbs(double gts, unsigned width);
void topo_pcie_split(double gbs, double *gts, unsigned *width);
int topo_nvlink_gbs_per_link(int sm, double *gbs);
int topo_rdma_name(const char *name);
/* A device name that may reach NCCL's variables and the logs: 1..31 of
 * [A-Za-z0-9_.:@-] (what Linux allows in interface and RDMA names, minus
 * anything that could split a variable or steer a terminal). */
int topo_dev_name_ok(const char *name);
int topo_parse_mask(const char *s, hwloc_bitmap_t b);
int topo_parse_list(const char *s, hwloc_bitmap_t b);
void *topo_grow(void *arr, unsigned n, size_t sz);

/* readers */
struct autosync_topo *topo_load_hwloc(const char *xml, autosync_error_t *errp);
struct autosync_topo *topo_load_nccl(const char *path, const char *buf,
				     size_t len, autosync_error_t *errp);

#endif
