#!/usr/bin/env python3
"""check_table.py - for tests/gpu/nccl-check.sh: compare what the NCCL tuner
plugin logged and what the profiler saw NCCL run with the plan's nccl table.

  check_table.py decisions PLAN NCCL_LOG NRANKS
      every "autosync tuner: FUNC BYTES bytes on NRANKS ranks: ALGO/PROTO
      [, N channels] [, the rule's P disabled] (plan rule [LO, HI))" line
      names the plan rule for that size, with its algorithm and channel
      count, and its protocol unless the log says NCCL disabled it; the
      all-reduce sizes and the other collectives of coll2.c all appear.
  check_table.py report NCCL_LOG REPORT NRANKS
      every "# coll" line of the profiler report (what NCCL actually ran)
      whose size the tuner decided shows that decision's algorithm and
      protocol, and no more channels than the tuner asked for.
Prints what it compared; exits 0 when everything agrees."""
import re
import sys

OPEN = 2 ** 64 - 1
RULE = re.compile(r"^\s*- \{coll: (\w+), min_bytes: (\d+)(?:, max_bytes: (\d+))?, "
                  r"algorithm: (\w+), protocol: (\w+), channels: (\d+)\}\s*$")
DECISION = re.compile(r"autosync tuner: (\w+) (\d+) bytes on (\d+) ranks: (\w+)/(\w+)"
                      r"(?:, (\d+) channels)?(?:, the rule's (\w+) disabled)? "
                      r"\((plan|file) rule \[(\d+), (\d+)\)\)")
UNMODELLED = re.compile(r"autosync tuner: (\w+) (\d+) bytes on (\d+) ranks: NCCL's choice "
                        r"\(it rates an algorithm the plan does not model faster\)")
COLL = re.compile(r"^# coll (\w+) (\w+) (\w+) channels=(\d+) bytes=\[(\d+),(\d+)\) n=(\d+)")
WANT_SIZES = {"allreduce": [4096, 262144, 1048576, 16777216, 67108864],
              "allgather": [2097152], "reducescatter": [2097152], "broadcast": [4194304]}


def plan_rules(path):
    rules, section = [], None
    for line in open(path):
        if not line.startswith(" "):
            section = line.split(":", 1)[0].strip()
            continue
        if section == "nccl":
            m = RULE.match(line)
            if not m:
                sys.exit("check_table: %s: cannot read nccl rule %r" % (path, line))
            f, lo, hi, a, p, ch = m.groups()
            rules.append((f, int(lo), int(hi) if hi else OPEN, a, p, int(ch)))
    return rules


def decisions(path, nranks):
    out = []
    for line in open(path, errors="replace"):
        m = DECISION.search(line)
        if m and int(m.group(3)) == nranks:
            f, b, _, a, p, ch, dis, src, lo, hi = m.groups()
            out.append(dict(func=f, bytes=int(b), algo=a, proto=p, ch=int(ch or 0),
                            disabled=dis, src=src, lo=int(lo), hi=int(hi)))
    return out


def check_decisions(plan, log, nranks):
    rules, ds, bad = plan_rules(plan), decisions(log, nranks), 0
    if not rules:
        print("# the plan has no nccl table")
        return 1
    seen = {}
    for line in open(log, errors="replace"):
        m = UNMODELLED.search(line)
        if m and int(m.group(3)) == nranks:
            seen.setdefault(m.group(1), set()).add(int(m.group(2)))
            print("# %s %s bytes: NCCL rates an algorithm autosync does not model "
                  "(PAT, NVLS, CollNet) faster: left to NCCL" % (m.group(1), m.group(2)))
    for d in ds:
        if d["src"] != "plan":
            continue
        r = [x for x in rules if x[0] == d["func"] and x[1] <= d["bytes"] < x[2]]
        want = r[0] if r else None
        good = (want is not None and (want[1], want[2]) == (d["lo"], d["hi"])
                and want[3] == d["algo"] and want[5] == d["ch"]
                and (want[4] == d["proto"] or d["disabled"] == want[4]))
        seen.setdefault(d["func"], set()).add(d["bytes"])
        if not good:
            bad += 1
            print("# MISMATCH %s %d bytes: tuner %s/%s %d channels [%d, %d); plan %s"
                  % (d["func"], d["bytes"], d["algo"], d["proto"], d["ch"], d["lo"], d["hi"], want))
    for f, sizes in WANT_SIZES.items():
        for b in sizes:
            if b not in seen.get(f, ()):
                bad += 1
                print("# no plan-rule decision logged for %s of %d bytes" % (f, b))
    print("# %d decisions compared with %d plan rules, %d problems"
          % (sum(len(v) for v in seen.values()), len(rules), bad))
    return 1 if bad else 0


def check_report(log, report, nranks):
    ds = {(d["func"], d["bytes"]): d for d in decisions(log, nranks)}
    bad = compared = 0
    for line in open(report):
        m = COLL.match(line)
        if not m:
            continue
        func, algo, proto, ch, lo = m.group(1).lower(), m.group(2).lower(), \
            m.group(3).lower(), int(m.group(4)), int(m.group(5))
        # the profiler counts a rank's elements; NCCL's nBytes for all-gather
        # and reduce-scatter is the whole buffer
        size = lo * nranks if func in ("allgather", "reducescatter") else lo
        d = ds.get((func, size))
        if not d:
            continue
        compared += 1
        if algo != d["algo"] or proto != d["proto"] or (d["ch"] and ch > d["ch"]):
            bad += 1
            print("# MISMATCH %s: NCCL ran %s/%s on %d channels, the tuner said %s/%s %d"
                  % (line.strip(), algo, proto, ch, d["algo"], d["proto"], d["ch"]))
        else:
            print("# %s %d bytes: NCCL ran %s/%s on %d channel(s), as the tuner said (%s)"
                  % (func, size, algo, proto, ch, "%d asked" % d["ch"] if d["ch"] else "count NCCL's"))
    if compared < len(WANT_SIZES["allreduce"]):
        print("# only %d report lines matched a tuner decision" % compared)
        bad += 1
    return 1 if bad else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "decisions":
        return check_decisions(argv[2], argv[3], int(argv[4]))
    if len(argv) == 5 and argv[1] == "report":
        return check_report(argv[2], argv[3], int(argv[4]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
