/* topo.c - the node topology model: lifecycle, canonical order, NIC
 * classification, nearest NIC, link classes, restriction, hash, queries. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "topo_internal.h"

/* ---------------------------------------------------------------- helpers */

void *topo_grow(void *arr, unsigned n, size_t sz)
{
	/* room for element n (zeroed); arrays grow in powers of two */
	if ((n & (n - 1)) == 0) {
		size_t cap = n ? 2 * (size_t)n : 1;
		char *p = realloc(arr, cap * sz);

		if (!p)
			return NULL;
		memset(p + (size_t)n * sz, 0, (cap - n) * sz);
		return p;
	}
	return arr;
}

void topo_logf(const struct autosync_topo *t, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!t || !t->log)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	t->log(level, msg, t->log_arg);
}

int topo_busid_parse(const char *s, unsigned *dom, unsigned *bus, unsigned *dev,
		     unsigned *fn)
{
	unsigned long v[4];
	const char seps[3] = {':', ':', '.'};
	const char *p = s;
	char *end;

	if (!s)
		return -1;
	for (int i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)*p))
			return -1;
		errno = 0;
		v[i] = strtoul(p, &end, 16);
		if (errno || end - p > 8)
			return -1;
		p = end;
		if (i < 3) {
			if (*p != seps[i])
				return -1;
			p++;
		}
	}
	if (*p || v[0] > 0xffffffffUL || v[1] > 0xff || v[2] > 0x1f ||
	    v[3] > 0x7)
		return -1;
	*dom = (unsigned)v[0];
	*bus = (unsigned)v[1];
	*dev = (unsigned)v[2];
	*fn = (unsigned)v[3];
	return 0;
}

/* "0000:0C:00.0" -> "0000:0c:00.0"; "00000000:17:00.0" (nvidia-smi) ->
 * "0000:17:00.0"; unparsable ids are copied lowercased. */
void topo_busid_norm(char *dst, size_t len, const char *src)
{
	unsigned d, b, v, f;

	if (topo_busid_parse(src, &d, &b, &v, &f) == 0) {
		snprintf(dst, len, "%04x:%02x:%02x.%x", d, b, v, f);
		return;
	}
	snprintf(dst, len, "%s", src ? src : "");
	for (char *p = dst; *p; p++)
		*p = (char)tolower((unsigned char)*p);
}

static int busid_cmp(const char *a, const char *b)
{
	unsigned x[4], y[4];

	if (topo_busid_parse(a, &x[0], &x[1], &x[2], &x[3]) < 0 ||
	    topo_busid_parse(b, &y[0], &y[1], &y[2], &y[3]) < 0)
		return strcmp(a, b);
	for (int i = 0; i < 4; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

/* PCIe bandwidth in GB/s as hwloc computes it (lanes x GT/s x encoding / 8) */
double topo_pcie_gbs(double gts, unsigned width)
{
	double enc = gts <= 5.0 + 1e-9 ? 0.8 : 128.0 / 130.0;

	if (gts <= 0 || width == 0)
		return 0;
	return width * gts * enc / 8.0;
}

/* The inverse for writing NCCL XML: the widest standard (GT/s, width) with
 * that bandwidth (NCCL only uses the product). */
void topo_pcie_split(double gbs, double *gts, unsigned *width)
{
	static const double speeds[] = {2.5, 5, 8, 16, 32, 64};
	static const unsigned widths[] = {16, 8, 4, 2, 1, 32, 12};
	double best = 0.02 * gbs; /* within 2 %, the closest, widest first */

	*gts = 0;
	*width = 0;
	if (gbs <= 0)
		return;
	for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); w++)
		for (size_t s = 0; s < sizeof(speeds) / sizeof(speeds[0]);
		     s++) {
			double d =
			    fabs(topo_pcie_gbs(speeds[s], widths[w]) - gbs);

			if (d < best - 1e-9 * gbs ||
			    (*width == 0 && d <= best)) {
				best = d;
				*gts = speeds[s];
				*width = widths[w];
			}
		}
}

/* NCCL 2.28 topo.h: NVLink GB/s per link by SM */
int topo_nvlink_gbs_per_link(int sm, double *gbs)
{
	if (sm >= 100)
		*gbs = 40.1;
	else if (sm >= 90)
		*gbs = 20.6;
	else if (sm == 86 || sm == 87 || sm == 89)
		*gbs = 12.0;
	else if (sm >= 70)
		*gbs = 20.0;
	else if (sm >= 60)
		*gbs = 18.0;
	else {
		*gbs = 20.0;
		return -1;
	}
	return 0;
}

int topo_dev_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 31)
		return 0;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.:@-", *p))
			return 0;
	return 1;
}

/* names of RDMA devices (as opposed to network interfaces) */
int topo_rdma_name(const char *name)
{
	static const char *const pfx[] = {
	    "mlx4_", "mlx5_",  "irdma",	 "i40iw",      "bnxt_re", "efa_",
	    "hfi1_", "qib",    "qedr",	 "erdma",      "rxe",	  "siw",
	    "ionic", "cxgb4_", "ocrdma", "vmw_pvrdma", "hns_",	  "mana_",
	};

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return 1;
	return 0;
}

/* CPU sets are parsed here, strictly: hwloc's own parsers assert (abort)
 * on some malformed input such as "0x,,ff". */
#define MAX_CPU (1 << 20)

/* A mask of comma-separated 32-bit hex words, most significant first, each
 * with an optional 0x ("0000ffff,ffff0000", "0xff,0x0"), or one long hex
 * number ("0xffffffffff"). */
int topo_parse_mask(const char *s, hwloc_bitmap_t b)
{
	size_t nw = 0, maxlen = 0, w;
	const char *p;

	if (!s || !*s)
		return -1;
	/* pass 1: validate, count the words */
	for (p = s;;) {
		const char *d;

		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		for (d = p; isxdigit((unsigned char)*p); p++)
			;
		if (p == d || (*p != ',' && *p != '\0'))
			return -1;
		nw++;
		if ((size_t)(p - d) > maxlen)
			maxlen = (size_t)(p - d);
		if (!*p)
			break;
		p++;
	}
	if ((nw > 1 && maxlen > 8) || nw * 32 > MAX_CPU ||
	    (nw == 1 && maxlen * 4 > MAX_CPU))
		return -1;
	/* pass 2: word w (0 = most significant) starts at bit (nw-1-w)*32;
	 * a single long number counts from its last digit */
	hwloc_bitmap_zero(b);
	for (p = s, w = 0; w < nw; w++) {
		const char *d, *e;
		unsigned bit;

		if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
			p += 2;
		for (d = p; isxdigit((unsigned char)*p); p++)
			;
		e = p;
		bit = (unsigned)(nw - 1 - w) * 32;
		while (e-- > d) {
			unsigned v =
			    isdigit((unsigned char)*e)
				? (unsigned)(*e - '0')
				: (unsigned)(tolower((unsigned char)*e) - 'a' +
					     10);

			for (unsigned j = 0; j < 4; j++)
				if (v & (1u << j))
					hwloc_bitmap_set(b, bit + j);
			bit += 4;
		}
		p++; /* the comma (or the final NUL, then the loop ends) */
	}
	return 0;
}

