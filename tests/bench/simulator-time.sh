#!/bin/sh
# simulator-time.sh BUILDDIR SIMULATOR.json [RUNS] - what a learned
# simulator adds to planning at job start: `autosync plan` on a real node's
# topology (4 x A100, 16 nodes) without and with --simulator, interleaved
# A B B A so that drift hits both alike; the cost is the paired difference
# (reading the file, dlopen of the module and XGBoost, loading the trees,
# simulating and correcting the candidates). A benchmark, not a test:
# medians and spreads of RUNS pairs per model, against the issue's 10 ms.
set -eu
B=$(cd "${1:?usage: simulator-time.sh BUILDDIR SIMULATOR.json [RUNS]}" && pwd)
SIM=${2:?usage: simulator-time.sh BUILDDIR SIMULATOR.json [RUNS]}
N=${3:-20}
src=$(cd "$(dirname "$0")/../.." && pwd)
export AUTOSYNC_SIMULATOR_MODULE=${AUTOSYNC_SIMULATOR_MODULE:-$B/learn/.libs/autosync-simulator.so}
topo=$src/tests/fixtures/topologies/hwloc-juwels-booster-4xA100-4xHDR.xml
ms() { # ARGS...: wall milliseconds of one autosync plan
  s=$(date +%s%N)
  "$B/cli/autosync" plan --config none --catalog "$src/planner/catalog" --topology "$topo" \
    --nodes 16 -o /dev/null "$@" >/dev/null 2>&1
  e=$(date +%s%N)
  echo $(( (e - s) / 1000 ))
}
stats() { sort -n | awk '{a[NR]=$1} END {printf "median %.1f p10 %.1f p90 %.1f", a[int((NR+1)/2)]/1000, a[int(NR*0.1)+1]/1000, a[int(NR*0.9+0.5)]/1000}'; }
echo "# $(uname -srm), $(nproc) cores; $N ABBA pairs per model; hwloc-juwels-booster-4xA100-4xHDR x 16 nodes"
echo "# simulator $(basename "$SIM") ($(wc -c < "$SIM") bytes)"
for m in resnet50 bert-large gpt2-xl; do
  : > /tmp/simtime.$$.a; : > /tmp/simtime.$$.b; : > /tmp/simtime.$$.d
  for i in $(seq "$N"); do
    if [ $((i % 2)) = 1 ]; then a=$(ms --model "$m"); b=$(ms --model "$m" --simulator "$SIM")
    else b=$(ms --model "$m" --simulator "$SIM"); a=$(ms --model "$m"); fi
    echo "$a" >> /tmp/simtime.$$.a; echo "$b" >> /tmp/simtime.$$.b; echo $((b - a)) >> /tmp/simtime.$$.d
  done
  echo "$m analytic_ms $(stats < /tmp/simtime.$$.a) | learned_ms $(stats < /tmp/simtime.$$.b) | added_ms $(stats < /tmp/simtime.$$.d) | budget 10"
done
rm -f /tmp/simtime.$$.*
