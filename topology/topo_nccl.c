/* topo_nccl.c - NCCL topology XML (<system version="1">, NCCL 2.28
 * src/graph/xml.h): reader, writer for NCCL_TOPO_FILE, and the
 * format-detecting loader. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/readfile.h"
#include "topo_internal.h"
#include "xml.h"

#define MAX_FILE (16 * 1024 * 1024)

/* the one bounded reader (common/readfile.c): a FIFO or a device is
 * refused without blocking, /dev/zero cannot fill memory */
static int read_file(const char *path, char **buf, size_t *len,
		     autosync_error_t *errp)
{
	char why[AUTOSYNC_ERROR_LEN];

	*buf = NULL;
	*len = 0;
	if (asi_read_file(path, MAX_FILE, ASI_READ_OPEN_PREFIX, (uid_t)-1, buf,
			  len, why, sizeof(why)) < 0)
		return autosync_errprintf(errp, "%s", why);
	return 0;
}

/* ----------------------------------------------------------------- reader */

struct nctx {
	struct autosync_topo *t;
	const char *path;
	autosync_error_t *errp;
};

#define S(x) ((x) ? (x) : "(none)")

static int bad(struct nctx *c, const struct xnode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(struct nctx *c, const struct xnode *n, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errno = EINVAL;
	return autosync_errprintf(c->errp, "%s: line %u: <%s>: %s", c->path,
				  n->line, n->name, msg);
}

static int parse_hex(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!s || !*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 16);
	if (errno || *end || *v > max)
		return -1;
	return 0;
}

static int parse_int(const char *s, long lo, long hi, long *v)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || *end || *v < lo || *v > hi)
		return -1;
	return 0;
}

/* NCCL affinity "0000ffff,ffff0000" -> bitmap */
static hwloc_bitmap_t parse_affinity(const char *s)
{
	hwloc_bitmap_t b;

	if (!s || !(b = hwloc_bitmap_alloc()))
		return NULL;
	if (topo_parse_mask(s, b) < 0) {
		hwloc_bitmap_free(b);
		return NULL;
	}
	return b;
}

static int read_pci_attrs(struct nctx *c, const struct xnode *n, struct tpci *d,
			  int cpu, int parent, unsigned long *cls24)
{
	const char *busid = topo_xml_attr(n, "busid"),
		   *cl = topo_xml_attr(n, "class");
	const char *ls = topo_xml_attr(n, "link_speed"),
		   *lw = topo_xml_attr(n, "link_width");
	unsigned dom, bus, dev, fn;
	unsigned long v;

	if (!busid)
		return bad(c, n, "no busid attribute");
	if (topo_busid_parse(busid, &dom, &bus, &dev, &fn) < 0)
		return bad(c, n, "bad busid '%.40s'", S(busid));
	topo_busid_norm(d->busid, sizeof(d->busid), busid);
	/* NCCL completes a <pci> without a class from sysfs; here its
	 * children say what it is (walk_pci) */
	if (!cl || !*cl)
		*cls24 = 0;
	else if (parse_hex(cl, 0xffffff, cls24) < 0)
		return bad(c, n, "bad class '%.40s'", S(cl));
	else if (strlen(cl) <= 6 && *cls24 <= 0xffff) /* "0x0302": 16-bit */
		*cls24 <<= 8;
	d->class_id = (unsigned)(*cls24 >> 8);
	d->progif = (unsigned)(*cls24 & 0xff);
	if (topo_xml_attr(n, "vendor")) {
		d->has_ids = 1;
		if (parse_hex(topo_xml_attr(n, "vendor"), 0xffff, &v) < 0)
			return bad(c, n, "bad vendor '%.40s'",
				   S(topo_xml_attr(n, "vendor")));
		d->vendor = (unsigned)v;
		if (topo_xml_attr(n, "device") &&
		    parse_hex(topo_xml_attr(n, "device"), 0xffff, &v) == 0)
			d->device = (unsigned)v;
		if (topo_xml_attr(n, "subsystem_vendor") &&
		    parse_hex(topo_xml_attr(n, "subsystem_vendor"), 0xffff,
			      &v) == 0)
			d->subvendor = (unsigned)v;
		if (topo_xml_attr(n, "subsystem_device") &&
		    parse_hex(topo_xml_attr(n, "subsystem_device"), 0xffff,
			      &v) == 0)
			d->subdevice = (unsigned)v;
	}
	/* an empty link_speed or link_width (cloud VMs with passthrough
	 * GPUs dump them so) is unknown, as a missing one; so is one that is
	 * not a number: NCCL copies sysfs's text, "Unknown" included, and
	 * takes any string itself */
	if (ls && *ls) {
		char *end;
		double g;

		errno = 0;
		g = strtod(ls, &end);
		if (end != ls && (errno || !isfinite(g) || g < 0 || g > 1000))
			return bad(c, n, "bad link_speed '%.40s'", S(ls));
		d->gts = end != ls ? g : 0;
	}
	if (lw && *lw) {
		long w;

		if (parse_int(lw, 0, 64, &w) < 0)
			return bad(c, n, "bad link_width '%.40s'", S(lw));
		d->width = (unsigned)w;
	}
	/* NCCL treats width 0 as 16 */
	d->gbs =
	    topo_pcie_gbs(d->gts, d->width ? d->width : (d->gts > 0 ? 16 : 0));
	d->cpu = cpu;
	d->parent = parent;
	if (cpu >= 0 && c->t->cpus[cpu].cpuset)
		d->cpuset = hwloc_bitmap_dup(c->t->cpus[cpu].cpuset);
	return 0;
}

