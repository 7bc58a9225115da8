#!/usr/bin/env python3
"""trainset.py OLD.jsonl NEW.jsonl - the dataset's 7 catalog models on its 9
clusters, twice: OLD as results/2026-12-03-dataset recorded them (trees
over the ranks, the old two-node formula), NEW with the same 4x1 records
(one rank per host: nothing changed there), the 4x2 records of
results/2026-12-06-tree/rerecord-dataset and the 2x4 records of this
folder's dataset/ (every cell timed again with the trees over the nodes;
2x4 after the two-node change)."""
import json, os, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
CAT = {'vgg16', 'bert-large', 'gpt2', 'gpt2-xl', 'ncf', 'resnet50', 'resnet101'}

def read(f, keep):
    out = []
    for l in open(os.path.join(R, f)):
        r = json.loads(l)
        if r['model'] in CAT and keep(r):
            out.append(l)
    return out

old = read('2026-12-03-dataset/feedback.jsonl', lambda r: True)
new = (read('2026-12-03-dataset/feedback.jsonl', lambda r: r['gpus_per_node'] == 1) +
       read('2026-12-06-tree/rerecord-dataset/feedback.jsonl',
            lambda r: r['nodes'] == 4 and r['gpus_per_node'] == 2) +
       read('2026-12-06-twonodes/dataset/feedback.jsonl', lambda r: True))
for f, v in ((sys.argv[1], old), (sys.argv[2], new)):
    with open(f, 'w') as o:
        o.writelines(v)
    print(f'{f}: {len(v)} records', file=sys.stderr)
