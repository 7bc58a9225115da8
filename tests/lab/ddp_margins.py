#!/usr/bin/python3
"""ddp_margins.py RAWDIR PLANDIR - no-harm margins from held-out models.

tests/lab/ddp_bench.sh (CALIBRATION=lab) plans models that are not among
the headline ones once with no margin for compression, once with none for
DDP's hierarchical hook (the other family keeping its margin) and once with
neither, runs each plan against DDP's default in the DDP peer
(RAWDIR/RUN/NAME.jsonl, RUN compression, ddp_hier or both; plans in
PLANDIR/RUN/NAME) and appends this script's output to the calibration file
of that layout and rate.

The margin protects the default from a plan the model is optimistic
about: a plan replaces the default only when predicted faster than
(1 - m) x the default's prediction. The optimism of a plan is

    (measured plan / predicted plan) / (measured default / predicted default)

(medians over all timed steps), so a plan is taken only if it would still
win when that far off. A plan is evidence for the families it is in
(compression: an fp16/bf16 or PowerSGD hook; hierarchical: the
hierarchical hook, margin_ddp_hier), except one in both: the
planner widens a plan by the larger of its families' margins, so such a
plan counts only for the family whose margin was off when it was planned,
and for the hierarchical hook's when both were (the hook on top of a
compression that flat plans measure): flat fp16 is not held back by what
fp16 + hierarchical got wrong. A plan in neither family (plain bucketed
all-reduce, a bucket cap) is evidence for `uncertainty`, the margin every
plan must beat. Per family m = 1 - 1 / (the largest optimism of its
held-out plans), at least 0.02; a family without evidence keeps its
margin (nothing printed for it). Nothing is fitted to the headline
models.
"""
import glob
import json
import os
import statistics
import sys

import yaml

FLOOR = 0.02


def families(plan):
    env = plan.get("env") or {}
    fam = []
    if env.get("AUTOSYNC_DDP_COMM_HOOK", "none") not in ("none", ""):
        fam.append("margin_compression")
    if env.get("AUTOSYNC_DDP_ALLREDUCE") == "hierarchical":
        fam.append("margin_ddp_hier")
    return fam


def evidence(fam, run):
    """the margins a held-out plan of families 'fam', planned without the
    margin of 'run', is evidence for"""
    if not fam:
        return ["uncertainty"]
    if len(fam) > 1:
        return ["margin_" + run] if "margin_" + run in fam else ["margin_ddp_hier"]
    return fam


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw, plans = sys.argv[1:]
    worst = {}
    for path in sorted(glob.glob(os.path.join(raw, "*", "*.jsonl"))):
        run, m = path.split(os.sep)[-2], os.path.basename(path)[:-6]
        off = "compression and ddp_hier" if run == "both" else run
        with open(os.path.join(plans, run, m, "autosync.yaml")) as f:
            plan = yaml.safe_load(f)
        rows = [json.loads(line) for line in open(path) if line.startswith("{")]
        meas = {k: [t for r in rows if r["config"].split(":")[0] == k for t in r["steps"]]
                for k in ("default", "plan")}
        pred = {"plan": plan["prediction"]["step_time"],
                "default": next(b["step_time"] for b in plan["baselines"] if b["name"] == "ddp-default")}
        fam = families(plan)
        if not meas["default"] or not meas["plan"] or not all(r.get("ok") for r in rows):
            print("# %s, no margin for %s: no complete measurement, not used" % (m, off))
            continue
        md, mp = statistics.median(meas["default"]), statistics.median(meas["plan"])
        opt = (mp / pred["plan"]) / (md / pred["default"])
        print("# %s, no margin for %s (%s): predicted %.4f s against the default's %.4f s (%.2fx), measured %.4f"
              " against %.4f s (%.2fx): optimism %.3f" %
              (m, off, plan.get("strategy"), pred["plan"], pred["default"], pred["default"] / pred["plan"],
               mp, md, md / mp, opt) + (" (%s)" % " + ".join(fam) if fam else ", neither family"))
        for k in evidence(fam, run):
            worst[k] = max(worst.get(k, 0.0), opt)
    for k in sorted(worst):
        print("%s: %.3f" % (k, max(FLOOR, 1.0 - 1.0 / worst[k])))


if __name__ == "__main__":
    main()
