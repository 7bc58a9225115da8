/* topo_hwloc.c - read the model from hwloc: the live machine or an hwloc
 * XML file (v1, v2.0). GPUs and NICs are PCI devices (Debian's hwloc has no
 * CUDA/NVML backend), enriched by CUDA/NVML OS devices and NVLinkBandwidth
 * distances when present. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "topo_internal.h"

struct loadctx {
	struct autosync_topo *t;
	hwloc_topology_t topo;
	hwloc_obj_t *bridge_objs; /* parallel to t->bridges */
	hwloc_obj_t *gpu_objs;	  /* parallel to t->gpus (before sorting) */
};

static int is_gpu(hwloc_obj_t p)
{
	unsigned cls = p->attr->pcidev.class_id,
		 ven = p->attr->pcidev.vendor_id;

	if (p->subtype && !strcmp(p->subtype, "NVSwitch"))
		return 0;
	return ven == 0x10de && (cls == 0x0302 || cls == 0x0300);
}

static int is_nic(hwloc_obj_t p)
{
	unsigned cls = p->attr->pcidev.class_id;

	return cls == 0x0200 || cls == 0x0207 || cls == 0x0280 || cls == 0x0c06;
}

static void fill_pci_ids(struct tpci *d, const struct hwloc_pcidev_attr_s *a)
{
	snprintf(d->busid, sizeof(d->busid), "%04x:%02x:%02x.%x",
		 (unsigned)a->domain, (unsigned)a->bus, (unsigned)a->dev,
		 (unsigned)a->func);
	d->class_id = a->class_id;
	d->has_ids = 1;
	d->vendor = a->vendor_id;
	d->device = a->device_id;
	d->subvendor = a->subvendor_id;
	d->subdevice = a->subdevice_id;
	d->gbs = a->linkspeed > 0 ? a->linkspeed : 0;
	topo_pcie_split(d->gbs, &d->gts, &d->width);
}

static const char *info(hwloc_obj_t o, const char *name)
{
	const char *v = o ? hwloc_obj_get_info_by_name(o, name) : NULL;

	return v ? v : "";
}

/* index in t->cpus for the locality of an I/O object */
static int locality(struct loadctx *c, hwloc_obj_t io, hwloc_bitmap_t *cpuset)
{
	struct autosync_topo *t = c->t;
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(c->topo, io), pkg,
		    numa_obj;
	int numa = -1, package = -1;
	struct tcpu *cpu;

	*cpuset = NULL;
	if (!anc)
		return -1;
	if (anc->cpuset && !(*cpuset = hwloc_bitmap_dup(anc->cpuset)))
		return -2;
	if (anc->nodeset && !hwloc_bitmap_iszero(anc->nodeset) &&
	    !(anc->type == HWLOC_OBJ_MACHINE &&
	      hwloc_bitmap_weight(anc->nodeset) > 1))
		numa = hwloc_bitmap_first(anc->nodeset);
	pkg = anc->type == HWLOC_OBJ_PACKAGE
		  ? anc
		  : hwloc_get_ancestor_obj_by_type(c->topo, HWLOC_OBJ_PACKAGE,
						   anc);
	if (!pkg && anc->cpuset) {
		/* the ancestor may hold the package (e.g. a Group above it) */
		hwloc_obj_t p = hwloc_get_next_obj_covering_cpuset_by_type(
		    c->topo, anc->cpuset, HWLOC_OBJ_PACKAGE, NULL);
		if (p &&
		    hwloc_get_next_obj_covering_cpuset_by_type(
			c->topo, anc->cpuset, HWLOC_OBJ_PACKAGE, p) == NULL)
			pkg = p;
	}
	if (pkg)
		package = (int)pkg->os_index;
	for (unsigned i = 0; i < t->ncpus; i++)
		if (t->cpus[i].numa == numa && t->cpus[i].package == package)
			return (int)i;
	if (!(t->cpus = topo_grow(t->cpus, t->ncpus, sizeof(*t->cpus))))
		return -2;
	cpu = &t->cpus[t->ncpus];
	cpu->numa = numa;
	cpu->package = package;
	numa_obj =
	    numa >= 0
		? hwloc_get_numanode_obj_by_os_index(c->topo, (unsigned)numa)
		: NULL;
	if (numa_obj && numa_obj->cpuset)
		cpu->cpuset = hwloc_bitmap_dup(numa_obj->cpuset);
	else if (anc->cpuset)
		cpu->cpuset = hwloc_bitmap_dup(anc->cpuset);
	{
		const char *arch =
		    info(hwloc_get_root_obj(c->topo), "Architecture");

		if (!strcmp(arch, "x86_64") || !strcmp(arch, "i686"))
			snprintf(cpu->arch, sizeof(cpu->arch), "x86_64");
		else if (!strncmp(arch, "ppc64", 5))
			snprintf(cpu->arch, sizeof(cpu->arch), "ppc64");
		else if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
			snprintf(cpu->arch, sizeof(cpu->arch), "arm64");
		snprintf(cpu->vendor, sizeof(cpu->vendor), "%s",
			 info(pkg, "CPUVendor"));
		snprintf(cpu->familyid, sizeof(cpu->familyid), "%s",
			 info(pkg, "CPUFamilyNumber"));
		snprintf(cpu->modelid, sizeof(cpu->modelid), "%s",
			 info(pkg, "CPUModelNumber"));
	}
	return (int)t->ncpus++;
}

