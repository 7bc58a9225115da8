/*
 * yamlload.h - the one way autosync turns YAML text into a libyaml
 * document (internal: not installed). Bounds what libyaml would otherwise
 * spend on hostile input before it builds anything: libyaml 0.2.5 is
 * quadratic in flow-nesting depth, so flow depth is checked by a linear
 * scan of the text first, then nesting depth and the node count by a pass
 * over the parser's events, and only then is the document composed.
 */
#ifndef AUTOSYNC_YAMLLOAD_H
#define AUTOSYNC_YAMLLOAD_H

#include <stddef.h>
#include <yaml.h>

#include "autosync/common.h"

/* deeper nesting than any autosync file needs */
#define ASI_YAML_MAX_DEPTH 64

/*
 * Load the one document in 'buf' ('len' bytes; 'fname' names it in
 * messages) into '*doc', refusing nesting deeper than ASI_YAML_MAX_DEPTH
 * and more than 'max_nodes' nodes, aliases expanded (a list anchored once
 * and aliased a thousand times counts a thousand times; an alias inside
 * its own anchor is refused). Returns 0 (the caller deletes '*doc' with
 * yaml_document_delete), or -1 with EINVAL (ENOMEM) and
 * "FILE[:LINE:COLUMN]: why" in 'errp'; '*doc' is then nothing to delete.
 */
int asi_yaml_load(yaml_document_t *doc, const char *buf, size_t len,
		  const char *fname, size_t max_nodes, autosync_error_t *errp);

/*
 * One policy for repeated keys, whatever the reader: a mapping anywhere in
 * 'doc' that gives a scalar key twice is an error, "FILE:LINE: key 'K'
 * given twice (first on line N)", EINVAL. Returns 0 or -1.
 */
int asi_yaml_no_duplicates(yaml_document_t *doc, const char *fname,
			   autosync_error_t *errp);

/* The linear pre-scan alone: the deepest flow nesting ('[', '{') of the
 * text, stopping once past 'max'; '*line' gets the line (1-based) where it
 * went past. Quoted scalars and comments are skipped. */
unsigned asi_yaml_flow_depth(const char *buf, size_t len, unsigned max,
			     unsigned long *line);

#endif
