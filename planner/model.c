/* model.c - model descriptions: tensors, layers, the YAML loader and the
 * catalog search path. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ykeys.h"
#include "internal.h"

static const struct {
	const char *name;
	unsigned size;
} dtypes[AUTOSYNC_DT_NTYPES] = {
    [AUTOSYNC_DT_FLOAT32] = {"float32", 4},
    [AUTOSYNC_DT_FLOAT16] = {"float16", 2},
    [AUTOSYNC_DT_BFLOAT16] = {"bfloat16", 2},
    [AUTOSYNC_DT_FLOAT64] = {"float64", 8},
    [AUTOSYNC_DT_INT64] = {"int64", 8},
    [AUTOSYNC_DT_INT32] = {"int32", 4},
    [AUTOSYNC_DT_INT8] = {"int8", 1},
    [AUTOSYNC_DT_UINT8] = {"uint8", 1},
};

const char *autosync_dtype_name(int dt)
{
	if (dt < 0 || dt >= AUTOSYNC_DT_NTYPES)
		return NULL;
	return dtypes[dt].name;
}

unsigned autosync_dtype_size(int dt)
{
	if (dt < 0 || dt >= AUTOSYNC_DT_NTYPES)
		return 0;
	return dtypes[dt].size;
}

int autosync_dtype_from_name(const char *name)
{
	static const struct {
		const char *alias;
		int dt;
	} aliases[] = {
	    {"fp32", AUTOSYNC_DT_FLOAT32},   {"float", AUTOSYNC_DT_FLOAT32},
	    {"fp16", AUTOSYNC_DT_FLOAT16},   {"half", AUTOSYNC_DT_FLOAT16},
	    {"bf16", AUTOSYNC_DT_BFLOAT16},  {"fp64", AUTOSYNC_DT_FLOAT64},
	    {"double", AUTOSYNC_DT_FLOAT64},
	};
	if (!name) {
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < AUTOSYNC_DT_NTYPES; i++)
		if (!strcmp(name, dtypes[i].name))
			return i;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].alias))
			return aliases[i].dt;
	errno = EINVAL;
	return -1;
}

/* ------------------------------------------------------------ hash tables */
static uint64_t strhash(const char *s)
{
	return fnv1a(FNV_OFFSET, s, strlen(s));
}