/* index in t->bridges of a PCI-to-PCI bridge object (added with its parents) */
static int bridge_index(struct loadctx *c, hwloc_obj_t b, int depth)
{
	struct autosync_topo *t = c->t;
	struct tbridge *tb;
	hwloc_obj_t par = b->parent;
	int parent = -1, idx;

	for (unsigned i = 0; i < t->nbridges; i++)
		if (c->bridge_objs[i] == b)
			return (int)i;
	if (depth > 64)
		return -1;
	if (par && par->type == HWLOC_OBJ_BRIDGE &&
	    par->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
		parent = bridge_index(c, par, depth + 1);
		if (parent == -2)
			return -2;
	}
	if (!(t->bridges =
		  topo_grow(t->bridges, t->nbridges, sizeof(*t->bridges))) ||
	    !(c->bridge_objs = topo_grow(c->bridge_objs, t->nbridges,
					 sizeof(*c->bridge_objs))))
		return -2;
	idx = (int)t->nbridges++;
	tb = &t->bridges[idx];
	c->bridge_objs[idx] = b;
	fill_pci_ids(&tb->pci, &b->attr->bridge.upstream.pci);
	tb->pci.parent = parent;
	tb->root_port = parent < 0;
	{
		hwloc_bitmap_t cs;
		int cpu = locality(c, b, &cs);

		if (cpu == -2) {
			hwloc_bitmap_free(cs);
			return -2;
		}
		/* re-fetch: locality() may not move bridges, but be safe */
		t->bridges[idx].pci.cpu = cpu;
		t->bridges[idx].pci.cpuset = cs;
	}
	return idx;
}

static int fill_common(struct loadctx *c, hwloc_obj_t p, struct tpci *d)
{
	hwloc_obj_t par = p->parent;
	int cpu;

	fill_pci_ids(d, &p->attr->pcidev);
	d->parent = -1;
	if (par && par->type == HWLOC_OBJ_BRIDGE &&
	    par->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
		d->parent = bridge_index(c, par, 0);
		if (d->parent == -2)
			return -1;
	}
	cpu = locality(c, p, &d->cpuset);
	if (cpu == -2)
		return -1;
	d->cpu = cpu;
	return 0;
}

