#!/usr/bin/env python3
"""transfer.py AUTOSYNC FEEDBACK.jsonl TARGET-CLUSTER [SEEDS] - the transfer
curve: a base simulator trained on every cluster but the
target, adapted with k trials of the target (autosync train --base), against
one trained on the k trials alone, both scored on the target's other records
(autosync eval --simulator): pairwise accuracy and top-1 regret for k = 0, 5,
10, 20, 50, 200 (as many as the target has), mean over SEEDS draws (3).
Each draw shuffles the target's records once: the first 200 (fewer when the
target has under 300) are the pool the k trials are taken from, in order,
and the rest is the test set, the same for every k, so that the regret with
200 trials is measured on the same groups and strategies as with 20.
With PICKS=FILE in the environment, one draw's picks (PICKS_DRAW, default
0: the first; "all": every draw's, draw d to FILE.dD) with a base and 20 and 200 trials (autosync eval --picks, sets k20 and k200, one test set,
so one best per group) go to FILE, for tests/lab/regret.sh with
REGRET_SETS=k20,k200: the two picks timed again beside the best.
With TRIALS=planned, the trials are not drawn at random but taken as a
site running the loop would take them: in rounds, each round one trial per
model (models in a seeded order), the plan the current simulator ranks
fastest among that model's untried records in the pool; after each round
the simulator is adapted again (autosync train --base) on every trial so
far. Round 1 is the base's own picks. k = 200 is the whole pool either way.
TARGET-CLUSTER is a cluster label as autosync eval prints it, e.g.
"4x2 400Mbit/s"; records are matched on nodes, gpus_per_node and the NIC
speed of their 'cluster' field. Prints a Markdown table."""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

KS = (0, 5, 10, 20, 50, 200)


def label(r):
    m = re.search(r"nics=(\d+)x([0-9.e+]+)B/s", r.get("cluster", ""))
    bits = float(m.group(2)) * 8 if m else 0
    speed = "%gGbit/s" % (bits / 1e9) if bits >= 1e9 else "%gMbit/s" % (bits / 1e6)
    return "%dx%d %s" % (r.get("nodes", 0), r.get("gpus_per_node", 0), speed)


def write(path, recs):
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")


def score(autosync, sim, test, picks=None, name=None):
    cmd = [autosync, "eval"] + (["--simulator", sim] if sim else [])
    if picks:
        cmd += ["--picks", picks + ".part"]
    out = subprocess.run(cmd + [test], capture_output=True, text=True).stdout
    if picks:  # the corrected predictions' picks, as set 'name'
        with open(picks + ".part") as f, open(picks, "a") as o:
            for line in f:
                if line.startswith("corrected\t"):
                    o.write(name + line[len("corrected"):])
        os.unlink(picks + ".part")
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("all ")]
    if not rows:
        return None
    row = rows[-1]  # the corrected table when there is a simulator
    return float(row[5]), float(row[8])  # pairwise, regret


