/*
 * args.h - the plugin's per-job options (--autosync, --autosync-model,
 * --autosync-compression and their AUTOSYNC_* environment fallbacks). Pure
 * C, no Slurm: unit-tested.
 */
#ifndef AUTOSYNC_PLUGIN_ARGS_H
#define AUTOSYNC_PLUGIN_ARGS_H

#include <limits.h>
#include <stddef.h>

enum as_mode {
	AS_MODE_UNSET = -1, /* not given: site default applies */
	AS_MODE_OFF = 0,
	AS_MODE_AUTO,
	AS_MODE_REQUIRED,
	AS_MODE_PLAN, /* a path to a plan file */
};

/* Where a value came from; a lower rank never overrides a higher one. */
enum as_source {
	AS_SRC_NONE = 0,
	AS_SRC_ENV,    /* AUTOSYNC_MODE / _MODEL / _COMPRESSION */
	AS_SRC_OPTION, /* --autosync… (command line, #SBATCH or SPANK env) */
};

#define AS_MODEL_NAME_MAX 64

struct as_args {
	int mode;		  /* enum as_mode */
	int mode_src;		  /* enum as_source */
	char plan_path[PATH_MAX]; /* AS_MODE_PLAN only */
	char model[PATH_MAX];	  /* catalog name or path; "" = none */
	int model_src;		  /* enum as_source */
	int compress;		  /* 1: the job allows lossy compression */
	int compress_src;	  /* enum as_source */
};

void as_args_init(struct as_args *a);

/*
 * Validate 'val' and store it if 'src' ranks at least as high as what is
 * stored. 'what' names the value's origin in messages ("--autosync",
 * "AUTOSYNC_MODE"). Returns 0, or -1 with a one-line message in 'err'.
 */
int as_args_set_mode(struct as_args *a, const char *val, int src,
		     const char *what, char *err, size_t errlen);
int as_args_set_model(struct as_args *a, const char *val, int src,
		      const char *what, char *err, size_t errlen);
/* --autosync-compression[=yes|no]: the job allows lossy gradient
 * compression (fp16/bf16, PowerSGD); NULL = yes. */
int as_args_set_compression(struct as_args *a, const char *val, int src,
			    const char *what, char *err, size_t errlen);

/* The mode that applies: an explicit one, else AUTO when a model was named,
 * else 'site_default' (AS_MODE_OFF or AS_MODE_AUTO). */
int as_args_effective_mode(const struct as_args *a, int site_default);

/* "off", "auto", "required", "plan" */
const char *as_mode_name(int mode);

#endif
