/* cluster.c - the cluster value functions (autosync/cluster.h): unit
 * parsers, the link-class table and the compact cluster description. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/cluster.h"
#include "text.h"

#define SPEC_MAX 4096 /* longest accepted cluster description */
#define SHOW 64	      /* longest part of a bad value echoed in messages */

/* ------------------------------------------------------------------ units */

/* strtod() also takes "inf", "nan" and hex floats: accept only a plain
 * decimal number. Returns the end pointer or NULL. */
static const char *parse_number(const char *s, double *v)
{
	const char *p = s;
	char *end;

	if (*p == '+')
		p++;
	if (!isdigit((unsigned char)*p) &&
	    !(*p == '.' && isdigit((unsigned char)p[1])))
		return NULL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return NULL;
	errno = 0;
	*v = strtod(s, &end);
	if (errno == ERANGE || end == s || !isfinite(*v))
		return NULL;
	return end;
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

int autosync_parse_bandwidth(const char *s, double *bytes_per_s,
			     autosync_error_t *errp)
{
	double v, mult = 1.0;
	const char *p;

	if (!s || !bytes_per_s) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "parse_bandwidth: invalid argument");
	}
	p = parse_number(skip_blanks(s), &v);
	if (!p)
		goto bad;
	p = skip_blanks(p);
	switch (*p) {
	case 'k':
	case 'K':
		mult = 1e3;
		p++;
		break;
	case 'M':
		mult = 1e6;
		p++;
		break;
	case 'G':
		mult = 1e9;
		p++;
		break;
	case 'T':
		mult = 1e12;
		p++;
		break;
	case 'P':
		mult = 1e15;
		p++;
		break;
	default:
		break;
	}
	if (mult != 1.0 && *p == 'i') {
		/* binary prefixes: Ki Mi Gi Ti Pi */
		mult = mult == 1e3    ? 1024.0
		       : mult == 1e6  ? 1048576.0
		       : mult == 1e9  ? 1073741824.0
		       : mult == 1e12 ? 1099511627776.0
				      : 1125899906842624.0;
		p++;
	}
	if (*p == 'B') {
		p++;
	} else if (!strncmp(p, "bit", 3)) {
		mult /= 8.0;
		p += 3;
	} else if (*p == 'b') {
		mult /= 8.0;
		p++;
	} else {
		goto bad;
	}
	if (strcmp(p, "/s") != 0)
		goto bad;
	v *= mult;
	if (!isfinite(v) || v <= 0.0)
		goto bad;
	*bytes_per_s = v;
	return 0;
bad:
	errno = EINVAL;
	return autosync_errprintf(
	    errp,
	    "bad bandwidth '%.*s': want a positive number and a unit such as "
	    "200Gbit/s, 25GB/s or 100Mb/s",
	    SHOW, s);
}

int autosync_parse_duration(const char *s, double *seconds,
			    autosync_error_t *errp)
{
	double v;
	const char *p;

	if (!s || !seconds) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "parse_duration: invalid argument");
	}
	p = parse_number(skip_blanks(s), &v);
	if (!p)
		goto bad;
	p = skip_blanks(p);
	if (!strcmp(p, "s"))
		;
	else if (!strcmp(p, "ms"))
		v *= 1e-3;
	else if (!strcmp(p, "us") || !strcmp(p, "\xc2\xb5s") ||
		 !strcmp(p, "\xce\xbcs"))
		v *= 1e-6;
	else if (!strcmp(p, "ns"))
		v *= 1e-9;
	else
		goto bad;
	if (!isfinite(v) || v < 0.0)
		goto bad;
	*seconds = v;
	return 0;
bad:
	errno = EINVAL;
	return autosync_errprintf(errp,
				  "bad duration '%.*s': want a number and a "
				  "unit s, ms, us, \xc2\xb5s or ns (e.g. 2us)",
				  SHOW, s);
}

/* ------------------------------------------------------------ link classes */

static const struct {
	const char *name;
	double bw, lat;
} link_classes[AUTOSYNC_LINK_NCLASSES] = {
    /* sources: docs/topology.md (NCCL 2.28 topo.h and tuning tables) */
    [AUTOSYNC_LINK_NVLINK] = {"nvlink", 240e9, 0.6e-6},
    [AUTOSYNC_LINK_PCIE_SWITCH] = {"pcie_switch", 24e9, 1.0e-6},
    [AUTOSYNC_LINK_HOST_BRIDGE] = {"host_bridge", 12e9, 1.0e-6},
    [AUTOSYNC_LINK_CROSS_SOCKET] = {"cross_socket", 10e9, 1.5e-6},
    [AUTOSYNC_LINK_NET] = {"net", 25e9, 2.0e-6},
};

