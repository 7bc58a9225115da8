/* pconf.c - see pconf.h */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "pconf.h"
#include "common/text.h"

enum key_type { KEY_PATH, KEY_BOOL, KEY_PORTS };

static const struct key {
	const char *name;
	enum key_type type;
	size_t offset;
} keys[] = {
    {"config", KEY_PATH, offsetof(struct as_pconf, config)},
    {"strict", KEY_BOOL, offsetof(struct as_pconf, strict)},
    {"agree", KEY_BOOL, offsetof(struct as_pconf, agree)},
    {"agree_ports", KEY_PORTS, offsetof(struct as_pconf, agree_ports)},
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* "LO-HI", decimal, 1 <= LO <= HI <= 65535 */
static int parse_ports(const char *v, unsigned *pr)
{
	char *e;
	unsigned long lo, hi;

	if (*v < '0' || *v > '9')
		return -1;
	lo = strtoul(v, &e, 10);
	if (*e != '-' || e[1] < '0' || e[1] > '9')
		return -1;
	hi = strtoul(e + 1, &e, 10);
	if (*e || lo < 1 || hi > 65535 || lo > hi)
		return -1;
	pr[0] = (unsigned)lo;
	pr[1] = (unsigned)hi;
	return 0;
}

static void defaults(struct as_pconf *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->agree = 1;
}

int as_pconf_parse(struct as_pconf *pc, int ac, char **av, char *err,
		   size_t errlen)
{
	int seen[NKEYS] = {0};
	char q[96];

	defaults(pc);
	for (int i = 0; i < ac; i++) {
		const char *eq = av[i] ? strchr(av[i], '=') : NULL;
		const struct key *k = NULL;
		size_t idx = 0;
		const char *needs = NULL;

		if (!eq) {
			snprintf(err, errlen,
				 "autosync: plugstack argument '%s' is not "
				 "key=value",
				 asi_quote(av[i], q, sizeof(q)));
			goto fail;
		}
		for (idx = 0; idx < NKEYS; idx++)
			if (strlen(keys[idx].name) == (size_t)(eq - av[i]) &&
			    !strncmp(keys[idx].name, av[i],
				     (size_t)(eq - av[i]))) {
				k = &keys[idx];
				break;
			}
		if (!k) {
			snprintf(
			    err, errlen,
			    "autosync: unknown plugstack argument '%s' "
			    "(known: config=PATH, strict=BOOL, agree=BOOL, "
			    "agree_ports=LO-HI)",
			    asi_quote(av[i], q, sizeof(q)));
			goto fail;
		}
		if (seen[idx]++) {
			snprintf(
			    err, errlen,
			    "autosync: plugstack argument '%s' given twice",
			    k->name);
			goto fail;
		}
		switch (k->type) {
		case KEY_PATH:
			if (eq[1] != '/' || strlen(eq + 1) >= PATH_MAX)
				needs = "an absolute path";
			else
				snprintf((char *)pc + k->offset, PATH_MAX, "%s",
					 eq + 1);
			break;
		case KEY_PORTS:
			if (parse_ports(eq + 1, (unsigned *)((char *)pc +
							     k->offset)) < 0)
				needs = "a port range LO-HI (1 to 65535)";
			break;
		case KEY_BOOL: {
			int b = asi_parse_bool(eq + 1);
			if (b < 0)
				needs = "a boolean (1/true/yes/y or "
					"0/false/no/n)";
			else
				*(int *)((char *)pc + k->offset) = b;
			break;
		}
		}
		if (needs) {
			snprintf(err, errlen,
				 "autosync: plugstack argument '%s' needs %s",
				 asi_quote(av[i], q, sizeof(q)), needs);
			goto fail;
		}
	}
	return 0;
fail:
	defaults(pc);
	return -1;
}
