"""ddp_summary.py OUTDIR - the headline table from a tests/lab/ddp_bench.sh run.

Per layout, rate and model: DDP's defaults (scaled with the model) and DDP
configured by autosync's plan, each step time the slowest rank's; per-round
medians, the ratio default / plan as the median of the per-round ratios (the
configurations alternate within every round, so each round is a paired
comparison) with its min-max, and each configuration's bound efficiency:

  bound = forward + max(backward + c_last, c_all) + optimizer

where c_all = 2 (n - 1) / n * G / B is the inter-node traffic of one node
for all gradients with the best possible all-reduce (intra-node traffic
free), c_last the same for the gradients of the first layer (ready only when
backward ends), G the bytes the configuration puts on the wire (the peer's
parameters are dense fp32, sparse ones as their touched rows: 4 bytes an
element, halved by an fp16/bf16 hook; PowerSGD's smaller traffic is not
modelled, so its bound is too high), n the number of hosts and B the link
bandwidth measured before the runs (TCP, median of 3). Efficiency = bound /
measured median step; 1 would be a schedule that hides everything the link
allows.
"""
import glob
import json
import math
import os
import statistics as st
import sys

out = sys.argv[1]


def med(v):
    return st.median(v) if v else float("nan")


def bound(replay, wire_ratio, n, bw):
    tb = [t for t in replay["tensors"]]
    nbytes = lambda t: 4.0 * (t["rows"] * t["row"] if t["sparse"] else t["numel"])
    g = sum(nbytes(t) for t in tb) * wire_ratio
    first = min(t["layer"] for t in tb)
    g_last = sum(nbytes(t) for t in tb if t["layer"] == first) * wire_ratio
    k = 2.0 * (n - 1) / n / bw if n > 1 else 0.0
    return replay["forward"] + max(replay["backward"] + k * g_last, k * g) + replay["optimizer"]


def f(x, d=3):
    return ("%." + str(d) + "f") % x if x == x else "-"


print("# DDP defaults vs DDP + autosync plan (headline benchmark)\n")
if os.path.exists(os.path.join(out, "setup.txt")):
    print("```\n" + open(os.path.join(out, "setup.txt")).read().strip() + "\n```\n")
print("| layout | rate | link B/s (measured) | model | rounds | default median s | plan median s | ratio default/plan (min-max) | bound s (default / plan) | bound efficiency default | bound efficiency plan | plan | grads |")
print("|---|---|---:|---|---:|---:|---:|---|---|---:|---:|---|---|")
cells = []
for path in sorted(glob.glob(os.path.join(out, "raw", "*", "*", "*.jsonl"))):
    lay, rate = path.split(os.sep)[-3:-1]
    model = os.path.basename(path)[:-6]
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    if not rows:
        continue
    hosts = int(lay.split("x")[0])
    link = [float(v) for v in open(os.path.join(out, "raw", lay, rate, "link.txt")).read().split()]
    bw = med(link)
    pdir = os.path.join(out, "plans", lay, rate, model)
    replay = json.load(open(os.path.join(pdir, "replay.json")))
    d = [r for r in rows if r["config"] == "default"]
    p = [r for r in rows if r["config"].startswith("plan:")]
    pairs = {}
    for r in d:
        pairs.setdefault(r["round"], {})["d"] = med(r["steps"])
    for r in p:
        pairs.setdefault(r["round"], {})["p"] = med(r["steps"])
    ratios = [v["d"] / v["p"] for v in pairs.values() if "d" in v and "p" in v]
    dm = med([t for r in d for t in r["steps"]])
    pm = med([t for r in p for t in r["steps"]])
    hook = (p[0]["settings"] if p else {}).get("hook", "none")
    bd = bound(replay, 1.0, hosts, bw)
    bp = bound(replay, 0.5 if hook in ("fp16", "bf16") else 1.0, hosts, bw)
    strat = ""
    for line in open(os.path.join(pdir, "autosync.yaml")):
        if line.startswith("strategy:"):
            strat = line.split(":", 1)[1].strip()
            break
    ok = all(r["ok"] for r in rows)
    cells.append((lay, rate, model, med(ratios), min(ratios) if ratios else float("nan"), bp / pm, strat))
    print("| %s | %s | %.3g | %s | %d | %s | %s | %s (%s-%s) | %s / %s | %s | %s | %s %s | %s |" % (
        lay, rate, bw, model, len(ratios), f(dm), f(pm), f(med(ratios), 2),
        f(min(ratios) if ratios else float("nan"), 2), f(max(ratios) if ratios else float("nan"), 2),
        f(bd), f(bp), f(bd / dm, 2), f(bp / pm, 2), strat, json.dumps(p[0]["settings"] if p else {}),
        "ok" if ok else "WRONG"))
print()
head = [c for c in cells if c[2] in ("vgg16", "bert-large", "gpt2", "ncf")]
if head:
    gm = math.exp(st.mean(math.log(c[3]) for c in head))
    print("Geometric mean of the ratio default / plan over VGG-16, BERT-large, GPT-2 and NCF, all layouts and rates above: **%.2f** (%d cells).  " % (gm, len(head)))
if cells:
    lo = min(cells, key=lambda c: c[3])
    print("Lowest per-cell ratio: %.2f (%s, %s, %s).  " % (lo[3], lo[2], lo[0], lo[1]))
    # where the plan is DDP's default the same settings ran twice: the
    # ratio is the lab's noise, not something autosync did
    kept = [c for c in cells if c[6].strip('"') == "ddp-default"]
    changed = [c for c in cells if c not in kept]
    if changed:
        lo = min(changed, key=lambda c: c[3])
        print("Lowest where the plan changes DDP's settings: %.2f (%s, %s, %s; %d cells).  " % (
            lo[3], lo[2], lo[0], lo[1], len(changed)))
    if kept:
        print("Where autosync kept DDP's default (the same settings measured twice: the lab's noise): "
              "%.2f-%.2f (%d cells).  " % (min(c[3] for c in kept), max(c[3] for c in kept), len(kept)))
    print("Bound efficiency of the chosen plans: median %.2f, min %.2f." % (med([c[5] for c in cells]), min(c[5] for c in cells)))

# the calibration each layout and rate planned with (CALIBRATION=lab: the
# constants measured across the links, and the margins from held-out models)
calibs = sorted(glob.glob(os.path.join(out, "raw", "*", "*", "calibration.yaml")))
if calibs:
    print("\n## Calibration per layout and rate\n")
    for path in calibs:
        lay, rate = path.split(os.sep)[-3:-1]
        lines = [l.rstrip("\n") for l in open(path)]
        keys = [l for l in lines if l and not l.startswith("#") and not l.startswith("autosync_costs")]
        print("- %s %s: %s" % (lay, rate, ", ".join(keys)))
        for l in lines:
            if l.startswith("# ") and "optimism" in l:
                print("  - held out: %s" % l[2:])
