import re,sys,statistics as st
R=sys.argv[2] if len(sys.argv) > 2 else '../'
def src(d):
    if d in (0,5): return R+'2026-12-05-transfer-cv/retimed-draw%d/summary.md'%d
    if d<10: return R+'2026-12-05-transfer-order/retimed-draw%d/summary.md'%d
    return sys.argv[1]+'/retimed-draw%d/summary.md'%d
rows=[]
for d in range(30):
    try: s=open(src(d)).read()
    except OSError: continue
    m=re.search(r'^\| 2x4 1Gbit/s \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \|',s,re.M)
    if not m: print('draw',d,'no row'); continue
    k20,k200=float(m.group(2)),float(m.group(3))
    rows.append((d,int(m.group(1)),k20,k200,k20/k200))
for r in rows: print('| %d | %d | %.3f | %.3f | %.3f |'%r)
def summ(sel,name):
    if not sel: return
    r=[x[4] for x in sel]
    print('%s: %d draws; mean k20 %.3f, k200 %.3f, ratio of means %.3f; per-draw mean %.3f s.d. %.3f s.e. %.3f; %d within 1.05'%(name,len(r),st.mean(x[2] for x in sel),st.mean(x[3] for x in sel),st.mean(x[2] for x in sel)/st.mean(x[3] for x in sel),st.mean(r),st.stdev(r) if len(r)>1 else 0,(st.stdev(r)/len(r)**.5) if len(r)>1 else 0,sum(x<=1.05 for x in r)))
summ([x for x in rows if x[0]<10],'draws 0-9')
summ([x for x in rows if x[0]>=10],'draws 10-29')
summ(rows,'all')
