/* yamlload.c - bounded YAML loading over libyaml (see yamlload.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "yamlload.h"

/* Where a node may start in block context: after "key:", "- ", "? " or at
 * the start of a line (indentation aside). */
static int node_start(char prev)
{
	return prev == '\0' || prev == '\n' || prev == ':' || prev == '-' ||
	       prev == '?';
}

/* Skip a quoted scalar starting at buf[i] (the quote); returns the index of
 * the closing quote (or len), counting newlines. */
static size_t skip_quoted(const char *buf, size_t len, size_t i,
			  unsigned long *ln)
{
	char q = buf[i++];

	for (; i < len; i++) {
		if (buf[i] == '\n')
			(*ln)++;
		else if (q == '"' && buf[i] == '\\' && i + 1 < len)
			i++; /* an escaped character, maybe a quote */
		else if (buf[i] == q && q == '\'' && i + 1 < len &&
			 buf[i + 1] == '\'')
			i++; /* '' inside single quotes */
		else if (buf[i] == q)
			return i;
	}
	return len;
}

unsigned asi_yaml_flow_depth(const char *buf, size_t len, unsigned max,
			     unsigned long *line)
{
	unsigned depth = 0, deepest = 0;
	unsigned long ln = 1;
	char prev = '\0'; /* last character that was not a blank */

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (c == ' ' || c == '\t' || c == '\r')
			continue;
		if (c == '#' && (i == 0 || buf[i - 1] == ' ' ||
				 buf[i - 1] == '\t' || buf[i - 1] == '\n')) {
			while (i + 1 < len && buf[i + 1] != '\n')
				i++;
			continue;
		}
		if ((c == '"' || c == '\'') &&
		    (depth ? strchr("[{,:?", prev) != NULL || !prev
			   : node_start(prev))) {
			i = skip_quoted(buf, len, i, &ln);
			prev = 'x';
			continue;
		}
		if (c == '\n') {
			ln++;
		} else if ((c == '[' || c == '{') &&
			   (depth || node_start(prev))) {
			if (++depth > deepest)
				deepest = depth;
			if (deepest > max) {
				if (line)
					*line = ln;
				return deepest;
			}
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
		prev = c;
	}
	return deepest;
}

/* Pass 2: the parser's events, without composing: nesting and size. */
static int check_events(const char *buf, size_t len, const char *fname,
			size_t max_nodes, autosync_error_t *errp)
{
	yaml_parser_t p;
	yaml_event_t ev;
	size_t nodes = 0;
	unsigned depth = 0;
	int rv = -1, done = 0;

	if (!yaml_parser_initialize(&p)) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "%s: out of memory", fname);
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	while (!done) {
		if (!yaml_parser_parse(&p, &ev)) {
			/* the composer will say it, with its own words */
			rv = 0;
			break;
		}
		switch (ev.type) {
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			depth++;
			/* fall through */
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			nodes++;
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_STREAM_END_EVENT:
			done = 1;
			rv = 0;
			break;
		default:
			break;
		}
		if (depth > ASI_YAML_MAX_DEPTH || nodes > max_nodes) {
			unsigned long l = (unsigned long)ev.start_mark.line + 1,
				      c = (unsigned long)ev.start_mark.column +
					  1;
			errno = EINVAL;
			if (depth > ASI_YAML_MAX_DEPTH)
				autosync_errprintf(errp,
						   "%s:%lu:%lu: nested "
						   "deeper than %d levels",
						   fname, l, c,
						   ASI_YAML_MAX_DEPTH);
			else
				autosync_errprintf(
				    errp,
				    "%s:%lu:%lu: more than "
				    "%zu nodes, more than autosync "
				    "reads in such a file",
				    fname, l, c, max_nodes);
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rv;
}

/* The 'k'-th child of node 'n' (items, or a mapping's keys and values in
 * turn); 0 past the last. */
static int child_of(const yaml_node_t *n, size_t k)
{
	if (n->type == YAML_SEQUENCE_NODE)
		return k < (size_t)(n->data.sequence.items.top -
				    n->data.sequence.items.start)
			   ? n->data.sequence.items.start[k]
			   : 0;
	if (n->type == YAML_MAPPING_NODE &&
	    k / 2 < (size_t)(n->data.mapping.pairs.top -
			     n->data.mapping.pairs.start)) {
		const yaml_node_pair_t *p = &n->data.mapping.pairs.start[k / 2];
		return k % 2 ? p->value : p->key;
	}
	return 0;
}

/*
 * 0 when the document, its aliases expanded as its readers will walk them,
 * has at most 'max' nodes; -1 otherwise (an alias inside its own anchor
 * never ends). The event pass counts an alias as one node, so a list
 * anchored once and aliased a thousand times would slip through it. Each
 * node's expanded size is computed once, without recursion, saturating
 * past 'max'.
 */
static int expanded_within(const yaml_document_t *doc, size_t max)
{
	size_t n = (size_t)(doc->nodes.top - doc->nodes.start), sp = 0;
	size_t *size = calloc(n + 1, sizeof(*size));
	size_t *cur = calloc(n + 1, sizeof(*cur));
	int *stk = calloc(n + 1, sizeof(*stk));
	unsigned char *state = calloc(n + 1, 1); /* 0 new 1 open 2 done */
	int rv = -1;

#define ADD(a, b) ((a) = (a) + (b) > max ? max + 1 : (a) + (b))
	if (!size || !cur || !stk || !state)
		goto out;
	if (n) {
		stk[sp++] = 1;
		state[1] = 1;
		size[1] = 1;
	}
	while (sp) {
		int i = stk[sp - 1],
		    c = child_of(&doc->nodes.start[i - 1], cur[sp - 1]++);
		if (c < 1 || (size_t)c > n) {
			state[i] = 2;
			if (--sp)
				ADD(size[stk[sp - 1]], size[i]);
			continue;
		}
		if (state[c] == 1)
			goto out; /* a cycle */
		if (state[c] == 2) {
			ADD(size[i], size[c]);
		} else {
			state[c] = 1;
			size[c] = 1;
			cur[sp] = 0;
			stk[sp++] = c;
		}
		if (size[i] > max)
			goto out;
	}
	rv = n && size[1] > max ? -1 : 0;
#undef ADD
out:
	free(size);
	free(cur);
	free(stk);
	free(state);
	return rv;
}

int asi_yaml_load(yaml_document_t *doc, const char *buf, size_t len,
		  const char *fname, size_t max_nodes, autosync_error_t *errp)
{
	yaml_parser_t p;
	unsigned long line = 0;
	int rv = -1;

	fname = fname ? fname : "(input)";
	if (!doc || !buf) {
		errno = EINVAL;
		return autosync_errprintf(errp, "%s: no input", fname);
	}
	if (asi_yaml_flow_depth(buf, len, ASI_YAML_MAX_DEPTH, &line) >
	    ASI_YAML_MAX_DEPTH) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "%s:%lu: nested deeper than "
					  "%d levels",
					  fname, line, ASI_YAML_MAX_DEPTH);
	}
	if (check_events(buf, len, fname, max_nodes, errp) < 0)
		return -1;
	if (!yaml_parser_initialize(&p)) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "%s: out of memory", fname);
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&p, doc)) {
		errno = p.error == YAML_MEMORY_ERROR ? ENOMEM : EINVAL;
		autosync_errprintf(
		    errp, "%s:%lu:%lu: not valid YAML: %s%s%s", fname,
		    (unsigned long)p.problem_mark.line + 1,
		    (unsigned long)p.problem_mark.column + 1,
		    p.problem ? p.problem : "error", p.context ? " " : "",
		    p.context ? p.context : "");
	} else if (expanded_within(doc, max_nodes) < 0) {
		yaml_document_delete(doc);
		memset(doc, 0, sizeof(*doc));
		errno = EINVAL;
		autosync_errprintf(errp,
				   "%s: more than %zu nodes once its aliases "
				   "are expanded (or an alias inside its own "
				   "anchor), more than autosync reads in such "
				   "a file",
				   fname, max_nodes);
	} else {
		rv = 0;
	}
	yaml_parser_delete(&p);
	return rv;
}

