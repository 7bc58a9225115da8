#!/usr/bin/env python3
"""summarize.py OUT - the timed cases (time.sh) as a markdown table: per case
the median step of each strategy over its rounds, and per round the ratios
ddp-default / new and old / new (above 1: the new margins' plan is faster),
their geometric mean and range; then the geometric mean over the cases."""
import glob, json, math, os, statistics as st, sys
out = sys.argv[1]
def gm(x): return math.exp(sum(map(math.log, x)) / len(x))
rows, all_d, all_o = [], [], []
for f in sorted(glob.glob(os.path.join(out, 'time', '*.jsonl'))):
    tag = os.path.basename(f)[:-6]
    per = {}
    for l in open(f):
        r = json.loads(l)
        k = 'new' if '-new-c/' in r['strategy'] else 'old' if '-old-c/' in r['strategy'] else r['strategy']
        per.setdefault(k, {})[r['round']] = (st.median(r['steps']), r.get('plan_strategy', k))
    rounds = sorted(per['new'])
    d = [per['ddp-default'][i][0] / per['new'][i][0] for i in rounds]
    o = [per['old'][i][0] / per['new'][i][0] for i in rounds]
    all_d.append(gm(d)); all_o.append(gm(o))
    rows.append((tag, st.median(per['new'][i][0] for i in rounds), st.median(per['old'][i][0] for i in rounds),
                 per['old'][rounds[0]][1], st.median(per['ddp-default'][i][0] for i in rounds), d, o))
print('| case | new plan s | old plan s (its strategy) | ddp-default s | default ÷ new, gm (range) | old ÷ new, gm (range) |')
print('|---|---|---|---|---|---|')
for tag, n, o_, os_, dd, d, o in rows:
    print(f'| {tag} | {n:.4f} | {o_:.4f} ({os_}) | {dd:.4f} | {gm(d):.3f} ({min(d):.3f}–{max(d):.3f}) | {gm(o):.3f} ({min(o):.3f}–{max(o):.3f}) |')
print(f'\n{len(rows)} cases: ddp-default ÷ new {gm(all_d):.3f} (per case {min(all_d):.3f}–{max(all_d):.3f}), old ÷ new {gm(all_o):.3f} ({min(all_o):.3f}–{max(all_o):.3f})')
