/* plan_svg.c - an SVG picture of a plan's simulated step. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void svg_text(FILE *fp, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", fp);
		else if (*s == '>')
			fputs("&gt;", fp);
		else if (*s == '&')
			fputs("&amp;", fp);
		else if (*s == '"')
			fputs("&quot;", fp);
		else
			fputc(*s, fp);
	}
}

int autosync_plan_write_svg(const autosync_plan_t *plan, FILE *fp,
			    autosync_error_t *errp)
{
	const autosync_plan_summary_t *s;
	const double W = 1100, L = 150, R = 30, plotw = W - L - R;
	double tmax, scale, tick;
	int H;
	static const char *const colors[] = {"#4e79a7", "#f28e2b", "#59a14f",
					     "#e15759", "#76b7b2", "#edc948",
					     "#b07aa1", "#ff9da7"};

	if (!plan || !fp) {
		errno = EINVAL;
		return autosync_errprintf(errp,
					  "plan_write_svg: invalid argument");
	}
	s = &plan->s;
	H = 300 + (plan->nbase ? 30 + 22 * (int)plan->nbase : 0);
	tmax = s->step_time > 0 ? s->step_time : 1e-3;
	scale = plotw / tmax;
	/* a round tick interval: 1, 2 or 5 x 10^k, about 10 ticks */
	tick = pow(10, floor(log10(tmax / 10)));
	if (tmax / tick > 50)
		tick *= 5;
	else if (tmax / tick > 20)
		tick *= 2;
	fprintf(fp,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H);
	fprintf(fp,
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(fp, "<text x=\"10\" y=\"20\" font-size=\"15\" "
		    "font-weight=\"bold\">autosync plan: ");
	svg_text(fp, plan->model);
	fprintf(fp, " on %u x %u GPUs (", s->cluster.nodes,
		s->cluster.gpus_per_node);
	svg_text(fp, plan->framework);
	fprintf(fp, ", ");
	svg_text(fp, plan->strategy);
	fprintf(fp, ")</text>\n");
	fprintf(fp,
		"<text x=\"10\" y=\"40\">predicted step %.3f ms = forward %.3f "
		"+ backward %.3f"
		" + exposed communication %.3f + optimizer %.3f; %zu buckets, "
		"communication %.3f ms; bound %.3f ms</text>\n",
		s->step_time * 1e3, s->fwd_time * 1e3, s->bwd_time * 1e3,
		s->exposed_comm * 1e3, s->opt_time * 1e3, plan->nb,
		s->comm_time * 1e3, s->bound * 1e3);
	/* rows */
	fprintf(fp, "<text x=\"10\" y=\"95\">compute</text>\n"
		    "<text x=\"10\" y=\"155\">all-reduce</text>\n"
		    "<text x=\"10\" y=\"215\">parameter server</text>\n");
	fprintf(fp,
		"<rect x=\"%.2f\" y=\"75\" width=\"%.2f\" height=\"30\" "
		"fill=\"#9ecae1\">"
		"<title>forward %.6g s</title></rect>\n",
		L, s->fwd_time * scale, s->fwd_time);
	fprintf(fp,
		"<rect x=\"%.2f\" y=\"75\" width=\"%.2f\" height=\"30\" "
		"fill=\"#3182bd\">"
		"<title>backward %.6g s</title></rect>\n",
		L + s->fwd_time * scale, s->bwd_time * scale, s->bwd_time);
	fprintf(fp,
		"<rect x=\"%.2f\" y=\"75\" width=\"%.2f\" height=\"30\" "
		"fill=\"#969696\">"
		"<title>optimizer %.6g s</title></rect>\n",
		L + (s->step_time - s->opt_time) * scale, s->opt_time * scale,
		s->opt_time);
	fprintf(fp,
		"<text x=\"%.2f\" y=\"70\" font-size=\"10\">fwd</text>"
		"<text x=\"%.2f\" y=\"70\" font-size=\"10\">bwd</text>\n",
		L + 2, L + s->fwd_time * scale + 2);
	for (size_t i = 0; i < plan->nb; i++) {
		const autosync_bucket_t *b = &plan->b[i].b;
		double y = b->kind == AUTOSYNC_SYNC_PS ? 195 : 135;
		double w = b->comm * scale;
		fprintf(fp,
			"<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" "
			"stroke=\"#555\" stroke-width=\"1\"/>\n",
			L + b->ready * scale, y - 6, L + b->ready * scale, y);
		fprintf(
		    fp,
		    "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"30\" "
		    "fill=\"%s\" stroke=\"white\" "
		    "stroke-width=\"0.5\"><title>bucket %u: "
		    "%zu tensors, %.0f bytes (%.0f on the wire), %s%s%s, ready "
		    "%.6g s, "
		    "start %.6g s, end %.6g s</title></rect>\n",
		    L + b->start * scale, y, w < 0.5 ? 0.5 : w, colors[i % 8],
		    b->id, b->ntensors, b->bytes, b->wire_bytes,
		    b->kind == AUTOSYNC_SYNC_PS ? "ps"
						: autosync_algo_name(b->algo),
		    b->compress ? " " : "",
		    b->compress ? autosync_compress_name(b->compress) : "",
		    b->ready, b->start, b->end);
		if (w > 30)
			fprintf(fp,
				"<text x=\"%.2f\" y=\"%.0f\" font-size=\"10\" "
				"fill=\"white\">"
				"b%u</text>\n",
				L + b->start * scale + 3, y + 19, b->id);
	}
	/* axis */
	fprintf(fp,
		"<line x1=\"%.2f\" y1=\"240\" x2=\"%.2f\" y2=\"240\" "
		"stroke=\"black\"/>\n",
		L, L + plotw);
	for (int i = 0; i * tick <= tmax * 1.0001 && i < 200; i++) {
		double x = L + i * tick * scale;
		fprintf(fp,
			"<line x1=\"%.2f\" y1=\"240\" x2=\"%.2f\" y2=\"246\" "
			"stroke=\"black\"/>"
			"<text x=\"%.2f\" y=\"260\" font-size=\"10\" "
			"text-anchor=\"middle\">"
			"%.4g</text>\n",
			x, x, x, i * tick * 1e3);
	}
	fprintf(fp,
		"<text x=\"%.2f\" y=\"280\" text-anchor=\"middle\">time (ms); "
		"ticks on the "
		"communication rows mark when each bucket's gradients are "
		"ready</text>\n",
		L + plotw / 2);
	/* the comparison with the baselines on the same time axis */
	if (plan->nbase)
		fprintf(
		    fp,
		    "<text x=\"10\" y=\"310\" font-weight=\"bold\">predicted "
		    "step time of each baseline (grey: not executable by "
		    "this framework)</text>\n");
	for (size_t i = 0; i < plan->nbase; i++) {
		double y = 320 + 22.0 * (double)i, t = plan->base[i].step_time;
		double w = (t < tmax * 1.1 ? t : tmax * 1.1) * scale;
		fprintf(fp, "<text x=\"10\" y=\"%.0f\">", y + 13);
		svg_text(fp, plan->base[i].name);
		fprintf(
		    fp,
		    "</text><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" "
		    "height=\"16\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.0f\" "
		    "font-size=\"11\">%.3f ms (%.2fx this plan)%s</text>\n",
		    L, y, w, plan->base[i].applicable ? "#bab0ac" : "#e0e0e0",
		    L + (w < plotw - 190 ? w + 4 : 4), y + 12, t * 1e3,
		    tmax > 0 ? t / tmax : 0,
		    t > tmax * 1.1 ? " (clipped)" : "");
	}
	fprintf(fp,
		"<line x1=\"%.2f\" y1=\"60\" x2=\"%.2f\" y2=\"%d\" "
		"stroke=\"#d62728\" stroke-dasharray=\"4,3\"/>\n",
		L + tmax * scale, L + tmax * scale, H - 5);
	fprintf(fp, "</svg>\n");
	if (ferror(fp)) {
		errno = EIO;
		return autosync_errprintf(errp, "plan_write_svg: write error");
	}
	return 0;
}
