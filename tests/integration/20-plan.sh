#!/usr/bin/env bash
# Planning at job start on every node: what the tasks get, that every node
# agrees, that users' settings survive, feedback, and every failure in
# fail-open and required modes.
. "$(dirname "$0")/lib.sh"
diag "running as $IT_USER"
reset_plugin_args

show='echo "$SLURMD_NODENAME $SLURM_LOCALID ${AUTOSYNC_PLAN_HASH-unset} ${NCCL_IB_HCA-unset} $(test -r "$NCCL_TOPO_FILE" && echo topo) $(test -r "$AUTOSYNC_PLAN" && echo plan)"'

# --- the plan reaches every task ----------------------------------------
out=$(as_user srun -N3 --ntasks-per-node=2 --gpus-per-node=2 --autosync=auto --autosync-model=bert-large bash -c "$show" 2>&1 | sort)
diag "$out"
is "$(awk '{print $1, $2, $4, $5, $6}' <<<"$out")" "node1 0 =mlx5_0:1 topo plan
node1 1 =mlx5_1:1 topo plan
node2 0 =mlx5_0:1 topo plan
node2 1 =mlx5_1:1 topo plan
node3 0 =mlx5_0:1 topo plan
node3 1 =mlx5_1:1 topo plan" "6 tasks on 3 nodes: plan, NCCL topology, and each local rank's nearest NIC"
is "$(awk '{print $3}' <<<"$out" | sort -u | wc -l)" 1 "all three nodes report the same plan hash"
like "$(awk '{print $3; exit}' <<<"$out")" '^[0-9a-f]{16}$' "a 16-digit plan hash"
hash=$(awk '{print $3; exit}' <<<"$out")

out=$(as_user srun -N1 -n4 --gpus=4 --autosync-model=bert-large bash -c 'echo "$SLURM_LOCALID $NCCL_IB_HCA"' 2>&1 | sort)
is "$out" "0 =mlx5_0:1
1 =mlx5_1:1
2 =mlx5_2:1
3 =mlx5_3:1" "4 GPUs on one node: 4 different NICs, as the topology dictates"