static void copy_attr(char *dst, size_t len, const struct xnode *n,
		      const char *name)
{
	const char *v = topo_xml_attr(n, name);

	snprintf(dst, len, "%s", v ? v : "");
}

static int add_net(struct nctx *c, const struct xnode *net,
		   const struct tpci *pci, int under_cpu)
{
	struct autosync_topo *t = c->t;
	struct tnic *n;
	const char *name = net ? topo_xml_attr(net, "name") : NULL;
	const char *speed = net ? topo_xml_attr(net, "speed") : NULL;
	const char *port = net ? topo_xml_attr(net, "port") : NULL;

	if (!(t->nics = topo_grow(t->nics, t->nnics, sizeof(*t->nics)))) {
		errno = ENOMEM;
		return autosync_errprintf(c->errp, "topology: out of memory");
	}
	n = &t->nics[t->nnics++];
	n->pci = *pci;
	if (pci->cpuset && !(n->pci.cpuset = hwloc_bitmap_dup(pci->cpuset))) {
		errno = ENOMEM;
		return autosync_errprintf(c->errp, "topology: out of memory");
	}
	n->port_state = -1;
	n->nic_under_cpu = under_cpu;
	if (!net)
		return 0;
	n->has_net_elem = 1;
	if (name && *name && !topo_dev_name_ok(name))
		return bad(c, net,
			   "bad name '%s' (1 to 31 letters, digits or _.:@-)",
			   name);
	if (name && *name) {
		if (pci->class_id == 0x0207 || pci->class_id == 0x0c06 ||
		    topo_rdma_name(name))
			snprintf(n->ofname, sizeof(n->ofname), "%s", name);
		else
			snprintf(n->netdev, sizeof(n->netdev), "%s", name);
	}
	if (speed && *speed) {
		char *end;
		double s;

		errno = 0;
		s = strtod(speed, &end);
		if (end == speed || *end || errno || !isfinite(s))
			return bad(c, net, "bad speed '%.40s'", S(speed));
		if (s > 0)
			n->speed = s * 1e6 / 8; /* Mb/s */
	}
	if (port && *port) {
		long p;

		if (parse_int(port, 0, 255, &p) < 0)
			return bad(c, net, "bad port '%.40s'", S(port));
		n->port = (int)p;
	}
	copy_attr(n->n_dev, sizeof(n->n_dev), net, "dev");
	copy_attr(n->n_speed, sizeof(n->n_speed), net, "speed");
	copy_attr(n->n_port, sizeof(n->n_port), net, "port");
	copy_attr(n->n_latency, sizeof(n->n_latency), net, "latency");
	copy_attr(n->n_guid, sizeof(n->n_guid), net, "guid");
	copy_attr(n->n_maxconn, sizeof(n->n_maxconn), net, "maxconn");
	copy_attr(n->n_gdr, sizeof(n->n_gdr), net, "gdr");
	copy_attr(n->n_coll, sizeof(n->n_coll), net, "coll");
	return 0;
}

