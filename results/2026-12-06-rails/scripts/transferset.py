#!/usr/bin/env python3
"""transferset.py OUT.jsonl - the records for the transfer curve: the 4x1
records of results/2026-12-03-dataset (all 10 models) and every record of
this folder's dataset/ as it was then (2x4: 10 models, 4x2: the 7 catalog
models; the records appended later, 4x1 and the exported models at 4x2,
are left out, so the tables stay as they were)."""
import json, os, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
with open(sys.argv[1], 'w') as o:
    for l in open(os.path.join(R, '2026-12-03-dataset/feedback.jsonl')):
        if json.loads(l)['gpus_per_node'] == 1:
            o.write(l)
    EXP = ('resnet18', 'alexnet', 'mobilenet_v2')
    for l in open(os.path.join(R, '2026-12-06-rails/dataset/feedback.jsonl')):
        r = json.loads(l)
        if r['gpus_per_node'] == 4 or (r['gpus_per_node'] == 2 and r['model'] not in EXP):
            o.write(l)
