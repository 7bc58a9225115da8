#!/bin/sh
# autosync init: the files a Kubernetes init container leaves for the app
# container, from the operators' variables, the container's GPUs and the
# pod's annotations (downward-API files); the same plan on every node;
# failing open; the PyTorch adapter reading the env file.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
FIX=${AUTOSYNC_FIXTURES:-$SRCDIR/tests/fixtures/topologies}
LIBS=${AUTOSYNC_BUILDDIR:-.}/launcher/nccl/.libs
TOPO=$FIX/hwloc-juwels-booster-4xA100-4xHDR.xml
unset AUTOSYNC_LIBEXECDIR AUTOSYNC_NCCL_PLUGIN_DIR AUTOSYNC_PODINFO_DIR AUTOSYNC_COMPRESSION
for v in $(env | sed -n 's/^\(\(CUDA\|NVIDIA\)_VISIBLE_DEVICES\|SLURM_[A-Z_]*\|OMPI_COMM_WORLD_[A-Z_]*\|PET_[A-Z_]*\|WORLD_SIZE\|LOCAL_WORLD_SIZE\|RANK\|LOCAL_RANK\|AUTOSYNC_NNODES\|AUTOSYNC_NPROC_PER_NODE\)=.*/\1/p'); do
  unset "$v"
done
CAT=$(cd "$SRCDIR/planner/catalog" && pwd)

cat > "$TMP/site.yaml" <<YAML
version: 2
catalog_dir: $CAT
network:
  nic_bandwidth: 200Gbit/s
  latency: 2us
YAML
pod() { # pod DIR MODEL MODE [FRAMEWORK]: downward-API files as kubelet writes them
  mkdir -p "$1"
  printf '%s' "$2" > "$1/model"; printf '%s' "$3" > "$1/mode"; printf '%s' "${4-}" > "$1/framework"
}
I() { "$AUTOSYNC" init --config "$TMP/site.yaml" --topology "$TOPO" --plugin-dir "$LIBS" "$@"; }
E() { (while [ "${1#*=}" != "$1" ]; do export "$1"; shift; done; I "$@"); } # E VAR=VAL... ARGS

# --- a PyTorchJob pod: 4 nodes of 4 GPUs, the container's GPUs by index --
pod "$TMP/pi" bert-large ""
out=$(E PET_NNODES=4 PET_NPROC_PER_NODE=4 PET_NODE_RANK=1 NVIDIA_VISIBLE_DEVICES=0,1,2,3 \
  --podinfo "$TMP/pi" "$TMP/n1" 2>"$TMP/err"); rc=$?
hash=$(sed -n 's/^planned \([0-9a-f]*\)$/\1/p' "$TMP/n1/status")
like "$hash" '^[0-9a-f]{16}$' "PyTorchJob pod: status 'planned HASH'"
is "$rc $out" "0 autosync init: plan $hash for bert-large, 4 node(s) x 4 GPU(s), in $TMP/n1" "exit 0 and one summary line"
is "$(cat "$TMP/err")" "" "nothing on stderr"
is "$(ls "$TMP/n1" | tr '\n' ' ')" "env lib nccl-topo.xml nccl.conf plan.yaml status " "the files"
is "$(ls "$TMP/n1/lib" | tr '\n' ' ')" "libnccl-profiler-autosync.so libnccl-tuner-autosync.so " "the NCCL plugins copied into the shared volume"
cmp -s "$TMP/n1/lib/libnccl-tuner-autosync.so" "$LIBS/libnccl-tuner-autosync.so"; ok $? "copied byte for byte"
is "$(cat "$TMP/n1/nccl.conf")" "NCCL_TOPO_FILE=$TMP/n1/nccl-topo.xml
NCCL_TUNER_PLUGIN=$TMP/n1/lib/libnccl-tuner-autosync.so
NCCL_PROFILER_PLUGIN=$TMP/n1/lib/libnccl-profiler-autosync.so" \
  "nccl.conf: NCCL's KEY=VALUE lines, pointing into the volume; no per-rank NIC (the pod hosts 4 ranks)"