static int add_nic_elem(struct nctx *c, const struct xnode *nic,
			const struct tpci *pci, int under_cpu)
{
	int nets = 0;

	for (const struct xnode *k = nic->first; k; k = k->next)
		if (!strcmp(k->name, "net")) {
			if (add_net(c, k, pci, under_cpu) < 0)
				return -1;
			nets++;
		}
	if (!nets)
		return add_net(c, NULL, pci, under_cpu);
	return 0;
}

static int add_gpu_elem(struct nctx *c, const struct xnode *pcin,
			const struct xnode *gpu, const struct tpci *pci)
{
	struct autosync_topo *t = c->t;
	struct tgpu *g;
	long v;

	if (!(t->gpus = topo_grow(t->gpus, t->ngpus, sizeof(*t->gpus)))) {
		errno = ENOMEM;
		return autosync_errprintf(c->errp, "topology: out of memory");
	}
	g = &t->gpus[t->ngpus++];
	g->pci = *pci;
	if (pci->cpuset && !(g->pci.cpuset = hwloc_bitmap_dup(pci->cpuset))) {
		errno = ENOMEM;
		return autosync_errprintf(c->errp, "topology: out of memory");
	}
	g->dev = g->sm = g->rank = g->gdr = -1;
	(void)pcin;
	if (!gpu)
		return 0;
	g->has_gpu_elem = 1;
	if (topo_xml_attr(gpu, "dev")) {
		if (parse_int(topo_xml_attr(gpu, "dev"), 0, 1 << 20, &v) < 0)
			return bad(c, gpu, "bad dev '%.40s'",
				   S(topo_xml_attr(gpu, "dev")));
		g->dev = (int)v;
	}
	if (topo_xml_attr(gpu, "sm")) {
		if (parse_int(topo_xml_attr(gpu, "sm"), 0, 10000, &v) < 0)
			return bad(c, gpu, "bad sm '%.40s'",
				   S(topo_xml_attr(gpu, "sm")));
		g->sm = (int)v;
	}
	if (topo_xml_attr(gpu, "rank")) {
		if (parse_int(topo_xml_attr(gpu, "rank"), 0, 1 << 30, &v) < 0)
			return bad(c, gpu, "bad rank '%.40s'",
				   S(topo_xml_attr(gpu, "rank")));
		g->rank = (int)v;
	}
	if (topo_xml_attr(gpu, "gdr")) {
		if (parse_int(topo_xml_attr(gpu, "gdr"), 0, 1, &v) < 0)
			return bad(c, gpu, "bad gdr '%.40s'",
				   S(topo_xml_attr(gpu, "gdr")));
		g->gdr = (int)v;
	}
	for (const struct xnode *k = gpu->first; k; k = k->next) {
		struct tnvlink *L;
		const char *tg = topo_xml_attr(k, "target");
		unsigned long tc;
		long cnt;
		double per;

		if (strcmp(k->name, "nvlink") != 0)
			continue;
		if (parse_int(topo_xml_attr(k, "count"), 1, 1024, &cnt) < 0)
			return bad(c, k, "bad or missing count '%.40s'",
				   S(topo_xml_attr(k, "count")));
		if (parse_hex(topo_xml_attr(k, "tclass"), 0xffffff, &tc) < 0)
			return bad(c, k, "bad or missing tclass '%.40s'",
				   S(topo_xml_attr(k, "tclass")));
		if (!(g->nvl = topo_grow(g->nvl, g->nnvl, sizeof(*g->nvl)))) {
			errno = ENOMEM;
			return autosync_errprintf(c->errp,
						  "topology: out of memory");
		}
		L = &g->nvl[g->nnvl++];
		if (tg)
			topo_busid_norm(L->target, sizeof(L->target), tg);
		L->count = (int)cnt;
		L->tclass = (unsigned)tc;
		(void)topo_nvlink_gbs_per_link(g->sm, &per);
		L->bw = per * 1e9 * (double)cnt;
	}
	return 0;
}

