/* mutate.c - see mutate.h. One pass over the AdmissionReview: find the
 * pod specs of the object (the pod's own, or its workload's templates),
 * decide from the opt-in label and the annotations, then build the JSON
 * Patch with jansson and base64 it with GnuTLS. Nothing here does I/O. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <jansson.h>

#include "common/text.h"
#include "mutate.h"

#define INIT_NAME "autosync-init"
#define VOL_RUN "autosync-run"
#define VOL_INFO "autosync-podinfo"
#define VOL_SITE "autosync-site"
#define PODINFO_PATH "/etc/autosync-podinfo"
#define SITE_PATH "/etc/autosync"
#define MAX_TEMPLATES 16
#define PTR_MAX 512

void aswh_config_default(struct aswh_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->prefix, sizeof(c->prefix), "autosync.dev");
	snprintf(c->image, sizeof(c->image), "autosync:%s", PACKAGE_VERSION);
	snprintf(c->pull_policy, sizeof(c->pull_policy), "IfNotPresent");
	snprintf(c->mount, sizeof(c->mount), "/autosync");
	snprintf(c->site_config, sizeof(c->site_config), "autosync-site");
	snprintf(c->resources[0], sizeof(c->resources[0]), "nvidia.com/gpu");
	snprintf(c->resources[1], sizeof(c->resources[1]), "rdma/");
	c->nresources = 2;
}

/* ------------------------------------------------------------ helpers */

static json_t *get(const json_t *o, const char *key)
{
	return json_is_object(o) ? json_object_get(o, key) : NULL;
}

/* A JSON Pointer (or a path) from a format: truncated at PTR_MAX, which no
 * object the API server accepts comes near. */
static void pathf(char *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void pathf(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PTR_MAX, fmt, ap);
	va_end(ap);
}

static void set_str(json_t *o, const char *key, const char *v)
{
	json_object_set_new(o, key, json_string(v));
}

static json_t *add_obj(json_t *o, const char *key)
{
	json_t *v = json_object();

	json_object_set_new(o, key, v);
	return v;
}

static json_t *add_arr(json_t *o, const char *key)
{
	json_t *v = json_array();

	json_object_set_new(o, key, v);
	return v;
}

static const char *str(const json_t *o, const char *key)
{
	const json_t *v = get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A count: a non-negative JSON integer or a string of digits; else 'dflt'. */
static long count(const json_t *v, long dflt)
{
	const char *s = json_string_value(v);

	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < 1000000)
		return (long)json_integer_value(v);
	if (s && *s && strlen(s) < 7 && strspn(s, "0123456789") == strlen(s))
		return atol(s);
	return dflt;
}

/* 'base' + "/" + 'token' as a JSON Pointer (RFC 6901: ~ and / escaped). */
static void ptr(char *out, const char *base, const char *token)
{
	size_t o = (size_t)snprintf(out, PTR_MAX, "%s/", base);

	for (; *token && o + 3 < PTR_MAX; token++) {
		if (*token == '~' || *token == '/') {
			out[o++] = '~';
			out[o++] = *token == '~' ? '0' : '1';
		} else {
			out[o++] = *token;
		}
	}
	out[o < PTR_MAX ? o : PTR_MAX - 1] = '\0';
}

static int add_op(json_t *patch, const char *path, json_t *value)
{
	json_t *op = json_object();

	if (!op || !value) {
		json_decref(op);
		json_decref(value);
		return -1;
	}
	set_str(op, "op", "add");
	set_str(op, "path", path);
	json_object_set_new(op, "value", value);
	json_array_append_new(patch, op);
	return 0;
}

static json_t *named(const json_t *array, const char *name)
{
	const json_t *e;
	size_t i;

	json_array_foreach(array, i, e)
	{
		const char *n = str(e, "name");
		if (n && !strcmp(n, name))
			return (json_t *)e;
	}
	return NULL;
}

static json_t *env_var(const char *name, const char *value)
{
	json_t *e = json_object();

	set_str(e, "name", name);
	set_str(e, "value", value);
	return e;
}

