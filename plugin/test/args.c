/* Unit tests for the plugin's option and plugstack-argument parsing. */
#include "config.h"

#include <string.h>

#include "args.h"
#include "pconf.h"
#include "tap.h"

static void test_mode(void)
{
	struct as_args a;
	char err[512], big[2048];

	as_args_init(&a);
	ok(a.mode == AS_MODE_UNSET, "mode starts unset");
	ok(as_args_effective_mode(&a, AS_MODE_OFF) == AS_MODE_OFF,
	   "nothing asked: site default off");
	ok(as_args_effective_mode(&a, AS_MODE_AUTO) == AS_MODE_AUTO,
	   "nothing asked: site default auto");

	static const struct {
		const char *val;
		int mode;
	} good[] = {
	    {"auto", AS_MODE_AUTO},	    {"off", AS_MODE_OFF},
	    {"required", AS_MODE_REQUIRED}, {"/tmp/plan.yaml", AS_MODE_PLAN},
	    {"./plan.yaml", AS_MODE_PLAN},
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		as_args_init(&a);
		ok(as_args_set_mode(&a, good[i].val, AS_SRC_OPTION,
				    "--autosync", err, sizeof(err)) == 0 &&
		       a.mode == good[i].mode,
		   "--autosync=%s accepted as %s", good[i].val,
		   as_mode_name(good[i].mode));
	}
	is(a.plan_path, "./plan.yaml", "plan path kept");

	as_args_init(&a);
	ok(as_args_set_mode(&a, "bogus", AS_SRC_OPTION, "--autosync", err,
			    sizeof(err)) < 0,
	   "bogus refused");
	is(err,
	   "autosync: invalid --autosync value 'bogus' (expected auto, "
	   "off, required or a path to a plan file)",
	   "bogus message");
	ok(a.mode == AS_MODE_UNSET, "refused value not stored");
	ok(as_args_set_mode(&a, "", AS_SRC_OPTION, "--autosync", err,
			    sizeof(err)) < 0,
	   "empty refused");
	is(err,
	   "autosync: invalid --autosync value '' (expected auto, off, "
	   "required or a path to a plan file)",
	   "empty message");
	ok(as_args_set_mode(&a, "AUTO", AS_SRC_OPTION, "--autosync", err,
			    sizeof(err)) < 0,
	   "case matters");
	ok(as_args_set_mode(&a, "/tmp/a b", AS_SRC_OPTION, "--autosync", err,
			    sizeof(err)) < 0,
	   "path with a blank refused");
	ok(as_args_set_mode(&a, "/tmp/\x1b[31m", AS_SRC_OPTION, "--autosync",
			    err, sizeof(err)) < 0 &&
	       strstr(err, "'/tmp/\\x1b[31m'") != NULL,
	   "control bytes escaped in the message: %s", err);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(as_args_set_mode(&a, big, AS_SRC_OPTION, "AUTOSYNC_MODE", err,
			    sizeof(err)) < 0 &&
	       strlen(err) < 200 && strstr(err, "...'") &&
	       strstr(err, "invalid AUTOSYNC_MODE value"),
	   "2 KiB garbage refused with a short message");

	/* precedence: an option beats the environment, whatever the order */
	as_args_init(&a);
	as_args_set_mode(&a, "off", AS_SRC_OPTION, "--autosync", err,
			 sizeof(err));
	as_args_set_mode(&a, "auto", AS_SRC_ENV, "AUTOSYNC_MODE", err,
			 sizeof(err));
	ok(a.mode == AS_MODE_OFF, "env does not override the option");
	as_args_init(&a);
	as_args_set_mode(&a, "auto", AS_SRC_ENV, "AUTOSYNC_MODE", err,
			 sizeof(err));
	as_args_set_mode(&a, "required", AS_SRC_OPTION, "--autosync", err,
			 sizeof(err));
	ok(a.mode == AS_MODE_REQUIRED, "option overrides env");
	as_args_set_mode(&a, "required", AS_SRC_OPTION, "--autosync", err,
			 sizeof(err));
	ok(a.mode == AS_MODE_REQUIRED, "callback twice with the same value");
}

static void test_model(void)
{
	struct as_args a;
	char err[512];

	as_args_init(&a);
	ok(as_args_set_model(&a, "resnet50", AS_SRC_OPTION, "--autosync-model",
			     err, sizeof(err)) == 0,
	   "resnet50 accepted");
	ok(as_args_effective_mode(&a, AS_MODE_OFF) == AS_MODE_AUTO,
	   "a model implies auto");
	ok(as_args_set_model(&a, "bert-large", AS_SRC_ENV, "AUTOSYNC_MODEL",
			     err, sizeof(err)) == 0 &&
	       !strcmp(a.model, "resnet50"),
	   "env model does not override the option");
	ok(as_args_set_model(&a, "/home/u/m.yaml", AS_SRC_OPTION,
			     "--autosync-model", err, sizeof(err)) == 0 &&
	       !strcmp(a.model, "/home/u/m.yaml"),
	   "a path is accepted");
	ok(as_args_set_model(&a, "", AS_SRC_OPTION, "--autosync-model", err,
			     sizeof(err)) < 0,
	   "empty model refused");
	is(err,
	   "autosync: invalid --autosync-model value '' (expected a catalog "
	   "model name such as resnet50, or a path to a model file)",
	   "empty model message");
	ok(as_args_set_model(&a, "-rm", AS_SRC_OPTION, "--autosync-model", err,
			     sizeof(err)) < 0,
	   "leading dash refused");
	ok(as_args_set_model(&a, "a;b", AS_SRC_OPTION, "--autosync-model", err,
			     sizeof(err)) < 0,
	   "shell metacharacter refused");
	ok(as_args_set_model(&a, "gpt2+lora", AS_SRC_OPTION, "--autosync-model",
			     err, sizeof(err)) < 0,
	   "'+': not a catalog name (as the planner and the man page have it)");
	as_args_init(&a);
	as_args_set_model(&a, "resnet50", AS_SRC_OPTION, "--autosync-model",
			  err, sizeof(err));
	as_args_set_mode(&a, "off", AS_SRC_OPTION, "--autosync", err,
			 sizeof(err));
	ok(as_args_effective_mode(&a, AS_MODE_AUTO) == AS_MODE_OFF,
	   "explicit off wins over a model");
}

