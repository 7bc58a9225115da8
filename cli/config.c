/* config.c - 'autosync config check FILE': validate a site configuration. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "autosync/siteconf.h"
#include "cli.h"

static void print_problem(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: autosync config check FILE\n\n"
		"Validate an autosync site configuration (autosync.yaml(5)) "
		"and print every\nproblem as FILE:LINE: message; exit 0 when "
		"it is valid, 1 when not.\n\n");
	cli_help(fp, "-h, --help", "this help");
}

int autosync_cmd_config(int argc, char **argv)
{
	autosync_error_t err = {.text = ""};
	int n;

	if (argc == 2 &&
	    (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "check")) {
		static const char *const subs[] = {"check"};
		return cli_bad_value("config", "subcommand", argv[1], subs, 1);
	}
	if (argc != 3) {
		fprintf(stderr, "autosync config: usage: autosync config check "
				"FILE\nTry 'autosync help config'.\n");
		return 2;
	}
	n = autosync_siteconf_check(argv[2], print_problem, NULL, &err);
	if (n < 0) {
		fprintf(stderr, "autosync: %s\n", err.text);
		return 1;
	}
	if (n > 0) {
		fprintf(stderr, "%s: %d problem%s\n", argv[2], n,
			n == 1 ? "" : "s");
		return 1;
	}
	{
		/* a previous version reads fine: say so, once */
		autosync_siteconf_t *s = autosync_siteconf_load(argv[2], NULL);
		if (s && autosync_siteconf_note(s))
			fprintf(stderr, "autosync config: %s\n",
				autosync_siteconf_note(s));
		autosync_siteconf_destroy(s);
	}
	printf("%s: valid\n", argv[2]);
	return 0;
}
