#!/usr/bin/env python3
"""corrupt.py AUTOSYNC SIMULATOR.bin SIMULATOR.json XGB-LOAD OUT.tsv [N] -
damaged copies of a binary simulator file, N seeds (default 300): cut
short, 1-8 bytes changed, or both. Each is given to `autosync plan
--simulator` (the loader autosync ships: header checked, then XGBoost), its
bare UBJSON (the header removed, damaged the same way) to XGBoost's own
loader, and the JSON file of the same trees, damaged the same way, to
`autosync plan --simulator`. Counts
outcomes: loaded, refused (a warning / an error), crashed (a signal).
AUTOSYNC_SIMULATOR_MODULE must name the module when autosync is a build's."""
import os, random, subprocess, sys, tempfile

autosync, sim, simjson, xgb, out = sys.argv[1:6]
n = int(sys.argv[6]) if len(sys.argv) > 6 else 300
data = open(sim, "rb").read()
jdata = open(simjson, "rb").read()
bare = data[data.index(b"\n") + 1:]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
topo = os.path.join(src, "tests/fixtures/topologies/hwloc-juwels-booster-4xA100-4xHDR.xml")
cat = os.path.join(src, "planner/catalog")

def damage(b, rng):
    mode = rng.randrange(3)
    b = bytearray(b)
    if mode != 0:
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    if mode != 1:
        b = b[:rng.randrange(1, len(b))]
    return bytes(b), mode

def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stderr.decode(errors="replace")

def plan(f):
    return run([autosync, "plan", "--config", "none", "--catalog", cat, "--topology", topo,
                "--nodes", "16", "--model", "resnet50", "--simulator", f, "-o", os.devnull])

# the undamaged file must load (AUTOSYNC_SIMULATOR_MODULE names the build's
# module), or every damaged one would be "refused" for another reason
rc, err = plan(sim)
if rc != 0 or err.strip():
    sys.exit("corrupt.py: the undamaged file does not load: " + err.strip())
counts = {}
with tempfile.TemporaryDirectory() as t, open(out, "w") as o:
    o.write("seed\tmode\twho\toutcome\tdetail\n")
    for seed in range(1, n + 1):
        for who, src in (("autosync", data), ("xgboost-bare-ubj", bare), ("autosync-json", jdata)):
            rng = random.Random(seed)
            b, mode = damage(src, rng)
            f = os.path.join(t, "f")
            open(f, "wb").write(b)
            if who != "xgboost-bare-ubj":
                rc, err = plan(f)
                outcome = "crashed" if rc < 0 else "refused" if "planning with the analytic model" in err else \
                          "loaded" if rc == 0 else "error"
                detail = err.strip().splitlines()[-1].split(": ", 3)[-1][:90] if err.strip() else ""
            else:
                rc, err = run([xgb, f])
                outcome = "crashed" if rc < 0 else "loaded" if rc == 0 else "refused"
                detail = "signal %d" % -rc if rc < 0 else ""
            counts[(who, outcome)] = counts.get((who, outcome), 0) + 1
            o.write("%d\t%s\t%s\t%s\t%s\n" % (seed, ("cut", "changed", "cut+changed")[mode], who, outcome, detail))
for k in sorted(counts):
    print("%-18s %-8s %d" % (k[0], k[1], counts[k]))
