/* ykeys.c - one policy for unknown keys (see ykeys.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "text.h"
#include "ykeys.h"

char *asi_ykey_unknown(const char *key, const char *const *known, size_t n,
		       char *buf, size_t len)
{
	const char *near = asi_suggest(key, known, n);
	char q[96], list[1024], nq[96];

	asi_list(known, n, list, sizeof(list));
	if (near)
		snprintf(buf, len,
			 "unknown key '%s' (did you mean '%s'?; "
			 "known: %s)",
			 asi_quote(key, q, sizeof(q)),
			 asi_quote(near, nq, sizeof(nq)), list);
	else
		snprintf(buf, len, "unknown key '%s' (known: %s)",
			 asi_quote(key, q, sizeof(q)), list);
	return buf;
}

int asi_ykeys_check(yaml_document_t *doc, yaml_node_t *map,
		    const char *const *known, size_t n, const char *fname,
		    const char *where, autosync_error_t *errp)
{
	char msg[1400];
	int prefix = where && *where;

	if (!doc || !map || map->type != YAML_MAPPING_NODE) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s: %s%snot a mapping", fname ? fname : "(input)",
		    prefix ? where : "", prefix ? ": " : "");
	}
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
	     p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(doc, p->key);
		size_t i = 0;
		if (k && k->type == YAML_SCALAR_NODE)
			while (i < n &&
			       strcmp((const char *)k->data.scalar.value,
				      known[i]))
				i++;
		if (k && k->type == YAML_SCALAR_NODE && i < n)
			continue;
		errno = EINVAL;
		if (!k || k->type != YAML_SCALAR_NODE)
			return autosync_errprintf(
			    errp, "%s:%lu: %s%skeys must be scalars",
			    fname ? fname : "(input)",
			    k ? (unsigned long)k->start_mark.line + 1 : 0UL,
			    prefix ? where : "", prefix ? ": " : "");
		asi_ykey_unknown((const char *)k->data.scalar.value, known, n,
				 msg, sizeof(msg));
		return autosync_errprintf(
		    errp, "%s:%lu: %s%s%s", fname ? fname : "(input)",
		    (unsigned long)k->start_mark.line + 1, prefix ? where : "",
		    prefix ? ": " : "", msg);
	}
	return 0;
}
