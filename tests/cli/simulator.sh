#!/bin/sh
# A learned simulator at planning time: autosync train writes held-out
# no-harm margins into the file; autosync plan --simulator (or the site's
# 'simulator') re-ranks the search's best candidates with it, records the
# file's hash in the plan, and plans with the analytic model alone, with a
# one-line warning, when the file or the module cannot be loaded.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
SLICE=$SRCDIR/tests/fixtures/feedback-lab-slice.jsonl
# the build's module (an installed autosync finds its own)
AUTOSYNC_SIMULATOR_MODULE=${AUTOSYNC_SIMULATOR_MODULE:-${AUTOSYNC_BUILDDIR:-.}/learn/.libs/autosync-simulator.so}
export AUTOSYNC_SIMULATOR_MODULE
NET="nodes=4,gpus=2,intra=host_bridge:2.5GB/s:20us,lat=100us,nics=1x1Gbit/s"
plan() { "$AUTOSYNC" plan --config none --catalog "$SRCDIR/planner/catalog" --network "$NET" -f generic "$@" >/dev/null; }
field() { sed -n "s/^ *$1: \"*\([^\"]*\)\"*\$/\1/p" "$2" | head -1; }

# train: the margins of each family from held-out predictions of its picks,
# the wider of leave-one-model-out and leave-one-cluster-out; the two
# slices make 6 groups (2 models x 2 layouts, 2 models on another)
TRAIN=$SRCDIR/tests/fixtures/feedback-dataset-slice.jsonl
"$AUTOSYNC" train -o "$TMP/sim.bin" "$SLICE" "$TRAIN" 2>"$TMP/err"
is "$(grep -c '^autosync train: margin for ' "$TMP/err")" "6" "train: one margin line per strategy family"
is "$(grep 'margin for bucketed all-reduce' "$TMP/err")" \
  "autosync train: margin for bucketed all-reduce: 14.6% (90th percentile of the held-out optimism of its picks, the wider of leave-one-model-out 13.2% and leave-one-cluster-out 14.6%; 6 groups)" \
  "train: the all-reduce family's margin from its held-out picks"
is "$(grep 'margin for many small buckets' "$TMP/err")" \
  "autosync train: margin for many small buckets: the cost constants' (picked in 2 groups, fewer than 5)" \
  "train: a family picked in too few groups keeps the cost constants' margin"
is "$(grep -a -o 'autosync_margin_[a-z_]*' "$TMP/sim.bin" | sort -u | tr '\n' ' ')" "autosync_margin_allreduce autosync_margin_ps " \
  "the margins are in the file"
"$AUTOSYNC" train -o "$TMP/sim1.bin" "$SLICE" 2>"$TMP/err1"
like "$(cat "$TMP/err1")" "margin for bucketed all-reduce: the cost constants' \\(picked in 2 groups, fewer than 5\\)" \
  "train: 2 groups are too few for a margin"
is "$(grep -a -c 'autosync_margin_' "$TMP/sim1.bin")" "0" "... and the file has none"
is "$(head -1 "$TMP/sim.bin" | sed 's/ [0-9]* [0-9a-f]*$/ N H/')" "autosync-simulator 1 ubj N H" \
  "train: the binary file by default (a header, then XGBoost's UBJSON)"
"$AUTOSYNC" train --format json -o "$TMP/sim-json.json" "$SLICE" "$TRAIN" 2>/dev/null
is "$(head -c 11 "$TMP/sim-json.json")" '{"learner":' "train --format json: XGBoost's JSON model"

# plan with it: the file's hash in the plan and in the plan hash
plan --model bert-large -o "$TMP/a.yaml" 2>"$TMP/a.err"
plan --model bert-large --simulator "$TMP/sim.bin" -o "$TMP/l.yaml" 2>"$TMP/l.err"
is "$(cat "$TMP/l.err")" "" "--simulator: no warning"
h=$(field simulator_hash "$TMP/l.yaml")
like "$h" "^[0-9a-f]{16}$" "the plan records the simulator's hash ($h)"
is "$(field simulator_hash "$TMP/a.yaml")" "" "an analytic plan records none"
[ "$(field hash "$TMP/a.yaml")" != "$(field hash "$TMP/l.yaml")" ]
ok $? "the simulator's hash is part of the plan hash"
like "$(field reason "$TMP/l.yaml")" "learned simulator $h|simulator $h" "the reason names the simulator"
# the slices' file finds every bert-large strategy ~1.7x slower than the
# analytic model, and autosync-buckets' gain (1.13x) within its 14.6% margin
is "$(field strategy "$TMP/l.yaml")" "ddp-default" "the learned ranking keeps the framework's default"
plan --model bert-large --baseline ddp-default -o "$TMP/d.yaml" 2>/dev/null
is "$(field analytic_step_time "$TMP/l.yaml")" "$(field step_time "$TMP/d.yaml")" \
  "analytic_step_time: the analytic prediction of the chosen strategy"
