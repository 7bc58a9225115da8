import json,sys,statistics as S,collections
for f in sys.argv[1:]:
    rs=[json.loads(l) for l in open(f)]
    by=collections.defaultdict(dict)
    for r in rs: by[r['round']][r['strategy'].startswith('plan:') and 'plan' or r['strategy']]=S.median(r['steps'])
    rr=[by[k]['ddp-default']/by[k]['plan'] for k in sorted(by) if 'plan' in by[k] and 'ddp-default' in by[k]]
    p=S.median([by[k]['plan'] for k in by]); d=S.median([by[k]['ddp-default'] for k in by])
    g=S.median(rr)
    print("%s: default/plan per round median %.3f (min %.3f max %.3f, n %d); medians plan %.4f default %.4f -> %.3f" % ('/'.join(f.split('/')[-2:]), g, min(rr), max(rr), len(rr), p, d, d/p))
