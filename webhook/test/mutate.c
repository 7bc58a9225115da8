/* Unit tests of the webhook's decisions and patches (webhook/mutate.h) on
 * real AdmissionReview bodies (tests/fixtures/k8s): what is injected for
 * every kind, what is copied and computed, and every way a request is
 * declined, skipped or refused. tests/webhook/tls.sh applies the patches
 * with a JSON Patch implementation, over TLS. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <jansson.h>

#include "webhook/mutate.h"
#include "tap.h"

struct res {
	int d;
	json_t *resp, *patch, *log;
};

static struct aswh_config cfg;

static void res_free(struct res *r)
{
	json_decref(r->resp);
	json_decref(r->patch);
	json_decref(r->log);
	memset(r, 0, sizeof(*r));
}

static struct res run_text(const char *body)
{
	struct res r = {0};
	char *resp = NULL, *log = NULL;
	const char *p64;

	r.d = aswh_review(&cfg, body, strlen(body), &resp, &log);
	r.resp = resp ? json_loads(resp, 0, NULL) : NULL;
	r.log = log ? json_loads(log, 0, NULL) : NULL;
	p64 = json_string_value(
	    json_object_get(json_object_get(r.resp, "response"), "patch"));
	if (p64) {
		gnutls_datum_t in = {(unsigned char *)p64,
				     (unsigned)strlen(p64)},
			       out;
		if (gnutls_base64_decode2(&in, &out) == 0) {
			r.patch =
			    json_loadb((char *)out.data, out.size, 0, NULL);
			gnutls_free(out.data);
		}
	}
	free(resp);
	free(log);
	return r;
}

static json_t *fixture(const char *name)
{
	char path[4096];
	json_t *j;

	snprintf(path, sizeof(path), "%s/tests/fixtures/k8s/%s",
		 getenv("AUTOSYNC_SRCDIR") ? getenv("AUTOSYNC_SRCDIR") : ".",
		 name);
	if (!(j = json_load_file(path, 0, NULL)))
		bail_out("cannot read %s", path);
	return j;
}

static struct res run_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	struct res r = run_text(s);

	free(s);
	json_decref(j);
	return r;
}

/* The value of the patch's op at 'path', or NULL. */
static json_t *op(const struct res *r, const char *path)
{
	size_t i;
	json_t *o;

	json_array_foreach(r->patch, i, o)
	{
		if (!strcmp(json_string_value(json_object_get(o, "path")),
			    path))
			return json_object_get(o, "value");
	}
	return NULL;
}

static const char *log_s(const struct res *r, const char *key)
{
	const char *v = json_string_value(json_object_get(r->log, key));
	return v ? v : "(none)";
}

static const char *warning(const struct res *r)
{
	const char *w = json_string_value(json_array_get(
	    json_object_get(json_object_get(r->resp, "response"), "warnings"),
	    0));
	return w ? w : "(none)";
}

static char *dump(const json_t *j)
{
	static char buf[4096];
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	snprintf(buf, sizeof(buf), "%s", s ? s : "(null)");
	free(s);
	return buf;
}

static const char *env_of(const json_t *container, const char *name)
{
	size_t i;
	json_t *e;

	json_array_foreach(json_object_get(container, "env"), i, e)
	{
		if (!strcmp(json_string_value(json_object_get(e, "name")),
			    name)) {
			const char *v =
			    json_string_value(json_object_get(e, "value"));
			return v ? v : "(valueFrom)";
		}
	}
	return "(unset)";
}

