/* Tests of 'autosync topo' (the built CLI, run through the shell): this
 * machine prints a valid topology (text and YAML), NCCL XML output parses
 * back, options and errors give the documented exit codes. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml.h>

#include "autosync/topology.h"
#include "tap.h"
#include "fixdir.h"

static char exe[1024], fixdir[1024], tmpdir[256];
static char out[1 << 18];

/* run 'exe topo ARGS', stdout into out[], stderr into tmpdir/err; exit code */
static int run(const char *args)
{
	char cmd[4096];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' topo %s 2>'%s/err'", exe, args,
		 tmpdir);
	if (!(p = popen(cmd, "r")))
		return -1;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int err_has(const char *needle)
{
	char path[512], buf[4096];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/err", tmpdir);
	if (!(fp = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static int yaml_ok(const char *s)
{
	yaml_parser_t p;
	yaml_document_t doc;
	int ok = 0;

	if (!yaml_parser_initialize(&p))
		return 0;
	yaml_parser_set_input_string(&p, (const unsigned char *)s, strlen(s));
	if (yaml_parser_load(&p, &doc)) {
		yaml_node_t *root = yaml_document_get_root_node(&doc);

		ok = root && root->type == YAML_MAPPING_NODE;
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&p);
	return ok;
}

int main(void)
{
	const char *b = getenv("AUTOSYNC_BUILDDIR");
	char tmpl[] = "/tmp/autosync-topo-cli.XXXXXX", args[2048], xml[512];
	int have_fix;

	plan(NO_PLAN);
	snprintf(exe, sizeof(exe), "%s/cli/autosync", b && *b ? b : ".");
	if (access(exe, X_OK) != 0) {
		skip(1, "%s not built", exe);
		return done_testing();
	}
	if (!mkdtemp(tmpl))
		bail_out("mkdtemp failed");
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	have_fix = find_fixdir(fixdir, sizeof(fixdir)) == 0;
	/* the live machine must not be restricted by the caller's job */
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("SLURM_STEP_GPUS");
	unsetenv("SLURM_JOB_GPUS");

	ok(run("") == 0, "autosync topo on this machine exits 0");
	ok(strstr(out, "topology: live") && strstr(out, "GPUs:") &&
	       strstr(out, "NICs:"),
	   "text table printed");
	ok(run("--format yaml") == 0 && yaml_ok(out),
	   "--format yaml is a YAML mapping");
	ok(strstr(out, "source: live") && strstr(out, "gpus"),
	   "YAML names the source and the GPU list");
	ok(run("--env") == 0 && strstr(out, "rank 0:"), "--env prints rank 0");
	snprintf(xml, sizeof(xml), "%s/live.xml", tmpdir);
	snprintf(args, sizeof(args), "--nccl-xml '%s'", xml);
	ok(run(args) == 0, "--nccl-xml FILE");
	{
		autosync_error_t err;
		autosync_topo_t *t = autosync_topo_load_nccl_xml(xml, &err);

		ok(t != NULL, "live NCCL XML parses (%s)", t ? "" : err.text);
		autosync_topo_destroy(t);
	}
	ok(run("--nccl-xml -") == 0 &&
	       !strncmp(out, "<system version=\"1\">", 20),
	   "--nccl-xml - writes stdout");
	ok(run("--format json") == 2 && err_has("text or yaml"),
	   "bad --format: exit 2");
	ok(run("--bogus") == 2, "unknown option: exit 2");
	ok(run("extra") == 2, "stray argument: exit 2");
	ok(run("--help") == 0 && strstr(out, "--nccl-xml"), "--help");
	ok(run("--input /nonexistent.xml") == 1 && err_has("No such file"),
	   "missing input: exit 1");
	ok(run("--gpus "
	       "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,"
	       "24,25,26,27,28,29,30,31,"
	       "32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,"
	       "53,54,55,56,57,58,59,60,61,62,"
	       "63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,"
	       "84,85,86,87,88,89,90,91,92,93,"
	       "94,95,96,97,98,99,100,101,102,103,104,105,106,107,108,109,110,"
	       "111,112,113,114,115,116,117,118,"
	       "119,120,121,122,123,124,125,126,127,128") == 1 &&
	       err_has("does not exist"),
	   "--gpus naming absent GPUs: exit 1");
	ok(run("--cpus nonsense") == 1 && err_has("CPU set"),
	   "bad --cpus: exit 1");
	if (have_fix) {
		snprintf(args, sizeof(args),
			 "--input '%s/hwloc-juwels-booster-4xA100-4xHDR.xml' "
			 "--gpus 3,1 --env",
			 fixdir);
		ok(run(args) == 0, "juwels --gpus 3,1 --env");
		ok(strstr(out, "GPUs: 2 of 4") && strstr(out, "0000:c4:00.0") &&
		       strstr(out, "mlx5_3 (pcie_switch)"),
		   "restricted table with nearest NIC");
		ok(strstr(
		       out,
		       "rank 0: NCCL_IB_HCA==mlx5_3:1 NCCL_NET_GDR_LEVEL=PXB"),
		   "rank 0 environment");
		snprintf(
		    args, sizeof(args),
		    "--input '%s/nccl-aws-p4d-8xA100-4xEFA.xml' --format yaml",
		    fixdir);
		ok(run(args) == 0 && yaml_ok(out) &&
		       strstr(out, "source: nccl-xml"),
		   "NCCL input as YAML");
		snprintf(args, sizeof(args),
			 "--input '%s/nccl-azure-ndv4-8xA100-8xHDR.xml' "
			 "--nccl-xml -",
			 fixdir);
		ok(run(args) == 0 && strstr(out, "busid=\"000e:00:00.0\""),
		   "NCCL in, NCCL out");
	} else {
		skip(1, "tests/fixtures/topologies not found");
	}
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/err", tmpdir);
		unlink(path);
		unlink(xml);
		rmdir(tmpdir);
	}
	return done_testing();
}
