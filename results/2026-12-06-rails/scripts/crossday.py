#!/usr/bin/env python3
"""crossday.py BEFORE.jsonl AFTER.jsonl - the same plans (plan hash, model,
cluster) recorded twice: median measured after ÷ before and predicted
after ÷ before per plan family (families as in results/2026-12-06-hier)."""
import json, math, statistics as st, sys
from collections import defaultdict

def load(f):
    d = {}
    for l in open(f):
        r = json.loads(l)
        d[(r['model'], r['cluster'], r['plan_hash'])] = r
    return d

def family(r):
    b = r['buckets']
    tot = sum(x['bytes'] for x in b)
    share = lambda f: sum(x['bytes'] for x in b if f(x)) / tot
    fam = ('ps' if share(lambda x: x['kind'] == 'ps') > .3 else
           'hierarchical' if share(lambda x: x['algo'] == 'hierarchical') > .3 else
           'tree' if share(lambda x: x['algo'] == 'tree') > .3 else 'other')
    return fam + ('+16bit' if share(lambda x: x['compress'] != 'none') > .3 else '')

a, b = load(sys.argv[1]), load(sys.argv[2])
rows = defaultdict(list)
for k, r in b.items():
    if k in a:
        rows[family(r)].append((r['measured_median_s'] / a[k]['measured_median_s'],
                                r['predicted_step_s'] / a[k]['predicted_step_s']))
q = lambda v, p: v[min(len(v) - 1, int(p * len(v)))]
print('| family | plans | measured after ÷ before (median, p10–p90) | predicted after ÷ before |')
print('|---|---|---|---|')
for f in sorted(rows):
    m = sorted(x[0] for x in rows[f])
    print(f'| {f} | {len(m)} | {st.median(m):.2f} ({q(m, .1):.2f}–{q(m, .9):.2f}) | {st.median(x[1] for x in rows[f]):.2f} |')
