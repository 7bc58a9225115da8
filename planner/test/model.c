/* model.c - model files, the catalog and their errors. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "autosync/planner.h"
#include "tap.h"

static const struct {
	const char *name;
	unsigned long long params;
} published[] = {
    {"resnet50", 25557032ULL}, /* torchvision */
    {"resnet101", 44549160ULL},
    {"vgg16", 138357544ULL},
    {"inception_v3", 27161264ULL}, /* with the auxiliary classifier */
    {"densenet121", 7978856ULL},
    {"bert-base", 109482240ULL}, /* bert-base-uncased with pooler */
    {"bert-large", 335141888ULL},
    {"gpt2", 124439808ULL}, /* tied LM head */
    {"gpt2-xl", 1557611200ULL},
    {"transformer-big", 214245376ULL}, /* vocab 37000 shared; paper: 213M */
    {"ncf", 31832577ULL},	       /* MLPerf NeuMF on ml-20m */
};

static char catalog[4096];

static void catalog_totals(void)
{
	autosync_error_t err = {""};
	char **names = NULL;
	size_t n = 0;

	for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++) {
		autosync_model_t *m =
		    autosync_model_open(published[i].name, catalog, &err);
		ok(m != NULL, "catalog model %s loads%s%s", published[i].name,
		   m ? "" : ": ", m ? "" : err.text);
		if (!m)
			continue;
		ok(autosync_model_params(m) == published[i].params,
		   "%s has %llu parameters (published %llu)", published[i].name,
		   (unsigned long long)autosync_model_params(m),
		   published[i].params);
		ok(!strcmp(autosync_model_compute_source(m), "flops"),
		   "%s carries per-layer FLOPs", published[i].name);
		autosync_model_destroy(m);
	}
	ok(autosync_catalog_list(catalog, &names, &n, &err) == 0 && names &&
	       names[n] == NULL,
	   "catalog_list: a count and a NULL after the names");
	ok(n == sizeof(published) / sizeof(published[0]),
	   "catalog lists %zu models", n);
	ok(names && !strcmp(names[0], "bert-base"), "catalog list sorted");
	autosync_catalog_free(names);

	/* the environment variable is the second place searched */
	setenv("AUTOSYNC_CATALOG_DIR", catalog, 1);
	{
		autosync_model_t *m =
		    autosync_model_open("resnet50", NULL, &err);
		ok(m && autosync_model_ntensors(m) == 161,
		   "AUTOSYNC_CATALOG_DIR is searched");
		autosync_model_destroy(m);
	}
	{
		/* a site's directory with its own model and a copy of one of
		 * the catalog's: every directory listed, each name once */
		char d[] = "/tmp/autosync-cat-XXXXXX", cmd[2 * 4096 + 128];
		size_t k = 0;
		int mine = 0, r50 = 0;
		if (!mkdtemp(d))
			bail_out("mkdtemp");
		snprintf(
		    cmd, sizeof(cmd),
		    "cp '%s/ncf.yaml' %s/mine.yaml && cp '%s/resnet50.yaml' "
		    "%s/",
		    catalog, d, catalog, d);
		if (system(cmd) != 0)
			bail_out("cp");
		ok(autosync_catalog_list(d, &names, &n, &err) == 0,
		   "catalog_list of two directories");
		for (k = 0; names && names[k]; k++) {
			mine += !strcmp(names[k], "mine");
			r50 += !strcmp(names[k], "resnet50");
		}
		ok(mine == 1 && r50 == 1 &&
		       n == sizeof(published) / sizeof(published[0]) + 1 &&
		       k == n,
		   "  the site's model and the catalog's, resnet50 once (%zu "
		   "names)",
		   n);
		autosync_catalog_free(names);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
		if (system(cmd) != 0)
			diag("could not remove %s", d);
	}
	unsetenv("AUTOSYNC_CATALOG_DIR");
	errno = 0;
	ok(!autosync_model_open("no-such-model", "/nonexistent", &err) &&
	       errno == ENOENT && strstr(err.text, "no-such-model") &&
	       strstr(err.text, "/nonexistent"),
	   "unknown catalog name: ENOENT naming the directories (%s)",
	   err.text);
	ok(!autosync_model_open("../etc/passwd", NULL, &err),
	   "a relative path is a path, not a name");
	ok(!autosync_model_open("bad name!", NULL, &err) && errno == EINVAL,
	   "odd characters are refused");
}

