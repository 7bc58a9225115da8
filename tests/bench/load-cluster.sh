#!/usr/bin/env bash
# load-cluster.sh BUILDDIR [CPUS] - restart the test cluster that
# tests/run-integration.sh BUILDDIR left running with CPUS (default 256)
# per node, so that all of load.sh's steps (one CPU per node each) run at
# once instead of queueing; the same plugin, drop-in and site config.
# tests/run-integration.sh puts the usual 4 back. A benchmark helper.
set -euo pipefail
b=$(cd "${1:?usage: load-cluster.sh BUILDDIR [CPUS]}" && pwd)
export AUTOSYNC_TEST_PLUGIN=$b/plugin/.libs/spank_autosync.so
export AUTOSYNC_TEST_PLUGIN_COPY=1
export AUTOSYNC_TEST_ARGS="config=/var/lib/autosync-test/etc/autosync.yaml"
CI_SLURM_CPUS=${2:-256} exec "$(dirname "$0")/../slurm/start-cluster.sh"
