#!/bin/sh
# adapter.sh - contrib/pytorch/autosync_ddp.py without torch: plan parsing and
# precedence (environment > plan env > plan job). TAP. Skips without python3.
SRC=${AUTOSYNC_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
PY=$(command -v python3 || true)
[ -n "$PY" ] || { echo "1..0 # SKIP python3 not found"; exit 0; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cat > "$T/plan.yaml" <<'P'
autosync_plan: 1
hash: "0000000000000000"
inputs:
  model: "resnet50"
  framework: "pytorch-ddp"
strategy: "autosync-bucket-cap"
job:
  nccl_algo: ring
  compression: fp16
  bucket_cap_bytes: 4194304
  first_bucket_bytes: 524288
  cycle_time: 0
env:
  "AUTOSYNC_DDP_BUCKET_CAP_MB": "4"
  "AUTOSYNC_DDP_FIRST_BUCKET_MB": "0.5"
  "AUTOSYNC_DDP_COMM_HOOK": "fp16"
buckets: []
P
sed 's/framework: "pytorch-ddp"/framework: "generic"/; s/bucket_cap_bytes: 4194304/bucket_cap_bytes: 0/; /AUTOSYNC_DDP/d' "$T/plan.yaml" > "$T/custom.yaml"
{ cat "$T/plan.yaml"; echo 'strategy: "other"'; } > "$T/dup.yaml"
mkdir -p "$T/noyaml"; echo 'raise ImportError("hidden")' > "$T/noyaml/yaml.py"
cat > "$T/t.py" <<'PYEOF'
import os, sys
import autosync_ddp as a
d = sys.argv[1]
n = 0
def ok(c, msg):
    global n
    n += 1
    print(("ok %d - %s%s" if c else "not ok %d - %s%s") % (n + off, msg, sys.argv[3]))
off = int(sys.argv[2])
p = a.load_plan(os.path.join(d, "plan.yaml"))
ok(p["job"]["compression"] == "fp16" and p["env"]["AUTOSYNC_DDP_BUCKET_CAP_MB"] == "4", "plan sections read")
s = a.settings(p, environ={})
ok(s == {"bucket_cap_mb": 4.0, "first_bucket_bytes": 524288, "hook": "fp16"}, "settings from the plan's env: %r" % s)
s = a.settings(p, environ={"AUTOSYNC_DDP_BUCKET_CAP_MB": "8", "AUTOSYNC_DDP_COMM_HOOK": "none"})
ok(s["bucket_cap_mb"] == 8.0 and s["hook"] == "none", "the process environment wins")
del p["env"]["AUTOSYNC_DDP_BUCKET_CAP_MB"]
ok(a.settings(p, environ={})["bucket_cap_mb"] == 4.0, "job.bucket_cap_bytes when env lacks it")
ok(a.settings(None, environ={}) == {}, "no plan, no variables: DDP defaults")
bad = []
for v in ("-1", "2_5", "nan", "1e400", ""):
    try:
        a.settings(p, environ={"AUTOSYNC_DDP_BUCKET_CAP_MB": v})
    except ValueError as e:
        bad.append(str(e))
ok(len(bad) == 5 and bad[0] == "autosync: AUTOSYNC_DDP_BUCKET_CAP_MB: bad value '-1' (expected a number >= 0)",
   "bucket caps -1, 2_5, nan, 1e400 and '' refused, named: %r" % bad[:1])
bad = []
for v in ("0", "4.0", "1_0"):
    try:
        a.settings(p, environ={"AUTOSYNC_DDP_COMM_HOOK": "powersgd", "AUTOSYNC_DDP_POWERSGD_RANK": v})
    except ValueError as e:
        bad.append(str(e))
ok(len(bad) == 3, "PowerSGD ranks 0, 4.0 and 1_0 refused (%d)" % len(bad))
os.environ["AUTOSYNC_PLAN"] = os.path.join(d, "plan.yaml")
ok(a.load_plan()["strategy"] == "autosync-bucket-cap", "AUTOSYNC_PLAN is read")
try:
    a.settings(a.load_plan(os.path.join(d, "custom.yaml")), environ={})
    ok(False, "custom buckets of another framework refused")
except ValueError:
    ok(True, "custom buckets of another framework refused")
try:
    a.load_plan(os.path.join(d, "dup.yaml"))
    ok(False, "a repeated top-level key is refused")
except ValueError as e:
    ok(str(e) == os.path.join(d, "dup.yaml") + ":18: key 'strategy' given twice (first on line 6)",
       "a repeated top-level key is refused: %s" % e)
same = [("n1", "p", "t"), ("n1", "p", "t"), ("n2", "p", "t"), ("n3", "p", "t")]
ok(a.compare(same) == [], "every node planned the same: no warning")
odd = [("n1", "p", "t"), ("n2", "p", "t"), ("n3", "q", "u"), ("n3", "q", "u")]
ok(a.compare(odd) == ["autosync: node n3 has plan hash q, the others p",
                      "autosync: node n3 has topology hash u, the others t (its hardware differs)"],
   "a node with other hardware is named: %r" % a.compare(odd))
import autosync.torch as at
ok(at._quote("m\x1b[31m\u202ex\u00e9\n") == "m\\x1b[31m\\u{202e}x\u00e9\\x0a",
   "warnings on stderr: control and bidi characters escaped, other text kept")
# torch 2's DDP takes an explicit cap as its first bucket too: a cap equal
# to DDP's default is then left out, so that the first bucket stays
at._cap_sets_first_bucket = lambda: True
kw1, kw2 = {}, {}
at._cap_kwargs({"bucket_cap_mb": 25.0, "first_bucket_bytes": 1 << 20}, kw1)
at._cap_kwargs({"bucket_cap_mb": 4.0}, kw2)
at._cap_sets_first_bucket = lambda: False
kw3 = {}
at._cap_kwargs({"bucket_cap_mb": 25.0}, kw3)
ok((kw1, kw2, kw3) == ({}, {"bucket_cap_mb": 4.0}, {"bucket_cap_mb": 25.0}),
   "DDP's default cap is not passed where a passed cap would set the first bucket: %r" % ((kw1, kw2, kw3),))
class M:
    training = True
m, t = M(), at.StepTimer(os.path.join(d, "report"), "", skip=0, every=1000)
for _ in range(3):
    t(m, ())
ok(len(t.pending) == 2, "step timer: 3 training forwards, 2 steps (%d)" % len(t.pending))
m.training = False
t(m, ()); t(m, ())
m.training = True
t(m, ())
k = len(t.pending)
t(m, ())
ok((k, len(t.pending)) == (2, 3),
   "evaluation forwards are not steps, nor is the interval across them: %d, then %d" % (k, len(t.pending)))
PYEOF
echo "1..32"
PYTHONPATH="$SRC/contrib/pytorch" "$PY" "$T/t.py" "$T" 0 ""
PYTHONPATH="$T/noyaml:$SRC/contrib/pytorch" "$PY" "$T/t.py" "$T" 16 " (without PyYAML)"