/* A catalog name, a framework name: what a pod annotation may hold. */
static int plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64 || !isalnum((unsigned char)s[0]))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.+", *s))
			return 0;
	return 1;
}

/* ---------------------------------------------------------- templates */

struct tmpl {
	char base[PTR_MAX];	 /* the pod spec's pointer */
	char meta[PTR_MAX];	 /* its metadata's pointer ("" for a Pod) */
	const json_t *spec, *md; /* the pod spec, its metadata (may be NULL) */
};

struct review {
	const struct aswh_config *c;
	const json_t *obj;
	struct tmpl t[MAX_TEMPLATES];
	unsigned nt;
	long nodes, nproc; /* from the workload; 0 unknown */
	char reason[256];
	json_t *warnings;
};

static void add_tmpl(struct review *r, const char *base, const json_t *tpl)
{
	struct tmpl *t;

	if (r->nt >= MAX_TEMPLATES || !json_is_object(get(tpl, "spec")))
		return;
	t = &r->t[r->nt++];
	pathf(t->base, "%s/spec", base);
	pathf(t->meta, "%s/metadata", base);
	t->spec = get(tpl, "spec");
	t->md = get(tpl, "metadata");
}

/* The pod templates of the object and the job's size; -1 unhandled. */
static int find_templates(struct review *r, const char *group, const char *kind)
{
	const json_t *spec = get(r->obj, "spec"), *e;
	char base[PTR_MAX];

	if (!strcmp(kind, "Pod") && !*group) {
		r->t[0] = (struct tmpl){.base = "/spec",
					.meta = "",
					.spec = spec,
					.md = get(r->obj, "metadata")};
		r->nt = json_is_object(spec);
	} else if (!strcmp(kind, "Job") && !strcmp(group, "batch")) {
		add_tmpl(r, "/spec/template", get(spec, "template"));
		r->nodes = count(get(spec, "parallelism"), 1);
	} else if (!strcmp(kind, "PyTorchJob") &&
		   !strcmp(group, "kubeflow.org")) {
		static const char *const roles[] = {"Master", "Worker"};
		const json_t *rs = get(spec, "pytorchReplicaSpecs");
		for (size_t i = 0; i < 2; i++) {
			const json_t *role = get(rs, roles[i]);
			if (!role)
				continue;
			pathf(base, "/spec/pytorchReplicaSpecs/%s/template",
			      roles[i]);
			add_tmpl(r, base, get(role, "template"));
			r->nodes += count(get(role, "replicas"), 1);
		}
		r->nproc = count(get(spec, "nprocPerNode"), 0);
	} else if (!strcmp(kind, "MPIJob") && !strcmp(group, "kubeflow.org")) {
		const json_t *w = get(get(spec, "mpiReplicaSpecs"), "Worker");
		/* the launcher only runs mpirun: the workers hold the GPUs */
		add_tmpl(r, "/spec/mpiReplicaSpecs/Worker/template",
			 get(w, "template"));
		r->nodes = count(get(w, "replicas"), 1);
		r->nproc = count(get(spec, "slotsPerWorker"), 1);
	} else if (!strcmp(kind, "JobSet") &&
		   !strcmp(group, "jobset.x-k8s.io")) {
		size_t i;
		json_array_foreach(get(spec, "replicatedJobs"), i, e)
		{
			const json_t *job = get(get(e, "template"), "spec");
			snprintf(
			    base, sizeof(base),
			    "/spec/replicatedJobs/%zu/template/spec/template",
			    i);
			add_tmpl(r, base, get(job, "template"));
			r->nodes += count(get(e, "replicas"), 1) *
				    count(get(job, "parallelism"), 1);
		}
	} else {
		return -1;
	}
	return 0;
}

