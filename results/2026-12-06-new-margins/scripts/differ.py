#!/usr/bin/env python3
"""differ.py PLANS.TSV - the (cell, model, compression) cases where the new
margins' plan differs from the old margins', one line each:
CELL MODEL VARIANT NEW_STRATEGY NEW_FAMILY OLD_STRATEGY OLD_FAMILY"""
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
d = {(r['cell'], r['model'], r['variant']): r for r in rows}
def fam(r):
    m = re.search(r'(\d+)% margin for ([a-zA-Z -]+)', r['reason'])
    return m.group(2).replace(' ', '_') if m else '-'
for (c, m, v), r in sorted(d.items()):
    if not v.startswith('new'):
        continue
    o = d.get((c, m, v.replace('new', 'old')))
    if o and o['plan'] != r['plan']:
        print(c, m, v, r['strategy'], fam(r), o['strategy'], fam(o))
