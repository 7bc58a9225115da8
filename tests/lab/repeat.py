#!/usr/bin/env python3
"""repeat.py OUTDIR [EARLIER] - the lab's repeatability: the same strategies of each
cell timed twice (tests/lab/dataset.sh with REPEAT=1: OUTDIR/raw/*.jsonl and
OUTDIR/repeat/*.jsonl). Per cell: Kendall tau-b and pairwise agreement of the
first run's medians against the second's, the ceiling any simulator can reach
on these measurements; pairs closer than TIE (2 %) in the first run are left
out, as autosync eval leaves them out. Top-1 regret both ways: the first
run's fastest strategy as the second run timed it, over the second run's
fastest, and the other way round; what a perfect predictor of one run
scores against the other, the ceiling for autosync eval's regret. Prints a
Markdown table.

EARLIER: a directory with the same cells' files from another session (the
dataset's raw/): then a second table, three runs per cell, each run in turn
ranked by the geometric mean of the other two (closer to a predictor that
knows each strategy's true time than one run is), with that pick's regret
in the run left out, and the mean of the three."""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labstats import kendall_tau_b  # noqa: E402

TIE = 0.02


def medians(path):
    out = {}
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("ok") and r.get("steps"):
                out[r["strategy"]] = statistics.median(r["steps"])
    return out


def pairwise(x, y):
    agree = n = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            if abs(x[i] - x[j]) / min(x[i], x[j]) < TIE:
                continue
            n += 1
            agree += (x[i] < x[j]) == (y[i] < y[j])
    return agree / n if n else float("nan"), n


def main():
    out = sys.argv[1]
    rows, taus, pws, regs = [], [], [], []
    for name in sorted(os.listdir(os.path.join(out, "repeat"))):
        if not name.endswith(".jsonl"):
            continue
        a = medians(os.path.join(out, "raw", name))
        b = medians(os.path.join(out, "repeat", name))
        keys = sorted(set(a) & set(b))
        if len(keys) < 3:
            continue
        x, y = [a[k] for k in keys], [b[k] for k in keys]
        t = kendall_tau_b(x, y)
        p, n = pairwise(x, y)
        rel = statistics.median(abs(v - u) / u for u, v in zip(x, y))
        ab = y[x.index(min(x))] / min(y)
        ba = x[y.index(min(y))] / min(x)
        rows.append((name[:-6], len(keys), n, p, t, rel, ab, ba))
        taus.append(t)
        pws.append(p)
        regs += [ab, ba]
    print("| cell | strategies | pairs | pairwise | tau_b | median abs change "
          "| regret 1st->2nd | regret 2nd->1st |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %d | %.3f | %.3f | %.1f %% | %.3f | %.3f |" % (
            r[0], r[1], r[2], r[3], r[4], 100 * r[5], r[6], r[7]))
    if rows:
        print("| **median over %d cells** | | | %.3f | %.3f | | %s |" % (
            len(rows), statistics.median(pws), statistics.median(taus),
            "mean of both ways %.3f, median %.3f" % (
                statistics.mean(regs), statistics.median(regs))))


def three_runs(out, earlier):
    print()
    print("| cell | strategies | regret, each run ranked by the other two | mean |")
    print("|---|---:|---|---:|")
    means = []
    for name in sorted(os.listdir(os.path.join(out, "repeat"))):
        if not name.endswith(".jsonl") or not os.path.exists(
                os.path.join(earlier, name)):
            continue
        runs = [medians(os.path.join(d, name)) for d in (
            earlier, os.path.join(out, "raw"), os.path.join(out, "repeat"))]
        keys = sorted(set(runs[0]) & set(runs[1]) & set(runs[2]))
        if len(keys) < 3:
            continue
        regs = []
        for k in range(3):
            o = [runs[j] for j in range(3) if j != k]
            pick = min(keys, key=lambda s: o[0][s] * o[1][s])
            regs.append(runs[k][pick] / min(runs[k][s] for s in keys))
        means.append(statistics.mean(regs))
        print("| %s | %d | %s | %.3f |" % (
            name[:-6], len(keys), ", ".join("%.3f" % r for r in regs),
            means[-1]))
    if means:
        print("| **mean over %d cells** | | | %.3f |" % (
            len(means), statistics.mean(means)))


if __name__ == "__main__":
    main()
    if len(sys.argv) > 2:
        three_runs(sys.argv[1], sys.argv[2])