/* An annotation of the pod template, else of the object. */
static const char *annotation(const struct review *r, const struct tmpl *t,
			      const char *what)
{
	char key[256];
	const char *v;

	snprintf(key, sizeof(key), "%s/%s", r->c->prefix, what);
	if ((v = str(get(t->md, "annotations"), key)))
		return v;
	return str(get(get(r->obj, "metadata"), "annotations"), key);
}

/* ------------------------------------------------------------- checks */

static int opted_in(const struct review *r)
{
	char key[256];
	const char *v;

	snprintf(key, sizeof(key), "%s/enabled", r->c->prefix);
	v = str(get(get(r->obj, "metadata"), "labels"), key);
	return v && asi_parse_bool(v) == 1; /* autosync's one dialect */
}

/* ASWH_MUTATED when template t is to be mutated, else why not. */
static int check_tmpl(struct review *r, const struct tmpl *t)
{
	const char *mode = annotation(r, t, "mode");
	const char *model = annotation(r, t, "model");
	const char *fw = annotation(r, t, "framework");
	const char *comp = annotation(r, t, "compression");
	char q[96];

	if (named(get(t->spec, "initContainers"), INIT_NAME)) {
		snprintf(r->reason, sizeof(r->reason), "already injected");
		return ASWH_SKIPPED;
	}
	if (mode && !strcmp(mode, "off")) {
		snprintf(r->reason, sizeof(r->reason), "mode off");
		return ASWH_SKIPPED;
	}
	if (mode && *mode && strcmp(mode, "auto") && strcmp(mode, "required"))
		snprintf(r->reason, sizeof(r->reason),
			 "%s/mode: unknown value '%s' (expected auto, off or "
			 "required)",
			 r->c->prefix, asi_quote(mode, q, sizeof(q)));
	else if (!model || !*model)
		snprintf(r->reason, sizeof(r->reason),
			 "opted in without a %s/model annotation",
			 r->c->prefix);
	else if (!plain_name(model))
		snprintf(r->reason, sizeof(r->reason),
			 "%s/model: bad value '%s' (expected a catalog model "
			 "name)",
			 r->c->prefix, asi_quote(model, q, sizeof(q)));
	else if (fw && *fw && !plain_name(fw))
		snprintf(r->reason, sizeof(r->reason),
			 "%s/framework: bad value '%s'", r->c->prefix,
			 asi_quote(fw, q, sizeof(q)));
	else if (comp && *comp && asi_parse_bool(comp) < 0)
		snprintf(r->reason, sizeof(r->reason),
			 "%s/compression: bad value '%s' (expected true or "
			 "false)",
			 r->c->prefix, asi_quote(comp, q, sizeof(q)));
	else if (named(get(t->spec, "volumes"), VOL_RUN) ||
		 named(get(t->spec, "volumes"), VOL_INFO) ||
		 named(get(t->spec, "volumes"), VOL_SITE))
		snprintf(r->reason, sizeof(r->reason),
			 "the pod already has a volume named %s, %s or %s",
			 VOL_RUN, VOL_INFO, VOL_SITE);
	else if (!json_is_array(get(t->spec, "containers")) ||
		 !json_array_size(get(t->spec, "containers")))
		snprintf(r->reason, sizeof(r->reason), "no containers");
	else
		return ASWH_MUTATED;
	return ASWH_DECLINED;
}

/* ------------------------------------------------------------- patch */

static int matches(const struct aswh_config *c, const char *res)
{
	for (unsigned i = 0; i < c->nresources; i++) {
		size_t n = strlen(c->resources[i]);
		if (n && c->resources[i][n - 1] == '/'
			? !strncmp(res, c->resources[i], n)
			: !strcmp(res, c->resources[i]))
			return 1;
	}
	return 0;
}

/* The largest request of each device resource over the containers, in
 * 'out' ("limits" or "requests"); the first container asking for one is
 * the one whose rank variables the init container copies. */
