/* golden.c - committed plans for fixed inputs (house style 14): any change
 * of a plan must show up as a reviewed diff of planner/test/golden/.
 * AUTOSYNC_UPDATE_GOLDEN=1 rewrites the files instead of comparing. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autosync/planner.h"
#include "tap.h"

static const struct golden {
	const char *file, *model;
	int fw;
	unsigned nodes, gpus, nics;
	double intra_bw, nic_bw, inter_lat;
} cases[] = {
    {"resnet50-ddp-4x8", "resnet50", AUTOSYNC_FW_PYTORCH_DDP, 4, 8, 4, 240e9,
     25e9, 2e-6},
    {"bert-large-generic-16x8", "bert-large", AUTOSYNC_FW_GENERIC, 16, 8, 1,
     240e9, 12.5e9, 5e-6},
    {"ncf-autodist-8x8", "ncf", AUTOSYNC_FW_AUTODIST, 8, 8, 2, 240e9, 25e9,
     2e-6},
    {"gpt2-horovod-2x8", "gpt2", AUTOSYNC_FW_HOROVOD, 2, 8, 8, 240e9, 25e9,
     2e-6},
    {"vgg16-generic-8x4-pcie", "vgg16", AUTOSYNC_FW_GENERIC, 8, 4, 1, 12e9,
     12.5e9, 5e-6},
};

int main(void)
{
	const char *src = getenv("AUTOSYNC_SRCDIR"),
		   *upd = getenv("AUTOSYNC_UPDATE_GOLDEN");
	char catalog[1024];

	plan(NO_PLAN);
	snprintf(catalog, sizeof(catalog), "%s/planner/catalog",
		 src ? src : "..");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct golden *g = &cases[i];
		autosync_error_t err = {""};
		autosync_model_t *m =
		    autosync_model_open(g->model, catalog, &err);
		autosync_planner_t *p = autosync_planner_create(&err);
		autosync_cluster_t c;
		autosync_plan_t *pl = NULL;
		char *got = NULL, *want = NULL, path[1200];
		size_t lg = 0, lw = 0;
		FILE *fp;

		memset(&c, 0, sizeof(c));
		c.nodes = g->nodes;
		c.gpus_per_node = g->gpus;
		c.intra_class = g->intra_bw > 100e9 ? AUTOSYNC_LINK_NVLINK
						    : AUTOSYNC_LINK_PCIE_SWITCH;
		c.intra_bw = g->intra_bw;
		c.intra_lat = g->intra_bw > 100e9 ? 0.6e-6 : 1.5e-6;
		c.nics_per_node = g->nics;
		c.nic_bw = g->nic_bw;
		c.inter_lat = g->inter_lat;
		if (m && p && autosync_planner_set_model(p, m, &err) == 0 &&
		    autosync_planner_set_cluster(p, &c, &err) == 0 &&
		    autosync_planner_set_framework(p, g->fw, &err) == 0)
			pl = autosync_planner_run(p, &err);
		if (!pl) {
			ok(0, "%s: %s", g->file, err.text);
			goto next;
		}
		fp = open_memstream(&got, &lg);
		autosync_plan_write(pl, fp, &err);
		fclose(fp);
		snprintf(path, sizeof(path), "%s/planner/test/golden/%s.yaml",
			 src ? src : "..", g->file);
		if (upd && *upd == '1') {
			fp = fopen(path, "w");
			ok(fp && fwrite(got, 1, lg, fp) == lg &&
			       fclose(fp) == 0,
			   "%s rewritten", g->file);
			goto next;
		}
		fp = fopen(path, "r");
		if (fp) {
			char buf[65536];
			size_t n;
			FILE *w = open_memstream(&want, &lw);
			while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
				fwrite(buf, 1, n, w);
			fclose(w);
			fclose(fp);
		}
		ok(want && lw == lg && !memcmp(want, got, lg),
		   "%s: the plan equals the committed golden file", g->file);
		if (want && (lw != lg || memcmp(want, got, lg)))
			diag("regenerate with AUTOSYNC_UPDATE_GOLDEN=1 and "
			     "review "
			     "the diff");
	next:
		free(got);
		free(want);
		autosync_plan_destroy(pl);
		autosync_planner_destroy(p);
		autosync_model_destroy(m);
	}
	return done_testing();
}
