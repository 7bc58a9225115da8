/* slurmd.c - see slurmd.h */
#include "config.h"

#include "autosync/common.h"
#include "common.h"
#include "slurmd.h"

void as_slurmd_init(void)
{
	const struct as_pconf *pc = as_plugin_pconf();

	as_plugin_log(AUTOSYNC_LOG_INFO, "autosync: version %s",
		      autosync_version());
	if (!pc)
		as_plugin_log(AUTOSYNC_LOG_ERROR,
			      "%s; autosync is disabled on this node",
			      as_plugin_pconf_error());
	else if (pc->config[0] && !as_plugin_site())
		/* logged once, when slurmd loads the plugin; steps then stay
		 * out of the way */
		as_plugin_log(AUTOSYNC_LOG_ERROR,
			      "%s; autosync is disabled on this node until it "
			      "is fixed",
			      as_plugin_site_error());
}