struct key {
	const char *s;
	size_t len;
	yaml_node_t *node;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if ((c = memcmp(x->s, y->s, x->len)))
		return c;
	/* equal keys in document order: the second is the one reported */
	return x->node < y->node ? -1 : x->node > y->node;
}

/* sort the mapping's scalar keys; equal neighbours are a repeat */
static int check_mapping(yaml_document_t *doc, yaml_node_t *n,
			 const char *fname, autosync_error_t *errp)
{
	size_t np = (size_t)(n->data.mapping.pairs.top -
			     n->data.mapping.pairs.start),
	       nk = 0;
	struct key *k;
	char q[128];
	int rv = 0;

	if (np < 2)
		return 0;
	if (!(k = calloc(np, sizeof(*k)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "%s: out of memory", fname);
	}
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
	     p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(doc, p->key);
		if (!kn || kn->type != YAML_SCALAR_NODE)
			continue;
		k[nk].s = (const char *)kn->data.scalar.value;
		k[nk].len = kn->data.scalar.length;
		k[nk++].node = kn;
	}
	qsort(k, nk, sizeof(*k), cmp_key);
	for (size_t i = 1; i < nk && !rv; i++)
		if (k[i].len == k[i - 1].len &&
		    !memcmp(k[i].s, k[i - 1].s, k[i].len)) {
			errno = EINVAL;
			rv = autosync_errprintf(
			    errp,
			    "%s:%lu: key '%s' given twice (first on line "
			    "%lu)",
			    fname,
			    (unsigned long)k[i].node->start_mark.line + 1,
			    asi_quote(k[i].s, q, sizeof(q)),
			    (unsigned long)k[i - 1].node->start_mark.line + 1);
		}
	free(k);
	return rv;
}

int asi_yaml_no_duplicates(yaml_document_t *doc, const char *fname,
			   autosync_error_t *errp)
{
	fname = fname ? fname : "(input)";
	/* nodes live in one array: every mapping is visited once, without
	 * recursion */
	for (yaml_node_t *n = doc->nodes.start; n && n < doc->nodes.top; n++)
		if (n->type == YAML_MAPPING_NODE &&
		    check_mapping(doc, n, fname, errp) < 0)
			return -1;
	return 0;
}
