#!/usr/bin/env bash
# run-integration.sh BUILDDIR | --installed - start the test Slurm cluster
# with autosync's plugin registered, then run every tests/integration/*.sh
# twice: submitting as root and as the unprivileged user 'astest'. Prints
# each TAP line and ends with "N passed, N failed". Run as root.
#   BUILDDIR     the plugin, CLI and NCCL plugins built there (copied to
#                /var/lib/autosync-test)
#   --installed  those of the installed Debian packages, where they are: the
#                plugin at the path the package's plugstack drop-in names
#                (Slurm's PluginDir), /usr/bin/autosync, the packaged NCCL
#                plugins and model catalog
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
lib=/var/lib/autosync-test
usage="usage: run-integration.sh BUILDDIR|--installed"
if [ "${1:?$usage}" = --installed ]; then
  installed=1
  dropin=/etc/slurm/plugstack.conf.d/autosync.conf
  plugin=$(sed -n 's/^#required \([^ ]*\) .*/\1/p' "$dropin" 2>/dev/null)
  [ -f "$plugin" ] || { echo "run-integration.sh: no plugin at '$plugin' (from $dropin): install slurm-spank-autosync" >&2; exit 1; }
  cli=$(dpkg -L autosync 2>/dev/null | grep -x '/usr/bin/autosync')
  models=$(dpkg -L autosync 2>/dev/null | grep -m1 '/share/autosync/models$')
  ncclso=$(dpkg -L autosync-nccl-plugins 2>/dev/null | grep '/libnccl-tuner-autosync\.so$')
  [ -x "$cli" ] && [ -d "$models" ] && [ -f "$ncclso" ] ||
    { echo "run-integration.sh: install the autosync and autosync-nccl-plugins packages" >&2; exit 1; }
  nccl_dir=$(dirname "$ncclso")
  sim_module=  # the package's, where the site config's default points
else
  installed=0
  build=$(cd "$1" && pwd)
  plugin=$build/plugin/.libs/spank_autosync.so
  cli=$lib/bin/autosync models=$src/planner/catalog nccl_dir=$lib/lib
  sim_module=$lib/lib/autosync-simulator.so
fi
user=${AUTOSYNC_TEST_USER:-astest}
site_dir=/var/lib/autosync-test/etc
[ "$(id -u)" = 0 ] || { echo "run-integration.sh: run as root" >&2; exit 1; }

id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
# Everything the tests' users must read is copied outside the checkout
# (which may sit in a directory only root can enter).
install -d -m 0755 $lib "$site_dir" $lib/bin $lib/models $lib/feedback
rm -f $lib/feedback/feedback.jsonl*   # every run starts with an empty log
install -d -m 0755 $lib/lib
rm -f $lib/bin/autosync $lib/lib/libnccl-*-autosync.so $lib/lib/autosync-simulator.so
if [ "$installed" = 0 ]; then
  install -m 0755 "$build/cli/autosync" $lib/bin/autosync
  install -m 0644 "$build/learn/.libs/autosync-simulator.so" "$sim_module"
  for so in libnccl-tuner-autosync.so libnccl-profiler-autosync.so; do
    [ -f "$build/launcher/nccl/.libs/$so" ] && install -m 0644 "$build/launcher/nccl/.libs/$so" $lib/lib/
  done
fi
install -m 0644 "$models"/*.yaml $lib/models/
# the fake GPUs' node: a real 4 x A100 + 4 x HDR machine (JUWELS Booster)
install -m 0644 "$src/tests/fixtures/topologies/hwloc-juwels-booster-4xA100-4xHDR.xml" $lib/topo.xml
# and one with fewer GPUs than Slurm hands out, to provoke a mismatch
install -m 0644 "$src/tests/fixtures/topologies/hwloc-supermicro-x9drg-3xM2075-1xIB-wholeio.xml" $lib/topo3.xml
cat > "$site_dir/autosync.yaml" <<YAML
# site config used by the integration tests
version: 1
default_mode: off
catalog_dir: $lib/models
topology_xml: $lib/topo.xml
plan_budget_ms: 2000
nccl_plugins: true
nccl_plugin_dir: $nccl_dir
${sim_module:+simulator_module: $sim_module}
network:
  nic_bandwidth: 200Gbit/s
  latency: 2us
  nodes_per_switch: 16
feedback:
  path: $lib/feedback/feedback.jsonl
  max_bytes: 64MiB
  keep: 2
YAML
chmod 0644 "$site_dir/autosync.yaml"

# an installed plugin is registered where it is, a built one is copied
export AUTOSYNC_TEST_PLUGIN=$plugin AUTOSYNC_TEST_PLUGIN_COPY=$((1 - installed))
export AUTOSYNC_TEST_ARGS="config=$site_dir/autosync.yaml"
echo "# plugin $plugin, CLI $cli, NCCL plugins in $nccl_dir"
"$here/slurm/start-cluster.sh" || { echo "0 passed, 1 failed"; exit 1; }

pass=0 fail=0
for t in "$here"/integration/[0-9]*.sh; do
  for u in root "$user"; do
    # Slurm 22.05's multiple-slurmd setup has lost a slurmd under many
    # concurrent steps (heap corruption inside slurmd's own threads, seen
    # in slurm_hostlist_create_dims): revive it so that one loss does not
    # hang every later test, and say so.
    revived=$("$here/slurm/start-cluster.sh" 2>&1 | grep -E 'slurm(ctl)?d .*started' || true)
    [ -z "$revived" ] || echo "# revived a daemon that had died: $revived"
    echo "# $(basename "$t") as $u"
    out=$(IT_USER=$u IT_SITE="$site_dir/autosync.yaml" IT_LIB=$lib IT_AUTOSYNC=$cli \
      IT_NCCL_PLUGIN_DIR=$nccl_dir timeout 600 bash "$t" 2>&1); rc=$?
    echo "$out" | sed 's/^/    /'
    p=$(grep -c '^ok ' <<<"$out"); f=$(grep -c '^not ok ' <<<"$out")
    # a script that died without a plan counts as one failure
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; echo "    not ok - $(basename "$t") exited $rc"; fi
    if ! grep -q '^1\.\.' <<<"$out"; then f=$((f + 1)); echo "    not ok - $(basename "$t") printed no plan"; fi
    pass=$((pass + p)); fail=$((fail + f))
  done
done
echo "integration: $pass passed, $fail failed"
[ "$fail" = 0 ]
