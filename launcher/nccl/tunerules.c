/* tunerules.c - see tunerules.h */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tunerules.h"

/* ------------------------------------------------------------ from a plan */

int as_tune_from_plan(autosync_plan_t *plan, struct as_tune_table *t, char *err,
		      size_t errlen)
{
	autosync_error_t e = {.text = ""};
	autosync_plan_summary_t s;
	size_t n;

	if (!plan || !t || autosync_plan_summary(plan, &s) < 0) {
		snprintf(err, errlen, "no plan");
		return -1;
	}
	t->intra_lat = s.cluster.intra_lat;
	t->inter_lat = s.cluster.inter_lat;
	t->intra_nvlink = s.cluster.intra_class == AUTOSYNC_LINK_NVLINK;
	t->calibrate = s.nccl_calibrate;
	snprintf(t->plan_hash, sizeof(t->plan_hash), "%s",
		 autosync_plan_hash(plan) ? autosync_plan_hash(plan) : "");
	t->derived = 0;
	if (autosync_plan_nnccl_rules(plan) == 0 && !s.nccl_none &&
	    (unsigned long)s.cluster.nodes * s.cluster.gpus_per_node > 1) {
		/* a plan without a table (hand-written, older autosync); one
		 * that says "nccl: []" leaves NCCL to itself */
		if (autosync_plan_derive_nccl(plan, NULL, &e) < 0) {
			snprintf(err, errlen, "%s", e.text);
			return -1;
		}
		t->derived = 1;
	}
	n = autosync_plan_nnccl_rules(plan);
	if (t->n + n > AS_TUNE_MAX_RULES) {
		snprintf(err, errlen, "more than %d tuner rules",
			 AS_TUNE_MAX_RULES);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const autosync_nccl_rule_t *r =
		    autosync_plan_nccl_rule(plan, i);

		t->r[t->n++] = (struct as_tune_rule){
		    .func = r->func,
		    .min_bytes = r->min_bytes,
		    .max_bytes = r->max_bytes,
		    .algo = r->algo,
		    .proto = r->proto,
		    .nchannels = (int)r->channels,
		    .nnodes = s.cluster.nodes,
		    .nranks = (long)s.cluster.nodes * s.cluster.gpus_per_node,
		};
	}
	return (int)n;
}

/* ------------------------------------------------------------ rules file */

static int field_long(const char *s, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end || *v < min || *v > max ? -1 : 0;
}