const char *autosync_link_class_name(int cls)
{
	if (cls < 0 || cls >= AUTOSYNC_LINK_NCLASSES)
		return "unknown";
	return link_classes[cls].name;
}

int autosync_link_class_from_name(const char *name)
{
	if (name)
		for (int i = 0; i < AUTOSYNC_LINK_NCLASSES; i++)
			if (!strcmp(name, link_classes[i].name))
				return i;
	errno = EINVAL;
	return -1;
}

static const char *const transport_names[AUTOSYNC_TRANSPORT_COUNT] = {
    [AUTOSYNC_TRANSPORT_UNKNOWN] = "unknown",
    [AUTOSYNC_TRANSPORT_TCP] = "tcp",
    [AUTOSYNC_TRANSPORT_IB] = "ib",
    [AUTOSYNC_TRANSPORT_ROCE] = "roce",
};

const char *autosync_transport_name(int transport)
{
	if (transport < 0 || transport >= AUTOSYNC_TRANSPORT_COUNT)
		return "unknown";
	return transport_names[transport];
}

int autosync_transport_from_name(const char *name)
{
	if (name)
		for (int i = 0; i < AUTOSYNC_TRANSPORT_COUNT; i++)
			if (!strcmp(name, transport_names[i]))
				return i;
	errno = EINVAL;
	return -1;
}

int autosync_link_class_default(int cls, double *bw, double *lat)
{
	if (cls < 0 || cls >= AUTOSYNC_LINK_NCLASSES) {
		errno = EINVAL;
		return -1;
	}
	if (bw)
		*bw = link_classes[cls].bw;
	if (lat)
		*lat = link_classes[cls].lat;
	return 0;
}

/* --------------------------------------------------------- cluster values */

void autosync_cluster_default(autosync_cluster_t *c)
{
	if (!c)
		return;
	memset(c, 0, sizeof(*c));
	c->nodes = 4;
	c->gpus_per_node = 8;
	c->intra_class = AUTOSYNC_LINK_NVLINK;
	c->intra_bw = link_classes[AUTOSYNC_LINK_NVLINK].bw;
	c->intra_lat = link_classes[AUTOSYNC_LINK_NVLINK].lat;
	c->nics_per_node = 4;
	c->nic_bw = 200e9 / 8;
	c->inter_lat = 2e-6;
	c->nodes_per_switch = 0;
	c->topo_hash[0] = '\0';
}

#define BW_MIN AUTOSYNC_BW_MIN
#define BW_MAX AUTOSYNC_BW_MAX
#define LAT_MIN AUTOSYNC_LAT_MIN
#define LAT_MAX AUTOSYNC_LAT_MAX

static int parse_uint(const char *key, const char *val, unsigned lo,
		      unsigned hi, unsigned *out, autosync_error_t *errp)
{
	unsigned long v = 0;
	const char *p = val;

	if (!*p)
		goto bad;
	for (; *p; p++) {
		if (!isdigit((unsigned char)*p))
			goto bad;
		v = v * 10 + (unsigned)(*p - '0');
		if (v > hi)
			goto range;
	}
	if (v < lo)
		goto range;
	*out = (unsigned)v;
	return 0;
bad:
	errno = EINVAL;
	return autosync_errprintf(
	    errp, "cluster: %s='%.*s': not a whole number", key, SHOW, val);
range:
	errno = EINVAL;
	return autosync_errprintf(errp,
				  "cluster: %s='%.*s': out of range %u..%u",
				  key, SHOW, val, lo, hi);
}

static int parse_bw(const char *key, const char *val, double *out,
		    autosync_error_t *errp)
{
	double v;
	autosync_error_t e;

	if (autosync_parse_bandwidth(val, &v, &e) < 0)
		return autosync_errprintf(errp, "cluster: %s: %s", key, e.text);
	if (v < BW_MIN || v > BW_MAX) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "cluster: %s='%.*s': out of range 1Mbit/s..100TB/s",
		    key, SHOW, val);
	}
	*out = v;
	return 0;
}

