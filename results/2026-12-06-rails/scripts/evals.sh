#!/bin/sh
# evals.sh AUTOSYNC - every table of this folder's README from the
# committed records (run from this folder; scratch files in $TMPDIR).
set -eu
A=$1; T=${TMPDIR:-/tmp}/rails-evals; mkdir -p "$T"
py=python3; [ -x /usr/bin/python3 ] && py=/usr/bin/python3
$py - "$T" <<'PY'
import json, sys
t = sys.argv[1]
def filt(src, dst, keep):
    with open(dst, 'w') as o:
        for l in open(src):
            if keep(json.loads(l)):
                o.write(l)
filt('dataset/feedback.jsonl', t + '/rails-2x4.jsonl', lambda r: r['gpus_per_node'] == 4)
# the exported models' 4x2 cells came later (evals-all.sh uses them)
filt('dataset/feedback.jsonl', t + '/rails-4x2.jsonl',
     lambda r: r['gpus_per_node'] == 2 and r['model'] not in ('resnet18', 'alexnet', 'mobilenet_v2'))
filt('dataset/feedback.jsonl', t + '/exported-2x4.jsonl',
     lambda r: r['model'] in ('resnet18', 'alexnet', 'mobilenet_v2') and r['gpus_per_node'] == 4)
filt('../2026-12-06-twonodes/dataset/feedback.jsonl', t + '/two-2x4.jsonl', lambda r: True)
PY
for l in 2x4 4x2; do
	"$A" eval "$T/rails-$l.jsonl" > eval-analytic-$l.txt
	$py scripts/nocast.py "$T/rails-$l.jsonl" "$T/rails-$l-nocast.jsonl"
	"$A" eval "$T/rails-$l-nocast.jsonl" > eval-analytic-$l-nocast.txt
done
$py ../../tests/lab/family_error.py "$T/rails-2x4.jsonl" > family-error-2x4.txt
$py ../../tests/lab/family_error.py "$T/rails-4x2.jsonl" > family-error-4x2.txt
$py scripts/crossday.py "$T/two-2x4.jsonl" "$T/rails-2x4.jsonl" > crossday-2x4.md
$py scripts/trainset.py "$T/before.jsonl" "$T/after.jsonl"
for s in before after; do
	for cv in model cluster; do
		"$A" eval --cv $cv "$T/$s.jsonl" > eval-cv-$cv-$s.txt
	done
done
"$A" train "$T/after.jsonl" -o simulator-after.bin > train-after.txt 2>&1
"$A" train "$T/before.jsonl" -o "$T/simulator-before.bin" > /dev/null 2>&1
"$A" eval --simulator simulator-after.bin "$T/exported-2x4.jsonl" > eval-exported-2x4.txt
"$A" eval --simulator "$T/simulator-before.bin" "$T/exported-2x4.jsonl" > eval-exported-2x4-before-sim.txt