/* A CPU list "0-3,8,10-11" (no open ranges). */
int topo_parse_list(const char *s, hwloc_bitmap_t b)
{
	const char *p = s;

	if (!s || !*s)
		return -1;
	hwloc_bitmap_zero(b);
	for (;;) {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -1;
		lo = strtoul(p, &end, 10);
		p = end;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > hi || hi >= MAX_CPU)
			return -1;
		hwloc_bitmap_set_range(b, (unsigned)lo, (int)hi);
		if (!*p)
			return 0;
		if (*p != ',')
			return -1;
		p++;
	}
}

/* -------------------------------------------------------------- lifecycle */

struct autosync_topo *topo_alloc(enum topo_source src, const char *path)
{
	struct autosync_topo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->source = src;
	snprintf(t->path, sizeof(t->path), "%s", path ? path : "");
	for (int k = 0; k < AUTOSYNC_LINK_NCLASSES; k++)
		(void)autosync_link_class_default(k, &t->link_bw[k],
						  &t->link_lat[k]);
	return t;
}

static void free_pub(struct autosync_topo *t)
{
	if (t->pub_cpusets)
		for (unsigned i = 0; i < t->npub; i++)
			free(t->pub_cpusets[i]);
	free(t->pub_cpusets);
	free(t->pub_gpus);
	free(t->pub_nics);
	t->pub_cpusets = NULL;
	t->pub_gpus = NULL;
	t->pub_nics = NULL;
	t->npub = 0;
}

void autosync_topo_destroy(autosync_topo_t *t)
{
	int saved = errno;

	if (!t)
		return;
	free_pub(t);
	for (unsigned i = 0; i < t->ncpus; i++)
		hwloc_bitmap_free(t->cpus[i].cpuset);
	for (unsigned i = 0; i < t->nbridges; i++)
		hwloc_bitmap_free(t->bridges[i].pci.cpuset);
	for (unsigned i = 0; i < t->ngpus; i++) {
		hwloc_bitmap_free(t->gpus[i].pci.cpuset);
		free(t->gpus[i].nvl);
	}
	for (unsigned i = 0; i < t->nnics; i++)
		hwloc_bitmap_free(t->nics[i].pci.cpuset);
	free(t->cpus);
	free(t->bridges);
	free(t->gpus);
	free(t->nics);
	free(t->nvbw);
	free(t->view);
	hwloc_bitmap_free(t->machine_cpuset);
	hwloc_bitmap_free(t->allowed);
	free(t);
	errno = saved;
}

void autosync_topo_set_log(autosync_topo_t *t, autosync_log_f fn, void *arg)
{
	if (!t)
		return;
	t->log = fn;
	t->log_arg = arg;
}

/* ----------------------------------------------------------- model facts */

static int pci_numa(const struct autosync_topo *t, const struct tpci *p)
{
	return p->cpu >= 0 ? t->cpus[p->cpu].numa : -1;
}

static int pci_package(const struct autosync_topo *t, const struct tpci *p)
{
	return p->cpu >= 0 ? t->cpus[p->cpu].package : -1;
}

/* socket identity: the package, else (NCCL XML: no packages) the CPU node */
static long pci_socket(const struct autosync_topo *t, const struct tpci *p)
{
	if (p->cpu < 0)
		return -1;
	if (t->cpus[p->cpu].package >= 0)
		return t->cpus[p->cpu].package;
	return 1000000L + p->cpu;
}

static int top_bridge(const struct autosync_topo *t, const struct tpci *p)
{
	int b = p->parent, guard = 0;

	while (b >= 0 && t->bridges[b].pci.parent >= 0 && guard++ < 64)
		b = t->bridges[b].pci.parent;
	return b;
}

/* the topmost bridge that is not a root port: the PCIe switch */
static const char *switch_busid(const struct autosync_topo *t,
				const struct tpci *p)
{
	const char *sw = "";
	int b = p->parent, guard = 0;

	while (b >= 0 && guard++ < 64) {
		if (!t->bridges[b].root_port)
			sw = t->bridges[b].pci.busid;
		b = t->bridges[b].pci.parent;
	}
	return sw;
}

static int same_switch(const struct autosync_topo *t, const struct tpci *a,
		       const struct tpci *b)
{
	int ta = top_bridge(t, a);

	return ta >= 0 && ta == top_bridge(t, b);
}

static int nic_tier(const struct autosync_topo *t, const struct tpci *g,
		    const struct tpci *n)
{
	if (same_switch(t, g, n))
		return AUTOSYNC_NIC_TIER_PCIE_SWITCH;
	if (pci_numa(t, g) >= 0 && pci_numa(t, g) == pci_numa(t, n))
		return AUTOSYNC_NIC_TIER_NUMA;
	if (pci_package(t, g) >= 0 && pci_package(t, g) == pci_package(t, n))
		return AUTOSYNC_NIC_TIER_PACKAGE;
	return AUTOSYNC_NIC_TIER_SYSTEM;
}

/* Link class of GPUs a, b (indices in t->gpus). */
static int pair_class(const struct autosync_topo *t, unsigned a, unsigned b,
		      double *nvbw)
{
	const struct tgpu *x = &t->gpus[a], *y = &t->gpus[b];
	double nv = 0;
	long sa, sb;

	if (t->nvbw)
		nv = fmax(t->nvbw[a * t->ngpus + b], t->nvbw[b * t->ngpus + a]);
	if (nv <= 0 && x->nvswitch_bw > 0 && y->nvswitch_bw > 0)
		nv = fmin(x->nvswitch_bw, y->nvswitch_bw);
	*nvbw = nv;
	if (a == b || nv > 0)
		return AUTOSYNC_LINK_NVLINK;
	if (same_switch(t, &x->pci, &y->pci))
		return AUTOSYNC_LINK_PCIE_SWITCH;
	sa = pci_socket(t, &x->pci);
	sb = pci_socket(t, &y->pci);
	if (sa >= 0 && sa == sb)
		return AUTOSYNC_LINK_HOST_BRIDGE;
	return AUTOSYNC_LINK_CROSS_SOCKET;
}