static void test_pod(void)
{
	struct res r = run_json(fixture("pod.json"));
	json_t *resp = json_object_get(r.resp, "response"), *ics, *ic;

	ok(r.d == ASWH_MUTATED, "pod: mutated");
	is(json_string_value(json_object_get(r.resp, "apiVersion")),
	   "admission.k8s.io/v1", "same apiVersion");
	is(json_string_value(json_object_get(resp, "uid")),
	   "0d2f1a6e-7c1b-4f8e-9a53-1c2b3d4e5f60", "the request's uid");
	ok(json_is_true(json_object_get(resp, "allowed")), "allowed");
	is(json_string_value(json_object_get(resp, "patchType")), "JSONPatch",
	   "patchType JSONPatch");
	ok(json_array_size(r.patch) > 0, "a base64 JSON Patch");
	ics = op(&r, "/spec/initContainers");
	ic = json_array_get(ics, 0);
	ok(json_array_size(ics) == 1, "no initContainers yet: the whole array");
	is(json_string_value(json_object_get(ic, "name")), "autosync-init",
	   "the init container");
	is(dump(json_object_get(ic, "command")),
	   "[\"autosync\",\"init\",\"/autosync\"]", "runs autosync init");
	is(dump(json_object_get(ic, "resources")),
	   "{\"limits\":{\"nvidia.com/gpu\":\"8\",\"rdma/"
	   "hca_shared_devices_a\":"
	   "\"1\"},\"requests\":{\"nvidia.com/gpu\":\"8\"}}",
	   "the same GPUs and RDMA devices as the app, nothing else");
	is(env_of(ic, "PET_NNODES"), "4", "rank variables copied");
	is(env_of(ic, "PET_NODE_RANK"), "(valueFrom)", "valueFrom as is");
	is(env_of(ic, "NCCL_DEBUG"), "(unset)", "other variables not");
	is(env_of(ic, "AUTOSYNC_NNODES"), "(unset)",
	   "a bare pod: no node count of its own");
	is(dump(json_object_get(ic, "volumeMounts")),
	   "[{\"mountPath\":\"/autosync\",\"name\":\"autosync-run\"},"
	   "{\"mountPath\":\"/etc/autosync-podinfo\",\"name\":"
	   "\"autosync-podinfo\",\"readOnly\":true},{\"mountPath\":"
	   "\"/etc/autosync\",\"name\":\"autosync-site\",\"readOnly\":true}]",
	   "its mounts");
	is(dump(op(&r, "/spec/volumes/-")),
	   "{\"emptyDir\":{},\"name\":\"autosync-run\"}",
	   "volumes appended to the pod's");
	is(dump(op(&r, "/spec/containers/0/env/-")),
	   "{\"name\":\"NCCL_CONF_FILE\",\"value\":\"/autosync/nccl.conf\"}",
	   "trainer: NCCL_CONF_FILE appended to its env");
	ok(op(&r, "/spec/containers/1/volumeMounts") != NULL,
	   "logger without mounts: the whole array");
	{
		size_t i, n = 0;
		json_t *o;
		json_array_foreach(r.patch, i, o)
		{
			const char *p =
			    json_string_value(json_object_get(o, "path"));
			if (!strcmp(p, "/spec/containers/1/env/-") &&
			    !strcmp(json_string_value(json_object_get(
					json_object_get(o, "value"), "name")),
				    "NCCL_CONF_FILE"))
				n++;
		}
		ok(n == 0, "a container's own NCCL_CONF_FILE stays");
	}
	is(log_s(&r, "decision"), "mutated", "log: decision");
	is(log_s(&r, "reason"), "model bert-large", "log: reason");
	is(log_s(&r, "namespace"), "ml", "log: namespace");
	res_free(&r);
}