static json_t *devices(const struct review *r, const json_t *spec,
		       const char *which, const json_t **first)
{
	json_t *out = json_object();
	const json_t *ct, *q;

	const char *name;
	size_t i;

	json_array_foreach(get(spec, "containers"), i, ct)
	{
		json_object_foreach((json_t *)get(get(ct, "resources"), which),
				    name, q)
		{
			json_t *have;
			if (!matches(r->c, name))
				continue;
			if (first && !*first)
				*first = ct;
			have = get(out, name);
			if (!have || count(q, -1) > count(have, -1))
				json_object_set_new(out, name,
						    json_deep_copy(q));
		}
	}
	return out;
}

static int rank_var(const char *n)
{
	static const char *const vars[] = {
	    "PET_NNODES",
	    "PET_NPROC_PER_NODE",
	    "PET_NODE_RANK",
	    "WORLD_SIZE",
	    "RANK",
	    "LOCAL_RANK",
	    "LOCAL_WORLD_SIZE",
	    "NVIDIA_VISIBLE_DEVICES",
	    "CUDA_VISIBLE_DEVICES",
	};

	if (!strncmp(n, "OMPI_COMM_WORLD_", 16))
		return 1;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (!strcmp(n, vars[i]))
			return 1;
	return 0;
}

static json_t *mount(const char *name, const char *path, int ro)
{
	json_t *m = json_object();

	set_str(m, "name", name);
	set_str(m, "mountPath", path);
	if (ro)
		json_object_set_new(m, "readOnly", json_true());
	return m;
}

static json_t *init_container(const struct review *r, const json_t *spec)
{
	const json_t *first = NULL, *e;
	json_t *ic = json_object(), *cmd, *env, *res, *mounts;
	char num[24];
	size_t i;

	set_str(ic, "name", INIT_NAME);
	set_str(ic, "image", r->c->image);
	set_str(ic, "imagePullPolicy", r->c->pull_policy);
	cmd = add_arr(ic, "command");
	json_array_append_new(cmd, json_string("autosync"));
	json_array_append_new(cmd, json_string("init"));
	json_array_append_new(cmd, json_string(r->c->mount));
	res = add_obj(ic, "resources");
	json_object_set_new(res, "limits", devices(r, spec, "limits", &first));
	json_object_set_new(res, "requests",
			    devices(r, spec, "requests", &first));
	if (!first)
		first = json_array_get(get(spec, "containers"), 0);
	env = add_arr(ic, "env");
	json_array_foreach(get(first, "env"), i, e)
	{
		const char *n = str(e, "name");
		if (n && rank_var(n))
			json_array_append_new(env, json_deep_copy(e));
	}
	if (r->nodes > 0) {
		snprintf(num, sizeof(num), "%ld", r->nodes);
		json_array_append_new(env, env_var("AUTOSYNC_NNODES", num));
	}
	if (r->nproc > 0) {
		snprintf(num, sizeof(num), "%ld", r->nproc);
		json_array_append_new(env,
				      env_var("AUTOSYNC_NPROC_PER_NODE", num));
	}
	mounts = add_arr(ic, "volumeMounts");
	json_array_append_new(mounts, mount(VOL_RUN, r->c->mount, 0));
	json_array_append_new(mounts, mount(VOL_INFO, PODINFO_PATH, 1));
	json_array_append_new(mounts, mount(VOL_SITE, SITE_PATH, 1));
	return ic;
}

static json_t *podinfo_item(const char *file, const char *field)
{
	json_t *it = json_object(), *ref;

	set_str(it, "path", file);
	ref = add_obj(it, "fieldRef");
	set_str(ref, "fieldPath", field);
	return it;
}