static int parse_lat(const char *key, const char *val, double lo, double *out,
		     autosync_error_t *errp)
{
	double v;
	autosync_error_t e;

	if (autosync_parse_duration(val, &v, &e) < 0)
		return autosync_errprintf(errp, "cluster: %s: %s", key, e.text);
	if (v < lo || v > LAT_MAX) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "cluster: %s='%.*s': out of range %s..1s", key, SHOW,
		    val, lo > 0 ? "1ns" : "0s");
	}
	*out = v;
	return 0;
}

enum key_id {
	K_NODES,
	K_GPUS,
	K_INTRA,
	K_INTRA_BW,
	K_INTRA_LAT,
	K_NICS,
	K_NIC_BW,
	K_LAT,
	K_NPS,
	K_HASH,
	K_TRANSPORT,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
    [K_NODES] = "nodes",	  [K_GPUS] = "gpus",
    [K_INTRA] = "intra",	  [K_INTRA_BW] = "intra_bw",
    [K_INTRA_LAT] = "intra_lat",  [K_NICS] = "nics",
    [K_NIC_BW] = "nic_bw",	  [K_LAT] = "lat",
    [K_NPS] = "nodes_per_switch", [K_HASH] = "hash",
    [K_TRANSPORT] = "transport",
};

static int parse_item(autosync_cluster_t *c, int k, const char *key, char *val,
		      unsigned *seen, autosync_error_t *errp)
{
	char *x;

	switch (k) {
	case K_NODES:
		return parse_uint(key, val, 1, 65536, &c->nodes, errp);
	case K_GPUS:
		return parse_uint(key, val, 1, 1024, &c->gpus_per_node, errp);
	case K_INTRA: {
		char *cls = val, *bw = NULL, *lat = NULL;
		int ci;

		if ((bw = strchr(cls, ':'))) {
			*bw++ = '\0';
			if ((lat = strchr(bw, ':')))
				*lat++ = '\0';
		}
		cls = asi_trim(cls);
		ci = autosync_link_class_from_name(cls);
		if (ci < 0 || ci == AUTOSYNC_LINK_NET) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp,
			    "cluster: intra='%.*s': unknown link class (want "
			    "nvlink, pcie_switch, host_bridge or cross_socket)",
			    SHOW, cls);
		}
		c->intra_class = ci;
		(void)autosync_link_class_default(ci, &c->intra_bw,
						  &c->intra_lat);
		if (bw &&
		    parse_bw("intra", asi_trim(bw), &c->intra_bw, errp) < 0)
			return -1;
		if (lat && parse_lat("intra", asi_trim(lat), 0.0, &c->intra_lat,
				     errp) < 0)
			return -1;
		return 0;
	}
	case K_INTRA_BW:
		return parse_bw(key, val, &c->intra_bw, errp);
	case K_INTRA_LAT:
		return parse_lat(key, val, 0.0, &c->intra_lat, errp);
	case K_NICS:
		x = val;
		while (isdigit((unsigned char)*x))
			x++;
		if (*x == 'x' || *x == 'X' || *x == '*') {
			char save = *x;

			*x = '\0';
			if (parse_uint(key, asi_trim(val), 1, 64,
				       &c->nics_per_node, errp) < 0)
				return -1;
			*x = save;
			return parse_bw(key, asi_trim(x + 1), &c->nic_bw, errp);
		}
		return parse_uint(key, val, 1, 64, &c->nics_per_node, errp);
	case K_NIC_BW:
		return parse_bw(key, val, &c->nic_bw, errp);
	case K_LAT:
		return parse_lat(key, val, LAT_MIN, &c->inter_lat, errp);
	case K_NPS:
		return parse_uint(key, val, 0, 65536, &c->nodes_per_switch,
				  errp);
	case K_HASH:
		if (!*val || !strcmp(val, "none")) {
			c->topo_hash[0] = '\0';
			return 0;
		}
		if (strlen(val) != 16)
			goto badhash;
		for (int i = 0; i < 16; i++)
			if (!isxdigit((unsigned char)val[i]))
				goto badhash;
		for (int i = 0; i < 16; i++)
			c->topo_hash[i] = (char)tolower((unsigned char)val[i]);
		c->topo_hash[16] = '\0';
		return 0;
	badhash:
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "cluster: hash='%.*s': want 16 hexadecimal digits",
		    SHOW, val);
	case K_TRANSPORT: {
		int t = autosync_transport_from_name(val);

		if (t < 0)
			return autosync_errprintf(
			    errp,
			    "cluster: transport='%.*s': want tcp, ib, roce or "
			    "unknown",
			    SHOW, val);
		c->transport = t;
		return 0;
	}
	}
	return 0;
}

