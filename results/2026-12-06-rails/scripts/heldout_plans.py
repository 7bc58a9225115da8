#!/usr/bin/env python3
"""heldout_plans.py DIR - per held-out cell (DIR/raw/*.jsonl, bench's
labels), ddp-default's measured step (median) ÷ that of autosync's plan
(analytic) and of autosync-learned (the same search ranked by the learned
file, its no-harm margins applied), and which strategy each plan is. One
round of 3 steps each: single-run noise is in every ratio. Then the
geometric mean over cells."""
import glob, json, math, os, statistics as st, sys
print('| cell | autosync plan | ddp ÷ autosync | learned plan | ddp ÷ autosync-learned |')
print('|---|---|---|---|---|')
la, ll = [], []
for f in sorted(glob.glob(os.path.join(sys.argv[1], 'raw', '*.jsonl'))):
    s = {}
    for l in open(f):
        r = json.loads(l)
        if r['strategy'] in ('ddp-default', 'autosync', 'autosync-learned') and r['ok']:
            s[r['strategy']] = (st.median(r['steps']), r['plan_strategy'])
    if len(s) < 3:
        continue
    d = s['ddp-default'][0]
    a, b = d / s['autosync'][0], d / s['autosync-learned'][0]
    la.append(math.log(a)); ll.append(math.log(b))
    print(f"| {os.path.basename(f)[:-6]} | {s['autosync'][1]} | {a:.2f} | {s['autosync-learned'][1]} | {b:.2f} |")
gm = lambda v: math.exp(sum(v) / len(v))
print(f'| geometric mean, {len(la)} cells | | {gm(la):.3f} | | {gm(ll):.3f} |')
