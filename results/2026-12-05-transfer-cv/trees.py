#!/usr/bin/env python3
# trees.py CLUSTER... - how many adaptation trees autosync train --base kept, per k, over the 10 draws of transfer.py (run from the source tree, after a build in _build/plain)
import json,random,subprocess,sys,os,statistics as st
sys.path.insert(0,'tests/lab')
import transfer as T
recs=[json.loads(l) for l in open('results/2026-12-03-dataset/feedback.jsonl')]
recs=[r for r in recs if r.get("measured_count",0)>=3]
for target in sys.argv[1:]:
    tgt=[r for r in recs if T.label(r)==target]; rest=[r for r in recs if T.label(r)!=target]
    T.write('/tmp/rest.jsonl',rest)
    subprocess.run(['_build/plain/cli/autosync','train','-o','/tmp/base.bin','/tmp/rest.jsonl'],capture_output=True)
    pool=min(200,len(tgt)-max(len(tgt)//3,5))
    out=[]
    for k in (5,10,20,50,200):
        t=[]
        for seed in range(10):
            order=random.Random(seed).sample(range(len(tgt)),len(tgt))
            T.write('/tmp/tr.jsonl',[tgt[i] for i in order[:k]])
            p=subprocess.run(['_build/plain/cli/autosync','train','-o','/tmp/ad.bin','--base','/tmp/base.bin','/tmp/tr.jsonl'],capture_output=True,text=True)
            line=[l for l in p.stderr.splitlines() if 'trees on top' in l][0]
            t.append(int(line.split()[2]))
        out.append("k=%d: median %g [%d-%d]"%(k,st.median(t),min(t),max(t)))
    print(target+": "+"; ".join(out), flush=True)
