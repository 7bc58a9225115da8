#!/bin/sh
# autosync feedback: listing, filters and the per-model summary
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"

rec() { # rec TIME JOB MODEL PREDICTED MEASURED_MEAN COUNT
  printf '{"version": 2, "time": "%s", "source": "plugin", "job": %s, "step": 0, "user": "u", "uid": 1000, "node": "node1", "nodes": 3, "gpus_per_node": 2, "model": "%s", "model_hash": "", "topo_hash": "", "plan_hash": "00000000deadbeef", "framework": "pytorch-ddp", "strategy": "x", "predicted_step_s": %s, "buckets": [], "baselines": {}, "measured_step_s": [], "measured_count": %s, "measured_mean_s": %s, "user_influenced": ["measured_step_s", "measured_count", "measured_mean_s"]}\n' \
    "$1" "$2" "$3" "$4" "$6" "$5"
}
log=$TMP/feedback.jsonl
{
  rec 2026-11-30T10:00:00Z 7 resnet50 0.100 0.125 20
  rec 2026-12-01T10:00:00Z 8 resnet50 0.110 0.100 20
  rec 2026-12-01T11:00:00Z 9 bert-large 0.500 0 0
  echo 'not a record'
} > "$log"

out=$("$AUTOSYNC" feedback --file "$log" --summary 2>"$TMP/err"); rc=$?
is "$rc" 0 "summary exits 0"
is "$out" "model                     records  measured  mean_pred_ms  mean_meas_ms     MAPE
resnet50                        2         2       105.000       112.500    15.0%
bert-large                      1         0       500.000             -        -" \
  "per-model summary: MAPE = mean(|20%|, |10%|)"
is "$(cat "$TMP/err")" "autosync: skipped $log:4: not JSON: '[' or '{' expected near 'not' (column 3)" "a bad line is named and skipped"

# more models than a fixed table held (256): every one summarised
for i in $(seq 300); do rec 2026-12-01T10:00:00Z $i "m$i" 0.100 0.125 20; done > "$TMP/many.jsonl"
out=$("$AUTOSYNC" feedback --file "$TMP/many.jsonl" --summary 2>&1)
is "$(echo "$out" | grep -c '^m[0-9]') $(echo "$out" | tail -1 | awk '{print $1, $2}')" "300 m300 1" "300 models: 300 summary rows, the last one too"

# records are checked on reading: the file, the line and the field
{
  rec 2026-12-01T10:00:00Z 7 resnet50 -0.100 0.125 20
  echo '{}'
  rec 2026-12-01T10:00:00Z 7 resnet50 0.100 0.125 20 | sed 's/"node": "node1"/"node": ""/'
  rec 2026-12-01T10:00:00Z 7 resnet50 0.100 0.125 20 | sed 's/, "user_influenced": \[[^]]*\]//'
  printf '{"version": 2, "model": "\\u001b[31mred\\u202e"}\n'
} > "$TMP/bad.jsonl"
out=$("$AUTOSYNC" feedback --file "$TMP/bad.jsonl" --summary 2>&1 >/dev/null)
is "$out" "autosync: skipped $TMP/bad.jsonl:1: field 'predicted_step_s': -0.1 is not a step time (1 us to 1 h)
autosync: skipped $TMP/bad.jsonl:2: field 'version': missing
autosync: skipped $TMP/bad.jsonl:3: field 'node': empty
autosync: skipped $TMP/bad.jsonl:4: field 'user_influenced': missing
autosync: skipped $TMP/bad.jsonl:5: field 'time': missing" "a negative prediction, {}, an empty node and a missing field: file, line and field named"