static void test_workloads(void)
{
	struct res r = run_json(fixture("job.json"));
	json_t *ic;

	ok(r.d == ASWH_MUTATED, "Job: mutated");
	ic = op(&r, "/spec/template/spec/initContainers/0");
	is(json_string_value(json_object_get(ic, "name")), "autosync-init",
	   "Job: first of the existing init containers");
	is(env_of(ic, "AUTOSYNC_NNODES"), "2", "Job: nodes = parallelism");
	is(dump(json_object_get(json_object_get(ic, "resources"), "limits")),
	   "{\"nvidia.com/gpu\":4}", "Job: an integer quantity kept as is");
	is(dump(op(&r, "/spec/template/metadata")),
	   "{\"annotations\":{\"autosync.dev/mode\":\"required\","
	   "\"autosync.dev/model\":\"resnet50\"}}",
	   "Job: the object's annotations copied where the pods get them");
	res_free(&r);

	r = run_json(fixture("pytorchjob.json"));
	ok(r.d == ASWH_MUTATED, "PyTorchJob: mutated");
	ic = json_array_get(op(&r,
			       "/spec/pytorchReplicaSpecs/Master/template/spec/"
			       "initContainers"),
			    0);
	is(env_of(ic, "AUTOSYNC_NNODES"), "4",
	   "PyTorchJob: 1 master + 3 workers");
	is(env_of(ic, "AUTOSYNC_NPROC_PER_NODE"), "8", "nprocPerNode");
	ok(op(&r, "/spec/pytorchReplicaSpecs/Worker/template/spec/"
		  "initContainers") != NULL,
	   "PyTorchJob: workers too");
	is(log_s(&r, "reason"), "model gpt2", "PyTorchJob: the model");
	res_free(&r);

	r = run_json(fixture("mpijob.json"));
	ok(r.d == ASWH_MUTATED, "MPIJob: mutated");
	ic = json_array_get(
	    op(&r, "/spec/mpiReplicaSpecs/Worker/template/spec/initContainers"),
	    0);
	is(env_of(ic, "AUTOSYNC_NNODES"), "2", "MPIJob: worker replicas");
	is(env_of(ic, "AUTOSYNC_NPROC_PER_NODE"), "4", "slotsPerWorker");
	is(env_of(ic, "OMPI_COMM_WORLD_SIZE"), "8", "OMPI_* copied");
	is(dump(json_object_get(json_object_get(ic, "resources"), "limits")),
	   "{\"nvidia.com/gpu\":\"4\",\"rdma/ib\":\"1\"}",
	   "MPIJob: the worker's devices");
	ok(!op(&r, "/spec/mpiReplicaSpecs/Launcher/template/spec/"
		   "initContainers"),
	   "MPIJob: not the launcher");
	res_free(&r);

	r = run_json(fixture("jobset.json"));
	ok(r.d == ASWH_MUTATED, "JobSet: mutated");
	ic = json_array_get(op(&r, "/spec/replicatedJobs/0/template/spec/"
				   "template/spec/initContainers"),
			    0);
	is(env_of(ic, "AUTOSYNC_NNODES"), "4",
	   "JobSet: replicas x parallelism");
	res_free(&r);

	/* 16 replicated jobs are mutated, 17 are declined whole */
	for (int n = 16; n <= 17; n++) {
		json_t *j = fixture("jobset.json");
		json_t *rj = json_object_get(
		    json_object_get(
			json_object_get(json_object_get(j, "request"),
					"object"),
			"spec"),
		    "replicatedJobs");
		json_t *first = json_deep_copy(json_array_get(rj, 0));
		while (json_array_size(rj) < (size_t)n)
			json_array_append(rj, first);
		json_decref(first);
		r = run_json(j);
		if (n == 16)
			ok(r.d == ASWH_MUTATED &&
			       op(&r, "/spec/replicatedJobs/15/template/spec/"
				      "template/spec/initContainers"),
			   "JobSet of 16 replicated jobs: all mutated");
		else
			ok(r.d == ASWH_DECLINED && !r.patch &&
			       !strcmp(warning(&r),
				       "autosync: more than 16 pod templates; "
				       "the pod runs without it"),
			   "JobSet of 17: declined whole, with a warning "
			   "(never some pods with the plan and some "
			   "without)");
		res_free(&r);
	}
}

static json_t *pod_with(const char *key, json_t *value)
{
	json_t *j = fixture("pod.json");
	json_t *obj = json_object_get(json_object_get(j, "request"), "object");

	if (!strcmp(key, "label"))
		json_object_set_new(
		    json_object_get(json_object_get(obj, "metadata"), "labels"),
		    "autosync.dev/enabled", value);
	else if (!strcmp(key, "initContainers"))
		json_object_set_new(json_object_get(obj, "spec"),
				    "initContainers", value);
	else
		json_object_set_new(
		    json_object_get(json_object_get(obj, "metadata"),
				    "annotations"),
		    key, value);
	return j;
}

/* The decision log line is ASCII: names from the request with a bidi
 * override or an escape sequence are \\u escapes in it. */
static void test_log_ascii(void)
{
	json_t *j = fixture("pod.json");
	char *body, *resp = NULL, *log = NULL;

	json_object_set_new(json_object_get(j, "request"), "name",
			    json_string("a\xe2\x80\xae\x1b[31mb"));
	body = json_dumps(j, JSON_COMPACT);
	aswh_review(&cfg, body, strlen(body), &resp, &log);
	ok(log && strstr(log, "\"name\":\"a\\u202E\\u001B[31mb\"") &&
	       !strstr(log, "\xe2\x80\xae") && !strchr(log, '\x1b'),
	   "the decision log line carries the name as escapes: %s",
	   log ? log : "(none)");
	free(body);
	free(resp);
	free(log);
	json_decref(j);
}

