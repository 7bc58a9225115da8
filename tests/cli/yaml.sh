#!/bin/sh
# yaml.sh - what autosync writes as YAML (plans, topology) reads in another
# YAML reader with the same types: PyYAML (YAML 1.1) reads every number as
# a number ("1e-06" would be a string to it: autosync writes "1.0e-06"),
# and the PyTorch adapter reads a written plan alike with and without
# PyYAML. TAP; skips without python3 and PyYAML.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
PY=$(command -v python3 || true)
if [ -z "$PY" ] || ! "$PY" -c 'import yaml' 2>/dev/null; then
  echo "1..0 # SKIP python3 with PyYAML not found"
  exit 0
fi
CAT="$SRCDIR/planner/catalog"
FIX=${AUTOSYNC_FIXTURES:-$SRCDIR/tests/fixtures/topologies}

# Every scalar PyYAML read as a string but that looks like a number, and
# the types of fields that must be numbers.
cat > "$TMP/check.py" <<'EOF'
import re, sys, yaml
num = re.compile(r"^[-+]?(\d[\d_]*)?\.?\d*([eE][-+]?\d+)?$|^[-+]?\.?(inf|nan)$", re.I)
bad = []
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.items():
            walk(v, path + "." + str(k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            walk(v, "%s[%d]" % (path, i))
    elif isinstance(x, float) and x != x or x in (float("inf"), float("-inf")):
        bad.append("%s: %r" % (path, x))
    elif isinstance(x, str) and path.split(".")[-1] in sys.argv[2].split(",") and num.match(x.strip()) and x.strip():
        bad.append("%s: %r is a string" % (path, x))
d = yaml.safe_load(open(sys.argv[1]))
walk(d, "")
for field in sys.argv[3].split(",") if len(sys.argv) > 3 else []:
    v = d
    for k in field.split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        bad.append("%s: %r is not a number" % (field, v))
print("; ".join(bad) if bad else "ok")
EOF
NUMS=intra_bw,intra_lat,nic_bw,inter_lat,step_time,forward,backward,optimizer,communication,exposed_communication,bound,cycle_time,bytes,wire_bytes,ready,start,end,bucket_cap_bytes,first_bucket_bytes

for spec in "resnet50 pytorch-ddp nodes=2,gpus=8,intra=nvlink,nics=1x100Gbit/s,lat=2us" \
            "bert-large generic nodes=16,gpus=8,intra=nvlink,nics=1x100Gbit/s,lat=5us" \
            "ncf autodist nodes=8,gpus=8,intra=nvlink,nics=2x200Gbit/s,lat=900ns"; do
  set -- $spec
  "$AUTOSYNC" plan --config none --catalog "$CAT" -m "$1" -f "$2" --network "$3" \
    -o "$TMP/$1.yaml" >/dev/null 2>"$TMP/err"
  is "$?" 0 "plan $1 written ($(head -c 200 "$TMP/err"))"
  is "$("$PY" "$TMP/check.py" "$TMP/$1.yaml" "$NUMS" \
        inputs.cluster.intra_lat,inputs.cluster.inter_lat,inputs.cluster.intra_bw,prediction.step_time,baselines.0.step_time,buckets.0.ready)" ok \
     "plan $1: PyYAML reads every number as a number"
done
like "$(grep -E '^ +(intra_lat|inter_lat):' "$TMP/resnet50.yaml" | paste -sd' ')" \
     '^ +intra_lat: 6\.0e-07 +inter_lat: 2\.0e-06$' "small floats carry a dot: 6.0e-07, 2.0e-06"

# the adapter reads the written plan the same with and without PyYAML
mkdir -p "$TMP/noyaml"; echo 'raise ImportError("hidden")' > "$TMP/noyaml/yaml.py"
cat > "$TMP/adapter.py" <<'EOF'
import sys, autosync_ddp as a
p = a.load_plan(sys.argv[1])
print(sorted(p["env"].items()), p["strategy"], p["framework"], str(p["job"].get("compression")),
      int(float(p["job"].get("bucket_cap_bytes"))))
EOF
with=$(PYTHONPATH="$SRCDIR/contrib/pytorch" "$PY" "$TMP/adapter.py" "$TMP/resnet50.yaml" 2>&1)
without=$(PYTHONPATH="$TMP/noyaml:$SRCDIR/contrib/pytorch" "$PY" "$TMP/adapter.py" "$TMP/resnet50.yaml" 2>&1)
is "$without" "$with" "the adapter's fallback parser reads a written plan as PyYAML does"
like "$with" "AUTOSYNC_DDP_BUCKET_CAP_MB" "and sees its env section"

# topology output
for f in nccl-azure-ndv4-8xA100-8xHDR.xml hwloc-dgx2h-16xV100-12xNVSwitch.xml; do
  [ -f "$FIX/$f" ] || continue
  "$AUTOSYNC" topo -T "$FIX/$f" --format yaml > "$TMP/t.yaml" 2>"$TMP/err"
  is "$?" 0 "topo --format yaml on $f ($(head -c 200 "$TMP/err"))"
  is "$("$PY" "$TMP/check.py" "$TMP/t.yaml" pcie_bw,nvlink_bw,speed,bw,lat \
        link_classes.nvlink.lat,link_classes.nvlink.bw)" ok \
     "topology $f: PyYAML reads every number as a number"
done
# --env in YAML: through the emitter, inside the one mapping
"$AUTOSYNC" topo -T "$FIX/nccl-azure-ndv4-8xA100-8xHDR.xml" -g 0,1 --format yaml --env > "$TMP/e.yaml" 2>"$TMP/err"
is "$("$PY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
print(len(d["env"]), [e["rank"] for e in d["env"]], sorted(d["env"][1]["vars"]), d["gpus_total"])' "$TMP/e.yaml" 2>&1)" \
  "2 [0, 1] ['NCCL_P2P_LEVEL'] 8" \
  "topo --format yaml --env: PyYAML reads each rank's variables in the same document"
done_testing