/* tables hold index+1; 0 = empty */
static int ht_grow(size_t **tab, size_t *cap, size_t n,
		   const char *(*key)(const autosync_model_t *, size_t),
		   const autosync_model_t *m)
{
	size_t ncap = *cap ? *cap * 2 : 64, *nt;

	/* room for n + 1 entries at load <= 1/2; rehash the n present */
	if ((n + 1) * 2 < *cap)
		return 0;
	while ((n + 1) * 2 >= ncap)
		ncap *= 2;
	if (!(nt = calloc(ncap, sizeof(*nt))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		size_t h = strhash(key(m, i)) & (ncap - 1);
		while (nt[h])
			h = (h + 1) & (ncap - 1);
		nt[h] = i + 1;
	}
	free(*tab);
	*tab = nt;
	*cap = ncap;
	return 0;
}

static const char *tkey(const autosync_model_t *m, size_t i)
{
	return m->t[i].name;
}

static const char *lkey(const autosync_model_t *m, size_t i)
{
	return m->l[i].name;
}

static long ht_find(size_t *tab, size_t cap, const char *name,
		    const char *(*key)(const autosync_model_t *, size_t),
		    const autosync_model_t *m)
{
	size_t h;

	if (!cap)
		return -1;
	h = strhash(name) & (cap - 1);
	while (tab[h]) {
		if (!strcmp(key(m, tab[h] - 1), name))
			return (long)(tab[h] - 1);
		h = (h + 1) & (cap - 1);
	}
	return -1;
}

static void ht_insert(size_t *tab, size_t cap, const char *name, size_t idx)
{
	size_t h = strhash(name) & (cap - 1);
	while (tab[h])
		h = (h + 1) & (cap - 1);
	tab[h] = idx + 1;
}

/* ------------------------------------------------------------ building */
autosync_model_t *autosync_model_create(const char *name,
					autosync_error_t *errp)
{
	autosync_model_t *m;

	if (!name || !*name) {
		errno = EINVAL;
		autosync_errprintf(errp, "model_create: a model needs a name");
		return NULL;
	}
	if (!(m = calloc(1, sizeof(*m))) || !(m->name = strdup(name)) ||
	    !(m->framework = strdup(""))) {
		autosync_model_destroy(m);
		errno = ENOMEM;
		autosync_errprintf(errp, "model_create: out of memory");
		return NULL;
	}
	m->batch = 32;
	m->tokens = 1;
	return m;
}

void autosync_model_destroy(autosync_model_t *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free((char *)m->t[i].name);
	for (size_t i = 0; i < m->nl; i++)
		free((char *)m->l[i].name);
	free(m->t);
	free(m->l);
	free(m->ht);
	free(m->lht);
	free(m->name);
	free(m->framework);
	free(m->source);
	free(m);
}

static long layer_get(autosync_model_t *m, const char *layer, int create)
{
	long i = ht_find(m->lht, m->lhtcap, layer, lkey, m);
	autosync_layer_compute_t *l;

	if (i >= 0 || !create)
		return i;
	if (m->nl == m->lcap) {
		size_t ncap = m->lcap ? m->lcap * 2 : 16;
		void *nl = realloc(m->l, ncap * sizeof(*m->l));
		if (!nl)
			return -2;
		m->l = nl;
		m->lcap = ncap;
	}
	if (ht_grow(&m->lht, &m->lhtcap, m->nl, lkey, m) < 0)
		return -2;
	l = &m->l[m->nl];
	memset(l, 0, sizeof(*l));
	if (!(l->name = strdup(layer)))
		return -2;
	l->fwd_flops = l->bwd_flops = l->fwd_time = l->bwd_time = -1;
	ht_insert(m->lht, m->lhtcap, layer, m->nl);
	return (long)m->nl++;
}

int autosync_model_add_tensor(autosync_model_t *m, const char *name,
			      const char *layer, int dtype, unsigned ndim,
			      const int64_t *shape, int sparse,
			      uint64_t rows_touched, autosync_error_t *errp)
{
	autosync_tensor_t *t;
	uint64_t numel = 1;
	char *lname = NULL;
	long li;

	if (!m || !name || !*name || (ndim && !shape)) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "model_add_tensor: invalid argument");
	}
	if (!autosync_dtype_name(dtype)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "tensor '%s': unknown dtype %d",
					  name, dtype);
	}
	if (ndim > AUTOSYNC_MAX_DIMS) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "tensor '%s': %u dimensions (at most %d)", name, ndim,
		    AUTOSYNC_MAX_DIMS);
	}
	for (unsigned i = 0; i < ndim; i++) {
		if (shape[i] < 1) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp,
			    "tensor '%s': dimension %u is %" PRId64
			    " (must be >= 1)",
			    name, i, shape[i]);
		}
		if ((uint64_t)shape[i] > AUTOSYNC_MAX_TENSOR_ELEMS / numel) {
			errno = EOVERFLOW;
			return autosync_errprintf(
			    errp, "tensor '%s': more than %llu elements", name,
			    AUTOSYNC_MAX_TENSOR_ELEMS);
		}
		numel *= (uint64_t)shape[i];
	}
	if (sparse) {
		if (ndim < 1 || rows_touched < 1 ||
		    rows_touched > (uint64_t)shape[0]) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp,
			    "tensor '%s': rows_touched %" PRIu64
			    " must be in [1, %" PRId64
			    "] (the first dimension)",
			    name, rows_touched, ndim ? shape[0] : 0);
		}
	}
	if (m->n >= AUTOSYNC_MAX_TENSORS) {
		errno = EOVERFLOW;
		return autosync_errprintf(errp, "more than %llu tensors",
					  AUTOSYNC_MAX_TENSORS);
	}
	if (m->params + numel > AUTOSYNC_MAX_MODEL_ELEMS) {
		errno = EOVERFLOW;
		return autosync_errprintf(
		    errp, "tensor '%s': the model exceeds %llu elements", name,
		    AUTOSYNC_MAX_MODEL_ELEMS);
	}
	if (ht_find(m->ht, m->htcap, name, tkey, m) >= 0) {
		errno = EEXIST;
		return autosync_errprintf(errp, "tensor '%s' appears twice",
					  name);
	}
	if (!layer || !*layer) {
		const char *dot = strrchr(name, '.');
		lname =
		    dot ? strndup(name, (size_t)(dot - name)) : strdup(name);
		if (!lname)
			goto nomem;
		layer = lname;
	}
	if ((li = layer_get(m, layer, 1)) < 0)
		goto nomem;
	free(lname);
	lname = NULL;
	if (m->n == m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		void *nt = realloc(m->t, ncap * sizeof(*m->t));
		if (!nt)
			goto nomem;
		m->t = nt;
		m->cap = ncap;
	}
	if (ht_grow(&m->ht, &m->htcap, m->n, tkey, m) < 0)
		goto nomem;
	t = &m->t[m->n];
	memset(t, 0, sizeof(*t));
	if (!(t->name = strdup(name)))
		goto nomem;
	t->layer = m->l[li].name;
	t->layer_index = (size_t)li;
	t->dtype = dtype;
	t->ndim = ndim;
	for (unsigned i = 0; i < ndim; i++)
		t->shape[i] = shape[i];
	t->sparse = !!sparse;
	t->rows_touched = sparse ? rows_touched : 0;
	t->numel = numel;
	ht_insert(m->ht, m->htcap, name, m->n);
	m->n++;
	m->params += numel;
	m->bytes += numel * autosync_dtype_size(dtype);
	m->l[li].params += numel;
	m->hash_valid = 0;
	return 0;