static void test_decline(void)
{
	struct res r;
	json_t *j;

	r = run_json(pod_with("label", json_string("false")));
	ok(r.d == ASWH_SKIPPED && !r.patch, "not opted in: no patch");
	is(log_s(&r, "reason"), "not opted in", "... the reason");
	is(warning(&r), "(none)", "... and no warning");
	res_free(&r);

	r = run_json(pod_with("label", json_string("no")));
	ok(r.d == ASWH_SKIPPED && !r.patch, "label 'no': not opted in");
	res_free(&r);
	/* every spelling the shipped objectSelector lets through */
	{
		static const char *const yes[] = {"true", "True", "TRUE", "yes",
						  "Yes",  "YES",  "on",	  "On",
						  "ON",	  "y",	  "Y",	  "1"};
		int all = 1;
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			r = run_json(pod_with("label", json_string(yes[i])));
			all &= r.d == ASWH_MUTATED && r.patch != NULL;
			res_free(&r);
		}
		ok(all, "labels true/yes/on/y/1, lower, capitalised and upper "
			"case: opted in (autosync's one boolean dialect)");
	}

	r = run_json(pod_with("autosync.dev/mode", json_string("off")));
	ok(r.d == ASWH_SKIPPED && !r.patch, "mode off: skipped");
	res_free(&r);

	r = run_json(pod_with("autosync.dev/mode", json_string("sometimes")));
	ok(r.d == ASWH_DECLINED && !r.patch &&
	       json_is_true(json_object_get(json_object_get(r.resp, "response"),
					    "allowed")),
	   "unknown mode: allowed, no patch");
	is(warning(&r),
	   "autosync: autosync.dev/mode: unknown value 'sometimes' (expected "
	   "auto, off or required); the pod runs without it",
	   "... with a warning the user sees");
	is(log_s(&r, "decision"), "declined", "... logged as declined");
	res_free(&r);

	r = run_json(pod_with("autosync.dev/model", json_string("../etc\n")));
	is(warning(&r),
	   "autosync: autosync.dev/model: bad value '../etc\\x0a' (expected a "
	   "catalog model name); the pod runs without it",
	   "a bad model name: declined, escaped");
	res_free(&r);

	r = run_json(pod_with("autosync.dev/model", json_string("")));
	is(warning(&r),
	   "autosync: opted in without a autosync.dev/model annotation; the "
	   "pod runs without it",
	   "no model: declined");
	res_free(&r);

	r = run_json(pod_with("autosync.dev/compression", json_string("lots")));
	ok(r.d == ASWH_DECLINED, "a bad compression value: declined");
	res_free(&r);

	j = json_array();
	json_array_append_new(
	    j, json_pack("{ss ss}", "name", "autosync-init", "image", "x"));
	r = run_json(pod_with("initContainers", j));
	ok(r.d == ASWH_SKIPPED && !r.patch,
	   "already injected: skipped (idempotent)");
	is(log_s(&r, "reason"), "already injected", "... the reason");
	res_free(&r);

	j = fixture("pod.json");
	json_object_set_new(json_object_get(j, "request"), "operation",
			    json_string("UPDATE"));
	r = run_json(j);
	ok(r.d == ASWH_SKIPPED, "UPDATE: skipped");
	res_free(&r);

	j = fixture("pod.json");
	json_object_set_new(
	    json_object_get(json_object_get(j, "request"), "kind"), "kind",
	    json_string("Deployment"));
	json_object_set_new(
	    json_object_get(json_object_get(j, "request"), "kind"), "group",
	    json_string("apps"));
	r = run_json(j);
	ok(r.d == ASWH_DECLINED, "a Deployment: declined with a warning");
	is(log_s(&r, "reason"), "Deployment: no pod template autosync knows",
	   "... the reason");
	res_free(&r);

	j = fixture("pod.json");
	json_object_set_new(j, "apiVersion",
			    json_string("admission.k8s.io/v2"));
	r = run_json(j);
	ok(r.d == ASWH_DECLINED && !r.patch, "unknown version: declined");
	is(json_string_value(
	       json_object_get(json_object_get(r.resp, "response"), "uid")),
	   "0d2f1a6e-7c1b-4f8e-9a53-1c2b3d4e5f60", "... and still answered");
	res_free(&r);
}

