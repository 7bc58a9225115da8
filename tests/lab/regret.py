#!/usr/bin/env python3
"""regret.py jobs PICKS FEEDBACK | summary PICKS OUTDIR - top-1 regret with
the picks timed again, side by side (tests/lab/regret.sh).

A dataset's top-1 regret divides the measured time of the predicted best by
the group's fastest measurement. With a few timed steps per strategy that
fastest measurement is the luckiest of 30-46 draws, so the regret of even a
perfect predictor is above 1 (the lab's ceiling, tests/lab/repeat.py).
regret.sh times again, interleaved in one run, each group's dataset best,
the analytic simulator's pick and the learned one's (autosync eval --picks:
sets "recorded" and "cv-model"); this script says which strategies that is
and then what the rounds show.

jobs: one line per group where a pick is not the measured best:
  RATE LAYOUT MODEL SCALE TAG then HASH=STRATEGY for each distinct plan
  (best first), STRATEGY a bench name (autosync, a baseline, random-SEED).
TOPK=K (env): every group, its K fastest strategies as the dataset measured
  them timed as well (the pick and the best are then among K + 2 plans), so
  that a pick the dataset called the best is timed against others too;
  summary then divides each pick's time (median over rounds) by the
  fastest of the group's re-timed plans.
summary: per group, per predictor, the dataset's regret and the re-timed
  one (median over rounds of the per-round ratio of medians, with its range);
  then the mean over every group (a pick that is the dataset's best counts
  1 in both; a re-timed ratio below 1, the pick faster than the dataset's
  best, counts 1), and that mean per cluster. A group whose re-timed plans
  do not have the records' hashes (for a random plan: the hash its file
  was written with, OUTDIR/raw/TAG.made) is named and left out of the
  re-timed mean."""
import json
import os
import statistics
import sys

# the two sets of picks compared; REGRET_SETS="A,B" names two others (e.g.
# tests/lab/transfer.py's k20,k200), whose groups share their best
SETS = tuple(os.environ.get("REGRET_SETS", "recorded,cv-model").split(","))
NAMES = {"recorded": "analytic", "cv-model": "learned (leave-one-model-out)"}
SHORT = {"recorded": "analytic", "cv-model": "learned"}
TOPK = int(os.environ.get("TOPK", "0") or 0)


def read_picks(path):
    groups = {}
    with open(path) as f:
        for line in f:
            s, model, cluster, picked, best, ps, bs = line.rstrip("\n").split("\t")
            groups.setdefault((model, cluster), {})[s] = (picked, best, float(ps), float(bs))
    return {k: v for k, v in groups.items() if all(s in v for s in SETS)}


def bench_name(strategy):
    return "autosync" if strategy.startswith("autosync") else strategy


def group_of(r):
    """a record's (model label, cluster label), as autosync eval names them"""
    sc = r.get("scale", 1)
    label = r["model"] if sc == 1 else "%s@1/%g" % (r["model"], sc)
    nic = [x for x in r["cluster"].split(",") if x.startswith("nics=")][0]
    bps = float(nic.split("x")[1].split("B/s")[0]) * 8
    rate = "%gGbit/s" % (bps / 1e9) if bps >= 1e9 else "%gMbit/s" % (bps / 1e6)
    return (label, "%dx%d %s" % (r["nodes"], r["gpus_per_node"], rate))


def records(feedback):
    """the records of a feedback log that parse"""
    with open(feedback) as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


def strategies(feedback):
    """plan hash -> bench strategy name, per (model label, cluster label)"""
    out = {}
    for r in records(feedback):
        out.setdefault(group_of(r), {})[r["plan_hash"]] = bench_name(r["strategy"])
    return out


def fastest(feedback):
    """(model label, cluster label) -> plan hashes, fastest first, by the
    median of their records' median step times"""
    times = {}
    for r in records(feedback):
        steps = r.get("measured_step_s") or []
        if steps:
            times.setdefault(group_of(r), {}).setdefault(r["plan_hash"], []).append(statistics.median(steps))
    return {k: [h for _, h in sorted((statistics.median(v), h) for h, v in g.items())]
            for k, g in times.items()}


def split_cluster(cluster):
    lay, rate = cluster.split()
    return rate.replace("Gbit/s", "gbit").replace("Mbit/s", "mbit"), lay


def split_model(label):
    name, _, sc = label.partition("@1/")
    return name, sc or "1"


def tag(model, cluster):
    rate, lay = split_cluster(cluster)
    return "%s-%s-%s" % (rate, lay, split_model(model)[0])