/* -------------------------------------------------------- canonical order */

static int cmp_gpu(const void *a, const void *b)
{
	return busid_cmp(((const struct tgpu *)a)->pci.busid,
			 ((const struct tgpu *)b)->pci.busid);
}

static int cmp_nic(const void *a, const void *b)
{
	const struct tnic *x = a, *y = b;
	int c = busid_cmp(x->pci.busid, y->pci.busid);

	if (c)
		return c;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return strcmp(x->ofname, y->ofname);
}

static int find_gpu(const struct autosync_topo *t, const char *busid)
{
	for (unsigned i = 0; i < t->ngpus; i++)
		if (!busid_cmp(t->gpus[i].pci.busid, busid))
			return (int)i;
	return -1;
}

static void classify_nics(struct autosync_topo *t)
{
	int have_fast = 0, nfabric = 0;

	for (unsigned i = 0; i < t->nnics; i++) {
		struct tnic *n = &t->nics[i];
		unsigned c = n->pci.class_id;

		if (!n->ofname[0] && topo_rdma_name(n->netdev)) {
			/* an NCCL <net name=mlx5_0> read into netdev */
			memcpy(n->ofname, n->netdev, sizeof(n->ofname));
			n->netdev[0] = '\0';
		}
		if (c == 0x0207 || c == 0x0c06 || c == 0x0280 || n->ofname[0])
			have_fast = 1;
	}
	for (unsigned i = 0; i < t->nnics; i++) {
		struct tnic *n = &t->nics[i];
		unsigned c = n->pci.class_id;
		int mgmt = 0;

		if ((c == 0x0200 || c == 0) && !n->ofname[0]) {
			/* plain Ethernet: management when it is slow (known
			 * speed below 10 Gbit/s, or a PCIe link that cannot
			 * carry 25 Gbit/s), or when an RDMA fabric exists
			 * beside it and the NIC is not known to be at least 25
			 * Gbit/s */
			if (n->speed > 0 && n->speed < 10e9 / 8)
				mgmt = 1;
			else if (n->pci.gbs > 0 && n->pci.gbs < 4.0)
				mgmt = 1;
			else if (have_fast && n->speed < 25e9 / 8)
				mgmt = 1;
		}
		n->management = mgmt;
		nfabric += !mgmt;
	}
	/* a node with only slow NICs still talks through one of them */
	if (nfabric == 0 && t->nnics > 0) {
		unsigned best = 0;

		for (unsigned i = 1; i < t->nnics; i++)
			if (t->nics[i].speed > t->nics[best].speed)
				best = i;
		t->nics[best].management = 0;
	}
}

/* nearest fabric NIC of every GPU of the node (stable whatever the view) */
static void nearest_nics(const struct autosync_topo *t, int *nearest, int *tier)
{
	unsigned *use = calloc(t->nnics ? t->nnics : 1, sizeof(*use));

	for (unsigned g = 0; g < t->ngpus; g++) {
		int best = -1, btier = AUTOSYNC_NIC_TIER_NONE;

		for (unsigned i = 0; i < t->nnics; i++) {
			const struct tnic *n = &t->nics[i], *b;
			int ti;

			if (n->management)
				continue;
			ti = nic_tier(t, &t->gpus[g].pci, &n->pci);
			if (best < 0 || ti < btier) {
				best = (int)i;
				btier = ti;
				continue;
			}
			if (ti > btier)
				continue;
			b = &t->nics[best];
			/* same tier: active port, faster, less shared, bus
			 * order */
			if ((n->port_state == 4) != (b->port_state == 4)) {
				if (n->port_state == 4)
					best = (int)i;
				continue;
			}
			if (n->speed != b->speed) {
				if (n->speed > b->speed)
					best = (int)i;
				continue;
			}
			if (use && use[i] < use[best])
				best = (int)i;
		}
		nearest[g] = best;
		tier[g] = btier;
		if (best >= 0 && use)
			use[best]++;
	}
	free(use);
}