ngpu() { grep -c 'class="0x0302' "$1/nccl-topo.xml"; }
is "$(ngpu "$TMP/n1")" 4 "the topology file holds the container's 4 GPUs"
got=$(env -i sh -c ". '$TMP/n1/env'; echo \"\$AUTOSYNC_PLAN|\$AUTOSYNC_PLAN_HASH|\$NCCL_TOPO_FILE\"")
is "$got" "$TMP/n1/plan.yaml|$hash|$TMP/n1/nccl-topo.xml" "env: a POSIX shell sources it"
is "$(stat -c %a "$TMP/n1/env") $(stat -c %a "$TMP/n1/status")" "644 644" "files readable by the app container's user"

# --- every node the same plan: node rank, GPU order and UUID-free lists ---
E PET_NNODES=4 PET_NPROC_PER_NODE=4 PET_NODE_RANK=3 NVIDIA_VISIBLE_DEVICES=0,1,2,3 \
  -q --podinfo "$TMP/pi" "$TMP/n3" >/dev/null 2>&1
is "$(cat "$TMP/n3/status")" "planned $hash" "another node rank: the same plan hash"
cmp -s "$TMP/n1/plan.yaml" "$TMP/n3/plan.yaml"; ok $? "and the same plan file, byte for byte"

# --- Trainer v2 / JobSet (PET_* only), MPIJob (OMPI_*), plain env, Slurm ----
pod "$TMP/pi2" resnet50 auto
for case in "PET_NNODES=2 PET_NPROC_PER_NODE=4 PET_NODE_RANK=0|2" \
            "OMPI_COMM_WORLD_SIZE=24 OMPI_COMM_WORLD_LOCAL_SIZE=4 OMPI_COMM_WORLD_RANK=5|6" \
            "WORLD_SIZE=12 LOCAL_WORLD_SIZE=4 RANK=0|3" \
            "SLURM_NNODES=5|5" \
            "AUTOSYNC_NNODES=7 AUTOSYNC_NPROC_PER_NODE=4|7"; do
  vars=${case%|*} want=${case#*|}
  out=$(E $vars --podinfo "$TMP/pi2" "$TMP/v" 2>&1)
  like "$out" "^autosync init: plan [0-9a-f]{16} for resnet50, $want node\\(s\\) x 4 GPU" "nodes from $vars: $want"
done

# --- the container's GPUs: NVIDIA_VISIBLE_DEVICES, with CUDA_VISIBLE_DEVICES in it
E NVIDIA_VISIBLE_DEVICES=all -q --podinfo "$TMP/pi2" "$TMP/g0" 2>/dev/null
E NVIDIA_VISIBLE_DEVICES=1,3 -q --podinfo "$TMP/pi2" "$TMP/g1" 2>/dev/null
E NVIDIA_VISIBLE_DEVICES=1,3 CUDA_VISIBLE_DEVICES=1 -q --podinfo "$TMP/pi2" "$TMP/g2" 2>/dev/null
is "$(ngpu "$TMP/g0") $(ngpu "$TMP/g1") $(ngpu "$TMP/g2")" "4 2 1" "NVIDIA_VISIBLE_DEVICES: all = 4 GPUs, 1,3 = 2; CUDA_VISIBLE_DEVICES=1 within it = 1"
out=$(E NVIDIA_VISIBLE_DEVICES=none --podinfo "$TMP/pi2" "$TMP/g3" 2>&1); rc=$?
is "$rc|$out|$(cat "$TMP/g3/status")" \
  "0|autosync init: topology: NVIDIA_VISIBLE_DEVICES=none: the container has no GPU; the job runs without autosync|fail-open: topology: NVIDIA_VISIBLE_DEVICES=none: the container has no GPU" \
  "NVIDIA_VISIBLE_DEVICES=none: fails open, says why"
out=$(E NVIDIA_VISIBLE_DEVICES=1,3 CUDA_VISIBLE_DEVICES=2 --podinfo "$TMP/pi2" "$TMP/g4" 2>&1)
is "$out" "autosync init: topology: CUDA_VISIBLE_DEVICES: GPU 2, but NVIDIA_VISIBLE_DEVICES=1,3 gives the container 2; the job runs without autosync" \
  "CUDA_VISIBLE_DEVICES beyond the container's GPUs: the reason"

# --- failing open leaves files that change nothing ---------------------------
is "$(cat "$TMP/g3/nccl.conf")|$(cat "$TMP/g3/env")" "|# autosync: no settings" "fail-open: empty nccl.conf, an env file without settings"
pod "$TMP/pi3" no-such-model ""
out=$(I --podinfo "$TMP/pi3" "$TMP/f1" 2>&1); rc=$?
like "$rc|$out" "^0\\|autosync init: model: model 'no-such-model': not in the catalog .*; the job runs without autosync$" "an unknown model: exit 0, one line"
pod "$TMP/pi4" no-such-model required
out=$(I --podinfo "$TMP/pi4" "$TMP/f2" 2>&1); rc=$?
like "$rc|$(cat "$TMP/f2/status")" "^1\\|failed: model: model 'no-such-model'" "mode required (annotation): exit 1, status says failed"
pod "$TMP/pi5" resnet50 sometimes
out=$(I --podinfo "$TMP/pi5" "$TMP/f3" 2>&1); rc=$?
is "$rc|$out" "0|autosync init: $TMP/pi5/mode: unknown mode 'sometimes' (expected auto, off or required); the job runs without autosync" \
  "an unknown mode annotation: named with file and value, fails open"
pod "$TMP/pi6" resnet50 off
out=$(I --podinfo "$TMP/pi6" "$TMP/f4" 2>&1); rc=$?
is "$rc|$out|$(cat "$TMP/f4/status")|$(cat "$TMP/f4/nccl.conf")" "0||off|" "mode off: no plan, no message, status off"
mkdir -p "$TMP/pi7"
out=$(I --podinfo "$TMP/pi7" "$TMP/f5" 2>&1); rc=$?
is "$rc|$out" "0|autosync init: $TMP/pi7/model: no such file; the job runs without autosync" "a missing downward-API file: says which"
out=$(I --podinfo "$TMP/nowhere" "$TMP/f6" 2>&1); rc=$?
is "$rc|$out" "0|autosync init: $TMP/nowhere: No such file or directory; the job runs without autosync" "a missing podinfo directory given explicitly"
out=$(I --podinfo "$TMP/pi7" --model resnet50 -q "$TMP/f7" 2>&1); rc=$?
like "$rc|$out|$(cat "$TMP/f7/status")" "^0\\|\\|planned [0-9a-f]{16}$" "--model overrides the annotation files"
pod "$TMP/pi8" resnet50 "" jax
out=$(I --podinfo "$TMP/pi8" "$TMP/f8" 2>&1)
is "$out" "autosync init: unknown framework 'jax'; the job runs without autosync" "an unknown framework annotation"

# --- files: never through a link --------------------------------------------
mkdir -p "$TMP/l1" && ln -s "$TMP/victim" "$TMP/l1/status"
I -q --podinfo "$TMP/pi2" "$TMP/l1" >/dev/null 2>&1
ok $([ ! -e "$TMP/victim" ] && [ ! -L "$TMP/l1/status" ] && echo 0 || echo 1) "a planted link is replaced, its target never written"

# --- compression: only when the pod allows it --------------------------------
pod "$TMP/pc" vgg16 ""
printf yes > "$TMP/pc/compression"
slow() { "$AUTOSYNC" init --config none --catalog "$CAT" --topology none --network nodes=4,gpus=1,nics=1x1Gbit/s -q "$@"; }
slow --podinfo "$TMP/pi2" --model vgg16 "$TMP/c0" 2>/dev/null
slow --podinfo "$TMP/pc" "$TMP/c1" 2>/dev/null
is "$(grep -h AUTOSYNC_DDP_COMM_HOOK "$TMP/c0/env" "$TMP/c1/env" | tr '\n' ' ')" \
  "export AUTOSYNC_DDP_COMM_HOOK='none' export AUTOSYNC_DDP_COMM_HOOK='powersgd' " \
  "VGG-16 at 1 Gbit/s: no lossy hook unless the compression annotation allows it"

# --- what a sourced env file leaves to the user, and other edges -------------
got=$(env -i NCCL_TOPO_FILE=/opt/mine.xml sh -c ". '$TMP/n1/env'; echo \"\$NCCL_TOPO_FILE|\$AUTOSYNC_PLAN_HASH|\${AUTOSYNC_REPORT-unset}\"")
is "$got" "/opt/mine.xml|$hash|unset" "env: a user's NCCL variable is kept when the file is sourced (autosync's own are set; no report path into the read-only mount)"
(cd "$TMP" && E PET_NNODES=4 NVIDIA_VISIBLE_DEVICES=0,1,2,3 -q --podinfo "$TMP/pi" rel >/dev/null 2>&1)
is "$(grep -c "NCCL_TOPO_FILE=$TMP/rel/nccl-topo.xml" "$TMP/rel/nccl.conf")" 1 "a relative DIR: the files name each other by absolute paths"
out=$(E PET_NNODES=2 AUTOSYNC_NPROC_PER_NODE=2 NVIDIA_VISIBLE_DEVICES=0,1,2,3 --podinfo "$TMP/pi" "$TMP/np2" 2>&1)
like "$out" "2 node\\(s\\) x 2 GPU\\(s\\)" "AUTOSYNC_NPROC_PER_NODE=2 in a pod of 4 GPUs: planned for 2 ranks per node"
pod "$TMP/poff" resnet50 off
mkdir -p "$TMP/ro"; chmod 0555 "$TMP/ro"
if [ "$(id -u)" != 0 ]; then
  out=$(I --podinfo "$TMP/poff" "$TMP/ro/sub" 2>&1); rc=$?
  is "$rc" 0 "mode off and a directory that cannot be made: exit 0 (the pod runs)"
fi
chmod 0755 "$TMP/ro"
pod "$TMP/ppath" /etc/passwd auto
out=$(I --podinfo "$TMP/ppath" "$TMP/pp" 2>&1); rc=$?
is "$rc|$(cat "$TMP/pp/status")" "0|fail-open: $TMP/ppath/model: '/etc/passwd' is not a catalog model name" "a path as the model annotation: refused, never read"
pod "$TMP/pnl" "bert
large" auto
out=$(I --podinfo "$TMP/pnl" "$TMP/nl" 2>&1); rc=$?
is "$rc $(printf '%s\n' "$out" | wc -l)" "0 1" "a model annotation with a newline: one line on stderr"

# --- the PyTorch adapter reads the env file ---------------------------------
PY=/usr/bin/python3
if $PY -c 'import sys' 2>/dev/null; then
  out=$(AUTOSYNC_ENV_FILE="$TMP/n1/env" PYTHONPATH="$SRCDIR/contrib/pytorch" $PY -c '
import os
from autosync.plan import load_plan, settings
p = load_plan()
print(os.environ["AUTOSYNC_PLAN_HASH"], p["strategy"] != "", sorted(settings(p)))' 2>&1)
  like "$out" "^$hash True \\[" "autosync.plan: AUTOSYNC_ENV_FILE gives the plan to a plain DDP script"
  out=$(AUTOSYNC_ENV_FILE="$TMP/g3/env" PYTHONPATH="$SRCDIR/contrib/pytorch" $PY -c '
from autosync.plan import load_plan
print(load_plan())' 2>&1)
  is "$out" "None" "a failed-open env file: no plan, no error"
fi
done_testing
