#!/bin/sh
# autosync config check --node: the shipped example against fixture
# topologies standing in for the node (-T), and against this machine.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
FIX=${AUTOSYNC_FIXTURES:-$SRCDIR/tests/fixtures/topologies}
CAT=$SRCDIR/planner/catalog
JUWELS=$FIX/hwloc-juwels-booster-4xA100-4xHDR.xml
P4D=$FIX/nccl-aws-p4d-8xA100-4xEFA.xml
unset CUDA_VISIBLE_DEVICES SLURM_STEP_GPUS SLURM_JOB_GPUS AUTOSYNC_CATALOG_DIR
export TMPDIR=$TMP
mkdir -p "$TMP/log"

ex=$SRCDIR/etc/autosync.yaml.example
grep -Eq '^[^#]*fabric_nics:' "$ex"; is "$?" 1 "the example names no site's NICs (fabric_nics commented out)"
# the example as installed, with this tree's catalog and a log directory
site() { sed -e "s|^catalog_dir: .*|catalog_dir: $CAT|" -e "s|^  path: .*|  path: $TMP/log/feedback.jsonl|" "$ex"; }
site > "$TMP/site.yaml"
# the hash a job gets: what 'autosync plan' makes with the same inputs
hash() { "$AUTOSYNC" plan -c "$1" -T "$2" -g all -N 1 -m "${3:-resnet50}" 2>&1 | sed -n 's/.*plan hash \([0-9a-f]*\)$/\1/p'; }

nmodels=$("$AUTOSYNC" plan --list --config none --catalog "$CAT" | wc -l)
h=$(hash "$TMP/site.yaml" "$JUWELS")
like "$h" "^[0-9a-f]{16}$" "autosync plan gives the hash to expect"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/site.yaml" 2>&1); rc=$?
is "$rc:$out" "0:$TMP/site.yaml: valid
topology: $JUWELS: 4 GPUs; NICs: mlx5_0, mlx5_1, mlx5_2, mlx5_3 (fast); enp225s0f0, enp225s0f1 (slow)
network.fabric_nics: not set: the fast NICs above carry the job's traffic
catalog_dir: $CAT: $nmodels models
calibration: not set: the built-in cost constants
topology_xml: not set: the node's own topology (hwloc)
feedback.path: $TMP/log/feedback.jsonl: in an existing directory
off: the job runs as without autosync
auto: resnet50 on this node -> plan $h (4 GPUs, 4 NICs, ib)
required: resnet50 on this node -> plan $h (4 GPUs, 4 NICs, ib)
plan: that plan, as a user's plan file -> plan $h (4 GPUs, 4 NICs, ib)" "the example on a 4 GPU, 4 HDR node: every check and mode"
ls "$TMP" | grep -q autosync-check; is "$?" 1 "  the job directories it made are removed"

h=$(hash "$TMP/site.yaml" "$P4D" bert-large)
out=$("$AUTOSYNC" config check --node -T "$P4D" -m bert-large "$TMP/site.yaml" 2>/dev/null | tail -3); rc=$?
is "$out" "auto: bert-large on this node -> plan $h (8 GPUs, 4 NICs)
required: bert-large on this node -> plan $h (8 GPUs, 4 NICs)
plan: that plan, as a user's plan file -> plan $h (8 GPUs, 4 NICs)" "an NCCL topology (8 GPUs, 4 EFA), --model"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" -g 0,1 "$TMP/site.yaml" 2>/dev/null | grep '^auto'); rc=$?
like "$out" "^auto: resnet50 on this node -> plan [0-9a-f]{16} \(2 GPUs, 2 NICs, ib\)$" "--gpus: a job given two of the GPUs"

# the site's word on the transport wins over the NICs'
site | sed 's|^  # transport: ib .*|  transport: roce|' > "$TMP/roce.yaml"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/roce.yaml" 2>/dev/null | grep '^auto'); rc=$?
like "$out" "^auto: resnet50 on this node -> plan [0-9a-f]{16} \(4 GPUs, 4 NICs, roce\)$" "network.transport: roce, whatever the HCAs suggest"

# the NIC names of another site: one missing, then none on this node
site | sed 's|^  #fabric_nics: .*|  fabric_nics: [mlx5_0, mlx5_7]|' > "$TMP/one.yaml"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/one.yaml" 2>&1); rc=$?
is "$rc" 1 "a fabric NIC that is not on the node: exit 1"
like "$out" "^network.fabric_nics: on this node: mlx5_0$" "  the one that is, on stdout"
like "$out" "^$TMP/one.yaml: network.fabric_nics: mlx5_7 is not on this node$" "  the one that is not, as a problem"
like "$out" "^auto: resnet50 on this node -> plan [0-9a-f]{16} \(4 GPUs, 1 NIC, ib\)$" "  jobs use the one there is"