static void read_line_value(const char *path, const char *key, char *out,
			    size_t len)
{
	FILE *fp = fopen(path, "r");
	char line[256];
	size_t kl = strlen(key);

	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, key, kl)) {
			char *v = line + kl, *e;

			while (*v == ' ' || *v == '\t')
				v++;
			e = v + strlen(v);
			while (e > v && isspace((unsigned char)e[-1]))
				*--e = '\0';
			snprintf(out, len, "%s", v);
			break;
		}
	}
	fclose(fp);
}

static void live_gpu(struct tgpu *g)
{
	char path[128];

	/* the NVIDIA driver's own view; absent without the driver */
	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information",
		 g->pci.busid);
	if (!g->model[0])
		read_line_value(path, "Model:", g->model, sizeof(g->model));
	if (!g->uuid[0])
		read_line_value(path, "GPU UUID:", g->uuid, sizeof(g->uuid));
}

static void live_nic(struct tnic *n)
{
	char path[192], buf[64] = "";

	if (n->ofname[0] && n->port > 0) {
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/state", n->ofname,
			 n->port);
		buf[0] = '\0';
		read_line_value(path, "", buf, sizeof(buf));
		if (isdigit((unsigned char)buf[0]))
			n->port_state = atoi(buf);
		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/%d/rate", n->ofname,
			 n->port);
		buf[0] = '\0';
		read_line_value(path, "", buf, sizeof(buf));
		if (isdigit((unsigned char)buf[0]))
			n->speed = strtod(buf, NULL) * 1e9 /
				   8; /* "200 Gb/sec (4X HDR)" */
	}
	if (n->speed <= 0 && n->netdev[0]) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/speed",
			 n->netdev);
		buf[0] = '\0';
		read_line_value(path, "", buf, sizeof(buf));
		if (isdigit((unsigned char)buf[0]) && atol(buf) > 0)
			n->speed = atol(buf) * 1e6 / 8; /* Mb/s */
	}
}

static int add_gpu(struct loadctx *c, hwloc_obj_t p)
{
	struct autosync_topo *t = c->t;
	struct tgpu *g;

	if (!(t->gpus = topo_grow(t->gpus, t->ngpus, sizeof(*t->gpus))) ||
	    !(c->gpu_objs =
		  topo_grow(c->gpu_objs, t->ngpus, sizeof(*c->gpu_objs))))
		return -1;
	g = &t->gpus[t->ngpus];
	c->gpu_objs[t->ngpus] = p;
	t->ngpus++;
	g->dev = g->sm = g->rank = g->gdr = -1;
	if (fill_common(c, p, &g->pci) < 0)
		return -1;
	g = &t->gpus[t->ngpus - 1];
	for (hwloc_obj_t o = p->io_first_child; o; o = o->next_sibling) {
		if (o->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		if (!g->model[0] && *info(o, "GPUModel"))
			snprintf(g->model, sizeof(g->model), "%s",
				 info(o, "GPUModel"));
		if (!g->uuid[0] && *info(o, "NVIDIAUUID"))
			snprintf(g->uuid, sizeof(g->uuid), "%s",
				 info(o, "NVIDIAUUID"));
	}
	if (t->source == SRC_LIVE)
		live_gpu(g);
	return 0;
}

static int add_nic(struct loadctx *c, hwloc_obj_t p)
{
	struct autosync_topo *t = c->t;
	struct tnic *n;

	if (!(t->nics = topo_grow(t->nics, t->nnics, sizeof(*t->nics))))
		return -1;
	n = &t->nics[t->nnics++];
	n->port_state = -1;
	if (fill_common(c, p, &n->pci) < 0)
		return -1;
	n = &t->nics[t->nnics - 1];
	for (hwloc_obj_t o = p->io_first_child; o; o = o->next_sibling) {
		/* a name NCCL's variables could not carry is no name */
		if (o->type != HWLOC_OBJ_OS_DEVICE ||
		    !topo_dev_name_ok(o->name))
			continue;
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
		    topo_rdma_name(o->name)) {
			if (n->ofname[0])
				continue;
			snprintf(n->ofname, sizeof(n->ofname), "%s", o->name);
			/* the first ACTIVE port, else the first port listed */
			for (int port = 1; port <= 16; port++) {
				char key[32];
				const char *st;

				snprintf(key, sizeof(key), "Port%dState", port);
				st = hwloc_obj_get_info_by_name(o, key);
				if (!st)
					continue;
				if (n->port == 0 ||
				    (atoi(st) == 4 && n->port_state != 4)) {
					n->port = port;
					n->port_state = atoi(st);
				}
			}
			if (n->port == 0)
				n->port = 1;
		} else if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK &&
			   !n->netdev[0]) {
			snprintf(n->netdev, sizeof(n->netdev), "%s", o->name);
		}
	}
	if (t->source == SRC_LIVE)
		live_nic(n);
	return 0;
}

