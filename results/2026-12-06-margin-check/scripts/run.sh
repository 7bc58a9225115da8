#!/bin/sh
# run.sh AUTOSYNC - do the no-harm margins cover the optimism of the picks
# on records the margins were not set from? For the analytic defaults and
# for a trained file, on the held-out cells and on the exported models.
# Run from this folder; scratch in $TMPDIR. Reads ../2026-12-06-rails.
set -eu
A=$1; R=../2026-12-06-rails; T=${TMPDIR:-/tmp}/margin-check; mkdir -p "$T"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
$py - "$T" "$R" <<'PY'
import json, sys
t, r = sys.argv[1], sys.argv[2]
EXP = ('resnet18', 'alexnet', 'mobilenet_v2')
with open(t + '/catalog.jsonl', 'w') as c, open(t + '/exported.jsonl', 'w') as e:
    for l in open(r + '/dataset/feedback.jsonl'):
        (e if json.loads(l)['model'] in EXP else c).write(l)
PY
# held-out cells (4 models, 600 Mbit/s, 4 layouts) with the file trained on
# the whole dataset, as committed there
"$A" eval --simulator "$R/simulator-all.bin" "$R/heldout/feedback.jsonl" \
	> heldout.txt 2>&1
# the 3 exported models with a file trained on the 7 catalog models alone
"$A" train "$T/catalog.jsonl" -o "$T/catalog.bin" > train-catalog.txt 2>&1
"$A" eval --simulator "$T/catalog.bin" "$T/exported.jsonl" > exported.txt 2>&1
grep -h '^# ' heldout.txt exported.txt
