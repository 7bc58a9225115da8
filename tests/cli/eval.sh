#!/bin/sh
# autosync eval: the metrics of a committed slice of the lab's records
# (tests/fixtures/feedback-lab-slice.jsonl: the first 18 records of the
# 2026-12-03 lab run, vgg16/32 and bert-large/64 on 4 hosts x 2 ranks at
# 1 Gbit/s), exact; bad input named and skipped.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
SLICE=$SRCDIR/tests/fixtures/feedback-lab-slice.jsonl

out=$("$AUTOSYNC" eval "$SLICE" 2>"$TMP/err"); rc=$?
is "$rc:$out" "0:# predictions as recorded (the analytic simulator)
by       label                    groups points  pairs pairwise  tau_b spearman  regret mean_abs mean_err
model    bert-large@1/64               1      6     15    0.867  0.733    0.886   1.000    56.3%   -56.3%
model    vgg16@1/32                    1      8     28    0.786  0.571    0.667   1.275    21.0%   -21.0%
cluster  4x2 1Gbit/s                   2     14     43    0.814  0.652    0.776   1.137    36.1%   -36.1%
all      -                             2     14     43    0.814  0.652    0.776   1.137    36.1%   -36.1%
# the analytic model's margins here (90th percentile of the optimism of its picks): bucketed all-reduce: 2 groups, too few, compression: 0 groups, too few, parameter server: 2 groups, too few, tree all-reduce: 0 groups, too few, DDP hierarchical hook: 0 groups, too few, many small buckets: 2 groups, too few" \
  "the metrics table of the slice: per model, per cluster, all"
# with 6 groups (both slices): a margin for each family picked in >= 5
is "$("$AUTOSYNC" eval "$SLICE" "$SRCDIR/tests/fixtures/feedback-dataset-slice.jsonl" 2>/dev/null | grep '^# the analytic')" \
  "# the analytic model's margins here (90th percentile of the optimism of its picks): bucketed all-reduce 9.1% (6 groups), compression: 0 groups, too few, parameter server 24.6% (6 groups), tree all-reduce: 0 groups, too few, DDP hierarchical hook: 0 groups, too few, many small buckets: 2 groups, too few" \
  "the analytic model's own margins: for the families picked in 5 groups or more"
is "$(cat "$TMP/err")" "autosync eval: 18 records: 14 points (4 pooled with the same user, model, cluster and plan), 0 left out (fewer steps, no measurement or no cluster), 0 unreadable" \
  "what was read, pooled and left out"
# the same records twice: every one pooled, the metrics unchanged
out2=$("$AUTOSYNC" eval "$SLICE" "$SLICE" 2>"$TMP/err")
is "$out2" "$out" "a file given twice: pooled, the same metrics"
like "$(cat "$TMP/err")" "36 records: 14 points \\(22 pooled" "  18 more pooled"
# a stricter tie: more pairs count
like "$("$AUTOSYNC" eval --tie 0 "$SLICE" 2>/dev/null | grep '^all')" "^all +- +2 +14 +4[3-9] " "--tie 0: no pair left out as a tie"

# a learned correction (XGBoost): deterministic, and scored honestly --
# on its own training data it fits, left out it is what it is
"$AUTOSYNC" train -o "$TMP/sim1.bin" "$SLICE" 2>/dev/null &&
  "$AUTOSYNC" train --output "$TMP/sim2.bin" "$SLICE" "$SLICE" 2>/dev/null
is "$?:$(cmp "$TMP/sim1.bin" "$TMP/sim2.bin" 2>&1)" "0:" "train: the same points, the same file, byte for byte"
# a write that fails (here the file size limit) leaves the file it would
# have replaced as it was, and no temporary beside it
cp "$TMP/sim1.bin" "$TMP/kept.bin"
out=$( (trap '' XFSZ; ulimit -f 50; "$AUTOSYNC" train -o "$TMP/kept.bin" "$SLICE" 2>&1) ); rc=$?
is "$rc:$(cmp "$TMP/sim1.bin" "$TMP/kept.bin" 2>&1):$(ls "$TMP" | grep -c '^kept\.bin\.tmp')" "1::0" "train -o: a failed write leaves the old file whole, no temporary"
like "$out" "kept\\.bin: File too large$" "  and says why"
out=$("$AUTOSYNC" eval --simulator "$TMP/sim1.bin" "$SLICE" 2>/dev/null | sed -n '/^# corrected/,$p' | grep '^all')
like "$out" "^all +- +2 +14 +43 +1\\.000 +1\\.000 +1\\.000 +1\\.000 +0\\.[0-9]% " "eval --simulator on its own training data: ranks and fits (in-sample, not a result)"
out=$("$AUTOSYNC" eval --cv model "$SLICE" 2>/dev/null | sed -n '/^# learned/,$p')
is "$out" "# learned, leave-one-model-out
by       label                    groups points  pairs pairwise  tau_b spearman  regret mean_abs mean_err
model    bert-large@1/64               1      6     15    0.867  0.733    0.886   1.000    39.4%   -37.9%
model    vgg16@1/32                    1      8     28    0.786  0.571    0.667   1.275    23.6%   +20.8%
cluster  4x2 1Gbit/s                   2     14     43    0.814  0.652    0.776   1.137    30.3%    -4.4%
all      -                             2     14     43    0.814  0.652    0.776   1.137    30.3%    -4.4%" \
  "eval --cv model: each model predicted by a correction trained without it"
