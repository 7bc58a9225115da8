#!/usr/bin/env bash
# autosync launch under srun in steps that did not ask the SPANK plugin
# for anything (or said --autosync=off): the wrapper alone gives every
# task the plan, the NCCL topology, its local rank's NIC and the NCCL
# plugin variables, exactly as the plugin would.
. "$(dirname "$0")/lib.sh"
diag "running as $IT_USER"
reset_plugin_args

# the NCCL plugins, when the runner installed them beside the CLI
PLUGDIR=${IT_NCCL_PLUGIN_DIR:-$IT_LIB/lib}
if [ -r "$PLUGDIR/libnccl-tuner-autosync.so" ] && [ -r "$PLUGDIR/libnccl-profiler-autosync.so" ]; then
  have_plugins=1; popt="--plugin-dir $PLUGDIR"
else
  have_plugins=0; popt="--no-tuner --no-profiler"
  diag "no NCCL plugins in $PLUGDIR: checking without NCCL_*_PLUGIN"
fi
L="$AUTOSYNC launch --config $IT_SITE $popt"

as_user "$AUTOSYNC" plan --config none --model resnet50 --catalog "$IT_LIB/models" --topology "$IT_LIB/topo.xml" \
  --gpus-per-node 2 --nodes 2 -o "$IT_WORK/plan.yaml" >/dev/null 2>&1
hash=$(sed -n 's/^hash: "\(.*\)"$/\1/p' "$IT_WORK/plan.yaml")
like "$hash" '^[0-9a-f]{16}$' "a plan for 2 nodes x 2 GPUs"

show='echo "$SLURMD_NODENAME $SLURM_LOCALID ${AUTOSYNC_PLAN_HASH-unset} ${NCCL_IB_HCA-unset} $(test -r "$NCCL_TOPO_FILE" && echo topo) $(test -r "$AUTOSYNC_PLAN" && echo plan) ${NCCL_TUNER_PLUGIN##*/} ${NCCL_PROFILER_PLUGIN##*/} ${AUTOSYNC_MODE-nomode}"'

# --- the plugin is not asked: only the wrapper acts ----------------------
out=$(as_user srun -N2 --ntasks-per-node=2 --gpus-per-node=2 bash -c "env | grep -c '^AUTOSYNC_' || true" 2>&1 | sort -u)
is "$out" "0" "a step without --autosync: the plugin injects nothing"

for opt in "" "--autosync=off"; do
  out=$(as_user srun -N2 --ntasks-per-node=2 --gpus-per-node=2 $opt $L --plan "$IT_WORK/plan.yaml" -- bash -c "$show" 2>&1 | sort)
  diag "$out"
  if [ "$have_plugins" = 1 ]; then tail="libnccl-tuner-autosync.so libnccl-profiler-autosync.so"; else tail=""; fi
  want=$(for n in node1 node2; do for r in 0 1; do
    echo "$n $r $hash =mlx5_$r:1 topo plan $tail" | tr -s ' ' | sed 's/ $//'; done; done)
  is "$(sed 's/ nomode$//; s/ off$//' <<<"$out" | tr -s ' ' | sed 's/ $//')" "$want" \
    "srun ${opt:-(no option)} autosync launch --plan: 4 tasks on 2 nodes get the plan, NCCL topology, their local rank's NIC${tail:+ and both NCCL plugins}"
done

# what a step on GPUs 0,1 of the site's topology sees, with the site's
# network section: the same decisions, hence the same hash (the NCCL table
# depends on the links)
as_user "$AUTOSYNC" plan --config "$IT_SITE" --model resnet50 --gpus 0,1 --nodes 2 -o "$IT_WORK/plan-step.yaml" >/dev/null 2>&1
want=$(sed -n 's/^hash: "\(.*\)"$/\1/p' "$IT_WORK/plan-step.yaml")
out=$(as_user srun -N2 --ntasks-per-node=1 --gpus-per-node=2 $L --model resnet50 -- bash -c 'echo $AUTOSYNC_PLAN_HASH' 2>&1 | sort -u)
is "$out" "$want" "--model at start-up: both nodes plan the same as 'autosync plan --config SITE --gpus 0,1' (nodes from SLURM_NNODES)"
as_user "$AUTOSYNC" plan --config none --model resnet50 --catalog "$IT_LIB/models" --topology "$IT_LIB/topo.xml" \
  --gpus 0,1 --nodes 2 --network nics=4x200Gbit/s,lat=2us,nodes_per_switch=16 -o "$IT_WORK/plan-net.yaml" >/dev/null 2>&1
is "$(sed -n 's/^hash: "\(.*\)"$/\1/p' "$IT_WORK/plan-net.yaml")" "$want" "the same as with the site's network given by hand (--config none --network)"

out=$(as_user srun -N1 -n2 --gpus=2 $L --plan "$IT_WORK/plan.yaml" -- bash -c 'dirname "$AUTOSYNC_PLAN"; stat -c "%a %U" "$(dirname "$AUTOSYNC_PLAN")"' 2>&1 | sort -u)
like "$out" "autosync-launch-[0-9]+-[0-9]+\\.[0-9]+-node1-[01]" "one private directory per node and local rank"
like "$out" "^700 $IT_USER$" "owned by the user, mode 0700"

# --- the user's settings survive; a bad plan fails open ------------------
out=$(as_user_env NCCL_IB_HCA==mlx5_3:1 -- srun -N1 -n2 --gpus=2 $L --plan "$IT_WORK/plan.yaml" -- bash -c 'echo "$NCCL_IB_HCA"' 2>&1 | sort -u)
is "$out" "=mlx5_3:1" "the user's NCCL_IB_HCA is kept in every task"
echo "autosync_plan: 1" > "$IT_WORK/bad.yaml"
out=$(as_user srun -N1 -n1 $L --plan "$IT_WORK/bad.yaml" -- bash -c 'echo "task ${AUTOSYNC_PLAN-unset}"' 2>&1)
like "$out" "autosync: plan file: $IT_WORK/bad.yaml:.*; running without autosync" "a bad plan: one-line warning"
like "$out" "task unset" "and the task runs without autosync"

done_testing