static int walk_pci(struct nctx *c, const struct xnode *n, int cpu, int parent,
		    int depth)
{
	struct autosync_topo *t = c->t;
	struct tpci d = {0};
	unsigned long cls24;
	const struct xnode *gpu = NULL, *nic = NULL;
	int has_pci_child = 0, rv = -1;
	unsigned cls;

	if (depth > 32)
		return bad(c, n, "PCI tree nested too deeply");
	if (read_pci_attrs(c, n, &d, cpu, parent, &cls24) < 0)
		goto out;
	for (const struct xnode *k = n->first; k; k = k->next) {
		if (!strcmp(k->name, "gpu"))
			gpu = k;
		else if (!strcmp(k->name, "nic"))
			nic = k;
		else if (!strcmp(k->name, "pci"))
			has_pci_child = 1;
	}
	cls = d.class_id;
	if (!cls) /* no class in the file: what its children make it */
		cls = d.class_id = gpu		   ? 0x0302
				   : nic	   ? 0x0200
				   : has_pci_child ? 0x0604
						   : 0;
	if (gpu || (!nic && (cls >> 8) == 0x03 &&
		    (!d.has_ids || d.vendor == 0x10de))) {
		rv = add_gpu_elem(c, n, gpu, &d);
		goto out;
	}
	if (nic) {
		rv = add_nic_elem(c, nic, &d, 0);
		goto out;
	}
	if ((cls >> 8) == 0x02 && !has_pci_child) {
		rv = add_net(c, NULL, &d, 0);
		goto out;
	}
	if (cls == 0x0604 || has_pci_child) {
		struct tbridge *b;
		int idx;

		if (!(t->bridges = topo_grow(t->bridges, t->nbridges,
					     sizeof(*t->bridges)))) {
			errno = ENOMEM;
			autosync_errprintf(c->errp, "topology: out of memory");
			goto out;
		}
		idx = (int)t->nbridges++;
		b = &t->bridges[idx];
		b->pci = d;
		d.cpuset = NULL; /* moved */
		b->root_port = 0;
		for (const struct xnode *k = n->first; k; k = k->next)
			if (!strcmp(k->name, "pci") &&
			    walk_pci(c, k, cpu, idx, depth + 1) < 0)
				goto out;
		rv = 0;
		goto out;
	}
	rv = 0; /* NVSwitch, CPU link or another device: not modelled */
out:
	hwloc_bitmap_free(d.cpuset);
	return rv;
}

