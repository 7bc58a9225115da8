/* common.c - see common.h */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "autosync/common.h"
#include "common.h"
#include "common/text.h"

static struct {
	struct as_pconf pconf;
	int pconf_ok;
	char pconf_err[AS_MSG_MAX];
	autosync_siteconf_t *site;
	int site_tried;
	char site_err[AS_MSG_MAX];
} common;

void as_plugin_load_pconf(int ac, char **av)
{
	common.pconf_ok =
	    as_pconf_parse(&common.pconf, ac, av, common.pconf_err,
			   sizeof(common.pconf_err)) == 0;
}

const struct as_pconf *as_plugin_pconf(void)
{
	return common.pconf_ok ? &common.pconf : NULL;
}

const char *as_plugin_pconf_error(void)
{
	return common.pconf_err;
}

autosync_siteconf_t *as_plugin_site(void)
{
	autosync_error_t err = {.text = ""};

	if (common.site_tried || !common.pconf_ok || !common.pconf.config[0])
		return common.site;
	common.site_tried = 1;
	if (!(common.site = autosync_siteconf_load(common.pconf.config, &err)))
		snprintf(common.site_err, sizeof(common.site_err),
			 "autosync: site config: %s", err.text);
	return common.site;
}

const char *as_plugin_site_error(void)
{
	return common.site_err;
}

long as_plugin_keep_seconds(void)
{
	return as_plugin_site()
		   ? autosync_siteconf_keep_job_files(as_plugin_site())
		   : 86400;
}

void as_plugin_log(int level, const char *fmt, ...)
{
	char msg[AS_MSG_MAX], q[AS_MSG_MAX];
	spank_context_t c = spank_context();
	int user_side = (c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* messages carry users' file names and YAML text: nothing in them
	 * may start a line of its own or steer a terminal */
	asi_quote(msg, q, sizeof(q));
	switch (level) {
	case AUTOSYNC_LOG_ERROR:
		slurm_error("%s", q);
		break;
	case AUTOSYNC_LOG_WARNING:
	case AUTOSYNC_LOG_INFO:
		if (user_side)
			slurm_verbose("%s", q);
		else
			slurm_info("%s", q);
		break;
	default:
		slurm_debug("%s", q);
		break;
	}
}

void as_plugin_exit(void)
{
	autosync_siteconf_destroy(common.site);
	memset(&common, 0, sizeof(common));
}
