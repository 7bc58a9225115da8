/* syncrt.c - the sync runtime (see syncrt.h): the shared plan walk and
 * the MPI backend. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "syncrt.h"

#define TAG_RING 11
#define TAG_TREE_UP 12
#define TAG_TREE_DOWN 13
#define TAG_HIER_UP 14
#define TAG_HIER_DOWN 15
#define TAG_PS_PUSH 16
#define TAG_PS_PULL 17
#define TAG_GATHER 18
#define TAG_TREE2_UP 19 /* the double tree's second tree */
#define TAG_TREE2_DOWN 20
#define TREE_SEG (256u * 1024u) /* bytes per pipelined tree segment */

struct autosync_rt {
	MPI_Comm comm;	 /* private dup of the caller's */
	MPI_Comm node;	 /* ranks of my node */
	MPI_Comm leader; /* local rank 0 of every node (MPI_COMM_NULL else) */
	MPI_Comm rail;	 /* the same local rank on every node */
	int hier;	 /* enum rt_hier */
	int uniform;	 /* every node has the same number of ranks */
	int rank, size, lrank, lsize, nodes, mynode;
	int *node_of;	/* world rank -> node index */
	int *leader_of; /* node index -> world rank of its leader */
	const struct autosync_rt_backend *be; /* NULL = MPI */
	void *bectx;
};

static const struct autosync_rt_backend mpi_backend;

/* the backend in use and its context */
#define BE(rt) ((rt)->be ? (rt)->be : &mpi_backend)
#define BECTX(rt) ((rt)->be ? (rt)->bectx : (void *)(rt))

/* ------------------------------------------------------------ helpers */
static int mpierr(int rc, autosync_error_t *errp, const char *what)
{
	char msg[MPI_MAX_ERROR_STRING] = "";
	int len = 0;

	if (rc == MPI_SUCCESS)
		return 0;
	MPI_Error_string(rc, msg, &len);
	errno = EIO;
	return autosync_errprintf(errp, "syncrt: %s: %s", what, msg);
}

static size_t esize(int t)
{
	return t == RT_F32 ? 4 : 2;
}

/* dst[i] += src[i] for n elements of type t (16-bit: add in fp32) */
static void add(void *dst, const void *src, size_t n, int t)
{
	if (t == RT_F32) {
		float *d = dst;
		const float *s = src;
		for (size_t i = 0; i < n; i++)
			d[i] += s[i];
	} else if (t == RT_F16) {
		uint16_t *d = dst;
		const uint16_t *s = src;
		for (size_t i = 0; i < n; i++)
			d[i] = autosync_rt_f32_to_f16(
			    autosync_rt_f16_to_f32(d[i]) +
			    autosync_rt_f16_to_f32(s[i]));
	} else {
		uint16_t *d = dst;
		const uint16_t *s = src;
		for (size_t i = 0; i < n; i++)
			d[i] = autosync_rt_f32_to_bf16(
			    autosync_rt_bf16_to_f32(d[i]) +
			    autosync_rt_bf16_to_f32(s[i]));
	}
}

static void chunk(size_t n, int parts, int i, size_t *off, size_t *cnt)
{
	size_t base = n / (size_t)parts, rem = n % (size_t)parts;
	*off = (size_t)i * base + ((size_t)i < rem ? (size_t)i : rem);
	*cnt = base + ((size_t)i < rem);
}

static int too_big(size_t bytes, autosync_error_t *errp)
{
	if (bytes > INT_MAX) {
		errno = EOVERFLOW;
		return autosync_errprintf(
		    errp, "syncrt: message of %zu bytes exceeds INT_MAX",
		    bytes);
	}
	return 0;
}

/* ------------------------------------------------------------ setup */
autosync_rt_t *autosync_rt_create(MPI_Comm comm, autosync_error_t *errp)
{
	return autosync_rt_create_ppn(comm, 0, errp);
}

autosync_rt_t *autosync_rt_create_ppn(MPI_Comm comm, int ppn,
				      autosync_error_t *errp)
{
	autosync_rt_t *rt = calloc(1, sizeof(*rt));
	int rc, lead;

	if (!rt) {
		errno = ENOMEM;
		autosync_errprintf(errp, "syncrt: out of memory");
		return NULL;
	}
	rt->comm = rt->node = rt->leader = rt->rail = MPI_COMM_NULL;
	rt->hier = RT_HIER_RAILS;
	if ((rc = MPI_Comm_dup(comm, &rt->comm)) != MPI_SUCCESS)
		goto fail;
	MPI_Comm_set_errhandler(rt->comm, MPI_ERRORS_RETURN);
	MPI_Comm_rank(rt->comm, &rt->rank);
	MPI_Comm_size(rt->comm, &rt->size);
	if (ppn > 0)
		rc = MPI_Comm_split(rt->comm, rt->rank / ppn, rt->rank,
				    &rt->node);
	else
		rc = MPI_Comm_split_type(rt->comm, MPI_COMM_TYPE_SHARED,
					 rt->rank, MPI_INFO_NULL, &rt->node);
	if (rc != MPI_SUCCESS)
		goto fail;
	MPI_Comm_set_errhandler(rt->node, MPI_ERRORS_RETURN);
	MPI_Comm_rank(rt->node, &rt->lrank);
	MPI_Comm_size(rt->node, &rt->lsize);
	if ((rc = MPI_Comm_split(rt->comm, rt->lrank == 0 ? 0 : MPI_UNDEFINED,
				 rt->rank, &rt->leader)) != MPI_SUCCESS)
		goto fail;
	if (rt->leader != MPI_COMM_NULL) {
		MPI_Comm_set_errhandler(rt->leader, MPI_ERRORS_RETURN);
		MPI_Comm_rank(rt->leader, &rt->mynode);
		MPI_Comm_size(rt->leader, &rt->nodes);
	}
	if ((rc = MPI_Comm_split(rt->comm, rt->lrank, rt->rank, &rt->rail)) !=
	    MPI_SUCCESS)
		goto fail;
	MPI_Comm_set_errhandler(rt->rail, MPI_ERRORS_RETURN);
	{
		int mn = 0, mx = 0;
		MPI_Allreduce(&rt->lsize, &mn, 1, MPI_INT, MPI_MIN, rt->comm);
		MPI_Allreduce(&rt->lsize, &mx, 1, MPI_INT, MPI_MAX, rt->comm);
		rt->uniform = mn == mx;
	}
	/* leaders tell their node members the node index and count */
	{
		int v[2] = {rt->mynode, rt->nodes};
		if ((rc = MPI_Bcast(v, 2, MPI_INT, 0, rt->node)) != MPI_SUCCESS)
			goto fail;
		rt->mynode = v[0];
		rt->nodes = v[1];
	}
	rt->node_of = calloc((size_t)rt->size, sizeof(int));
	rt->leader_of = calloc((size_t)rt->nodes, sizeof(int));
	if (!rt->node_of || !rt->leader_of) {
		autosync_rt_destroy(rt);
		errno = ENOMEM;
		autosync_errprintf(errp, "syncrt: out of memory");
		return NULL;
	}
	if ((rc = MPI_Allgather(&rt->mynode, 1, MPI_INT, rt->node_of, 1,
				MPI_INT, rt->comm)) != MPI_SUCCESS)
		goto fail;
	lead = -1;
	for (int j = 0; j < rt->nodes; j++)
		rt->leader_of[j] = -1;
	for (int r = 0; r < rt->size; r++)
		if (rt->leader_of[rt->node_of[r]] < 0)
			rt->leader_of[rt->node_of[r]] = r;
	(void)lead;
	return rt;
fail:
	mpierr(rc, errp, "communicator setup");
	autosync_rt_destroy(rt);
	errno = EIO;
	return NULL;
}

