#!/usr/bin/env bash
# nccl-check.sh [RESULTS_DIR] - on a machine with an NVIDIA GPU: build the
# CLI and both NCCL plugins (no sanitizers), write NCCL_TOPO_FILE with
# `autosync topo --nccl-xml`, plan gpt2 for two nodes of one GPU, and run a
# two-rank NCCL program (coll2.c) under `autosync launch` with
# NCCL_DEBUG=INFO. NCCL runs one-rank collectives as plain copies without
# asking the tuner, and refuses two ranks on one GPU of one host, so each
# rank gets its own NCCL_HOSTID: two "nodes" on one GPU, joined by NCCL's
# socket transport over loopback. Checks from NCCL's log and the profiler's
# report that the topology file was accepted, that both plugins were loaded
# and called, that the tuner applied the plan's nccl table
# (check_table.py), and that NCCL then ran the algorithm and protocol the
# tuner chose. TAP on stdout; logs, plan, topology, NCCL's topology dump and
# the reports are kept in RESULTS_DIR (default tests/gpu/results/<date>).
# Exit 0 when all pass.
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
cc -std=gnu11 -O2 -o "$res/coll2" "$here/coll2.c" -I"$CUDA/include" \
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnccl -lcudart > "$res/cc.log" 2>&1
ok $? "build the two-rank collectives program"
[ -x "$AUTOSYNC" ] && [ -x "$res/coll2" ] || finish

# --- topology of GPU 0, and a plan for 2 nodes x 1 GPU (what NCCL will see)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
"$AUTOSYNC" topo --nccl-xml "$res/nccl-topo.xml" > "$res/topo.txt" 2>&1
ok $? "autosync topo --nccl-xml (this machine, GPU $CUDA_VISIBLE_DEVICES)"
has "$res/nccl-topo.xml" '<gpu ' ; ok $? "the XML has the GPU"
# a plan that changes DDP's settings: one that keeps the default carries
# no table (nccl: []), NCCL left alone; gpt2 on 2 nodes of one GPU at
# 100 Gbit/s gets a bucket cap beyond its margin
"$AUTOSYNC" plan --model gpt2 --catalog "$src/planner/catalog" \
  --network nodes=2,gpus=1,nics=1x100Gbit/s,lat=20us \
  --explain -o "$res/plan.yaml" > "$res/plan.log" 2>&1
ok $? "autosync plan for 2 nodes x 1 GPU"
has "$res/plan.yaml" '^- \{coll: allreduce'; ok $? "the plan has an nccl table (not nccl: [])"

# --- run both ranks: autosync launch sets the plan's environment and both
# plugins; NCCL_TOPO_FILE is pinned to the file autosync topo wrote
rm -f "$res/ncclid" "$res"/report.*
pids=()
for r in 0 1; do
  dump=; [ "$r" = 0 ] && dump="NCCL_TOPO_DUMP_FILE=$res/nccl-topo-dump.xml"
  env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,GRAPH,PROFILE,NET \
    NCCL_HOSTID="autosync-gpu-check-$r" NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo \
    NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 \
    NCCL_TOPO_FILE="$res/nccl-topo.xml" $dump \
    AUTOSYNC_TUNER_LOG=1000 AUTOSYNC_STEP_COLLECTIVES=5 \
    "$AUTOSYNC" launch --plan "$res/plan.yaml" --plugin-dir "$PLUG" --dir "$res/job$r" \
      --nodes 2 --local-rank 0 --explain -- \
    bash -c 'echo "AUTOSYNC_REPORT=$AUTOSYNC_REPORT NCCL_TUNER_PLUGIN=$NCCL_TUNER_PLUGIN NCCL_PROFILER_PLUGIN=$NCCL_PROFILER_PLUGIN NCCL_TOPO_FILE=$NCCL_TOPO_FILE"; exec timeout 240 "$0" "$@"' \
    "$res/coll2" "$r" "$res/ncclid" > "$res/nccl$r.log" 2>&1 &
  pids+=($!)
done
rc0=0 rc1=0
wait "${pids[0]}" || rc0=$?
wait "${pids[1]}" || rc1=$?
ok $((rc0 + rc1)) "two ranks of collectives under autosync launch (exit $rc0, $rc1)"
log=$res/nccl0.log
has "$log" '^coll2: rank 0 ok$' && has "$res/nccl1.log" '^coll2: rank 1 ok$'; ok $? "the results are right on both ranks"
has "$log" "NCCL_TOPO_FILE=$res/nccl-topo.xml"; ok $? "launch kept NCCL_TOPO_FILE pointing at autosync's XML"
has "$log" "NCCL_TOPO_FILE set by environment to $res/nccl-topo.xml"; ok $? "NCCL read NCCL_TOPO_FILE"
! has "$log" 'Could not open XML topology file|XML Import|Error parsing XML|topology.*(error|failed)'; ok $? "NCCL reported no error on the topology file"
[ -s "$res/nccl-topo-dump.xml" ] && has "$res/nccl-topo-dump.xml" '<gpu '; ok $? "NCCL dumped the fused topology (NCCL_TOPO_DUMP_FILE)"
has "$log" 'TUNER/Plugin: .*autosync|Successfully loaded external tuner plugin|Using tuner plugin autosync'; ok $? "NCCL loaded the tuner plugin"
has "$log" 'autosync tuner: plan .* [1-9][0-9]* rule\(s\) from the plan'; ok $? "the tuner's init ran and read the plan's table"
has "$log" 'autosync tuner: allreduce [0-9]+ bytes on 2 ranks: [a-z0-9_]+/[a-z0-9]+.* \(plan rule \['; ok $? "getCollInfo applied plan rules to the all-reduces"
python3 "$here/check_table.py" decisions "$res/plan.yaml" "$log" 2 > "$res/check-decisions.txt" 2>&1
ok $? "every decision is the plan's rule for that size: algorithm, protocol, channels ($(tail -1 "$res/check-decisions.txt"))"
has "$log" 'autosync tuner: comm 0x[0-9a-f]+: [1-9][0-9]* collective\(s\) asked, [1-9][0-9]* steered'; ok $? "finalize ran and counted the calls"
has "$log" 'PROFILER/Plugin: .*autosync|Successfully loaded external profiler plugin|autosync profiler: reporting'; ok $? "NCCL loaded the profiler plugin"
has "$log" 'autosync profiler: reporting to '; ok $? "the profiler's init ran"
report=$(sed -n 's/^AUTOSYNC_REPORT=\([^ ]*\) .*/\1/p' "$log" | head -1)
cp "$report" "$res/report.0" 2>/dev/null
[ -s "$res/report.0" ] && has "$res/report.0" '^# coll AllReduce '; ok $? "the profiler wrote per-collective lines to AUTOSYNC_REPORT"
has "$res/report.0" 'timing=(gpu|mixed)'; ok $? "with kernel (GPU) timestamps"
has "$res/report.0" '^[0-9.e+-]+$'; ok $? "and step times the SPANK plugin reads"
python3 "$here/check_table.py" report "$log" "$res/report.0" 2 > "$res/check-report.txt" 2>&1
ok $? "NCCL ran the algorithm and protocol the tuner chose, on no more channels (check-report.txt)"
finish
