#!/usr/bin/env python3
"""transferset.py OUT.jsonl - the records for the transfer curve: the 4x1
records of results/2026-12-03-dataset (all 10 models) and every record of
this folder's dataset/ (2x4: 10 models, 4x2: the 7 catalog models)."""
import json, os, sys
R = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
with open(sys.argv[1], 'w') as o:
    for l in open(os.path.join(R, '2026-12-03-dataset/feedback.jsonl')):
        if json.loads(l)['gpus_per_node'] == 1:
            o.write(l)
    for l in open(os.path.join(R, '2026-12-06-rails/dataset/feedback.jsonl')):
        o.write(l)
