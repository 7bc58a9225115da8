#!/usr/bin/env python3
"""summary.py DIR - per cell and model: the median step (median of each
round's steps, then over the rounds of both runs of a version) of the
tree, ring and auto (ddp-default) plans with the old and the new runtime;
the ratios old / new (ring and auto are controls: their code did not
change), with the range over the per-round values."""
import glob, json, os, statistics as st, sys

D = sys.argv[1]
tags = sorted({os.path.basename(f).rsplit('-', 1)[0]
               for f in glob.glob(os.path.join(D, 'raw', '*-old.jsonl'))})
print('| cell | model | tree old | tree new | old ÷ new | ring old ÷ new | auto old ÷ new | tree ÷ ring, old | tree ÷ ring, new |')
print('|---|---|---|---|---|---|---|---|---|')
for tag in tags:
    per = {}
    for v in ('old', 'new'):
        for l in open(os.path.join(D, 'raw', f'{tag}-{v}.jsonl')):
            r = json.loads(l)
            s = r['strategy']
            k = 'tree' if s.endswith('tree.yaml') else 'ring' if s.endswith('ring.yaml') else 'auto'
            per.setdefault((v, k), []).append(st.median(r['steps']))
    med = {k: st.median(x) for k, x in per.items()}
    def rng(k):
        o, n = per[('old', k)], per[('new', k)]
        return f"{med[('old', k)] / med[('new', k)]:.2f} ({min(o) / max(n):.2f}–{max(o) / min(n):.2f})"
    rate, lay, model = tag.split('-', 2)
    print(f"| {lay} {rate} | {model} | {med[('old','tree')]:.3f} | {med[('new','tree')]:.3f} | {rng('tree')} | {rng('ring')} | {rng('auto')} | "
          f"{med[('old','tree')] / med[('old','ring')]:.2f} | {med[('new','tree')] / med[('new','ring')]:.2f} |")