nomem:
	free(lname);
	errno = ENOMEM;
	return autosync_errprintf(errp, "tensor '%s': out of memory", name);
}

int autosync_model_set_layer_flops(autosync_model_t *m, const char *layer,
				   double fwd, double bwd,
				   autosync_error_t *errp)
{
	long li;

	if (!m || !layer || !isfinite(fwd) || fwd < 0 || !isfinite(bwd)) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "model_set_layer_flops: invalid argument");
	}
	if ((li = layer_get(m, layer, 0)) < 0) {
		errno = ENOENT;
		return autosync_errprintf(errp, "layer '%s' has no tensors",
					  layer);
	}
	m->l[li].fwd_flops = fwd;
	m->l[li].bwd_flops = bwd < 0 ? -1 : bwd;
	m->compute_src = 1;
	m->hash_valid = 0;
	return 0;
}

int autosync_model_set_batch(autosync_model_t *m, unsigned batch,
			     unsigned tokens, autosync_error_t *errp)
{
	if (!m || batch < 1 || tokens < 1) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "model_set_batch: batch and tokens must be >= 1");
	}
	m->batch = batch;
	m->tokens = tokens;
	m->hash_valid = 0;
	return 0;
}

/* ------------------------------------------------------------ accessors */
const char *autosync_model_name(const autosync_model_t *m)
{
	return m ? m->name : NULL;
}

const char *autosync_model_framework(const autosync_model_t *m)
{
	return m ? m->framework : NULL;
}

unsigned autosync_model_tokens(const autosync_model_t *m)
{
	return m ? m->tokens : 0;
}

unsigned autosync_model_batch(const autosync_model_t *m)
{
	return m ? m->batch : 0;
}

size_t autosync_model_ntensors(const autosync_model_t *m)
{
	return m ? m->n : 0;
}

const autosync_tensor_t *autosync_model_tensor(const autosync_model_t *m,
					       size_t i)
{
	if (!m || i >= m->n) {
		errno = EINVAL;
		return NULL;
	}
	return &m->t[i];
}

size_t autosync_model_nlayers(const autosync_model_t *m)
{
	return m ? m->nl : 0;
}

const autosync_layer_compute_t *autosync_model_layer(const autosync_model_t *m,
						     size_t i)
{
	if (!m || i >= m->nl) {
		errno = EINVAL;
		return NULL;
	}
	return &m->l[i];
}

uint64_t autosync_model_params(const autosync_model_t *m)
{
	return m ? m->params : 0;
}