# version 1 records are read, with a note
rec 2026-12-01T10:00:00Z 7 resnet50 0.100 0.125 20 | sed 's/"version": 2/"version": 1/; s/, "user_influenced": \[[^]]*\]//' > "$TMP/v1.jsonl"
rec 2026-12-01T10:00:00Z 8 resnet50 0.100 0.125 20 | sed 's/"version": 2/"version": 1/; s/, "user_influenced": \[[^]]*\]//' >> "$TMP/v1.jsonl"
rec 2026-12-01T10:00:00Z 9 resnet50 0.100 0.125 20 >> "$TMP/v1.jsonl"
out=$("$AUTOSYNC" feedback --file "$TMP/v1.jsonl" --summary 2>"$TMP/err"); rc=$?
is "$rc" 0 "version 1 records: exit 0"
like "$out" "^resnet50 +3 +3 " "version 1 records are read beside version 2 ones (3 records, 3 measured)"
is "$(cat "$TMP/err")" "autosync: note: 2 records of feedback format 1 (they do not say which fields the job's user could influence: all are counted as the user's)" "and a note says how many, once"

# names from jobs reach the terminal quoted
rec 2026-12-01T10:00:00Z 7 "$(printf 'evil\\u001b[2J\\u202eled')" 0.100 0.125 20 > "$TMP/esc.jsonl"
out=$("$AUTOSYNC" feedback --file "$TMP/esc.jsonl" 2>&1)
like "$out" 'evil\\x1b\[2J\\u\{202[eE]\}led' "control and bidi characters in a model name are escaped on the terminal"

out=$("$AUTOSYNC" feedback --file "$log" --since 2026-12-01 --model resnet50 2>/dev/null | head -2); rc=$?
is "$out" "time                 job.step       node     model            nodesxg strategy               predicted_ms  measured_ms    error
2026-12-01T10:00:00Z 8.0            node1    resnet50             3x2 x                           110.000      100.000   +10.0%" \
  "--since and --model filter the listing, which shows the strategy"

# --job: the records a job's steps left in their job directories
jd=$TMP/run
mkdir -p "$jd/autosync-$(id -u)-8.0.0" "$jd/autosync-$(id -u)-8.1.0" "$jd/autosync-$(id -u)-9.0.0" "$jd/autosync-$(id -u)-81.0.0"
rec 2026-12-01T10:00:00Z 8 resnet50 0.110 0.100 20 > "$jd/autosync-$(id -u)-8.0.0/feedback.json"
rec 2026-12-01T10:05:00Z 8 resnet50 0.120 0.100 20 > "$jd/autosync-$(id -u)-8.1.0/feedback.json"
rec 2026-12-01T11:00:00Z 9 bert-large 0.500 0 0 > "$jd/autosync-$(id -u)-9.0.0/feedback.json"
rec 2026-12-01T11:00:00Z 81 bert-large 0.500 0 0 > "$jd/autosync-$(id -u)-81.0.0/feedback.json"
out=$("$AUTOSYNC" feedback --job 8 --dir "$jd" --summary 2>&1); rc=$?
is "$rc" 0 "--job reads the job's directories"
is "$out" "model                     records  measured  mean_pred_ms  mean_meas_ms     MAPE
resnet50                        2         2       115.000       100.000    15.0%" \
  "both steps of job 8, nothing of jobs 9 or 81"
out=$("$AUTOSYNC" feedback --job 12 --dir "$jd" 2>&1); rc=$?
is "$rc" 1 "--job with no records fails"
is "$out" "autosync: no records of job 12 in $jd (a job's directories stay on the nodes that ran it, for the site's keep_job_files)" "and says where it looked"
out=$("$AUTOSYNC" feedback --job 8x 2>&1); rc=$?
is "$rc:$out" "2:autosync feedback: --job: bad value '8x' (expected a Slurm job id)" "a bad --job is a usage error"
out=$("$AUTOSYNC" feedback --file "$log" --since yesterday 2>&1); rc=$?
is "$rc" 2 "a bad --since is a usage error"
is "$out" "autosync feedback: --since: bad value 'yesterday' (expected e.g. 2026-12-01, 12h or 7d)" "and says why"
out=$("$AUTOSYNC" feedback --file "$TMP/none.jsonl" 2>&1); rc=$?
is "$rc" 1 "a missing log fails"
is "$out" "autosync: $TMP/none.jsonl: cannot open: No such file or directory" "naming the file"
done_testing