static void check_bad(const char *text, const char *want1, const char *want2,
		      const char *what)
{
	autosync_error_t err = {""};
	autosync_model_t *m;

	errno = 0;
	m = autosync_model_parse(text, strlen(text), "bad.yaml", &err);
	ok(!m && errno != 0 && strstr(err.text, want1) &&
	       (!want2 || strstr(err.text, want2)),
	   "%s: %s", what, err.text);
	autosync_model_destroy(m);
}

#define HDR "autosync_model: 1\nname: t\ntensors:\n"

static void bad_files(void)
{
	check_bad(
	    HDR "  - {name: a, dtype: float33, shape: [2]}\n",
	    "bad.yaml:4: tensors[0].dtype: bad value 'float33' (did you mean "
	    "'float32'? expected float32, float16, bfloat16, float64, "
	    "int64, int32, int8 or uint8)",
	    NULL, "unknown dtype");
	check_bad(HDR "  - {name: a, dtype: float32, shape: [2, -5]}\n",
		  "bad.yaml:4", "'-5'", "negative dimension");
	check_bad(HDR "  - {name: a, dtype: float32, shape: [0]}\n",
		  "bad.yaml:4", "'0'", "zero dimension");
	check_bad(
	    HDR
	    "  - {name: a, dtype: float32, shape: [1000000, 1000000, 10]}\n",
	    "bad.yaml:4", "elements", "absurd tensor size");
	check_bad(
	    HDR
	    "  - {name: a, dtype: float32, shape: [99999999999999999999]}\n",
	    "bad.yaml:4", "99999999999999999999", "dimension overflows int64");
	check_bad(HDR "  - {name: a, dtype: float32, shape: [2], repeat: "
		      "1000000000000}\n",
		  "bad.yaml:4", "1000000000000", "10^12 tensors");
	check_bad(HDR "  - {name: a, dtype: float32}\n", "bad.yaml:4",
		  "missing key 'tensors[0].shape'", "missing shape");
	check_bad(HDR "  - {dtype: float32, shape: [1]}\n", "bad.yaml:4",
		  "missing key 'tensors[0].name'", "missing name");
	check_bad(HDR "  - {name: a, shape: [1]}\n", "bad.yaml:4",
		  "missing key 'tensors[0].dtype'", "missing dtype");
	check_bad("autosync_model: 1\nname: t\n", "bad.yaml", "'tensors'",
		  "missing tensors");
	check_bad("name: t\ntensors: []\n", "bad.yaml", "autosync_model",
		  "missing version");
	check_bad("autosync_model: 2\nname: t\ntensors: []\n", "bad.yaml:1",
		  "'2'", "future version");
	check_bad(HDR "  - {name: a, dtype: float32, shape: [2]}\n"
		      "  - {name: b, dtype: float32, shape: [2]}\n"
		      "  - {name: a, dtype: float16, shape: [3]}\n",
		  "bad.yaml:6", "'a' appears twice", "duplicate name");
	check_bad(
	    "autosync_model: 1\nname: t\nlayers:\n"
	    "  - {name: fc, fwd_flops: 1000000000}\n"
	    "  - {name: fc, fwd_flops: 1}\n"
	    "tensors:\n  - {name: fc.weight, dtype: float32, shape: [2]}\n",
	    "bad.yaml:5: layers[1].name: layer 'fc' given twice (first "
	    "on line 4)",
	    NULL, "a layer given twice (the last no longer wins)");
	check_bad("this: is: not: yaml: [\n", "bad.yaml:1", "not valid YAML",
		  "not YAML");
	check_bad(HDR
		  "  - {name: a, dtype: float32, shape: [2], dtype: float16}\n",
		  "bad.yaml:4", "key 'dtype' given twice (first on line 4)",
		  "a repeated key");
	check_bad("", "bad.yaml", "empty", "empty file");
	check_bad("- a\n- b\n", "bad.yaml:1", "mapping",
		  "a list instead of a mapping");
	check_bad(HDR
		  "  - {name: a, dtype: float32, shape: [2], colour: red}\n",
		  "bad.yaml:4: unknown key 'tensors[0].colour' (known: name, "
		  "layer, dtype, shape, sparse, rows_touched or repeat)",
		  NULL, "unknown key");
	check_bad(
	    HDR "  - {name: e, dtype: float32, shape: [10, 4], sparse: true}\n",
	    "bad.yaml:4", "rows_touched", "sparse without rows_touched");
	check_bad(HDR
		  "  - {name: e, dtype: float32, shape: [10, 4], sparse: true, "
		  "rows_touched: 11}\n",
		  "bad.yaml:4", "'11'", "rows_touched above the vocabulary");
	check_bad("autosync_model: 1\nname: t\nparams: 5\ntensors:\n"
		  "  - {name: a, dtype: float32, shape: [2]}\n",
		  "bad.yaml:3", "2", "declared total differs");
	check_bad(HDR "  - {name: a, dtype: float32, shape: [2]}\nlayers:\n"
		      "  - {name: zz, fwd_flops: 1}\n",
		  "bad.yaml:6", "'zz'", "layer without tensors");
	check_bad(HDR "  - {name: a, dtype: float32, shape: [2]}\nlayers:\n"
		      "  - {name: a, fwd_flops: -1}\n",
		  "bad.yaml:6", "'-1'", "negative FLOPs");
	check_bad(HDR
		  "  - {name: a, dtype: float32, shape: [1,2,3,4,5,6,7,8,9]}\n",
		  "bad.yaml:4", "dimensions", "too many dimensions");
	{
		/* the one bounded reader: a FIFO is refused, not waited on */
		autosync_error_t err = {""};
		char fifo[64] = "/tmp/autosync-model-fifo-XXXXXX";
		if (!mkdtemp(fifo))
			bail_out("mkdtemp");
		strcat(fifo, "/m.yaml");
		if (mkfifo(fifo, 0600) < 0)
			bail_out("mkfifo");
		ok(!autosync_model_load(fifo, &err) &&
		       strstr(err.text, "not a regular file"),
		   "a FIFO model file is refused at once: %s", err.text);
		ok(!autosync_plan_load(fifo, &err) &&
		       strstr(err.text, "not a regular file"),
		   "a FIFO plan file too: %s", err.text);
		unlink(fifo);
		*strrchr(fifo, '/') = '\0';
		rmdir(fifo);
	}
	{
		autosync_error_t err = {""};
		errno = 0;
		ok(!autosync_model_load("/nonexistent/x.yaml", &err) &&
		       errno == ENOENT &&
		       strstr(err.text, "/nonexistent/x.yaml"),
		   "missing file: ENOENT naming it (%s)", err.text);
	}
}