def picks_of(autosync, sim, recs, tmp):
    """plan hash of each group's pick by sim, as autosync eval --picks says"""
    path, out = os.path.join(tmp, "untried.jsonl"), os.path.join(tmp, "picks.tsv")
    write(path, recs)
    r = subprocess.run([autosync, "eval", "--simulator", sim, "--picks", out,
                        path], capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(out):
        # eval says why on stderr; without its picks the round has no trial
        sys.exit("transfer.py: autosync eval --picks failed (exit %d): %s"
                 % (r.returncode, r.stderr.strip() or "no message"))
    picked = {}
    with open(out) as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            if c[0] == "corrected":
                picked[c[1]] = c[3]
    os.unlink(out)
    return picked


def planned(autosync, base, pool, seed, kmax, tmp):
    """pool's indices in the order the loop would run them (TRIALS=planned)"""
    rng = random.Random(1000 + seed)
    order, sim = [], base
    while len(order) < kmax:
        left = [i for i in range(len(pool)) if i not in order]
        if not left:
            break
        picked = picks_of(autosync, sim, [pool[i] for i in left], tmp)
        hashes = sorted(picked.values())
        rng.shuffle(hashes)  # the models' order within the round
        for h in hashes:
            i = next((i for i in left if pool[i]["plan_hash"] == h and i not in order), None)
            if i is not None:
                order.append(i)
        if len(order) == len(pool) - len(left):
            break  # no pick matched a record: stop rather than loop
        sim = os.path.join(tmp, "loop.bin")
        if not train(autosync, sim, [pool[i] for i in order], base=base, tmp=tmp):
            sim = base
    rest = [i for i in range(len(pool)) if i not in order]
    rng.shuffle(rest)
    return order + rest


def train(autosync, out, recs, base=None, tmp="."):
    path = os.path.join(tmp, "train.jsonl")
    write(path, recs)
    cmd = [autosync, "train", "-o", out] + (["--base", base] if base else []) + [path]
    return subprocess.run(cmd, capture_output=True, text=True).returncode == 0


def main():
    autosync, feedback, target = sys.argv[1], sys.argv[2], sys.argv[3]
    seeds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    recs = [json.loads(ln) for ln in open(feedback) if ln.strip()]
    recs = [r for r in recs if r.get("measured_count", 0) >= 3]
    how = os.environ.get("TRIALS", "random")
    if how not in ("random", "planned"):
        sys.exit("transfer.py: TRIALS=%s: 'random' or 'planned'" % how)
    draw = os.environ.get("PICKS_DRAW", "0")
    if draw != "all":
        try:
            draw = int(draw)
        except ValueError:
            sys.exit("transfer.py: PICKS_DRAW=%s: a draw number or 'all'" % draw)
    tgt = [r for r in recs if label(r) == target]
    rest = [r for r in recs if label(r) != target]
    tmp = tempfile.mkdtemp(prefix="autosync-transfer.")
    base = os.path.join(tmp, "base.bin")
    if not train(autosync, base, rest, tmp=tmp):
        sys.exit("transfer.py: no base: too few records outside %s" % target)
    pool = min(max(KS), len(tgt) - max(len(tgt) // 3, 5))
    print("target %s: %d records; base trained on %d records of other clusters; %d draws;"
          " trials (%s) from a pool of %d, scored on the other %d\n"
          % (target, len(tgt), len(rest), seeds, how, pool, len(tgt) - pool))
    print("| trials | with base: pairwise | regret [min–max over draws] | without base: pairwise | regret |")
    print("|---:|---:|---:|---:|---:|")
    per = {}  # k -> the with-base regret of each draw
    orders = {}  # draw -> the target's indices: the pool in trial order, then the test set
    for seed in range(seeds):
        order = random.Random(seed).sample(range(len(tgt)), len(tgt))
        if how == "planned":
            p = [tgt[i] for i in order[:pool]]
            kmax = max(k for k in KS if k < pool) if pool > 5 else pool
            order = [order[i] for i in planned(autosync, base, p, seed, kmax, tmp)] + order[pool:]
        orders[seed] = order
    for k in KS:
        if k > pool:
            break
        acc = {"b": [], "s": []}
        for seed in range(seeds):
            order = orders[seed]
            trials = [tgt[i] for i in order[:k]]
            test = [tgt[i] for i in order[pool:]]
            tpath = os.path.join(tmp, "test.jsonl")
            write(tpath, test)
            sim = base
            if k:
                sim = os.path.join(tmp, "adapted.bin")
                if not train(autosync, sim, trials, base=base, tmp=tmp):
                    sim = None  # not the previous draw's file
            keep = os.environ.get("PICKS") if k in (20, 200) else None
            if keep and draw == "all":
                keep = "%s.d%d" % (keep, seed)
            elif draw != seed:
                keep = None
            acc["b"].append(score(autosync, sim, tpath, keep, "k%d" % k) if sim else None)
            if k >= 5:
                own = os.path.join(tmp, "own.bin")
                acc["s"].append(score(autosync, own, tpath) if train(autosync, own, trials, tmp=tmp) else None)
            else:
                acc["s"].append(score(autosync, None, tpath))  # k = 0: the analytic model
        per[k] = [x[1] if x else None for x in acc["b"]]
        def mean(v, i):
            v = [x[i] for x in v if x]
            return "%.3f" % (sum(v) / len(v)) if v else "-"
        def spread(v, i):
            v = [x[i] for x in v if x]
            return " [%.3f–%.3f]" % (min(v), max(v)) if len(v) > 1 else ""
        print("| %d | %s | %s%s | %s | %s |" % (k, mean(acc["b"], 0), mean(acc["b"], 1),
                                               spread(acc["b"], 1), mean(acc["s"], 0),
                                               mean(acc["s"], 1)))
    print("\n(k = 0 without base: the analytic model)")
    if 20 in per and 200 in per:  # the target: 20 trials within 5 % of 200
        r = [a / b for a, b in zip(per[20], per[200]) if a is not None and b is not None]
        if r:
            print("\nwith base, regret at 20 trials / at 200, per draw: %s; mean %.3f, %d of %d within 1.05"
                  % (" ".join("%.3f" % x for x in r), sum(r) / len(r),
                     sum(x <= 1.05 for x in r), len(r)))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
