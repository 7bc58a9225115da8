#!/usr/bin/env bash
# run-integration.sh PLUGIN_SO - start the test Slurm cluster with PLUGIN_SO
# registered, then run every tests/integration/*.sh twice: submitting as
# root and as the unprivileged user 'astest'. Prints each TAP line and ends
# with "N passed, N failed". Run as root.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
plugin=${1:?usage: run-integration.sh PATH/TO/spank_autosync.so}
user=${AUTOSYNC_TEST_USER:-astest}
site_dir=/var/lib/autosync-test/etc
[ "$(id -u)" = 0 ] || { echo "run-integration.sh: run as root" >&2; exit 1; }

id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
install -d -m 0755 /var/lib/autosync-test "$site_dir"
cat > "$site_dir/autosync.yaml" <<'YAML'
# site config used by the integration tests
version: 1
default_mode: off
network:
  nic_bandwidth: 100Gbit/s
  latency: 2us
  nics_per_node: 2
YAML
chmod 0644 "$site_dir/autosync.yaml"

AUTOSYNC_TEST_PLUGIN=$plugin AUTOSYNC_TEST_ARGS="config=$site_dir/autosync.yaml" \
  "$here/slurm/start-cluster.sh" || { echo "0 passed, 1 failed"; exit 1; }

pass=0 fail=0
for t in "$here"/integration/[0-9]*.sh; do
  for u in root "$user"; do
    echo "# $(basename "$t") as $u"
    out=$(IT_USER=$u IT_SITE="$site_dir/autosync.yaml" timeout 600 bash "$t" 2>&1); rc=$?
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