static void good_file(void)
{
	static const char text[] =
	    "autosync_model: 1\nname: tiny\nframework: pytorch\nbatch_size: 8\n"
	    "tokens_per_sample: 4\n"
	    "tensors:\n"
	    "  - {name: emb.weight, layer: emb, dtype: float32, shape: [100, "
	    "8], sparse: true,"
	    " rows_touched: 10}\n"
	    "  - {name: fc.weight, dtype: fp16, shape: [8, 8]}\n"
	    "  - {name: fc.bias, dtype: float16, shape: [8]}\n"
	    "  - {name: blk, layer: blk, dtype: bfloat16, shape: [4], repeat: "
	    "3}\n"
	    "  - {name: s, dtype: float32, shape: []}\n"
	    "layers:\n  - {name: fc, fwd_flops: 1000, bwd_flops: 3000}\n"
	    "  - {name: emb, fwd_time: 0.001}\n";
	autosync_error_t err = {""};
	autosync_model_t *m =
	    autosync_model_parse(text, sizeof(text) - 1, "tiny.yaml", &err);
	const autosync_tensor_t *t;

	ok(m != NULL, "a small model parses%s%s", m ? "" : ": ",
	   m ? "" : err.text);
	if (!m)
		return;
	ok(autosync_model_ntensors(m) == 7, "repeat expands (7 tensors)");
	ok(autosync_model_params(m) == 800 + 64 + 8 + 12 + 1, "params sum");
	ok(autosync_model_bytes(m) == 3200 + 128 + 16 + 24 + 4, "bytes sum");
	t = autosync_model_tensor(m, 0);
	ok(t->sparse && t->rows_touched == 10 && !strcmp(t->layer, "emb"),
	   "sparse tensor");
	/* 100 rows, 10 touched per rank: 100 (1 - 0.9^4) = 34.39 */
	ok(autosync_tensor_rows_union(t, 4) == 34 &&
	       autosync_tensor_rows_union(t, 1) == 10 &&
	       autosync_tensor_rows_union(t, 0) == 10 &&
	       autosync_tensor_rows_union(t, 1000) == 100,
	   "rows 4 ranks touch together: 34 of 100; one rank's 10; at most "
	   "the table (%llu %llu %llu)",
	   (unsigned long long)autosync_tensor_rows_union(t, 4),
	   (unsigned long long)autosync_tensor_rows_union(t, 1),
	   (unsigned long long)autosync_tensor_rows_union(t, 1000));
	ok(autosync_tensor_rows_union(autosync_model_tensor(m, 1), 4) == 0 &&
	       autosync_tensor_rows_union(NULL, 4) == 0,
	   "rows union: a dense tensor's rows_touched (0), NULL 0");
	t = autosync_model_tensor(m, 1);
	is(t->layer, "fc",
	   "layer defaults to the name minus its last component");
	ok(t->dtype == AUTOSYNC_DT_FLOAT16, "dtype alias fp16");
	is(autosync_model_tensor(m, 4)->name, "blk.1", "repeated names get .i");
	is(autosync_model_tensor(m, 4)->layer, "blk.1",
	   "repeated layers get .i");
	ok(autosync_model_tensor(m, 6)->ndim == 0 &&
	       autosync_model_tensor(m, 6)->numel == 1,
	   "scalar tensor");
	is(autosync_model_compute_source(m), "time",
	   "compute source: time wins");
	ok(autosync_model_batch(m) == 8, "batch size");
	is(autosync_model_framework(m), "pytorch", "framework");
	ok(strlen(autosync_model_hash(m)) == 16, "model hash");
	autosync_model_destroy(m);

	/* the programmatic API */
	m = autosync_model_create("api", &err);
	{
		int64_t shape[2] = {3, 4};
		ok(autosync_model_add_tensor(m, "w", NULL, AUTOSYNC_DT_FLOAT32,
					     2, shape, 0, 0, &err) == 0,
		   "add_tensor");
		errno = 0;
		ok(autosync_model_add_tensor(m, "w", NULL, AUTOSYNC_DT_FLOAT32,
					     2, shape, 0, 0, &err) < 0 &&
		       errno == EEXIST,
		   "duplicate: EEXIST");
		shape[1] = -1;
		errno = 0;
		ok(autosync_model_add_tensor(m, "v", NULL, AUTOSYNC_DT_FLOAT32,
					     2, shape, 0, 0, &err) < 0 &&
		       errno == EINVAL,
		   "negative dim: EINVAL");
		shape[1] = 4;
		errno = 0;
		ok(autosync_model_add_tensor(m, "v", NULL, 99, 2, shape, 0, 0,
					     &err) < 0 &&
		       errno == EINVAL,
		   "bad dtype: EINVAL");
		ok(autosync_model_set_layer_flops(m, "nolayer", 1, -1, &err) <
			   0 &&
		       errno == ENOENT,
		   "flops for an unknown layer: ENOENT");
	}
	autosync_model_destroy(m);
	autosync_model_destroy(NULL);
	ok(autosync_dtype_from_name("complex64") < 0 && errno == EINVAL,
	   "dtype_from_name");
	ok(autosync_dtype_size(AUTOSYNC_DT_BFLOAT16) == 2, "dtype_size");
}