uint64_t autosync_model_bytes(const autosync_model_t *m)
{
	return m ? m->bytes : 0;
}

const char *autosync_model_compute_source(const autosync_model_t *m)
{
	static const char *const names[] = {"estimated", "flops", "time"};
	if (!m)
		return NULL;
	return m->step_compute > 0 ? "measured" : names[m->compute_src];
}

int autosync_model_set_step_compute(autosync_model_t *m, double seconds,
				    autosync_error_t *errp)
{
	if (!m || !(seconds >= 0 && seconds <= 3600)) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "model_set_step_compute: a "
			  "step's compute is 0 (none) to 3600 s");
	}
	m->step_compute = seconds;
	return 0;
}

const char *autosync_model_hash(const autosync_model_t *m)
{
	autosync_model_t *mm = (autosync_model_t *)m;
	uint64_t h = FNV_OFFSET;
	char buf[160];

	if (!m)
		return NULL;
	if (m->hash_valid)
		return m->hash;
	for (size_t i = 0; i < m->n; i++) {
		const autosync_tensor_t *t = &m->t[i];
		h = fnv1a(h, t->name, strlen(t->name) + 1);
		h = fnv1a(h, t->layer, strlen(t->layer) + 1);
		snprintf(buf, sizeof(buf), "%d %u %d %" PRIu64, t->dtype,
			 t->ndim, t->sparse, t->rows_touched);
		h = fnv1a(h, buf, strlen(buf) + 1);
		for (unsigned d = 0; d < t->ndim; d++)
			h = fnv1a(h, &t->shape[d], sizeof(t->shape[d]));
	}
	for (size_t i = 0; i < m->nl; i++) {
		snprintf(buf, sizeof(buf), "%.17g %.17g %.17g %.17g",
			 m->l[i].fwd_flops, m->l[i].bwd_flops, m->l[i].fwd_time,
			 m->l[i].bwd_time);
		h = fnv1a(h, buf, strlen(buf) + 1);
	}
	snprintf(buf, sizeof(buf), "%u %u", m->batch, m->tokens);
	h = fnv1a(h, buf, strlen(buf) + 1);
	snprintf(mm->hash, sizeof(mm->hash), "%016" PRIx64, h);
	mm->hash_valid = 1;
	return m->hash;
}

/* ------------------------------------------------------------ YAML loader */
static int check_keys(struct ydoc *d, yaml_node_t *map, const char *const *keys,
		      const char *what, autosync_error_t *errp)
{
	size_t n = 0;

	while (keys[n])
		n++;
	return asi_ykeys_check(&d->doc, map, keys, n, d->fname, what, errp);
}