static int build_nvbw(struct autosync_topo *t, autosync_error_t *errp)
{
	free(t->nvbw);
	t->nvbw = NULL;
	if (t->ngpus == 0)
		return 0;
	if (!(t->nvbw = calloc((size_t)t->ngpus * t->ngpus, sizeof(double)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "topology: out of memory");
	}
	for (unsigned g = 0; g < t->ngpus; g++) {
		struct tgpu *x = &t->gpus[g];

		x->nvswitch_bw = 0;
		x->cpu_nvlink_bw = 0;
		for (unsigned l = 0; l < x->nnvl; l++) {
			const struct tnvlink *L = &x->nvl[l];
			unsigned cls = L->tclass >> 8;
			int peer;

			if (cls == 0x0680 && (L->tclass & 0xff) == 0x01)
				x->cpu_nvlink_bw += L->bw;
			else if (cls == 0x0680)
				x->nvswitch_bw += L->bw;
			else if ((cls >> 8) == 0x03 &&
				 (peer = find_gpu(t, L->target)) >= 0 &&
				 (unsigned)peer != g)
				t->nvbw[g * t->ngpus + (unsigned)peer] += L->bw;
			else if (!L->target[0])
				x->cpu_nvlink_bw += L->bw;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ the view */

static void fnv(uint64_t *h, const char *s)
{
	for (; *s; s++) {
		*h ^= (unsigned char)*s;
		*h *= 0x100000001b3ULL;
	}
	*h ^= 0xff; /* field separator */
	*h *= 0x100000001b3ULL;
}

static void fnvf(uint64_t *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fnvf(uint64_t *h, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fnv(h, buf);
}

static char *bitmap_list(hwloc_const_bitmap_t b)
{
	char *s = NULL;

	if (!b || hwloc_bitmap_list_asprintf(&s, b) < 0)
		return strdup("");
	return s;
}

/* rebuild, phase 1: one NIC as the public API shows it */
static void pub_nic(const struct autosync_topo *t, unsigned i)
{
	const struct tnic *n = &t->nics[i];
	autosync_topo_nic_t *p = &t->pub_nics[i];
	unsigned c = n->pci.class_id;

	memcpy(p->busid, n->pci.busid, sizeof(p->busid));
	p->vendor_id = n->pci.vendor;
	p->device_id = n->pci.device;
	p->class_id = c;
	p->kind = (c == 0x0207 || c == 0x0c06) ? AUTOSYNC_NIC_INFINIBAND
		  : c == 0x0200		       ? AUTOSYNC_NIC_ETHERNET
					       : AUTOSYNC_NIC_OTHER;
	memcpy(p->name, n->ofname, sizeof(p->name));
	memcpy(p->netdev, n->netdev, sizeof(p->netdev));
	p->port = n->port;
	p->port_state = n->port_state;
	p->speed = n->speed;
	p->pcie_bw = n->pci.gbs * 1e9;
	p->numa = pci_numa(t, &n->pci);
	p->package = pci_package(t, &n->pci);
	snprintf(p->pcie_switch, sizeof(p->pcie_switch), "%s",
		 switch_busid(t, &n->pci));
	p->management = n->management;
	p->rdma = n->ofname[0] != '\0';
}

/* rebuild, phase 2: the v-th GPU of the view, its local CPUs cut to the
 * job's; -1 (ENOMEM) when its CPU list cannot be made */
static int pub_gpu(struct autosync_topo *t, unsigned v, const int *nearest,
		   const int *tier)
{
	unsigned g = t->view[v];
	const struct tgpu *x = &t->gpus[g];
	autosync_topo_gpu_t *p = &t->pub_gpus[v];
	double nv = 0;
	hwloc_bitmap_t cs = NULL;

	memcpy(p->busid, x->pci.busid, sizeof(p->busid));
	p->vendor_id = x->pci.vendor;
	p->device_id = x->pci.device;
	p->class_id = x->pci.class_id;
	memcpy(p->model, x->model, sizeof(p->model));
	memcpy(p->uuid, x->uuid, sizeof(p->uuid));
	p->sm = x->sm > 0 ? x->sm : 0;
	p->pcie_bw = x->pci.gbs * 1e9;
	p->numa = pci_numa(t, &x->pci);
	p->package = pci_package(t, &x->pci);
	snprintf(p->pcie_switch, sizeof(p->pcie_switch), "%s",
		 switch_busid(t, &x->pci));
	p->nearest_nic = nearest[g];
	p->nic_tier = tier[g];
	for (unsigned o = 0; o < t->ngpus; o++)
		if (o != g && t->nvbw)
			nv += t->nvbw[g * t->ngpus + o];
	p->nvlink_bw = nv + x->nvswitch_bw;
	if (x->pci.cpuset) {
		if (!(cs = hwloc_bitmap_dup(x->pci.cpuset)))
			return -1;
		if (t->allowed)
			hwloc_bitmap_and(cs, cs, t->allowed);
	}
	t->pub_cpusets[v] = bitmap_list(cs);
	hwloc_bitmap_free(cs);
	if (!t->pub_cpusets[v])
		return -1;
	p->cpuset = t->pub_cpusets[v];
	return 0;
}

/* rebuild, phase 3: the job's CPU set as a list */
static void job_cpuset(struct autosync_topo *t)
{
	char *s;

	t->cpuset_str[0] = '\0';
	if (!t->allowed && !t->machine_cpuset)
		return;
	s = bitmap_list(t->allowed ? t->allowed : t->machine_cpuset);
	snprintf(t->cpuset_str, sizeof(t->cpuset_str), "%s", s ? s : "");
	free(s);
}

/* rebuild, phase 4: advice for the caller's log - the job's GPUs vs its
 * CPUs and NICs */
static void log_advice(const struct autosync_topo *t)
{
	for (unsigned v = 0; v < t->nview && t->log; v++) {
		const autosync_topo_gpu_t *p = &t->pub_gpus[v];

		if (t->allowed && t->gpus[t->view[v]].pci.cpuset &&
		    !p->cpuset[0])
			topo_logf(t, AUTOSYNC_LOG_WARNING,
				  "GPU %u (%s): none of the job's CPUs (%s) is "
				  "local to it",
				  v, p->busid, t->cpuset_str);
		if (p->nic_tier == AUTOSYNC_NIC_TIER_NONE && t->nnics > 0)
			topo_logf(t, AUTOSYNC_LOG_INFO,
				  "GPU %u (%s): no fabric NIC", v, p->busid);
		else if (p->nic_tier == AUTOSYNC_NIC_TIER_SYSTEM)
			topo_logf(t, AUTOSYNC_LOG_INFO,
				  "GPU %u (%s): nearest NIC is across sockets",
				  v, p->busid);
	}
}

/* rebuild, phase 5: the hash - hardware facts of the view only, in
 * canonical order */
static void view_hash(struct autosync_topo *t)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	fnvf(&h, "autosync-topo-1 gpus=%u nics=%u", t->nview, t->nnics);
	for (unsigned v = 0; v < t->nview; v++) {
		const autosync_topo_gpu_t *p = &t->pub_gpus[v];

		fnvf(&h,
		     "gpu %s %04x:%04x %04x sm=%d numa=%d pkg=%d sw=%s nic=%d "
		     "tier=%d nvl=%.0f",
		     p->busid, p->vendor_id, p->device_id, p->class_id, p->sm,
		     p->numa, p->package, p->pcie_switch, p->nearest_nic,
		     p->nic_tier, p->nvlink_bw);
	}
	for (unsigned i = 0; i < t->nnics; i++) {
		const autosync_topo_nic_t *p = &t->pub_nics[i];

		fnvf(&h,
		     "nic %s %04x:%04x %04x %s %s port=%d numa=%d pkg=%d sw=%s "
		     "mgmt=%d",
		     p->busid, p->vendor_id, p->device_id, p->class_id, p->name,
		     p->netdev, p->port, p->numa, p->package, p->pcie_switch,
		     p->management);
	}
	for (unsigned i = 0; i < t->nview; i++)
		for (unsigned j = i + 1; j < t->nview; j++) {
			double nv;

			fnvf(&h, "link %u %u %d", i, j,
			     pair_class(t, t->view[i], t->view[j], &nv));
		}
	snprintf(t->hash, sizeof(t->hash), "%016" PRIx64, h);
}

/* The public view (GPUs of the view, NICs, CPU set, hash) from the node's
 * facts, after any change to the view, the CPU set or the NICs. */
static int rebuild(struct autosync_topo *t, autosync_error_t *errp)
{
	int *nearest = NULL, *tier = NULL;
	int rv = -1;

	free_pub(t);
	t->pub_gpus = calloc(t->nview ? t->nview : 1, sizeof(*t->pub_gpus));
	t->pub_cpusets = calloc(t->nview ? t->nview : 1, sizeof(char *));
	t->pub_nics = calloc(t->nnics ? t->nnics : 1, sizeof(*t->pub_nics));
	nearest = calloc(t->ngpus ? t->ngpus : 1, sizeof(int));
	tier = calloc(t->ngpus ? t->ngpus : 1, sizeof(int));
	if (!t->pub_gpus || !t->pub_cpusets || !t->pub_nics || !nearest ||
	    !tier)
		goto nomem;
	t->npub = t->nview;
	nearest_nics(t, nearest, tier);
	for (unsigned i = 0; i < t->nnics; i++)
		pub_nic(t, i);
	for (unsigned v = 0; v < t->nview; v++)
		if (pub_gpu(t, v, nearest, tier) < 0)
			goto nomem;
	job_cpuset(t);
	log_advice(t);
	view_hash(t);
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "topology: out of memory");
out:
	free(nearest);
	free(tier);
	return rv;
}

/* after NVLinks were added to a finished topology */
int topo_refresh(struct autosync_topo *t, autosync_error_t *errp)
{
	if (build_nvbw(t, errp) < 0)
		return -1;
	return rebuild(t, errp);
}

int topo_finish(struct autosync_topo *t, autosync_error_t *errp)
{
	if (t->ngpus > TOPO_MAX_GPUS || t->nnics > TOPO_MAX_NICS) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "%s: %u GPUs and %u NICs: more than "
					  "one node can hold (%d, %d)",
					  t->path, t->ngpus, t->nnics,
					  TOPO_MAX_GPUS, TOPO_MAX_NICS);
	}
	if (t->ngpus > 1)
		qsort(t->gpus, t->ngpus, sizeof(*t->gpus), cmp_gpu);
	if (t->nnics > 1)
		qsort(t->nics, t->nnics, sizeof(*t->nics), cmp_nic);
	for (unsigned i = 1; i < t->ngpus; i++)
		if (!busid_cmp(t->gpus[i - 1].pci.busid,
			       t->gpus[i].pci.busid)) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "%s: GPU %s listed twice", t->path,
			    t->gpus[i].pci.busid);
		}
	classify_nics(t);
	if (build_nvbw(t, errp) < 0)
		return -1;
	free(t->view);
	t->view = calloc(t->ngpus ? t->ngpus : 1, sizeof(*t->view));
	if (!t->view) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "topology: out of memory");
	}
	for (unsigned i = 0; i < t->ngpus; i++)
		t->view[i] = i;
	t->nview = t->ngpus;
	return rebuild(t, errp);
}

