"""summarize.py OUTDIR - markdown tables from a tests/lab/bench.sh run.

Per network setting and model: every named strategy's predicted step time
(simulator) and measured step times (slowest rank per step, all rounds):
median, spread = (max - min) / median over the per-round medians, and the
ratio baseline / autosync = median over rounds of the per-round ratio
(the runs are interleaved A B A B, so each round is a paired comparison).
Prediction fidelity over the random and named strategies: Kendall tau-b,
Spearman rho, mean absolute percentage error, mean signed error, top-1
regret. PyTorch DDP defaults vs the autosync plan through the adapter.
"""
import glob
import json
import os
import statistics as st
import sys

out = sys.argv[1]


def load(path):
    rows = []
    if os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def med(v):
    return st.median(v) if v else float("nan")


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labstats import kendall_tau_b, ranks, spearman  # noqa: E402


def f(t):
    return "%.3f" % t if t == t else "-"


print("# Lab benchmark summary\n")
if os.path.exists(os.path.join(out, "setup.txt")):
    print("```\n" + open(os.path.join(out, "setup.txt")).read().strip() + "\n```\n")

rates = sorted(d for d in os.listdir(os.path.join(out, "raw")) if os.path.isdir(os.path.join(out, "raw", d)))
rates.sort(key=lambda r: -float(r.replace("gbit", "e9").replace("mbit", "e6")) if r[0].isdigit() else 0)
fidelity = []
honest = {}
for rate in rates:
    print("## %s per link\n" % rate)
    for path in sorted(glob.glob(os.path.join(out, "raw", rate, "*.jsonl"))):
        base = os.path.basename(path)[:-6]
        if base.endswith("-ddp") or base.startswith("side-"):
            continue
        rows = load(path)
        if not rows:
            continue
        named = [r for r in rows if not r["random"]]
        rand = [r for r in rows if r["random"]]
        strategies = []
        for r in named:
            if r["strategy"] not in strategies:
                strategies.append(r["strategy"])
        per = {s: [r for r in named if r["strategy"] == s] for s in strategies}
        r0 = rows[0]
        # records before 2026-12-03 carry no "knobs": they were absolute
        knobs = r0.get("knobs", "absolute")
        print("### %s (gradients / %g: %s), %d ranks on %d nodes, %s size knobs\n" % (
            r0["model"], r0["scale"], r0["scaled"], r0["ranks"], r0["nodes"], knobs))
        print("| strategy | plan strategy | buckets | predicted s | measured median s | spread | measured / predicted | ratio to autosync (measured) | ratio to autosync (predicted) | sums |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        auto = {r["round"]: med(r["steps"]) for r in per.get("autosync", [])}
        pa = per["autosync"][0]["predicted"] if per.get("autosync") else float("nan")
        for s in strategies:
            rs = per[s]
            allsteps = [t for r in rs for t in r["steps"]]
            rmeds = [med(r["steps"]) for r in rs if r["steps"]]
            m = med(allsteps)
            spread = (max(rmeds) - min(rmeds)) / m if rmeds and m else float("nan")
            ratios = [med(r["steps"]) / auto[r["round"]] for r in rs if r["round"] in auto and r["steps"]]
            p = rs[0]["predicted"]
            print("| %s | %s | %d | %s | %s | ±%.0f%% | %s | %s | %s | %s |" % (
                s, rs[0]["plan_strategy"], rs[0]["nbuckets"], f(p), f(m), 100 * spread, f(m / p if p else float("nan")),
                f(med(ratios)), f(p / pa if pa == pa and pa else float("nan")),
                "ok" if all(r["ok"] for r in rs) else "WRONG"))
        print()
        if rand:
            pts = [(r["predicted"], med(r["steps"])) for r in rand + [per[s][0] for s in strategies] if r["steps"]]
            # named strategies: use the median over all rounds
            pts = [(r["predicted"], med(r["steps"])) for r in rand if r["steps"]] + \
                  [(per[s][0]["predicted"], med([t for r in per[s] for t in r["steps"]])) for s in strategies]
            x = [p for p, _ in pts]
            y = [m for _, m in pts]
            tau = kendall_tau_b(x, y)
            rho = spearman(x, y)
            mape = st.mean(abs(p - m) / m for p, m in pts)
            mse = st.mean(p / m - 1 for p, m in pts)
            best_pred = min(range(len(pts)), key=lambda i: x[i])
            regret = y[best_pred] / min(y)
            fidelity.append((rate, r0["model"], len(pts), len(rand), tau, rho, mape, mse, regret))
        if r0["scale"] > 1:
            for s in ("ddp-default", "horovod-default"):
                ratios = [med(r["steps"]) / auto[r["round"]] for r in per.get(s, []) if r["round"] in auto and r["steps"]]
                if ratios:
                    honest.setdefault((rate, r0["model"], s), {})[knobs] = (
                        med(ratios), min(ratios), max(ratios), per[s][0]["nbuckets"], per["autosync"][0]["nbuckets"])
def cell(v):
    return "%.2f (%.2f-%.2f; %d vs %d buckets)" % v if v else "-"


if honest:
    print("## Baselines with absolute vs scaled size knobs (ratio baseline / autosync plan, median of rounds, min-max; buckets baseline vs plan)\n")
    print("With gradients scaled down by S, `absolute` keeps each framework's default bucket cap / fusion threshold, so the")
    print("baseline gets a few huge buckets the full-size job never has; `scaled` divides them (and autosync's search grid) by S.\n")
    print("| rate | model | baseline | absolute knobs (before) | scaled knobs (honest) |")
    print("|---|---|---|---|---|")
    for (rate, model, s), v in honest.items():
        print("| %s | %s | %s | %s | %s |" % (rate, model, s, cell(v.get("absolute")), cell(v.get("scaled"))))
    print()
if fidelity:
    print("## Simulator fidelity (random valid strategies + the named ones, measured median vs prediction)\n")
    print("| rate | model | strategies | of them random | Kendall tau-b | Spearman rho | mean abs. error | mean signed error (pred/meas - 1) | top-1 regret |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for rate, model, n, nr, tau, rho, mape, mse, regret in fidelity:
        print("| %s | %s | %d | %d | %.2f | %.2f | %.0f%% | %+.0f%% | %.2f |" % (rate, model, n, nr, tau, rho, 100 * mape, 100 * mse, regret))
    print()


def family(plan_path):
    """the bucket type that carries most of a plan's gradient bytes:
    ps, tree, 16-bit (compressed all-reduce) or fp32 ring/hier/auto"""
    if not os.path.exists(plan_path):
        return "?"
    share = {}
    cur = None
    for line in open(plan_path):
        t = line.strip()
        if line.lstrip(" ").startswith("- id:"):  # "- id:" (libyaml) or "  - id:"
            cur = {"kind": "", "algo": "", "comp": "none"}
        elif cur is None:
            continue
        elif t.startswith("kind:"):
            cur["kind"] = t.split(":", 1)[1].strip()
        elif t.startswith("algorithm:"):
            cur["algo"] = t.split(":", 1)[1].strip()
        elif t.startswith("compression:"):
            cur["comp"] = t.split(":", 1)[1].strip()
        elif t.startswith("bytes:"):
            if cur["kind"] == "ps":
                k = "ps"
            elif cur["comp"] != "none":
                k = "16-bit all-reduce"
            elif cur["algo"] == "tree":
                k = "tree (fp32)"
            else:
                k = "ring/hier/auto (fp32)"
            share[k] = share.get(k, 0) + float(t.split(":", 1)[1])
    return max(share, key=share.get) if share else "?"


fam_rows = []
for rate in rates:
    for path in sorted(glob.glob(os.path.join(out, "raw", rate, "*.jsonl"))):
        base = os.path.basename(path)[:-6]
        if base.endswith("-ddp") or base.startswith("side-"):
            continue
        rows = [r for r in load(path) if r["random"] and r["steps"]]
        if not rows:
            continue
        groups = {}
        for r in rows:
            fam = family(os.path.join(out, "plans", rate, base, r["strategy"] + ".yaml"))
            groups.setdefault(fam, []).append(med(r["steps"]) / r["predicted"])
        for fam in sorted(groups):
            v = groups[fam]
            fam_rows.append((rate, rows[0]["model"], fam, len(v), med(v), min(v), max(v)))
if fam_rows:
    print("## Where the simulator is wrong: measured / predicted of the random strategies, by the bucket type that carries most of their bytes\n")
    print("| rate | model | most bytes in | strategies | median measured/predicted | min | max |")
    print("|---|---|---|---:|---:|---:|---:|")
    for rate, model, fam, n, m, lo, hi in fam_rows:
        print("| %s | %s | %s | %d | %.2f | %.2f | %.2f |" % (rate, model, fam, n, m, lo, hi))
    print()

ddp = []
for rate in rates:
    for path in sorted(glob.glob(os.path.join(out, "raw", rate, "*-ddp.jsonl"))):
        rows = load(path)
        if not rows:
            continue
        # "default" and the plan made with scaled knobs (directory NAME-ddp);
        # "default-absolute" and the plan made with absolute knobs
        # (NAME-ddp-absolute); files before 2026-12-03 had only "default",
        # with absolute knobs
        old = not any(r["config"] == "default-absolute" for r in rows) and "knobs" not in open(path).read()
        for dc, pdir, label in (("default", "-ddp/", "absolute (before)" if old else "scaled"),
                                ("default-absolute", "-ddp-absolute/", "absolute")):
            d = [r for r in rows if r["config"] == dc]
            p = [r for r in rows if r["config"].startswith("plan:") and pdir in r["config"]]
            if not d or not p:
                continue
            pairs = {}
            for r in d:
                pairs.setdefault(r["round"], {})["d"] = med(r["steps"])
            for r in p:
                pairs.setdefault(r["round"], {})["p"] = med(r["steps"])
            ratios = [v["d"] / v["p"] for v in pairs.values() if "d" in v and "p" in v]
            ddp.append((rate, rows[0]["model"], label, med([t for r in d for t in r["steps"]]),
                        med([t for r in p for t in r["steps"]]), med(ratios), min(ratios), max(ratios),
                        p[0]["settings"], all(r["ok"] for r in d + p), len(pairs)))
if ddp:
    print("## PyTorch DDP (gloo, CPU) on the same synthetic model: defaults vs the autosync plan (framework pytorch-ddp) through contrib/pytorch/autosync_ddp.py\n")
    print("| rate | model | size knobs | rounds | DDP default median s | DDP + autosync plan median s | ratio default / plan (min-max) | settings from the plan | grads correct |")
    print("|---|---|---|---:|---:|---:|---:|---|---|")
    for rate, model, kn, dm, pm, ratio, lo, hi, s, ok, nr in ddp:
        print("| %s | %s | %s | %d | %s | %s | %s (%s-%s) | %s | %s |" % (
            rate, model, kn, nr, f(dm), f(pm), f(ratio), f(lo), f(hi), json.dumps(s), "yes" if ok else "NO"))
    print()

side = sorted(glob.glob(os.path.join(out, "raw", "*", "side-hier-*.jsonl")))
if side:
    print("## Side experiment: hierarchical all-reduce via the node leader vs one ring per rail\n")
    print("| rate | variant | model | strategy | predicted s | measured median s |")
    print("|---|---|---|---|---:|---:|")
    for path in side:
        rate = path.split(os.sep)[-2]
        var = os.path.basename(path)[len("side-hier-"):-6]
        rows = load(path)
        for s in sorted({r["strategy"] for r in rows}):
            rs = [r for r in rows if r["strategy"] == s]
            print("| %s | %s | %s | %s | %s | %s |" % (rate, var, rs[0]["model"], s, f(rs[0]["predicted"]), f(med([t for r in rs for t in r["steps"]]))))
    print()
