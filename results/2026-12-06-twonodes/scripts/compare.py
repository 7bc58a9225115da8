#!/usr/bin/env python3
"""compare.py BEFORE.jsonl AFTER.jsonl - the same plans (model, cluster,
plan hash) at 2x4 recorded before and after the two-node tree change: by
the share of a plan's bytes in explicit tree buckets and in auto buckets,
the median of log(after / before) measured and predicted, and the analytic
model's error (median log(measured / predicted)) before and after."""
import json, math, statistics as st, sys
from collections import defaultdict

def load(f):
    d = {}
    for l in open(f):
        r = json.loads(l)
        if r['nodes'] == 2 and r['gpus_per_node'] == 4:
            d[(r['model_hash'], r['cluster'], r['plan_hash'])] = r
    return d

old, new = load(sys.argv[1]), load(sys.argv[2])
g = defaultdict(list)
for k, n in new.items():
    o = old.get(k)
    if not o:
        continue
    b = n['buckets']
    tot = sum(x['bytes'] for x in b) or 1
    tree = sum(x['bytes'] for x in b if x['algo'] == 'tree') / tot
    auto = sum(x['bytes'] for x in b if x['algo'] == 'auto') / tot
    cls = ('auto > 30 %' if auto > 0.3 else 'tree > 30 %' if tree > 0.3 else
           'tree or auto 1-30 %' if tree + auto > 0 else 'neither')
    L = math.log
    g[cls].append((L(n['measured_median_s'] / o['measured_median_s']),
                   L(n['predicted_step_s'] / o['predicted_step_s']),
                   L(o['measured_median_s'] / o['predicted_step_s']),
                   L(n['measured_median_s'] / n['predicted_step_s'])))
print(f"{len(new)} records after, {sum(len(v) for v in g.values())} paired with one before")
print('| plans | n | measured after ÷ before (median, p10–p90) | predicted after ÷ before | model error before | model error after |')
print('|---|---|---|---|---|---|')
q = lambda a, p: a[min(len(a) - 1, int(p * len(a)))]
for k in ('auto > 30 %', 'tree > 30 %', 'tree or auto 1-30 %', 'neither'):
    v = g.get(k)
    if not v:
        continue
    r = sorted(x[0] for x in v)
    e = lambda i: math.exp(st.median(x[i] for x in v))
    print(f"| {k} | {len(v)} | {math.exp(st.median(r)):.2f} ({math.exp(q(r, .1)):.2f}–{math.exp(q(r, .9)):.2f}) | "
          f"{e(1):.2f} | {e(2):.2f}× | {e(3):.2f}× |")
