#!/bin/sh
# init-time.sh BUILDDIR [RUNS] - wall time of a whole `autosync init` (a
# Kubernetes init container's work: loading the topology and model,
# planning, copying the NCCL plugins, writing the files) on a real node's
# topology, 16 nodes, against the plugin's planning budget (plan_budget_ms,
# default 1000 ms). A benchmark, not a test: median, min and max of RUNS.
set -eu
B=$(cd "${1:?usage: init-time.sh BUILDDIR [RUNS]}" && pwd)
N=${2:-15}
src=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d /tmp/autosync-inittime.XXXXXX)
trap 'rm -rf "$t"' EXIT
echo "# $(uname -srm), $(nproc) cores; $N runs each; topology hwloc-juwels-booster-4xA100-4xHDR, PET_NNODES=16"
for m in resnet50 bert-large gpt2-xl; do
  ts=
  for i in $(seq "$N"); do
    rm -rf "$t/d"
    s=$(date +%s%N)
    PET_NNODES=16 "$B/cli/autosync" init -q --config none --catalog "$src/planner/catalog" \
      --topology "$src/tests/fixtures/topologies/hwloc-juwels-booster-4xA100-4xHDR.xml" \
      --model "$m" --plugin-dir "$B/launcher/nccl/.libs" "$t/d" >/dev/null
    e=$(date +%s%N)
    ts="$ts $(( (e - s) / 1000000 ))"
  done
  echo "$m $(echo $ts | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {printf "median_ms %d min_ms %d max_ms %d budget_ms 1000", a[int((NR+1)/2)], a[1], a[NR]}')"
done
