/* xml.h - a small, bounded, non-validating XML reader for NCCL topology
 * files (elements, attributes, comments, PIs, DOCTYPE, CDATA, the five
 * predefined entities and numeric character references; no namespaces,
 * no external entities). Text content is ignored. Not installed. */
#ifndef AUTOSYNC_XML_H
#define AUTOSYNC_XML_H

#include <stddef.h>

#include "autosync/common.h"

#define XML_MAX_DEPTH 64
#define XML_MAX_NODES 200000
#define XML_MAX_ATTRS 64

struct xattr {
	char *name, *value;
};

struct xnode {
	char *name;
	struct xattr *attrs;
	unsigned nattrs;
	unsigned line;
	struct xnode *parent, *first, *last, *next;
};

/* Parse 'len' bytes of 'buf' (need not be NUL-terminated). Returns the root
 * element (free with topo_xml_free()) or NULL with EINVAL and a message that
 * starts with 'what' and names the line. */
struct xnode *topo_xml_parse(const char *buf, size_t len, const char *what,
			     autosync_error_t *errp);
void topo_xml_free(struct xnode *n);
/* value of attribute 'name' or NULL */
const char *topo_xml_attr(const struct xnode *n, const char *name);
/* name of the root element without building a tree ("" if none); for
 * format detection */
int topo_xml_root_name(const char *buf, size_t len, char *out, size_t outlen);

#endif
