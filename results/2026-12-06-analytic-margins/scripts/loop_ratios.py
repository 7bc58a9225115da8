#!/usr/bin/env python3
"""loop_ratios.py LOOPDIR - tests/lab/loop.sh's round 2, per cell: what each
plan is (its strategy; ddp-default where the planner kept it), and the
default's step / the plan's step per interleaved round (each round's median
of its timed steps): the median over rounds and the range. Geometric means
over cells. Markdown."""
import glob
import math
import os
import re
import statistics
import sys

import yaml


def rounds(path):
    by = {}
    for line in open(path):
        m = re.match(r"\s*(\d+)\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+\S+\s+\S+\s+ok", line)
        if m:
            by.setdefault(m.group(2), {})[int(m.group(1))] = float(m.group(4))
    return by


def strategy(d, s):
    with open(os.path.join(d, s + ".yaml")) as f:
        return yaml.safe_load(f).get("strategy")


def main():
    top = sys.argv[1]
    print("| cell | analytic plan | default ÷ analytic, median (range) | learned plan | default ÷ learned, median (range) |")
    print("|---|---|---|---|---|")
    logs = {"autosync": [], "autosync-learned": []}
    for txt in sorted(glob.glob(os.path.join(top, "raw", "*.txt"))):
        cell = os.path.basename(txt)[:-4]
        by = rounds(txt)
        d = os.path.join(top, "plans", cell)
        row = [cell]
        for s in ("autosync", "autosync-learned"):
            strat = strategy(d, s)
            rs = [by["ddp-default"][r] / by[s][r] for r in sorted(by[s]) if r in by["ddp-default"]]
            med = statistics.median(rs)
            logs[s].append(math.log(med))
            row += [strat, "%.3f (%.3f–%.3f)" % (med, min(rs), max(rs))]
        print("| " + " | ".join(row) + " |")
    print()
    for s in logs:
        print("- %s: geometric mean of the cells' medians %.3f over %d cells" %
              (s, math.exp(statistics.mean(logs[s])), len(logs[s])))


if __name__ == "__main__":
    main()