static int listed(const char *const *names, size_t n, const struct tnic *nic)
{
	for (size_t j = 0; j < n; j++)
		if (names[j] && names[j][0] &&
		    (!strcmp(names[j], nic->ofname) ||
		     !strcmp(names[j], nic->netdev)))
			return 1;
	return 0;
}

int autosync_topo_set_fabric_nics(autosync_topo_t *t, const char *const *names,
				  size_t n, autosync_error_t *errp)
{
	unsigned found = 0;
	char list[200];
	size_t o = 0;

	if (!t || (n && !names)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "topo_set_fabric_nics: invalid "
						"argument");
	}
	if (n == 0)
		return 0;
	for (unsigned i = 0; i < t->nnics; i++)
		found += (unsigned)listed(names, n, &t->nics[i]);
	if (!found) {
		list[0] = '\0';
		for (size_t j = 0; j < n && o < sizeof(list); j++)
			o += (size_t)snprintf(list + o, sizeof(list) - o,
					      "%s%s", j ? ", " : "",
					      names[j] ? names[j] : "");
		errno = ENOENT;
		return autosync_errprintf(errp,
					  "%s: none of the fabric NICs "
					  "(%s) is on this node",
					  t->path, list);
	}
	for (unsigned i = 0; i < t->nnics; i++)
		t->nics[i].management = !listed(names, n, &t->nics[i]);
	return rebuild(t, errp);
}

/* ------------------------------------------------------------- restriction */

static int parse_cpuset(const char *s, hwloc_bitmap_t *out,
			autosync_error_t *errp)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int r;

	if (!b) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "topology: out of memory");
	}
	if (!strncmp(s, "0x", 2) || !strncmp(s, "0X", 2))
		r = topo_parse_mask(s, b);
	else
		r = topo_parse_list(s, b);
	if (r < 0 || hwloc_bitmap_iszero(b)) {
		hwloc_bitmap_free(b);
		errno = EINVAL;
		return autosync_errprintf(
		    errp,
		    "bad CPU set '%.64s': want a list such "
		    "as 0-3,8 or a mask 0xff",
		    s);
	}
	*out = b;
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* Slurm index list "0,2-3" into idx[] (ascending, unique). */
static int parse_slurm_list(const struct autosync_topo *t, const char *what,
			    const char *s, unsigned *idx, unsigned *n,
			    autosync_error_t *errp)
{
	char *buf = strdup(s), *tok, *save = NULL;
	unsigned char *seen = calloc(t->ngpus ? t->ngpus : 1, 1);
	int rv = -1;

	*n = 0;
	if (!seen || !buf) {
		errno = ENOMEM;
		autosync_errprintf(errp, "topology: out of memory");
		goto out;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		unsigned long lo, hi;

		if (dash)
			*dash = '\0';
		if (!all_digits(tok) || (dash && !all_digits(dash + 1))) {
			errno = EINVAL;
			autosync_errprintf(errp,
					   "%s='%.64s': want GPU indices such "
					   "as 0,1 or 0-3",
					   what, s);
			goto out;
		}
		lo = strtoul(tok, NULL, 10);
		hi = dash ? strtoul(dash + 1, NULL, 10) : lo;
		if (hi < lo) {
			errno = EINVAL;
			autosync_errprintf(
			    errp, "%s=%.64s: range %lu-%lu is reversed", what,
			    s, lo, hi);
			goto out;
		}
		if (hi >= t->ngpus) {
			errno = EINVAL;
			autosync_errprintf(
			    errp,
			    "%s=%.64s: GPU %lu does not exist (this node has "
			    "%u GPU%s)",
			    what, s, hi, t->ngpus, t->ngpus == 1 ? "" : "s");
			goto out;
		}
		for (unsigned long i = lo; i <= hi; i++)
			seen[i] = 1;
	}
	for (unsigned i = 0; i < t->ngpus; i++)
		if (seen[i])
			idx[(*n)++] = i;
	rv = 0;
out:
	free(buf);
	free(seen);
	return rv;
}

/* What autosync_topo_restrict_env() works on, phase by phase. */
struct restriction {
	autosync_topo_t *t;
	const char *cvd;	/* CUDA_VISIBLE_DEVICES, NULL = unset */
	const char *slurm;	/* the Slurm GPU list, NULL = unset */
	const char *slurm_name; /* which variable it came from */
	unsigned *base, nbase;	/* what Slurm gave, topology indices */
	unsigned *view, nview;	/* what the process sees, in its order */
	int absolute;		/* CVD indices are node indices */
};