like "$(field step_time "$TMP/l.yaml")" "^3[0-9]\\." "step_time: the corrected one"
plan --model bert-large --simulator "$TMP/sim.bin" -o "$TMP/l2.yaml" 2>/dev/null
check_same=$(cmp "$TMP/l.yaml" "$TMP/l2.yaml" 2>&1)
is "$check_same" "" "deterministic: the same file, the same plan bytes"
cp "$TMP/sim.bin" "$TMP/copy.bin"
plan --model bert-large --simulator "$TMP/copy.bin" -o "$TMP/l3.yaml" 2>/dev/null
is "$(field hash "$TMP/l3.yaml")" "$(field hash "$TMP/l.yaml")" "the hash is of the bytes, not of the path"
cp "$TMP/sim-json.json" "$TMP/other.json"
printf ' ' >> "$TMP/other.json"
plan --model bert-large --simulator "$TMP/other.json" -o "$TMP/l4.yaml" 2>/dev/null
h4=$(field simulator_hash "$TMP/l4.yaml")
[ -n "$h4" ] && [ "$h4" != "$h" ]
ok $? "another file: another simulator hash (nodes with different files disagree)"
is "$(field step_time "$TMP/l4.yaml"):$(field strategy "$TMP/l4.yaml")" "$(field step_time "$TMP/l.yaml"):$(field strategy "$TMP/l.yaml")" \
  "the JSON file of the same trees: the same corrected plan"

# the site config's key does the same; --simulator none turns it off
printf 'version: 1\nsimulator: %s\n' "$TMP/sim.bin" > "$TMP/site.yaml"
"$AUTOSYNC" plan --config "$TMP/site.yaml" --catalog "$SRCDIR/planner/catalog" --network "$NET" -f generic \
  --model bert-large -o "$TMP/s.yaml" >/dev/null 2>&1
is "$(cmp "$TMP/s.yaml" "$TMP/l.yaml" 2>&1)" "" "site config 'simulator:': the plan --simulator makes"
"$AUTOSYNC" plan --config "$TMP/site.yaml" --catalog "$SRCDIR/planner/catalog" --network "$NET" -f generic \
  --model bert-large --simulator none -o "$TMP/n.yaml" >/dev/null 2>&1
is "$(cmp "$TMP/n.yaml" "$TMP/a.yaml" 2>&1)" "" "--simulator none: the analytic plan"
printf 'version: 1\nsimulator: relative.json\n' > "$TMP/bad-site.yaml"
out=$("$AUTOSYNC" plan --config "$TMP/bad-site.yaml" --model bert-large 2>&1); rc=$?
is "$rc:$out" "1:autosync plan: $TMP/bad-site.yaml:2: simulator: bad value 'relative.json' (expected an absolute path)" \
  "site config: a relative simulator path is refused, naming file, line and value"

# fail-open: the analytic plan, byte for byte, and one line saying why
failopen() { # NAME FILE WANT-ON-STDERR
  plan --model bert-large --simulator "$2" -o "$TMP/f.yaml" 2>"$TMP/f.err"; rc=$?
  is "$rc:$(cat "$TMP/f.err")" "0:autosync plan: simulator: $3; planning with the analytic model" "$1: one warning"
  is "$(cmp "$TMP/f.yaml" "$TMP/a.yaml" 2>&1)" "" "$1: the analytic plan"
}
failopen "a missing file" "$TMP/missing.json" "$TMP/missing.json: cannot open: No such file or directory"
printf 'not json' > "$TMP/text.json"
failopen "not JSON" "$TMP/text.json" "$TMP/text.json: neither an autosync simulator file nor XGBoost's JSON model"
# a binary file is checked before XGBoost reads it (its UBJSON reader
# trusts the lengths inside): cut, changed, bare or of another version
head -c 2000 "$TMP/sim.bin" > "$TMP/cut.bin"
failopen "a cut binary file" "$TMP/cut.bin" \
  "$TMP/cut.bin: $((2000 - $(head -1 "$TMP/sim.bin" | wc -c))) bytes after the header, which says $(head -1 "$TMP/sim.bin" | cut -d' ' -f4) (cut or changed since it was written)"
