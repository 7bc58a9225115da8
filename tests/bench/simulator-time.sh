#!/bin/sh
# simulator-time.sh BUILDDIR SIMULATOR... - what a learned simulator adds
# to planning at job start. tests/bench/job-start.c plans as the SPANK
# plugin's planning child does: libautosync alone (XGBoost is not linked
# in, so the module's dlopen() of XGBoost and its C++ and OpenMP runtimes
# is counted), the job pipeline on a real node's topology (4 x A100, 16
# nodes), autosync_job_run() timed inside the process. Without a simulator
# and with each file, interleaved (none, the files, then the other way
# round) so that drift hits them alike; the cost of a file is the paired
# difference (reading and checking it, dlopen of the module, loading the
# trees, correcting the candidates). A benchmark, not a test: medians and
# spreads of RUNS (default 20) rounds per model, against the issue's 10 ms.
set -eu
usage="usage: [RUNS=N] simulator-time.sh BUILDDIR SIMULATOR..."
B=$(cd "${1:?$usage}" && pwd)
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
N=${RUNS:-20}
src=$(cd "$(dirname "$0")/../.." && pwd)
MOD=${AUTOSYNC_SIMULATOR_MODULE:-$B/learn/.libs/autosync-simulator.so}
topo=$src/tests/fixtures/topologies/hwloc-juwels-booster-4xA100-4xHDR.xml
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cc -O2 -I"$src/include" -o "$t/job-start" "$src/tests/bench/job-start.c" \
  -L"$B/.libs" -lautosync -Wl,-rpath,"$B/.libs"
if ldd "$t/job-start" | grep -q xgboost; then
  echo "simulator-time.sh: the driver links XGBoost: not what the plugin does" >&2; exit 1
fi
run() { # MODEL SIMULATOR|none: milliseconds of one autosync_job_run
  out=$("$t/job-start" "$src/planner/catalog" "$topo" 16 "$1" "$2" "$MOD" 2>"$t/err") || {
    cat "$t/err" >&2; exit 1; }
  if [ "$2" != none ] && { [ "${out#* }" = - ] || [ -s "$t/err" ]; }; then
    echo "simulator-time.sh: the simulator was not used:" >&2; cat "$t/err" >&2; exit 1
  fi
  echo "${out% *}"
}
stats() { sort -n | awk '{a[NR]=$1} END {printf "median %.1f p10 %.1f p90 %.1f", a[int((NR+1)/2)], a[int(NR*0.1)+1], a[int(NR*0.9+0.5)]}'; }
echo "# $(uname -srm), $(nproc) cores; $N rounds per model; hwloc-juwels-booster-4xA100-4xHDR x 16 nodes; autosync_job_run() in a process without XGBoost"
k=0
for f in "$@"; do
  k=$((k + 1))
  echo "# simulator $k: $(basename "$f") ($(wc -c < "$f") bytes, starting '$(head -c 18 "$f" | tr -c '[:print:]' '?')')"
done
for m in resnet50 bert-large gpt2-xl; do
  rm -f "$t"/ms.* "$t"/add.*
  for i in $(seq "$N"); do
    # none first, then the files; every other round the other way round
    order="none $(seq "$#" | tr '\n' ' ')"
    [ $((i % 2)) = 0 ] && order=$(echo "$order" | tr ' ' '\n' | sed '/^$/d' | tac | tr '\n' ' ')
    for o in $order; do
      if [ "$o" = none ]; then f=none; else eval "f=\${$o}"; fi
      run "$m" "$f" > "$t/cur.$o"
    done
    cat "$t/cur.none" >> "$t/ms.none"
    for o in $(seq "$#"); do
      cat "$t/cur.$o" >> "$t/ms.$o"
      echo "$(cat "$t/cur.$o") $(cat "$t/cur.none")" | awk '{print $1 - $2}' >> "$t/add.$o"
    done
  done
  line="$m analytic_ms $(stats < "$t/ms.none")"
  for o in $(seq "$#"); do
    line="$line | simulator $o: ms $(stats < "$t/ms.$o"), added $(stats < "$t/add.$o")"
  done
  echo "$line | budget 10"
done
