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

#include "common/text.h"
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
	m->grad_scale = 1;
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

double autosync_model_grad_scale(const autosync_model_t *m)
{
	return m ? m->grad_scale : 0;
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

uint64_t autosync_tensor_rows_union(const autosync_tensor_t *T, unsigned ranks)
{
	double v, r, u;

	if (!T || !T->sparse || ranks <= 1 || T->ndim < 1 || T->shape[0] <= 0)
		return T ? T->rows_touched : 0;
	v = (double)T->shape[0];
	r = (double)T->rows_touched;
	/* each rank misses a given row with probability 1 - r/V */
	u = floor(v * -expm1((double)ranks * log1p(-r / v)) + 0.5);
	if (u > v)
		u = v;
	if (u > (double)ranks * r)
		u = (double)ranks * r;
	return u < r ? T->rows_touched : (uint64_t)u;
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
	if (m->step_compute > 0)
		return m->step_compute_fb ? "feedback" : "measured";
	return names[m->compute_src];
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
	m->step_compute_fb = 0;
	return 0;
}

int autosync_model_set_feedback_compute(autosync_model_t *m, double seconds,
					autosync_error_t *errp)
{
	if (autosync_model_set_step_compute(m, seconds, errp) < 0)
		return -1;
	m->step_compute_fb = seconds > 0;
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

/* Format versions the reader takes: the current one and the one before
 * it (none yet: version 1 is the first). */
#define MODEL_FORMAT_MIN 1

/* what one entry of 'tensors' says */
struct tensor_in {
	char *name, *layer;
	int dtype, sparse;
	yaml_node_t *shape;
	uint64_t rows, repeat; /* 0: not given */
};

static int cb_shape(asi_yreader_t *r, yaml_node_t *v, const char *key,
		    void *base)
{
	if (asi_yexpect(r, v, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	((struct tensor_in *)base)->shape = v;
	return 0;
}

static const struct asi_ykey tensor_keys[] = {
    {.name = "name",
     .type = ASI_Y_STR,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct tensor_in, name)},
    {.name = "layer",
     .type = ASI_Y_STR,
     .flags = ASI_Y_EMPTY_OK,
     .off = offsetof(struct tensor_in, layer)},
    {.name = "dtype",
     .type = ASI_Y_ENUM,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct tensor_in, dtype),
     .conv = autosync_dtype_from_name,
     .name_of = autosync_dtype_name},
    {.name = "shape",
     .type = ASI_Y_NODE,
     .flags = ASI_Y_REQUIRED,
     .cb = cb_shape},
    {.name = "sparse",
     .type = ASI_Y_BOOL,
     .off = offsetof(struct tensor_in, sparse)},
    {.name = "rows_touched",
     .type = ASI_Y_U64,
     .off = offsetof(struct tensor_in, rows),
     .umin = 1,
     .umax = INT64_MAX},
    /* checked against the tensor limit before anything is expanded */
    {.name = "repeat",
     .type = ASI_Y_U64,
     .off = offsetof(struct tensor_in, repeat),
     .umin = 1,
     .umax = UINT64_MAX},
    {.name = NULL},
};

static int tensor_shape(asi_yreader_t *r, const struct tensor_in *ti,
			const char *where, int64_t *shape, unsigned *ndim)
{
	char key[96];

	*ndim = 0;
	for (yaml_node_item_t *it = ti->shape->data.sequence.items.start;
	     it < ti->shape->data.sequence.items.top; it++) {
		if (*ndim == AUTOSYNC_MAX_DIMS)
			return asi_yproblem(r, ti->shape,
					    "%s.shape: more than %d dimensions",
					    where, AUTOSYNC_MAX_DIMS);
		snprintf(key, sizeof(key), "%s.shape[%u]", where, *ndim);
		if (asi_yget_i64(r, asi_ynode(r, *it), key, 1, INT64_MAX,
				 &shape[*ndim]) < 0)
			return -1;
		(*ndim)++;
	}
	return 0;
}

/* rows_touched needs sparse, and sparse needs rows_touched */
static int tensor_sparse(asi_yreader_t *r, yaml_node_t *tn,
			 const struct tensor_in *ti, const char *where,
			 const int64_t *shape, unsigned ndim)
{
	yaml_node_t *n = asi_ymap_get(r, tn, "rows_touched");
	char q[32];

	if (ti->rows && !ti->sparse)
		return asi_yproblem(r, n,
				    "%s.rows_touched given without sparse: "
				    "true",
				    where);
	if (ti->sparse && !ti->rows)
		return asi_yproblem(r, tn,
				    "%s: sparse: true needs rows_touched (rows "
				    "per step per rank)",
				    where);
	if (ti->sparse && (!ndim || ti->rows > (uint64_t)shape[0]))
		return asi_yproblem(
		    r, n,
		    "%s.rows_touched: bad value '%s' (expected an integer "
		    "from 1 to %" PRId64 ", the first dimension)",
		    where, asi_quote(asi_yscalar(n), q, sizeof(q)),
		    ndim ? shape[0] : 0);
	return 0;
}

/* add the tensor, 'repeat' times as NAME.0, NAME.1, ... */
static int tensor_add(asi_yreader_t *r, autosync_model_t *m, yaml_node_t *tn,
		      const struct tensor_in *ti, const int64_t *shape,
		      unsigned ndim)
{
	autosync_error_t e = {.text = ""};
	char q[32];

	if (ti->repeat > AUTOSYNC_MAX_TENSORS - m->n)
		return asi_yproblem(
		    r, asi_ymap_get(r, tn, "repeat"),
		    "tensor '%s': repeat: '%s' tensors exceed the limit of "
		    "%llu",
		    ti->name,
		    asi_quote(asi_yscalar(asi_ymap_get(r, tn, "repeat")), q,
			      sizeof(q)),
		    AUTOSYNC_MAX_TENSORS);
	if (!ti->repeat) {
		if (autosync_model_add_tensor(m, ti->name, ti->layer, ti->dtype,
					      ndim, shape, ti->sparse, ti->rows,
					      &e) < 0)
			return asi_yproblem(r, tn, "%s", e.text);
		return 0;
	}
	for (uint64_t i = 0; i < ti->repeat; i++) {
		char nm[512], ly[512];
		snprintf(nm, sizeof(nm), "%s.%" PRIu64, ti->name, i);
		if (ti->layer && *ti->layer)
			snprintf(ly, sizeof(ly), "%s.%" PRIu64, ti->layer, i);
		if (autosync_model_add_tensor(
			m, nm, ti->layer && *ti->layer ? ly : NULL, ti->dtype,
			ndim, shape, ti->sparse, ti->rows, &e) < 0)
			return asi_yproblem(r, tn, "%s", e.text);
	}
	return 0;
}

static int load_tensor(asi_yreader_t *r, autosync_model_t *m, yaml_node_t *tn,
		       size_t idx)
{
	struct tensor_in ti = {.dtype = -1};
	int64_t shape[AUTOSYNC_MAX_DIMS];
	unsigned ndim = 0;
	char where[48];
	int rv = -1;

	snprintf(where, sizeof(where), "tensors[%zu]", idx);
	if (asi_ykeys_read(r, tn, tensor_keys, &ti, where) == 0 &&
	    tensor_shape(r, &ti, where, shape, &ndim) == 0 &&
	    tensor_sparse(r, tn, &ti, where, shape, ndim) == 0 &&
	    tensor_add(r, m, tn, &ti, shape, ndim) == 0)
		rv = 0;
	free(ti.name);
	free(ti.layer);
	return rv;
}

/* what one entry of 'layers' says */
struct layer_in {
	char *name;
	double v[4]; /* fwd_flops, bwd_flops, fwd_time, bwd_time; -1: none */
};

static const struct asi_ykey layer_keys[] = {
    {.name = "name",
     .type = ASI_Y_STR,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct layer_in, name)},
    {.name = "fwd_flops",
     .type = ASI_Y_DOUBLE,
     .off = offsetof(struct layer_in, v[0]),
     .dmin = 0,
     .dmax = 1e21},
    {.name = "bwd_flops",
     .type = ASI_Y_DOUBLE,
     .off = offsetof(struct layer_in, v[1]),
     .dmin = 0,
     .dmax = 1e21},
    {.name = "fwd_time",
     .type = ASI_Y_DOUBLE,
     .off = offsetof(struct layer_in, v[2]),
     .dmin = 0,
     .dmax = 1e6},
    {.name = "bwd_time",
     .type = ASI_Y_DOUBLE,
     .off = offsetof(struct layer_in, v[3]),
     .dmin = 0,
     .dmax = 1e6},
    {.name = NULL},
};

static int load_layer(asi_yreader_t *r, autosync_model_t *m, yaml_node_t *ln,
		      size_t idx, unsigned long *given)
{
	struct layer_in li = {.v = {-1, -1, -1, -1}};
	char where[48], q[96];
	long i;
	int rv = -1;

	snprintf(where, sizeof(where), "layers[%zu]", idx);
	if (asi_ykeys_read(r, ln, layer_keys, &li, where) < 0)
		goto out;
	if ((i = layer_get(m, li.name, 0)) < 0) {
		asi_yproblem(r, asi_ymap_get(r, ln, "name"),
			     "%s.name: layer '%s' has no tensors", where,
			     asi_quote(li.name, q, sizeof(q)));
		goto out;
	}
	if (given[i]) {
		asi_yproblem(r, asi_ymap_get(r, ln, "name"),
			     "%s.name: layer '%s' given twice (first on line "
			     "%lu)",
			     where, asi_quote(li.name, q, sizeof(q)), given[i]);
		goto out;
	}
	given[i] = asi_yline(asi_ymap_get(r, ln, "name"));
	m->l[i].fwd_flops = li.v[0];
	m->l[i].bwd_flops = li.v[1];
	m->l[i].fwd_time = li.v[2];
	m->l[i].bwd_time = li.v[3];
	rv = 0;
out:
	free(li.name);
	return rv;
}

/* what the top level of a model file says */
struct model_in {
	unsigned version;
	char *name, *framework, *source;
	unsigned batch, tokens;
	uint64_t params; /* UINT64_MAX: not given */
	int compute;
	yaml_node_t *tensors, *layers;
};

static int cb_tensors(asi_yreader_t *r, yaml_node_t *v, const char *key,
		      void *base)
{
	if (asi_yexpect(r, v, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	((struct model_in *)base)->tensors = v;
	return 0;
}

static int cb_layers(asi_yreader_t *r, yaml_node_t *v, const char *key,
		     void *base)
{
	if (asi_yexpect(r, v, YAML_SEQUENCE_NODE, key) < 0)
		return -1;
	((struct model_in *)base)->layers = v;
	return 0;
}

static const char *const compute_names[] = {"flops", "time", "estimated", NULL};

static const struct asi_ykey model_keys[] = {
    {.name = "autosync_model",
     .type = ASI_Y_VERSION,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct model_in, version),
     .umin = MODEL_FORMAT_MIN,
     .umax = AUTOSYNC_MODEL_VERSION,
     .what = "an autosync model file"},
    {.name = "name",
     .type = ASI_Y_STR,
     .flags = ASI_Y_REQUIRED,
     .off = offsetof(struct model_in, name)},
    {.name = "framework",
     .type = ASI_Y_STR,
     .flags = ASI_Y_EMPTY_OK,
     .off = offsetof(struct model_in, framework)},
    {.name = "batch_size",
     .type = ASI_Y_UINT,
     .off = offsetof(struct model_in, batch),
     .umin = 1,
     .umax = 1u << 24},
    {.name = "tokens_per_sample",
     .type = ASI_Y_UINT,
     .off = offsetof(struct model_in, tokens),
     .umin = 1,
     .umax = 1u << 24},
    {.name = "source",
     .type = ASI_Y_STR,
     .flags = ASI_Y_EMPTY_OK,
     .off = offsetof(struct model_in, source)},
    {.name = "params",
     .type = ASI_Y_U64,
     .off = offsetof(struct model_in, params),
     .umin = 0,
     .umax = AUTOSYNC_MAX_MODEL_ELEMS},
    {.name = "compute",
     .type = ASI_Y_ENUM,
     .off = offsetof(struct model_in, compute),
     .values = compute_names},
    {.name = "layers", .type = ASI_Y_NODE, .cb = cb_layers},
    {.name = "tensors",
     .type = ASI_Y_NODE,
     .flags = ASI_Y_REQUIRED,
     .cb = cb_tensors},
    {.name = NULL},
};

static int model_tensors(asi_yreader_t *r, autosync_model_t *m, yaml_node_t *tl)
{
	size_t i = 0;

	for (yaml_node_item_t *it = tl->data.sequence.items.start;
	     it < tl->data.sequence.items.top; it++, i++)
		if (load_tensor(r, m, asi_ynode(r, *it), i) < 0)
			return -1;
	if (m->n == 0)
		return asi_yproblem(r, tl, "the model has no tensors");
	return 0;
}

static int model_layers(asi_yreader_t *r, autosync_model_t *m, yaml_node_t *ll)
{
	unsigned long *given; /* the line each layer was given on */
	size_t i = 0;
	int rv = 0;

	if (!ll)
		return 0;
	if (!(given = calloc(m->nl ? m->nl : 1, sizeof(*given))))
		return asi_ynomem(r);
	for (yaml_node_item_t *it = ll->data.sequence.items.start;
	     it < ll->data.sequence.items.top && !rv; it++, i++)
		rv = load_layer(r, m, asi_ynode(r, *it), i, given);
	free(given);
	if (rv < 0)
		return -1;
	for (i = 0; i < m->nl; i++)
		if (m->l[i].fwd_time >= 0)
			m->compute_src = 2;
	if (!m->compute_src)
		for (i = 0; i < m->nl; i++)
			if (m->l[i].fwd_flops >= 0)
				m->compute_src = 1;
	return 0;
}

/* the model itself, from what the top level said */
static autosync_model_t *model_build(asi_yreader_t *r, struct model_in *mi)
{
	autosync_model_t *m;

	if (!(m = autosync_model_create(mi->name, r->errp)))
		return NULL;
	m->format = mi->version;
	if (mi->batch)
		m->batch = mi->batch;
	if (mi->tokens)
		m->tokens = mi->tokens;
	if (mi->framework) {
		free(m->framework);
		m->framework = mi->framework;
		mi->framework = NULL;
	}
	m->source = mi->source;
	mi->source = NULL;
	if (model_tensors(r, m, mi->tensors) < 0 ||
	    model_layers(r, m, mi->layers) < 0)
		goto fail;
	if (mi->params != UINT64_MAX && mi->params != m->params) {
		asi_yproblem(r, asi_ymap_get(r, asi_yroot(r), "params"),
			     "params: the file says %" PRIu64
			     " but its tensors hold %" PRIu64,
			     mi->params, m->params);
		goto fail;
	}
	return m;
fail:
	autosync_model_destroy(m);
	return NULL;
}

static autosync_model_t *model_read(asi_yreader_t *r)
{
	struct model_in mi = {.params = UINT64_MAX};
	autosync_model_t *m = NULL;
	int saved;

	if (asi_ykeys_read(r, asi_yroot(r), model_keys, &mi, "") == 0)
		m = model_build(r, &mi);
	saved = errno;
	free(mi.name);
	free(mi.framework);
	free(mi.source);
	errno = m ? 0 : saved ? saved : EINVAL;
	return m;
}

autosync_model_t *autosync_model_parse(const char *buf, size_t len,
				       const char *fname,
				       autosync_error_t *errp)
{
	asi_yreader_t r;
	autosync_model_t *m;
	int saved;

	if (planner_yload(&r, buf, len, fname, errp) < 0)
		return NULL;
	m = model_read(&r);
	saved = errno;
	asi_yreader_free(&r);
	errno = saved;
	return m;
}

autosync_model_t *autosync_model_load(const char *path, autosync_error_t *errp)
{
	asi_yreader_t r;
	autosync_model_t *m;
	int saved;

	if (!path) {
		errno = EINVAL;
		autosync_errprintf(errp, "model_load: no path");
		return NULL;
	}
	if (planner_yload_file(&r, path, AUTOSYNC_MAX_MODEL_BYTES, errp) < 0)
		return NULL;
	m = model_read(&r);
	saved = errno;
	asi_yreader_free(&r);
	errno = saved;
	return m;
}

unsigned autosync_model_format_version(const autosync_model_t *m)
{
	return m ? m->format : 0;
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

/* the models of one directory appended to names[] (n, cap grown) */
static int list_dir(DIR *dir, char ***names, size_t *n, size_t *cap)
{
	struct dirent *de;

	while ((de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		if (l <= 5 || strcmp(de->d_name + l - 5, ".yaml") ||
		    de->d_name[0] == '.')
			continue;
		if (*n + 2 > *cap) {
			char **nn = realloc(*names, *cap * 2 * sizeof(**names));
			if (!nn)
				return -1;
			*names = nn;
			*cap *= 2;
		}
		if (!((*names)[*n] = strndup(de->d_name, l - 5)))
			return -1;
		(*names)[++*n] = NULL;
	}
	return 0;
}

int autosync_catalog_list(const char *catalog_dir, char ***namesp,
			  size_t *countp, autosync_error_t *errp)
{
	const char *dirs[3];
	size_t nd = catalog_dirs(catalog_dir, dirs), n = 0, cap = 16, k = 0;
	char **names;
	int found = 0;

	if (!namesp || !countp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "catalog_list: invalid argument");
	}
	if (!(names = calloc(cap, sizeof(*names))))
		goto nomem;
	for (size_t i = 0; i < nd; i++) {
		DIR *dir = opendir(dirs[i]);
		int rc;
		if (!dir)
			continue;
		found = 1;
		rc = list_dir(dir, &names, &n, &cap);
		closedir(dir);
		if (rc < 0)
			goto nomem;
	}
	if (!found) {
		autosync_catalog_free(names);
		errno = ENOENT;
		return autosync_errprintf(errp, "no catalog directory found");
	}
	/* a name in two directories is one model: the first opens it */
	qsort(names, n, sizeof(*names), cmpstr);
	for (size_t i = 0; i < n; i++)
		if (k && !strcmp(names[i], names[k - 1]))
			free(names[i]);
		else
			names[k++] = names[i];
	names[k] = NULL;
	*namesp = names;
	*countp = k;
	return 0;
nomem:
	autosync_catalog_free(names);
	errno = ENOMEM;
	return autosync_errprintf(errp, "catalog_list: out of memory");
}