static json_t *volumes(const struct review *r)
{
	static const char *const files[] = {"model", "mode", "framework",
					    "compression"};
	json_t *v = json_array(), *run, *info, *items, *site, *cm;
	char field[320];

	run = json_object();
	set_str(run, "name", VOL_RUN);
	add_obj(run, "emptyDir");
	json_array_append_new(v, run);
	info = json_object();
	set_str(info, "name", VOL_INFO);
	items = add_arr(add_obj(info, "downwardAPI"), "items");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(field, sizeof(field), "metadata.annotations['%s/%s']",
			 r->c->prefix, files[i]);
		json_array_append_new(items, podinfo_item(files[i], field));
	}
	json_array_append_new(items,
			      podinfo_item("namespace", "metadata.namespace"));
	json_array_append_new(items, podinfo_item("name", "metadata.name"));
	json_array_append_new(v, info);
	site = json_object();
	set_str(site, "name", VOL_SITE);
	cm = add_obj(site, "configMap");
	set_str(cm, "name", r->c->site_config);
	json_object_set_new(cm, "optional", json_true());
	json_array_append_new(v, site);
	return v;
}

/* Append 'items' (an array) to the array at 'base'/'key', or create it. */
static int append(json_t *patch, const char *base, const char *key,
		  const json_t *have, json_t *items)
{
	char p[PTR_MAX], path[PTR_MAX + 2];
	json_t *e;
	size_t i;

	ptr(p, base, key);
	if (!json_is_array(have))
		return add_op(patch, p, items);
	pathf(path, "%s/-", p);
	json_array_foreach(items, i, e)
	{
		if (add_op(patch, path, json_incref(e)) < 0) {
			json_decref(items);
			return -1;
		}
	}
	json_decref(items);
	return 0;
}

static int patch_containers(const struct review *r, const struct tmpl *t,
			    json_t *patch)
{
	char base[PTR_MAX], env_file[PTR_MAX], conf[PTR_MAX];
	const json_t *ct;
	size_t i;

	pathf(conf, "%s/nccl.conf", r->c->mount);
	pathf(env_file, "%s/env", r->c->mount);
	json_array_foreach(get(t->spec, "containers"), i, ct)
	{
		json_t *env = json_array(), *m = json_array();
		const json_t *have = get(ct, "env");

		pathf(base, "%s/containers/%zu", t->base, i);
		/* NCCL never lets its conf file override a variable the
		 * job sets; a container's own NCCL_CONF_FILE stays */
		if (!named(have, "NCCL_CONF_FILE"))
			json_array_append_new(env,
					      env_var("NCCL_CONF_FILE", conf));
		if (!named(have, "AUTOSYNC_ENV_FILE"))
			json_array_append_new(
			    env, env_var("AUTOSYNC_ENV_FILE", env_file));
		json_array_append_new(m, mount(VOL_RUN, r->c->mount, 1));
		if (!json_array_size(env))
			json_decref(env);
		else if (append(patch, base, "env", have, env) < 0) {
			json_decref(m);
			return -1;
		}
		if (append(patch, base, "volumeMounts", get(ct, "volumeMounts"),
			   m) < 0)
			return -1;
	}
	return 0;
}

/* The object's annotations under the prefix that its pod template lacks:
 * the downward API reads the pod's, and pods get the template's. */
static int copy_annotations(const struct review *r, const struct tmpl *t,
			    json_t *patch)
{
	const json_t *mine = get(get(r->obj, "metadata"), "annotations"), *a;
	const json_t *tpl = get(t->md, "annotations");
	size_t plen = strlen(r->c->prefix);
	json_t *add = json_object(), *v;
	const char *key;
	char p[PTR_MAX];

	if (!t->meta[0]) { /* a Pod: its own */
		json_decref(add);
		return 0;
	}
	json_object_foreach((json_t *)mine, key, a)
	{
		if (!strncmp(key, r->c->prefix, plen) && key[plen] == '/' &&
		    json_is_string(a) && !get(tpl, key))
			json_object_set_new(add, key, json_deep_copy(a));
	}
	if (!json_object_size(add)) {
		json_decref(add);
		return 0;
	}
	if (!t->md) {
		json_t *md = json_object();
		json_object_set_new(md, "annotations", add);
		return add_op(patch, t->meta, md);
	}
	if (!tpl) {
		ptr(p, t->meta, "annotations");
		return add_op(patch, p, add);
	}
	ptr(p, t->meta, "annotations");
	json_object_foreach(add, key, v)
	{
		char path[PTR_MAX];
		ptr(path, p, key);
		if (add_op(patch, path, json_incref(v)) < 0)
			break;
	}
	json_decref(add);
	return 0;
}

