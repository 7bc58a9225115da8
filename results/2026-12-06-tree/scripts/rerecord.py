#!/usr/bin/env python3
"""rerecord.py OLD.jsonl NEW.jsonl - the same plans (model, cluster, plan
hash) measured with the old and the new runtime: by the share of a plan's
bytes in explicit tree buckets and by ranks per host, the median of
log(new / old) measured, and the analytic model's error (median
log(measured / predicted)) before and after."""
import json, math, statistics as st, sys
from collections import defaultdict

def load(f):
    d = {}
    for l in open(f):
        r = json.loads(l)
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
    cls = 'tree > 30 %' if tree > 0.3 else 'tree 1-30 %' if tree > 0 else 'no tree bucket'
    g[(n['gpus_per_node'], cls)].append((math.log(n['measured_median_s'] / o['measured_median_s']),
                                         math.log(o['measured_median_s'] / o['predicted_step_s']),
                                         math.log(n['measured_median_s'] / n['predicted_step_s'])))
print(f"{len(new)} new records, {sum(len(v) for v in g.values())} paired with an old one")
print('| ranks per host | plans | n | new ÷ old measured (median, p10–p90) | model error before | model error after |')
print('|---|---|---|---|---|---|')
for k in sorted(g):
    v = g[k]
    r = sorted(x[0] for x in v)
    q = lambda a, p: a[min(len(a) - 1, int(p * len(a)))]
    print(f"| {k[0]} | {k[1]} | {len(v)} | {math.exp(st.median(r)):.2f} ({math.exp(q(r, .1)):.2f}–{math.exp(q(r, .9)):.2f}) | "
          f"{math.exp(st.median(x[1] for x in v)):.2f}× | {math.exp(st.median(x[2] for x in v)):.2f}× |")