def plans_of(g):
    """the group's distinct plans, the dataset's best first"""
    out = [g[SETS[0]][1]]
    for s in SETS:
        for h in g[s][:2]:
            if h not in out:
                out.append(h)
    return out


def jobs(picks, feedback):
    names = strategies(feedback)
    top = fastest(feedback) if TOPK else {}
    for (model, cluster), g in sorted(read_picks(picks).items()):
        if not TOPK and all(g[s][0] == g[s][1] for s in SETS):
            continue
        known = names.get((model, cluster), {})
        hs = plans_of(g)
        hs += [h for h in top.get((model, cluster), [])[:TOPK] if h not in hs]
        missing = [h for h in hs if h not in known]
        if missing:
            sys.stderr.write("regret.py: %s %s: no record names plan %s\n" % (model, cluster, " ".join(missing)))
            continue
        rate, lay = split_cluster(cluster)
        name, sc = split_model(model)
        print(rate, lay, name, sc, tag(model, cluster), " ".join("%s=%s" % (h, known[h]) for h in hs))


def timed(outdir, t):
    """[(plan hash, [median of each round])] in the order strategies were
    given: the feedback records are in that order, and so are each round's
    -o lines (by position: bench truncates long strategy names)"""
    per_round = {}
    with open(os.path.join(outdir, "raw", t + ".jsonl")) as f:
        for line in f:
            r = json.loads(line)
            ok = r.get("ok") and r.get("steps")
            per_round.setdefault(r["round"], []).append(statistics.median(r["steps"]) if ok else None)
    with open(os.path.join(outdir, "raw", t + ".feedback.jsonl")) as f:
        hs = [json.loads(line)["plan_hash"] for line in f]
    rounds = [v for _, v in sorted(per_round.items()) if len(v) == len(hs)]
    return [(h, [r[i] for r in rounds if r[i] is not None]) for i, h in enumerate(hs)]


def made(outdir, t):
    """recorded hash -> the hash the re-made plan file was written with
    (regret.sh loads random plans without it: see there)"""
    out = {}
    path = os.path.join(outdir, "raw", t + ".made")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) == 3:
                    out[w[0]] = w[2]
    return out


def read_jobs(outdir):
    """tag -> {plan hash: strategy}, as regret.sh was given them"""
    job = {}
    with open(os.path.join(outdir, "jobs.txt")) as f:
        for line in f:
            w = line.split()
            job[w[4]] = dict(x.split("=") for x in w[5:])
    return job


def check_retimed(outdir, t, job):
    """group t's plan hashes as given, what timed() read, and why the
    group cannot be scored (None when it can: every plan timed in some
    round, with its record's hash)"""
    try:
        got = timed(outdir, t) if t in job else None
    except (OSError, ValueError, KeyError):
        got = None
    if not got or any(not ms for _, ms in got):
        return None, None, "not timed"
    want, mk = list(job[t]), made(outdir, t)
    seen = [w if h == w or mk.get(w) == w else "(%s)" % h for (h, _), w in zip(got, want)]
    if seen != want:
        return None, None, "the re-timed plans' hashes %s are not the records' %s" % (
            " ".join(seen), " ".join(want))
    return want, got, None


