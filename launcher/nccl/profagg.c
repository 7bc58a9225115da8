/* profagg.c - see profagg.h */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profagg.h"

void as_prof_agg_init(struct as_prof_agg *a, unsigned steps_per, unsigned skip)
{
	memset(a, 0, sizeof(*a));
	a->steps_per = steps_per;
	a->skip = skip;
	a->step_start = -1;
}

static void copy_name(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; src && src[i] && i + 1 < len; i++)
		dst[i] = isalnum((unsigned char)src[i]) || src[i] == '_'
			     ? src[i]
			     : '_';
	if (i == 0 && len > 1)
		dst[i++] = '-';
	dst[i] = '\0';
}

static int size_class(uint64_t b)
{
	int c = -1;

	while (b) {
		c++;
		b >>= 1;
	}
	return c;
}

void as_prof_agg_coll(struct as_prof_agg *a, const char *func, const char *algo,
		      const char *proto, int nchannels, uint64_t bytes,
		      double dur_us, int gpu)
{
	char f[16], al[16], pr[16];
	int sc = size_class(bytes);
	struct as_prof_stat *s = NULL;

	copy_name(f, sizeof(f), func);
	copy_name(al, sizeof(al), algo);
	copy_name(pr, sizeof(pr), proto);
	if (dur_us < 0)
		dur_us = 0;
	for (size_t i = 0; i < a->nstats; i++) {
		struct as_prof_stat *x = &a->stats[i];
		if (x->nchannels == nchannels && x->size_class == sc &&
		    !strcmp(x->func, f) && !strcmp(x->algo, al) &&
		    !strcmp(x->proto, pr)) {
			s = x;
			break;
		}
	}
	if (!s) {
		if (a->nstats == AS_PROF_MAX_KEYS) {
			a->dropped_keys++;
			a->comm_us_total += dur_us;
			return;
		}
		s = &a->stats[a->nstats++];
		memset(s, 0, sizeof(*s));
		memcpy(s->func, f, sizeof(f));
		memcpy(s->algo, al, sizeof(al));
		memcpy(s->proto, pr, sizeof(pr));
		s->nchannels = nchannels;
		s->size_class = sc;
		s->min_us = dur_us;
		s->max_us = dur_us;
	}
	s->n++;
	s->sum_us += dur_us;
	if (dur_us < s->min_us)
		s->min_us = dur_us;
	if (dur_us > s->max_us)
		s->max_us = dur_us;
	if (gpu)
		s->gpu_timed++;
	a->comm_us_total += dur_us;
}

int as_prof_agg_mark(struct as_prof_agg *a, double t)
{
	int done = 0;

	if (a->steps_per == 0)
		return 0;
	if (a->marks++ % a->steps_per != 0)
		return 0;
	if (a->step_start >= 0 && t > a->step_start) {
		double d = t - a->step_start;
		if (a->skipped < a->skip) {
			a->skipped++;
		} else {
			a->steps++;
			a->steps_sum += d;
			if (a->npending < AS_PROF_MAX_PENDING)
				a->pending[a->npending++] = d;
			else
				a->pending_dropped++;
			done = 1;
		}
	}
	a->step_start = t;
	return done;
}

void as_prof_agg_reset_steps(struct as_prof_agg *a)
{
	a->marks = 0;
	a->step_start = -1;
}

static int cmp_stat(const void *x, const void *y)
{
	const struct as_prof_stat *p = x, *q = y;
	int c = strcmp(p->func, q->func);

	if (c)
		return c;
	if (p->size_class != q->size_class)
		return p->size_class < q->size_class ? -1 : 1;
	if ((c = strcmp(p->algo, q->algo)))
		return c;
	if ((c = strcmp(p->proto, q->proto)))
		return c;
	return (p->nchannels > q->nchannels) - (p->nchannels < q->nchannels);
}

long as_prof_agg_format(struct as_prof_agg *a, const char *header, int final,
			char **out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		return -1;
	if (header)
		fprintf(fp, "%s\n", header);
	for (size_t i = 0; i < a->npending; i++)
		fprintf(fp, "%.9g\n", a->pending[i]);
	a->npending = 0;
	if (final) {
		qsort(a->stats, a->nstats, sizeof(a->stats[0]), cmp_stat);
		for (size_t i = 0; i < a->nstats; i++) {
			const struct as_prof_stat *s = &a->stats[i];
			unsigned long long lo =
			    s->size_class < 0 ? 0 : 1ULL << s->size_class;
			unsigned long long hi =
			    s->size_class < 0	  ? 1
			    : s->size_class >= 63 ? 0
						  : 1ULL << (s->size_class + 1);
			fprintf(fp,
				"# coll %s %s %s channels=%d bytes=[%llu,%llu) "
				"n=%llu mean_us=%.6g min_us=%.6g max_us=%.6g "
				"timing=%s\n",
				s->func, s->algo, s->proto, s->nchannels, lo,
				hi, (unsigned long long)s->n,
				s->n ? s->sum_us / (double)s->n : 0.0,
				s->min_us, s->max_us,
				s->gpu_timed == s->n ? "gpu"
				: s->gpu_timed	     ? "mixed"
						     : "host");
		}
		if (a->dropped_keys)
			fprintf(fp,
				"# coll dropped=%llu (more than %d kinds)\n",
				(unsigned long long)a->dropped_keys,
				AS_PROF_MAX_KEYS);
		if (a->steps_per)
			fprintf(
			    fp,
			    "# steps n=%llu skipped=%llu mean_s=%.9g "
			    "collectives_per_step=%u comm_s_per_step=%.9g%s\n",
			    (unsigned long long)a->steps,
			    (unsigned long long)a->skipped,
			    a->steps ? a->steps_sum / (double)a->steps : 0.0,
			    a->steps_per,
			    a->steps
				? a->comm_us_total * 1e-6 / (double)a->steps
				: 0.0,
			    a->pending_dropped ? " (some step lines dropped)"
					       : "");
		else
			fprintf(
			    fp,
			    "# steps unknown (set AUTOSYNC_STEP_COLLECTIVES "
			    "or give a plan with all-reduce buckets) "
			    "comm_s=%.9g\n",
			    a->comm_us_total * 1e-6);
	}
	if (fclose(fp) != 0) {
		free(buf);
		errno = ENOMEM;
		return -1;
	}
	*out = buf;
	return (long)len;
}

unsigned as_prof_dtype_size(const char *name)
{
	static const struct {
		const char *n;
		unsigned size;
	} t[] = {
	    {"int8", 1},       {"char", 1},	  {"uint8", 1},
	    {"int32", 4},      {"int", 4},	  {"uint32", 4},
	    {"int64", 8},      {"uint64", 8},	  {"float16", 2},
	    {"half", 2},       {"float32", 4},	  {"float", 4},
	    {"float64", 8},    {"double", 8},	  {"bfloat16", 2},
	    {"float8e4m3", 1}, {"float8e5m2", 1},
	};

	if (!name)
		return 1;
	if (!strncasecmp(name, "nccl", 4))
		name += 4;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcasecmp(name, t[i].n))
			return t[i].size;
	return 1;
}