void autosync_rt_destroy(autosync_rt_t *rt)
{
	if (!rt)
		return;
	if (rt->be && rt->be->destroy)
		rt->be->destroy(rt->bectx);
	if (rt->leader != MPI_COMM_NULL)
		MPI_Comm_free(&rt->leader);
	if (rt->rail != MPI_COMM_NULL)
		MPI_Comm_free(&rt->rail);
	if (rt->node != MPI_COMM_NULL)
		MPI_Comm_free(&rt->node);
	if (rt->comm != MPI_COMM_NULL)
		MPI_Comm_free(&rt->comm);
	free(rt->node_of);
	free(rt->leader_of);
	free(rt);
}

int autosync_rt_rank(const autosync_rt_t *rt)
{
	return rt->rank;
}
void autosync_rt_set_hier(autosync_rt_t *rt, int variant)
{
	rt->hier = variant;
}
int autosync_rt_hier(const autosync_rt_t *rt)
{
	return rt->hier == RT_HIER_RAILS && rt->uniform ? RT_HIER_RAILS
							: RT_HIER_LEADER;
}
int autosync_rt_size(const autosync_rt_t *rt)
{
	return rt->size;
}
int autosync_rt_nodes(const autosync_rt_t *rt)
{
	return rt->nodes;
}
int autosync_rt_node(const autosync_rt_t *rt)
{
	return rt->mynode;
}
int autosync_rt_local_size(const autosync_rt_t *rt)
{
	return rt->lsize;
}

/* ------------------------------------------------------------ algorithms */
/* after a ring reduce-scatter, rank R of P owns chunk (R + 1) % P */
static int ring_owner(int R, int P)
{
	return (R + 1) % P;
}

/* Ring reduce-scatter on 'c', neighbours rank +- 1; 'tmp' holds one
 * chunk. */
