/*
 * ykeys.h - the one key-table reader of autosync's YAML files (internal:
 * not installed, not exported). A reader describes each mapping of its
 * format as a table of keys, each with a type, bounds, a destination
 * (an offset into the caller's struct) and whether it is required; one
 * walker applies one policy to every file:
 *
 *   - an unknown key is an error that suggests the closest known key and
 *     lists the known ones;
 *   - a key given twice is an error naming both lines;
 *   - a required key that is missing is an error;
 *   - every message is "FILE:LINE: KEY: why", the value quoted with
 *     asi_quote().
 *
 * Documents are loaded through asi_yaml_load() (nesting and node count
 * bounded before libyaml composes them). A reader either stops at the
 * first problem (model, plan, calibration files) or, with 'collect' set,
 * reports every problem through a callback and goes on (site config
 * checks).
 */
#ifndef AUTOSYNC_YKEYS_H
#define AUTOSYNC_YKEYS_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "autosync/common.h"

typedef struct asi_yreader asi_yreader_t;
struct asi_ykey;

/* A problem as "FILE:LINE: ...", for a reader that collects them. */
typedef void (*asi_yproblem_f)(const char *msg, void *arg);

/* For ASI_Y_NODE keys: 'v' is the key's value, 'key' its full name for
 * messages, 'base' the destination struct. Returns 0 or -1 (having called
 * asi_yproblem()). */
typedef int (*asi_ynode_f)(asi_yreader_t *r, yaml_node_t *v, const char *key,
			   void *base);

struct asi_yreader {
	yaml_document_t doc;
	const char *fname;
	int loaded;
	autosync_error_t *errp; /* gets the first problem */
	asi_yproblem_f problem; /* gets every problem (may be NULL) */
	void *arg;
	int collect;   /* go on after a problem */
	int nproblems; /* problems so far */
	int nomem;     /* an allocation failed (errno ENOMEM) */
	void *user;    /* for the caller's handlers */
};

enum asi_ytype {
	ASI_Y_STR,     /* char *, strdup'ed; the old value is freed */
	ASI_Y_BUF,     /* char[size], copied; longer is an error */
	ASI_Y_BOOL,    /* int 0/1, asi_parse_bool */
	ASI_Y_UINT,    /* unsigned, in [umin, umax] */
	ASI_Y_U64,     /* uint64_t, in [umin, umax] */
	ASI_Y_DOUBLE,  /* double, finite, in [dmin, dmax] */
	ASI_Y_SIZE,    /* size_t, bytes with a suffix, in [umin, umax] */
	ASI_Y_ENUM,    /* int: the index in 'values', or conv(text) */
	ASI_Y_VERSION, /* unsigned format version in [umin, umax] */
	ASI_Y_MAP,     /* a nested mapping read with the table 'sub' */
	ASI_Y_NODE,    /* anything, handed to 'cb'; without one, the node
			  is stored at 'off' (yaml_node_t *) for later */
};

enum {
	ASI_Y_REQUIRED = 1 << 0, /* missing is an error */
	ASI_Y_EMPTY_OK = 1 << 1, /* STR/BUF: the empty string is allowed */
};

struct asi_ykey {
	const char *name; /* NULL ends a table */
	enum asi_ytype type;
	unsigned flags;
	size_t off;  /* destination: offset into 'base' */
	size_t size; /* ASI_Y_BUF: the buffer's size */
	uint64_t umin, umax;
	double dmin, dmax;
	const char *const *values;   /* ASI_Y_ENUM: NULL-terminated names */
	int (*conv)(const char *);   /* ASI_Y_ENUM: name -> value, or -1 */
	const char *(*name_of)(int); /* ASI_Y_ENUM with conv: value -> name,
					NULL past the last (for messages) */
	const struct asi_ykey *sub;  /* ASI_Y_MAP */
	asi_ynode_f cb;		     /* ASI_Y_NODE */
	const char *what;	     /* ASI_Y_VERSION: "an autosync plan" */
};

