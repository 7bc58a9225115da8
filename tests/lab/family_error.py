#!/usr/bin/env python3
"""family_error.py FEEDBACK.jsonl... - how far the analytic prediction is from
the measurement per strategy family (learn/features.c's families, from each
record's buckets): records, median and mean of predicted / measured - 1
(negative = optimistic). Records with fewer than 3 timed steps are left out.
Prints a Markdown table per file."""
import json
import statistics
import sys

SMALL = 1 << 20  # cost constants' small_bucket_bytes (planner/costs.c)


def family(r):
    bs = r.get("buckets", [])
    scale = r.get("scale", 1) or 1
    fams, small, ar = set(), 0, 0
    for b in bs:
        if not b.get("bytes"):
            continue
        if b.get("compress", "none") != "none":
            fams.add("compression")
        if b.get("kind") == "ps":
            fams.add("parameter server")
            continue
        if b.get("algo") == "tree":
            fams.add("tree all-reduce")
        if b.get("algo") in ("hier", "hierarchical"):
            fams.add("hierarchical")
        ar += 1
        small += b["bytes"] * scale < SMALL
    if small > 8 and small * 4 > ar:
        fams.add("many small buckets")
    return fams or {"bucketed all-reduce (ring/auto)"}


def main():
    for path in sys.argv[1:]:
        by = {}
        for line in open(path):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            m = r.get("measured_step_s") or []
            if r.get("measured_count", 0) < 3 or not m or not r.get("predicted_step_s"):
                continue
            e = r["predicted_step_s"] / statistics.median(m) - 1
            for f in family(r):
                by.setdefault(f, []).append(e)
        print("%s\n" % path)
        print("| family | records | median error | mean error |")
        print("|---|---:|---:|---:|")
        for f in sorted(by):
            v = by[f]
            print("| %s | %d | %+.1f %% | %+.1f %% |" % (f, len(v), 100 * statistics.median(v), 100 * statistics.mean(v)))
        print()


if __name__ == "__main__":
    main()