static int ring_rs(MPI_Comm c, void *buf, size_t n, int t, void *tmp,
		   autosync_error_t *errp)
{
	int P, R, rc;
	char *b = buf;
	size_t es = esize(t);

	MPI_Comm_size(c, &P);
	MPI_Comm_rank(c, &R);
	if (P == 1 || n == 0)
		return 0;
	int right = (R + 1) % P, left = (R - 1 + P) % P;
	for (int k = 0; k < P - 1; k++) {
		int sc = ((R - k) % P + P) % P, rcv = ((R - k - 1) % P + P) % P;
		size_t so, sn, ro, rn;
		chunk(n, P, sc, &so, &sn);
		chunk(n, P, rcv, &ro, &rn);
		rc = MPI_Sendrecv(b + so * es, (int)(sn * es), MPI_BYTE, right,
				  TAG_RING, tmp, (int)(rn * es), MPI_BYTE, left,
				  TAG_RING, c, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return mpierr(rc, errp, "ring reduce-scatter");
		add(b + ro * es, tmp, rn, t);
	}
	return 0;
}

/* Ring all-gather on 'c' of the chunks owned after ring_rs(). */
static int ring_ag(MPI_Comm c, void *buf, size_t n, int t,
		   autosync_error_t *errp)
{
	int P, R, rc;
	char *b = buf;
	size_t es = esize(t);

	MPI_Comm_size(c, &P);
	MPI_Comm_rank(c, &R);
	if (P == 1 || n == 0)
		return 0;
	int right = (R + 1) % P, left = (R - 1 + P) % P;
	for (int k = 0; k < P - 1; k++) {
		int sc = ((R + 1 - k) % P + P) % P, rcv = ((R - k) % P + P) % P;
		size_t so, sn, ro, rn;
		chunk(n, P, sc, &so, &sn);
		chunk(n, P, rcv, &ro, &rn);
		rc = MPI_Sendrecv(b + so * es, (int)(sn * es), MPI_BYTE, right,
				  TAG_RING, b + ro * es, (int)(rn * es),
				  MPI_BYTE, left, TAG_RING, c,
				  MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return mpierr(rc, errp, "ring all-gather");
	}
	return 0;
}

/* Ring all-reduce: reduce-scatter then all-gather. */
static int ring(MPI_Comm c, void *buf, size_t n, int t, void *tmp,
		autosync_error_t *errp)
{
	int rv = ring_rs(c, buf, n, t, tmp, errp);
	return rv ? rv : ring_ag(c, buf, n, t, errp);
}

/* One of the two trees of a double binary tree, built as NCCL builds it
 * on nodes of several ranks: a binary tree over the nodes (node v has
 * parent (v - 1) / 2 and children 2v + 1, 2v + 2; tree 1 is tree 0
 * mirrored, node v where N - 1 - v sits, so that the nodes interior in one
 * tree are leaves in the other) and a chain through each node's ranks,
 * whose head links the node to the tree: its first rank in tree 0, its
 * last in tree 1. Each edge between nodes carries one flow. A binary tree
 * over the ranks in their order would cross a node's link up to (ranks per
 * node) times at once, which the model (cost-models.md: 2 log2(p) alpha +
 * 2 n / bw over the node's link) does not charge and NCCL does not do. */
struct btree {
	int parent, ch[3], nch;
};

/* the plain binary tree over N items, mirrored or not: v's parent (-1 for
 * the root) and children */
static void bintree(int v, int N, int mirror, int *parent, int ch[2], int *nch)
{
	int u = mirror ? N - 1 - v : v;

	*parent = u ? (u - 1) / 2 : -1;
	if (mirror && *parent >= 0)
		*parent = N - 1 - *parent;
	*nch = 0;
	for (int c = 2 * u + 1; c <= 2 * u + 2 && c < N; c++)
		ch[(*nch)++] = mirror ? N - 1 - c : c;
}

/* the world rank heading node j in tree k: its first rank, or its last */
static int head(const autosync_rt_t *rt, int j, int k)
{
	int h = -1;

	for (int r = 0; r < rt->size; r++)
		if (rt->node_of[r] == j) {
			h = r;
			if (!k)
				break;
		}
	return h;
}

static void btree(const autosync_rt_t *rt, int k, struct btree *T)
{
	int prev = -1, next = -1, up, down, np, nch, nc[2];

	/* my neighbours in my node's chain, in rank order */
	for (int r = 0; r < rt->size; r++)
		if (rt->node_of[r] == rt->mynode) {
			if (r < rt->rank)
				prev = r;
			else if (r > rt->rank && next < 0)
				next = r;
		}
	/* the chain runs from the head: towards the higher ranks in tree 0 */
	up = k ? next : prev;
	down = k ? prev : next;
	T->nch = 0;
	if (down >= 0)
		T->ch[T->nch++] = down;
	if (up >= 0) {
		T->parent = up;
		return;
	}
	bintree(rt->mynode, rt->nodes, k, &np, nc, &nch);
	T->parent = np >= 0 ? head(rt, np, k) : -1;
	for (int i = 0; i < nch; i++)
		T->ch[T->nch++] = head(rt, nc[i], k);
}

int autosync_rt_tree_links(const autosync_rt_t *rt, int k, int *parent,
			   int ch[3])
{
	struct btree T;

	btree(rt, k != 0, &T);
	*parent = T.parent;
	memcpy(ch, T.ch, (size_t)T.nch * sizeof(int));
	return T.nch;
}

/* segment 's' of tree k's half: [*o, *o + *m) of the buffer */
static void tree_seg(size_t n, size_t seg, int k, size_t s, size_t *o,
		     size_t *m)
{
	size_t h0 = n / 2, base = k ? h0 : 0, len = k ? n - h0 : h0;

	*o = base + s * seg;
	*m = s * seg < len ? (len - s * seg < seg ? len - s * seg : seg) : 0;
}

/* reduce segment s of tree k: children's partial sums in, ours up */
static int tree_up(MPI_Comm c, char *b, size_t n, size_t seg, int t, char *tm,
		   const struct btree *T, int k, size_t s,
		   autosync_error_t *errp)
{
	size_t es = esize(t), o, m;
	MPI_Request q[3];
	int rc;

	tree_seg(n, seg, k, s, &o, &m);
	if (!m)
		return 0;
	for (int i = 0; i < T->nch; i++)
		MPI_Irecv(tm + (size_t)i * seg * es, (int)(m * es), MPI_BYTE,
			  T->ch[i], (k ? TAG_TREE2_UP : TAG_TREE_UP), c, &q[i]);
	if (T->nch &&
	    (rc = MPI_Waitall(T->nch, q, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
		return mpierr(rc, errp, "tree reduce");
	for (int i = 0; i < T->nch; i++)
		add(b + o * es, tm + (size_t)i * seg * es, m, t);
	if (T->parent >= 0 &&
	    (rc = MPI_Send(b + o * es, (int)(m * es), MPI_BYTE, T->parent,
			   (k ? TAG_TREE2_UP : TAG_TREE_UP), c)) != MPI_SUCCESS)
		return mpierr(rc, errp, "tree reduce");
	return 0;
}

/* broadcast segment s of tree k: the sum from the parent, on down */
static int tree_down(MPI_Comm c, char *b, size_t n, size_t seg, int t,
		     const struct btree *T, int k, size_t s,
		     autosync_error_t *errp)
{
	size_t es = esize(t), o, m;
	MPI_Request q[3];
	int rc;

	tree_seg(n, seg, k, s, &o, &m);
	if (!m)
		return 0;
	if (T->parent >= 0 &&
	    (rc = MPI_Recv(b + o * es, (int)(m * es), MPI_BYTE, T->parent,
			   (k ? TAG_TREE2_DOWN : TAG_TREE_DOWN), c,
			   MPI_STATUS_IGNORE)) != MPI_SUCCESS)
		return mpierr(rc, errp, "tree broadcast");
	for (int i = 0; i < T->nch; i++)
		MPI_Isend(b + o * es, (int)(m * es), MPI_BYTE, T->ch[i],
			  (k ? TAG_TREE2_DOWN : TAG_TREE_DOWN), c, &q[i]);
	if (T->nch &&
	    (rc = MPI_Waitall(T->nch, q, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
		return mpierr(rc, errp, "tree broadcast");
	return 0;
}

/* Double binary tree: each tree reduces up and broadcasts down half of the
 * buffer, pipelined in TREE_SEG segments; the trees take turns segment by
 * segment (a part (segment, tree) waits only on that tree's neighbours at
 * the same part, so the turns cannot deadlock). 'tmp' holds 3 segments. */
static int tree(const autosync_rt_t *rt, void *buf, size_t n, int t, void *tmp,
		autosync_error_t *errp)
{
	size_t seg = TREE_SEG / esize(t), nseg;
	struct btree T[2];

	if (rt->size == 1 || n == 0)
		return 0;
	btree(rt, 0, &T[0]);
	btree(rt, 1, &T[1]);
	nseg = (n - n / 2 + seg - 1) / seg;
	for (size_t s = 0; s < nseg; s++)
		for (int k = 0; k < 2; k++)
			if (tree_up(rt->comm, buf, n, seg, t, tmp, &T[k], k, s,
				    errp) < 0)
				return -1;
	for (size_t s = 0; s < nseg; s++)
		for (int k = 0; k < 2; k++)
			if (tree_down(rt->comm, buf, n, seg, t, &T[k], k, s,
				      errp) < 0)
				return -1;
	return 0;
}

/* reduce the node's buffers to the leader (direct sends over shared
 * memory); 'tmp' holds n elements */
static int node_reduce(autosync_rt_t *rt, void *buf, size_t n, int t, void *tmp,
		       autosync_error_t *errp)
{
	int rc;
	size_t bytes = n * esize(t);

	if (rt->lsize == 1 || n == 0)
		return 0;
	if (rt->lrank) {
		rc = MPI_Send(buf, (int)bytes, MPI_BYTE, 0, TAG_HIER_UP,
			      rt->node);
		return mpierr(rc, errp, "node reduce");
	}
	for (int i = 1; i < rt->lsize; i++) {
		rc = MPI_Recv(tmp, (int)bytes, MPI_BYTE, i, TAG_HIER_UP,
			      rt->node, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return mpierr(rc, errp, "node reduce");
		add(buf, tmp, n, t);
	}
	return 0;
}

static int node_bcast(autosync_rt_t *rt, void *buf, size_t bytes,
		      autosync_error_t *errp)
{
	int rc = MPI_SUCCESS;

	if (rt->lsize == 1 || bytes == 0)
		return 0;
	if (rt->lrank)
		rc = MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, TAG_HIER_DOWN,
			      rt->node, MPI_STATUS_IGNORE);
	else
		for (int i = 1; i < rt->lsize && rc == MPI_SUCCESS; i++)
			rc = MPI_Send(buf, (int)bytes, MPI_BYTE, i,
				      TAG_HIER_DOWN, rt->node);
	return mpierr(rc, errp, "node broadcast");
}

static int allreduce_t(autosync_rt_t *rt, void *buf, size_t n, int t, int algo,
		       autosync_error_t *errp)
{
	size_t es = esize(t), tn;
	void *tmp;
	int rv;

	if (too_big(n * es, errp) < 0)
		return -1;
	if (rt->size == 1 || n == 0)
		return 0;
	switch (algo) {
	case AUTOSYNC_ALGO_TREE:
		tn = 3 * (TREE_SEG / es);
		break;
	case AUTOSYNC_ALGO_HIER:
		tn = n + 1;
		break;
	default:
		tn = n / (size_t)rt->size + 2;
	}
	if (!(tmp = malloc(tn * es))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "syncrt: out of memory");
	}
	switch (algo) {
	case AUTOSYNC_ALGO_TREE:
		rv = tree(rt, buf, n, t, tmp, errp);
		break;
	case AUTOSYNC_ALGO_HIER:
		/* a test every rank answers alike: a node of one rank among
		 * larger ones (5 ranks, 2 per node) takes the leader path */
		if (rt->nodes == 1 || rt->nodes == rt->size) {
			/* one level only: a ring over everyone */
			rv = ring(rt->comm, buf, n, t, tmp, errp);
			break;
		}
		if (autosync_rt_hier(rt) == RT_HIER_RAILS) {
			/* intra reduce-scatter, one inter ring per rail on
			 * its 1/g share, intra all-gather */
			size_t o, c;
			rv = ring_rs(rt->node, buf, n, t, tmp, errp);
			chunk(n, rt->lsize, ring_owner(rt->lrank, rt->lsize),
			      &o, &c);
			if (!rv)
				rv = ring(rt->rail, (char *)buf + o * es, c, t,
					  tmp, errp);
			if (!rv)
				rv = ring_ag(rt->node, buf, n, t, errp);
			break;
		}
		rv = node_reduce(rt, buf, n, t, tmp, errp);
		if (!rv && rt->leader != MPI_COMM_NULL)
			rv = ring(rt->leader, buf, n, t, tmp, errp);
		if (!rv)
			rv = node_bcast(rt, buf, n * es, errp);
		break;
	default: /* ring (auto is resolved by autosync_rt_prepare) */
		rv = ring(rt->comm, buf, n, t, tmp, errp);
	}
	free(tmp);
	return rv;
}

/* the shared walk of one dense all-reduce: host-side cast to fp16/bf16
 * (staging buffer), the backend's all-reduce, cast back */
static int walk_allreduce(autosync_rt_t *rt, float *buf, size_t n, int algo,
			  int compress, autosync_error_t *errp)
{
	const struct autosync_rt_backend *be = BE(rt);
	void *ctx = BECTX(rt);
	uint16_t *h;
	int rv;

	if (compress == AUTOSYNC_COMPRESS_NONE) {
		if (be->stage_in &&
		    be->stage_in(ctx, buf, n * sizeof(float), errp) < 0)
			return -1;
		rv = be->allreduce(ctx, buf, n, RT_F32, algo, errp);
		if (be->stage_out && be->stage_out(ctx, rv ? NULL : errp) < 0)
			rv = -1;
		return rv;
	}
	if (!(h = malloc((n ? n : 1) * sizeof(*h)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "syncrt: out of memory");
	}
	if (compress == AUTOSYNC_COMPRESS_FP16)
		for (size_t i = 0; i < n; i++)
			h[i] = autosync_rt_f32_to_f16(buf[i]);
	else
		for (size_t i = 0; i < n; i++)
			h[i] = autosync_rt_f32_to_bf16(buf[i]);
	rv = be->stage_in ? be->stage_in(ctx, h, n * sizeof(*h), errp) : 0;
	if (!rv)
		rv = be->allreduce(ctx, h, n,
				   compress == AUTOSYNC_COMPRESS_FP16 ? RT_F16
								      : RT_BF16,
				   algo, errp);
	if (be->stage_out && be->stage_out(ctx, rv ? NULL : errp) < 0)
		rv = -1;
	if (!rv) {
		if (compress == AUTOSYNC_COMPRESS_FP16)
			for (size_t i = 0; i < n; i++)
				buf[i] = autosync_rt_f16_to_f32(h[i]);
		else
			for (size_t i = 0; i < n; i++)
				buf[i] = autosync_rt_bf16_to_f32(h[i]);
	}
	free(h);
	return rv;
}

int autosync_rt_allreduce(autosync_rt_t *rt, float *buf, size_t n, int algo,
			  int compress, autosync_error_t *errp)
{
	if (!rt || (!buf && n) || algo < 0 || algo >= AUTOSYNC_ALGO_NALGOS ||
	    compress < 0 || compress >= AUTOSYNC_COMPRESS_N) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt: allreduce: invalid "
						"argument");
	}
	if (compress == AUTOSYNC_COMPRESS_POWERSGD) {
		errno = ENOTSUP;
		return autosync_errprintf(errp, "syncrt: allreduce: PowerSGD "
						"is PyTorch DDP's hook; this "
						"runtime does not run it");
	}
	return walk_allreduce(rt, buf, n, algo, compress, errp);
}

/* ring all-gather of every rank's n values, then a local sum */
int autosync_rt_gather_sum(autosync_rt_t *rt, float *buf, size_t n,
			   autosync_error_t *errp)
{
	int P, R, rc;
	float *all;

	if (!rt || (!buf && n)) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt: gather_sum: invalid "
						"argument");
	}
	P = rt->size;
	R = rt->rank;
	if (P == 1 || n == 0)
		return 0;
	if (too_big(n * sizeof(float), errp) < 0)
		return -1;
	if (!(all = malloc((size_t)P * n * sizeof(float)))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "syncrt: out of memory");
	}
	memcpy(all + (size_t)R * n, buf, n * sizeof(float));
	for (int k = 0; k < P - 1; k++) {
		int sb = ((R - k) % P + P) % P, rb = ((R - k - 1) % P + P) % P;
		rc = MPI_Sendrecv(all + (size_t)sb * n, (int)(n * 4), MPI_BYTE,
				  (R + 1) % P, TAG_GATHER, all + (size_t)rb * n,
				  (int)(n * 4), MPI_BYTE, (R - 1 + P) % P,
				  TAG_GATHER, rt->comm, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) {
			free(all);
			return mpierr(rc, errp, "sparse all-gather");
		}
	}
	/* sum in rank order: every rank gets bit-identical results */
	memcpy(buf, all, n * sizeof(float));
	for (int r = 1; r < P; r++)
		add(buf, all + (size_t)r * n, n, RT_F32);
	free(all);
	return 0;
}

/* ------------------------------------------------------------ PS */
struct range {
	size_t off, len, plen; /* plen: what a rank pulls for itself */
};

/* What autosync_rt_ps() works on, phase by phase. */
struct ps {
	autosync_rt_t *rt;
	float *buf;
	int k;		       /* servers */
	int agg, repl;	       /* local aggregation, local replication */
	int full_pull;	       /* replication asked for: leaders pull all */
	int i_push, i_pull;    /* this rank pushes, pulls */
	int js;		       /* the server this rank leads, -1 none */
	size_t *cnt, *first;   /* ranges per server: count, first in rg */
	size_t *sz, total, hi; /* floats per server, all, the buffer's end */
	size_t *psz;	       /* floats a rank pulls for itself per server */
	struct range *rg;      /* every server's ranges, server by server */
	float *pack, *rbuf, *tmp;
	MPI_Request *q;
	int nq;
	int *pushers, npush;
};

static void ps_free(struct ps *x)
{
	if (x->nq)
		MPI_Waitall(x->nq, x->q, MPI_STATUSES_IGNORE);
	free(x->cnt);
	free(x->first);
	free(x->sz);
	free(x->psz);
	free(x->rg);
	free(x->pack);
	free(x->rbuf);
	free(x->tmp);
	free(x->q);
	free(x->pushers);
}

/* the part of [o, o+c) of a segment that lies in its first 'p' elements */
static size_t prefix_in(size_t o, size_t c, size_t p)
{
	return p <= o ? 0 : p - o < c ? p - o : c;
}

/* phase 1: the ranges of every server - a segment goes to its server, or
 * (server < 0) is split evenly over all of them */
static void ps_ranges(struct ps *x, size_t nseg, const size_t *off,
		      const size_t *len, const size_t *pull, const int *server)
{
	int k = x->k;

	for (size_t s = 0; s < nseg; s++) {
		if (off[s] + len[s] > x->hi)
			x->hi = off[s] + len[s];
		if (server[s] >= 0)
			x->cnt[server[s] % k]++;
		else
			for (int j = 0; j < k; j++)
				x->cnt[j]++;
	}
	for (int j = 0; j < k; j++)
		x->first[j + 1] = x->first[j] + x->cnt[j];
	memset(x->cnt, 0, (size_t)k * sizeof(size_t));
	for (size_t s = 0; s < nseg; s++) {
		size_t p = pull && !x->full_pull ? pull[s] : len[s];
		if (server[s] >= 0) {
			int j = server[s] % k;
			x->rg[x->first[j] + x->cnt[j]++] = (struct range){
			    off[s], len[s], prefix_in(0, len[s], p)};
			x->sz[j] += len[s];
			x->psz[j] += prefix_in(0, len[s], p);
		} else
			for (int j = 0; j < k; j++) {
				size_t o, c;
				chunk(len[s], k, j, &o, &c);
				x->rg[x->first[j] + x->cnt[j]++] =
				    (struct range){off[s] + o, c,
						   prefix_in(o, c, p)};
				x->sz[j] += c;
				x->psz[j] += prefix_in(o, c, p);
			}
	}
	for (int j = 0; j < k; j++)
		x->total += x->sz[j];
}

/* phase 2: push - pack per server, send to its leader */
static void ps_push(struct ps *x)
{
	autosync_rt_t *rt = x->rt;
	size_t po = 0;

	for (int j = 0; j < x->k; j++) {
		size_t o = po;
		for (size_t r = x->first[j]; r < x->first[j + 1]; r++) {
			memcpy(x->pack + o, x->buf + x->rg[r].off,
			       x->rg[r].len * sizeof(float));
			o += x->rg[r].len;
		}
		if (x->i_push && rt->leader_of[j] != rt->rank && x->sz[j])
			MPI_Isend(x->pack + po, (int)(x->sz[j] * 4), MPI_BYTE,
				  rt->leader_of[j], TAG_PS_PUSH, rt->comm,
				  &x->q[x->nq++]);
		po = o;
	}
}

/* phase 3: a server receives every other pusher's share and adds it to
 * its own (already in buf); then every push is complete */
static int ps_serve(struct ps *x, autosync_error_t *errp)
{
	autosync_rt_t *rt = x->rt;
	int rc, js = -1;

	for (int j = 0; j < x->k; j++)
		if (rt->leader_of[j] == rt->rank)
			js = j;
	x->js = js;
	if (js >= 0 && x->sz[js]) {
		size_t n = x->sz[js], o = 0;
		int nr = 0, base = x->nq;
		if (!(x->rbuf = malloc((size_t)x->npush * n * sizeof(float)))) {
			errno = ENOMEM;
			return autosync_errprintf(errp,
						  "syncrt: out of memory");
		}
		for (int p = 0; p < x->npush; p++)
			if (x->pushers[p] != rt->rank)
				MPI_Irecv(x->rbuf + (size_t)nr++ * n,
					  (int)(n * 4), MPI_BYTE, x->pushers[p],
					  TAG_PS_PUSH, rt->comm,
					  &x->q[x->nq++]);
		if ((rc = MPI_Waitall(x->nq - base, x->q + base,
				      MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
			return mpierr(rc, errp, "ps push");
		x->nq = base;
		for (size_t r = x->first[js]; r < x->first[js + 1]; r++) {
			for (int y = 0; y < nr; y++)
				add(x->buf + x->rg[r].off,
				    x->rbuf + (size_t)y * n + o, x->rg[r].len,
				    RT_F32);
			o += x->rg[r].len;
		}
	}
	if ((rc = MPI_Waitall(x->nq, x->q, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
		return mpierr(rc, errp, "ps push");
	x->nq = 0;
	return 0;
}

/* phase 4: pull - a server sends its summed ranges to every puller, a
 * puller takes every other server's ranges back into buf (with local
 * replication the leaders pull whole ranges, else each rank its part) */
static int ps_pull(struct ps *x, autosync_error_t *errp)
{
	autosync_rt_t *rt = x->rt;
	int rc, js = x->js, R = rt->rank;
	size_t po = 0;

	if (js >= 0 && x->psz[js]) {
		size_t o = 0;
		for (size_t r = x->first[js]; r < x->first[js + 1]; r++) {
			memcpy(x->rbuf + o, x->buf + x->rg[r].off,
			       x->rg[r].plen * sizeof(float));
			o += x->rg[r].plen;
		}
		for (int r = 0; r < rt->size; r++)
			if (r != R &&
			    (!x->repl || rt->leader_of[rt->node_of[r]] == r))
				MPI_Isend(x->rbuf, (int)(x->psz[js] * 4),
					  MPI_BYTE, r, TAG_PS_PULL, rt->comm,
					  &x->q[x->nq++]);
	}
	if (x->i_pull)
		for (int j = 0; j < x->k; j++) {
			if (rt->leader_of[j] != R && x->psz[j])
				MPI_Irecv(x->pack + po, (int)(x->psz[j] * 4),
					  MPI_BYTE, rt->leader_of[j],
					  TAG_PS_PULL, rt->comm,
					  &x->q[x->nq++]);
			po += x->psz[j];
		}
	if ((rc = MPI_Waitall(x->nq, x->q, MPI_STATUSES_IGNORE)) != MPI_SUCCESS)
		return mpierr(rc, errp, "ps pull");
	x->nq = 0;
	if (!x->i_pull)
		return 0;
	po = 0;
	for (int j = 0; j < x->k; j++) {
		if (rt->leader_of[j] == R) {
			po += x->psz[j];
			continue;
		}
		for (size_t r = x->first[j]; r < x->first[j + 1]; r++) {
			memcpy(x->buf + x->rg[r].off, x->pack + po,
			       x->rg[r].plen * sizeof(float));
			po += x->rg[r].plen;
		}
	}
	return 0;
}

int autosync_rt_ps(autosync_rt_t *rt, float *buf, size_t nseg,
		   const size_t *off, const size_t *len, const size_t *pull,
		   const int *server, unsigned servers, int local_agg,
		   int local_repl, autosync_error_t *errp)
{
	struct ps x = {.rt = rt, .buf = buf, .js = -1};
	int rv = -1, M, P;

	if (!rt || (!buf && nseg) || (nseg && (!off || !len || !server))) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt: ps: invalid argument");
	}
	P = rt->size;
	M = rt->nodes;
	x.k = servers < 1 ? 1 : servers > (unsigned)M ? M : (int)servers;
	if (P == 1 || nseg == 0)
		return 0;
	/* alike on every rank (the servers count the pushers): a node of
	 * one rank among larger ones aggregates with itself */
	x.agg = local_agg && rt->nodes < P;
	x.repl = local_repl && rt->nodes < P;
	x.full_pull = local_repl;
	if (!(x.cnt = calloc((size_t)x.k, sizeof(size_t))) ||
	    !(x.first = calloc((size_t)x.k + 1, sizeof(size_t))) ||
	    !(x.sz = calloc((size_t)x.k, sizeof(size_t))) ||
	    !(x.psz = calloc((size_t)x.k, sizeof(size_t))) ||
	    !(x.rg = calloc(nseg * (size_t)x.k + 1, sizeof(*x.rg))) ||
	    !(x.q = calloc(2 * (size_t)P + 2, sizeof(*x.q))) ||
	    !(x.pushers = calloc((size_t)P, sizeof(int))))
		goto nomem;
	for (size_t s = 0; pull && s < nseg; s++)
		if (pull[s] > len[s]) {
			errno = EINVAL;
			autosync_errprintf(errp,
					   "syncrt: ps: segment %zu pulls "
					   "%zu of %zu elements",
					   s, pull[s], len[s]);
			goto out;
		}
	ps_ranges(&x, nseg, off, len, pull, server);
	if (too_big(x.total * sizeof(float), errp) < 0)
		goto out;
	if (!(x.pack = malloc((x.total ? x.total : 1) * sizeof(float))) ||
	    !(x.tmp = malloc((x.hi ? x.hi : 1) * sizeof(float))))
		goto nomem;
	/* local aggregation: only the node leaders push */
	if (x.agg && node_reduce(rt, buf, x.hi, RT_F32, x.tmp, errp) < 0)
		goto out;
	for (int r = 0; r < P; r++)
		if (!x.agg || rt->leader_of[rt->node_of[r]] == r)
			x.pushers[x.npush++] = r;
	x.i_push = !x.agg || rt->lrank == 0;
	x.i_pull = !x.repl || rt->lrank == 0;
	ps_push(&x);
	if (ps_serve(&x, errp) < 0 || ps_pull(&x, errp) < 0)
		goto out;
	/* local replication: the leaders pulled, the node gets it */
	if (x.repl && node_bcast(rt, buf, x.hi * sizeof(float), errp) < 0)
		goto out;
	rv = 0;
	goto out;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "syncrt: out of memory");
out:
	ps_free(&x);
	return rv;
}

/* ------------------------------------------------------------ backends */
static int mpi_allreduce(void *ctx, void *buf, size_t n, int elem, int algo,
			 autosync_error_t *errp)
{
	return allreduce_t(ctx, buf, n, elem, algo, errp);
}

static int mpi_gather_sum(void *ctx, float *buf, size_t n,
			  autosync_error_t *errp)
{
	return autosync_rt_gather_sum(ctx, buf, n, errp);
}

static int mpi_ps(void *ctx, float *buf, size_t nseg, const size_t *off,
		  const size_t *len, const size_t *pull, const int *server,
		  unsigned servers, int local_agg, int local_repl,
		  autosync_error_t *errp)
{
	return autosync_rt_ps(ctx, buf, nseg, off, len, pull, server, servers,
			      local_agg, local_repl, errp);
}

/* the point-to-point code above; its context is the autosync_rt_t */
static const struct autosync_rt_backend mpi_backend = {
    .name = "mpi",
    .allreduce = mpi_allreduce,
    .gather_sum = mpi_gather_sum,
    .ps = mpi_ps,
};

void autosync_rt_set_backend_ops(autosync_rt_t *rt,
				 const struct autosync_rt_backend *ops,
				 void *ctx)
{
	if (rt->be && rt->be->destroy)
		rt->be->destroy(rt->bectx);
	rt->be = ops == &mpi_backend ? NULL : ops;
	rt->bectx = ctx;
}

int autosync_rt_set_backend(autosync_rt_t *rt, const char *name,
			    autosync_error_t *errp)
{
	if (!rt || !name) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt: backend: invalid "
						"argument");
	}
	if (!strcmp(name, "mpi")) {
		autosync_rt_set_backend_ops(rt, NULL, NULL);
		return 0;
	}
	if (!strcmp(name, "nccl")) {
#ifdef HAVE_NCCL
		const struct autosync_rt_backend *ops;
		void *ctx;
		if (autosync_rt_nccl_open(rt, &ops, &ctx, errp) < 0)
			return -1;
		autosync_rt_set_backend_ops(rt, ops, ctx);
		return 0;
#else
		errno = ENOTSUP;
		return autosync_errprintf(errp, "syncrt: backend 'nccl': "
						"built without NCCL");
#endif
	}
	errno = EINVAL;
	return autosync_errprintf(
	    errp, "syncrt: unknown backend '%s' (mpi, nccl)", name);
}

const char *autosync_rt_backend_name(const autosync_rt_t *rt)
{
	return BE(rt)->name;
}

MPI_Comm autosync_rt_comm(const autosync_rt_t *rt)
{
	return rt->comm;
}

int autosync_rt_local_rank(const autosync_rt_t *rt)
{
	return rt->lrank;
}

int autosync_rt_leader(const autosync_rt_t *rt, int node)
{
	return node >= 0 && node < rt->nodes ? rt->leader_of[node] : -1;
}

/* A PS bucket on a backend without its own PS: every tensor (or, for
 * AUTOSYNC_NO_SERVER, every 1/k share of it) is reduced to its server's
 * rank (the leader of node 'server'), in one group, then broadcast back
 * from it, in a second group. Local aggregation / replication are left to
 * the backend's collectives (NCCL reduces and broadcasts inside a node
 * first on its own). */
static int walk_ps(autosync_rt_t *rt, float *buf, size_t nseg,
		   const size_t *off, const size_t *len, const int *server,
		   unsigned servers, autosync_error_t *errp)
{
	const struct autosync_rt_backend *be = BE(rt);
	void *ctx = BECTX(rt);
	size_t hi = 0;
	int k, rv = 0;

	if (!be->reduce || !be->bcast) {
		errno = ENOTSUP;
		return autosync_errprintf(errp,
					  "syncrt: backend '%s' has no "
					  "PS operations",
					  be->name);
	}
	k = servers < 1			    ? 1
	    : servers > (unsigned)rt->nodes ? rt->nodes
					    : (int)servers;
	for (size_t s = 0; s < nseg; s++)
		if (off[s] + len[s] > hi)
			hi = off[s] + len[s];
	if (be->stage_in &&
	    be->stage_in(ctx, buf, hi * sizeof(float), errp) < 0)
		return -1;
	for (int phase = 0; phase < 2 && !rv; phase++) {
		if (be->group_start && (rv = be->group_start(ctx, errp)) < 0)
			break;
		for (size_t s = 0; s < nseg && !rv; s++)
			for (int j = 0; j < k && !rv; j++) {
				size_t o = 0, c = len[s];
				int root;
				if (server[s] >= 0) {
					if (j)
						break;
					root = rt->leader_of[server[s] % k];
				} else {
					chunk(len[s], k, j, &o, &c);
					root = rt->leader_of[j];
				}
				if (!c)
					continue;
				rv = phase ? be->bcast(ctx, buf + off[s] + o, c,
						       RT_F32, root, errp)
					   : be->reduce(ctx, buf + off[s] + o,
							c, RT_F32, root, errp);
			}
		if (be->group_end && be->group_end(ctx, rv ? NULL : errp) < 0)
			rv = -1;
	}
	if (be->stage_out && be->stage_out(ctx, rv ? NULL : errp) < 0)
		rv = -1;
	return rv;
}

/* ------------------------------------------------------------ plans */
struct rbucket {
	int kind, algo, compress, local_agg, local_repl;
	unsigned servers, sparse_ranks; /* ranks whose sparse rows it holds */
	size_t off, n_dense, n_sparse;	/* arena offset; dense then sparse */
	size_t nseg;			/* PS: one segment per tensor */
	size_t *soff, *slen, *spull; /* spull: what a rank pulls for itself */
	int *sserver;
};

struct autosync_rt_plan {
	autosync_rt_t *rt;
	size_t nb, nt, n;
	struct rbucket *b;
	size_t *goff, *glen, *gsync; /* per model tensor */
	float *arena;
};

struct name_ix {
	const char *name;
	size_t i;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct name_ix *)a)->name,
		      ((const struct name_ix *)b)->name);
}

/* a tensor's floats in the arena: a sparse one sent as rows has the rows
 * that 'ranks' ranks touch together (a PS bucket aggregated in the node
 * holds its ranks' union, as the simulator counts it) */
static size_t tensor_elems(const autosync_tensor_t *T, int sparse_rows,
			   unsigned ranks)
{
	if (T->sparse && sparse_rows && T->ndim >= 1 && T->shape[0] > 0)
		return (size_t)(autosync_tensor_rows_union(T, ranks) *
				(T->numel / (uint64_t)T->shape[0]));
	return (size_t)T->numel;
}

void autosync_rt_plan_destroy(autosync_rt_plan_t *rp)
{
	if (!rp)
		return;
	for (size_t b = 0; b < rp->nb; b++) {
		free(rp->b[b].soff);
		free(rp->b[b].slen);
		free(rp->b[b].spull);
		free(rp->b[b].sserver);
	}
	free(rp->b);
	free(rp->goff);
	free(rp->glen);
	free(rp->gsync);
	free(rp->arena);
	free(rp);
}

/* "auto" (NCCL's own choice) on the MPI backend: what the simulator assumes
 * NCCL picks, the faster of ring and double binary tree by alpha-beta on
 * the plan's cluster (our tree is NCCL's double binary tree over the
 * nodes; on two nodes it is the faster for large buffers, and NCCL picks it
 * there too) */
int autosync_rt_auto_algo(const autosync_cluster_t *c, unsigned p, double n)
{
	double a, b, r, t, node;

	node = c->nic_bw * (c->nics_per_node ? c->nics_per_node : 1);
	if (c->nodes <= 1) {
		a = c->intra_lat;
		b = c->intra_bw;
	} else {
		a = c->intra_lat > c->inter_lat ? c->intra_lat : c->inter_lat;
		b = c->gpus_per_node > 1 && c->intra_bw < node ? c->intra_bw
							       : node;
	}
	if (p < 2 || !(b > 0))
		return AUTOSYNC_ALGO_RING;
	r = autosync_sim_ring(p, n, a, b);
	t = c->nodes > 1 ? autosync_sim_node_tree(c->nodes, c->gpus_per_node, n,
						  a, c->intra_bw, node)
			 : autosync_sim_double_tree(p, n, a, b);
	return t >= 0 && t < r ? AUTOSYNC_ALGO_TREE : AUTOSYNC_ALGO_RING;
}

/* What autosync_rt_prepare() works on: the model's tensors by name, which
 * are placed, and the next free position in the arena. */
struct prep {
	autosync_rt_plan_t *rp;
	const autosync_model_t *m;
	struct name_ix *ix;
	size_t nt;
	unsigned char *seen;
	size_t pos;
};

/* one tensor of a bucket, on the pass for its kind (0: dense, 1: sparse
 * rows): its place in the arena, and in the bucket's PS segments */
static int prep_tensor(struct prep *c, const autosync_bucket_t *B,
		       struct rbucket *rb, size_t j, int pass, int sparse_rows,
		       autosync_error_t *errp)
{
	struct name_ix key = {B->tensors[j], 0}, *hit;
	const autosync_tensor_t *T;
	size_t e;

	hit = bsearch(&key, c->ix, c->nt, sizeof(*c->ix), cmp_name);
	if (!hit) {
		errno = ENOENT;
		return autosync_errprintf(errp,
					  "syncrt: plan tensor '%s' is not "
					  "in model '%s'",
					  B->tensors[j],
					  autosync_model_name(c->m));
	}
	T = autosync_model_tensor(c->m, hit->i);
	if ((T->sparse && sparse_rows) != pass)
		return 0;
	if (c->seen[hit->i]) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "syncrt: tensor '%s' is in two "
					  "buckets",
					  B->tensors[j]);
	}
	c->seen[hit->i] = 1;
	e = tensor_elems(T, sparse_rows, rb->sparse_ranks);
	c->rp->goff[hit->i] = c->pos;
	c->rp->glen[hit->i] = e;
	c->rp->gsync[hit->i] = e;
	if (rb->kind == AUTOSYNC_SYNC_PS) {
		/* a rank needs back only the rows it touched itself */
		size_t own = tensor_elems(T, sparse_rows, 1);
		if (!rb->local_repl)
			c->rp->gsync[hit->i] = own;
		rb->soff[rb->nseg] = c->pos - rb->off;
		rb->slen[rb->nseg] = e;
		rb->spull[rb->nseg] = own;
		rb->sserver[rb->nseg++] =
		    B->server ? B->server[j] : AUTOSYNC_NO_SERVER;
	}
	if (pass)
		rb->n_sparse += e;
	else
		rb->n_dense += e;
	c->pos += e;
	return 0;
}