/* NVLinkBandwidth distances (NVML backend) -> per-GPU NVLink lists */
static int read_nvlinks(struct loadctx *c)
{
	struct autosync_topo *t = c->t;
	struct hwloc_distances_s *d[8];
	unsigned nr = 8;

	if (hwloc_distances_get_by_name(c->topo, "NVLinkBandwidth", &nr, d, 0) <
		0 ||
	    nr == 0)
		return 0;
	if (nr > 8)
		nr = 8;
	for (unsigned m = 0; m < nr; m++) {
		struct hwloc_distances_s *ds = d[m];
		unsigned n = ds->nbobjs;

		for (unsigned i = 0; i < n; i++) {
			hwloc_obj_t a = ds->objs[i];
			int gi = -1;

			while (a && a->type == HWLOC_OBJ_OS_DEVICE)
				a = a->parent;
			for (unsigned g = 0; a && g < t->ngpus; g++)
				if (c->gpu_objs[g] == a)
					gi = (int)g;
			if (gi < 0)
				continue;
			for (unsigned j = 0; j < n; j++) {
				hwloc_obj_t b = ds->objs[j];
				struct tgpu *g = &t->gpus[gi];
				struct tnvlink *L;
				hwloc_uint64_t v = ds->values[i * n + j];

				if (i == j || v == 0)
					continue;
				while (b && b->type == HWLOC_OBJ_OS_DEVICE)
					b = b->parent;
				if (!b || b == a)
					continue;
				if (!(g->nvl = topo_grow(g->nvl, g->nnvl,
							 sizeof(*g->nvl)))) {
					for (unsigned k = 0; k < nr; k++)
						hwloc_distances_release(c->topo,
									d[k]);
					return -1;
				}
				L = &g->nvl[g->nnvl++];
				L->bw = (double)v * 1e6; /* MB/s */
				if (b->type == HWLOC_OBJ_PCI_DEVICE) {
					struct tpci tmp;

					fill_pci_ids(&tmp, &b->attr->pcidev);
					memcpy(L->target, tmp.busid,
					       sizeof(L->target));
					L->tclass =
					    is_gpu(b) ? 0x030200 : 0x068000;
				} else {
					L->target[0] = '\0'; /* a CPU (POWER) */
					L->tclass = 0x068001;
				}
			}
		}
	}
	for (unsigned k = 0; k < nr; k++)
		hwloc_distances_release(c->topo, d[k]);
	return 0;
}

static int sniff_v3(const char *path)
{
	FILE *fp = fopen(path, "r");
	char buf[1024];
	size_t n;

	if (!fp)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strstr(buf, "<topology version=\"3") != NULL;
}

struct autosync_topo *topo_load_hwloc(const char *xml, autosync_error_t *errp)
{
	struct loadctx c = {0};
	struct autosync_topo *t = NULL;
	const char *what = xml ? xml : "this machine";
	hwloc_obj_t p = NULL;
	int ok = 0, saved;