static int field_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "-1")) {
		*v = UINT64_MAX;
		return 0;
	}
	if (*s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || end == s || *end ? -1 : 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int parse_rule(char *line, struct as_tune_rule *r, char *why,
		      size_t wlen)
{
	char *f[9], *save = NULL, *tok;
	int n = 0;
	long v;

	for (tok = strtok_r(line, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == 9)
			break;
		f[n++] = trim(tok);
	}
	if (n != 8) {
		snprintf(why, wlen,
			 "%s fields, want 8 "
			 "(func,min_bytes,max_bytes,algo,proto,channels,"
			 "nNodes,nRanks)",
			 n > 8 ? "more than 8" : "fewer");
		return -1;
	}
	memset(r, 0, sizeof(*r));
	r->from_file = 1;
	if (!strcmp(f[0], "-1") || !strcasecmp(f[0], "any"))
		r->func = -1;
	else if ((r->func = autosync_nccl_func_from_name(f[0])) < 0) {
		snprintf(why, wlen, "unknown collective '%.32s'", f[0]);
		return -1;
	}
	if (!strcmp(f[1], "-1"))
		r->min_bytes = 0;
	else if (field_u64(f[1], &r->min_bytes) < 0) {
		snprintf(why, wlen, "min_bytes '%.32s' is not a byte count",
			 f[1]);
		return -1;
	}
	if (field_u64(f[2], &r->max_bytes) < 0) {
		snprintf(why, wlen, "max_bytes '%.32s' is not a byte count",
			 f[2]);
		return -1;
	}
	if (r->max_bytes <= r->min_bytes) {
		snprintf(why, wlen, "empty range [%s, %s)", f[1], f[2]);
		return -1;
	}
	if ((r->algo = autosync_nccl_algo_from_name(f[3])) < 0) {
		snprintf(why, wlen, "unknown algorithm '%.32s'", f[3]);
		return -1;
	}
	if (!strcmp(f[4], "-1"))
		r->proto = -1;
	else if ((r->proto = autosync_nccl_proto_from_name(f[4])) < 0) {
		snprintf(why, wlen, "unknown protocol '%.32s'", f[4]);
		return -1;
	}
	if (field_long(f[5], -1, 64, &v) < 0) {
		snprintf(why, wlen, "channels '%.32s' not in -1..64", f[5]);
		return -1;
	}
	r->nchannels = v < 0 ? 0 : (int)v;
	if (field_long(f[6], -1, 1L << 30, &r->nnodes) < 0 || r->nnodes == 0) {
		snprintf(why, wlen, "nNodes '%.32s' is not -1 or a count",
			 f[6]);
		return -1;
	}
	if (field_long(f[7], -1, 1L << 30, &r->nranks) < 0 || r->nranks == 0) {
		snprintf(why, wlen, "nRanks '%.32s' is not -1 or a count",
			 f[7]);
		return -1;
	}
	return 0;
}

int as_tune_parse_rules(const char *buf, size_t buflen, struct as_tune_table *t,
			char *err, size_t errlen)
{
	struct as_tune_rule *rules;
	size_t n = 0, cap = AS_TUNE_MAX_RULES;
	unsigned lineno = 0;
	const char *p = buf, *end = buf ? buf + buflen : NULL;
	int rv = -1;

	if (!(rules = calloc(cap, sizeof(*rules)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[512], *s, why[160];

		lineno++;
		if (len >= sizeof(line)) {
			snprintf(err, errlen, "line %u: too long", lineno);
			goto out;
		}
		/* a NUL would end the line early and hide what follows */
		if (memchr(p, '\0', len)) {
			snprintf(err, errlen, "line %u: a NUL byte", lineno);
			goto out;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		if ((s = strchr(line, '#')))
			*s = '\0';
		s = trim(line);
		if (*s) {
			if (n + t->n >= cap) {
				snprintf(err, errlen,
					 "line %u: more than %d "
					 "rules",
					 lineno, AS_TUNE_MAX_RULES);
				goto out;
			}
			if (parse_rule(s, &rules[n], why, sizeof(why)) < 0) {
				snprintf(err, errlen, "line %u: %s", lineno,
					 why);
				goto out;
			}
			n++;
		}
		p = nl ? nl + 1 : NULL;
	}
	/* file rules go first: they override the plan's */
	memmove(&t->r[n], &t->r[0], t->n * sizeof(t->r[0]));
	memcpy(&t->r[0], rules, n * sizeof(rules[0]));
	t->n += n;
	rv = (int)n;
out:
	free(rules);
	return rv;
}

/* ------------------------------------------------------------ matching */

const struct as_tune_rule *as_tune_match(const struct as_tune_table *t,
					 int func, size_t nbytes, size_t nranks,
					 size_t nnodes)
{
	for (size_t i = 0; t && i < t->n; i++) {
		const struct as_tune_rule *r = &t->r[i];

		if (r->func >= 0 && r->func != func)
			continue;
		if ((uint64_t)nbytes < r->min_bytes ||
		    (uint64_t)nbytes >= r->max_bytes)
			continue;
		if (r->nnodes > 0 && (size_t)r->nnodes != nnodes)
			continue;
		if (r->nranks > 0 && (size_t)r->nranks != nranks)
			continue;
		return r;
	}
	return NULL;
}

/* NCCL's table is float[numAlgo][numProto]: rows are numProto wide,
 * whatever this build's AS_NPROTOS says. */
#define COST(a, p) cost[(size_t)(a) * (size_t)numProto + (size_t)(p)]

int as_tune_apply(const struct as_tune_rule *r, float *cost, int numAlgo,
		  int numProto, int *nchannels)
{
	int na = numAlgo < AS_NALGOS ? numAlgo : AS_NALGOS;
	int np = numProto < AS_NPROTOS ? numProto : AS_NPROTOS;
	int p = -1;

	if (!r || !cost || numProto < 1 || r->algo < 0 || r->algo >= na)
		return -1;
	if (r->proto >= 0 && r->proto < np && COST(r->algo, r->proto) >= 0)
		p = r->proto;
	else
		for (int q = 0; q < np; q++)
			if (COST(r->algo, q) >= 0 &&
			    (p < 0 || COST(r->algo, q) < COST(r->algo, p)))
				p = q;
	if (p < 0)
		return -1; /* NCCL disabled the whole row: never revive */
	/* the plan chose among tree and ring only: an algorithm it does
	 * not model (CollNet, NVLS, PAT) that NCCL rates faster stays */
	if (!r->from_file)
		for (int a = 0; a < na; a++) {
			if (a == AS_ALGO_TREE || a == AS_ALGO_RING)
				continue;
			for (int q = 0; q < np; q++)
				if (COST(a, q) >= 0 &&
				    COST(a, q) < COST(r->algo, p))
					return AS_TUNE_UNMODELLED;
		}
	COST(r->algo, p) = 0.0f;
	if (r->nchannels > 0 && nchannels)
		*nchannels = r->nchannels;
	return p;
}

static double clamp_us(double us)
{
	return us < 0.1 ? 0.1 : us > 1000 ? 1000 : us;
}

/* Scale the Ring and Tree hop latencies of one hardware row so that its
 * Ring/Simple entry becomes the plan's link latency: the planner's NCCL
 * model (autosync_sim_nccl) makes the same assumption. */
static int scale_row(as_tuner_constants_v5_t *c, int hw, double seconds)
{
	static const int algos[] = {AS_ALGO_TREE, AS_ALGO_RING};
	double ref = c->hwLatencies[hw][AS_ALGO_RING][AS_PROTO_SIMPLE], f;
	int n = 0;

	if (!(seconds > 0) || !isfinite(seconds) || !(ref > 0))
		return 0;
	f = clamp_us(seconds * 1e6) / ref;
	for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		for (int p = 0; p < AS_NPROTOS; p++) {
			double *v = &c->hwLatencies[hw][algos[i]][p];
			if (*v > 0) {
				*v = clamp_us(*v * f);
				n++;
			}
		}
	return n;
}

int as_tune_calibrate(const struct as_tune_table *t, as_tuner_constants_v5_t *c)
{
	if (!t || !c)
		return 0;
	return scale_row(c, t->intra_nvlink ? AS_HW_NVLINK : AS_HW_PCI,
			 t->intra_lat) +
	       scale_row(c, AS_HW_NET, t->inter_lat);
}