/* one bucket of the plan: its algorithm (auto resolved for this runtime),
 * then its tensors, dense ones first, then sparse ones */
static int prep_bucket(struct prep *c, const autosync_plan_summary_t *s,
		       const autosync_bucket_t *B, struct rbucket *rb,
		       autosync_error_t *errp)
{
	int sparse_rows = B->kind == AUTOSYNC_SYNC_PS || !B->densify;

	if (B->compress == AUTOSYNC_COMPRESS_POWERSGD) {
		errno = ENOTSUP;
		return autosync_errprintf(
		    errp,
		    "syncrt: bucket %u: PowerSGD is PyTorch DDP's comm hook "
		    "(a pytorch-ddp plan); this runtime runs none, fp16 and "
		    "bf16 (plan with --framework generic)",
		    B->id);
	}
	rb->kind = B->kind;
	rb->algo =
	    B->algo == AUTOSYNC_ALGO_AUTO
		? autosync_rt_auto_algo(&s->cluster, (unsigned)c->rp->rt->size,
					B->wire_bytes)
		: B->algo;
	rb->compress = B->compress;
	rb->servers = B->servers;
	rb->local_agg = B->local_agg;
	rb->local_repl = B->local_repl;
	/* the plan's layout, not this node's: every rank's buffer is alike */
	rb->sparse_ranks = B->kind == AUTOSYNC_SYNC_PS && B->local_agg
			       ? s->cluster.gpus_per_node
			       : 1;
	rb->off = c->pos;
	if (B->kind == AUTOSYNC_SYNC_PS &&
	    (!(rb->soff = calloc(B->ntensors + 1, sizeof(size_t))) ||
	     !(rb->slen = calloc(B->ntensors + 1, sizeof(size_t))) ||
	     !(rb->spull = calloc(B->ntensors + 1, sizeof(size_t))) ||
	     !(rb->sserver = calloc(B->ntensors + 1, sizeof(int))))) {
		errno = ENOMEM;
		return autosync_errprintf(errp, "syncrt: out of memory");
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t j = 0; j < B->ntensors; j++)
			if (prep_tensor(c, B, rb, j, pass, sparse_rows, errp) <
			    0)
				return -1;
	return 0;
}

