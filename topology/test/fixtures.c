/* Unit tests of the topology readers on every real fixture in
 * tests/fixtures/topologies. The expected facts were written by reading
 * the XML files (bus ids, pci_type, NUMA/Package nesting, OS devices,
 * NVLinkBandwidth rows, NCCL <cpu>/<pci>/<net> elements), not copied from
 * this library's output. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/topology.h"
#include "tap.h"
#include "fixdir.h"

#define MAXG 16
#define MAXN 8

struct nic_exp {
	const char *busid, *name, *netdev;
	int kind, management, numa;
};

struct fixture {
	const char *file;
	const char *source;
	unsigned ngpus;
	const char *gpus[MAXG]; /* PCI bus order */
	int numa[MAXG], package[MAXG];
	unsigned vendor, device, class_id;
	unsigned nnics;
	struct nic_exp nics[MAXN]; /* PCI bus order */
	const char
	    *nearest[MAXG]; /* bus id of the nearest fabric NIC, NULL none */
	int tier[MAXG];
	/* link classes, row-major upper triangle over GPU pairs (i<j):
	 * N nvlink, S same PCIe switch, H same host bridge/socket, X across */
	const char *links;
	const char *subset; /* CUDA_VISIBLE_DEVICES for a restriction */
	const char *subset_busids[4];
};

#define IB AUTOSYNC_NIC_INFINIBAND
#define ETH AUTOSYNC_NIC_ETHERNET
#define T_SW AUTOSYNC_NIC_TIER_PCIE_SWITCH
#define T_NUMA AUTOSYNC_NIC_TIER_NUMA
#define T_SYS AUTOSYNC_NIC_TIER_SYSTEM
#define T_NONE AUTOSYNC_NIC_TIER_NONE