/* Load 'buf' ('len' bytes; 'fname' names it) into 'r', at most
 * 'max_nodes' nodes. 'r' must have been zeroed, then errp, problem, arg,
 * collect set as wanted. Unless 'collect' is set, a key given twice in
 * any mapping (also those no table describes) is an error here. An empty
 * document is an error unless 'empty_ok' (then the root is NULL).
 * Returns 0, or -1 with errno (the problem reported). */
int asi_yreader_load(asi_yreader_t *r, const char *buf, size_t len,
		     const char *fname, size_t max_nodes, int empty_ok);

/* Read the whole file 'path' (at most 'max' bytes, regular files only,
 * through asi_read_file) and load it as asi_yreader_load(). */
int asi_yreader_load_file(asi_yreader_t *r, const char *path, size_t max,
			  size_t max_nodes, int empty_ok);

void asi_yreader_free(asi_yreader_t *r);
yaml_node_t *asi_yroot(asi_yreader_t *r);
yaml_node_t *asi_ynode(asi_yreader_t *r, int id);
unsigned long asi_yline(const yaml_node_t *n);
/* the scalar's text, or NULL */
const char *asi_yscalar(const yaml_node_t *n);

/* Report a problem at node 'n' (NULL: line 1): "FILE:LINE: " + fmt. Sets
 * errno EINVAL; returns -1. */
int asi_yproblem(asi_yreader_t *r, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record an allocation failure ("FILE: out of memory", ENOMEM); -1. */
int asi_ynomem(asi_yreader_t *r);

/*
 * Read the mapping 'map' with 'keys' into 'base'. 'where' names the
 * mapping in messages: "" for the top level, else a prefix such as
 * "network" or "tensors[3]" (keys then read "network.latency"). A value
 * whose key is absent is left as it was (set defaults first). Returns 0,
 * or -1 after at least one problem (with 'collect', after reading
 * everything it could).
 */
int asi_ykeys_read(asi_yreader_t *r, yaml_node_t *map,
		   const struct asi_ykey *keys, void *base, const char *where);

/* Whether 'map' (a mapping) gives 'name'. */
yaml_node_t *asi_ymap_get(asi_yreader_t *r, yaml_node_t *map, const char *name);

/* 'n' must be of 'type' ("FILE:LINE: KEY: expected a list, not a
 * mapping"); returns 0 or -1. */
int asi_yexpect(asi_yreader_t *r, yaml_node_t *n, yaml_node_type_t type,
		const char *key);

/* One value of a key, as the table reader checks it, for values that live
 * in lists or are read by hand: 0, or -1 after a problem. */
int asi_yget_str(asi_yreader_t *r, yaml_node_t *n, const char *key,
		 const char **out);
int asi_yget_u64(asi_yreader_t *r, yaml_node_t *n, const char *key,
		 uint64_t min, uint64_t max, uint64_t *out);
int asi_yget_i64(asi_yreader_t *r, yaml_node_t *n, const char *key, int64_t min,
		 int64_t max, int64_t *out);
int asi_yget_double(asi_yreader_t *r, yaml_node_t *n, const char *key,
		    double min, double max, double *out);
/* an enumeration as key 'k' of a table describes it */
int asi_yget_enum(asi_yreader_t *r, yaml_node_t *n, const char *key,
		  const struct asi_ykey *k, int *out);

/*
 * Sizes, the same everywhere: a whole number of bytes, optionally with a
 * suffix K, M, G, T (powers of 1000, also KB, MB, GB, TB) or KiB, MiB,
 * GiB, TiB (powers of 1024); B is bytes. Returns 0 with '*out', or -1
 * (EINVAL, ERANGE past 'max' or below 'min').
 */
int asi_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* 'v' bytes as the shortest exact "4GiB", "100MB" or "12345" */
char *asi_format_size(uint64_t v, char *buf, size_t len);

/* The note a reader gives when it read a previous version of a format:
 * "FILE: FORMAT version V (this autosync writes version C): ..." into
 * 'buf'; returns buf, or NULL (buf "") when 'v' is the current one. */
const char *asi_yversion_note(char *buf, size_t len, const char *fname,
			      const char *format, unsigned v, unsigned current,
			      const char *what_changed);

#endif