# leave-one-cluster-out, on a slice of the committed dataset
# (tests/fixtures/feedback-dataset-slice.jsonl: the first 5 records of
# gpt2/64 and resnet50/8 on 4x2 at 1 Gbit/s and 4x1 at 400 Mbit/s in
# results/2026-12-03-dataset/feedback.jsonl)
DSLICE=$SRCDIR/tests/fixtures/feedback-dataset-slice.jsonl
out=$("$AUTOSYNC" eval --cv cluster "$DSLICE" 2>/dev/null | sed -n '/^# learned/,$p')
is "$out" "# learned, leave-one-cluster-out
by       label                    groups points  pairs pairwise  tau_b spearman  regret mean_abs mean_err
model    gpt2@1/64                     2     10     20    0.775  0.564    0.708   1.040    11.4%    -0.1%
model    resnet50@1/8                  2     10     17    0.794  0.464    0.583   1.006     8.9%    -4.1%
cluster  4x1 400Mbit/s                 2     10     19    0.789  0.527    0.641   1.024    10.5%    -1.3%
cluster  4x2 1Gbit/s                   2     10     18    0.778  0.500    0.650   1.022     9.9%    -2.9%
all      -                             4     20     37    0.784  0.514    0.646   1.023    10.2%    -2.1%" \
  "eval --cv cluster: each cluster predicted by a correction trained without it"
