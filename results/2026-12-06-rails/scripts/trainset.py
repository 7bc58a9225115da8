#!/usr/bin/env python3
"""trainset.py BEFORE.jsonl AFTER.jsonl - the dataset's 7 catalog models on
its 9 clusters, twice, differing only in the 4x2 and 2x4 records:
  BEFORE: results/2026-12-06-twonodes' NEW set: 4x2 from
          results/2026-12-06-tree/rerecord-dataset, 2x4 from
          results/2026-12-06-twonodes/dataset (hierarchical buckets ran the
          leader variant; casts predicted at a GPU's speed; machine fc-v1294)
  AFTER:  4x2 and 2x4 from this folder's dataset/ (rails; each cell's
          measured CPU cast_bw and gamma_half; machine fc-v1300)
Both: the 4x1 records of results/2026-12-03-dataset (one rank per host:
no hierarchical bucket runs differently there)."""
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

common = read('2026-12-03-dataset/feedback.jsonl', lambda r: r['gpus_per_node'] == 1)
before = (common + read('2026-12-06-tree/rerecord-dataset/feedback.jsonl',
                        lambda r: r['nodes'] == 4 and r['gpus_per_node'] == 2) +
          read('2026-12-06-twonodes/dataset/feedback.jsonl', lambda r: True))
# dataset/'s 4x1 records came later (evals-all.sh uses them)
after = common + read('2026-12-06-rails/dataset/feedback.jsonl', lambda r: r['gpus_per_node'] != 1)
for f, v in ((sys.argv[1], before), (sys.argv[2], after)):
    with open(f, 'w') as o:
        o.writelines(v)
    print(f'{f}: {len(v)} records', file=sys.stderr)