static int patch_tmpl(const struct review *r, const struct tmpl *t,
		      json_t *patch)
{
	const json_t *ics = get(t->spec, "initContainers");
	json_t *ic = init_container(r, t->spec);
	char p[PTR_MAX];

	if (copy_annotations(r, t, patch) < 0 ||
	    append(patch, t->base, "volumes", get(t->spec, "volumes"),
		   volumes(r)) < 0)
		return -1;
	/* first, so that the app's own init containers see the plan too */
	if (json_is_array(ics)) {
		pathf(p, "%s/initContainers/0", t->base);
		if (add_op(patch, p, ic) < 0)
			return -1;
	} else {
		json_t *a = json_array();
		json_array_append_new(a, ic);
		ptr(p, t->base, "initContainers");
		if (add_op(patch, p, a) < 0)
			return -1;
	}
	return patch_containers(r, t, patch);
}

/* ---------------------------------------------------------- response */

static char *b64(const char *s)
{
	gnutls_datum_t in = {(unsigned char *)s, (unsigned)strlen(s)}, out;
	char *r;

	if (gnutls_base64_encode2(&in, &out) < 0)
		return NULL;
	if ((r = malloc(out.size + 1))) {
		memcpy(r, out.data, out.size);
		r[out.size] = '\0';
	}
	gnutls_free(out.data);
	return r;
}

/* The answer without its patch, as jansson writes it: "response" is the
 * root's last member (jansson keeps insertion order), so the text ends in
 * "}}". */
static char *answer(const char *api, const char *uid, const json_t *warnings)
{
	json_t *root = json_object(), *resp;
	char *text;

	set_str(root, "apiVersion", api);
	set_str(root, "kind", "AdmissionReview");
	resp = add_obj(root, "response");
	set_str(resp, "uid", uid);
	json_object_set_new(resp, "allowed", json_true());
	if (warnings && json_array_size(warnings))
		json_object_set_new(resp, "warnings", json_deep_copy(warnings));
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text;
}

/* The base64 of the patch goes into the answer as text: base64's alphabet
 * needs no JSON escaping, and jansson checking and escaping a 4 KiB string
 * byte by byte cost more than the whole rest of a review. */
static char *respond(const char *api, const char *uid, const json_t *patch,
		     const json_t *warnings)
{
	static const char field[] = ",\"patchType\":\"JSONPatch\",\"patch\":\"";
	char *text = answer(api, uid, warnings), *p, *enc = NULL, *out = NULL;
	size_t n, e;

	if (!patch || !text)
		return text;
	n = strlen(text);
	if ((p = json_dumps(patch, JSON_COMPACT)))
		enc = b64(p);
	free(p);
	if (enc && n >= 2 && !strcmp(text + n - 2, "}}") &&
	    (out = malloc(n + sizeof(field) + (e = strlen(enc)) + 2))) {
		memcpy(out, text, n - 2);
		memcpy(out + n - 2, field, sizeof(field) - 1);
		memcpy(out + n - 2 + sizeof(field) - 1, enc, e);
		memcpy(out + n - 2 + sizeof(field) - 1 + e, "\"}}", 4);
	}
	free(enc);
	free(text);
	return out;
}

static const char *decision_name(int d)
{
	static const char *const n[] = {"mutated", "skipped", "declined",
					"bad-request"};
	return n[d];
}