echo '{"version": [1, 7, 4]}' > "$TMP/corrupt.json"
out=$("$AUTOSYNC" eval --simulator "$TMP/corrupt.json" "$SLICE" 2>&1 >/dev/null | tail -1); rc=$?
is "$out" "autosync eval: $TMP/corrupt.json: Invalid cast, from Null to Object" "a corrupt simulator file: named, one line"
out=$("$AUTOSYNC" eval --cv x "$SLICE" 2>&1); rc=$?
is "$rc:$out" "2:autosync eval: --cv: unknown value 'x'; one of model or cluster" "--cv x: refused"
out=$("$AUTOSYNC" train --user-cap 0 -o "$TMP/x.bin" "$SLICE" 2>&1); rc=$?
is "$rc:$out" "2:autosync train: --user-cap: '0' is not a share above 0 and at most 1" "--user-cap 0: refused"
# promotion: a candidate replaces the site's file only when not worse
out=$("$AUTOSYNC" promote --candidate "$TMP/sim1.bin" --site "$TMP/site.bin" "$SLICE" 2>/dev/null); rc=$?
is "$rc:$out" "0:candidate $TMP/sim1.bin: pairwise 1.000, top-1 regret 1.000, mean abs. error 0.1 % on 14 points; the analytic simulator: pairwise 0.814, regret 1.137, 36.1 %
promoted: $TMP/site.bin is the candidate now" "promote: no site file yet, the candidate beats the analytic simulator"
cmp -s "$TMP/site.bin" "$TMP/sim1.bin"; is "$?" 0 "  the site's file is the candidate's, byte for byte"
"$AUTOSYNC" train --format json -o "$TMP/simj.json" "$SLICE" 2>/dev/null
"$AUTOSYNC" promote --candidate "$TMP/simj.json" --site "$TMP/site-j.bin" "$SLICE" >/dev/null 2>&1
cmp -s "$TMP/site-j.bin" "$TMP/sim1.bin"
is "$?" 0 "  a JSON candidate: the site's file is binary, the same trees byte for byte"
# a hand-edited margin or measured compute that is not a number in range
for bad in '""' '"abc"' '"0.995"'; do
  python3 - "$TMP/simj.json" "$TMP/simj-bad.json" "$bad" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["learner"]["attributes"]["autosync_margin_ps"] = json.loads(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"))
PY
  out=$("$AUTOSYNC" eval --simulator "$TMP/simj-bad.json" "$SLICE" 2>&1); rc=$?
  is "$rc:$(echo "$out" | tail -1)" "1:autosync eval: $TMP/simj-bad.json: autosync_margin_ps: bad value '$(echo "$bad" | tr -d '"')' (expected a number from 0 to 0.99, as the cost constants take it)" "a margin of $bad in the file: refused, named"
done
out=$("$AUTOSYNC" train --format yaml -o "$TMP/x.bin" "$SLICE" 2>&1); rc=$?
is "$rc:$out" "2:autosync train: --format: unknown value 'yaml'; one of binary or json" "--format yaml: refused"
# a candidate trained on records that measure 3x or 0.5x their prediction
sed 's/"measured_step_s": \[[^]]*\]/"measured_step_s": [9, 0.1, 9]/; s/"measured_median_s": [0-9.e-]*, "measured_spread": [0-9.e-]*, //' "$SLICE" > "$TMP/odd.binl"
"$AUTOSYNC" train -o "$TMP/odd.bin" "$TMP/odd.binl" 2>/dev/null
out=$("$AUTOSYNC" promote --candidate "$TMP/odd.bin" --site "$TMP/site.bin" "$SLICE" 2>/dev/null | tail -1)
is "$out" "kept $TMP/site.bin: the candidate is worse" "promote: a worse candidate is not installed"
cmp -s "$TMP/site.bin" "$TMP/sim1.bin"; is "$?" 0 "  the site's file is unchanged"
# a candidate that ranks as well and errs far less but picks a slower best
# is kept out: train where parameter-server plans measure half their
# prediction, judge on 5 plans (2 PS) where that correction moves a PS
# plan 10 % slower than the best ahead of it and fixes another pair
python3 - "$DSLICE" "$TMP" <<'PY'
import copy, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
kind = {r["strategy"]: r for r in recs if r["model"] == "gpt2" and "nics=1x125000000B/s" in r["cluster"]}
def rec(k, pred, meas, h):
    r = copy.deepcopy(kind["ps-loadbalanced" if k == "ps" else "ddp-default"])
    r.update(predicted_step_s=pred, measured_step_s=[meas] * 3, measured_median_s=meas,
             measured_mean_s=meas, measured_spread=0.0, plan_hash="%016x" % h)
    return json.dumps(r) + "\n"
with open(sys.argv[2] + "/half-ps.jsonl", "w") as f:
    for i in range(40):
        p = 0.8 + 0.15 * i
        f.write(rec("ar", p, p, 2 * i + 1) + rec("ps", p, p / 2, 2 * i + 2))
with open(sys.argv[2] + "/judge.jsonl", "w") as f:
    for h, (k, p, m) in enumerate([("ar", 1.0, 1.0), ("ps", 1.9, 1.1), ("ar", 2.0, 2.0), ("ps", 5.8, 3.0), ("ar", 4.0, 4.0)]):
        f.write(rec(k, p, m, 1001 + h))
PY
"$AUTOSYNC" train -o "$TMP/half-ps.bin" "$TMP/half-ps.jsonl" 2>/dev/null
out=$("$AUTOSYNC" promote --candidate "$TMP/half-ps.bin" --site "$TMP/site-r.bin" "$TMP/judge.jsonl" 2>/dev/null); rc=$?
is "$rc:$out" "0:candidate $TMP/half-ps.bin: pairwise 0.900, top-1 regret 1.100, mean abs. error 3.4 % on 5 points; the analytic simulator: pairwise 0.900, regret 1.000, 33.2 %
kept $TMP/site-r.bin: the candidate is worse" "promote: as good a ranking, a far smaller error, a slower pick: kept"
test -e "$TMP/site-r.bin"; is "$?" 1 "  no site file written"
out=$("$AUTOSYNC" promote --tie 0.1 --candidate "$TMP/half-ps.bin" --site "$TMP/site-r.bin" "$TMP/judge.jsonl" 2>/dev/null | tail -1)
is "$out" "promoted: $TMP/site-r.bin is the candidate now" "  a pick within --tie 0.1 of the best is a tie: promoted"
out=$("$AUTOSYNC" promote --candidate "$TMP/sim1.bin" --site "$TMP/site.bin" --since 2030-01-01 "$SLICE" 2>/dev/null)
is "$out" "kept $TMP/site.bin: no records to compare on" "promote --since after every record: nothing to compare on, kept"
# transfer: the base's trees kept, as many more as 5-fold cross-validation
# on the records finds useful; deterministic
out=$("$AUTOSYNC" train --base "$TMP/site.bin" -o "$TMP/t0.bin" "$SLICE" 2>&1 | grep trees)
is "$out" "autosync train: 0 of at most 50 trees on top of $TMP/site.bin (5-fold cross-validation on these records)" \
  "train --base on the base's own records: no tree helps, none added"
out=$("$AUTOSYNC" train --base "$TMP/site.bin" -o "$TMP/t1.bin" "$TMP/odd.binl" 2>&1 | grep trees) &&
  "$AUTOSYNC" train --base "$TMP/site.bin" -o "$TMP/t2.bin" "$TMP/odd.binl" 2>/dev/null
is "$?:$(cmp "$TMP/t1.bin" "$TMP/t2.bin" 2>&1)" "0:" "train --base: deterministic"
# logs joined in another order: the same points, the same folds, the same file
tac "$TMP/odd.binl" > "$TMP/odd-rev.binl"
"$AUTOSYNC" train --base "$TMP/site.bin" -o "$TMP/t6.bin" "$TMP/odd-rev.binl" 2>/dev/null
is "$?:$(cmp "$TMP/t1.bin" "$TMP/t6.bin" 2>&1)" "0:" "train --base: the records in reverse order, the same file"
tac "$SLICE" > "$TMP/rev.jsonl"
"$AUTOSYNC" train -o "$TMP/sim3.bin" "$TMP/rev.jsonl" 2>/dev/null
is "$?:$(cmp "$TMP/sim1.bin" "$TMP/sim3.bin" 2>&1)" "0:" "train: the records in reverse order, the same file"
is "$out" "autosync train: 50 of at most 50 trees on top of $TMP/site.bin (5-fold cross-validation on these records)" \
  "  records far from the base's predictions: 50 trees added (all it may)"
[ "$(wc -c < "$TMP/t1.bin")" -gt "$(wc -c < "$TMP/site.bin")" ]; is "$?" 0 "  larger than its base (its trees and 50 more)"
head -1 "$SLICE" > "$TMP/one.jsonl"
out=$("$AUTOSYNC" train --base "$TMP/site.bin" -o "$TMP/t4.bin" "$TMP/one.jsonl" 2>&1 | grep "as it is"); rc=$?
is "$rc:$out" "0:autosync train: $TMP/site.bin as it is (one point: nothing to cross-validate on)" \
  "train --base on one record: the base as it is"
out=$("$AUTOSYNC" train --base "$TMP/corrupt.json" -o "$TMP/t3.bin" "$SLICE" 2>&1); rc=$?
is "$rc:$out" "1:autosync train: $TMP/corrupt.json: Invalid cast, from Null to Object" \
  "train --base with a corrupt file: named, before any record is read"
# the file a command is given is read first: a bad name fails at once
for c in "train -o $TMP/t5.bin --base" "eval --simulator" "promote --site $TMP/s.bin --candidate"; do
  out=$("$AUTOSYNC" $c "$TMP/missing.bin" "$SLICE" 2>&1); rc=$?
  is "$rc:$out" "1:autosync ${c%% *}: $TMP/missing.bin: cannot open: No such file or directory" \
    "${c%% *} ${c##* } missing: one line, before any record is read"
done
[ ! -e "$TMP/t5.bin" ] && [ ! -e "$TMP/s.bin" ]; is "$?" 0 "  nothing written"
out=$("$AUTOSYNC" promote --candidate "$TMP/sim1.bin" "$SLICE" 2>&1); rc=$?
is "$rc:$out" "2:autosync promote: give --candidate FILE and --site FILE" "promote without --site: refused"
out=$("$AUTOSYNC" eval --since yesterday "$SLICE" 2>&1 | head -1); rc=$?
like "$out" "^autosync eval: --since: bad time 'yesterday'" "--since with a bad time: refused"
out=$("$AUTOSYNC" eval --until 200000000000000d "$SLICE" 2>&1 | head -1)
like "$out" "^autosync eval: --until: bad time '200000000000000d'" "--until further back than the epoch (the product would overflow): refused"
out=$("$AUTOSYNC" train "$SLICE" 2>&1); rc=$?
is "$rc:$out" "2:autosync train: no output file (-o FILE)" "train without -o: refused"
out=$("$AUTOSYNC" eval --min-steps 26 "$SLICE" 2>&1 >/dev/null)
like "$out" ", 18 left out " "--min-steps 26: every record (25 timed steps each) left out"
# bad input
{ head -3 "$SLICE"; echo '{"version": 3}'; echo 'not json'; } > "$TMP/bad.jsonl"
out=$("$AUTOSYNC" eval "$TMP/bad.jsonl" 2>&1 >/dev/null); rc=$?
is "$rc:$out" "0:autosync: skipped $TMP/bad.jsonl:4: field 'time': missing
autosync: skipped $TMP/bad.jsonl:5: not JSON: '[' or '{' expected near 'not' (column 3)
autosync eval: 3 records: 3 points (0 pooled with the same user, model, cluster and plan), 0 left out (fewer steps, no measurement or no cluster), 2 unreadable" \
  "unreadable lines: named by file and line, skipped"
out=$("$AUTOSYNC" eval "$TMP/nonexistent" 2>&1); rc=$?
is "$rc:$out" "1:autosync eval: $TMP/nonexistent: cannot open: No such file or directory" "a missing file"
out=$("$AUTOSYNC" eval --tie 2 "$SLICE" 2>&1); rc=$?
is "$rc:$out" "2:autosync eval: --tie: '2' is not a share from 0 to 1" "--tie 2: refused"
# --picks: each group's pick and measured best, per set of predictions
"$AUTOSYNC" eval --cv model --picks "$TMP/picks.tsv" "$SLICE" >/dev/null 2>&1; rc=$?
is "$rc:$(cat "$TMP/picks.tsv")" "0:recorded	vgg16@1/32	4x2 1Gbit/s	a6d8cd96b87b0af5	aad07f5fe363f2d9	0.362848391	0.284674388
recorded	bert-large@1/64	4x2 1Gbit/s	d86c295110f7557a	d86c295110f7557a	0.419881764	0.419881764
cv-model	vgg16@1/32	4x2 1Gbit/s	a6d8cd96b87b0af5	aad07f5fe363f2d9	0.362848391	0.284674388
cv-model	bert-large@1/64	4x2 1Gbit/s	d86c295110f7557a	d86c295110f7557a	0.419881764	0.419881764" \
  "eval --picks: plan hashes and measured times of each group's pick and best"
is "$(awk -F'\t' '$2 ~ /vgg16/ && $1 == "recorded" { printf "%.3f", $6 / $7 }' "$TMP/picks.tsv")" "1.275" \
  "  their ratio is the table's regret for that group"
out=$("$AUTOSYNC" eval --picks "$TMP/nodir/picks.tsv" "$SLICE" 2>&1); rc=$?
is "$rc:$out" "1:autosync eval: --picks: $TMP/nodir/picks.tsv: No such file or directory" "--picks into a missing directory: named, nothing scored"
# a run that fails leaves the picks of the last run as they were
cp "$TMP/picks.tsv" "$TMP/picks.before"
out=$("$AUTOSYNC" eval --simulator "$TMP/corrupt.json" --picks "$TMP/picks.tsv" "$SLICE" 2>&1); rc=$?
is "$rc:$out" "1:autosync eval: $TMP/corrupt.json: Invalid cast, from Null to Object" \
  "--picks with a corrupt simulator file: the file named, nothing scored"
cmp -s "$TMP/picks.tsv" "$TMP/picks.before"; is "$?" "0" "  the earlier picks file kept as it was"
out=$("$AUTOSYNC" eval --picks "$TMP/picks.tsv" "$SLICE" "$TMP/nonexistent" 2>&1 >/dev/null); rc=$?
is "$rc:$out" "1:autosync eval: $TMP/nonexistent: cannot open: No such file or directory" \
  "--picks with a log that cannot be read: named"
cmp -s "$TMP/picks.tsv" "$TMP/picks.before"; is "$?" "0" "  the earlier picks file kept as it was"
is "$(ls "$TMP" | grep -c 'picks.tsv.tmp')" "0" "  no temporary file left beside it"
out=$("$AUTOSYNC" eval --picks /dev/stdout "$SLICE" 2>/dev/null | grep -c '^recorded	'); rc=$?
is "$out" "2" "--picks /dev/stdout: written in place, one line per group"
out=$("$AUTOSYNC" eval 2>&1 | head -1); 
is "$out" "autosync eval: no feedback file given" "no file: says so"
done_testing