site | sed 's|^  #fabric_nics: .*|  fabric_nics: [mlx5_6, mlx5_7]|' > "$TMP/none.yaml"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/none.yaml" 2>&1); rc=$?
is "$rc:$out" "1:$TMP/none.yaml: valid
topology: $JUWELS: 4 GPUs; NICs: mlx5_0, mlx5_1, mlx5_2, mlx5_3 (fast); enp225s0f0, enp225s0f1 (slow)
$TMP/none.yaml: network.fabric_nics: mlx5_6 is not on this node
$TMP/none.yaml: network.fabric_nics: mlx5_7 is not on this node
catalog_dir: $CAT: $nmodels models
calibration: not set: the built-in cost constants
topology_xml: not set: the node's own topology (hwloc)
feedback.path: $TMP/log/feedback.jsonl: in an existing directory
off: the job runs as without autosync
auto: fails open: topology: $JUWELS: none of the fabric NICs (mlx5_6, mlx5_7) is on this node
required: the step fails: topology: $JUWELS: none of the fabric NICs (mlx5_6, mlx5_7) is on this node
plan: not checked: auto made no plan to apply" "no fabric NIC on the node: every mode says what happens"

# modes the site does not allow get no line; files that are not there
site | sed -e 's|^allowed_modes: .*|allowed_modes: [off, auto]|' \
	-e "s|^#calibration: .*|calibration: $TMP/calib.yaml|" \
	-e "s|^  path: .*|  path: $TMP/nolog/feedback.jsonl|" > "$TMP/two.yaml"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/two.yaml" 2>&1); rc=$?
like "$out" "^$TMP/two.yaml: calibration: $TMP/calib.yaml: No such file or directory$" "a calibration file that is not there"
like "$out" "^$TMP/two.yaml: feedback.path: $TMP/nolog: no such directory$" "a feedback log without its directory"
is "$rc:$(echo "$out" | grep -Ec '^(off|auto|required|plan): ')" "1:2" "  allowed_modes [off, auto]: two mode lines"
like "$(echo "$out" | tail -1)" "^auto: fails open: .*calib.yaml" "  and auto fails open on the missing calibration"

# a learned simulator that does not load: said twice, the file and what the
# pipeline did without it (the plugin plans with the analytic model)
{ site; echo "simulator: $TMP/sim.json"; echo "simulator_module: $TMP/none.so"; } > "$TMP/sim.yaml"
printf '{"learner": ' > "$TMP/sim.json"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/sim.yaml" 2>&1); rc=$?
like "$out" "^simulator: $TMP/sim.json: readable$" "simulator: the file is named"
like "$out" "^$TMP/sim.yaml: simulator_module: $TMP/none.so: No such file or directory$" "a simulator module that is not there"
like "$out" "^$TMP/sim.yaml: simulator: $TMP/sim.json: module $TMP/none.so: cannot open shared object file: No such file or directory; planning with the analytic model$" \
  "  and the pipeline's warning"
like "$rc:$(echo "$out" | grep '^auto: ')" "^1:auto: resnet50 on this node -> plan [0-9a-f]{16} " "  auto still plans (fails open to the analytic model)"

out=$("$AUTOSYNC" config check -T "$JUWELS" "$TMP/site.yaml" 2>&1); rc=$?
is "$rc:$out" "2:autosync config: --topology, --gpus and --model need --node
Try 'autosync help config'." "-T without --node: a usage error"
out=$("$AUTOSYNC" config check --node -T "$JUWELS" "$TMP/nothere.yaml" 2>&1); rc=$?
is "$rc:$out" "1:autosync: $TMP/nothere.yaml: cannot open: No such file or directory" "--node with a missing file"

# this machine, as it is
out=$("$AUTOSYNC" config check --node "$TMP/site.yaml" 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
is "$rc" 0 "live: the example is fine on this machine"
like "$(echo "$out" | grep '^topology')" "^topology: live \(this node\): [0-9]+ GPUs?; NICs: " "live: the node's GPUs and NICs"
like "$(echo "$out" | tail -3 | head -1)" "^auto: resnet50 on this node -> plan [0-9a-f]{16} \([0-9]+ GPUs?, [0-9]+ NICs?(, (tcp|ib|roce))?\)$" "live: what auto gets here"
done_testing