static int read_system(struct nctx *c, const struct xnode *root)
{
	struct autosync_topo *t = c->t;
	const char *ver = topo_xml_attr(root, "version");

	if (strcmp(root->name, "system") != 0)
		return bad(
		    c, root,
		    "root element is not <system>: not an NCCL topology file");
	if (!ver || strcmp(ver, "1") != 0)
		return bad(c, root,
			   "unsupported version '%.20s' (NCCL reads version 1)",
			   S(ver));
	for (const struct xnode *cn = root->first; cn; cn = cn->next) {
		struct tcpu *cpu;
		long numa;
		int ci;

		if (strcmp(cn->name, "cpu") != 0)
			continue;
		if (!topo_xml_attr(cn, "numaid") ||
		    parse_int(topo_xml_attr(cn, "numaid"), -1, 1 << 20, &numa) <
			0)
			return bad(c, cn, "bad or missing numaid '%.20s'",
				   S(topo_xml_attr(cn, "numaid")));
		if (!(t->cpus =
			  topo_grow(t->cpus, t->ncpus, sizeof(*t->cpus)))) {
			errno = ENOMEM;
			return autosync_errprintf(c->errp,
						  "topology: out of memory");
		}
		ci = (int)t->ncpus++;
		cpu = &t->cpus[ci];
		cpu->numa = (int)numa;
		cpu->package = -1;
		if (topo_xml_attr(cn, "affinity")) {
			if (!(cpu->cpuset = parse_affinity(
				  topo_xml_attr(cn, "affinity"))))
				return bad(c, cn, "bad affinity '%.60s'",
					   S(topo_xml_attr(cn, "affinity")));
			if (!t->machine_cpuset)
				t->machine_cpuset = hwloc_bitmap_alloc();
			if (t->machine_cpuset)
				hwloc_bitmap_or(t->machine_cpuset,
						t->machine_cpuset, cpu->cpuset);
		}
		copy_attr(cpu->arch, sizeof(cpu->arch), cn, "arch");
		copy_attr(cpu->vendor, sizeof(cpu->vendor), cn, "vendor");
		copy_attr(cpu->familyid, sizeof(cpu->familyid), cn, "familyid");
		copy_attr(cpu->modelid, sizeof(cpu->modelid), cn, "modelid");
		for (const struct xnode *k = cn->first; k; k = k->next) {
			if (!strcmp(k->name, "pci")) {
				if (walk_pci(c, k, ci, -1, 0) < 0)
					return -1;
			} else if (!strcmp(k->name, "nic")) {
				struct tpci d = {0};

				d.parent = -1;
				d.cpu = ci;
				d.cpuset =
				    t->cpus[ci].cpuset; /* copied by add_net */
				if (add_nic_elem(c, k, &d, 1) < 0)
					return -1;
			}
		}
	}
	return 0;
}

struct autosync_topo *topo_load_nccl(const char *path, const char *buf,
				     size_t len, autosync_error_t *errp)
{
	struct autosync_topo *t;
	struct xnode *root;
	struct nctx c;

	if (!(root = topo_xml_parse(buf, len, path, errp)))
		return NULL;
	if (!(t = topo_alloc(SRC_NCCL_XML, path))) {
		topo_xml_free(root);
		errno = ENOMEM;
		autosync_errprintf(errp, "topology: out of memory");
		return NULL;
	}
	c.t = t;
	c.path = path;
	c.errp = errp;
	if (read_system(&c, root) < 0 || topo_finish(t, errp) < 0) {
		topo_xml_free(root);
		autosync_topo_destroy(t);
		return NULL;
	}
	topo_xml_free(root);
	return t;
}

autosync_topo_t *autosync_topo_load_nccl_xml(const char *path,
					     autosync_error_t *errp)
{
	struct autosync_topo *t;
	char *buf;
	size_t len;

	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "topo_load_nccl_xml: invalid argument");
		return NULL;
	}
	if (read_file(path, &buf, &len, errp) < 0)
		return NULL;
	t = topo_load_nccl(path, buf, len, errp);
	free(buf);
	return t;
}

autosync_topo_t *autosync_topo_load_file(const char *path,
					 autosync_error_t *errp)
{
	char *buf, root[64];
	size_t len;
	struct autosync_topo *t = NULL;

	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "topo_load_file: invalid argument");
		return NULL;
	}
	if (read_file(path, &buf, &len, errp) < 0)
		return NULL;
	if (topo_xml_root_name(buf, len, root, sizeof(root)) < 0) {
		errno = EINVAL;
		autosync_errprintf(
		    errp, "%s: not an XML file (no root element found)", path);
	} else if (!strcmp(root, "system")) {
		t = topo_load_nccl(path, buf, len, errp);
	} else if (!strcmp(root, "topology") || !strcmp(root, "root")) {
		t = topo_load_hwloc(path, errp);
	} else {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "%s: root element <%.40s> is neither hwloc "
				   "<topology> nor NCCL <system>",
				   path, root);
	}
	free(buf);
	return t;
}

/* ----------------------------------------------------------------- writer */

struct wctx {
	const struct autosync_topo *t;
	FILE *fp;
	unsigned char *keep_gpu, *keep_nic, *keep_bridge;
	int identity; /* the view is every GPU in bus order */
};

