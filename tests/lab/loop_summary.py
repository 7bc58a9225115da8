#!/usr/bin/env python3
"""loop_summary.py OUTDIR - round 2 of tests/lab/loop.sh: per cell and
held-out model, each plan's speed-up over the framework's default
(ddp-default), measured side by side: per round the ratio of the medians,
then the median and range of those ratios over the rounds; and the
predictions the plans made. Prints Markdown."""
import json
import os
import statistics
import sys


def main():
    out = sys.argv[1]
    print("| cell | model | plan | strategy | predicted s | measured s | speed-up over default (median, range over rounds) |")
    print("|---|---|---|---|---:|---:|---|")
    for name in sorted(os.listdir(os.path.join(out, "raw"))):
        if not name.endswith(".jsonl"):
            continue
        rounds = {}
        info = {}
        for line in open(os.path.join(out, "raw", name)):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if not r.get("ok") or not r.get("steps"):
                continue
            rounds.setdefault(r["round"], {})[r["strategy"]] = statistics.median(r["steps"])
            info[r["strategy"]] = (r.get("plan_strategy", ""), r.get("predicted", 0))
        cell = name[:-6].rsplit("-", 1)
        model = name[:-6].split("-", 2)[2] if name.count("-") >= 2 else name
        allm = {}
        for rd in rounds.values():
            for s, v in rd.items():
                allm.setdefault(s, []).append(v)
        for s in ("autosync", "autosync-learned", "ddp-default"):
            if s not in allm:
                continue
            ratios = [rd["ddp-default"] / rd[s] for rd in rounds.values() if s in rd and "ddp-default" in rd]
            print("| %s | %s | %s | %s | %.4f | %.4f | %.3f (%.3f-%.3f) |" % (
                "-".join(name[:-6].split("-", 2)[:2]), model, s, info[s][0], info[s][1],
                statistics.median(allm[s]), statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