/* phase 1: the GPUs Slurm gave the step (every GPU without a list) */
static int slurm_base(struct restriction *r, autosync_error_t *errp)
{
	if (r->slurm && *r->slurm)
		return parse_slurm_list(r->t, r->slurm_name, r->slurm, r->base,
					&r->nbase, errp);
	if (r->slurm) {
		r->nbase = 0; /* set but empty: no GPU */
		return 0;
	}
	for (unsigned i = 0; i < r->t->ngpus; i++)
		r->base[i] = i;
	r->nbase = r->t->ngpus;
	return 0;
}

/* With a Slurm list, CUDA_VISIBLE_DEVICES equal to it holds node indices
 * (devices not constrained by cgroups); otherwise indices are relative to
 * the list. */
static int cvd_is_absolute(const struct restriction *r)
{
	unsigned tmp[TOPO_MAX_GPUS], ntmp = 0;
	autosync_error_t ignore;

	return r->slurm && r->t->ngpus <= TOPO_MAX_GPUS &&
	       parse_slurm_list(r->t, "", r->cvd, tmp, &ntmp, &ignore) == 0 &&
	       ntmp == r->nbase &&
	       !memcmp(tmp, r->base, r->nbase * sizeof(*tmp));
}

/* an index into what the process may see */
static int cvd_index(const struct restriction *r, const char *s,
		     autosync_error_t *errp)
{
	unsigned long k = strtoul(s, NULL, 10);
	int relative = r->slurm && !r->absolute;
	unsigned n = relative ? r->nbase : r->t->ngpus;

	if (k < n)
		return relative ? (int)r->base[k] : (int)k;
	errno = EINVAL;
	return autosync_errprintf(errp,
				  "CUDA_VISIBLE_DEVICES=%.64s: GPU %s "
				  "does not exist (%u GPU%s visible)",
				  r->cvd, s, n, n == 1 ? "" : "s");
}

/* a UUID prefix, as CUDA takes it: it must name exactly one GPU */
static int cvd_uuid(const struct restriction *r, const char *s,
		    autosync_error_t *errp)
{
	size_t l = strlen(s);
	int nmatch = 0, g = -1;

	for (unsigned i = 0; i < r->t->ngpus; i++)
		if (r->t->gpus[i].uuid[0] &&
		    !strncasecmp(r->t->gpus[i].uuid, s, l)) {
			g = (int)i;
			nmatch++;
		}
	if (nmatch == 1)
		return g;
	errno = EINVAL;
	return autosync_errprintf(errp,
				  "CUDA_VISIBLE_DEVICES=%.64s: %s GPU "
				  "with UUID '%s'%s",
				  r->cvd, nmatch ? "more than one" : "no", s,
				  nmatch ? ""
					 : " (UUIDs known only with NVML "
					   "data or the NVIDIA driver)");
}

/* phase 2a: one entry of CUDA_VISIBLE_DEVICES to a topology index */
static int cvd_entry(const struct restriction *r, const char *s,
		     autosync_error_t *errp)
{
	char norm[BUSID_LEN];
	int g;

	if (all_digits(s))
		return cvd_index(r, s, errp);
	if (!strncmp(s, "MIG-", 4)) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "CUDA_VISIBLE_DEVICES=%.64s: "
					  "MIG instance '%s' not supported",
					  r->cvd, s);
	}
	if (!strncmp(s, "GPU-", 4))
		return cvd_uuid(r, s, errp);
	topo_busid_norm(norm, sizeof(norm), s);
	if ((g = find_gpu(r->t, norm)) >= 0)
		return g;
	errno = EINVAL;
	return autosync_errprintf(errp,
				  "CUDA_VISIBLE_DEVICES=%.64s: no GPU "
				  "'%s' on this node",
				  r->cvd, s);
}

/* phase 2b: a GPU the process sees must be Slurm's and seen once */
static int cvd_add(struct restriction *r, const char *s, unsigned g,
		   autosync_error_t *errp)
{
	int in = !r->slurm;

	for (unsigned i = 0; i < r->nbase; i++)
		in |= r->base[i] == g;
	if (!in) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "CUDA_VISIBLE_DEVICES=%.64s: "
					  "GPU '%s' is not in %s=%.64s",
					  r->cvd, s, r->slurm_name, r->slurm);
	}
	for (unsigned i = 0; i < r->nview; i++)
		if (r->view[i] == g) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp,
			    "CUDA_VISIBLE_DEVICES=%.64s: GPU '%s' "
			    "listed twice",
			    r->cvd, s);
		}
	if (r->nview < r->t->ngpus)
		r->view[r->nview++] = g;
	return 0;
}

/* phase 2: what the process sees (Slurm's GPUs without the variable) */
static int cvd_view(struct restriction *r, autosync_error_t *errp)
{
	char *buf, *tok, *save = NULL;
	int rv = 0;

	if (!r->cvd) {
		memcpy(r->view, r->base, r->nbase * sizeof(*r->view));
		r->nview = r->nbase;
		return 0;
	}
	if (!*r->cvd || !strcmp(r->cvd, "NoDevFiles"))
		return 0;
	if (!(buf = strdup(r->cvd))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "topology: out of memory");
	}
	r->absolute = cvd_is_absolute(r);
	for (tok = strtok_r(buf, ",", &save); tok && rv == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		int g;
		while (*tok == ' ')
			tok++;
		for (char *e = tok + strlen(tok); e > tok && e[-1] == ' ';)
			*--e = '\0';
		if ((g = cvd_entry(r, tok, errp)) < 0 ||
		    cvd_add(r, tok, (unsigned)g, errp) < 0)
			rv = -1;
	}
	free(buf);
	return rv;
}

int autosync_topo_restrict_env(autosync_topo_t *t, const char *cvd,
			       const char *step_gpus, const char *job_gpus,
			       const char *cpuset, autosync_error_t *errp)
{
	struct restriction r = {
	    .t = t,
	    .cvd = cvd,
	    .slurm = step_gpus ? step_gpus : job_gpus,
	    .slurm_name = step_gpus ? "SLURM_STEP_GPUS" : "SLURM_JOB_GPUS",
	};
	hwloc_bitmap_t allowed = NULL;
	int rv = -1;

	if (!t) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "topo_restrict: invalid argument");
	}
	r.base = calloc(t->ngpus + 1, sizeof(*r.base));
	r.view = calloc(t->ngpus + 1, sizeof(*r.view));
	if (!r.base || !r.view) {
		errno = ENOMEM;
		autosync_errprintf(errp, "topology: out of memory");
		goto out;
	}
	if ((cpuset && parse_cpuset(cpuset, &allowed, errp) < 0) ||
	    slurm_base(&r, errp) < 0 || cvd_view(&r, errp) < 0)
		goto out;
	/* phase 3: the new view replaces the old one */
	free(t->view);
	t->view = r.view;
	t->nview = r.nview;
	r.view = NULL;
	hwloc_bitmap_free(t->allowed);
	t->allowed = allowed;
	allowed = NULL;
	rv = rebuild(t, errp);
