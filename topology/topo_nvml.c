/* topo_nvml.c - NVLink facts from NVML, loaded at run time (Debian's hwloc
 * has no NVML backend and autosync does not link NVML): for each GPU of
 * the model, its active NVLinks, their version and remote end. A node
 * without the NVIDIA driver simply has no libnvidia-ml.so.1: nothing is
 * added. The NVML declarations below follow nvml.h (CUDA 11-13). */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "topo_internal.h"

#define NVML_SUCCESS 0
#define NVML_FEATURE_ENABLED 1
#define NVML_NVLINK_MAX_LINKS 18

typedef void *nvml_dev;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvml_pci;

struct nvml {
	void *dl;
	int (*init)(void);
	int (*shutdown)(void);
	int (*by_busid)(const char *, nvml_dev *);
	int (*link_state)(nvml_dev, unsigned, int *);
	int (*link_version)(nvml_dev, unsigned, unsigned *);
	int (*link_remote)(nvml_dev, unsigned, nvml_pci *);
	int (*uuid)(nvml_dev, char *, unsigned);
	int (*name)(nvml_dev, char *, unsigned);
};

static void *sym2(void *dl, const char *a, const char *b)
{
	void *p = dlsym(dl, a);

	return p ? p : (b ? dlsym(dl, b) : NULL);
}

/* Unidirectional NVLink bandwidth per link, B/s, as hwloc's NVML backend
 * counts it: v1 20 GB/s, v2-v4 25 GB/s; newer versions: 25 GB/s too
 * (per-link rates stayed in that range, more links per GPU). */
static double link_bw(unsigned version)
{
	return version == 1 ? 20e9 : 25e9;
}

static int add_link(struct tgpu *g, const char *target, unsigned tclass,
		    double bw)
{
	struct tnvlink *L;

	for (unsigned i = 0; i < g->nnvl; i++)
		if (g->nvl[i].tclass == tclass &&
		    !strcmp(g->nvl[i].target, target)) {
			g->nvl[i].count++;
			g->nvl[i].bw += bw;
			return 0;
		}
	if (!(g->nvl = topo_grow(g->nvl, g->nnvl, sizeof(*g->nvl))))
		return -1;
	L = &g->nvl[g->nnvl++];
	snprintf(L->target, sizeof(L->target), "%s", target);
	L->count = 1;
	L->tclass = tclass;
	L->bw = bw;
	return 0;
}

int topo_nvml_enrich(struct autosync_topo *t, const char *lib)
{
	struct nvml n = {0};
	int links = 0;

	if (t->ngpus == 0)
		return 0;
	for (unsigned g = 0; g < t->ngpus; g++)
		if (t->gpus[g].nnvl > 0)
			return 0; /* hwloc (NVML backend) or the XML said it */
	if (!(n.dl = dlopen(lib ? lib : "libnvidia-ml.so.1",
			    RTLD_NOW | RTLD_LOCAL)))
		return 0;
	n.init = (int (*)(void))sym2(n.dl, "nvmlInit_v2", "nvmlInit");
	n.shutdown = (int (*)(void))sym2(n.dl, "nvmlShutdown", NULL);
	n.by_busid = (int (*)(const char *, nvml_dev *))sym2(
	    n.dl, "nvmlDeviceGetHandleByPciBusId_v2",
	    "nvmlDeviceGetHandleByPciBusId");
	n.link_state = (int (*)(nvml_dev, unsigned, int *))sym2(
	    n.dl, "nvmlDeviceGetNvLinkState", NULL);
	n.link_version = (int (*)(nvml_dev, unsigned, unsigned *))sym2(
	    n.dl, "nvmlDeviceGetNvLinkVersion", NULL);
	n.link_remote = (int (*)(nvml_dev, unsigned, nvml_pci *))sym2(
	    n.dl, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
	    "nvmlDeviceGetNvLinkRemotePciInfo");
	n.uuid = (int (*)(nvml_dev, char *, unsigned))sym2(
	    n.dl, "nvmlDeviceGetUUID", NULL);
	n.name = (int (*)(nvml_dev, char *, unsigned))sym2(
	    n.dl, "nvmlDeviceGetName", NULL);
	if (!n.init || !n.shutdown || !n.by_busid || n.init() != NVML_SUCCESS) {
		dlclose(n.dl);
		return 0;
	}
	for (unsigned g = 0; g < t->ngpus; g++) {
		struct tgpu *x = &t->gpus[g];
		nvml_dev dev;
		char buf[96];

		if (n.by_busid(x->pci.busid, &dev) != NVML_SUCCESS)
			continue;
		if (!x->uuid[0] && n.uuid &&
		    n.uuid(dev, buf, sizeof(buf)) == NVML_SUCCESS) {
			buf[sizeof(buf) - 1] = '\0';
			snprintf(x->uuid, sizeof(x->uuid), "%.79s", buf);
		}
		if (!x->model[0] && n.name &&
		    n.name(dev, buf, sizeof(buf)) == NVML_SUCCESS) {
			buf[sizeof(buf) - 1] = '\0';
			snprintf(x->model, sizeof(x->model), "%.63s", buf);
		}
		if (!n.link_state || !n.link_remote)
			continue;
		for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
			int active = 0;
			unsigned version = 0, vendor;
			nvml_pci pci;
			char peer[BUSID_LEN];
			unsigned tclass = 0x068000; /* an NVSwitch */

			if (n.link_state(dev, l, &active) != NVML_SUCCESS)
				break;
			if (active != NVML_FEATURE_ENABLED)
				continue;
			memset(&pci, 0, sizeof(pci));
			if (n.link_remote(dev, l, &pci) != NVML_SUCCESS)
				continue;
			if (n.link_version)
				(void)n.link_version(dev, l, &version);
			snprintf(peer, sizeof(peer), "%04x:%02x:%02x.0",
				 pci.domain & 0xffff, pci.bus & 0xff,
				 pci.device & 0x1f);
			vendor = pci.pciDeviceId & 0xffff;
			for (unsigned o = 0; o < t->ngpus; o++)
				if (o != g && !strncmp(t->gpus[o].pci.busid,
						       peer, strlen(peer) - 1))
					tclass = 0x030200;
			if (tclass != 0x030200 && vendor == 0x1014) {
				tclass = 0x068001; /* IBM POWER CPU */
				peer[0] = '\0';
			}
			if (add_link(x, peer, tclass, link_bw(version)) < 0)
				goto out;
			links++;
		}
	}
out:
	n.shutdown();
	dlclose(n.dl);
	return links;
}
