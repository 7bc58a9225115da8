/* config.c - 'autosync config check [--node] FILE': validate a site
 * configuration; with --node, also against this node (nodecheck.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "autosync/siteconf.h"
#include "cli.h"

#define WHICH CLI_IN_TOPOLOGY
#define NODE_MODEL "resnet50"

static void print_problem(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s\n", CLI_Q(msg));
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: autosync config check [--node [options]] FILE\n\n"
		"Validate an autosync site configuration (autosync.yaml(5)) "
		"and print every\nproblem as FILE:LINE: message; exit 0 when "
		"it is valid, 1 when not.\nWith --node, also check it against "
		"this node (its NICs and GPUs, the files\nit names, the "
		"catalog) and end with one line per mode the site allows: "
		"what\na job given the whole node would get.\n\n");
	cli_help(fp, "    --node", "check against this node too");
	cli_input_usage(fp, WHICH,
			"the site's topology_xml, else live: "
			"this node",
			"all", NULL);
	cli_help(fp, "-m, --model NAME|FILE",
		 "the model of the mode lines (default " NODE_MODEL ")");
	cli_help(fp, "-h, --help", "this help");
}

enum { OPT_NODE = CLI_OPT_OWN };

static const struct option opts[] = {
    {"node", no_argument, NULL, OPT_NODE},
    CLI_TOPOLOGY_OPTIONS,
    {"model", required_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* The file alone: 0 valid, 1 not. */
static int check_file(const char *path)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s;
	int n = autosync_siteconf_check(path, print_problem, NULL, &err);

	if (n < 0) {
		fprintf(stderr, "autosync: %s\n", CLI_Q(err.text));
		return 1;
	}
	if (n > 0) {
		fprintf(stderr, "%s: %d problem%s\n", CLI_Q(path), n,
			n == 1 ? "" : "s");
		return 1;
	}
	/* a previous version reads fine: say so, once */
	s = autosync_siteconf_load(path, NULL);
	if (s && autosync_siteconf_note(s))
		fprintf(stderr, "autosync config: %s\n",
			autosync_siteconf_note(s));
	autosync_siteconf_destroy(s);
	printf("%s: valid\n", path);
	return 0;
}

static int check_node(const char *path, struct cli_input *in, const char *model)
{
	autosync_error_t err = {.text = ""};
	autosync_siteconf_t *s = autosync_siteconf_load(path, &err);
	int rc;

	if (!s) {
		fprintf(stderr, "autosync: %s\n", CLI_Q(err.text));
		return 1;
	}
	if (!in->gpus)
		in->gpus = "all"; /* a job given the whole node */
	fflush(stdout);
	rc = cli_config_node(path, s, in, model);
	autosync_siteconf_destroy(s);
	return rc;
}

static int usage_error(const char *msg)
{
	fprintf(stderr, "autosync config: %s\nTry 'autosync help config'.\n",
		CLI_Q(msg));
	return 2;
}

int autosync_cmd_config(int argc, char **argv)
{
	struct cli_input in = {0};
	const char *model = NULL;
	int c, r, node = 0, rc;

	if (argc >= 2 && argv[1][0] != '-' && strcmp(argv[1], "check")) {
		static const char *const subs[] = {"check"};
		return cli_bad_value("config", "subcommand", argv[1], subs, 1);
	}
	if (argc >= 2 && argv[1][0] != '-') {
		argc--;
		argv++;
	} else if (!(argc == 2 &&
		     (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
		return usage_error("usage: autosync config check FILE");
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":" CLI_TOPOLOGY_SHORT "m:h", opts,
				NULL)) != -1) {
		if ((r = cli_input_option("config", WHICH, c, optarg, &in)) < 0)
			return 2;
		if (r)
			continue;
		switch (c) {
		case OPT_NODE:
			node = 1;
			break;
		case 'm':
			model = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return cli_bad_option("config", c, argv, opts);
		}
	}
	if (optind != argc - 1)
		return usage_error("usage: autosync config check FILE");
	if (!node && (in.topology || in.gpus || model))
		return usage_error(
		    "--topology, --gpus and --model need --node");
	if ((rc = check_file(argv[optind])) || !node)
		return rc;
	return check_node(argv[optind], &in, model ? model : NODE_MODEL);
}