static char *log_line(int d, const char *uid, const json_t *req,
		      const char *reason, unsigned ntemplates)
{
	json_t *l = json_object();
	const json_t *kind = get(req, "kind");
	char *s;

	set_str(l, "decision", decision_name(d));
	set_str(l, "uid", uid ? uid : "");
	set_str(l, "kind", str(kind, "kind") ? str(kind, "kind") : "");
	set_str(l, "namespace",
		str(req, "namespace") ? str(req, "namespace") : "");
	set_str(l, "name", str(req, "name") ? str(req, "name") : "");
	set_str(l, "reason", reason);
	if (d == ASWH_MUTATED)
		json_object_set_new(l, "templates", json_integer(ntemplates));
	/* ASCII only: a name with a bidi override or an escape sequence
	 * reaches 'kubectl logs' as \\uXXXX, never as itself */
	s = json_dumps(l, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(l);
	return s;
}

/* -------------------------------------------------------------- review */

static int decide(struct review *r, const json_t *req, json_t **patch)
{
	const json_t *kind = get(req, "kind");
	const char *op = str(req, "operation");
	const char *group = str(kind, "group"), *k = str(kind, "kind");
	int d = ASWH_SKIPPED;

	if (op && strcmp(op, "CREATE")) {
		snprintf(r->reason, sizeof(r->reason), "operation %.32s", op);
		return ASWH_SKIPPED;
	}
	if (!json_is_object(r->obj) || !k) {
		snprintf(r->reason, sizeof(r->reason),
			 "no request.object or request.kind");
		return ASWH_DECLINED;
	}
	if (!opted_in(r)) {
		snprintf(r->reason, sizeof(r->reason), "not opted in");
		return ASWH_SKIPPED;
	}
	if (find_templates(r, group ? group : "", k) < 0 || !r->nt) {
		char q[96];
		snprintf(r->reason, sizeof(r->reason),
			 "%s: no pod template autosync knows",
			 asi_quote(k, q, sizeof(q)));
		return ASWH_DECLINED;
	}
	for (unsigned i = 0; i < r->nt; i++)
		if ((d = check_tmpl(r, &r->t[i])) != ASWH_MUTATED)
			return d;
	if (!(*patch = json_array()))
		return -1;
	for (unsigned i = 0; i < r->nt; i++)
		if (patch_tmpl(r, &r->t[i], *patch) < 0)
			return -1;
	snprintf(r->reason, sizeof(r->reason), "model %s",
		 annotation(r, &r->t[0], "model"));
	return ASWH_MUTATED;
}

int aswh_review(const struct aswh_config *c, const char *body, size_t len,
		char **response, char **log)
{
	struct review r = {.c = c};
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *patch = NULL;
	const json_t *req = get(root, "request");
	const char *uid = str(req, "uid"), *api = str(root, "apiVersion");
	const char *kind = str(root, "kind");
	int d;

	*response = *log = NULL;
	if (!uid || !*uid) {
		*log = log_line(ASWH_BAD_REQUEST, NULL, req,
				!root ? "the body is not JSON"
				      : "no request.uid to answer",
				0);
		json_decref(root);
		return ASWH_BAD_REQUEST;
	}
	r.obj = get(req, "object");
	r.warnings = json_array();
	if (!kind || strcmp(kind, "AdmissionReview") || !api ||
	    (strcmp(api, "admission.k8s.io/v1") &&
	     strcmp(api, "admission.k8s.io/v1beta1"))) {
		snprintf(r.reason, sizeof(r.reason),
			 "not an admission.k8s.io/v1 AdmissionReview");
		d = ASWH_DECLINED;
		api = "admission.k8s.io/v1";
	} else if ((d = decide(&r, req, &patch)) < 0) {
		snprintf(r.reason, sizeof(r.reason), "out of memory");
		d = ASWH_DECLINED;
		json_decref(patch);
		patch = NULL;
	}
	if (d == ASWH_DECLINED) {
		char w[300];
		snprintf(w, sizeof(w), "autosync: %s; the pod runs without it",
			 r.reason);
		json_array_append_new(r.warnings, json_string(w));
	}
	*response =
	    respond(api, uid, d == ASWH_MUTATED ? patch : NULL, r.warnings);
	*log = log_line(d, uid, req, r.reason, r.nt);
	json_decref(patch);
	json_decref(r.warnings);
	json_decref(root);
	return d;
}
