#!/usr/bin/env bash
# A learned simulator on the real test cluster: the site config's
# 'simulator' is applied by the plugin's planning child (the same plan,
# byte for byte, as autosync plan with that site config), every node
# records the same simulator hash, neither slurmstepd nor srun maps XGBoost,
# the feedback record keeps the analytic prediction beside the learned
# one, and a corrupt file is a node-log warning and the analytic plan.
. "$(dirname "$0")/lib.sh"
SLICE=$(dirname "$0")/../fixtures/feedback-lab-slice.jsonl
SIM=$IT_LIB/simulator.bin

# the site trains it (root's file, readable by the job's user)
"$AUTOSYNC" train -o "$SIM.new" "$SLICE" >/dev/null 2>&1 && chmod 0644 "$SIM.new" && mv "$SIM.new" "$SIM"
check "autosync train on the committed slice writes the site's simulator" test -s "$SIM"
head -c 3000 "$SIM" > "$IT_LIB/simulator-cut.bin"; chmod 0644 "$IT_LIB/simulator-cut.bin"

step() { # FILE: node1's plan file, then every task's "node hash"
  as_user srun -N2 --ntasks-per-node=1 --gpus-per-node=2 --autosync-model=bert-large bash -c '
    [ "$SLURMD_NODENAME" = node1 ] && cp "$AUTOSYNC_PLAN" "$0"
    x=$(grep -c xgboost /proc/$PPID/maps 2>/dev/null); [ -n "$x" ] || x=unreadable
    echo "$SLURMD_NODENAME $AUTOSYNC_PLAN_HASH $x"' "$1" 2>&1 | sort
}
field() { sed -n "s/^ *$1: \"*\([^\"]*\)\"*\$/\1/p" "$2" | head -1; }

# --- the site's simulator ------------------------------------------------
use_site simulator "simulator: $SIM"
before=$(wc -l < "$FEEDBACK" 2>/dev/null || echo 0)
out=$(step "$IT_WORK/plugin-sim.yaml")
h=$(field simulator_hash "$IT_WORK/plugin-sim.yaml")
like "$h" "^[0-9a-f]{16}$" "the plugin's plan records the site simulator's hash ($h)"
is "$(awk '{print $2}' <<<"$out" | sort -u | wc -l)" 1 "both nodes: the same plan hash"
as_user "$AUTOSYNC" plan --config "$IT_LIB/etc/simulator.yaml" --model bert-large --gpus 0,1 --nodes 2 \
  -o "$IT_WORK/cli-sim.yaml" >/dev/null 2>&1
is "$(field hash "$IT_WORK/cli-sim.yaml")/$(field simulator_hash "$IT_WORK/cli-sim.yaml")" \
  "$(field hash "$IT_WORK/plugin-sim.yaml")/$h" "autosync plan --config with the same site config: the same plan and simulator hashes"
check "... and the same plan file, byte for byte" cmp -s "$IT_WORK/cli-sim.yaml" "$IT_WORK/plugin-sim.yaml"
if [ "$IT_USER" = root ]; then
  is "$(awk '{print $3}' <<<"$out" | sort -u)" "0" "slurmstepd never maps XGBoost (only the planning child loads it)"
else
  ok 0 "slurmstepd's maps are root's: checked in the root run # SKIP as $IT_USER"
fi
# the record: the analytic prediction stays 'predicted_step_s'
sleep 1
rec=$(tail -n +"$((before + 1))" "$FEEDBACK" 2>/dev/null | grep '"bert-large"' | tail -1)
like "$rec" "\"simulator_hash\": ?\"$h\"" "the feedback record names the simulator"
a=$(field analytic_step_time "$IT_WORK/plugin-sim.yaml") l=$(field step_time "$IT_WORK/plugin-sim.yaml")
printf '%s\n' "$rec" > "$IT_WORK/rec.json"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
a, l = float(sys.argv[2]), float(sys.argv[3])
assert abs(r["predicted_step_s"] - a) <= 1e-6 * a and abs(r["learned_step_s"] - l) <= 1e-6 * l
' "$IT_WORK/rec.json" "$a" "$l" 2>/dev/null
ok $? "... with the analytic prediction as predicted_step_s and the corrected one as learned_step_s"

# srun itself (the plugin's local context, in the user's process) never
# maps it either: read from here (root) while a step runs
as_user srun -N1 --gpus-per-node=1 --autosync-model=bert-large sleep 5 >/dev/null 2>&1 &
bg=$! maps=
for _ in $(seq 50); do
  pid=$(pgrep -n -x srun)
  if [ -n "$pid" ] && grep -q spank_autosync "/proc/$pid/maps" 2>/dev/null; then
    maps=$(cat "/proc/$pid/maps" 2>/dev/null); break
  fi
  sleep 0.1
done
wait "$bg"
like "$maps" "spank_autosync" "srun has the plugin loaded while its step runs"
is "$(grep -c -E 'xgboost|libgomp|libstdc\+\+' <<<"$maps")" 0 "... and maps neither XGBoost nor its OpenMP and C++ runtimes"

# --- fail-open -------------------------------------------------------------
use_site simcut "simulator: $IT_LIB/simulator-cut.bin"
out=$(step "$IT_WORK/plugin-cut.yaml")
is "$(awk '{print $1}' <<<"$out" | tr '\n' ' ')" "node1 node2 " "a corrupt simulator file: the step runs on both nodes"
is "$(awk '{print $2}' <<<"$out" | sort -u | wc -l)" 1 "... with the same plan on both"
is "$(field simulator_hash "$IT_WORK/plugin-cut.yaml")" "" "... planned with the analytic model"
reset_plugin_args
step "$IT_WORK/plugin-none.yaml" >/dev/null
is "$(field hash "$IT_WORK/plugin-cut.yaml")" "$(field hash "$IT_WORK/plugin-none.yaml")" \
  "... the plan a site without a simulator gets"
like "$(grep -h "simulator: $IT_LIB/simulator-cut.bin: .*; planning with the analytic model" /var/log/slurm/slurmd-node1.log | tail -1)" \
  "autosync: job [0-9]+ step [0-9]+ node node1: simulator: " "... and the node's log says why, once per step"
done_testing
