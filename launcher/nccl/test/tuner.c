/* tuner.c - the built libnccl-tuner-autosync.so, dlopened and called as
 * NCCL 2.28 does (init / getCollInfo on a float[7][3] behind a float** /
 * finalize). Each scenario runs in a child process, since the plugin reads
 * its plan once per process. */
#include "config.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nccl_abi.h"
#include "tap.h"

#define MAXCALLS 8

struct call {
	int func;
	size_t bytes;
	int kind; /* 0; 1: NCCL's nRanks == 1 table (only ring/simple = 0);
		     2: NCCL rates NVLS/Simple cheapest */
};

struct result {
	int ok; /* child got that far */
	int rc_init, rc[MAXCALLS], rc_fini;
	float cost[MAXCALLS][AS_NALGOS][AS_NPROTOS];
	int nch[MAXCALLS];
	as_tuner_constants_v5_t k;
	char log[4096];
};

static char plugin[4096], srcdir[4096];
static char logbuf[4096];

static void logger(int level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	size_t n = strlen(logbuf);
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (n + 8 >= sizeof(logbuf))
		return;
	n += (size_t)snprintf(logbuf + n, sizeof(logbuf) - n, "%d:", level);
	va_start(ap, fmt);
	vsnprintf(logbuf + n, sizeof(logbuf) - n, fmt, ap);
	va_end(ap);
	n = strlen(logbuf);
	if (n + 1 < sizeof(logbuf))
		strcat(logbuf, "\n");
}

static float base(int a, int p)
{
	return 100.0f + (float)(10 * a + p);
}

static void table(float c[AS_NALGOS][AS_NPROTOS], int kind)
{
	int ranks1 = kind == 1;

	for (int a = 0; a < AS_NALGOS; a++)
		for (int p = 0; p < AS_NPROTOS; p++)
			c[a][p] = ranks1 ? -1.0f : base(a, p);
	if (ranks1)
		c[AS_ALGO_RING][AS_PROTO_SIMPLE] = 0.0f;
	else {
		/* NCCL disabled these (e.g. by topology): must stay -1 */
		c[AS_ALGO_TREE][AS_PROTO_LL] = -1.0f;
		c[AS_ALGO_COLLNET_DIRECT][0] = c[AS_ALGO_COLLNET_DIRECT][1] =
		    c[AS_ALGO_COLLNET_DIRECT][2] = -1.0f;
		if (kind == 2)
			c[AS_ALGO_NVLS][AS_PROTO_SIMPLE] = 50.0f;
	}
}

static void child(const char *const *env, int version, size_t nranks,
		  size_t nnodes, const struct call *calls, size_t ncalls,
		  int ninit, struct result *res)
{
	void *h, *ctx = NULL, *ctx2 = NULL;
	as_nvl_domain_info_v5_t nvl = {1, 4, 4};

	unsetenv("AUTOSYNC_PLAN");
	unsetenv("AUTOSYNC_TUNER_RULES");
	unsetenv("AUTOSYNC_TUNER_CALIBRATE");
	unsetenv("AUTOSYNC_INJECTED");
	unsetenv("NCCL_ALGO");
	unsetenv("NCCL_PROTO");
	for (size_t i = 0; env && env[i]; i++) {
		char name[256], val[4096];
		const char *eq = strchr(env[i], '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]),
			 env[i]);
		snprintf(val, sizeof(val), "%s", eq + 1);
		if (strstr(val, "@SRC@")) {
			char tmp[4096];
			snprintf(tmp, sizeof(tmp), "%s%s", srcdir,
				 strstr(val, "@SRC@") + 5);
			snprintf(val, sizeof(val), "%s", tmp);
		}
		setenv(name, val, 1);
	}
	if (!(h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL)))
		return;
	for (int a = 0; a < AS_NALGOS; a++)
		for (int p = 0; p < AS_NPROTOS; p++)
			res->k.hwLatencies[AS_HW_NET][a][p] = 7.0;
	if (version == 5) {
		const as_tuner_v5_t *t = dlsym(h, "ncclTunerPlugin_v5");
		if (!t)
			return;
		res->rc_init = t->init(&ctx, 0x1234, nranks, nnodes, logger,
				       &nvl, &res->k);
		for (int i = 1; i < ninit; i++)
			t->init(&ctx2, 0x5678, nranks, nnodes, logger, &nvl,
				&res->k);
		for (size_t i = 0; i < ncalls; i++) {
			table(res->cost[i], calls[i].kind);
			res->nch[i] = 0;
			res->rc[i] =
			    t->getCollInfo(ctx, calls[i].func, calls[i].bytes,
					   1, (float **)res->cost[i], AS_NALGOS,
					   AS_NPROTOS, 0, &res->nch[i]);
		}
		res->rc_fini = t->finalize(ctx);
		if (ctx2)
			t->finalize(ctx2);
	} else if (version == 4) {
		const as_tuner_v4_t *t = dlsym(h, "ncclTunerPlugin_v4");
		if (!t)
			return;
		res->rc_init = t->init(nranks, nnodes, logger, &ctx);
		for (size_t i = 0; i < ncalls; i++) {
			table(res->cost[i], calls[i].kind);
			res->rc[i] =
			    t->getCollInfo(ctx, calls[i].func, calls[i].bytes,
					   1, (float **)res->cost[i], AS_NALGOS,
					   AS_NPROTOS, 0, &res->nch[i]);
		}
		res->rc_fini = t->destroy(ctx);
	} else {
		const as_tuner_v3_t *t = dlsym(h, "ncclTunerPlugin_v3");
		if (!t)
			return;
		res->rc_init = t->init(nranks, nnodes, logger, &ctx);
		for (size_t i = 0; i < ncalls; i++) {
			table(res->cost[i], calls[i].kind);
			res->rc[i] =
			    t->getCollInfo(ctx, calls[i].func, calls[i].bytes,
					   1, (float **)res->cost[i], AS_NALGOS,
					   AS_NPROTOS, &res->nch[i]);
		}
		res->rc_fini = t->destroy(ctx);
	}
	snprintf(res->log, sizeof(res->log), "%s", logbuf);
	res->ok = 1;
	dlclose(h);
}