out:
	free(r.base);
	free(r.view);
	hwloc_bitmap_free(allowed);
	return rv;
}

/*
 * A container's GPUs (Kubernetes' device plugin, the NVIDIA container
 * toolkit): NVIDIA_VISIBLE_DEVICES lists the node's GPUs the container got
 * (indices or UUIDs) while hwloc, reading sysfs, sees every GPU of the node;
 * CUDA_VISIBLE_DEVICES, when set too, counts within that list. Into *out
 * goes the one list of node GPUs the process sees (NULL: no container
 * list: unset, empty, "void" and "all" leave the view to the other
 * variables). 0, or -1 with errp.
 */
#define CONTAINER_MAX_GPUS 256

/* the node's GPU an entry names (an index, a UUID prefix naming one GPU,
 * a bus id), or -1 */
static int node_gpu(const struct autosync_topo *t, const char *s)
{
	char norm[BUSID_LEN];
	int g = -1, nmatch = 0;

	if (all_digits(s)) {
		unsigned long k = strtoul(s, NULL, 10);
		return k < t->ngpus ? (int)k : -1;
	}
	if (!strncmp(s, "GPU-", 4)) {
		for (unsigned i = 0; i < t->ngpus; i++)
			if (t->gpus[i].uuid[0] &&
			    !strncasecmp(t->gpus[i].uuid, s, strlen(s))) {
				g = (int)i;
				nmatch++;
			}
		return nmatch == 1 ? g : -1;
	}
	topo_busid_norm(norm, sizeof(norm), s);
	return find_gpu(t, norm);
}

/* the container's GPU a CUDA_VISIBLE_DEVICES entry names, as its index in
 * v[]: an index into the container's list, or a UUID or bus id of one of
 * the node GPUs the container lists; -1 with errp otherwise */
static long container_entry(const struct autosync_topo *t, const char *tok,
			    const char *const *v, size_t n, const char *nvd,
			    autosync_error_t *errp)
{
	int g;

	char *end;
	unsigned long k = strtoul(tok, &end, 10);

	if (end != tok && !*end) {
		if (k < n)
			return (long)k;
		errno = EINVAL;
		autosync_errprintf(errp,
				   "CUDA_VISIBLE_DEVICES: GPU %lu, but "
				   "NVIDIA_VISIBLE_DEVICES=%.64s gives the "
				   "container %zu",
				   k, nvd, n);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tok, v[i]))
			return (long)i;
	if ((g = node_gpu(t, tok)) >= 0)
		for (size_t i = 0; i < n; i++)
			if (node_gpu(t, v[i]) == g)
				return (long)i;
	errno = EINVAL;
	autosync_errprintf(errp,
			   "CUDA_VISIBLE_DEVICES: '%.64s' is not one of the "
			   "container's GPUs (NVIDIA_VISIBLE_DEVICES=%.64s)",
			   tok, nvd);
	return -1;
}

static int container_gpus(const struct autosync_topo *t, const char *nvd,
			  const char *cvd, char **out, autosync_error_t *errp)
{
	char *list = NULL, *tok, *save = NULL, *copy = NULL, *cv = NULL;
	const char *v[CONTAINER_MAX_GPUS];
	unsigned char used[CONTAINER_MAX_GPUS] = {0};
	size_t n = 0, len = 0;
	int rv = -1;

	*out = NULL;
	if (!nvd || !*nvd || !strcmp(nvd, "void") || !strcmp(nvd, "all"))
		return 0;
	if (!strcmp(nvd, "none")) {
		errno = ENODEV;
		return autosync_errprintf(errp,
					  "NVIDIA_VISIBLE_DEVICES=none: the "
					  "container has no GPU");
	}
	if (!cvd) {
		if (!(*out = strdup(nvd)))
			goto oom;
		return 0;
	}
	/* each container entry at most once: the list is never longer than
	 * the container's own */
	if (!(copy = strdup(nvd)) || !(cv = strdup(cvd)) ||
	    !(list = calloc(1, strlen(nvd) + 2)))
		goto oom;
	for (tok = strtok_r(copy, ",", &save); tok && n < CONTAINER_MAX_GPUS;
	     tok = strtok_r(NULL, ",", &save))
		v[n++] = asi_trim(tok);
	save = NULL;
	for (tok = strtok_r(cv, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long i = container_entry(t, asi_trim(tok), v, n, nvd, errp);
		if (i < 0)
			goto out;
		if (used[i]) {
			errno = EINVAL;
			autosync_errprintf(
			    errp,
			    "CUDA_VISIBLE_DEVICES: the container's "
			    "GPU '%.64s' listed twice",
			    v[i]);
			goto out;
		}
		used[i] = 1;
		len +=
		    (size_t)sprintf(list + len, "%s%s", len ? "," : "", v[i]);
	}
	*out = list;
	list = NULL;
	rv = 0;
	goto out;
oom:
	errno = ENOMEM;
	autosync_errprintf(errp, "topology: out of memory");
out:
	free(copy);
	free(cv);
	free(list);
	return rv;
}

int autosync_topo_restrict_container(autosync_topo_t *t, const char *nvd,
				     const char *cvd, const char *step_gpus,
				     const char *job_gpus, const char *cpuset,
				     autosync_error_t *errp)
{
	char *view = NULL;
	int rv;

	if (!t) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "topo_restrict: invalid argument");
	}
	/* Slurm's lists, where there are any, already say which GPUs of the
	 * node are the job's */
	if (!step_gpus && !job_gpus &&
	    container_gpus(t, nvd, cvd, &view, errp) < 0)
		return -1;
	rv = autosync_topo_restrict_env(t, view ? view : cvd, step_gpus,
					job_gpus, cpuset, errp);
	free(view);
	return rv;
}

int autosync_topo_restrict(autosync_topo_t *t, const char *gpus,
			   const char *cpuset, autosync_error_t *errp)
{
	return autosync_topo_restrict_env(t, gpus, NULL, NULL, cpuset, errp);
}

/* ---------------------------------------------------------------- queries */

unsigned autosync_topo_ngpus(const autosync_topo_t *t)
{
	return t ? t->nview : 0;
}

