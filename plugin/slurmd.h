/*
 * slurmd.h - the plugin in slurmd: it only checks its configuration once,
 * when slurmd loads it, so that an admin sees a broken one in slurmd's log
 * before any job does.
 */
#ifndef AUTOSYNC_PLUGIN_SLURMD_H
#define AUTOSYNC_PLUGIN_SLURMD_H

void as_slurmd_init(void);

#endif