static void xml_str(FILE *fp, const char *name, const char *v)
{
	if (!v || !*v)
		return;
	fprintf(fp, " %s=\"", name);
	for (; *v; v++) {
		switch (*v) {
		case '&':
			fputs("&amp;", fp);
			break;
		case '<':
			fputs("&lt;", fp);
			break;
		case '>':
			fputs("&gt;", fp);
			break;
		case '"':
			fputs("&quot;", fp);
			break;
		default:
			if ((unsigned char)*v < 0x20)
				fprintf(fp, "&#%u;", (unsigned char)*v);
			else
				fputc(*v, fp);
		}
	}
	fputc('"', fp);
}

static void pci_open(struct wctx *w, const struct tpci *d, int ind, int leaf)
{
	FILE *fp = w->fp;
	char cls[16];

	snprintf(cls, sizeof(cls), "0x%04x%02x", d->class_id, d->progif);
	fprintf(fp, "%*s<pci", ind, "");
	xml_str(fp, "busid", d->busid);
	xml_str(fp, "class", cls);
	if (d->has_ids)
		fprintf(
		    fp,
		    " vendor=\"0x%04x\" device=\"0x%04x\" "
		    "subsystem_vendor=\"0x%04x\" subsystem_device=\"0x%04x\"",
		    d->vendor, d->device, d->subvendor, d->subdevice);
	if (d->gts > 0) {
		if (d->gts < 5)
			fprintf(fp, " link_speed=\"%.1f GT/s PCIe\"", d->gts);
		else
			fprintf(fp, " link_speed=\"%.1f GT/s PCIe\"", d->gts);
	}
	if (d->width > 0 || d->gts > 0)
		fprintf(fp, " link_width=\"%u\"", d->width ? d->width : 16);
	fputs(leaf ? "/>\n" : ">\n", fp);
}

/* The full view keeps dev and rank as read. A restricted or reordered view
 * writes neither: NCCL takes dev as the GPU's NVML index (its P2P and PXN
 * checks index NVML's device pairs with it) and fills both itself when
 * they are absent, while the GPU's place in the view is its CUDA device
 * number inside the job, another number. */
static void write_gpu(struct wctx *w, const struct tgpu *g, int ind)
{
	FILE *fp = w->fp;
	int dev = w->identity ? g->dev : -1;
	int rank = w->identity ? g->rank : -1;

	if (!g->has_gpu_elem) {
		pci_open(w, &g->pci, ind, 1);
		return;
	}
	pci_open(w, &g->pci, ind, 0);
	fprintf(fp, "%*s<gpu", ind + 2, "");
	if (dev >= 0)
		fprintf(fp, " dev=\"%d\"", dev);
	if (g->sm >= 0)
		fprintf(fp, " sm=\"%d\"", g->sm);
	if (rank >= 0)
		fprintf(fp, " rank=\"%d\"", rank);
	if (g->gdr >= 0)
		fprintf(fp, " gdr=\"%d\"", g->gdr);
	if (g->nnvl == 0) {
		fputs("/>\n", fp);
	} else {
		fputs(">\n", fp);
		for (unsigned l = 0; l < g->nnvl; l++) {
			fprintf(fp, "%*s<nvlink", ind + 4, "");
			xml_str(fp, "target", g->nvl[l].target);
			fprintf(fp, " count=\"%d\" tclass=\"0x%06x\"/>\n",
				g->nvl[l].count, g->nvl[l].tclass);
		}
		fprintf(fp, "%*s</gpu>\n", ind + 2, "");
	}
	fprintf(fp, "%*s</pci>\n", ind, "");
}

static void write_net(struct wctx *w, const struct tnic *n, int ind)
{
	FILE *fp = w->fp;

	fprintf(fp, "%*s<net", ind, "");
	xml_str(fp, "name", n->ofname[0] ? n->ofname : n->netdev);
	if (n->has_net_elem) {
		xml_str(fp, "dev", n->n_dev);
		xml_str(fp, "speed", n->n_speed);
		xml_str(fp, "port", n->n_port);
		xml_str(fp, "latency", n->n_latency);
		xml_str(fp, "guid", n->n_guid);
		xml_str(fp, "maxconn", n->n_maxconn);
		xml_str(fp, "gdr", n->n_gdr);
		xml_str(fp, "coll", n->n_coll);
	} else {
		if (n->speed > 0)
			fprintf(fp, " speed=\"%.0f\"", n->speed * 8 / 1e6);
		if (n->port > 0)
			fprintf(fp, " port=\"%d\"", n->port);
	}
	fputs("/>\n", fp);
}

