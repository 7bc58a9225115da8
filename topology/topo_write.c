/* topo_write.c - text and YAML views of a topology, and the per-local-rank
 * NCCL environment. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/emit.h"
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

static void yaml_gpu(asi_emit_t *e, const autosync_topo_gpu_t *g, unsigned v)
{
	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "index"), asi_emit_uint(e, v);
	asi_emit_key(e, "busid"), asi_emit_str(e, g->busid);
	asi_emit_key(e, "vendor_id"), asi_emit_fmt(e, "0x%04x", g->vendor_id);
	asi_emit_key(e, "device_id"), asi_emit_fmt(e, "0x%04x", g->device_id);
	asi_emit_key(e, "class_id"), asi_emit_fmt(e, "0x%04x", g->class_id);
	asi_emit_key(e, "model"), asi_emit_str(e, g->model);
	asi_emit_key(e, "uuid"), asi_emit_str(e, g->uuid);
	asi_emit_key(e, "sm"), asi_emit_int(e, g->sm);
	asi_emit_key(e, "pcie_bw"), asi_emit_num(e, g->pcie_bw, 6);
	asi_emit_key(e, "numa"), asi_emit_int(e, g->numa);
	asi_emit_key(e, "package"), asi_emit_int(e, g->package);
	asi_emit_key(e, "pcie_switch"), asi_emit_str(e, g->pcie_switch);
	asi_emit_key(e, "cpuset"), asi_emit_str(e, g->cpuset);
	asi_emit_key(e, "nearest_nic"), asi_emit_int(e, g->nearest_nic);
	asi_emit_key(e, "nic_tier");
	asi_emit_word(e, autosync_nic_tier_name(g->nic_tier));
	asi_emit_key(e, "nvlink_bw"), asi_emit_num(e, g->nvlink_bw, 6);
	asi_emit_end(e);
}

static void yaml_nic(asi_emit_t *e, const autosync_topo_nic_t *n, unsigned i)
{
	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "index"), asi_emit_uint(e, i);
	asi_emit_key(e, "busid"), asi_emit_str(e, n->busid);
	asi_emit_key(e, "vendor_id"), asi_emit_fmt(e, "0x%04x", n->vendor_id);
	asi_emit_key(e, "device_id"), asi_emit_fmt(e, "0x%04x", n->device_id);
	asi_emit_key(e, "class_id"), asi_emit_fmt(e, "0x%04x", n->class_id);
	asi_emit_key(e, "kind"),
	    asi_emit_word(e, autosync_nic_kind_name(n->kind));
	asi_emit_key(e, "name"), asi_emit_str(e, n->name);
	asi_emit_key(e, "netdev"), asi_emit_str(e, n->netdev);
	asi_emit_key(e, "port"), asi_emit_int(e, n->port);
	asi_emit_key(e, "port_state"), asi_emit_int(e, n->port_state);
	asi_emit_key(e, "speed"), asi_emit_num(e, n->speed, 6);
	asi_emit_key(e, "pcie_bw"), asi_emit_num(e, n->pcie_bw, 6);
	asi_emit_key(e, "numa"), asi_emit_int(e, n->numa);
	asi_emit_key(e, "package"), asi_emit_int(e, n->package);
	asi_emit_key(e, "pcie_switch"), asi_emit_str(e, n->pcie_switch);
	asi_emit_key(e, "rdma"), asi_emit_word(e, n->rdma ? "true" : "false");
	asi_emit_key(e, "role");
	asi_emit_word(e, n->management ? "management" : "fabric");
	asi_emit_end(e);
}

/* env: each local rank's variables (autosync_topo_rank_env) */
static int yaml_env(asi_emit_t *e, const autosync_topo_t *t,
		    autosync_error_t *errp)
{
	unsigned n = t->nview ? t->nview : 1;

	asi_emit_key(e, "env"), asi_emit_seq(e, ASI_EMIT_BLOCK);
	for (unsigned r = 0; r < n; r++) {
		autosync_env_t v[8];
		size_t nv = 0;

		if (autosync_topo_rank_env(t, r, v, 8, &nv, errp) < 0)
			return -1;
		asi_emit_map(e, ASI_EMIT_BLOCK);
		asi_emit_key(e, "rank"), asi_emit_uint(e, r);
		asi_emit_key(e, "vars"), asi_emit_map(e, ASI_EMIT_FLOW);
		for (size_t k = 0; k < nv; k++)
			asi_emit_key(e, v[k].name), asi_emit_str(e, v[k].value);
		asi_emit_end(e);
		asi_emit_end(e);
	}
	asi_emit_end(e);
	return 0;
}