/* Apply the items of 'spec' to *c (the caller's copy). */
static int apply_spec(autosync_cluster_t *c, const char *spec,
		      autosync_error_t *errp)
{
	autosync_cluster_t tmp = *c;
	char buf[SPEC_MAX + 1];
	char *item, *next;
	unsigned seen = 0;
	size_t len;
	int have_intra_bw = 0, have_intra_lat = 0, have_intra = 0;
	double ibw = 0, ilat = 0;

	len = strlen(spec);
	if (len > SPEC_MAX) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "cluster: description longer than %d characters",
		    SPEC_MAX);
	}
	memcpy(buf, spec, len + 1);
	if (*asi_trim(buf) == '\0')
		return 0;
	for (item = buf; item; item = next) {
		char *eq, *key, *val;
		int k;

		if ((next = strchr(item, ',')))
			*next++ = '\0';
		item = asi_trim(item);
		if (!*item) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "cluster: empty item (stray comma?)");
		}
		if (!(eq = strchr(item, '='))) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "cluster: '%.*s': want key=value", SHOW,
			    item);
		}
		*eq = '\0';
		key = asi_trim(item);
		val = asi_trim(eq + 1);
		for (k = 0; k < K_COUNT; k++)
			if (!strcmp(key, key_names[k]))
				break;
		if (k == K_COUNT) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp,
			    "cluster: unknown key '%.*s' (want nodes, gpus, "
			    "intra, intra_bw, intra_lat, nics, nic_bw, lat, "
			    "nodes_per_switch, hash, transport)",
			    SHOW, key);
		}
		if (seen & (1u << k)) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "cluster: key '%s' given twice", key);
		}
		seen |= 1u << k;
		if (parse_item(&tmp, k, key, val, &seen, errp) < 0)
			return -1;
		if (k == K_INTRA_BW) {
			have_intra_bw = 1;
			ibw = tmp.intra_bw;
		} else if (k == K_INTRA_LAT) {
			have_intra_lat = 1;
			ilat = tmp.intra_lat;
		} else if (k == K_INTRA) {
			have_intra = 1;
		}
	}
	/* intra_bw / intra_lat win over the class default whatever the order */
	if (have_intra) {
		if (have_intra_bw)
			tmp.intra_bw = ibw;
		if (have_intra_lat)
			tmp.intra_lat = ilat;
	}
	*c = tmp;
	return 0;
}

int autosync_cluster_parse(autosync_cluster_t *c, const char *spec,
			   autosync_error_t *errp)
{
	autosync_cluster_t tmp;

	if (!c || !spec) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "cluster_parse: invalid argument");
	}
	autosync_cluster_default(&tmp);
	if (apply_spec(&tmp, spec, errp) < 0)
		return -1;
	*c = tmp;
	return 0;
}

int autosync_cluster_update(autosync_cluster_t *c, const char *spec,
			    autosync_error_t *errp)
{
	if (!c || !spec) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "cluster_update: invalid argument");
	}
	return apply_spec(c, spec, errp);
}

int autosync_cluster_format(const autosync_cluster_t *c, char *buf, size_t len)
{
	/* only when known: records and labels of clusters without one read
	 * as they did before the key existed */
	int known = c && c->transport > AUTOSYNC_TRANSPORT_UNKNOWN &&
		    c->transport < AUTOSYNC_TRANSPORT_COUNT;

	if (!c || (!buf && len)) {
		errno = EINVAL;
		return -1;
	}
	return snprintf(
	    buf, len,
	    "nodes=%u,gpus=%u,intra=%s:%.17gB/s:%.17gs,nics=%ux%.17gB/"
	    "s,lat=%.17gs,nodes_per_switch=%u,hash=%s%s%s",
	    c->nodes, c->gpus_per_node,
	    autosync_link_class_name(c->intra_class), c->intra_bw, c->intra_lat,
	    c->nics_per_node, c->nic_bw, c->inter_lat, c->nodes_per_switch,
	    c->topo_hash[0] ? c->topo_hash : "none", known ? ",transport=" : "",
	    known ? autosync_transport_name(c->transport) : "");
}