static int load_tensor(struct ydoc *d, autosync_model_t *m, yaml_node_t *tn,
		       size_t idx, autosync_error_t *errp)
{
	static const char *const keys[] = {"name",   "layer",  "dtype",
					   "shape",  "sparse", "rows_touched",
					   "repeat", NULL};
	char what[96], ewhat[160];
	const char *name, *layer = NULL, *dts;
	yaml_node_t *n;
	int64_t shape[AUTOSYNC_MAX_DIMS];
	unsigned ndim = 0;
	int dt, sparse = 0;
	uint64_t rows = 0, repeat = 1;
	autosync_error_t e;

	snprintf(what, sizeof(what), "tensors[%zu]", idx);
	if (planner_yexpect(d, tn, YAML_MAPPING_NODE, what, errp) < 0 ||
	    check_keys(d, tn, keys, what, errp) < 0)
		return -1;
	if (!(n = planner_ymap_get(d, tn, "name"))) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: missing field 'name'", d->fname,
		    planner_ynode_line(tn), what);
	}
	if (planner_yget_str(d, n, what, &name, errp) < 0)
		return -1;
	if (!*name) {
		errno = EINVAL;
		return autosync_errprintf(errp, "%s:%u: %s: empty name",
					  d->fname, planner_ynode_line(n),
					  what);
	}
	snprintf(what, sizeof(what), "tensor '%.60s'", name);
	if ((n = planner_ymap_get(d, tn, "layer")) &&
	    planner_yget_str(d, n, what, &layer, errp) < 0)
		return -1;
	if (!(n = planner_ymap_get(d, tn, "dtype"))) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: missing field 'dtype'", d->fname,
		    planner_ynode_line(tn), what);
	}
	if (planner_yget_str(d, n, what, &dts, errp) < 0)
		return -1;
	if ((dt = autosync_dtype_from_name(dts)) < 0)
		return autosync_errprintf(
		    errp,
		    "%s:%u: %s: unknown dtype '%s' (float32, float16, "
		    "bfloat16, float64, int64, int32, int8, uint8)",
		    d->fname, planner_ynode_line(n), what, dts);
	if (!(n = planner_ymap_get(d, tn, "shape"))) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: missing field 'shape'", d->fname,
		    planner_ynode_line(tn), what);
	}
	snprintf(ewhat, sizeof(ewhat), "%s: shape", what);
	if (planner_yexpect(d, n, YAML_SEQUENCE_NODE, ewhat, errp) < 0)
		return -1;
	for (yaml_node_item_t *it = n->data.sequence.items.start;
	     it < n->data.sequence.items.top; it++) {
		yaml_node_t *dn = planner_ydoc_node(d, *it);
		int64_t v;
		if (ndim == AUTOSYNC_MAX_DIMS) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "%s:%u: %s: more than %d dimensions",
			    d->fname, planner_ynode_line(n), ewhat,
			    AUTOSYNC_MAX_DIMS);
		}
		snprintf(ewhat, sizeof(ewhat), "%s: shape[%u]", what, ndim);
		if (planner_yget_i64(d, dn, ewhat, &v, errp) < 0)
			return -1;
		if (v < 1) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "%s:%u: %s: '%s' must be >= 1", d->fname,
			    planner_ynode_line(dn), ewhat, planner_yscalar(dn));
		}
		shape[ndim++] = v;
	}
	if ((n = planner_ymap_get(d, tn, "sparse")) &&
	    planner_yget_bool(d, n, "sparse", &sparse, errp) < 0)
		return -1;
	if ((n = planner_ymap_get(d, tn, "rows_touched"))) {
		snprintf(ewhat, sizeof(ewhat), "%s: rows_touched", what);
		if (!sparse) {
			errno = EINVAL;
			return autosync_errprintf(
			    errp, "%s:%u: %s given without sparse: true",
			    d->fname, planner_ynode_line(n), ewhat);
		}
		if (planner_yget_u64(d, n, ewhat, 1,
				     ndim ? (uint64_t)shape[0] : 0, &rows,
				     errp) < 0)
			return -1;
	} else if (sparse) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp,
		    "%s:%u: %s: sparse: true needs rows_touched "
		    "(rows per step per rank)",
		    d->fname, planner_ynode_line(tn), what);
	}
	if ((n = planner_ymap_get(d, tn, "repeat"))) {
		snprintf(ewhat, sizeof(ewhat), "%s: repeat", what);
		if (planner_yget_u64(d, n, ewhat, 1, UINT64_MAX, &repeat,
				     errp) < 0)
			return -1;
		if (repeat > AUTOSYNC_MAX_TENSORS - m->n) {
			errno = EOVERFLOW;
			return autosync_errprintf(
			    errp,
			    "%s:%u: %s: '%s' tensors exceed the limit of %llu",
			    d->fname, planner_ynode_line(n), ewhat,
			    planner_yscalar(n), AUTOSYNC_MAX_TENSORS);
		}
	}
	e.text[0] = '\0';
	if (repeat == 1 || !planner_ymap_get(d, tn, "repeat")) {
		if (autosync_model_add_tensor(m, name, layer, dt, ndim, shape,
					      sparse, rows, &e) < 0)
			return autosync_errprintf(errp, "%s:%u: %s", d->fname,
						  planner_ynode_line(tn),
						  e.text);
		return 0;
	}
	for (uint64_t r = 0; r < repeat; r++) {
		char nm[512], ly[512];
		snprintf(nm, sizeof(nm), "%s.%" PRIu64, name, r);
		if (layer)
			snprintf(ly, sizeof(ly), "%s.%" PRIu64, layer, r);
		if (autosync_model_add_tensor(m, nm, layer ? ly : NULL, dt,
					      ndim, shape, sparse, rows,
					      &e) < 0)
			return autosync_errprintf(errp, "%s:%u: %s", d->fname,
						  planner_ynode_line(tn),
						  e.text);
	}
	return 0;
}

