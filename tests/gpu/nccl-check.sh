#!/usr/bin/env bash
# nccl-check.sh [RESULTS_DIR] - on a machine with an NVIDIA GPU: build the
# CLI and both NCCL plugins (no sanitizers), write NCCL_TOPO_FILE with
# `autosync topo --nccl-xml`, plan for this one GPU, run a one-rank NCCL
# all-reduce program under `autosync launch` with NCCL_DEBUG=INFO, and check
# from NCCL's log that the topology file was accepted and that the tuner and
# the profiler were loaded and called. TAP on stdout; the logs, the plan,
# the topology, NCCL's topology dump and the profiler report are kept in
# RESULTS_DIR (default tests/gpu/results/<date>). Exit 0 when all pass.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
CUDA=${CUDA_HOME:-/usr/local/cuda}
res=${1:-$here/results/$(date -u +%Y%m%dT%H%M%SZ)}
build=${AUTOSYNC_GPU_BUILD:-$src/build-gpu}
mkdir -p "$res" "$build"
res=$(cd "$res" && pwd)
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
has() { grep -Eq -- "$2" "$1"; }   # has FILE EREGEX
finish() { echo "1..$n"; echo "# results in $res"; [ "$failed" = 0 ]; exit $?; }

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv; } > "$res/nvidia-smi.txt" 2>&1
ok $? "nvidia-smi sees a GPU"

# --- build (plain, no sanitizers: NCCL dlopens the plugins into a normal process)
{
  cd "$src" && { [ -x configure ] || ./autogen.sh; } &&
  cd "$build" && { [ -f Makefile ] || "$src/configure" --with-cuda="$CUDA"; } &&
  make -j"$(nproc)" cli/autosync launcher/nccl/libnccl-tuner-autosync.la \
    launcher/nccl/libnccl-profiler-autosync.la
} > "$res/build.log" 2>&1
ok $? "build the CLI and both plugins ($build)"
AUTOSYNC=$build/cli/autosync
PLUG=$build/launcher/nccl/.libs
cc -std=gnu11 -O2 -o "$res/allreduce1" "$here/allreduce1.c" -I"$CUDA/include" \
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnccl -lcudart > "$res/cc.log" 2>&1
ok $? "build the one-rank all-reduce program"
[ -x "$AUTOSYNC" ] && [ -x "$res/allreduce1" ] || finish

# --- topology and plan for GPU 0
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
"$AUTOSYNC" topo --nccl-xml "$res/nccl-topo.xml" > "$res/topo.txt" 2>&1
ok $? "autosync topo --nccl-xml (this machine, GPU $CUDA_VISIBLE_DEVICES)"
has "$res/nccl-topo.xml" '<gpu ' ; ok $? "the XML has the GPU"
"$AUTOSYNC" plan --model resnet50 --catalog "$src/planner/catalog" --nodes 1 --gpus-per-node 1 \
  -o "$res/plan.yaml" > "$res/plan.log" 2>&1
ok $? "autosync plan for 1 GPU"

# --- run: autosync launch sets the plan's environment and both plugins;
# NCCL_TOPO_FILE is pinned to the file autosync topo wrote
cat > "$res/tuner-rules.csv" <<CSV
# exercise every path of the tuner on a one-rank communicator
allreduce,0,-1,ring,simple,2,-1,-1
CSV
rm -f "$res/report"
env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH,PROFILE \
  NCCL_TOPO_FILE="$res/nccl-topo.xml" NCCL_TOPO_DUMP_FILE="$res/nccl-topo-dump.xml" \
  AUTOSYNC_TUNER_RULES="$res/tuner-rules.csv" AUTOSYNC_STEP_COLLECTIVES=5 \
  "$AUTOSYNC" launch --plan "$res/plan.yaml" --plugin-dir "$PLUG" --dir "$res/job" --explain -- \
  bash -c 'echo "AUTOSYNC_REPORT=$AUTOSYNC_REPORT NCCL_TUNER_PLUGIN=$NCCL_TUNER_PLUGIN NCCL_PROFILER_PLUGIN=$NCCL_PROFILER_PLUGIN NCCL_TOPO_FILE=$NCCL_TOPO_FILE"; exec "$0"' \
  "$res/allreduce1" > "$res/nccl.log" 2>&1
rc=$?
ok $rc "one-rank all-reduces under autosync launch (exit $rc)"
log=$res/nccl.log
has "$log" '^allreduce1: ok$'; ok $? "the results are right"
has "$log" "NCCL_TOPO_FILE=$res/nccl-topo.xml"; ok $? "launch kept NCCL_TOPO_FILE pointing at autosync's XML"
has "$log" "NCCL_TOPO_FILE set by environment to $res/nccl-topo.xml"; ok $? "NCCL read NCCL_TOPO_FILE"
! has "$log" 'Could not open XML topology file|XML Import|Error parsing XML|topology.*(error|failed)'; ok $? "NCCL reported no error on the topology file"
[ -s "$res/nccl-topo-dump.xml" ] && has "$res/nccl-topo-dump.xml" '<gpu '; ok $? "NCCL dumped the fused topology (NCCL_TOPO_DUMP_FILE)"
has "$log" 'TUNER/Plugin: .*autosync|Successfully loaded external tuner plugin|Using tuner plugin autosync'; ok $? "NCCL loaded the tuner plugin"
has "$log" 'autosync tuner: plan '; ok $? "the tuner's init ran (its INFO line)"
has "$log" 'autosync tuner: allreduce [0-9]+ bytes on 1 ranks'; ok $? "getCollInfo was called for the all-reduces"
has "$log" 'autosync tuner: comm 0x[0-9a-f]+: [1-9][0-9]* collective\(s\) asked'; ok $? "finalize ran and counted the calls"
has "$log" 'PROFILER/Plugin: .*autosync|Successfully loaded external profiler plugin|autosync profiler: reporting'; ok $? "NCCL loaded the profiler plugin"
has "$log" 'autosync profiler: reporting to '; ok $? "the profiler's init ran"
report=$(sed -n 's/^AUTOSYNC_REPORT=\([^ ]*\) .*/\1/p' "$log" | head -1)
cp "$report" "$res/report" 2>/dev/null
[ -s "$res/report" ] && has "$res/report" '^# coll AllReduce '; ok $? "the profiler wrote per-collective lines to AUTOSYNC_REPORT"
has "$res/report" 'timing=(gpu|mixed)'; ok $? "with kernel (GPU) timestamps"
has "$res/report" '^[0-9.e+-]+$'; ok $? "and step times the SPANK plugin reads"
finish
