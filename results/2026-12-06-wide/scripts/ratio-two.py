import json,sys,statistics as S,collections
for f in sys.argv[1:]:
    by=collections.defaultdict(dict)
    for l in open(f):
        r=json.loads(l)
        k='W' if '/tmp/wide/plans/' in r['strategy'] else 'W3' if 'plans3' in r['strategy'] else r['strategy']
        by[r['round']][k]=(S.median(r['steps']), r['nbuckets'], r['plan_strategy'], r['predicted'])
    out=['/'.join(f.split('/')[-2:]).replace('.jsonl','')]
    for k in ('W','W3'):
        rr=[v['ddp-default'][0]/v[k][0] for v in by.values()]
        out.append("%s %s(%d buckets) %.3f (%.3f-%.3f)"%(k, by[0][k][2], by[0][k][1], S.median(rr), min(rr), max(rr)))
    print(" | ".join(out))