static int load_layer(struct ydoc *d, autosync_model_t *m, yaml_node_t *ln,
		      size_t idx, autosync_error_t *errp)
{
	static const char *const keys[] = {"name",     "fwd_flops", "bwd_flops",
					   "fwd_time", "bwd_time",  NULL};
	static const char *const fields[] = {"fwd_flops", "bwd_flops",
					     "fwd_time", "bwd_time"};
	char what[96], ewhat[160];
	const char *name;
	yaml_node_t *n;
	long li;
	double v[4] = {-1, -1, -1, -1};

	snprintf(what, sizeof(what), "layers[%zu]", idx);
	if (planner_yexpect(d, ln, YAML_MAPPING_NODE, what, errp) < 0 ||
	    check_keys(d, ln, keys, what, errp) < 0)
		return -1;
	if (!(n = planner_ymap_get(d, ln, "name"))) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: missing field 'name'", d->fname,
		    planner_ynode_line(ln), what);
	}
	if (planner_yget_str(d, n, what, &name, errp) < 0)
		return -1;
	if ((li = layer_get(m, name, 0)) < 0) {
		errno = EINVAL;
		return autosync_errprintf(
		    errp, "%s:%u: %s: layer '%s' has no tensors", d->fname,
		    planner_ynode_line(n), what, name);
	}
	for (int i = 0; i < 4; i++) {
		if (!(n = planner_ymap_get(d, ln, fields[i])))
			continue;
		snprintf(ewhat, sizeof(ewhat), "layer '%.60s': %s", name,
			 fields[i]);
		if (planner_yget_double(d, n, ewhat, 0, i < 2 ? 1e21 : 1e6,
					&v[i], errp) < 0)
			return -1;
	}
	if ((v[2] >= 0) != (v[3] >= 0) && v[2] >= 0 && v[3] < 0) {
		/* fwd_time alone: backward follows the ratio */
	}
	m->l[li].fwd_flops = v[0];
	m->l[li].bwd_flops = v[1];
	m->l[li].fwd_time = v[2];
	m->l[li].bwd_time = v[3];
	return 0;
}