# torchrun under srun: one task hosts the node's four GPU ranks, so no rank
# NIC is injected (local rank 0's would be every worker's); each worker's
# own `autosync launch` chooses its NIC
out=$(as_user srun -N1 --ntasks-per-node=1 --gpus-per-node=4 --autosync-model=bert-large bash -c '
  echo "task ${NCCL_IB_HCA-unset} $(test -r "$NCCL_TOPO_FILE" && echo topo) ${AUTOSYNC_PLAN_HASH:+plan}"
  for r in 0 1 2 3; do LOCAL_RANK=$r '"$AUTOSYNC"' launch --config '"$IT_SITE"' --no-tuner --no-profiler --model bert-large -- sh -c "echo worker \$LOCAL_RANK \$NCCL_IB_HCA"; done' 2>&1 | grep -E "^(task|worker)")
is "$out" "task unset topo plan
worker 0 =mlx5_0:1
worker 1 =mlx5_1:1
worker 2 =mlx5_2:1
worker 3 =mlx5_3:1" "1 task for 4 GPUs: no per-rank NIC injected; each worker's autosync launch picks its own (4-GPU/4-NIC node)"

# the plan file is the CLI's plan file
out=$(as_user srun -N1 -n1 --gpus=2 --autosync-model=resnet50 bash -c 'grep -c "^autosync_plan: 2$" "$AUTOSYNC_PLAN"; grep -c "class=\"0x0302" "$NCCL_TOPO_FILE"; stat -c %a "$(dirname "$AUTOSYNC_PLAN")"' 2>&1)
is "$out" "1
2
700" "a versioned plan file, an NCCL XML with the 2 allocated GPUs, a private job directory"
# after the step: its plan and its own feedback record stay for the user
# (keep_job_files, default 1 day); the report goes
out=$(as_user srun -N1 -n1 -w node1 --autosync-model=resnet50 bash -c 'echo 0.125 > "$AUTOSYNC_REPORT"; dirname "$AUTOSYNC_PLAN"' 2>&1)
sleep 0.5
is "$(as_user ls "$out" 2>&1 | paste -sd' ')" "feedback.json nccl-topo.xml plan.yaml" "after the step the job directory keeps the plan, the topology file and the step's own record, not the report"
like "$(as_user cat "$out/feedback.json" 2>&1)" '"strategy": "[^"]+".*"measured_count": 1[,}]' "the user reads the step's strategy and measurement there"
like "$(as_user cat "$out/feedback.json" 2>&1)" '^\{"version": 3, .*"node": "node1", .*"terms": \{"forward_s": [0-9.e-]+, .*"layers": [0-9.]+, "ps_bytes": [0-9.e+]+, "tree_bytes": [0-9.e+]+, "hier_bytes": [0-9.e+]+, "ring_bytes": [0-9.e+]+, "compressed_bytes": [0-9.e+]+\}, "user_influenced": \["measured_step_s", "measured_count", "measured_mean_s"\]\}$' "format 3: the node from Slurm, the simulator's terms from the planning child; a catalog model, so only the measurement (the job's report) is the user's"
jobid=$(basename "$out" | sed -n 's/^autosync-[0-9]*-\([0-9]*\)\..*/\1/p')
like "$(as_user "$AUTOSYNC" feedback --config "$IT_SITE" --job "$jobid" 2>&1)" "^[0-9TZ:-]+ +$jobid\.0 +node1 +resnet50 +1x[0-9]+ +[a-z-]+ +[0-9.]+ +125\.000 " "autosync feedback --job lists the job's own record: strategy, prediction, measurement"
use_site nokeep "keep_job_files: 0"
out=$(as_user srun -N1 -n1 --autosync-model=resnet50 bash -c 'dirname "$AUTOSYNC_PLAN"' 2>&1)
sleep 0.5
check "keep_job_files: 0 removes the job directory at the end of the step" test ! -e "$out"
# a step starting on the node prunes ended steps' directories, never one
# whose step still runs (it holds its directory), however old
rm -f "$IT_WORK/b-ran"
as_user srun -N1 -n1 -w node1 --autosync-model=resnet50 bash -c 'for i in $(seq 50); do [ -e "$0/b-ran" ] && break; sleep 0.1; done; sleep 1.5; echo "$(test -e "$0/b-ran" && echo after-b) $(test -r "$AUTOSYNC_PLAN" && echo kept || echo gone)"' "$IT_WORK" > "$IT_WORK/long-step.out" 2>&1 &
long=$!
sleep 2
as_user srun -N1 -n1 -w node1 --autosync-model=resnet50 bash -c 'touch "$0/b-ran"' "$IT_WORK" >/dev/null 2>&1
wait $long
is "$(grep -E 'kept|gone' "$IT_WORK/long-step.out")" "after-b kept" "keep_job_files: 0: a step starting beside a running one leaves the running step's job directory alone"
reset_plugin_args

# --- autosync plan shows what the plugin does ------------------------------
# A step on 2 nodes x 2 GPUs: node 1's plan file and every task's NCCL_* and
# AUTOSYNC_* variables, against `autosync plan` with the same site config,
# GPUs, nodes and job directory. The plugin's own AUTOSYNC_MODE/MODEL say
# which options the job gave; the pipeline decides everything else.
as_user srun -N2 --ntasks-per-node=2 --gpus-per-node=2 --autosync-model=resnet50 bash -c '
  f=$0/task.$SLURMD_NODENAME.$SLURM_LOCALID
  { echo "$SLURM_LOCALID $(dirname "$AUTOSYNC_PLAN")"; env | grep -E "^(NCCL|AUTOSYNC)_" | grep -Ev "^AUTOSYNC_(MODE|MODEL)=" | LC_ALL=C sort; } > $f
  [ "$SLURMD_NODENAME.$SLURM_LOCALID" = node1.0 ] && cp "$AUTOSYNC_PLAN" $0/plugin-plan.yaml
  true' "$IT_WORK" >/dev/null 2>&1
same=0 n=0
for f in "$IT_WORK"/task.*; do
  read -r rank jd < "$f"
  cli=$(as_user "$AUTOSYNC" plan --config "$IT_SITE" --model resnet50 --gpus 0,1 --nodes 2 \
        --dir "$jd" --env -o "$IT_WORK/cli-plan.yaml" 2>&1 |
        sed -n "s/^local rank $rank: //p; s/^every task: //p" | LC_ALL=C sort)
  [ "$cli" = "$(tail -n +2 "$f")" ] && same=$((same + 1)) || diag "$f: $(diff <(echo "$cli") <(tail -n +2 "$f") | head -5)"
  n=$((n + 1))
done
is "$same/$n" "4/4" "every task's NCCL_* and AUTOSYNC_* variables are what autosync plan --config --env prints"
check "the plugin's plan file and autosync plan -o are byte-identical" cmp -s "$IT_WORK/plugin-plan.yaml" "$IT_WORK/cli-plan.yaml"

# --- steps that name no model: never planned, warned or failed -------------
use_site autostrict "default_mode: auto"
set_plugin_args "config=$IT_LIB/etc/autostrict.yaml" "strict=1"
out=$(as_user srun -N2 -n2 bash -c 'echo "ran ${AUTOSYNC_MODE-unset} ${AUTOSYNC_PLAN-unset}"' 2>&1 | sort -u)
is "$out" "ran auto unset" "default_mode auto + strict=1, no model: the step runs unwarned, with AUTOSYNC_MODE for the adapters"
out=$(as_user srun -n1 --autosync=required bash -c 'echo ran' 2>&1)
like "$out" "autosync: --autosync=required needs a model" "--autosync=required without a model: says why"
unlike "$out" "^ran$" "and the step does not run (the user asked for required)"
reset_plugin_args
out=$(as_user srun -n1 -w node2 --autosync-model=resnet50 bash -c 'd=$(dirname "$AUTOSYNC_PLAN"); echo "$d $(stat -c "%U %a" "$d") $(stat -c "%U %a" "$(dirname "$d")")"' 2>&1)
like "$out" "^/run/autosync/autosync-[0-9]+-[0-9]+\\.0\\.0 $IT_USER 700 root 755$" "job directories: in /run/autosync (root's, 0755), the user's own (0700)"

# --- batch jobs -----------------------------------------------------------
cat > "$IT_WORK/plan.sh" <<JOB
#!/bin/bash
#SBATCH --autosync-model=resnet50
#SBATCH -N 3
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=1
#SBATCH -o $IT_WORK/plan.out
echo "batch \${AUTOSYNC_MODEL-unset} \${AUTOSYNC_PLAN-unset}"
srun bash -c '$show'
JOB
chmod 0755 "$IT_WORK/plan.sh"; [ "$IT_USER" = root ] || chown "$IT_USER" "$IT_WORK/plan.sh"
as_user sbatch --wait "$IT_WORK/plan.sh" >/dev/null 2>&1
out=$(sort "$IT_WORK/plan.out")
is "$(head -1 <<<"$out")" "batch resnet50 unset" "#SBATCH --autosync-model: the batch script itself gets the option, no plan"
is "$(grep ^node <<<"$out" | awk '{print $1, $2, $4, $5, $6}')" "node1 0 =mlx5_0:1 topo plan
node2 0 =mlx5_0:1 topo plan
node3 0 =mlx5_0:1 topo plan" "#SBATCH --autosync-model: the srun step inside is planned on every node"
is "$(grep ^node <<<"$out" | awk '{print $3}' | sort -u | wc -l)" 1 "batch: the same plan hash on every node"

# --- the user's own settings survive ------------------------------------
out=$(as_user_env NCCL_IB_HCA==mlx5_3:1 NCCL_TOPO_FILE=/home/mine.xml AUTOSYNC_DDP_BUCKET_CAP_MB=99 -- \
  srun -N1 -n2 --gpus=2 --autosync-model=resnet50 bash -c 'echo "$NCCL_IB_HCA $NCCL_TOPO_FILE $AUTOSYNC_DDP_BUCKET_CAP_MB"; grep -A3 "^skipped_env" "$AUTOSYNC_PLAN" | tr -d " \n\""; echo' 2>&1 | sort -u)
is "$out" "=mlx5_3:1 /home/mine.xml 99
skipped_env:-NCCL_TOPO_FILE-AUTOSYNC_DDP_BUCKET_CAP_MB-NCCL_IB_HCA" "users' NCCL and framework variables are never overwritten, and the plan records them"

# --- --autosync-explain, --autosync=PATH -------------------------------
out=$(as_user srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large --autosync-explain true 2>&1)
like "$out" "^autosync: plan for bert-large on 3 node\\(s\\) x 2 GPU\\(s\\), framework pytorch-ddp$" "--autosync-explain: the summary on the terminal"
like "$out" "^autosync:   reason: (kept [a-z-]+, the framework.s default|autosync-[a-z-]+: predicted).* margin for " "--autosync-explain prints the reason line, with the margin that applied"
is "$(grep -c '^autosync: plan for' <<<"$out")" 1 "once per step"
like "$(srun --help 2>&1)" "--autosync-explain" "--autosync-explain is in srun --help"

as_user "$AUTOSYNC" plan --config none --model vgg16 --catalog "$IT_LIB/models" --topology "$IT_LIB/topo.xml" --gpus-per-node 2 --nodes 2 -o "$IT_WORK/vgg.yaml" >/dev/null 2>&1
want=$(sed -n 's/^hash: "\(.*\)"$/\1/p' "$IT_WORK/vgg.yaml")
out=$(as_user srun -N2 -n2 --gpus-per-node=2 "--autosync=$IT_WORK/vgg.yaml" bash -c 'echo $AUTOSYNC_PLAN_HASH' 2>&1 | sort -u)
is "$out" "$want" "--autosync=PATH: the given plan is used on every node"
echo "autosync_plan: 1" > "$IT_WORK/bad-plan.yaml"
out=$(as_user srun -N1 -n1 "--autosync=$IT_WORK/bad-plan.yaml" bash -c 'echo "task ${AUTOSYNC_PLAN-unset}"' 2>&1)
like "$out" "^autosync: plan file: $IT_WORK/bad-plan.yaml:.*; running without autosync$" "a bad plan file: one-line warning"
like "$out" "task unset" "and the task runs without a plan"

# --- failures, fail-open and required ------------------------------------
# fail_both NAME EXPECTED-MESSAGE-REGEX SRUN-ARGS...
fail_both() {
  local name=$1 msg=$2; shift 2
  local o
  o=$(as_user srun -N2 -n2 "$@" --autosync=auto bash -c 'echo "ran ${AUTOSYNC_PLAN-unset}"' 2>&1)
  like "$o" "^autosync: $msg; running without autosync$" "$name: one-line warning"
  is "$(grep -c '^ran unset$' <<<"$o")" 2 "$name: the step runs exactly as without autosync"
  is "$(grep -c '^autosync:' <<<"$o")" 1 "$name: warned once"
  o=$(as_user srun -N2 -n2 "$@" --autosync=required bash -c 'echo ran' 2>&1)
  like "$o" "autosync: $msg" "$name, required: the same message"
  unlike "$o" "^ran" "$name, required: the step does not run"
}
fail_both "unknown model" "model: model 'nosuchmodel': not in the catalog .*" --autosync-model=nosuchmodel
fail_both "unreadable model file" "model file /nonexistent/m.yaml: No such file or directory" --autosync-model=/nonexistent/m.yaml
printf 'autosync_model: 1\nname: x\ntensors:\n  - {name: w, shape: [-3], dtype: float32}\n' > "$IT_WORK/bad-model.yaml"; chmod 0644 "$IT_WORK/bad-model.yaml"
fail_both "invalid model file" "model: $IT_WORK/bad-model.yaml:[0-9]+: .*" "--autosync-model=$IT_WORK/bad-model.yaml"
ln -sf /etc/shadow "$IT_WORK/shadow.yaml"
fail_both "a symlink to a root-only file" "model file $IT_WORK/shadow.yaml: is a symbolic link \\(give the file itself\\)" "--autosync-model=$IT_WORK/shadow.yaml"
if [ "$IT_USER" != root ]; then
  install -m 0600 /dev/null "$IT_LIB/secret.yaml"
  fail_both "a root-only model file" "model file $IT_LIB/secret.yaml: Permission denied" "--autosync-model=$IT_LIB/secret.yaml"
fi
use_site threegpus "topology_xml: $IT_LIB/topo3.xml"
fail_both "a GPU the node's topology does not have" "topology: SLURM_STEP_GPUS=0,1,2,3: GPU 3 does not exist \\(this node has 3 GPUs\\)" --autosync-model=resnet50 --gpus-per-node=4

printf '<topology version="3.0">\n' > "$IT_LIB/bad-topo.xml"; chmod 0644 "$IT_LIB/bad-topo.xml"
use_site badtopo "topology_xml: $IT_LIB/bad-topo.xml"
fail_both "no hwloc data" "topology: .*bad-topo.xml.*" --autosync-model=resnet50
# a model of 20,000 tensors plans in far more than 1 ms
awk 'BEGIN { print "autosync_model: 1\nname: wide\nframework: pytorch-ddp\ntensors:"; for (i = 0; i < 20000; i++) printf "  - {name: t%d, shape: [512, 64], dtype: float32}\n", i }' > "$IT_WORK/wide.yaml"
chmod 0644 "$IT_WORK/wide.yaml"
use_site budget "plan_budget_ms: 1"
fail_both "planner over budget" "planning did not finish within the site's budget of 1 ms; stopped" "--autosync-model=$IT_WORK/wide.yaml"
full=$IT_LIB/full
mkdir -p "$full"
if mountpoint -q "$full" || mount -t tmpfs -o size=64k,mode=1777 tmpfs "$full" 2>/dev/null; then
  head -c 1M /dev/zero > "$full/fill" 2>/dev/null
  use_site full "runtime_dir: $full"
  # a shared (1777) runtime_dir: the job directory's name is random
  fail_both "full disk" "$full/autosync-[0-9]+-[0-9.]+\\.[A-Za-z0-9]{8}/plan.yaml: disk full" --autosync-model=bert-large
  umount "$full" 2>/dev/null
else
  ok 0 "# SKIP full disk: cannot mount a tmpfs here"
fi
use_site modes "allowed_modes: [off, auto]"
out=$(as_user srun -N1 -n1 --autosync=required --autosync-model=resnet50 bash -c 'echo "ran ${AUTOSYNC_PLAN-unset}"' 2>&1 | sort)
is "$out" "autosync: --autosync=required is not allowed on this cluster; running without autosync
ran unset" "a mode the site does not allow: warned, the job runs without autosync"
use_site partitions "default_mode: off
partitions:
  debug: auto"
out=$(as_user srun -N1 -n1 bash -c 'echo "${AUTOSYNC_MODE-unset}"' 2>/dev/null)
is "$out" "auto" "a partition whose default is auto: autosync on without any option"
reset_plugin_args

# --- feedback: 50 steps at once, every record whole ------------------------
burst() {
  before=$(wc -l < "$FEEDBACK" 2>/dev/null || echo 0)
  since=$(date +%s)
  rm -f "$IT_WORK"/j*.out
  local pids=() i p alive
  for i in $(seq 50); do
    as_user timeout 300 srun -N3 -n3 --autosync-model=resnet50 bash -c 'printf "0.25\n0.5\n" > "$AUTOSYNC_REPORT"; echo "$SLURM_JOB_ID"' >"$IT_WORK/j$i.out" 2>&1 &
    pids+=($!)
  done
  # a slurmd that dies mid-burst leaves the sruns of its steps waiting
  # forever (the node is not marked down for minutes): cancel the burst
  # then, so that the caller can revive the daemon and run it again
  while :; do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    if [ "$(slurmds)" -lt "$n0" ]; then
      scancel -u "$IT_USER" >/dev/null 2>&1
      sleep 5
    fi
    sleep 1
  done
  wait
}
slurmds() {   # the node daemons alive, by their PID files
  local n=0 f
  for f in /run/slurmd-node*.pid; do
    [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && n=$((n + 1))
  done
  echo "$n"
}
n0=$(slurmds)
burst
# Slurm 22.05's multiple-slurmd setup has lost a slurmd under this burst
# (heap corruption in slurmd's own threads, slurm_hostlist_create_dims; no
# autosync code runs in slurmd): then revive it, say so, and run the burst
# once more, which must be whole
if [ "$(slurmds)" -lt "$n0" ]; then
  diag "a slurmd died during the burst (see /var/log/slurm/core); revived; once more"
  AUTOSYNC_TEST_PLUGIN=$(awk '{print $2; exit}' "$IT_DROPIN") AUTOSYNC_TEST_ARGS="config=$IT_SITE" \
    "$(dirname "$0")/../slurm/start-cluster.sh" >/dev/null 2>&1
  for n in $(sinfo -h -N -o '%N %T' | awk '$2 !~ /^(idle|mixed|allocated)$/ {print $1}'); do
    scontrol update nodename="$n" state=resume >/dev/null 2>&1
  done
  sleep 2
  burst
fi
jobs=$(cat "$IT_WORK"/j*.out | grep -E '^[0-9]+$' | sort -u)
is "$(wc -l <<<"$jobs")" 50 "50 steps ran"
sleep 1
recs=$(tail -n +"$((before + 1))" "$FEEDBACK" | python3 -c '
import json, sys
jobs = set(int(j) for j in sys.argv[1].split())
n = bad = 0
for line in sys.stdin:
    try:
        r = json.loads(line)
    except ValueError:
        bad += 1
        continue
    if r["job"] in jobs and r["measured_count"] == 2 and abs(r["measured_mean_s"] - 0.375) < 1e-9 and r["model"] == "resnet50" and r["nodes"] == 3:
        n += 1
print(n, bad)' "$jobs")
is "$recs" "150 0" "exactly 50 x 3 well-formed records, with the jobs' measured step times"
out=$("$AUTOSYNC" feedback --file "$FEEDBACK" --model resnet50 --since "$since" --summary 2>&1)
like "$out" "^resnet50 +150 +150 +[0-9.]+ +375.000 " "autosync feedback (the admin's view: the log is 0640) summarises those 150: mean measured 375 ms"

# --- lossy compression: only when the job allows it, and the site does not forbid it
use_site slownet "network:
  nic_bandwidth: 1Gbit/s
  latency: 50us"
hook='echo "${AUTOSYNC_DDP_COMM_HOOK-none} ${AUTOSYNC_COMPRESSION-unset}"'
out=$(as_user srun -N2 -n2 --gpus-per-node=1 --autosync-model=vgg16 bash -c "$hook" 2>&1 | sort -u)
is "$out" "none unset" "VGG-16 at 1 Gbit/s without --autosync-compression: no lossy hook"
out=$(as_user srun -N2 -n2 --gpus-per-node=1 --autosync-model=vgg16 --autosync-compression bash -c "$hook" 2>&1 | sort -u)
is "$out" "powersgd yes" "with --autosync-compression: PowerSGD, and the tasks see that the job allowed it"
out=$(as_user_env AUTOSYNC_COMPRESSION=yes -- srun -N2 -n2 --gpus-per-node=1 --autosync-model=vgg16 bash -c "$hook" 2>&1 | sort -u)
is "$out" "powersgd yes" "AUTOSYNC_COMPRESSION=yes in the environment does the same"
out=$(as_user srun -n1 --autosync-model=vgg16 --autosync-compression=maybe true 2>&1)
like "$out" "autosync: invalid --autosync-compression value 'maybe' \\(expected yes or no\\)" "a bad --autosync-compression value is refused, with the reason"
use_site nocompress "network:
  nic_bandwidth: 1Gbit/s
  latency: 50us
allow_compression: false"
out=$(as_user srun -N2 -n2 --gpus-per-node=1 --autosync-model=vgg16 --autosync-compression bash -c "$hook" 2>&1 | sort -u)
is "$out" "none yes" "allow_compression: false: the job's request is planned without compression"
out=$(as_user "$AUTOSYNC" plan --config "$IT_LIB/etc/nocompress.yaml" --model vgg16 --nodes 2 --gpus 0 --allow-compression 2>&1 >/dev/null)
like "$out" "compression: not allowed on this cluster \\(allow_compression: false\\); planning without" "autosync plan says why, from the same site config"
reset_plugin_args

# --- the nodes agree on one plan through srun, or none applies one ---------
# 3 GPUs over 2 nodes (2 + 1): each node plans for its own GPUs, so the two
# plans differ. srun gathers the nodes' plan hashes before the tasks start
# and every node hears the same verdict: no task gets a plan.
show='echo "${AUTOSYNC_PLAN-unset} ${AUTOSYNC_DDP_BUCKET_CAP_MB-unset} ${NCCL_IB_HCA-unset} ${AUTOSYNC_AGREE-unset}"'
out=$(as_user srun -N2 -n3 --gpus-per-task=1 --autosync-model=resnet50 bash -c "$show" 2>&1 | sort)
is "$(grep -v ^autosync: <<<"$out")" "unset unset unset unset
unset unset unset unset
unset unset unset unset" "nodes with different plans: every task runs without a plan (and never sees srun's gathering)"
like "$(grep ^autosync: <<<"$out")" "^autosync: nodes 0 and 1 of this step made different plans \([0-9a-f]{16}, [0-9a-f]{16}\); every node runs without autosync$" \
  "one warning, naming the two nodes and their plans"
out=$(as_user srun -N2 -n3 --gpus-per-task=1 --autosync=required --autosync-model=resnet50 bash -c 'echo ran' 2>&1)
unlike "$out" "^ran" "--autosync=required: the tasks do not start"
like "$out" "made different plans" "and say why"
out=$(as_user srun -v -N2 -n4 --gpus-per-node=2 --autosync-model=resnet50 bash -c 'echo "task $AUTOSYNC_PLAN_HASH"' 2>&1)
hash=$(sed -n 's/^task //p' <<<"$out" | sort -u)
like "$hash" "^[0-9a-f]{16}$" "nodes with the same plan: every task has it"
like "$out" "srun: autosync: the nodes' plans: same $hash" "srun -v says the nodes agreed, on that plan"
like "$(grep -h "job [0-9]* step [0-9]* node node[0-9]: plan $hash" /var/log/slurm/slurmd-node*.log | tail -1)" \
  ", the nodes agreed in [0-9.]+ ms$" "slurmd's log says how long the agreement took"
# a site whose firewall opens only a port range to the nodes names it
set_plugin_args "config=$IT_SITE" "agree_ports=61000-61009"
out=$(as_user srun -v -N2 -n4 --gpus-per-node=2 --autosync-model=resnet50 bash -c 'echo "task $AUTOSYNC_PLAN_HASH"' 2>&1)
like "$out" "srun: autosync: gathering the 2 nodes' plan hashes on port 6100[0-9]" "agree_ports: srun listens in the range (srun -v says where)"
like "$out" "srun: autosync: the nodes' plans: same [0-9a-f]{16}" "and the nodes agree through it"
# an admin can turn the check off: then each node applies its own plan
set_plugin_args "config=$IT_SITE" "agree=no"
out=$(as_user srun -N2 -n3 --gpus-per-task=1 --autosync-model=resnet50 bash -c 'echo "$AUTOSYNC_PLAN_HASH"' 2>&1 | sort -u | wc -l)
is "$out" 2 "agree=no: the nodes apply their own, different plans (the check is what prevents that)"
reset_plugin_args

is "$(sinfo -h -N -o '%T' | grep -Ecv '^(idle|mixed|allocated)$')" 0 "no node drained or down"
done_testing