static void calibration(void)
{
	autosync_costs_t k;
	autosync_error_t err = {""};
	static const char good[] =
	    "autosync_costs: 1\nlaunch: 2e-5\ngpu_flops: 3.1e14\n";
	static const char bad1[] = "launch: 2e-5\nlaunchh: 1\n";
	static const char bad2[] = "launch: fast\n";

	autosync_costs_default(&k);
	ok(k.launch > 0 && k.gpu_flops > 0 && k.bwd_fwd_ratio == 2.0,
	   "defaults");
	ok(autosync_costs_parse(&k, good, strlen(good), "cal.yaml", &err) ==
		   0 &&
	       k.launch == 2e-5 && k.gpu_flops == 3.1e14 && k.intra_eff == 0.80,
	   "calibration replaces only the named constants");
	ok(autosync_costs_parse(&k, bad1, strlen(bad1), "cal.yaml", &err) < 0 &&
	       strstr(err.text, "cal.yaml:2") && strstr(err.text, "launchh") &&
	       k.launch == 2e-5,
	   "unknown constant named with its line, nothing changed (%s)",
	   err.text);
	{
		/* the shipped template holds exactly the defaults */
		autosync_costs_t d, f;
		char path[4200];
		snprintf(path, sizeof(path), "%s/../costs.example.yaml",
			 catalog);
		autosync_costs_default(&d);
		memset(&f, 0, sizeof(f)); /* so every field must be named */
		ok(autosync_costs_load(&f, path, &err) == 0 &&
		       !memcmp(&f, &d, sizeof(d)),
		   "planner/costs.example.yaml names every constant with its "
		   "default%s%s",
		   err.text[0] ? ": " : "", err.text);
	}
	ok(autosync_costs_parse(&k, bad2, strlen(bad2), "cal.yaml", &err) < 0 &&
	       strstr(err.text, "cal.yaml:1") && strstr(err.text, "'fast'"),
	   "non-number (%s)", err.text);
}

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR");

	plan(NO_PLAN);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog",
		 src ? src : "..");
	catalog_totals();
	bad_files();
	good_file();
	calibration();
	return done_testing();
}