/* NICs sharing a PCI function (multi-port) share one <pci><nic> */
static void write_nic_group(struct wctx *w, unsigned first, int ind)
{
	const struct autosync_topo *t = w->t;
	const struct tnic *n = &t->nics[first];
	FILE *fp = w->fp;
	int any_net = 0;

	for (unsigned i = first;
	     i < t->nnics && !strcmp(t->nics[i].pci.busid, n->pci.busid); i++)
		if (w->keep_nic[i] &&
		    (t->nics[i].has_net_elem || t->nics[i].ofname[0] ||
		     t->nics[i].netdev[0]))
			any_net = 1;
	if (!any_net) {
		pci_open(w, &n->pci, ind, 1);
		return;
	}
	pci_open(w, &n->pci, ind, 0);
	fprintf(fp, "%*s<nic>\n", ind + 2, "");
	for (unsigned i = first;
	     i < t->nnics && !strcmp(t->nics[i].pci.busid, n->pci.busid); i++)
		if (w->keep_nic[i] &&
		    (t->nics[i].has_net_elem || t->nics[i].ofname[0] ||
		     t->nics[i].netdev[0]))
			write_net(w, &t->nics[i], ind + 4);
	fprintf(fp, "%*s</nic>\n", ind + 2, "");
	fprintf(fp, "%*s</pci>\n", ind, "");
}

static void write_children(struct wctx *w, int cpu, int parent, int ind)
{
	const struct autosync_topo *t = w->t;

	for (unsigned b = 0; b < t->nbridges; b++) {
		const struct tbridge *br = &t->bridges[b];

		if (!w->keep_bridge[b] || br->pci.parent != parent ||
		    (parent < 0 && br->pci.cpu != cpu))
			continue;
		pci_open(w, &br->pci, ind, 0);
		write_children(w, cpu, (int)b, ind + 2);
		fprintf(w->fp, "%*s</pci>\n", ind, "");
	}
	for (unsigned v = 0; v < t->ngpus; v++) {
		const struct tgpu *g = &t->gpus[v];

		if (w->keep_gpu[v] && g->pci.parent == parent &&
		    (parent >= 0 || g->pci.cpu == cpu))
			write_gpu(w, g, ind);
	}
	for (unsigned i = 0; i < t->nnics; i++) {
		const struct tnic *n = &t->nics[i];

		if (!w->keep_nic[i] || n->nic_under_cpu ||
		    n->pci.parent != parent ||
		    (parent < 0 && n->pci.cpu != cpu))
			continue;
		if (i > 0 && w->keep_nic[i - 1] &&
		    !strcmp(t->nics[i - 1].pci.busid, n->pci.busid))
			continue; /* written with its group */
		write_nic_group(w, i, ind);
	}
}

static void mark_up(struct wctx *w, int b)
{
	for (int guard = 0; b >= 0 && guard < 64; guard++) {
		w->keep_bridge[b] = 1;
		b = w->t->bridges[b].pci.parent;
	}
}

/* NCCL affinity: 32-bit hex words, most significant first, all written
 * ("0000ffff,00000000"), unlike hwloc's "0x0000ffff,,0x0" */
static char *affinity_str(hwloc_const_bitmap_t b)
{
	int last = b ? hwloc_bitmap_last(b) : -1;
	unsigned nw;
	char *s, *o;

	if (last < 0)
		return NULL;
	nw = (unsigned)last / 32 + 1;
	if (!(s = malloc((size_t)nw * 9 + 1)))
		return NULL;
	o = s;
	for (unsigned w = nw; w-- > 0;) {
		unsigned long word = 0;

		for (unsigned bit = 0; bit < 32; bit++)
			if (hwloc_bitmap_isset(b, w * 32 + bit))
				word |= 1UL << bit;
		o += sprintf(o, "%08lx%s", word, w ? "," : "");
	}
	return s;
}

