/* mutate.c - see mutate.h. One pass over the AdmissionReview: check the
 * body, find the pod specs of the object (the pod's own, or its workload's
 * templates), decide from the opt-in label and the annotations, then build
 * the JSON Patch and base64 it with GnuTLS. Nothing here does I/O.
 *
 * The review reads and builds its JSON with cJSON: on a PyTorchJob body,
 * jansson's parser and writer took 40 of the 61 us a review cost (14 to
 * parse, 26 to write the patch), cJSON's take about 9, and every pod that
 * opts in waits for a review (results/2026-12-06-webhook-cjson). cJSON
 * checks less than jansson, so the body is checked first: UTF-8, no
 * control bytes, no \u0000, nothing after the value, no repeated key.
 * The log line stays jansson's, like every log line autosync writes: it
 * escapes all that is not ASCII. */
#include "config.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <sanitizer/asan_interface.h>

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
/* an object with more keys is checked for repeats by sorting them */
#define FEW_KEYS 16

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

/* ------------------------------------------------------------ memory */

/* cJSON's nodes and strings during a review come from the thread's bump
 * arena, dropped whole at the review's end: a review makes some 500 small
 * allocations, and malloc and free were a third of its cost. What outgrows
 * the arena (bodies near the 1 MiB limit) is malloc's. Under ASan the
 * arena is poisoned except what a review was given, so a pointer kept past
 * the review or a write past an allocation is still caught. This file is
 * the process's only cJSON user: it sets cJSON's allocator once. */
#define ARENA_BYTES (256u << 10)
#define ARENA_GAP 16 /* poisoned bytes after each allocation */

static __thread struct {
	char *buf; /* ARENA_BYTES, or NULL */
	size_t used;
	int on; /* inside a review */
} arena;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static pthread_key_t arena_key; /* frees a thread's arena when it ends */

static void *arena_alloc(size_t n)
{
	size_t need = (n + ARENA_GAP + 15) & ~(size_t)15;
	char *p;

	if (!arena.on || need < n || ARENA_BYTES - arena.used < need)
		return malloc(n);
	p = arena.buf + arena.used;
	arena.used += need;
	ASAN_UNPOISON_MEMORY_REGION(p, n);
	return p;
}

static void arena_free(void *p)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)arena.buf;

	if (arena.buf && a >= b && a - b < ARENA_BYTES)
		return; /* goes with the arena */
	free(p);
}

static void arena_init(void)
{
	cJSON_Hooks h = {.malloc_fn = arena_alloc, .free_fn = arena_free};

	cJSON_InitHooks(&h);
	(void)pthread_key_create(&arena_key, free);
}

static void arena_begin(void)
{
	(void)pthread_once(&arena_once, arena_init);
	if (!arena.buf && (arena.buf = malloc(ARENA_BYTES))) {
		(void)pthread_setspecific(arena_key, arena.buf);
		ASAN_POISON_MEMORY_REGION(arena.buf, ARENA_BYTES);
	}
	arena.used = 0;
	arena.on = arena.buf != NULL;
}

static void arena_end(void)
{
	if (arena.buf)
		ASAN_POISON_MEMORY_REGION(arena.buf, arena.used);
	arena.used = 0;
	arena.on = 0;
}

/* ------------------------------------------------------------ the body */

/* Is the backslash at body[i] the start of the escape \u0000? Only when
 * the backslashes before it are even. */
static int nul_escape(const char *body, size_t len, size_t i)
{
	size_t n = 0;

	if (len - i < 6 || memcmp(body + i, "\\u0000", 6))
		return 0;
	while (n < i && body[i - 1 - n] == '\\')
		n++;
	return n % 2 == 0;
}

/* What jansson refused and cJSON lets through, on the raw text: bytes that
 * are not UTF-8, control bytes (only tab, newline and return may appear in
 * JSON text, and only between tokens), and \u0000, which cJSON would turn
 * into the end of a C string. NULL when the text is clean, else why not.
 * ASCII, the common case, is checked here byte by byte. */