static const struct fixture fixtures[] = {
    {
	/* GPU/HCA pairs under one Broadcom switch (1000:c010) per NUMA
	 * Group; NUMA 0-3 in Package 0, 4-7 in Package 1 */
	"hwloc-juwels-booster-4xA100-4xHDR.xml",
	"hwloc-xml",
	4,
	{"0000:03:00.0", "0000:44:00.0", "0000:84:00.0", "0000:c4:00.0"},
	{3, 1, 7, 5},
	{0, 0, 1, 1},
	0x10de,
	0x20b0,
	0x0302,
	6,
	{
	    {"0000:04:00.0", "mlx5_0", "ib0", IB, 0, 3},
	    {"0000:43:00.0", "mlx5_1", "ib1", IB, 0, 1},
	    {"0000:83:00.0", "mlx5_2", "ib2", IB, 0, 7},
	    {"0000:c3:00.0", "mlx5_3", "ib3", IB, 0, 5},
	    {"0000:e1:00.0", "", "enp225s0f0", ETH, 1, 4},
	    {"0000:e1:00.1", "", "enp225s0f1", ETH, 1, 4},
	},
	{"0000:04:00.0", "0000:43:00.0", "0000:83:00.0", "0000:c3:00.0"},
	{T_SW, T_SW, T_SW, T_SW},
	"HXX"
	"XX"
	"H",
	"2,0",
	{"0000:84:00.0", "0000:03:00.0"},
    },
    {
	/* 16 V100 each with 6 x 25000 MB/s to NVSwitches; no NICs */
	"hwloc-dgx2h-16xV100-12xNVSwitch.xml",
	"hwloc-xml",
	16,
	{"0000:34:00.0", "0000:36:00.0", "0000:39:00.0", "0000:3b:00.0",
	 "0000:57:00.0", "0000:59:00.0", "0000:5c:00.0", "0000:5e:00.0",
	 "0000:b7:00.0", "0000:b9:00.0", "0000:bc:00.0", "0000:be:00.0",
	 "0000:e0:00.0", "0000:e2:00.0", "0000:e5:00.0", "0000:e7:00.0"},
	{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
	{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
	0x10de,
	0x1db8,
	0x0302,
	0,
	{{NULL, NULL, NULL, 0, 0, 0}},
	{NULL},
	{T_NONE, T_NONE, T_NONE, T_NONE, T_NONE, T_NONE, T_NONE, T_NONE, T_NONE,
	 T_NONE, T_NONE, T_NONE, T_NONE, T_NONE, T_NONE, T_NONE},
	NULL, /* all N, checked below */
	"GPU-d3977428,GPU-ac1a8e86-5183-b838-64c9-71a0c82facc5",
	{"0000:34:00.0", "0000:e0:00.0"},
    },
    {
	/* POWER8: NVLink GPU0-GPU1 and GPU2-GPU3 (40000 MB/s) */
	"hwloc-power8-4xP100-nvlink.xml",
	"hwloc-xml",
	4,
	{"0002:01:00.0", "0003:01:00.0", "000a:01:00.0", "000b:01:00.0"},
	{0, 0, 1, 1},
	{0, 0, 1, 1},
	0x10de,
	0x15f9,
	0x0302,
	0,
	{{NULL, NULL, NULL, 0, 0, 0}},
	{NULL},
	{T_NONE, T_NONE, T_NONE, T_NONE},
	"NXX"
	"XX"
	"N",
	"3",
	{"000b:01:00.0"},
    },
    {
	/* 3 x 10de:1094; Matrox 102b:0532 and AMD 1002:6798 VGA are not
	 * GPUs; the ConnectX-4 sits under root port 80:03.0 with GPU
	 * 84:00.0 (hand-edited input); I350 ports are management */
	"hwloc-supermicro-x9drg-3xM2075-1xIB-wholeio.xml",
	"hwloc-xml",
	3,
	{"0000:03:00.0", "0000:83:00.0", "0000:84:00.0"},
	{0, 1, 1},
	{0, 1, 1},
	0x10de,
	0x1094,
	0x0302,
	3,
	{
	    {"0000:04:00.0", "mlx5_0", "ib0", IB, 0, 1},
	    {"0000:81:00.0", "", "eth0", ETH, 1, 1},
	    {"0000:81:00.1", "", "eth1", ETH, 1, 1},
	},
	{"0000:04:00.0", "0000:04:00.0", "0000:04:00.0"},
	{T_SYS, T_NUMA, T_SW},
	"XX"
	"H",
	"2,1",
	{"0000:84:00.0", "0000:83:00.0"},
    },
    {
	/* 4 RTX 3090 behind Microchip switch 0c:00.0 (cpu 0), 4 + the
	 * CX-6 behind 98:00.0 (cpu 1) */
	"nccl-8xRTX3090-1xCX6-ib.xml",
	"nccl-xml",
	8,
	{"0000:0f:00.0", "0000:10:00.0", "0000:11:00.0", "0000:12:00.0",
	 "0000:9b:00.0", "0000:9c:00.0", "0000:9d:00.0", "0000:9e:00.0"},
	{0, 0, 0, 0, 1, 1, 1, 1},
	{-1, -1, -1, -1, -1, -1, -1, -1},
	0x10de,
	0x2204,
	0x0300,
	1,
	{{"0000:9a:00.0", "mlx5_0", "", IB, 0, 1}},
	{"0000:9a:00.0", "0000:9a:00.0", "0000:9a:00.0", "0000:9a:00.0",
	 "0000:9a:00.0", "0000:9a:00.0", "0000:9a:00.0", "0000:9a:00.0"},
	{T_SYS, T_SYS, T_SYS, T_SYS, T_SW, T_SW, T_SW, T_SW},
	"SSSXXXX"
	"SSXXXX"
	"SXXXX"
	"XXXX"
	"SSS"
	"SS"
	"S",
	"4,5",
	{"0000:9b:00.0", "0000:9c:00.0"},
    },
    {
	/* p4d: 4 virtual switches ffff:ff:0N.0 of 2 GPUs + 1 EFA */
	"nccl-aws-p4d-8xA100-4xEFA.xml",
	"nccl-xml",
	8,
	{"0000:10:1c.0", "0000:10:1d.0", "0000:20:1c.0", "0000:20:1d.0",
	 "0000:90:1c.0", "0000:90:1d.0", "0000:a0:1c.0", "0000:a0:1d.0"},
	{0, 0, 0, 0, 1, 1, 1, 1},
	{-1, -1, -1, -1, -1, -1, -1, -1},
	0x10de,
	0x20b0,
	0x0302,
	4,
	{
	    {"0000:10:1b.0", "", "", ETH, 0, 0},
	    {"0000:20:1b.0", "", "", ETH, 0, 0},
	    {"0000:90:1b.0", "", "", ETH, 0, 1},
	    {"0000:a0:1b.0", "", "", ETH, 0, 1},
	},
	{"0000:10:1b.0", "0000:10:1b.0", "0000:20:1b.0", "0000:20:1b.0",
	 "0000:90:1b.0", "0000:90:1b.0", "0000:a0:1b.0", "0000:a0:1b.0"},
	{T_SW, T_SW, T_SW, T_SW, T_SW, T_SW, T_SW, T_SW},
	"SHHXXXX"
	"HHXXXX"
	"SXXXX"
	"XXXX"
	"SHH"
	"HH"
	"S",
	"7,0",
	{"0000:a0:1d.0", "0000:10:1c.0"},
    },
    {
	/* ND A100 v4: per NUMA one virtual switch with 2 GPUs + 2 HCAs,
	 * no vendor attributes, no NIC names */
	"nccl-azure-ndv4-8xA100-8xHDR.xml",
	"nccl-xml",
	8,
	{"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0",
	 "000b:00:00.0", "000c:00:00.0", "000d:00:00.0", "000e:00:00.0"},
	{1, 1, 0, 0, 3, 3, 2, 2},
	{-1, -1, -1, -1, -1, -1, -1, -1},
	0,
	0,
	0x0302,
	8,
	{
	    {"0101:00:00.0", "", "", IB, 0, 1},
	    {"0102:00:00.0", "", "", IB, 0, 1},
	    {"0103:00:00.0", "", "", IB, 0, 0},
	    {"0104:00:00.0", "", "", IB, 0, 0},
	    {"0105:00:00.0", "", "", IB, 0, 3},
	    {"0106:00:00.0", "", "", IB, 0, 3},
	    {"0107:00:00.0", "", "", IB, 0, 2},
	    {"0108:00:00.0", "", "", IB, 0, 2},
	},
	/* two HCAs at the same tier: one per GPU, in bus order */
	{"0101:00:00.0", "0102:00:00.0", "0103:00:00.0", "0104:00:00.0",
	 "0105:00:00.0", "0106:00:00.0", "0107:00:00.0", "0108:00:00.0"},
	{T_SW, T_SW, T_SW, T_SW, T_SW, T_SW, T_SW, T_SW},
	"SXXXXXX"
	"XXXXXX"
	"SXXXX"
	"XXXX"
	"SXX"
	"XX"
	"S",
	"0000:0d:00.0",
	{NULL}, /* not a GPU: error, checked below */
    },
};

static char fixdir[1024];

static const char *fix(const char *name)
{
	static char path[2048];

	snprintf(path, sizeof(path), "%s/%s", fixdir, name);
	return path;
}

static char cls_letter(int c)
{
	switch (c) {
	case AUTOSYNC_LINK_NVLINK:
		return 'N';
	case AUTOSYNC_LINK_PCIE_SWITCH:
		return 'S';
	case AUTOSYNC_LINK_HOST_BRIDGE:
		return 'H';
	case AUTOSYNC_LINK_CROSS_SOCKET:
		return 'X';
	}
	return '?';
}

static void check_fixture(const struct fixture *f)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t = autosync_topo_load_file(fix(f->file), &err);
	char links[256] = "";
	size_t k = 0;

	ok(t != NULL, "%s: loads (%s)", f->file, err.text);
	if (!t)
		return;
	is(autosync_topo_source(t), f->source, "%s: format detected", f->file);
	ok(autosync_topo_ngpus(t) == f->ngpus &&
	       autosync_topo_ngpus_total(t) == f->ngpus,
	   "%s: %u GPUs (got %u)", f->file, f->ngpus, autosync_topo_ngpus(t));
	for (unsigned i = 0; i < f->ngpus && i < autosync_topo_ngpus(t); i++) {
		const autosync_topo_gpu_t *g = autosync_topo_gpu(t, i);

		is(g->busid, f->gpus[i], "%s: GPU %u bus id", f->file, i);
		ok(g->numa == f->numa[i], "%s: GPU %u NUMA %d (got %d)",
		   f->file, i, f->numa[i], g->numa);
		ok(g->package == f->package[i],
		   "%s: GPU %u package %d (got %d)", f->file, i, f->package[i],
		   g->package);
		ok(g->vendor_id == f->vendor && g->device_id == f->device &&
		       g->class_id == f->class_id,
		   "%s: GPU %u ids %04x:%04x class %04x", f->file, i,
		   g->vendor_id, g->device_id, g->class_id);
		if (f->nearest[0] || f->nnics == 0) {
			const char *want = f->nearest[i];
			const char *got =
			    g->nearest_nic >= 0
				? autosync_topo_nic(t, (unsigned)g->nearest_nic)
				      ->busid
				: "(none)";

			is(got, want ? want : "(none)",
			   "%s: GPU %u nearest NIC", f->file, i);
			ok(g->nic_tier == f->tier[i],
			   "%s: GPU %u NIC tier %s (got %s)", f->file, i,
			   autosync_nic_tier_name(f->tier[i]),
			   autosync_nic_tier_name(g->nic_tier));
		}
	}
	ok(autosync_topo_nnics(t) == f->nnics, "%s: %u NICs (got %u)", f->file,
	   f->nnics, autosync_topo_nnics(t));
	for (unsigned i = 0; i < f->nnics && i < autosync_topo_nnics(t); i++) {
		const autosync_topo_nic_t *n = autosync_topo_nic(t, i);

		is(n->busid, f->nics[i].busid, "%s: NIC %u bus id", f->file, i);
		is(n->name, f->nics[i].name, "%s: NIC %u RDMA name", f->file,
		   i);
		is(n->netdev, f->nics[i].netdev, "%s: NIC %u netdev", f->file,
		   i);
		ok(n->kind == f->nics[i].kind, "%s: NIC %u kind %s", f->file, i,
		   autosync_nic_kind_name(n->kind));
		ok(n->management == f->nics[i].management, "%s: NIC %u %s",
		   f->file, i, f->nics[i].management ? "management" : "fabric");
		ok(n->numa == f->nics[i].numa, "%s: NIC %u NUMA %d (got %d)",
		   f->file, i, f->nics[i].numa, n->numa);
	}
	for (unsigned i = 0; i < autosync_topo_ngpus(t); i++)
		for (unsigned j = i + 1;
		     j < autosync_topo_ngpus(t) && k < sizeof(links) - 1; j++) {
			int c = -1;

			(void)autosync_topo_link(t, i, j, &c, NULL, NULL);
			links[k++] = cls_letter(c);
		}
	links[k] = '\0';
	if (f->links)
		is(links, f->links, "%s: GPU pair link classes", f->file);
	ok(strlen(autosync_topo_hash(t)) == 16 &&
	       strspn(autosync_topo_hash(t), "0123456789abcdef") == 16,
	   "%s: hash %s", f->file, autosync_topo_hash(t));

	if (f->subset_busids[0]) {
		char before[17];

		memcpy(before, autosync_topo_hash(t), sizeof(before));
		ok(autosync_topo_restrict(t, f->subset, NULL, &err) == 0,
		   "%s: restrict to %s (%s)", f->file, f->subset, err.text);
		for (unsigned i = 0; i < 4 && f->subset_busids[i]; i++) {
			const autosync_topo_gpu_t *g = autosync_topo_gpu(t, i);

			is(g ? g->busid : "(none)", f->subset_busids[i],
			   "%s: restricted GPU %u", f->file, i);
		}
		ok(autosync_topo_ngpus_total(t) == f->ngpus,
		   "%s: total unchanged", f->file);
		ok(strcmp(before, autosync_topo_hash(t)) != 0,
		   "%s: restriction changes the hash", f->file);
		ok(autosync_topo_nnics(t) == f->nnics, "%s: NICs kept",
		   f->file);
		ok(autosync_topo_restrict(t, NULL, NULL, &err) == 0 &&
		       !strcmp(before, autosync_topo_hash(t)),
		   "%s: restrict(NULL) restores the full view and its hash",
		   f->file);
	}
	autosync_topo_destroy(t);
}

static char logged[512];
static int nlogged;

static void log_cb(int level, const char *msg, void *arg)
{
	(void)arg;
	if (level == AUTOSYNC_LOG_WARNING) {
		snprintf(logged, sizeof(logged), "%s", msg);
		nlogged++;
	}
}

static void check_details(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t;
	const autosync_topo_gpu_t *g;
	const autosync_topo_nic_t *n;
	int c;
	double bw, lat;

	/* JUWELS: ports, switch, CPU locality, speeds */
	t = autosync_topo_load_hwloc_xml(
	    fix("hwloc-juwels-booster-4xA100-4xHDR.xml"), &err);
	ok(t != NULL, "juwels via load_hwloc_xml (%s)", err.text);
	if (t) {
		g = autosync_topo_gpu(t, 0);
		is(g->pcie_switch, "0000:01:00.0",
		   "juwels GPU 0 under switch 01:00.0");
		near(g->pcie_bw, 31.507692e9, 1e3,
		     "juwels GPU 0 PCIe Gen4 x16");
		/* NUMANode 3: PUs 18-23 and 66-71 (cpuset
		 * 0x000000fc,,0x00fc0000) */
		is(g->cpuset, "18-23,66-71", "juwels GPU 0 local CPUs");
		n = autosync_topo_nic(t, 0);
		ok(n->port == 1 && n->port_state == 4,
		   "juwels mlx5_0 port 1 ACTIVE (Port1State=4)");
		ok(n->rdma == 1, "juwels mlx5_0 is RDMA");
		ok(autosync_topo_nic(t, 4)->rdma == 0, "I350 is not RDMA");
		near(autosync_topo_nic(t, 4)->pcie_bw, 0.5e9, 1e3,
		     "I350 PCIe link 0.5 GB/s");
		is(autosync_topo_cpuset(t), "0-95", "juwels: all 96 PUs");
		ok(autosync_topo_restrict(t, "1", "0-11", &err) == 0,
		   "restrict GPU 1 + CPUs 0-11 (%s)", err.text);
		is(autosync_topo_gpu(t, 0)->cpuset, "6-11",
		   "GPU local CPUs within the job CPU set");
		is(autosync_topo_cpuset(t), "0-11", "job CPU set");
		errno = 0;
		ok(autosync_topo_restrict(t, NULL, "banana", &err) == -1 &&
		       errno == EINVAL,
		   "bad CPU set: %s", err.text);
		ok(autosync_topo_restrict(t, "4", NULL, &err) == -1 &&
		       errno == EINVAL && strstr(err.text, "4"),
		   "CUDA_VISIBLE_DEVICES=4 on 4 GPUs: %s", err.text);
		ok(autosync_topo_ngpus(t) == 1,
		   "a failed restriction keeps the previous view");
		ok(autosync_topo_restrict(t, "GPU-12345678", NULL, &err) ==
			   -1 &&
		       errno == EINVAL,
		   "unknown UUID: %s", err.text);
		ok(autosync_topo_restrict(
		       t, "MIG-4d4a5b1c-0000-0000-0000-000000000000", NULL,
		       &err) == -1,
		   "MIG UUID: %s", err.text);
		ok(autosync_topo_restrict(t, "0,0", NULL, &err) == -1 &&
		       strstr(err.text, "twice"),
		   "duplicate: %s", err.text);
		ok(autosync_topo_restrict(t, "0000:C4:00.0,00000000:44:00.0",
					  NULL, &err) == 0,
		   "bus ids, upper case and 8-digit domain (%s)", err.text);
		ok(autosync_topo_ngpus(t) == 2 &&
		       !strcmp(autosync_topo_gpu(t, 0)->busid,
			       "0000:c4:00.0") &&
		       !strcmp(autosync_topo_gpu(t, 1)->busid, "0000:44:00.0"),
		   "bus-id order kept");
		ok(autosync_topo_restrict(t, "", NULL, &err) == 0 &&
		       autosync_topo_ngpus(t) == 0,
		   "CUDA_VISIBLE_DEVICES='' = no GPU");
		ok(autosync_topo_restrict(t, "NoDevFiles", NULL, &err) == 0 &&
		       autosync_topo_ngpus(t) == 0,
		   "NoDevFiles = no GPU");
		/* Slurm: physical indices, CUDA_VISIBLE_DEVICES relative or
		 * equal */
		ok(autosync_topo_restrict_env(t, NULL, "1,3", NULL, NULL,
					      &err) == 0 &&
		       autosync_topo_ngpus(t) == 2 &&
		       !strcmp(autosync_topo_gpu(t, 1)->busid, "0000:c4:00.0"),
		   "SLURM_STEP_GPUS=1,3");
		ok(autosync_topo_restrict_env(t, "1", "1,3", "0-3", NULL,
					      &err) == 0 &&
		       autosync_topo_ngpus(t) == 1 &&
		       !strcmp(autosync_topo_gpu(t, 0)->busid, "0000:c4:00.0"),
		   "CUDA_VISIBLE_DEVICES=1 relative to SLURM_STEP_GPUS=1,3 "
		   "(%s)",
		   err.text);
		ok(autosync_topo_restrict_env(t, "1,3", "1,3", NULL, NULL,
					      &err) == 0 &&
		       autosync_topo_ngpus(t) == 2 &&
		       !strcmp(autosync_topo_gpu(t, 0)->busid, "0000:44:00.0"),
		   "CUDA_VISIBLE_DEVICES equal to the Slurm list is absolute");
		ok(autosync_topo_restrict_env(t, NULL, NULL, "2", NULL, &err) ==
			   0 &&
		       autosync_topo_ngpus(t) == 1 &&
		       !strcmp(autosync_topo_gpu(t, 0)->busid, "0000:84:00.0"),
		   "SLURM_JOB_GPUS=2");
		ok(autosync_topo_restrict_env(t, NULL, "7", NULL, NULL, &err) ==
			   -1 &&
		       errno == EINVAL && strstr(err.text, "SLURM_STEP_GPUS"),
		   "SLURM_STEP_GPUS=7: %s", err.text);
		ok(autosync_topo_restrict_env(t, "2", "0,1", NULL, NULL,
					      &err) == -1,
		   "CUDA_VISIBLE_DEVICES=2 with 2 Slurm GPUs: %s", err.text);
		ok(autosync_topo_restrict_env(t, NULL, "x", NULL, NULL, &err) ==
		       -1,
		   "SLURM_STEP_GPUS=x: %s", err.text);
		autosync_topo_set_log(t, log_cb, NULL);
		ok(autosync_topo_restrict(t, "2", "0-5", &err) == 0 &&
		       nlogged == 1 && strstr(logged, "0000:84:00.0") &&
		       strstr(logged, "none of the job's CPUs"),
		   "log: GPU on the other socket than the job's CPUs: %s",
		   logged);
		ok(autosync_topo_restrict(t, "2", "42-47", &err) == 0 &&
		       nlogged == 1,
		   "no warning with local CPUs");
		autosync_topo_destroy(t);
	}

	/* the hash: hardware facts only, rank order matters, CPU set does not
	 */
	{
		autosync_topo_t *a = autosync_topo_load_file(
		    fix("hwloc-juwels-booster-4xA100-4xHDR.xml"), &err);
		autosync_topo_t *b = autosync_topo_load_file(
		    fix("hwloc-juwels-booster-4xA100-4xHDR.xml"), &err);
		char h01[17], h10[17];

		ok(a && b &&
		       !strcmp(autosync_topo_hash(a), autosync_topo_hash(b)),
		   "hash: same file, same hash");
		if (a && b) {
			autosync_topo_restrict(b, NULL, "0-11", &err);
			is(autosync_topo_hash(b), autosync_topo_hash(a),
			   "hash: job CPU set not part of it");
			autosync_topo_restrict(a, "0,1", NULL, &err);
			snprintf(h01, sizeof(h01), "%s", autosync_topo_hash(a));
			autosync_topo_restrict(a, "1,0", NULL, &err);
			snprintf(h10, sizeof(h10), "%s", autosync_topo_hash(a));
			ok(strcmp(h01, h10) != 0,
			   "hash: GPU (rank) order is part of it");
			autosync_topo_restrict_env(b, "0,1", "0-3", NULL, NULL,
						   &err);
			is(autosync_topo_hash(b), h01,
			   "hash: same GPUs selected another way, same hash");
		}
		autosync_topo_destroy(a);
		autosync_topo_destroy(b);
	}

	/* DGX-2: NVSwitch bandwidth from the NVLinkBandwidth matrix, UUIDs */
	t = autosync_topo_load_file(fix("hwloc-dgx2h-16xV100-12xNVSwitch.xml"),
				    &err);
	ok(t != NULL, "dgx2 loads");
	if (t) {
		int all_nv = 1;

		for (unsigned i = 0; i < 16; i++)
			for (unsigned j = i + 1; j < 16; j++) {
				(void)autosync_topo_link(t, i, j, &c, &bw,
							 &lat);
				all_nv &= c == AUTOSYNC_LINK_NVLINK;
			}
		ok(all_nv,
		   "dgx2: every GPU pair is NVLink (through NVSwitches)");
		g = autosync_topo_gpu(t, 0);
		near(g->nvlink_bw, 6 * 25000e6, 1,
		     "dgx2 GPU 0: 6 x 25000 MB/s to NVSwitches");
		is(g->uuid, "GPU-d3977428-7a30-086b-2e20-5c1eeed647c6",
		   "dgx2 GPU 0 UUID (nvml0)");
		is(g->model, "Tesla V100-SXM3-32GB-H", "dgx2 GPU model");
		(void)autosync_topo_link(t, 0, 15, &c, &bw, &lat);
		near(bw, 150e9, 1, "dgx2 pair bandwidth = NVSwitch bandwidth");
		autosync_topo_destroy(t);
	}

	/* POWER8: direct NVLink 40000 MB/s; CPU NVLink not a GPU peer */
	t = autosync_topo_load_file(fix("hwloc-power8-4xP100-nvlink.xml"),
				    &err);
	if (t) {
		(void)autosync_topo_link(t, 0, 1, &c, &bw, &lat);
		ok(c == AUTOSYNC_LINK_NVLINK, "power8 GPU0-GPU1 NVLink");
		near(bw, 40000e6, 1, "power8 GPU0-GPU1 40000 MB/s");
		near(autosync_topo_gpu(t, 0)->nvlink_bw, 40000e6, 1,
		     "power8 GPU 0 peer NVLink only");
		is(autosync_topo_gpu(t, 0)->uuid,
		   "GPU-77bf6b9a-6906-5a93-d28b-b77d2c23d1d2",
		   "power8 GPU 0 UUID");
		is(autosync_topo_gpu(t, 0)->model, "Tesla P100-SXM2-16GB",
		   "power8 model (CUDA osdev)");
		is(autosync_topo_gpu(t, 0)->pcie_switch, "",
		   "power8: GPU on a root port, no switch");
		ok(autosync_topo_restrict(t, "GPU-93f5db36", NULL, &err) == 0 &&
		       !strcmp(autosync_topo_gpu(t, 0)->busid, "000b:01:00.0"),
		   "UUID prefix selects nvml3's GPU");
		autosync_topo_destroy(t);
	}

	/* Supermicro: CUDA model only on 84:00.0; linkspeed 0 = unknown */
	t = autosync_topo_load_file(
	    fix("hwloc-supermicro-x9drg-3xM2075-1xIB-wholeio.xml"), &err);
	if (t) {
		is(autosync_topo_gpu(t, 2)->model, "Tesla K40m",
		   "supermicro cuda0 GPUModel");
		is(autosync_topo_gpu(t, 0)->model, "",
		   "supermicro GPU 0 model unknown");
		ok(autosync_topo_gpu(t, 0)->pcie_bw == 0,
		   "linkspeed 0 = unknown");
		autosync_topo_destroy(t);
	}

	/* RTX 3090 NCCL dump: sm, NIC speed and port */
	t = autosync_topo_load_nccl_xml(fix("nccl-8xRTX3090-1xCX6-ib.xml"),
					&err);
	ok(t != NULL, "rtx3090 via load_nccl_xml (%s)", err.text);
	if (t) {
		ok(autosync_topo_gpu(t, 0)->sm == 86, "sm=86");
		n = autosync_topo_nic(t, 0);
		near(n->speed, 56000e6 / 8, 1, "mlx5_0 speed=56000 Mb/s");
		ok(n->port == 1, "mlx5_0 port 1");
		is(autosync_topo_gpu(t, 0)->pcie_switch, "0000:0c:00.0",
		   "GPU 0 under switch 0c:00.0");
		near(autosync_topo_gpu(t, 0)->pcie_bw, 31.507692e9, 1e4,
		     "16.0 GT/s x16");
		/* affinity 0000ffff,0000ffff = CPUs 0-15 and 32-47 */
		is(autosync_topo_gpu(t, 0)->cpuset, "0-15,32-47",
		   "cpu 0 affinity");
		autosync_topo_destroy(t);
	}

	/* Azure: a bus id that is an HCA, not a GPU */
	t = autosync_topo_load_file(fix("nccl-azure-ndv4-8xA100-8xHDR.xml"),
				    &err);
	if (t) {
		ok(autosync_topo_restrict(t, "0101:00:00.0", NULL, &err) == -1,
		   "HCA bus id is no GPU: %s", err.text);
		ok(autosync_topo_restrict(t, "0000:0d:00.0", NULL, &err) == -1,
		   "absent bus id: %s", err.text);
		ok(autosync_topo_restrict(t, "000d:00:00.0,0", NULL, &err) ==
			   0 &&
		       autosync_topo_ngpus(t) == 2 &&
		       !strcmp(autosync_topo_gpu(t, 1)->busid, "0001:00:00.0"),
		   "bus id and index mixed");
		autosync_topo_destroy(t);
	}
}

static int env_has(const autosync_env_t *e, size_t n, const char *name,
		   const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return value && !strcmp(e[i].value, value);
	return value == NULL;
}

static void check_env(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t;
	autosync_env_t e[8];
	size_t n;

	t = autosync_topo_load_file(
	    fix("hwloc-juwels-booster-4xA100-4xHDR.xml"), &err);
	if (t) {
		ok(autosync_topo_rank_env(t, 2, e, 8, &n, &err) == 0,
		   "juwels rank 2 env");
		ok(env_has(e, n, "NCCL_IB_HCA", "=mlx5_2:1"),
		   "NCCL_IB_HCA==mlx5_2:1");
		ok(env_has(e, n, "NCCL_NET_GDR_LEVEL", "PXB"),
		   "GDR level PXB (same switch)");
		ok(env_has(e, n, "NCCL_P2P_LEVEL", NULL),
		   "no P2P level across sockets");
		ok(env_has(e, n, "NCCL_SOCKET_IFNAME", NULL),
		   "no socket ifname with IB");
		autosync_topo_restrict(t, "0,1", NULL, &err);
		ok(autosync_topo_rank_env(t, 1, e, 8, &n, &err) == 0 &&
		       env_has(e, n, "NCCL_P2P_LEVEL", "PHB") &&
		       env_has(e, n, "NCCL_IB_HCA", "=mlx5_1:1"),
		   "GPUs 0,1: rank 1 P2P PHB, mlx5_1");
		errno = 0;
		ok(autosync_topo_rank_env(t, 2, e, 8, &n, &err) == -1 &&
		       errno == EINVAL,
		   "rank 2 of 2: %s", err.text);
		ok(autosync_topo_rank_env(t, 0, e, 1, &n, &err) == -1 &&
		       errno == ENOSPC,
		   "ENOSPC when max too small");
		autosync_topo_restrict(t, "", NULL, &err);
		ok(autosync_topo_rank_env(t, 0, e, 8, &n, &err) == 0 &&
		       n == 1 && env_has(e, n, "NCCL_IB_HCA", "=mlx5_0:1"),
		   "GPU-less: first fabric NIC");
		autosync_topo_destroy(t);
	}
	t = autosync_topo_load_file(fix("nccl-8xRTX3090-1xCX6-ib.xml"), &err);
	if (t) {
		autosync_topo_restrict(t, "4,5", NULL, &err);
		ok(autosync_topo_rank_env(t, 0, e, 8, &n, &err) == 0 &&
		       n == 3 && env_has(e, n, "NCCL_IB_HCA", "=mlx5_0:1") &&
		       env_has(e, n, "NCCL_NET_GDR_LEVEL", "PXB") &&
		       env_has(e, n, "NCCL_P2P_LEVEL", "PXB"),
		   "rtx3090 GPUs 4,5: IB, GDR PXB, P2P PXB");
		autosync_topo_restrict(t, "0", NULL, &err);
		ok(autosync_topo_rank_env(t, 0, e, 8, &n, &err) == 0 &&
		       n == 1 && env_has(e, n, "NCCL_NET_GDR_LEVEL", NULL),
		   "rtx3090 GPU 0: NIC on the other socket, no GDR");
		autosync_topo_destroy(t);
	}
	t = autosync_topo_load_file(fix("hwloc-dgx2h-16xV100-12xNVSwitch.xml"),
				    &err);
	if (t) {
		ok(autosync_topo_rank_env(t, 5, e, 8, &n, &err) == 0 &&
		       n == 1 && env_has(e, n, "NCCL_P2P_LEVEL", "NVL"),
		   "dgx2: P2P NVL, no NIC");
		autosync_topo_destroy(t);
	}
	t = autosync_topo_load_file(fix("nccl-aws-p4d-8xA100-4xEFA.xml"), &err);
	if (t) {
		ok(autosync_topo_rank_env(t, 0, e, 8, &n, &err) == 0 &&
		       env_has(e, n, "NCCL_IB_HCA", NULL) &&
		       env_has(e, n, "NCCL_SOCKET_IFNAME", NULL),
		   "p4d EFA: no IB_HCA / SOCKET_IFNAME");
		autosync_topo_destroy(t);
	}
}

/* the site's fabric_nics list replaces the classification */
static void check_fabric_list(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t;
	autosync_env_t e[8];
	autosync_cluster_t c;
	size_t n;
	const char *one[] = {"mlx5_1", "mlx5_9"};
	const char *none[] = {"mlx5_7", "hsn0"};
	char h0[17];

	t = autosync_topo_load_file(
	    fix("hwloc-juwels-booster-4xA100-4xHDR.xml"), &err);
	if (!t)
		return;
	snprintf(h0, sizeof(h0), "%s", autosync_topo_hash(t));
	ok(autosync_topo_set_fabric_nics(t, one, 0, &err) == 0 &&
	       !strcmp(h0, autosync_topo_hash(t)),
	   "fabric list: an empty list keeps the classification");
	ok(autosync_topo_set_fabric_nics(t, one, 2, &err) == 0,
	   "fabric list [mlx5_1, mlx5_9] (mlx5_9 is not on the node): %s",
	   err.text);
	{
		int all = 1, fabric = 0;
		for (unsigned r = 0; r < 4; r++)
			all &=
			    autosync_topo_rank_env(t, r, e, 8, &n, &err) == 0 &&
			    env_has(e, n, "NCCL_IB_HCA", "=mlx5_1:1");
		ok(all, "every rank's NIC is mlx5_1");
		for (unsigned i = 0; i < autosync_topo_nnics(t); i++)
			fabric += !autosync_topo_nic(t, i)->management;
		ok(fabric == 1, "one fabric NIC, the others management (%d)",
		   fabric);
	}
	autosync_cluster_default(&c);
	ok(autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
	       c.nics_per_node == 1,
	   "the cluster sees 1 NIC per node (%u)", c.nics_per_node);
	ok(strcmp(h0, autosync_topo_hash(t)) != 0,
	   "the topology hash says which NICs carry the fabric");
	errno = 0;
	ok(autosync_topo_set_fabric_nics(t, none, 2, &err) == -1 &&
	       errno == ENOENT &&
	       strstr(err.text, "none of the fabric NICs (mlx5_7, hsn0) is on "
				"this node"),
	   "a list naming no NIC of the node: ENOENT, %s", err.text);
	autosync_topo_destroy(t);
}

static void check_cluster(void)
{
	autosync_error_t err = {.text = ""};
	autosync_cluster_t c;
	autosync_topo_t *t;

	t = autosync_topo_load_file(
	    fix("hwloc-juwels-booster-4xA100-4xHDR.xml"), &err);
	if (!t)
		return;
	autosync_cluster_default(&c);
	c.inter_lat = 3e-6;
	c.nodes_per_switch = 24;
	ok(autosync_cluster_from_topo(&c, t, 936, &err) == 0,
	   "cluster from juwels");
	ok(c.nodes == 936 && c.gpus_per_node == 4, "936 nodes x 4 GPUs");
	ok(c.intra_class == AUTOSYNC_LINK_CROSS_SOCKET,
	   "juwels bottleneck: across sockets");
	ok(c.nics_per_node == 4, "4 fabric NICs used");
	near(c.nic_bw, 25e9, 1, "NIC speed unknown in hwloc XML: default kept");
	near(c.inter_lat, 3e-6, 1e-15, "inter_lat from the caller");
	ok(c.nodes_per_switch == 24, "nodes_per_switch from the caller");
	is(c.topo_hash, autosync_topo_hash(t), "hash copied");
	is(autosync_transport_name(c.transport), "ib",
	   "HDR HCAs: transport ib");
	autosync_cluster_default(&c);
	c.transport = AUTOSYNC_TRANSPORT_TCP;
	ok(autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
	       c.transport == AUTOSYNC_TRANSPORT_TCP,
	   "a transport the caller set is kept");
	autosync_topo_restrict(t, "", NULL, &err);
	ok(autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
	       c.gpus_per_node == 1,
	   "GPU-less node: one rank per node");
	ok(c.nics_per_node == 4, "GPU-less: all fabric NICs");
	ok(autosync_cluster_from_topo(&c, t, 0, &err) == -1 && errno == EINVAL,
	   "0 nodes refused");
	autosync_topo_destroy(t);

	t = autosync_topo_load_file(fix("nccl-8xRTX3090-1xCX6-ib.xml"), &err);
	if (t) {
		autosync_topo_restrict(t, "4,5,6,7", NULL, &err);
		ok(autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
		       c.intra_class == AUTOSYNC_LINK_PCIE_SWITCH &&
		       c.nics_per_node == 1,
		   "rtx3090 GPUs 4-7: PCIe switch, 1 NIC");
		near(c.nic_bw, 7e9, 1, "56000 Mb/s NIC");
		autosync_topo_destroy(t);
	}
	t = autosync_topo_load_file(fix("nccl-aws-p4d-8xA100-4xEFA.xml"), &err);
	if (t) {
		autosync_cluster_default(&c);
		ok(autosync_cluster_from_topo(&c, t, 2, &err) == 0 &&
		       c.nics_per_node == 4 &&
		       c.transport == AUTOSYNC_TRANSPORT_UNKNOWN,
		   "EFA: 4 NICs, transport unknown (its own plugin)");
		autosync_topo_destroy(t);
	}
	t = autosync_topo_load_file(fix("hwloc-dgx2h-16xV100-12xNVSwitch.xml"),
				    &err);
	if (t) {
		autosync_topo_set_link_class(t, AUTOSYNC_LINK_PCIE_SWITCH, 20e9,
					     2e-6, &err);
		ok(autosync_cluster_from_topo(&c, t, 1, &err) == 0 &&
		       c.intra_class == AUTOSYNC_LINK_NVLINK,
		   "dgx2 nvlink");
		near(c.intra_bw, 150e9, 1, "dgx2 intra bandwidth 150 GB/s");
		autosync_topo_destroy(t);
	}
}

static void check_link_table(void)
{
	autosync_error_t err = {.text = ""};
	autosync_topo_t *t =
	    autosync_topo_load_file(fix("nccl-aws-p4d-8xA100-4xEFA.xml"), &err);
	double bw, lat, dbw, dlat;
	int c;

	if (!t)
		return;
	(void)autosync_link_class_default(AUTOSYNC_LINK_PCIE_SWITCH, &dbw,
					  &dlat);
	(void)autosync_topo_link(t, 0, 1, &c, &bw, &lat);
	ok(c == AUTOSYNC_LINK_PCIE_SWITCH && bw == dbw && lat == dlat,
	   "default class table");
	ok(autosync_topo_set_link_class(t, AUTOSYNC_LINK_PCIE_SWITCH, 18e9,
					1.7e-6, &err) == 0,
	   "set class");
	(void)autosync_topo_link(t, 0, 1, &c, &bw, &lat);
	ok(bw == 18e9 && lat == 1.7e-6, "calibrated class used");
	errno = 0;
	ok(autosync_topo_set_link_class(t, 99, 1, 1, &err) == -1 &&
	       errno == EINVAL,
	   "bad class");
	ok(autosync_topo_set_link_class(t, 0, -1, 1, &err) == -1,
	   "bad bandwidth");
	ok(autosync_topo_link(t, 0, 8, &c, &bw, &lat) == -1 && errno == EINVAL,
	   "link out of range");
	ok(autosync_topo_gpu(t, 8) == NULL && autosync_topo_nic(t, 4) == NULL,
	   "items out of range");
	autosync_topo_destroy(t);
}

int main(void)
{
	if (find_fixdir(fixdir, sizeof(fixdir)) < 0) {
		/* e.g. a release tarball built away from the clone */
		printf("1..0 # SKIP tests/fixtures/topologies not found "
		       "beside $AUTOSYNC_SRCDIR or its parents\n");
		return 0;
	}
	plan(NO_PLAN);
	diag("fixtures: %s", fixdir);
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++)
		check_fixture(&fixtures[i]);
	check_details();
	check_env();
	check_fabric_list();
	check_cluster();
	check_link_table();
	return done_testing();
}