/* the plan's NCCL hint for the backend: its NCCL_ALGO, else the job's
 * algorithm */
static const char *nccl_hint(const autosync_plan_t *plan,
			     const autosync_plan_summary_t *s)
{
	const char *hint = "";

	for (size_t i = 0; i < autosync_plan_nenv(plan); i++)
		if (!strcmp(autosync_plan_env(plan, i)->name, "NCCL_ALGO"))
			hint = autosync_plan_env(plan, i)->value;
	if (!*hint && s->job_algo == AUTOSYNC_ALGO_RING)
		hint = "Ring";
	else if (!*hint && s->job_algo == AUTOSYNC_ALGO_TREE)
		hint = "Tree";
	return hint;
}

autosync_rt_plan_t *autosync_rt_prepare(autosync_rt_t *rt,
					const autosync_plan_t *plan,
					const autosync_model_t *m,
					autosync_error_t *errp)
{
	autosync_rt_plan_t *rp = NULL;
	autosync_plan_summary_t s;
	struct prep c = {.m = m};
	size_t nt;

	if (!rt || !plan || !m || autosync_plan_summary(plan, &s) < 0) {
		errno = EINVAL;
		autosync_errprintf(errp, "syncrt: prepare: invalid argument");
		return NULL;
	}
	nt = autosync_model_ntensors(m);
	if (!(rp = calloc(1, sizeof(*rp))) ||
	    !(rp->b = calloc(autosync_plan_nbuckets(plan)
				 ? autosync_plan_nbuckets(plan)
				 : 1,
			     sizeof(*rp->b))) ||
	    !(rp->goff = calloc(nt ? nt : 1, sizeof(size_t))) ||
	    !(rp->glen = calloc(nt ? nt : 1, sizeof(size_t))) ||
	    !(rp->gsync = calloc(nt ? nt : 1, sizeof(size_t))) ||
	    !(c.ix = calloc(nt ? nt : 1, sizeof(*c.ix))) ||
	    !(c.seen = calloc(nt ? nt : 1, 1)))
		goto nomem;
	rp->rt = rt;
	rp->nb = autosync_plan_nbuckets(plan);
	rp->nt = c.nt = nt;
	c.rp = rp;
	for (size_t i = 0; i < nt; i++)
		c.ix[i] =
		    (struct name_ix){autosync_model_tensor(m, i)->name, i};
	qsort(c.ix, nt, sizeof(*c.ix), cmp_name);
	for (size_t b = 0; b < rp->nb; b++)
		if (prep_bucket(&c, &s, autosync_plan_bucket(plan, b),
				&rp->b[b], errp) < 0)
			goto fail;
	for (size_t i = 0; i < nt; i++)
		if (!c.seen[i]) {
			errno = EINVAL;
			autosync_errprintf(
			    errp, "syncrt: tensor '%s' is in no bucket",
			    autosync_model_tensor(m, i)->name);
			goto fail;
		}
	rp->n = c.pos;
	if (!(rp->arena = calloc(c.pos ? c.pos : 1, sizeof(float))))
		goto nomem;
	if (BE(rt)->prepare &&
	    BE(rt)->prepare(BECTX(rt), nccl_hint(plan, &s), errp) < 0)
		goto fail;
	free(c.ix);
	free(c.seen);
	return rp;
nomem:
	errno = ENOMEM;
	autosync_errprintf(errp, "syncrt: out of memory");
fail:
	free(c.ix);
	free(c.seen);
	autosync_rt_plan_destroy(rp);
	return NULL;
}

