#!/usr/bin/env python3
"""repeat.py OUTDIR - the lab's repeatability: the same strategies of each
cell timed twice (tests/lab/dataset.sh with REPEAT=1: OUTDIR/raw/*.jsonl and
OUTDIR/repeat/*.jsonl). Per cell: Kendall tau-b and pairwise agreement of the
first run's medians against the second's, the ceiling any simulator can reach
on these measurements; pairs closer than TIE (2 %) in the first run are left
out, as autosync eval leaves them out. Prints a Markdown table."""
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
    rows, taus, pws = [], [], []
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
        rows.append((name[:-6], len(keys), n, p, t, rel))
        taus.append(t)
        pws.append(p)
    print("| cell | strategies | pairs | pairwise | tau_b | median abs change |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s | %d | %d | %.3f | %.3f | %.1f %% |" % (r[0], r[1], r[2], r[3], r[4], 100 * r[5]))
    if rows:
        print("| **median over %d cells** | | | %.3f | %.3f | |" % (
            len(rows), statistics.median(pws), statistics.median(taus)))


if __name__ == "__main__":
    main()
