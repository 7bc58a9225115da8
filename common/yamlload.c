/* yamlload.c - bounded YAML loading over libyaml (see yamlload.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

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
	yaml_parser_set_input_string(&p, (const unsigned char *) buf, len);
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
			unsigned long l = (unsigned long) ev.start_mark.line + 1,
				      c = (unsigned long) ev.start_mark.column + 1;
			errno = EINVAL;
			if (depth > ASI_YAML_MAX_DEPTH)
				autosync_errprintf(errp, "%s:%lu:%lu: nested "
						   "deeper than %d levels", fname,
						   l, c, ASI_YAML_MAX_DEPTH);
			else
				autosync_errprintf(errp, "%s:%lu:%lu: more than "
						   "%zu nodes, more than autosync "
						   "reads in such a file", fname,
						   l, c, max_nodes);
			yaml_event_delete(&ev);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
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
		return autosync_errprintf(errp, "%s:%lu: nested deeper than "
					  "%d levels", fname, line,
					  ASI_YAML_MAX_DEPTH);
	}
	if (check_events(buf, len, fname, max_nodes, errp) < 0)
		return -1;
	if (!yaml_parser_initialize(&p)) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "%s: out of memory", fname);
	}
	yaml_parser_set_input_string(&p, (const unsigned char *) buf, len);
	if (!yaml_parser_load(&p, doc)) {
		errno = p.error == YAML_MEMORY_ERROR ? ENOMEM : EINVAL;
		autosync_errprintf(errp, "%s:%lu:%lu: not valid YAML: %s%s%s",
				   fname, (unsigned long) p.problem_mark.line + 1,
				   (unsigned long) p.problem_mark.column + 1,
				   p.problem ? p.problem : "error",
				   p.context ? " " : "",
				   p.context ? p.context : "");
	} else {
		rv = 0;
	}
	yaml_parser_delete(&p);
	return rv;
}