static void test_compression(void)
{
	struct as_args a;
	char err[512];

	as_args_init(&a);
	ok(a.compress == 0, "compression is off unless asked");
	ok(as_args_set_compression(&a, NULL, AS_SRC_OPTION,
				   "--autosync-compression", err,
				   sizeof(err)) == 0 &&
	       a.compress == 1,
	   "--autosync-compression without a value allows it");
	ok(as_args_set_compression(&a, "no", AS_SRC_ENV, "AUTOSYNC_COMPRESSION",
				   err, sizeof(err)) == 0 &&
	       a.compress == 1,
	   "the environment does not override the option");
	ok(as_args_set_compression(&a, "No", AS_SRC_OPTION,
				   "--autosync-compression", err,
				   sizeof(err)) == 0 &&
	       a.compress == 0,
	   "=No turns it off (the one boolean dialect, case-blind)");
	ok(as_args_set_compression(&a, "maybe\n", AS_SRC_OPTION,
				   "--autosync-compression", err,
				   sizeof(err)) < 0 &&
	       a.compress == 0,
	   "a bad value is refused and changes nothing");
	is(err,
	   "autosync: invalid --autosync-compression value 'maybe\\x0a' "
	   "(expected yes or no)",
	   "bad value message, escaped");
}

static void test_pconf(void)
{
	struct as_pconf pc;
	char err[512];
	char *good[] = {"config=/etc/autosync/autosync.yaml", "strict=yes"};
	char *unknown[] = {"config=/etc/a.yaml", "colour=blue"};
	char *noeq[] = {"strict"};
	char *rel[] = {"config=etc/a.yaml"};
	char *dup[] = {"strict=0", "strict=1"};
	char *badbool[] = {"strict=maybe"};
	char *noagree[] = {"agree=no"};
	char *ports[] = {"agree_ports=60001-60100"};
	char *badports[][1] = {{"agree_ports=10-5"},	{"agree_ports=0-5"},
			       {"agree_ports=1-70000"}, {"agree_ports=a-b"},
			       {"agree_ports=5"},	{"agree_ports=-5-6"},
			       {"agree_ports=5-6x"}};

	ok(as_pconf_parse(&pc, 0, NULL, err, sizeof(err)) == 0 &&
	       pc.config[0] == '\0' && pc.strict == 0 && pc.agree == 1,
	   "no arguments: defaults (nodes agree through srun)");
	ok(as_pconf_parse(&pc, 1, noagree, err, sizeof(err)) == 0 &&
	       pc.agree == 0,
	   "agree=no");
	ok(as_pconf_parse(&pc, 1, ports, err, sizeof(err)) == 0 &&
	       pc.agree_ports[0] == 60001 && pc.agree_ports[1] == 60100,
	   "agree_ports=60001-60100");
	{
		int all = 1;
		for (size_t i = 0; i < sizeof(badports) / sizeof(badports[0]);
		     i++)
			all &= as_pconf_parse(&pc, 1, badports[i], err,
					      sizeof(err)) < 0;
		ok(all, "agree_ports: reversed, 0, over 65535, not numbers, "
			"one number, signs, trailing text: refused");
		is(err,
		   "autosync: plugstack argument 'agree_ports=5-6x' needs a "
		   "port range LO-HI (1 to 65535)",
		   "and says what it needs");
	}
	ok(as_pconf_parse(&pc, 2, good, err, sizeof(err)) == 0,
	   "good arguments");
	is(pc.config, "/etc/autosync/autosync.yaml", "config path");
	ok(pc.strict == 1, "strict=yes");
	ok(as_pconf_parse(&pc, 2, unknown, err, sizeof(err)) < 0,
	   "unknown key refused");
	is(err,
	   "autosync: unknown plugstack argument 'colour=blue' (known: "
	   "config=PATH, strict=BOOL, agree=BOOL, agree_ports=LO-HI)",
	   "unknown key message");
	ok(pc.config[0] == '\0', "defaults after an error");
	ok(as_pconf_parse(&pc, 1, noeq, err, sizeof(err)) < 0,
	   "no '=' refused");
	is(err, "autosync: plugstack argument 'strict' is not key=value",
	   "no '=' message");
	ok(as_pconf_parse(&pc, 1, rel, err, sizeof(err)) < 0,
	   "relative config path refused");
	ok(as_pconf_parse(&pc, 2, dup, err, sizeof(err)) < 0 &&
	       !strcmp(err,
		       "autosync: plugstack argument 'strict' given twice"),
	   "duplicate refused");
	ok(as_pconf_parse(&pc, 1, badbool, err, sizeof(err)) < 0, "bad bool");
}

int main(void)
{
	plan(NO_PLAN);
	test_mode();
	test_model();
	test_compression();
	test_pconf();
	return done_testing();
}