int autosync_topo_write_nccl_xml(const autosync_topo_t *t, FILE *fp,
				 autosync_error_t *errp)
{
	struct wctx w = {.t = t, .fp = fp};
	int rv = -1;

	if (!t || !fp) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "topo_write_nccl_xml: invalid argument");
	}
	w.keep_gpu = calloc(t->ngpus + 1, 1);
	w.keep_nic = calloc(t->nnics + 1, 1);
	w.keep_bridge = calloc(t->nbridges + 1, 1);
	if (!w.keep_gpu || !w.keep_nic || !w.keep_bridge) {
		errno = ENOMEM;
		autosync_errprintf(errp, "topology: out of memory");
		goto out;
	}
	w.identity = t->nview == t->ngpus;
	for (unsigned v = 0; v < t->nview; v++) {
		w.identity &= t->view[v] == v;
		w.keep_gpu[t->view[v]] = 1;
		mark_up(&w, t->gpus[t->view[v]].pci.parent);
	}
	for (unsigned i = 0; i < t->nnics; i++)
		if (!t->nics[i].management) {
			w.keep_nic[i] = 1;
			if (!t->nics[i].nic_under_cpu)
				mark_up(&w, t->nics[i].pci.parent);
		}
	fprintf(fp, "<system version=\"1\">\n");
	for (unsigned ci = 0; ci < t->ncpus; ci++) {
		const struct tcpu *cpu = &t->cpus[ci];
		int used = 0;
		char *aff;

		for (unsigned v = 0; v < t->ngpus; v++)
			used |= w.keep_gpu[v] && t->gpus[v].pci.cpu == (int)ci;
		for (unsigned i = 0; i < t->nnics; i++)
			used |= w.keep_nic[i] && t->nics[i].pci.cpu == (int)ci;
		if (!used)
			continue;
		/* -1 as NCCL writes an unknown NUMA node itself: never a
		 * second "0" beside the real one */
		fprintf(fp, "  <cpu numaid=\"%d\"",
			cpu->numa >= 0 ? cpu->numa : -1);
		if ((aff = affinity_str(cpu->cpuset))) {
			xml_str(fp, "affinity", aff);
			free(aff);
		}
		xml_str(fp, "arch", cpu->arch);
		xml_str(fp, "vendor", cpu->vendor);
		xml_str(fp, "familyid", cpu->familyid);
		xml_str(fp, "modelid", cpu->modelid);
		fprintf(fp, ">\n");
		write_children(&w, (int)ci, -1, 4);
		for (unsigned i = 0; i < t->nnics; i++)
			if (w.keep_nic[i] && t->nics[i].nic_under_cpu &&
			    t->nics[i].pci.cpu == (int)ci) {
				fprintf(fp, "    <nic>\n");
				write_net(&w, &t->nics[i], 6);
				fprintf(fp, "    </nic>\n");
			}
		fprintf(fp, "  </cpu>\n");
	}
	{
		/* devices whose CPU locality is unknown */
		int orphans = 0;

		for (unsigned v = 0; v < t->ngpus; v++)
			orphans |= w.keep_gpu[v] && t->gpus[v].pci.cpu < 0;
		for (unsigned i = 0; i < t->nnics; i++)
			orphans |= w.keep_nic[i] && t->nics[i].pci.cpu < 0 &&
				   !t->nics[i].nic_under_cpu;
		if (orphans) {
			fprintf(fp, "  <cpu numaid=\"-1\">\n");
			write_children(&w, -1, -1, 4);
			fprintf(fp, "  </cpu>\n");
		}
	}
	fprintf(fp, "</system>\n");
	if (fflush(fp) != 0 || ferror(fp)) {
		errno = EIO;
		autosync_errprintf(errp, "writing NCCL XML: %s", strerror(EIO));
		goto out;
	}
	rv = 0;
out:
	free(w.keep_gpu);
	free(w.keep_nic);
	free(w.keep_bridge);
	return rv;
}
