"""compare.py - held-out fidelity: the same measured strategies (seeds 51-100 +
the named ones) against default and calibrated predictions."""
import json, os, statistics as st, sys


here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "tests", "lab"))
from labstats import kendall_tau_b, spearman  # noqa: E402


def pred_of(path):
    for line in open(path):
        if line.strip().startswith("step_time:") and line.startswith("  "):
            return float(line.split(":")[1])
    return float("nan")


print("| model | constants | strategies | Kendall tau-b | Spearman rho | mean abs. error | mean signed error | autosync plan measured s | its prediction s |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for m in ["vgg16", "bert-large", "gpt2"]:
    rows = [json.loads(l) for l in open(os.path.join(here, "raw", m + "-calibrated.jsonl"))]
    meas = {r["strategy"]: st.median(r["steps"]) for r in rows if r["steps"]}
    for kind in ["default", "calibrated"]:
        x, y = [], []
        for s, t in meas.items():
            if s == "autosync":
                continue  # a different plan under each set of constants
            p = pred_of(os.path.join(here, "plans", "%s-%s" % (m, kind), s + ".yaml"))
            x.append(p)
            y.append(t)
        ap = pred_of(os.path.join(here, "plans", "%s-%s" % (m, kind), "autosync.yaml"))
        mape = st.mean(abs(p - t) / t for p, t in zip(x, y))
        mse = st.mean(p / t - 1 for p, t in zip(x, y))
        print("| %s | %s | %d | %.2f | %.2f | %.0f%% | %+.0f%% | %s | %.3f |" % (
            m, kind, len(x), kendall_tau_b(x, y), spearman(x, y), 100 * mape, 100 * mse,
            "%.3f" % meas["autosync"] if kind == "calibrated" else "-", ap))