autosync_model_t *autosync_model_parse(const char *buf, size_t len,
				       const char *fname,
				       autosync_error_t *errp)
{
	static const char *const keys[] = {"autosync_model",
					   "name",
					   "framework",
					   "batch_size",
					   "tokens_per_sample",
					   "source",
					   "params",
					   "compute",
					   "layers",
					   "tensors",
					   NULL};
	struct ydoc d;
	autosync_model_t *m = NULL;
	yaml_node_t *root, *n, *tl;
	const char *s;
	uint64_t v, declared = 0;
	int have_declared = 0, saved;
	size_t i;

	if (planner_ydoc_load(&d, buf, len, fname, errp) < 0)
		return NULL;
	root = planner_ydoc_root(&d);
	if (planner_yexpect(&d, root, YAML_MAPPING_NODE, "model file", errp) <
	    0)
		goto fail;
	if (check_keys(&d, root, keys, "model file", errp) < 0)
		goto fail;
	if (!(n = planner_ymap_get(&d, root, "autosync_model"))) {
		errno = EINVAL;
		autosync_errprintf(errp,
				   "%s:%u: not an autosync model file "
				   "(no 'autosync_model: 1')",
				   d.fname, planner_ynode_line(root));
		goto fail;
	}
	if (planner_yget_u64(&d, n, "autosync_model (format version)", 1, 1, &v,
			     errp) < 0)
		goto fail;
	if (!(n = planner_ymap_get(&d, root, "name"))) {
		errno = EINVAL;
		autosync_errprintf(errp, "%s:%u: missing field 'name'", d.fname,
				   planner_ynode_line(root));
		goto fail;
	}
	if (planner_yget_str(&d, n, "name", &s, errp) < 0)
		goto fail;
	if (!(m = autosync_model_create(s, errp)))
		goto fail;
	if ((n = planner_ymap_get(&d, root, "framework"))) {
		if (planner_yget_str(&d, n, "framework", &s, errp) < 0)
			goto fail;
		free(m->framework);
		if (!(m->framework = strdup(s)))
			goto nomem;
	}
	if ((n = planner_ymap_get(&d, root, "source"))) {
		if (planner_yget_str(&d, n, "source", &s, errp) < 0)
			goto fail;
		if (!(m->source = strdup(s)))
			goto nomem;
	}
	if ((n = planner_ymap_get(&d, root, "batch_size"))) {
		if (planner_yget_u64(&d, n, "batch_size", 1, 1u << 24, &v,
				     errp) < 0)
			goto fail;
		m->batch = (unsigned)v;
	}
	if ((n = planner_ymap_get(&d, root, "tokens_per_sample"))) {
		if (planner_yget_u64(&d, n, "tokens_per_sample", 1, 1u << 24,
				     &v, errp) < 0)
			goto fail;
		m->tokens = (unsigned)v;
	}
	if ((n = planner_ymap_get(&d, root, "params"))) {
		if (planner_yget_u64(&d, n, "params", 0,
				     AUTOSYNC_MAX_MODEL_ELEMS, &declared,
				     errp) < 0)
			goto fail;
		have_declared = 1;
	}
	if (!(tl = planner_ymap_get(&d, root, "tensors"))) {
		errno = EINVAL;
		autosync_errprintf(errp, "%s:%u: missing field 'tensors'",
				   d.fname, planner_ynode_line(root));
		goto fail;
	}
	if (planner_yexpect(&d, tl, YAML_SEQUENCE_NODE, "tensors", errp) < 0)
		goto fail;
	i = 0;
	for (yaml_node_item_t *it = tl->data.sequence.items.start;
	     it < tl->data.sequence.items.top; it++, i++)
		if (load_tensor(&d, m, planner_ydoc_node(&d, *it), i, errp) < 0)
			goto fail;
	if (m->n == 0) {
		errno = EINVAL;
		autosync_errprintf(errp, "%s:%u: the model has no tensors",
				   d.fname, planner_ynode_line(tl));
		goto fail;
	}
	if ((n = planner_ymap_get(&d, root, "layers"))) {
		if (planner_yexpect(&d, n, YAML_SEQUENCE_NODE, "layers", errp) <
		    0)
			goto fail;
		i = 0;
		for (yaml_node_item_t *it = n->data.sequence.items.start;
		     it < n->data.sequence.items.top; it++, i++)
			if (load_layer(&d, m, planner_ydoc_node(&d, *it), i,
				       errp) < 0)
				goto fail;
		for (i = 0; i < m->nl; i++)
			if (m->l[i].fwd_time >= 0)
				m->compute_src = 2;
		if (!m->compute_src)
			for (i = 0; i < m->nl; i++)
				if (m->l[i].fwd_flops >= 0)
					m->compute_src = 1;
	}
	if ((n = planner_ymap_get(&d, root, "compute"))) {
		if (planner_yget_str(&d, n, "compute", &s, errp) < 0)
			goto fail;
		if (strcmp(s, "flops") && strcmp(s, "time") &&
		    strcmp(s, "estimated")) {
			errno = EINVAL;
			autosync_errprintf(errp,
					   "%s:%u: compute: '%s' is not flops, "
					   "time or estimated",
					   d.fname, planner_ynode_line(n), s);
			goto fail;
		}
	}
	if (have_declared && declared != m->params) {
		errno = EINVAL;
		autosync_errprintf(
		    errp,
		    "%s:%u: params: the file says %" PRIu64
		    " but its tensors hold %" PRIu64,
		    d.fname,
		    planner_ynode_line(planner_ymap_get(&d, root, "params")),
		    declared, m->params);
		goto fail;
	}
	planner_ydoc_free(&d);
	return m;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "%s: out of memory", d.fname);
fail:
	saved = errno;
	autosync_model_destroy(m);
	planner_ydoc_free(&d);
	errno = saved ? saved : EINVAL;
	return NULL;
}

