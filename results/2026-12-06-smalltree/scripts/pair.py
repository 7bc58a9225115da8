#!/usr/bin/env python3
"""pair.py DIR - the cells timed old new new old by cell-oldnew.sh: per plan
(plan hash), new ÷ old as the ratio of the two runs' geometric means, by
ranks per host and the share of the plan's bytes in explicit tree buckets;
beside it the same-runtime spread (run 4 ÷ run 1 for old, 3 ÷ 2 for new),
the noise a ratio here carries."""
import glob, json, math, os, statistics as st, sys
from collections import defaultdict

D = sys.argv[1]
def load(f):
    d = {}
    for l in open(f):
        r = json.loads(l)
        d[r['plan_hash']] = r
    return d

rows = defaultdict(list)
per_plan = []
for f in sorted(glob.glob(os.path.join(D, 'raw', '*-old.feedback.jsonl'))):
    tag = os.path.basename(f)[:-len('-old.feedback.jsonl')]
    # the runs append: old (1st, 4th) and new (2nd, 3rd) records per plan
    runs = {'old': defaultdict(list), 'new': defaultdict(list)}
    meta = {}
    for v in ('old', 'new'):
        for l in open(os.path.join(D, 'raw', f'{tag}-{v}.feedback.jsonl')):
            r = json.loads(l)
            runs[v][r['plan_hash']].append(r['measured_median_s'])
            meta[r['plan_hash']] = r
    for h, r in meta.items():
        o, n = runs['old'].get(h, []), runs['new'].get(h, [])
        if len(o) != 2 or len(n) != 2:
            continue
        b = r['buckets']
        tot = sum(x['bytes'] for x in b) or 1
        tree = sum(x['bytes'] for x in b if x['algo'] == 'tree') / tot
        auto = sum(x['bytes'] for x in b if x['algo'] == 'auto') / tot
        cls = 'tree > 30 %' if tree > 0.3 else 'tree 1-30 %' if tree > 0 else 'no tree bucket'
        g = lambda a: math.exp(sum(math.log(x) for x in a) / len(a))
        lr = math.log(g(n) / g(o))
        rows[(r['gpus_per_node'], cls)].append((lr, math.log(o[1] / o[0]), math.log(n[1] / n[0])))
        per_plan.append((tag, r['strategy'], h, round(tree, 3), round(auto, 3), len(b),
                         [round(x, 4) for x in o], [round(x, 4) for x in n], round(math.exp(lr), 3)))
q = lambda a, p: a[min(len(a) - 1, int(p * len(a)))]
print('| ranks per host | plans | n | new ÷ old (median, p10–p90) | old ÷ old, runs 4/1 (median \\|log\\|) | new ÷ new, runs 3/2 (median \\|log\\|) |')
print('|---|---|---|---|---|---|')
for k in sorted(rows):
    v = rows[k]
    r = sorted(x[0] for x in v)
    print(f"| {k[0]} | {k[1]} | {len(v)} | {math.exp(st.median(r)):.2f} ({math.exp(q(r, .1)):.2f}–{math.exp(q(r, .9)):.2f}) | "
          f"{math.exp(st.median(abs(x[1]) for x in v)):.2f} | {math.exp(st.median(abs(x[2]) for x in v)):.2f} |")
if len(sys.argv) > 2:
    with open(sys.argv[2], 'w') as o:
        o.write('cell\tstrategy\tplan_hash\ttree_share\tauto_share\tbuckets\told_s\tnew_s\tnew_over_old\n')
        for p in per_plan:
            o.write('\t'.join(str(x) for x in p) + '\n')
