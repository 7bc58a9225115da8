#!/usr/bin/env python3
"""family.py DIR - measured ÷ predicted (median) per ranks per host and
plan family, with each variant (DIR/eval-{leader,rails}.jsonl from
pair.py). A plan's family: PS, hierarchical or tree when > 30 % of its
bytes are that kind, else 'other'; '+16bit' when > 30 % are compressed."""
import json, os, statistics as st, sys
from collections import defaultdict

D = sys.argv[1]
tab = defaultdict(dict)
for v in ('leader', 'rails'):
    d = defaultdict(list)
    for l in open(os.path.join(D, f'eval-{v}.jsonl')):
        r = json.loads(l)
        b = r['buckets']
        tot = sum(x['bytes'] for x in b)
        share = lambda f: sum(x['bytes'] for x in b if f(x)) / tot
        fam = ('ps' if share(lambda x: x['kind'] == 'ps') > .3 else
               'hierarchical' if share(lambda x: x['algo'] == 'hierarchical') > .3 else
               'tree' if share(lambda x: x['algo'] == 'tree') > .3 else 'other')
        if share(lambda x: x['compress'] != 'none') > .3:
            fam += '+16bit'
        d[(r['gpus_per_node'], fam)].append(r['measured_median_s'] / r['predicted_step_s'])
    for k, x in d.items():
        tab[k][v] = (len(x), st.median(x))
print('| ranks per host | family | n | measured ÷ predicted, leader | rails |')
print('|---|---|---|---|---|')
for k in sorted(tab):
    n, a = tab[k]['leader']
    print(f"| {k[0]} | {k[1]} | {n} | {a:.2f} | {tab[k]['rails'][1]:.2f} |")