unsigned autosync_topo_ngpus_total(const autosync_topo_t *t)
{
	return t ? t->ngpus : 0;
}

const autosync_topo_gpu_t *autosync_topo_gpu(const autosync_topo_t *t,
					     unsigned i)
{
	if (!t || i >= t->nview) {
		errno = EINVAL;
		return NULL;
	}
	return &t->pub_gpus[i];
}

unsigned autosync_topo_nnics(const autosync_topo_t *t)
{
	return t ? t->nnics : 0;
}

const autosync_topo_nic_t *autosync_topo_nic(const autosync_topo_t *t,
					     unsigned i)
{
	if (!t || i >= t->nnics) {
		errno = EINVAL;
		return NULL;
	}
	return &t->pub_nics[i];
}

int autosync_topo_link(const autosync_topo_t *t, unsigned i, unsigned j,
		       int *cls, double *bw, double *lat)
{
	double nv;
	int c;

	if (!t || i >= t->nview || j >= t->nview) {
		errno = EINVAL;
		return -1;
	}
	c = pair_class(t, t->view[i], t->view[j], &nv);
	if (cls)
		*cls = c;
	if (bw)
		*bw =
		    (c == AUTOSYNC_LINK_NVLINK && nv > 0) ? nv : t->link_bw[c];
	if (lat)
		*lat = t->link_lat[c];
	return 0;
}

int autosync_topo_set_link_class(autosync_topo_t *t, int cls, double bw,
				 double lat, autosync_error_t *errp)
{
	if (!t || cls < 0 || cls >= AUTOSYNC_LINK_NCLASSES || !isfinite(bw) ||
	    bw <= 0 || !isfinite(lat) || lat < 0) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "topo_set_link_class: invalid argument");
	}
	t->link_bw[cls] = bw;
	t->link_lat[cls] = lat;
	return 0;
}

const char *autosync_topo_hash(const autosync_topo_t *t)
{
	return t ? t->hash : "";
}

const char *autosync_topo_source(const autosync_topo_t *t)
{
	if (!t)
		return "";
	switch (t->source) {
	case SRC_LIVE:
		return "live";
	case SRC_HWLOC_XML:
		return "hwloc-xml";
	case SRC_NCCL_XML:
		return "nccl-xml";
	}
	return "";
}

const char *autosync_topo_cpuset(const autosync_topo_t *t)
{
	return t ? t->cpuset_str : "";
}

const char *autosync_nic_tier_name(int tier)
{
	static const char *const names[] = {"pcie_switch", "numa", "package",
					    "system", "none"};

	if (tier < 0 || tier > AUTOSYNC_NIC_TIER_NONE)
		return "unknown";
	return names[tier];
}

const char *autosync_nic_kind_name(int kind)
{
	static const char *const names[] = {"infiniband", "ethernet", "other"};

	if (kind < 0 || kind > AUTOSYNC_NIC_OTHER)
		return "unknown";
	return names[kind];
}

/* ----------------------------------------------------- cluster from a node */

/* What NCCL's network layer would use over this NIC: verbs where it has an
 * RDMA device (EFA goes through its own plugin: not one of ours), else
 * sockets. */
static int nic_transport(const autosync_topo_nic_t *n)
{
	if (n->vendor_id == 0x1d0f)
		return AUTOSYNC_TRANSPORT_UNKNOWN;
	if (!n->rdma)
		return AUTOSYNC_TRANSPORT_TCP;
	if (n->kind == AUTOSYNC_NIC_INFINIBAND)
		return AUTOSYNC_TRANSPORT_IB;
	if (n->kind == AUTOSYNC_NIC_ETHERNET)
		return AUTOSYNC_TRANSPORT_ROCE;
	return AUTOSYNC_TRANSPORT_UNKNOWN;
}

/* The slowest transport of the NICs in use: TCP, then RoCE, then IB;
 * unknown when one of them is unknown and none is TCP. */
static int worse_transport(int a, int b)
{
	static const int rank[AUTOSYNC_TRANSPORT_COUNT] = {
	    [AUTOSYNC_TRANSPORT_IB] = 1,
	    [AUTOSYNC_TRANSPORT_ROCE] = 2,
	    [AUTOSYNC_TRANSPORT_UNKNOWN] = 3,
	    [AUTOSYNC_TRANSPORT_TCP] = 4,
	};

	return rank[a] >= rank[b] ? a : b;
}

int autosync_cluster_from_topo(autosync_cluster_t *c, const autosync_topo_t *t,
			       unsigned nodes, autosync_error_t *errp)
{
	unsigned nfab = 0;
	double nicbw = 0;
	int worst = -1, transport = -1;
	double wbw = 0, wlat = 0;

	if (!c || !t || nodes < 1 || nodes > 65536) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "cluster_from_topo: invalid argument");
	}
	c->nodes = nodes;
	c->gpus_per_node = t->nview ? t->nview : 1;
	for (unsigned i = 0; i < t->nview; i++)
		for (unsigned j = i + 1; j < t->nview; j++) {
			int cls;
			double bw, lat;

			(void)autosync_topo_link(t, i, j, &cls, &bw, &lat);
			if (cls > worst || (cls == worst && bw < wbw)) {
				worst = cls;
				wbw = bw;
				wlat = lat;
			}
		}
	if (worst >= 0) {
		c->intra_class = worst;
		c->intra_bw = wbw;
		c->intra_lat = wlat;
	}
	/* fabric NICs the view's GPUs use (their nearest); all fabric NICs on
	 * a GPU-less node */
	for (unsigned i = 0; i < t->nnics; i++) {
		int used = t->nview == 0 && !t->nics[i].management;

		for (unsigned v = 0; v < t->nview && !used; v++)
			used = t->pub_gpus[v].nearest_nic == (int)i;
		if (!used)
			continue;
		nfab++;
		transport =
		    transport < 0
			? nic_transport(&t->pub_nics[i])
			: worse_transport(transport,
					  nic_transport(&t->pub_nics[i]));
		if (t->nics[i].speed > 0 &&
		    (nicbw == 0 || t->nics[i].speed < nicbw))
			nicbw = t->nics[i].speed;
	}
	if (nfab > 0)
		c->nics_per_node = nfab > 64 ? 64 : nfab;
	if (nicbw > 0)
		c->nic_bw = nicbw;
	/* the site's or the caller's word wins over what the NICs suggest */
	if (c->transport == AUTOSYNC_TRANSPORT_UNKNOWN && transport > 0)
		c->transport = transport;
	memcpy(c->topo_hash, t->hash, sizeof(c->topo_hash));
	return 0;
}