def summary(picks, outdir):
    job = read_jobs(outdir)
    rows, skipped = [], []
    regret, retimed, raw = ({s: [] for s in SETS} for _ in range(3))
    cl = {}
    for (model, cluster), g in sorted(read_picks(picks).items()):
        t = tag(model, cluster)
        for s in SETS:
            regret[s].append(g[s][2] / g[s][3])
        if all(g[s][0] == g[s][1] for s in SETS):
            for s in SETS:
                retimed[s].append(1.0)
                raw[s].append(1.0)
                cl.setdefault(cluster, {x: [] for x in SETS})[s].append(1.0)
            continue
        want, got, why = check_retimed(outdir, t, job)
        if why:
            skipped.append("%s %s: %s" % (model, cluster, why))
            continue
        rn = {w: ms for w, (_, ms) in zip(want, got)}
        best = rn[g[SETS[0]][1]]
        cells = []
        for s in SETS:
            p = rn[g[s][0]]
            r = sorted(a / b for a, b in zip(p, best))
            med = statistics.median(r)
            retimed[s].append(max(1.0, med))
            raw[s].append(med)
            cl.setdefault(cluster, {x: [] for x in SETS})[s].append(max(1.0, med))
            cells.append("%.3f | %s | %.3f (%.3f-%.3f)" % (
                g[s][2] / g[s][3], "=" if g[s][0] == g[s][1] else job[t][g[s][0]], med, r[0], r[-1]))
        rows.append("| %s | %s | %s | %s | %d |" % (model, cluster, job[t][g[SETS[0]][1]], " | ".join(cells), len(best)))
    print("| model | cluster | dataset best | %s: dataset regret | pick | re-timed (range) "
          "| %s: dataset regret | pick | re-timed (range) | rounds |" % tuple(SHORT.get(s, s) for s in SETS))
    print("|---|---|---|---:|---|---|---:|---|---|---:|")
    print("\n".join(rows))
    print()
    print("| predictions | groups | dataset regret (mean) | groups re-timed | re-timed regret (mean, below 1 counted 1) "
          "| re-timed, as measured (mean) | groups re-timed above 1.05 |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for s in SETS:
        print("| %s | %d | %.3f | %d | %.3f | %.3f | %d |" % (
            NAMES.get(s, s), len(regret[s]), statistics.mean(regret[s]), len(retimed[s]),
            statistics.mean(retimed[s]), statistics.mean(raw[s]), sum(x > 1.05 for x in retimed[s])))
    print()
    print("| cluster | groups re-timed | %s: re-timed regret | %s |" % tuple(SHORT.get(s, s) for s in SETS))
    print("|---|---:|---:|---:|")
    for c in sorted(cl):
        print("| %s | %d | %s |" % (c, len(cl[c][SETS[0]]), " | ".join("%.3f" % statistics.mean(cl[c][s]) for s in SETS)))
    for x in skipped:
        print("\nleft out: " + x)


def summary_topk(picks, outdir):
    """every group re-timed with its dataset's K fastest: a pick's regret is
    its median over rounds ÷ the smallest such median in the group"""
    job = read_jobs(outdir)
    rows, skipped, cl = [], [], {}
    regret = {s: [] for s in SETS}
    retimed = {s: [] for s in SETS + ("best",)}
    for (model, cluster), g in sorted(read_picks(picks).items()):
        t = tag(model, cluster)
        want, got, why = check_retimed(outdir, t, job)
        if why:
            skipped.append("%s %s: %s" % (model, cluster, why))
            continue
        med = {w: statistics.median(ms) for w, (_, ms) in zip(want, got)}
        best = min(med.values())
        fast = min(med, key=med.get)
        cells = []
        for s in SETS + ("best",):
            h = g[SETS[0]][1] if s == "best" else g[s][0]
            r = med[h] / best
            retimed[s].append(r)
            cl.setdefault(cluster, {x: [] for x in SETS + ("best",)})[s].append(r)
            if s != "best":
                regret[s].append(g[s][2] / g[s][3])
                cells.append("%.3f | %s | %.3f" % (g[s][2] / g[s][3], "=" if h == g[s][1] else job[t][h], r))
            else:
                cells.append("%.3f" % r)
        rows.append("| %s | %s | %d | %s | %s |" % (model, cluster, len(want), job[t][fast], " | ".join(cells)))
    print("| model | cluster | plans re-timed | re-timed fastest | %s: dataset regret | pick | re-timed regret "
          "| %s: dataset regret | pick | re-timed regret | dataset best, re-timed |" % tuple(SHORT.get(s, s) for s in SETS))
    print("|---|---|---:|---|---:|---|---:|---:|---|---:|---:|")
    print("\n".join(rows))
    print()
    print("| predictions | groups re-timed | dataset regret (mean) | re-timed regret (mean) | median | groups above 1.05 |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in SETS + ("best",):
        name = "the dataset's measured best" if s == "best" else NAMES.get(s, s)
        print("| %s | %d | %s | %.3f | %.3f | %d |" % (
            name, len(retimed[s]), "%.3f" % statistics.mean(regret[s]) if s in regret else "1",
            statistics.mean(retimed[s]), statistics.median(retimed[s]), sum(x > 1.05 for x in retimed[s])))
    print()
    print("| cluster | groups | %s | %s | dataset best |" % tuple(SHORT.get(s, s) for s in SETS))
    print("|---|---:|---:|---:|---:|")
    for c in sorted(cl):
        print("| %s | %d | %s |" % (c, len(cl[c][SETS[0]]), " | ".join(
            "%.3f" % statistics.mean(cl[c][s]) for s in SETS + ("best",))))
    for x in skipped:
        print("\nleft out: " + x)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "jobs":
        jobs(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "summary":
        (summary_topk if TOPK else summary)(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