static void test_bad(void)
{
	struct res r = run_text("{\"apiVersion\": \"admission.k8s.io/v1\",");

	ok(r.d == ASWH_BAD_REQUEST && !r.resp, "not JSON: bad request");
	is(log_s(&r, "reason"), "the body is not JSON", "... logged");
	res_free(&r);
	r = run_text("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
		     "\"AdmissionReview\",\"request\":{\"kind\":{}}}");
	ok(r.d == ASWH_BAD_REQUEST, "no uid: bad request (nothing to echo)");
	is(log_s(&r, "reason"), "no request.uid to answer", "... logged");
	res_free(&r);
	r = run_text("{\"request\":{\"uid\":\"1\",\"uid\":\"2\"}}");
	ok(r.d == ASWH_BAD_REQUEST, "a repeated key: bad request");
	res_free(&r);
	r = run_text("[]");
	ok(r.d == ASWH_BAD_REQUEST, "an array: bad request");
	res_free(&r);
}

/* What cJSON would let through is checked before it parses: each body is
 * a review with a uid, so only the check can refuse it. */
static void test_unclean(void)
{
	static const struct {
		const char *body, *reason;
	} bad[] = {
	    {"{\"request\":{\"uid\":\"1\",\"name\":\"a\xff\"}}",
	     "the body is not UTF-8"},
	    {"{\"request\":{\"uid\":\"1\",\"name\":\"a\xe2\x80\"}}",
	     "the body is not UTF-8"},
	    {"{\"request\":{\"uid\":\"1\",\"name\":\"a\x01\"}}",
	     "the body holds a control byte"},
	    {"{\"request\":{\"uid\":\"1\",\"name\":\"a\\u0000b\"}}",
	     "the body holds \\u0000"},
	    {"{\"request\":{\"uid\":\"1\"}} x", "the body is not JSON"},
	    {"{\"request\":{\"uid\":\"1\",\"object\":{\"a\":{\"b\":1,\"b\":2}}}"
	     "}",
	     "the body repeats a key"},
	};
	char big[4096], *p;
	struct res r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run_text(bad[i].body);
		ok(r.d == ASWH_BAD_REQUEST && !r.resp, "bad request: %s",
		   bad[i].reason);
		is(log_s(&r, "reason"), bad[i].reason, "... logged");
		res_free(&r);
	}
	r = run_text("{\"request\":{\"uid\":\"1\",\"name\":\"a\\\\u0000\"}}");
	ok(r.d == ASWH_DECLINED, "an escaped backslash before u0000 is text");
	is(log_s(&r, "name"), "a\\u0000", "... and reaches the log as it is");
	res_free(&r);

	/* many keys are checked by sorting them: a repeat among 40 */
	p = big + sprintf(big, "{\"request\":{\"uid\":\"1\",\"object\":{");
	for (int i = 0; i < 40; i++)
		p += sprintf(p, "%s\"k%d\":%d", i ? "," : "", i % 39, i);
	sprintf(p, "}}}");
	r = run_text(big);
	is(log_s(&r, "reason"), "the body repeats a key",
	   "40 keys, one twice: refused");
	res_free(&r);
	p = big + sprintf(big, "{\"request\":{\"uid\":\"1\",\"object\":{");
	for (int i = 0; i < 40; i++)
		p += sprintf(p, "%s\"k%d\":%d", i ? "," : "", i, i);
	sprintf(p, "}}}");
	r = run_text(big);
	ok(r.d == ASWH_DECLINED, "40 keys, all different: answered");
	res_free(&r);
}

static void test_prefix(void)
{
	struct res r;
	json_t *j = fixture("pod.json"), *md;

	snprintf(cfg.prefix, sizeof(cfg.prefix), "ml.example.com");
	r = run_json(fixture("pod.json"));
	ok(r.d == ASWH_SKIPPED, "another prefix: the default label is not it");
	res_free(&r);
	md = json_object_get(
	    json_object_get(json_object_get(j, "request"), "object"),
	    "metadata");
	json_object_set_new(json_object_get(md, "labels"),
			    "ml.example.com/enabled", json_string("true"));
	json_object_set_new(json_object_get(md, "annotations"),
			    "ml.example.com/model", json_string("resnet50"));
	r = run_json(j);
	ok(r.d == ASWH_MUTATED, "its own label and annotations: mutated");
	{
		char *all = json_dumps(r.patch, JSON_COMPACT);
		ok(all && strstr(all, "metadata.annotations['ml.example.com/"
				      "model']"),
		   "the downward API reads the site's prefix");
		free(all);
	}
	res_free(&r);
	aswh_config_default(&cfg);
}

int main(void)
{
	plan(NO_PLAN);
	aswh_config_default(&cfg);
	test_pod();
	test_workloads();
	test_decline();
	test_log_ascii();
	test_bad();
	test_unclean();
	test_prefix();
	return done_testing();
}