size_t autosync_rt_plan_nbuckets(const autosync_rt_plan_t *rp)
{
	return rp ? rp->nb : 0;
}

size_t autosync_rt_plan_grad_synced(const autosync_rt_plan_t *rp, size_t i)
{
	return rp && i < rp->nt ? rp->gsync[i] : 0;
}

float *autosync_rt_plan_grad(autosync_rt_plan_t *rp, size_t i, size_t *n)
{
	if (!rp || i >= rp->nt) {
		errno = EINVAL;
		return NULL;
	}
	if (n)
		*n = rp->glen[i];
	return rp->arena + rp->goff[i];
}

float *autosync_rt_plan_arena(autosync_rt_plan_t *rp, size_t *n)
{
	if (n)
		*n = rp->n;
	return rp->arena;
}

float *autosync_rt_plan_bucket_buf(autosync_rt_plan_t *rp, size_t b, size_t *n)
{
	if (!rp || b >= rp->nb) {
		errno = EINVAL;
		return NULL;
	}
	if (n)
		*n = rp->b[b].n_dense + rp->b[b].n_sparse;
	return rp->arena + rp->b[b].off;
}

int autosync_rt_sync_bucket(autosync_rt_plan_t *rp, size_t b,
			    autosync_error_t *errp)
{
	struct rbucket *rb;
	float *buf;

	if (!rp || b >= rp->nb) {
		errno = EINVAL;
		return autosync_errprintf(errp, "syncrt: no bucket %zu", b);
	}
	rb = &rp->b[b];
	buf = rp->arena + rb->off;
	if (rb->kind == AUTOSYNC_SYNC_PS) {
		const struct autosync_rt_backend *be = BE(rp->rt);
		if (be->ps)
			return be->ps(BECTX(rp->rt), buf, rb->nseg, rb->soff,
				      rb->slen, rb->spull, rb->sserver,
				      rb->servers, rb->local_agg,
				      rb->local_repl, errp);
		return walk_ps(rp->rt, buf, rb->nseg, rb->soff, rb->slen,
			       rb->sserver, rb->servers, errp);
	}
	if (rb->n_dense && walk_allreduce(rp->rt, buf, rb->n_dense, rb->algo,
					  rb->compress, errp) < 0)
		return -1;
	if (rb->n_sparse) {
		const struct autosync_rt_backend *be = BE(rp->rt);
		void *ctx = BECTX(rp->rt);
		float *sp = buf + rb->n_dense;
		int rv;
		if (be->stage_in &&
		    be->stage_in(ctx, sp, rb->n_sparse * sizeof(float), errp) <
			0)
			return -1;
		rv = be->gather_sum(ctx, sp, rb->n_sparse, errp);
		if (be->stage_out && be->stage_out(ctx, rv ? NULL : errp) < 0)
			rv = -1;
		if (rv < 0)
			return -1;
	}
	return 0;
}
