/*
 * pconf.h - plugstack.conf arguments (the words after the plugin's path),
 * parsed from a table. Pure C, unit-tested.
 */
#ifndef AUTOSYNC_PLUGIN_PCONF_H
#define AUTOSYNC_PLUGIN_PCONF_H

#include <limits.h>
#include <stddef.h>

struct as_pconf {
	char config[PATH_MAX]; /* site config (YAML); "" = none */
	int strict; /* 1: treat every autosync error as --autosync=required */
	int agree;  /* 1 (default): a multi-node step's nodes agree on one
		     * plan through srun (autosync/agree.h) */
	unsigned agree_ports[2]; /* srun listens in lo..hi; {0, 0}: any */
};

/* Fill 'pc' with defaults, then apply 'av'. On an unknown key, a missing
 * '=', a bad value or a duplicate key, return -1 with a one-line message in
 * 'err' naming the argument; 'pc' then holds the defaults. */
int as_pconf_parse(struct as_pconf *pc, int ac, char **av, char *err,
		   size_t errlen);

#endif
