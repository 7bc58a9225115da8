/*
 * autosync/siteconf.h - the site configuration (YAML), written by admins and
 * read by the SPANK plugin and the CLI. The format is documented in
 * autosync.yaml(5) and etc/autosync.yaml.example.
 *
 * Conventions as in autosync/common.h; nothing here prints.
 */
#ifndef AUTOSYNC_SITECONF_H
#define AUTOSYNC_SITECONF_H

#include <stddef.h>

#include "autosync/cluster.h"
#include "autosync/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest site config accepted, in bytes. */
#define AUTOSYNC_SITECONF_MAX_BYTES (1024 * 1024)
/* The format version this autosync writes; version 1 files are read too.
 * Version 2: plan_budget_ms defaults to 1000 and covers loading the model
 * and topology; plan_memory and keep_job_files are new. */
#define AUTOSYNC_SITECONF_VERSION 2

enum autosync_site_mode {
	AUTOSYNC_SITE_MODE_OFF = 0,
	AUTOSYNC_SITE_MODE_AUTO = 1,
};

/* Bits for allowed_modes. */
enum {
	AUTOSYNC_ALLOW_OFF = 1 << 0,
	AUTOSYNC_ALLOW_AUTO = 1 << 1,
	AUTOSYNC_ALLOW_REQUIRED = 1 << 2,
	AUTOSYNC_ALLOW_PLAN = 1 << 3,
};

typedef struct autosync_siteconf autosync_siteconf_t;

/* Called once per problem found; 'msg' is "FILE:LINE: ..." and borrowed. */
typedef void (*autosync_siteconf_problem_f)(const char *msg, void *arg);

/*
 * Read and validate 'path'. Returns a new handle (free it with
 * autosync_siteconf_destroy()) or NULL with the first problem in 'errp'
 * ("FILE:LINE: what is wrong, naming the key and value").
 */
autosync_siteconf_t *autosync_siteconf_load(const char *path,
					    autosync_error_t *errp);

/*
 * Validate 'path' and report every problem through 'fn' (may be NULL).
 * Returns the number of problems (0 = valid), or -1 when the file cannot be
 * read at all (message in 'errp').
 */
int autosync_siteconf_check(const char *path, autosync_siteconf_problem_f fn,
			    void *arg, autosync_error_t *errp);

/* A handle with every default, as if the file were empty. */
autosync_siteconf_t *autosync_siteconf_create(autosync_error_t *errp);

void autosync_siteconf_destroy(autosync_siteconf_t *s);

/* Mode for jobs that ask for nothing, in 'partition' (may be NULL). */
int autosync_siteconf_default_mode(const autosync_siteconf_t *s,
				   const char *partition);
/* 1 if users may choose that mode (AUTOSYNC_ALLOW_* bit), else 0. */
int autosync_siteconf_mode_allowed(const autosync_siteconf_t *s, int allow_bit);

/* Strings are borrowed from 's'; "" when not set. */
const char *autosync_siteconf_framework(const autosync_siteconf_t *s);
const char *autosync_siteconf_catalog_dir(const autosync_siteconf_t *s);
const char *autosync_siteconf_calibration(const autosync_siteconf_t *s);
/* The learned simulator file planning applies ("" = the analytic model
 * alone), and the module that loads it (default
 * LIBDIR/autosync/autosync-simulator.so; another path for a build that is
 * not installed). */
const char *autosync_siteconf_simulator(const autosync_siteconf_t *s);
const char *autosync_siteconf_simulator_module(const autosync_siteconf_t *s);
const char *autosync_siteconf_runtime_dir(const autosync_siteconf_t *s);
const char *autosync_siteconf_topology_xml(const autosync_siteconf_t *s);
const char *autosync_siteconf_feedback_path(const autosync_siteconf_t *s);
size_t autosync_siteconf_feedback_max_bytes(const autosync_siteconf_t *s);
unsigned autosync_siteconf_feedback_keep(const autosync_siteconf_t *s);
unsigned autosync_siteconf_plan_budget_ms(const autosync_siteconf_t *s);
/* Seconds a step's job directory (its plan and its own feedback record)
 * is kept after the step ends, for the user to read; 0 = removed at the
 * end of the step. Default 1 day. */
long autosync_siteconf_keep_job_files(const autosync_siteconf_t *s);
size_t autosync_siteconf_max_model_bytes(const autosync_siteconf_t *s);
/* Address-space cap of the planning child at job start, bytes (default
 * 4GiB, at least 256MiB). */
size_t autosync_siteconf_plan_memory(const autosync_siteconf_t *s);
/* 1: point NCCL at autosync's tuner and profiler plugins
 * (NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN) found in nccl_plugin_dir
 * (default: the library directory autosync was installed to). */
int autosync_siteconf_nccl_plugins(const autosync_siteconf_t *s);
const char *autosync_siteconf_nccl_plugin_dir(const autosync_siteconf_t *s);
/* 1: plans made at job start carry job.nccl_calibrate, so the tuner plugin
 * rescales NCCL's latency constants to the calibrated links (default 0). */
int autosync_siteconf_nccl_calibrate(const autosync_siteconf_t *s);
/* 1: a job may allow lossy gradient compression (--autosync-compression,
 * autosync plan --allow-compression); 0: the site forbids it and jobs
 * that ask are planned without (default 1). */
int autosync_siteconf_allow_compression(const autosync_siteconf_t *s);
/* The format version of the file read (AUTOSYNC_SITECONF_VERSION when
 * it said none, and for a handle with every default). */
unsigned autosync_siteconf_version(const autosync_siteconf_t *s);
/* One line about the file for whoever shows it ("PATH: site config
 * version 1, read as version 2: ..."), or NULL when there is nothing to
 * say. Borrowed from 's'. */
const char *autosync_siteconf_note(const autosync_siteconf_t *s);
/* Fabric NIC names (e.g. "mlx5_0"); 'i' < count. */
size_t autosync_siteconf_nfabric_nics(const autosync_siteconf_t *s);
const char *autosync_siteconf_fabric_nic(const autosync_siteconf_t *s,
					 size_t i);

/*
 * Overwrite the inter-node fields of 'c' (nic_bw, inter_lat, nics_per_node,
 * nodes_per_switch, transport) with those the site config sets; others
 * are kept.
 */
void autosync_siteconf_apply_network(const autosync_siteconf_t *s,
				     autosync_cluster_t *c);

#ifdef __cplusplus
}
#endif

#endif /* AUTOSYNC_SITECONF_H */
