#!/usr/bin/env python3
"""trainset.py OUT.jsonl - the dataset with the runtime and simulator of
today: results/2026-12-03-dataset's 4x1 records (one rank per host: the
tree change does not touch them), results/2026-12-06-tree/rerecord-dataset's
4x2 records and this folder's 2x4 records (dataset/), every cell of those
layouts timed again since the trees run over the nodes."""
import json, os, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
src = [('2026-12-03-dataset/feedback.jsonl', lambda r: r['gpus_per_node'] == 1),
       ('2026-12-06-tree/rerecord-dataset/feedback.jsonl', lambda r: r['nodes'] == 4 and r['gpus_per_node'] == 2),
       ('2026-12-06-twonodes/dataset/feedback.jsonl', lambda r: r['nodes'] == 2 and r['gpus_per_node'] == 4)]
n = 0
with open(sys.argv[1], 'w') as o:
    for f, keep in src:
        k = 0
        for l in open(os.path.join(R, f)):
            if keep(json.loads(l)):
                o.write(l)
                k += 1
        print(f'{f}: {k} records', file=sys.stderr)
        n += k
print(f'{n} records', file=sys.stderr)