cp "$TMP/sim.bin" "$TMP/changed.bin"
printf 'Z' | dd of="$TMP/changed.bin" bs=1 seek=5000 conv=notrunc 2>/dev/null
failopen "one byte changed" "$TMP/changed.bin" \
  "$TMP/changed.bin: its bytes do not match the hash in its header (changed since it was written)"
sed 1d "$TMP/sim.bin" > "$TMP/bare.ubj"
failopen "UBJSON without the header" "$TMP/bare.ubj" \
  "$TMP/bare.ubj: neither an autosync simulator file nor XGBoost's JSON model"
sed '1s/^autosync-simulator 1 ubj /autosync-simulator 2 ubj /' "$TMP/sim.bin" > "$TMP/v2.bin"
failopen "another version" "$TMP/v2.bin" "$TMP/v2.bin: format '2 ubj' (this autosync reads '1 ubj')"
printf 'autosync-simulator 1 ubj 12\n' > "$TMP/header.bin"
failopen "a bad header" "$TMP/header.bin" \
  "$TMP/header.bin: a bad header (expected 'autosync-simulator 1 ubj LENGTH HASH')"
head -c 2000 "$TMP/sim-json.json" > "$TMP/cut.json"
plan --model bert-large --simulator "$TMP/cut.json" -o "$TMP/f.yaml" 2>"$TMP/f.err"
like "$(cat "$TMP/f.err")" "^autosync plan: simulator: $TMP/cut.json: Expecting.*; planning with the analytic model$" \
  "a cut JSON file: one warning, XGBoost's reason"
is "$(cmp "$TMP/f.yaml" "$TMP/a.yaml" 2>&1)" "" "... and the analytic plan"
printf '{"learner": {}}' > "$TMP/other-model.json"
plan --model bert-large --simulator "$TMP/other-model.json" -o "$TMP/f.yaml" 2>"$TMP/f.err"
like "$(cat "$TMP/f.err")" "^autosync plan: simulator: $TMP/other-model.json: .*; planning with the analytic model$" \
  "an XGBoost file of another kind: one warning"
is "$(cmp "$TMP/f.yaml" "$TMP/a.yaml" 2>&1)" "" "... and the analytic plan"
mkfifo "$TMP/fifo.json"
failopen "a FIFO (never blocks)" "$TMP/fifo.json" "$TMP/fifo.json: not a regular file"
AUTOSYNC_SIMULATOR_MODULE=$TMP/none.so failopen "a missing module" "$TMP/sim.bin" \
  "$TMP/sim.bin: module $TMP/none.so: cannot open shared object file: No such file or directory"
AUTOSYNC_SIMULATOR_MODULE=$(cd "${AUTOSYNC_BUILDDIR:-.}" && pwd)/.libs/libautosync.so failopen "a library that is not a simulator module" "$TMP/sim.bin" \
  "$TMP/sim.bin: module $(cd "${AUTOSYNC_BUILDDIR:-.}" && pwd)/.libs/libautosync.so: not an autosync simulator module of this version"
# baselines are not searched: the simulator is not used for them
plan --model bert-large --baseline ddp-default --simulator "$TMP/missing.json" -o "$TMP/b.yaml" 2>"$TMP/b.err"
is "$(cat "$TMP/b.err")" "" "--baseline: no simulator is loaded"

# the no-harm margin: a file whose margins are 99% keeps the default (the
# JSON form, edited)
sed 's/"autosync_margin_allreduce":"[0-9.]*"/"autosync_margin_allreduce":"0.9900"/' "$TMP/sim-json.json" > "$TMP/wide.json"
plan --model bert-large --simulator "$TMP/wide.json" -o "$TMP/w.yaml" 2>/dev/null
is "$(field strategy "$TMP/w.yaml")" "ddp-default" "a 99% learned margin: the framework's default stays"
like "$(field reason "$TMP/w.yaml")" "within the 99% margin for bucketed all-reduce" "... and the reason gives the learned margin"

# eval --simulator scores the file the planner uses
like "$("$AUTOSYNC" eval --simulator "$TMP/sim.bin" "$SLICE" 2>/dev/null | grep -A5 corrected | grep '^all')" "^all +- +2 +14 +43 " \
  "eval --simulator: the same file scores on the records"
is "$("$AUTOSYNC" eval --simulator "$TMP/sim.bin" "$SLICE" 2>/dev/null | grep '^# its no-harm margins')" \
  "# its no-harm margins: bucketed all-reduce 14.6%, compression: the cost constants', parameter server 22.6%, tree all-reduce: the cost constants', DDP hierarchical hook: the cost constants', many small buckets: the cost constants'" \
  "eval --simulator: the file's margins, the cost constants' where it has none"
