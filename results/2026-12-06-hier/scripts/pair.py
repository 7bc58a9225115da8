#!/usr/bin/env python3
"""pair.py DIR [PLANS.tsv] - the cells timed leader rails rails leader by
cell-hier.sh: per plan (plan hash), rails ÷ leader as the ratio of the two
runs' geometric means, by ranks per host and the share of the plan's bytes
in hierarchical buckets; beside it the same-variant spread (run 4 ÷ run 1
for leader, 3 ÷ 2 for rails) and the analytic model's error (measured ÷
predicted, median) with each variant. Writes DIR/eval-{leader,rails}.jsonl:
one record per plan, its two runs' steps pooled (`autosync eval` needs
3 or more)."""
import glob, json, math, os, statistics as st, sys
from collections import defaultdict

D = sys.argv[1]
g = lambda a: math.exp(sum(math.log(x) for x in a) / len(a))
rows = defaultdict(list)
per_plan = []
out = {v: open(os.path.join(D, f'eval-{v}.jsonl'), 'w') for v in ('leader', 'rails')}
for f in sorted(glob.glob(os.path.join(D, 'raw', '*-leader.feedback.jsonl'))):
    tag = os.path.basename(f)[:-len('-leader.feedback.jsonl')]
    if not os.path.exists(os.path.join(D, 'raw', f'{tag}-rails.feedback.jsonl')):
        continue
    runs = {'leader': defaultdict(list), 'rails': defaultdict(list)}
    steps = {'leader': defaultdict(list), 'rails': defaultdict(list)}
    meta = {}
    for v in runs:
        for l in open(os.path.join(D, 'raw', f'{tag}-{v}.feedback.jsonl')):
            r = json.loads(l)
            runs[v][r['plan_hash']].append(r['measured_median_s'])
            steps[v][r['plan_hash']] += r['measured_step_s']
            meta[r['plan_hash']] = r
    for h, r in meta.items():
        a, b = runs['leader'].get(h, []), runs['rails'].get(h, [])
        if len(a) != 2 or len(b) != 2:
            continue
        bk = r['buckets']
        tot = sum(x['bytes'] for x in bk) or 1
        hier = sum(x['bytes'] for x in bk if x['algo'] == 'hierarchical') / tot
        cls = 'hier > 30 %' if hier > 0.3 else 'hier 1-30 %' if hier > 0 else 'no hier bucket'
        p = r['predicted_step_s']
        lr = math.log(g(b) / g(a))
        rows[(r['gpus_per_node'], cls)].append((lr, math.log(a[1] / a[0]), math.log(b[1] / b[0]),
                                                 g(a) / p, g(b) / p))
        per_plan.append((tag, r['strategy'], h, round(hier, 3), len(bk), round(p, 4),
                         [round(x, 4) for x in a], [round(x, 4) for x in b], round(math.exp(lr), 3)))
        for v in ('leader', 'rails'):
            m = sorted(steps[v][h])
            rr = dict(r, measured_median_s=st.median(m), measured_mean_s=st.mean(m), measured_step_s=m,
                      measured_count=len(m))
            out[v].write(json.dumps(rr) + '\n')
q = lambda a, p: a[min(len(a) - 1, int(p * len(a)))]
print('| ranks per host | plans | n | rails ÷ leader (median, p10–p90) | leader runs 4/1 (median \\|log\\|) | rails runs 3/2 (median \\|log\\|) | measured ÷ predicted, leader | rails |')
print('|---|---|---|---|---|---|---|---|')
for k in sorted(rows):
    v = rows[k]
    r = sorted(x[0] for x in v)
    print(f"| {k[0]} | {k[1]} | {len(v)} | {math.exp(st.median(r)):.2f} ({math.exp(q(r, .1)):.2f}–{math.exp(q(r, .9)):.2f}) | "
          f"{math.exp(st.median(abs(x[1]) for x in v)):.2f} | {math.exp(st.median(abs(x[2]) for x in v)):.2f} | "
          f"{st.median(x[3] for x in v):.2f} | {st.median(x[4] for x in v):.2f} |")
if len(sys.argv) > 2:
    with open(sys.argv[2], 'w') as o:
        o.write('cell\tstrategy\tplan_hash\thier_share\tbuckets\tpredicted_s\tleader_s\trails_s\trails_over_leader\n')
        for p in per_plan:
            o.write('\t'.join(str(x) for x in p) + '\n')
