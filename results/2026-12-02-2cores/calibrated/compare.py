"""compare.py - held-out fidelity: the same measured strategies (seeds 51-100 +
the named ones) against default and calibrated predictions."""
import json, os, statistics as st, sys

# (the same as tests/lab/summarize.py)
def kendall_tau_b(x, y):
    n = len(x)
    c = d = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            a = (x[i] > x[j]) - (x[i] < x[j])
            b = (y[i] > y[j]) - (y[i] < y[j])
            if a == 0 and b == 0:
                continue
            if a == 0:
                tx += 1
            elif b == 0:
                ty += 1
            elif a == b:
                c += 1
            else:
                d += 1
    den = ((c + d + tx) * (c + d + ty)) ** 0.5
    return (c - d) / den if den else float("nan")


def ranks(v):
    o = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(o):
        j = i
        while j + 1 < len(o) and v[o[j + 1]] == v[o[i]]:
            j += 1
        for k in range(i, j + 1):
            r[o[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    mx, my = st.mean(rx), st.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5
    return num / den if den else float("nan")



here = os.path.dirname(os.path.abspath(__file__))


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