static int scenario(const char *const *env, int version, size_t nranks,
		    size_t nnodes, const struct call *calls, size_t ncalls,
		    int ninit, struct result *res)
{
	int fd[2], st;
	pid_t pid;
	size_t got = 0;

	memset(res, 0, sizeof(*res));
	if (pipe(fd) < 0 || (pid = fork()) < 0)
		bail_out("pipe/fork");
	if (pid == 0) {
		struct result r;
		memset(&r, 0, sizeof(r));
		close(fd[0]);
		child(env, version, nranks, nnodes, calls, ncalls, ninit, &r);
		if (write(fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	while (got < sizeof(*res)) {
		ssize_t n = read(fd[0], (char *)res + got, sizeof(*res) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	waitpid(pid, &st, 0);
	return got == sizeof(*res) && res->ok;
}

/* Entries of call i that differ from the table NCCL passed: "a/p=v ..." */
static void changes(const struct result *r, size_t i, int kind, char *out,
		    size_t len)
{
	float want[AS_NALGOS][AS_NPROTOS];
	size_t o = 0;

	table(want, kind);
	out[0] = '\0';
	for (int a = 0; a < AS_NALGOS; a++)
		for (int p = 0; p < AS_NPROTOS; p++)
			if (r->cost[i][a][p] != want[a][p] && o < len)
				o += (size_t)snprintf(out + o, len - o,
						      "%s%d/%d=%g",
						      o ? " " : "", a, p,
						      (double)r->cost[i][a][p]);
}

int main(void)
{
	const char *b = getenv("AUTOSYNC_BUILDDIR"),
		   *s = getenv("AUTOSYNC_SRCDIR");
	struct result *r = calloc(1, sizeof(*r));
	char ch[256];
	const struct call calls[] = {
	    {AS_FUNC_ALLREDUCE, 65536, 0},   /* tree/ll128, 4 channels */
	    {AS_FUNC_ALLREDUCE, 4194304, 0}, /* ring/ll128, 8 channels */
	    {AS_FUNC_ALLREDUCE, 268435456,
	     0},			     /* ring/simple, NCCL's channels */
	    {AS_FUNC_ALLGATHER, 2097152, 0}, /* the table's gap */
	    {AS_FUNC_ALLREDUCE, 1024, 0},    /* tree/ll, but ll disabled */
	    {AS_FUNC_ALLREDUCE, 65536, 1},   /* nRanks == 1 table */
	    {AS_FUNC_ALLGATHER, 524288, 0},  /* ring/ll, 1 channel */
	    {AS_FUNC_ALLREDUCE, 4194304, 2}, /* NVLS rated cheaper */
	};
	const size_t ncalls = sizeof(calls) / sizeof(calls[0]);

	plan(NO_PLAN);
	if (!r)
		bail_out("out of memory");
	snprintf(plugin, sizeof(plugin),
		 "%s/launcher/nccl/.libs/libnccl-tuner-autosync.so",
		 b ? b : ".");
	snprintf(srcdir, sizeof(srcdir), "%s", s ? s : ".");
	{
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		ok(h != NULL, "dlopen %s",
		   h ? "libnccl-tuner-autosync.so" : dlerror());
		if (!h)
			return done_testing();
		ok(dlsym(h, "ncclTunerPlugin_v5") &&
		       dlsym(h, "ncclTunerPlugin_v4") &&
		       dlsym(h, "ncclTunerPlugin_v3"),
		   "exports v5, v4 and v3");
		ok(!dlsym(h, "as_tune_match") &&
		       !dlsym(h, "autosync_plan_load"),
		   "and nothing of autosync's (version script)");
		is(((const as_tuner_v5_t *)dlsym(h, "ncclTunerPlugin_v5"))
		       ->name,
		   "autosync", "its name");
		dlclose(h);
	}

	/* 1. the plan's NCCL table on a communicator of its shape (2 x 4) */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    NULL};
		ok(scenario(env, 5, 8, 2, calls, ncalls, 1, r),
		   "plan scenario ran");
		ok(r->rc_init == 0 && r->rc_fini == 0,
		   "init and finalize succeed");
		int allok = 1;
		for (size_t i = 0; i < ncalls; i++)
			allok &= r->rc[i] == 0;
		ok(allok, "getCollInfo always returns ncclSuccess");
		changes(r, 0, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "0/1=0") && r->nch[0] == 4,
		   "64 KiB all-reduce: exactly Tree/LL128 lowered to 0, 4 "
		   "channels (%s, %d)",
		   ch, r->nch[0]);
		ok(r->cost[0][AS_ALGO_TREE][AS_PROTO_LL] == -1.0f &&
		       r->cost[0][AS_ALGO_COLLNET_DIRECT][2] == -1.0f,
		   "disabled entries stay -1");
		changes(r, 1, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "1/1=0") && r->nch[1] == 8,
		   "4 MiB all-reduce: Ring/LL128, 8 channels (%s, %d)", ch,
		   r->nch[1]);
		changes(r, 2, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "1/2=0") && r->nch[2] == 0,
		   "256 MiB all-reduce: Ring/Simple, channels left to NCCL "
		   "(%s, %d)",
		   ch, r->nch[2]);
		changes(r, 3, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "") && r->nch[3] == 0,
		   "2 MiB all-gather (no rule): untouched");
		changes(r, 4, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "0/1=0") && r->nch[4] == 2,
		   "1 KiB all-reduce: the rule's Tree/LL is disabled, so "
		   "Tree/LL128 (the "
		   "cheapest enabled Tree entry), 2 channels (%s, %d)",
		   ch, r->nch[4]);
		changes(r, 5, 1, ch, sizeof(ch));
		is(ch, "",
		   "a one-rank table (only Ring/Simple set): Tree is never "
		   "revived");
		changes(r, 6, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "1/0=0") && r->nch[6] == 1,
		   "512 KiB all-gather: Ring/LL on 1 channel (%s, %d)", ch,
		   r->nch[6]);
		changes(r, 7, 2, ch, sizeof(ch));
		ok(!strcmp(ch, "") && r->nch[7] == 0,
		   "4 MiB all-reduce when NCCL rates NVLS cheaper: left to "
		   "NCCL (%s)",
		   ch);
		ok(strstr(r->log, "3:autosync tuner: plan ") &&
		       strstr(r->log, "6 rule(s) from the plan, 0 from"),
		   "one INFO line names the plan and its rules");
		ok(strstr(r->log, "allreduce 65536 bytes on 8 ranks: "
				  "tree/ll128, 4 channels "
				  "(plan rule [32768, 1048576))") != NULL,
		   "decisions are logged");
	}
	/* 1b. a plan without a table: derived, and said so */
	{
		const char *env[] = {"AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/"
				     "plans/ring-tree.yaml",
				     NULL};
		scenario(env, 5, 8, 2, calls, 2, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		ok(!strncmp(ch, "0/", 2) && !strchr(ch, ' '),
		   "64 KiB (tree buckets): one Tree entry lowered (%s)", ch);
		changes(r, 1, 0, ch, sizeof(ch));
		ok(!strncmp(ch, "1/", 2) && !strchr(ch, ' '),
		   "4 MiB (ring bucket): one Ring entry lowered (%s)", ch);
		ok(strstr(r->log, "(it has no nccl table: derived with the "
				  "default cost constants)") != NULL,
		   "the log says the table was derived");
	}
	/* 1c. how many decisions are logged */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    "AUTOSYNC_TUNER_LOG=8", NULL};
		int n = 0;
		scenario(env, 5, 8, 2, calls, ncalls, 1, r);
		for (const char *p = r->log; (p = strstr(p, " ranks: ")); p++)
			n++;
		ok(n == 8, "AUTOSYNC_TUNER_LOG=8: all 8 decisions logged (%d)",
		   n);
		ok(strstr(r->log,
			  "allreduce 1024 bytes on 8 ranks: tree/ll128, 2 "
			  "channels, "
			  "the rule's ll disabled (plan rule [0, 32768))") !=
		       NULL,
		   "a protocol NCCL disabled is named in the decision");
		ok(strstr(r->log,
			  "allreduce 4194304 bytes on 8 ranks: NCCL's choice "
			  "(it rates "
			  "an algorithm the plan does not model faster)") !=
		       NULL,
		   "so is leaving the choice to NCCL for an unmodelled "
		   "algorithm");
		const char *env2[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    NULL};
		scenario(env2, 5, 8, 2, calls, ncalls, 1, r);
		n = 0;
		for (const char *p = r->log; (p = strstr(p, " ranks: ")); p++)
			n++;
		ok(n == 4, "by default the first 4 per communicator (%d)", n);
	}
	/* 2. same plan, another communicator shape: nothing */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    NULL};
		scenario(env, 5, 16, 4, calls, 2, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		is(ch, "",
		   "a 4 x 4 communicator (not the plan's 2 x 4): untouched");
	}
	/* 3. the user's NCCL_ALGO / NCCL_PROTO: step aside */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    "NCCL_ALGO=Tree", NULL};
		scenario(env, 5, 8, 2, calls, 2, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		is(ch, "", "user NCCL_ALGO: 64 KiB untouched");
		changes(r, 1, 0, ch, sizeof(ch));
		is(ch, "", "user NCCL_ALGO: 4 MiB untouched");
		ok(strstr(r->log, "2:autosync tuner: NCCL_ALGO or NCCL_PROTO "
				  "set by the user") != NULL,
		   "and says so (WARN)");
		const char *env2[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    "NCCL_PROTO=Simple", NULL};
		scenario(env2, 5, 8, 2, calls, 2, 1, r);
		changes(r, 1, 0, ch, sizeof(ch));
		is(ch, "", "user NCCL_PROTO: untouched");
		const char *env3[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    "NCCL_ALGO=Ring,Tree",
		    "AUTOSYNC_INJECTED=NCCL_TOPO_FILE,NCCL_ALGO", NULL};
		scenario(env3, 5, 8, 2, calls, 2, 1, r);
		changes(r, 1, 0, ch, sizeof(ch));
		is(ch, "1/1=0",
		   "NCCL_ALGO injected by autosync (listed in "
		   "AUTOSYNC_INJECTED): still tuned");
	}
	/* 4. a missing / invalid plan, no plan: nothing, said once */
	{
		const char *env[] = {"AUTOSYNC_PLAN=/nonexistent/plan.yaml",
				     NULL};
		scenario(env, 5, 8, 2, calls, 2, 3, r);
		changes(r, 0, 0, ch, sizeof(ch));
		is(ch, "", "missing plan: untouched");
		ok(r->rc_init == 0 && r->rc[0] == 0, "and no error");
		ok(strstr(r->log,
			  "2:autosync tuner: plan /nonexistent/plan.yaml") !=
		       NULL,
		   "a warning names the plan");
		{
			int n = 0;
			for (const char *p = r->log;
			     (p = strstr(p, "changing nothing")); p++)
				n++;
			ok(n == 1, "said exactly once (%d)", n);
		}
		const char *env2[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/rules.csv", NULL};
		scenario(env2, 5, 8, 2, calls, 2, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "") && strstr(r->log, "2:autosync tuner: plan "),
		   "a file that is not a plan: untouched, one warning");
		scenario(NULL, 5, 8, 2, calls, 2, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "") && strstr(r->log, "no AUTOSYNC_PLAN set"),
		   "no AUTOSYNC_PLAN: untouched, says so");
		const char *env3[] = {
		    "AUTOSYNC_PLAN=/nonexistent/\x1b[31m.yaml", NULL};
		scenario(env3, 5, 8, 2, calls, 2, 1, r);
		ok(strstr(r->log, "plan /nonexistent/\\x1b[31m.yaml") &&
		       !strchr(r->log, '\x1b'),
		   "a plan path with an escape sequence: escaped in NCCL's "
		   "log");
	}
	/* 5. a rules file: protocol and channels per size range */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    "AUTOSYNC_TUNER_RULES=@SRC@/launcher/nccl/test/rules.csv",
		    NULL};
		const struct call c2[] = {
		    {AS_FUNC_ALLREDUCE, 4096, 0},
		    {AS_FUNC_ALLREDUCE, 4194304, 0},
		    {AS_FUNC_ALLGATHER, 1048576, 0},
		    {AS_FUNC_ALLREDUCE, 65536, 0},
		};
		scenario(env, 5, 8, 2, c2, 4, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		is(ch, "0/1=0",
		   "4 KiB: the file's tree/ll rule, ll disabled by NCCL -> "
		   "tree/ll128");
		changes(r, 1, 0, ch, sizeof(ch));
		ok(!strcmp(ch, "1/2=0") && r->nch[1] == 16,
		   "4 MiB on 2x8: ring/simple and 16 channels from the file "
		   "(%s, %d)",
		   ch, r->nch[1]);
		changes(r, 2, 0, ch, sizeof(ch));
		is(ch, "6/0=0", "all-gather 1 MiB: pat, cheapest protocol");
		changes(r, 3, 0, ch, sizeof(ch));
		is(ch, "0/1=0",
		   "64 KiB: past the file's range [0, 65536), the plan's tree");
	}
	/* 6. recalibration, only when asked */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    "AUTOSYNC_TUNER_CALIBRATE=1", NULL};
		scenario(env, 5, 8, 2, calls, 1, 1, r);
		ok(r->k.hwLatencies[AS_HW_NET][AS_ALGO_RING][AS_PROTO_SIMPLE] ==
			   5.0 &&
		       r->k.hwLatencies[AS_HW_NET][AS_ALGO_TREE][AS_PROTO_LL] ==
			   5.0 &&
		       r->k.hwLatencies[AS_HW_NET][AS_ALGO_NVLS][AS_PROTO_LL] ==
			   7.0,
		   "AUTOSYNC_TUNER_CALIBRATE=1: NET row of Ring/Tree scaled to "
		   "the plan's "
		   "5 µs (all 7 µs here, so all become 5), NVLS untouched");
		const char *env2[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    NULL};
		scenario(env2, 5, 8, 2, calls, 1, 1, r);
		ok(r->k.hwLatencies[AS_HW_NET][AS_ALGO_RING][AS_PROTO_SIMPLE] ==
		       7.0,
		   "off by default: constants untouched");
		const char *env3[] = {"AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/"
				      "plans/table-calibrate.yaml",
				      NULL};
		scenario(env3, 5, 8, 2, calls, 1, 1, r);
		ok(r->k.hwLatencies[AS_HW_NET][AS_ALGO_RING][AS_PROTO_SIMPLE] ==
			   5.0 &&
		       strstr(r->log, "recalibrating NCCL's latencies") != NULL,
		   "a plan with job.nccl_calibrate: true recalibrates without "
		   "any variable");
		const char *env4[] = {"AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/"
				      "plans/table-calibrate.yaml",
				      "AUTOSYNC_TUNER_CALIBRATE=0", NULL};
		scenario(env4, 5, 8, 2, calls, 1, 1, r);
		ok(r->k.hwLatencies[AS_HW_NET][AS_ALGO_RING][AS_PROTO_SIMPLE] ==
		       7.0,
		   "AUTOSYNC_TUNER_CALIBRATE=0 overrides the plan");
	}
	/* 7. the v4 and v3 entry points */
	{
		const char *env[] = {
		    "AUTOSYNC_PLAN=@SRC@/launcher/nccl/test/plans/table.yaml",
		    NULL};
		scenario(env, 4, 8, 2, calls, 2, 1, r);
		changes(r, 1, 0, ch, sizeof(ch));
		ok(r->ok && !strcmp(ch, "1/1=0") && r->nch[1] == 8 &&
		       r->rc_fini == 0,
		   "v4: same decisions");
		scenario(env, 3, 8, 2, calls, 2, 1, r);
		changes(r, 0, 0, ch, sizeof(ch));
		ok(r->ok && !strcmp(ch, "0/1=0"), "v3: same decisions");
	}
	free(r);
	return done_testing();
}