autosync_model_t *autosync_model_load(const char *path, autosync_error_t *errp)
{
	char *buf = NULL;
	size_t len = 0;
	autosync_model_t *m;
	int saved;

	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "model_load: no path");
		return NULL;
	}
	if (planner_read_file(path, &buf, &len, errp) < 0)
		return NULL;
	m = autosync_model_parse(buf, len, path, errp);
	saved = errno;
	free(buf);
	errno = saved;
	return m;
}

/* ------------------------------------------------------------ catalog */
static int is_path(const char *spec)
{
	size_t n = strlen(spec);
	return strchr(spec, '/') || (n > 5 && !strcmp(spec + n - 5, ".yaml")) ||
	       (n > 4 && !strcmp(spec + n - 4, ".yml"));
}

static int valid_name(const char *s)
{
	if (!*s || *s == '.')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ||
		      *s == '.'))
			return 0;
	return 1;
}

static size_t catalog_dirs(const char *explicit_dir, const char *dirs[3])
{
	size_t n = 0;
	const char *env = getenv("AUTOSYNC_CATALOG_DIR");

	if (explicit_dir && *explicit_dir)
		dirs[n++] = explicit_dir;
	if (env && *env)
		dirs[n++] = env;
	dirs[n++] = AUTOSYNC_DATADIR "/models";
	return n;
}

autosync_model_t *autosync_model_open(const char *spec, const char *catalog_dir,
				      autosync_error_t *errp)
{
	const char *dirs[3];
	size_t nd;
	char path[4096], tried[1024] = "";

	if (!spec || !*spec) {
		errno = EINVAL;
		autosync_errprintf(errp, "model_open: no model given");
		return NULL;
	}
	if (is_path(spec))
		return autosync_model_load(spec, errp);
	if (!valid_name(spec)) {
		errno = EINVAL;
		autosync_errprintf(
		    errp,
		    "model '%s': not a catalog name "
		    "(letters, digits, '-', '_', '.') nor a path",
		    spec);
		return NULL;
	}
	nd = catalog_dirs(catalog_dir, dirs);
	for (size_t i = 0; i < nd; i++) {
		struct stat st;
		int w =
		    snprintf(path, sizeof(path), "%s/%s.yaml", dirs[i], spec);
		if (w < 0 || (size_t)w >= sizeof(path))
			continue;
		if (stat(path, &st) == 0)
			return autosync_model_load(path, errp);
		size_t tl = strlen(tried);
		snprintf(tried + tl, sizeof(tried) - tl, "%s%s", tl ? ", " : "",
			 dirs[i]);
	}
	errno = ENOENT;
	autosync_errprintf(errp, "model '%s': not in the catalog (searched %s)",
			   spec, tried);
	return NULL;
}

static int cmpstr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void autosync_catalog_free(char **names)
{
	if (!names)
		return;
	for (size_t i = 0; names[i]; i++)
		free(names[i]);
	free(names);
}

int autosync_catalog_list(const char *catalog_dir, char ***namesp,
			  size_t *countp, autosync_error_t *errp)
{
	const char *dirs[3];
	size_t nd = catalog_dirs(catalog_dir, dirs), n = 0, cap = 16;
	DIR *dir = NULL;
	struct dirent *de;
	char **names;

	if (!namesp || !countp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "catalog_list: invalid argument");
	}
	for (size_t i = 0; i < nd && !dir; i++)
		dir = opendir(dirs[i]);
	if (!dir) {
		errno = ENOENT;
		return autosync_errprintf(errp, "no catalog directory found");
	}
	if (!(names = calloc(cap, sizeof(*names))))
		goto nomem;
	while ((de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".yaml") ||
		    de->d_name[0] == '.')
			continue;
		if (n + 2 > cap) {
			char **nn = realloc(names, cap * 2 * sizeof(*names));
			if (!nn)
				goto nomem;
			names = nn;
			cap *= 2;
		}
		if (!(names[n] = strndup(de->d_name, l - 5)))
			goto nomem;
		names[++n] = NULL;
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmpstr);
	*namesp = names;
	*countp = n;
	return 0;
nomem:
	if (dir)
		closedir(dir);
	autosync_catalog_free(names);
	errno = ENOMEM;
	return autosync_errprintf(errp, "catalog_list: out of memory");
}
