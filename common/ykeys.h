/*
 * ykeys.h - the one policy for the keys of autosync's YAML files
 * (internal: not installed). A reader lists the keys a mapping may have;
 * any other key is an error that names it, suggests the closest known key
 * and lists them all. Repeated keys are refused when the document is
 * loaded (asi_yaml_no_duplicates), so every reader treats them alike.
 */
#ifndef AUTOSYNC_YKEYS_H
#define AUTOSYNC_YKEYS_H

#include <stddef.h>
#include <yaml.h>

#include "autosync/common.h"

/* "unknown key 'K' (did you mean 'X'?; known: a, b or c)" in 'buf'
 * (cut to 'len'); 'known' holds 'n' names. Returns buf. */
char *asi_ykey_unknown(const char *key, const char *const *known, size_t n,
		       char *buf, size_t len);

/*
 * Every key of the mapping 'map' is a scalar named in 'known' ('n' names);
 * else -1 with EINVAL and "FILE:LINE: WHERE: unknown key …" (no "WHERE: "
 * when 'where' is NULL or empty). 'map' must be a mapping node of 'doc'.
 */
int asi_ykeys_check(yaml_document_t *doc, yaml_node_t *map,
		    const char *const *known, size_t n, const char *fname,
		    const char *where, autosync_error_t *errp);

#endif