	if (xml) {
		FILE *fp = fopen(xml, "r");

		if (!fp) {
			autosync_errprintf(errp, "%s: cannot open: %s", xml,
					   strerror(errno));
			return NULL;
		}
		fclose(fp);
		if (sniff_v3(xml)) {
			errno = EINVAL;
			autosync_errprintf(errp,
					   "%s: hwloc XML version 3.0 is not "
					   "readable by hwloc %s; export it "
					   "with hwloc 2.x (lstopo --of xml)",
					   xml, HWLOC_VERSION);
			return NULL;
		}
	}
	if (!(t = topo_alloc(xml ? SRC_HWLOC_XML : SRC_LIVE,
			     xml ? xml : "live"))) {
		errno = ENOMEM;
		autosync_errprintf(errp, "topology: out of memory");
		return NULL;
	}
	c.t = t;
	if (hwloc_topology_init(&c.topo) < 0) {
		autosync_errprintf(errp, "%s: hwloc_topology_init: %s", what,
				   strerror(errno));
		c.topo = NULL;
		goto out;
	}
	if (xml && hwloc_topology_set_xml(c.topo, xml) < 0) {
		autosync_errprintf(errp,
				   "%s: hwloc cannot load it (truncated or not "
				   "hwloc XML?): %s",
				   xml, strerror(errno));
		goto out;
	}
	if (xml) {
		(void)hwloc_topology_set_io_types_filter(
		    c.topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	} else {
		(void)hwloc_topology_set_io_types_filter(
		    c.topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
		(void)hwloc_topology_set_type_filter(
		    c.topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL);
		/* the whole machine, so that a GPU on a socket the job has
		 * no CPU of keeps its true locality; the job's CPUs become
		 * the allowed set */
		(void)hwloc_topology_set_flags(
		    c.topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
	}
	if (hwloc_topology_load(c.topo) < 0) {
		if (errno == 0)
			errno = EINVAL;
		autosync_errprintf(errp,
				   "%s: hwloc cannot load it (truncated, not "
				   "hwloc XML, or XML v3.0?): %s",
				   what, strerror(errno));
		goto out;
	}
	{
		hwloc_const_bitmap_t all =
		    hwloc_topology_get_topology_cpuset(c.topo);
		hwloc_const_bitmap_t allowed =
		    hwloc_topology_get_allowed_cpuset(c.topo);

		if (all)
			t->machine_cpuset = hwloc_bitmap_dup(all);
		if (!xml && allowed && all &&
		    !hwloc_bitmap_isequal(all, allowed))
			t->allowed = hwloc_bitmap_dup(allowed);
	}
	while ((p = hwloc_get_next_pcidev(c.topo, p))) {
		int r = 0;

		if (is_gpu(p))
			r = add_gpu(&c, p);
		else if (is_nic(p))
			r = add_nic(&c, p);
		if (r < 0) {
			errno = ENOMEM;
			autosync_errprintf(errp, "topology: out of memory");
			goto out;
		}
	}
	if (read_nvlinks(&c) < 0) {
		errno = ENOMEM;
		autosync_errprintf(errp, "topology: out of memory");
		goto out;
	}
	if (!xml)
		(void)topo_nvml_enrich(t, NULL);
	if (topo_finish(t, errp) < 0)
		goto out;
	ok = 1;
out:
	saved = errno;
	if (c.topo)
		hwloc_topology_destroy(c.topo);
	free(c.bridge_objs);
	free(c.gpu_objs);
	if (!ok) {
		autosync_topo_destroy(t);
		t = NULL;
	}
	errno = saved;
	return t;
}

autosync_topo_t *autosync_topo_load_live(autosync_error_t *errp)
{
	return topo_load_hwloc(NULL, errp);
}

autosync_topo_t *autosync_topo_load_hwloc_xml(const char *path,
					      autosync_error_t *errp)
{
	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "topo_load_hwloc_xml: invalid argument");
		return NULL;
	}
	return topo_load_hwloc(path, errp);
}