static const char *unclean(const char *body, size_t len)
{
	const unsigned char *b = (const unsigned char *)body;

	for (size_t i = 0; i < len; i++) {
		if (b[i] >= 0x80) {
			size_t k = b[i] >= 0xf0 ? 4 : b[i] >= 0xe0 ? 3 : 2;
			if (k > len - i || !asi_utf8_valid(body + i, k))
				return "the body is not UTF-8";
			i += k - 1;
		} else if (b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' &&
			   b[i] != '\r') {
			return "the body holds a control byte";
		} else if (b[i] == '\\' && nul_escape(body, len, i)) {
			return "the body holds \\u0000";
		}
	}
	return NULL;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* 1 when some object under 'v' has a key twice (jansson's
 * JSON_REJECT_DUPLICATES: a reader that takes the first and one that takes
 * the last would see two objects), -1 out of memory. cJSON bounds the
 * nesting at CJSON_NESTING_LIMIT, so the recursion is bounded too. */
static int repeated_key(const cJSON *v)
{
	const cJSON *e, *f;
	int n = 0, rc = 0;

	cJSON_ArrayForEach(e, v)
	{
		if ((rc = repeated_key(e)) != 0)
			return rc;
		n++;
	}
	if (!cJSON_IsObject(v) || n < 2)
		return 0;
	if (n <= FEW_KEYS) {
		for (e = v->child; e; e = e->next)
			for (f = e->next; f; f = f->next)
				if (!strcmp(e->string, f->string))
					return 1;
		return 0;
	}
	const char **keys = malloc((size_t)n * sizeof(*keys));
	int i = 0;

	if (!keys)
		return -1;
	cJSON_ArrayForEach(e, v) keys[i++] = e->string;
	qsort(keys, (size_t)n, sizeof(*keys), by_key);
	for (i = 1; i < n && !rc; i++)
		rc = !strcmp(keys[i - 1], keys[i]);
	free(keys);
	return rc;
}

/* The body as JSON, or NULL with why not in 'why'. */
static cJSON *load(const char *body, size_t len, const char **why)
{
	const char *end = NULL, *u = unclean(body, len);
	cJSON *root;
	int rep;

	if (u) {
		*why = u;
		return NULL;
	}
	root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
	if (root && end)
		while (end < body + len && strchr(" \t\n\r", *end))
			end++;
	if (!root || end != body + len) {
		*why = "the body is not JSON";
		cJSON_Delete(root);
		return NULL;
	}
	if ((rep = repeated_key(root)) != 0) {
		*why = rep > 0 ? "the body repeats a key" : "out of memory";
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* ------------------------------------------------------------ helpers */

static cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key)
				 : NULL;
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

/* Building: keys are string literals, which cJSON keeps as pointers
 * (AddItemToObjectCS), and values that outlive the review (literals, the
 * config) are referenced, not copied. A patch is some 150 nodes, and
 * copying their strings was half of what building it cost. 'v' is
 * returned; NULL (out of memory) is not added. */
static cJSON *put(cJSON *o, const char *literal_key, cJSON *v)
{
	cJSON_AddItemToObjectCS(o, literal_key, v);
	return v;
}

/* A copy of 'v' at 'literal_key'. */
static void set_str(cJSON *o, const char *literal_key, const char *v)
{
	put(o, literal_key, cJSON_CreateString(v));
}

/* 'v' itself, which must outlive 'o'. */
static void set_ref(cJSON *o, const char *literal_key, const char *v)
{
	put(o, literal_key, cJSON_CreateStringReference(v));
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A count: a non-negative whole JSON number or a string of digits; else
 * 'dflt'. */
static long count(const cJSON *v, long dflt)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL;

	if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    v->valuedouble < 1000000 &&
	    v->valuedouble == (double)(long)v->valuedouble)
		return (long)v->valuedouble;
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

/* One "add" operation; takes 'value'. */
static int add_op(cJSON *patch, const char *path, cJSON *value)
{
	cJSON *op = cJSON_CreateObject();

	if (!op || !value) {
		cJSON_Delete(op);
		cJSON_Delete(value);
		return -1;
	}
	set_ref(op, "op", "add");
	set_str(op, "path", path);
	put(op, "value", value);
	cJSON_AddItemToArray(patch, op);
	return 0;
}

static const cJSON *named(const cJSON *array, const char *name)
{
	const cJSON *e;

	if (!cJSON_IsArray(array))
		return NULL;
	cJSON_ArrayForEach(e, array)
	{
		const char *n = str(e, "name");
		if (n && !strcmp(n, name))
			return e;
	}
	return NULL;
}

static cJSON *env_var(const char *name, const char *value)
{
	cJSON *e = cJSON_CreateObject();

	set_ref(e, "name", name); /* a literal */
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
	char base[PTR_MAX];	/* the pod spec's pointer */
	char meta[PTR_MAX];	/* its metadata's pointer ("" for a Pod) */
	const cJSON *spec, *md; /* the pod spec, its metadata (may be NULL) */
};

struct review {
	const struct aswh_config *c;
	const cJSON *obj;
	struct tmpl t[MAX_TEMPLATES];
	unsigned nt;
	int too_many;	   /* more templates than t[] holds */
	long nodes, nproc; /* from the workload; 0 unknown */
	char reason[256];
	const char *warning; /* the one warning of a declined review */
};

static void add_tmpl(struct review *r, const char *base, const cJSON *tpl)
{
	struct tmpl *t;

	if (!cJSON_IsObject(get(tpl, "spec")))
		return;
	if (r->nt >= MAX_TEMPLATES) {
		r->too_many = 1;
		return;
	}
	t = &r->t[r->nt++];
	pathf(t->base, "%s/spec", base);
	pathf(t->meta, "%s/metadata", base);
	t->spec = get(tpl, "spec");
	t->md = get(tpl, "metadata");
}

static void pytorchjob(struct review *r, const cJSON *spec)
{
	static const char *const roles[] = {"Master", "Worker"};
	const cJSON *rs = get(spec, "pytorchReplicaSpecs");
	char base[PTR_MAX];

	for (size_t i = 0; i < 2; i++) {
		const cJSON *role = get(rs, roles[i]);
		if (!role)
			continue;
		pathf(base, "/spec/pytorchReplicaSpecs/%s/template", roles[i]);
		add_tmpl(r, base, get(role, "template"));
		r->nodes += count(get(role, "replicas"), 1);
	}
	r->nproc = count(get(spec, "nprocPerNode"), 0);
}

static void jobset(struct review *r, const cJSON *spec)
{
	const cJSON *rj = get(spec, "replicatedJobs"), *e;
	char base[PTR_MAX];
	size_t i = 0;

	if (!cJSON_IsArray(rj))
		return;
	cJSON_ArrayForEach(e, rj)
	{
		const cJSON *job = get(get(e, "template"), "spec");
		pathf(base, "/spec/replicatedJobs/%zu/template/spec/template",
		      i++);
		add_tmpl(r, base, get(job, "template"));
		r->nodes += count(get(e, "replicas"), 1) *
			    count(get(job, "parallelism"), 1);
	}
}

/* The pod templates of the object and the job's size; -1 unhandled. */
static int find_templates(struct review *r, const char *group, const char *kind)
{
	const cJSON *spec = get(r->obj, "spec");

	if (!strcmp(kind, "Pod") && !*group) {
		r->t[0] = (struct tmpl){.base = "/spec",
					.meta = "",
					.spec = spec,
					.md = get(r->obj, "metadata")};
		r->nt = cJSON_IsObject(spec);
	} else if (!strcmp(kind, "Job") && !strcmp(group, "batch")) {
		add_tmpl(r, "/spec/template", get(spec, "template"));
		r->nodes = count(get(spec, "parallelism"), 1);
	} else if (!strcmp(kind, "PyTorchJob") &&
		   !strcmp(group, "kubeflow.org")) {
		pytorchjob(r, spec);
	} else if (!strcmp(kind, "MPIJob") && !strcmp(group, "kubeflow.org")) {
		const cJSON *w = get(get(spec, "mpiReplicaSpecs"), "Worker");
		/* the launcher only runs mpirun: the workers hold the GPUs */
		add_tmpl(r, "/spec/mpiReplicaSpecs/Worker/template",
			 get(w, "template"));
		r->nodes = count(get(w, "replicas"), 1);
		r->nproc = count(get(spec, "slotsPerWorker"), 1);
	} else if (!strcmp(kind, "JobSet") &&
		   !strcmp(group, "jobset.x-k8s.io")) {
		jobset(r, spec);
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
	const cJSON *vols = get(t->spec, "volumes");
	const cJSON *cts = get(t->spec, "containers");
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
	else if (named(vols, VOL_RUN) || named(vols, VOL_INFO) ||
		 named(vols, VOL_SITE))
		snprintf(r->reason, sizeof(r->reason),
			 "the pod already has a volume named %s, %s or %s",
			 VOL_RUN, VOL_INFO, VOL_SITE);
	else if (!cJSON_IsArray(cts) || !cts->child)
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
static cJSON *devices(const struct review *r, const cJSON *spec,
		      const char *which, const cJSON **first)
{
	cJSON *out = cJSON_CreateObject();
	const cJSON *cts = get(spec, "containers"), *ct, *q;

	if (!cJSON_IsArray(cts))
		return out;
	cJSON_ArrayForEach(ct, cts)
	{
		const cJSON *res = get(get(ct, "resources"), which);

		if (!cJSON_IsObject(res))
			continue;
		cJSON_ArrayForEach(q, res)
		{
			const cJSON *have;
			if (!matches(r->c, q->string))
				continue;
			if (first && !*first)
				*first = ct;
			have = get(out, q->string);
			if (!have)
				cJSON_AddItemToObject(out, q->string,
						      cJSON_Duplicate(q, 1));
			else if (count(q, -1) > count(have, -1))
				cJSON_ReplaceItemInObjectCaseSensitive(
				    out, q->string, cJSON_Duplicate(q, 1));
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

static cJSON *mount(const char *name, const char *path, int ro)
{
	cJSON *m = cJSON_CreateObject();

	set_ref(m, "name", name); /* literals and the config's */
	set_ref(m, "mountPath", path);
	if (ro)
		put(m, "readOnly", cJSON_CreateTrue());
	return m;
}

/* The init container's environment: the rank variables of the first
 * container that asks for a device (else the first container), then the
 * job's size. */
static cJSON *init_env(const struct review *r, const cJSON *first)
{
	const cJSON *have = get(first, "env"), *e;
	cJSON *env = cJSON_CreateArray();
	char num[24];

	if (cJSON_IsArray(have))
		cJSON_ArrayForEach(e, have)
		{
			const char *n = str(e, "name");
			if (n && rank_var(n))
				cJSON_AddItemToArray(env,
						     cJSON_Duplicate(e, 1));
		}
	if (r->nodes > 0) {
		snprintf(num, sizeof(num), "%ld", r->nodes);
		cJSON_AddItemToArray(env, env_var("AUTOSYNC_NNODES", num));
	}
	if (r->nproc > 0) {
		snprintf(num, sizeof(num), "%ld", r->nproc);
		cJSON_AddItemToArray(env,
				     env_var("AUTOSYNC_NPROC_PER_NODE", num));
	}
	/* the site ConfigMap where it is mounted, whatever sysconfdir the
	 * image's autosync was built with (read when it is there) */
	cJSON_AddItemToArray(
	    env, env_var("AUTOSYNC_SITE_CONFIG", SITE_PATH "/autosync.yaml"));
	return env;
}

static cJSON *init_container(const struct review *r, const cJSON *spec)
{
	const cJSON *first = NULL;
	cJSON *ic = cJSON_CreateObject(), *cmd, *res, *mounts;

	set_ref(ic, "name", INIT_NAME);
	set_ref(ic, "image", r->c->image);
	set_ref(ic, "imagePullPolicy", r->c->pull_policy);
	cmd = put(ic, "command", cJSON_CreateArray());
	cJSON_AddItemToArray(cmd, cJSON_CreateStringReference("autosync"));
	cJSON_AddItemToArray(cmd, cJSON_CreateStringReference("init"));
	cJSON_AddItemToArray(cmd, cJSON_CreateStringReference(r->c->mount));
	res = put(ic, "resources", cJSON_CreateObject());
	put(res, "limits", devices(r, spec, "limits", &first));
	put(res, "requests", devices(r, spec, "requests", &first));
	if (!first)
		first = cJSON_GetArrayItem(get(spec, "containers"), 0);
	put(ic, "env", init_env(r, first));
	mounts = put(ic, "volumeMounts", cJSON_CreateArray());
	cJSON_AddItemToArray(mounts, mount(VOL_RUN, r->c->mount, 0));
	cJSON_AddItemToArray(mounts, mount(VOL_INFO, PODINFO_PATH, 1));
	cJSON_AddItemToArray(mounts, mount(VOL_SITE, SITE_PATH, 1));
	return ic;
}

static cJSON *podinfo_item(const char *file, const char *field)
{
	cJSON *it = cJSON_CreateObject();

	set_ref(it, "path", file); /* a literal */
	set_str(put(it, "fieldRef", cJSON_CreateObject()), "fieldPath", field);
	return it;
}

static cJSON *volumes(const struct review *r)
{
	static const char *const files[] = {"model", "mode", "framework",
					    "compression"};
	cJSON *v = cJSON_CreateArray(), *run, *info, *items, *site, *cm;
	char field[320];

	run = cJSON_CreateObject();
	set_ref(run, "name", VOL_RUN);
	put(run, "emptyDir", cJSON_CreateObject());
	cJSON_AddItemToArray(v, run);
	info = cJSON_CreateObject();
	set_ref(info, "name", VOL_INFO);
	items = put(put(info, "downwardAPI", cJSON_CreateObject()), "items",
		    cJSON_CreateArray());
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(field, sizeof(field), "metadata.annotations['%s/%s']",
			 r->c->prefix, files[i]);
		cJSON_AddItemToArray(items, podinfo_item(files[i], field));
	}
	cJSON_AddItemToArray(items,
			     podinfo_item("namespace", "metadata.namespace"));
	cJSON_AddItemToArray(items, podinfo_item("name", "metadata.name"));
	cJSON_AddItemToArray(v, info);
	site = cJSON_CreateObject();
	set_ref(site, "name", VOL_SITE);
	cm = put(site, "configMap", cJSON_CreateObject());
	set_ref(cm, "name", r->c->site_config);
	put(cm, "optional", cJSON_CreateTrue());
	cJSON_AddItemToArray(v, site);
	return v;
}

/* Append 'items' (an array, taken) to the array at 'base'/'key', or create
 * it. */
static int append(cJSON *patch, const char *base, const char *key,
		  const cJSON *have, cJSON *items)
{
	char p[PTR_MAX], path[PTR_MAX + 2];
	int rc = 0;

	if (!items)
		return -1;
	ptr(p, base, key);
	if (!cJSON_IsArray(have))
		return add_op(patch, p, items);
	pathf(path, "%s/-", p);
	while (items->child && rc == 0)
		rc = add_op(patch, path, cJSON_DetachItemFromArray(items, 0));
	cJSON_Delete(items);
	return rc;
}

static int patch_containers(const struct review *r, const struct tmpl *t,
			    cJSON *patch)
{
	char base[PTR_MAX], env_file[PTR_MAX], conf[PTR_MAX];
	const cJSON *cts = get(t->spec, "containers"), *ct;
	size_t i = 0;

	pathf(conf, "%s/nccl.conf", r->c->mount);
	pathf(env_file, "%s/env", r->c->mount);
	cJSON_ArrayForEach(ct, cts)
	{
		cJSON *env = cJSON_CreateArray(), *m = cJSON_CreateArray();
		const cJSON *have = get(ct, "env");

		pathf(base, "%s/containers/%zu", t->base, i++);
		/* NCCL never lets its conf file override a variable the
		 * job sets; a container's own NCCL_CONF_FILE stays */
		if (!named(have, "NCCL_CONF_FILE"))
			cJSON_AddItemToArray(env,
					     env_var("NCCL_CONF_FILE", conf));
		if (!named(have, "AUTOSYNC_ENV_FILE"))
			cJSON_AddItemToArray(
			    env, env_var("AUTOSYNC_ENV_FILE", env_file));
		cJSON_AddItemToArray(m, mount(VOL_RUN, r->c->mount, 1));
		if (!env || !env->child)
			cJSON_Delete(env);
		else if (append(patch, base, "env", have, env) < 0) {
			cJSON_Delete(m);
			return -1;
		}
		if (append(patch, base, "volumeMounts", get(ct, "volumeMounts"),
			   m) < 0)
			return -1;
	}
	return 0;
}

/* The object's annotations under the prefix that its pod template lacks
 * (strings only), or NULL when there are none: the downward API reads the
 * pod's, and pods get the template's. */
static cJSON *missing_annotations(const struct review *r, const struct tmpl *t)
{
	const cJSON *mine = get(get(r->obj, "metadata"), "annotations"), *a;
	const cJSON *tpl = get(t->md, "annotations");
	size_t plen = strlen(r->c->prefix);
	cJSON *add = NULL;

	if (!cJSON_IsObject(mine))
		return NULL;
	cJSON_ArrayForEach(a, mine)
	{
		if (strncmp(a->string, r->c->prefix, plen) ||
		    a->string[plen] != '/' || !cJSON_IsString(a) ||
		    get(tpl, a->string))
			continue;
		if (!add && !(add = cJSON_CreateObject()))
			return NULL;
		cJSON_AddItemToObject(add, a->string, cJSON_Duplicate(a, 1));
	}
	return add;
}

static int copy_annotations(const struct review *r, const struct tmpl *t,
			    cJSON *patch)
{
	cJSON *add, *md;
	char p[PTR_MAX], path[PTR_MAX];
	int rc = 0;

	if (!t->meta[0]) /* a Pod: its own */
		return 0;
	if (!(add = missing_annotations(r, t)))
		return 0;
	if (!t->md) {
		md = cJSON_CreateObject();
		put(md, "annotations", add);
		return add_op(patch, t->meta, md);
	}
	ptr(p, t->meta, "annotations");
	if (!get(t->md, "annotations"))
		return add_op(patch, p, add);
	while (add->child && rc == 0) {
		cJSON *v = cJSON_DetachItemViaPointer(add, add->child);
		ptr(path, p, v->string);
		rc = add_op(patch, path, v);
	}
	cJSON_Delete(add);
	return rc;
}

static int patch_tmpl(const struct review *r, const struct tmpl *t,
		      cJSON *patch)
{
	const cJSON *ics = get(t->spec, "initContainers");
	cJSON *ic;
	char p[PTR_MAX];

	if (copy_annotations(r, t, patch) < 0 ||
	    append(patch, t->base, "volumes", get(t->spec, "volumes"),
		   volumes(r)) < 0)
		return -1;
	/* first, so that the app's own init containers see the plan too */
	ic = init_container(r, t->spec);
	if (cJSON_IsArray(ics)) {
		pathf(p, "%s/initContainers/0", t->base);
	} else {
		cJSON *a = cJSON_CreateArray();
		if (!cJSON_AddItemToArray(a, ic)) {
			cJSON_Delete(a);
			cJSON_Delete(ic);
			return -1;
		}
		ic = a;
		ptr(p, t->base, "initContainers");
	}
	if (add_op(patch, p, ic) < 0)
		return -1;
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

/* The answer without its patch: "response" is the root's last member
 * (cJSON keeps insertion order), so the text ends in "}}". */
static char *answer(const char *api, const char *uid, const char *warning)
{
	cJSON *root = cJSON_CreateObject(), *resp;
	char *text;

	set_str(root, "apiVersion", api);
	set_str(root, "kind", "AdmissionReview");
	resp = put(root, "response", cJSON_CreateObject());
	set_str(resp, "uid", uid);
	put(resp, "allowed", cJSON_CreateTrue());
	if (warning)
		cJSON_AddItemToArray(put(resp, "warnings", cJSON_CreateArray()),
				     cJSON_CreateString(warning));
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return text;
}

/* The base64 of the patch goes into the answer as text: its alphabet
 * needs no JSON escaping, and a writer checking a 4 KiB string byte by
 * byte would cost more than the rest of the answer. The result is
 * malloc'ed (cJSON's text is the arena's). */
static char *respond(const char *api, const char *uid, const cJSON *patch,
		     const char *warning)
{
	static const char field[] = ",\"patchType\":\"JSONPatch\",\"patch\":\"";
	char *text = answer(api, uid, warning), *p, *enc = NULL, *out = NULL;
	size_t n, e;

	if (!text)
		return NULL;
	n = strlen(text);
	if (!patch) {
		out = strdup(text);
		cJSON_free(text);
		return out;
	}
	if ((p = cJSON_PrintUnformatted(patch)))
		enc = b64(p);
	cJSON_free(p);
	if (enc && n >= 2 && !strcmp(text + n - 2, "}}") &&
	    (out = malloc(n + sizeof(field) + (e = strlen(enc)) + 2))) {
		memcpy(out, text, n - 2);
		memcpy(out + n - 2, field, sizeof(field) - 1);
		memcpy(out + n - 2 + sizeof(field) - 1, enc, e);
		memcpy(out + n - 2 + sizeof(field) - 1 + e, "\"}}", 4);
	}
	free(enc);
	cJSON_free(text);
	return out;
}

static const char *decision_name(int d)
{
	static const char *const n[] = {"mutated", "skipped", "declined",
					"bad-request"};
	return n[d];
}

static char *log_line(int d, const char *uid, const cJSON *req,
		      const char *reason, unsigned ntemplates)
{
	json_t *l = json_object();
	const cJSON *kind = get(req, "kind");
	char *s;

	json_object_set_new(l, "decision", json_string(decision_name(d)));
	json_object_set_new(l, "uid", json_string(uid ? uid : ""));
	json_object_set_new(
	    l, "kind", json_string(str(kind, "kind") ? str(kind, "kind") : ""));
	json_object_set_new(
	    l, "namespace",
	    json_string(str(req, "namespace") ? str(req, "namespace") : ""));
	json_object_set_new(
	    l, "name", json_string(str(req, "name") ? str(req, "name") : ""));
	json_object_set_new(l, "reason", json_string(reason));
	if (d == ASWH_MUTATED)
		json_object_set_new(l, "templates", json_integer(ntemplates));
	/* ASCII only: a name with a bidi override or an escape sequence
	 * reaches 'kubectl logs' as \\uXXXX, never as itself */
	s = json_dumps(l, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(l);
	return s;
}

/* -------------------------------------------------------------- review */

static int decide(struct review *r, const cJSON *req, cJSON **patch)
{
	const cJSON *kind = get(req, "kind");
	const char *op = str(req, "operation");
	const char *group = str(kind, "group"), *k = str(kind, "kind");
	int d = ASWH_SKIPPED;

	if (op && strcmp(op, "CREATE")) {
		snprintf(r->reason, sizeof(r->reason), "operation %.32s", op);
		return ASWH_SKIPPED;
	}
	if (!cJSON_IsObject(r->obj) || !k) {
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
	/* all of the job's pods or none: ranks of one communicator must
	 * decide alike */
	if (r->too_many) {
		snprintf(r->reason, sizeof(r->reason),
			 "more than %d pod templates", MAX_TEMPLATES);
		return ASWH_DECLINED;
	}
	for (unsigned i = 0; i < r->nt; i++)
		if ((d = check_tmpl(r, &r->t[i])) != ASWH_MUTATED)
			return d;
	if (!(*patch = cJSON_CreateArray()))
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
	const char *why = NULL;
	cJSON *root, *patch = NULL;
	const cJSON *req;
	const char *uid, *api, *kind;
	char w[300];
	int d;

	*response = *log = NULL;
	arena_begin();
	root = load(body, len, &why);
	req = get(root, "request");
	uid = str(req, "uid");
	api = str(root, "apiVersion");
	kind = str(root, "kind");
	if (!uid || !*uid) {
		*log = log_line(ASWH_BAD_REQUEST, NULL, req,
				why ? why : "no request.uid to answer", 0);
		cJSON_Delete(root);
		arena_end();
		return ASWH_BAD_REQUEST;
	}
	r.obj = get(req, "object");
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
	}
	if (d == ASWH_DECLINED) {
		snprintf(w, sizeof(w), "autosync: %s; the pod runs without it",
			 r.reason);
		r.warning = w;
	}
	*response =
	    respond(api, uid, d == ASWH_MUTATED ? patch : NULL, r.warning);
	*log = log_line(d, uid, req, r.reason, r.nt);
	cJSON_Delete(patch);
	cJSON_Delete(root);
	arena_end();
	return d;
}