# and the same statistic of its own picks on the records given, the check of
# those margins where the file was not trained (here it was: small)
is "$("$AUTOSYNC" eval --simulator "$TMP/sim.bin" "$SLICE" "$TRAIN" 2>/dev/null | grep '^# its picks here')" \
  "# its picks here, to check them where it was not trained (90th percentile of the optimism of its picks): bucketed all-reduce 2.0% (6 groups), compression: 0 groups, too few, parameter server 2.0% (6 groups), tree all-reduce: 0 groups, too few, DDP hierarchical hook: 0 groups, too few, many small buckets: 2 groups, too few" \
  "eval --simulator: its picks' optimism on the records given, per family"
# measured compute: a model file without FLOPs plans with the compute its
# records measured (per sample x its batch), from the file every node reads
cat > "$TMP/tiny.yaml" <<'EOF2'
autosync_model: 1
name: tiny-noflops
batch_size: 32
tensors:
  - {name: w1, shape: [1000000], dtype: fp32}
  - {name: w2, shape: [2000000], dtype: fp32}
EOF2
"$AUTOSYNC" plan --config none --network "$NET" -f generic -m "$TMP/tiny.yaml" -o "$TMP/t0.yaml" >/dev/null 2>&1
mh=$(field model_hash "$TMP/t0.yaml")
like "$(field reason "$TMP/t0.yaml")" "compute: estimated from parameter counts" "a model without FLOPs: estimated compute"
# three records of it (three users, one vote each: the median is 2 ms per
# sample = 64 ms at batch 32), exposed 2 ms, optimizer 1 ms, communication
# 5 ms of the measured step
python3 - "$SLICE" "$mh" > "$TMP/tiny.jsonl" <<'EOF2'
import json, sys
base = json.loads(open(sys.argv[1]).readline())
terms = ["forward_s", "backward_s", "optimizer_s", "comm_s", "exposed_s", "hidden_s",
         "latency_intra_s", "latency_inter_s", "bandwidth_intra_s", "bandwidth_inter_s",
         "sparse_allgather_s", "cast_s", "launch_s", "ps_network_s", "ps_server_s",
         "ps_messages_s", "buckets", "ps_buckets", "compressed_buckets", "grad_bytes",
         "wire_bytes", "params", "tensors", "sparse_tensors", "layers"]
for i, (uid, ms) in enumerate([(0, 2.0), (1000, 1.9), (2000, 2.4)]):
    r = dict(base)
    t = dict.fromkeys(terms, 0.0)
    t.update(optimizer_s=0.001, exposed_s=0.002, comm_s=0.005, buckets=1)
    step = 0.003 + 32 * ms / 1e3
    r.update(version=3, model="tiny-noflops", model_hash=sys.argv[2], scale=1.0,
             plan_hash="%016x" % (i + 1), uid=uid, batch_size=32, terms=t,
             measured_step_s=[step] * 3, measured_count=3, measured_mean_s=step)
    print(json.dumps(r))
EOF2
"$AUTOSYNC" train -o "$TMP/simc.bin" "$SLICE" "$TMP/tiny.jsonl" 2>"$TMP/c.err"
like "$(cat "$TMP/c.err")" "^autosync train: measured compute for 1 model\(s\) " "train: the measured compute of the one model with 3 records"
"$AUTOSYNC" plan --config none --network "$NET" -f generic -m "$TMP/tiny.yaml" --simulator "$TMP/simc.bin" -o "$TMP/t1.yaml" >/dev/null 2>&1
like "$(field reason "$TMP/t1.yaml")" "compute: 64 ms per step, measured in the site's feedback records \(the learned simulator file\)$" \
  "plan --simulator: the measured compute (2 ms per sample x 32)"
"$AUTOSYNC" plan --config none --network "$NET" -f generic -m "$TMP/tiny.yaml" --simulator "$TMP/simc.bin" --batch-size 16 -o "$TMP/t2.yaml" >/dev/null 2>&1
like "$(field reason "$TMP/t2.yaml")" "compute: estimated from parameter counts" "--batch-size 16: another model hash, no records of it: estimated"
"$AUTOSYNC" plan --config none --network "$NET" -f generic -m "$TMP/tiny.yaml" --simulator "$TMP/simc.bin" --compute-ms 10 -o "$TMP/t3.yaml" >/dev/null 2>&1
like "$(field reason "$TMP/t3.yaml")" "compute: 10 ms per step, measured$" "--compute-ms: the user's measurement wins"
plan --model bert-large --simulator "$TMP/simc.bin" -o "$TMP/t4.yaml" 2>/dev/null
unlike "$(field reason "$TMP/t4.yaml")" "feedback records" "a model with FLOPs: its own compute"
done_testing
