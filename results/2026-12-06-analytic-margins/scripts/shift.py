#!/usr/bin/env python3
"""shift.py AUTOSYNC BEFORE.jsonl TODAY.jsonl TEST.jsonl [DRAWS] - a file
trained on another machine's records, and how many of the new machine's
records it takes to follow the machine.

BEFORE: the records the file is trained on (another machine). TODAY: the
pool of the new machine's records the site's retrain would see (other models
than TEST's). TEST: models neither file saw, on the new machine. For k = 0,
5, 10, 20, 50, 200: the file adapted with k records of TODAY drawn at random
(autosync train --base), and a file trained on the same k records alone;
both scored on TEST (autosync eval --simulator). Mean over DRAWS draws (3).
Prints a Markdown table: pairwise, tau-b, top-1 regret, mean signed error."""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

KS = (0, 5, 10, 20, 50, 200)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def score(autosync, sim, test):
    out = run([autosync, "eval", "--simulator", sim, test]).stdout
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("all ")]
    if len(rows) < 2:
        return None
    r = rows[-1]  # the corrected table
    return float(r[5]), float(r[6]), float(r[8]), float(r[10].rstrip("%"))


def train(autosync, out, lines, tmp, base=None):
    path = os.path.join(tmp, "train.jsonl")
    with open(path, "w") as f:
        f.writelines(lines)
    cmd = [autosync, "train", "-o", out] + (["--base", base] if base else []) + [path]
    return run(cmd).returncode == 0


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    autosync, before, today, test = sys.argv[1:5]
    draws = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    pool = [ln for ln in open(today) if ln.strip() and json.loads(ln).get("measured_count", 0) >= 3]
    tmp = tempfile.mkdtemp(prefix="autosync-shift.")
    base = os.path.join(tmp, "base.bin")
    if not train(autosync, base, open(before).readlines(), tmp):
        sys.exit("shift.py: cannot train on %s" % before)
    res = {}
    for d in range(draws):
        order = list(pool)
        random.Random(d).shuffle(order)
        for k in KS:
            if k > len(order):
                continue
            if k == 0:
                res.setdefault(("base", 0), []).append(score(autosync, base, test))
                continue
            sim = os.path.join(tmp, "k.bin")
            if train(autosync, sim, order[:k], tmp, base=base):
                res.setdefault(("base", k), []).append(score(autosync, sim, test))
            if train(autosync, sim, order[:k], tmp):
                res.setdefault(("alone", k), []).append(score(autosync, sim, test))
    print("| k records of the new machine | file | pairwise | tau-b | top-1 regret | mean signed error |")
    print("|---|---|---|---|---|---|")
    for k in KS:
        for how, name in (("base", "the other machine's file, adapted"), ("alone", "trained on the k alone")):
            v = [x for x in res.get((how, k), []) if x]
            if not v:
                continue
            m = [statistics.mean(x[i] for x in v) for i in range(4)]
            print("| %d | %s | %.3f | %.3f | %.3f | %+.1f %% |" % (k, name, m[0], m[1], m[2], m[3]))
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
