/* topo_write.c - text and YAML views of a topology, and the per-local-rank
 * NCCL environment. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "topo_internal.h"

static const char *short_class(int c)
{
	static const char *const s[] = {"NVL", "SW", "HB", "SYS", "NET"};

	return c >= 0 && c < AUTOSYNC_LINK_NCLASSES ? s[c] : "?";
}

static int finish(FILE *fp, const char *what, autosync_error_t *errp)
{
	if (fflush(fp) != 0 || ferror(fp)) {
		errno = EIO;
		return autosync_errprintf(errp, "writing %s: %s", what,
					  strerror(EIO));
	}
	return 0;
}

static void gbs(char *buf, size_t len, double bps)
{
	if (bps > 0)
		snprintf(buf, len, "%.1fGB/s", bps / 1e9);
	else
		snprintf(buf, len, "unknown");
}

int autosync_topo_write_text(const autosync_topo_t *t, FILE *fp,
			     autosync_error_t *errp)
{
	if (!t || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "topo_write_text: invalid argument");
	}
	fprintf(fp, "topology: %s%s%s  hash %s\n", autosync_topo_source(t),
		t->source != SRC_LIVE ? " " : "",
		t->source != SRC_LIVE ? t->path : "", t->hash);
	fprintf(fp, "cpus: %s\n", t->cpuset_str[0] ? t->cpuset_str : "unknown");
	fprintf(fp, "\nGPUs: %u of %u\n", t->nview, t->ngpus);
	if (t->nview) {
		fprintf(
		    fp,
		    "  %-3s %-13s %-9s %-5s %-4s %-4s %-9s %-13s %-22s %s\n",
		    "#", "busid", "id", "class", "numa", "pkg", "pcie",
		    "switch", "nearest nic (tier)", "cpus / model");
		for (unsigned v = 0; v < t->nview; v++) {
			const autosync_topo_gpu_t *g = &t->pub_gpus[v];
			char pcie[24], nic[64], ids[16];

			gbs(pcie, sizeof(pcie), g->pcie_bw);
			snprintf(ids, sizeof(ids), "%04x:%04x", g->vendor_id,
				 g->device_id);
			if (g->nearest_nic >= 0) {
				const autosync_topo_nic_t *n =
				    &t->pub_nics[g->nearest_nic];

				snprintf(nic, sizeof(nic), "%s (%s)",
					 n->name[0]	? n->name
					 : n->netdev[0] ? n->netdev
							: n->busid,
					 autosync_nic_tier_name(g->nic_tier));
			} else {
				snprintf(nic, sizeof(nic), "none");
			}
			fprintf(fp,
				"  %-3u %-13s %-9s %04x  %-4d %-4d %-9s %-13s "
				"%-22s %s%s%s\n",
				v, g->busid, ids, g->class_id, g->numa,
				g->package, pcie,
				g->pcie_switch[0] ? g->pcie_switch : "-", nic,
				g->cpuset[0] ? g->cpuset : "-",
				g->model[0] ? "  " : "", g->model);
		}
	}
	fprintf(fp, "\nNICs: %u\n", t->nnics);
	if (t->nnics) {
		fprintf(fp,
			"  %-3s %-13s %-9s %-10s %-10s %-14s %-4s %-6s %-10s "
			"%-4s %-4s %-13s %s\n",
			"#", "busid", "id", "kind", "name", "netdev", "port",
			"state", "speed", "numa", "pkg", "switch", "role");
		for (unsigned i = 0; i < t->nnics; i++) {
			const autosync_topo_nic_t *n = &t->pub_nics[i];
			char sp[24], ids[16], st[16];

			gbs(sp, sizeof(sp), n->speed);
			snprintf(ids, sizeof(ids), "%04x:%04x", n->vendor_id,
				 n->device_id);
			if (n->port_state >= 0)
				snprintf(st, sizeof(st), "%d", n->port_state);
			else
				snprintf(st, sizeof(st), "-");
			fprintf(fp,
				"  %-3u %-13s %-9s %-10s %-10s %-14s %-4d %-6s "
				"%-10s %-4d %-4d %-13s %s\n",
				i, n->busid[0] ? n->busid : "-", ids,
				autosync_nic_kind_name(n->kind),
				n->name[0] ? n->name : "-",
				n->netdev[0] ? n->netdev : "-", n->port, st, sp,
				n->numa, n->package,
				n->pcie_switch[0] ? n->pcie_switch : "-",
				n->management ? "management" : "fabric");
		}
	}
	if (t->nview > 1) {
		fprintf(fp, "\nGPU links (NVL nvlink, SW same PCIe switch, HB "
			    "same host/socket, SYS across sockets):\n     ");
		for (unsigned j = 0; j < t->nview; j++)
			fprintf(fp, "%5u", j);
		fputc('\n', fp);
		for (unsigned i = 0; i < t->nview; i++) {
			fprintf(fp, "  %-3u", i);
			for (unsigned j = 0; j < t->nview; j++) {
				int c;

				if (i == j) {
					fprintf(fp, "%5s", "X");
					continue;
				}
				(void)autosync_topo_link(t, i, j, &c, NULL,
							 NULL);
				fprintf(fp, "%5s", short_class(c));
			}
			fputc('\n', fp);
		}
	}
	fprintf(fp, "\nlink classes: ");
	for (int k = 0; k < AUTOSYNC_LINK_NCLASSES; k++)
		fprintf(fp, "%s%s %.1fGB/s %.2fus", k ? ", " : "",
			autosync_link_class_name(k), t->link_bw[k] / 1e9,
			t->link_lat[k] * 1e6);
	fputc('\n', fp);
	return finish(fp, "text", errp);
}

static void yq(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(fp, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(fp, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, fp);
	}
	fputc('"', fp);
}

int autosync_topo_write_yaml(const autosync_topo_t *t, FILE *fp,
			     autosync_error_t *errp)
{
	if (!t || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "topo_write_yaml: invalid argument");
	}
	fprintf(fp, "autosync_topology: 1\nsource: %s\ninput: ",
		autosync_topo_source(t));
	yq(fp, t->source == SRC_LIVE ? "" : t->path);
	fprintf(fp, "\nhash: \"%s\"\ncpuset: ", t->hash);
	yq(fp, t->cpuset_str);
	fprintf(fp, "\ngpus_total: %u\ngpus:", t->ngpus);
	if (!t->nview)
		fprintf(fp, " []");
	fputc('\n', fp);
	for (unsigned v = 0; v < t->nview; v++) {
		const autosync_topo_gpu_t *g = &t->pub_gpus[v];

		fprintf(fp,
			"  - index: %u\n    busid: \"%s\"\n    vendor_id: "
			"0x%04x\n    device_id: 0x%04x\n"
			"    class_id: 0x%04x\n    model: ",
			v, g->busid, g->vendor_id, g->device_id, g->class_id);
		yq(fp, g->model);
		fprintf(fp, "\n    uuid: ");
		yq(fp, g->uuid);
		fprintf(fp,
			"\n    sm: %d\n    pcie_bw: %.6g\n    numa: %d\n    "
			"package: %d\n    pcie_switch: \"%s\"\n"
			"    cpuset: ",
			g->sm, g->pcie_bw, g->numa, g->package, g->pcie_switch);
		yq(fp, g->cpuset);
		fprintf(fp,
			"\n    nearest_nic: %d\n    nic_tier: %s\n    "
			"nvlink_bw: %.6g\n",
			g->nearest_nic, autosync_nic_tier_name(g->nic_tier),
			g->nvlink_bw);
	}
	fprintf(fp, "nics:%s\n", t->nnics ? "" : " []");
	for (unsigned i = 0; i < t->nnics; i++) {
		const autosync_topo_nic_t *n = &t->pub_nics[i];

		fprintf(fp,
			"  - index: %u\n    busid: \"%s\"\n    vendor_id: "
			"0x%04x\n    device_id: 0x%04x\n"
			"    class_id: 0x%04x\n    kind: %s\n    name: ",
			i, n->busid, n->vendor_id, n->device_id, n->class_id,
			autosync_nic_kind_name(n->kind));
		yq(fp, n->name);
		fprintf(fp, "\n    netdev: ");
		yq(fp, n->netdev);
		fprintf(fp,
			"\n    port: %d\n    port_state: %d\n    speed: %.6g\n "
			"   pcie_bw: %.6g\n    numa: %d\n"
			"    package: %d\n    pcie_switch: \"%s\"\n    rdma: "
			"%s\n    role: %s\n",
			n->port, n->port_state, n->speed, n->pcie_bw, n->numa,
			n->package, n->pcie_switch, n->rdma ? "true" : "false",
			n->management ? "management" : "fabric");
	}
	fprintf(fp, "links:%s\n", t->nview > 1 ? "" : " []");
	for (unsigned i = 0; i < t->nview; i++)
		for (unsigned j = i + 1; j < t->nview; j++) {
			int c;
			double bw, lat;

			(void)autosync_topo_link(t, i, j, &c, &bw, &lat);
			fprintf(fp,
				"  - {a: %u, b: %u, class: %s, bw: %.6g, lat: "
				"%.6g}\n",
				i, j, autosync_link_class_name(c), bw, lat);
		}
	fprintf(fp, "link_classes:\n");
	for (int k = 0; k < AUTOSYNC_LINK_NCLASSES; k++)
		fprintf(fp, "  %s: {bw: %.6g, lat: %.6g}\n",
			autosync_link_class_name(k), t->link_bw[k],
			t->link_lat[k]);
	return finish(fp, "YAML", errp);
}

static int put(autosync_env_t *env, size_t max, size_t *n, const char *name,
	       const char *value)
{
	if (*n >= max) {
		errno = ENOSPC;
		return -1;
	}
	snprintf(env[*n].name, sizeof(env[*n].name), "%s", name);
	snprintf(env[*n].value, sizeof(env[*n].value), "%s", value);
	(*n)++;
	return 0;
}

int autosync_topo_rank_env(const autosync_topo_t *t, unsigned r,
			   autosync_env_t *env, size_t max, size_t *n,
			   autosync_error_t *errp)
{
	int nic = -1, tier = AUTOSYNC_NIC_TIER_NONE, worst = -1;
	char val[96];

	if (!t || !n || (max && !env)) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "topo_rank_env: invalid argument");
	}
	*n = 0;
	if (r >= t->nview && !(t->nview == 0 && r == 0)) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "local rank %u: the job has %u GPU%s on this node", r,
		    t->nview, t->nview == 1 ? "" : "s");
	}
	if (t->nview) {
		nic = t->pub_gpus[r].nearest_nic;
		tier = t->pub_gpus[r].nic_tier;
		for (unsigned j = 0; j < t->nview; j++) {
			int c;

			if (j == r)
				continue;
			(void)autosync_topo_link(t, r, j, &c, NULL, NULL);
			if (c > worst)
				worst = c;
		}
	} else {
		for (unsigned i = 0; i < t->nnics && nic < 0; i++)
			if (!t->pub_nics[i].management)
				nic = (int)i;
	}
	if (nic >= 0) {
		const autosync_topo_nic_t *p = &t->pub_nics[nic];

		/* EFA (Amazon) goes through the aws-ofi-nccl plugin, not
		 * NCCL_IB_HCA */
		if (p->rdma && p->vendor_id != 0x1d0f) {
			snprintf(val, sizeof(val), "=%s:%d", p->name,
				 p->port > 0 ? p->port : 1);
			if (put(env, max, n, "NCCL_IB_HCA", val) < 0)
				goto nospace;
			if (t->nview && tier == AUTOSYNC_NIC_TIER_PCIE_SWITCH &&
			    put(env, max, n, "NCCL_NET_GDR_LEVEL", "PXB") < 0)
				goto nospace;
		} else if (!p->rdma && p->netdev[0]) {
			snprintf(val, sizeof(val), "=%s", p->netdev);
			if (put(env, max, n, "NCCL_SOCKET_IFNAME", val) < 0)
				goto nospace;
		}
	}
	if (worst >= 0 && worst <= AUTOSYNC_LINK_HOST_BRIDGE) {
		static const char *const lvl[] = {"NVL", "PXB", "PHB"};

		if (put(env, max, n, "NCCL_P2P_LEVEL", lvl[worst]) < 0)
			goto nospace;
	}
	return 0;
nospace:
	return autosync_errprintf(
	    errp, "topo_rank_env: more than %zu variables", max);
}
