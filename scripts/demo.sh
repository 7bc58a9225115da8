#!/usr/bin/env bash
# demo.sh - the main job on an embedded default, from a fresh checkout:
# install what is missing (as root), build, then plan a built-in model
# (ResNet-50) for this machine's topology on the default cluster and show
# the result, with what the SPANK plugin would inject into the ranks.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
model=${1:-resnet50}
if [ "$(id -u)" = 0 ]; then tests/slurm/install-deps.sh; fi
echo "[demo] building (log: _build/demo-build.log)"
mkdir -p _build/plain
{ [ -x configure ] || ./autogen.sh; } >_build/demo-build.log 2>&1 &&
  (cd _build/plain && { [ -f Makefile ] || ../../configure; } && make -j"$(nproc)") \
    >>_build/demo-build.log 2>&1 || { tail -30 _build/demo-build.log; exit 1; }
cli=_build/plain/cli/autosync
export AUTOSYNC_CATALOG_DIR="$src/planner/catalog"

echo "== autosync topo: this machine as the plugin sees it"
"$cli" topo
echo
echo "== autosync plan --model $model --topology live (this machine as every node, default network: 4 nodes, 4 x 200 Gbit/s NICs, 2 us)"
"$cli" plan --model "$model" --topology live --explain
echo
echo "== what the SPANK plugin would inject into local rank 0"
"$cli" topo --env