static int write_yaml(const autosync_topo_t *t, FILE *fp, int env,
		      autosync_error_t *errp)
{
	asi_emit_t *e;

	if (!t || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "topo_write_yaml: invalid argument");
	}
	if (!(e = asi_emit_open(fp, NULL, errp)))
		return -1;
	asi_emit_map(e, ASI_EMIT_BLOCK);
	asi_emit_key(e, "autosync_topology"), asi_emit_uint(e, 1);
	asi_emit_key(e, "source"), asi_emit_word(e, autosync_topo_source(t));
	asi_emit_key(e, "input");
	asi_emit_str(e, t->source == SRC_LIVE ? "" : t->path);
	asi_emit_key(e, "hash"), asi_emit_str(e, t->hash);
	asi_emit_key(e, "cpuset"), asi_emit_str(e, t->cpuset_str);
	asi_emit_key(e, "gpus_total"), asi_emit_uint(e, t->ngpus);
	asi_emit_key(e, "gpus");
	asi_emit_seq(e, t->nview ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (unsigned v = 0; v < t->nview; v++)
		yaml_gpu(e, &t->pub_gpus[v], v);
	asi_emit_end(e);
	asi_emit_key(e, "nics");
	asi_emit_seq(e, t->nnics ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (unsigned i = 0; i < t->nnics; i++)
		yaml_nic(e, &t->pub_nics[i], i);
	asi_emit_end(e);
	asi_emit_key(e, "links");
	asi_emit_seq(e, t->nview > 1 ? ASI_EMIT_BLOCK : ASI_EMIT_FLOW);
	for (unsigned i = 0; i < t->nview; i++)
		for (unsigned j = i + 1; j < t->nview; j++) {
			int c;
			double bw, lat;

			(void)autosync_topo_link(t, i, j, &c, &bw, &lat);
			asi_emit_map(e, ASI_EMIT_FLOW);
			asi_emit_key(e, "a"), asi_emit_uint(e, i);
			asi_emit_key(e, "b"), asi_emit_uint(e, j);
			asi_emit_key(e, "class");
			asi_emit_word(e, autosync_link_class_name(c));
			asi_emit_key(e, "bw"), asi_emit_num(e, bw, 6);
			asi_emit_key(e, "lat"), asi_emit_num(e, lat, 6);
			asi_emit_end(e);
		}
	asi_emit_end(e);
	asi_emit_key(e, "link_classes"), asi_emit_map(e, ASI_EMIT_BLOCK);
	for (int k = 0; k < AUTOSYNC_LINK_NCLASSES; k++) {
		asi_emit_key(e, autosync_link_class_name(k));
		asi_emit_map(e, ASI_EMIT_FLOW);
		asi_emit_key(e, "bw"), asi_emit_num(e, t->link_bw[k], 6);
		asi_emit_key(e, "lat"), asi_emit_num(e, t->link_lat[k], 6);
		asi_emit_end(e);
	}
	asi_emit_end(e);
	if (env && yaml_env(e, t, errp) < 0) {
		(void)asi_emit_close(e, "writing YAML", NULL);
		return -1;
	}
	asi_emit_end(e);
	return asi_emit_close(e, "writing YAML", errp);
}

int autosync_topo_write_yaml(const autosync_topo_t *t, FILE *fp,
			     autosync_error_t *errp)
{
	return write_yaml(t, fp, 0, errp);
}

int autosync_topo_write_yaml_env(const autosync_topo_t *t, FILE *fp,
				 autosync_error_t *errp)
{
	return write_yaml(t, fp, 1, errp);
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
