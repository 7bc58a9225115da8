#!/bin/sh
# evals-all.sh AUTOSYNC - the tables of the README's "The whole set" from
# the committed records: dataset/ complete (2x4, 4x2 and 4x1, 10 models,
# 3 rates, one machine). Run from this folder; scratch in $TMPDIR.
set -eu
A=$1; T=${TMPDIR:-/tmp}/rails-all; mkdir -p "$T"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
$py - "$T" <<'PY'
import json, sys
t = sys.argv[1]
EXP = ('resnet18', 'alexnet', 'mobilenet_v2')
with open(t + '/catalog.jsonl', 'w') as c, open(t + '/exported.jsonl', 'w') as e:
    for l in open('dataset/feedback.jsonl'):
        (e if json.loads(l)['model'] in EXP else c).write(l)
PY
"$A" eval dataset/feedback.jsonl > all-eval-analytic.txt
"$A" eval heldout/feedback.jsonl > all-eval-analytic-heldout.txt
for cv in model cluster; do
	"$A" eval --cv $cv "$T/catalog.jsonl" > all-eval-cv-$cv.txt
done
"$A" train "$T/catalog.jsonl" -o "$T/catalog.bin" > all-train-catalog.txt 2>&1
"$A" eval --simulator "$T/catalog.bin" "$T/exported.jsonl" > all-eval-exported.txt
"$A" train dataset/feedback.jsonl -o simulator-all.bin > all-train.txt 2>&1
"$A" eval --simulator simulator-all.bin heldout/feedback.jsonl > all-eval-heldout.txt
