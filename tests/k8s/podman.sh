#!/bin/sh
# The Kubernetes pod pattern run for real with podman (no API server can run
# here): tests/k8s/pod.yaml is sent to the real autosync-webhook over TLS as
# an AdmissionReview, its JSON Patch applied (python3-jsonpatch), and the
# patched pod played with `podman kube play`: the init container runs
# `autosync init` from an image built FROM scratch out of this build's
# binaries and the libraries they need, writes into the emptyDir, and the
# app container (busybox) sees the plan, the env file, nccl.conf and the
# copied NCCL plugins. What kubelet would provide and podman does not (the
# downward API, a ConfigMap) is mounted as hostPath. The site config names
# a learned simulator (trained on the committed slice; the image carries the
# simulator module and XGBoost): the plan records its hash. Two such pods
# are two nodes of one job (PET_NODE_RANK 0 and 1): the same plan hash.
# usage: tests/k8s/podman.sh BUILDDIR   (root; TAP; skips without podman)
. "${AUTOSYNC_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/cli/tap.sh"
B=$(cd "${1:-${AUTOSYNC_BUILDDIR:-.}}" && pwd)
PY=/usr/bin/python3
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip_all "needs root"
for t in podman openssl curl; do command -v $t >/dev/null || skip_all "$t not installed"; done
[ -x /bin/busybox ] || skip_all "busybox-static not installed"
[ -x "$B/webhook/autosync-webhook" ] || skip_all "autosync-webhook not built"
$PY -c 'import jsonpatch, yaml' 2>/dev/null || skip_all "python3-jsonpatch or python3-yaml missing"

# podman here: runc (crun refuses the hybrid cgroup layout), cgroupfs, and
# rlimits root may set without CAP_SYS_RESOURCE (../shared/docs/kubernetes.md)
cat > "$TMP/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_CONF="$TMP/containers.conf"
IMG=localhost/autosync-test:1 APP=localhost/autosync-test-app:1
cleanup() {
  for r in 0 1; do podman kube down "$TMP/pod$r.yaml" >/dev/null 2>&1; done
  podman rmi -f $IMG $APP >/dev/null 2>&1
  [ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

# --- images FROM scratch: the binary, its libraries, the catalog ------------
root=$TMP/rootfs
mkdir -p "$root/usr/bin" "$root/usr/lib/autosync" "$root/catalog" "$root/tmp"
cp "$B/cli/autosync" "$root/usr/bin/autosync"
for f in $(ldd "$B/cli/autosync" | awk '/=>/ {print $3} !/=>/ && /^\t\// {print $1}'); do
  mkdir -p "$root$(dirname "$f")" && cp -L "$f" "$root$f"
done
cp "$B"/launcher/nccl/.libs/libnccl-tuner-autosync.so "$B"/launcher/nccl/.libs/libnccl-profiler-autosync.so "$root/usr/lib/autosync/"
# the learned simulator's module (dlopened by the planning process) and
# what it links: XGBoost and its C++ and OpenMP runtimes
sim=$B/learn/.libs/autosync-simulator.so
if [ -f "$sim" ]; then
  cp "$sim" "$root/usr/lib/autosync/"
  for f in $(ldd "$sim" | awk '/=>/ {print $3}'); do
    mkdir -p "$root$(dirname "$f")" && cp -L "$f" "$root$f"
  done
fi
cp "$SRCDIR"/planner/catalog/*.yaml "$root/catalog/"
tar -C "$root" -cf "$TMP/rootfs.tar" . && podman import -q --change "ENV PATH=/usr/bin:/bin" "$TMP/rootfs.tar" $IMG >/dev/null
ok $? "the autosync image, built locally FROM scratch"
app=$TMP/app
mkdir -p "$app/bin" "$app/autosync" && cp /bin/busybox "$app/bin/" &&
  for a in sh cat ls tr test echo sed; do ln -s busybox "$app/bin/$a"; done
tar -C "$app" -cf "$TMP/app.tar" . && podman import -q --change "ENV PATH=/usr/bin:/bin" "$TMP/app.tar" $APP >/dev/null
ok $? "the app image (busybox)"

# --- the site config and the node's topology, as the ConfigMap would be ------
# (mounted at /etc/autosync, as the webhook mounts the ConfigMap)
mkdir -p "$TMP/site"
cp "$SRCDIR/tests/fixtures/topologies/hwloc-juwels-booster-4xA100-4xHDR.xml" "$TMP/site/topo.xml"
simline=
if [ -f "$sim" ]; then
  AUTOSYNC_SIMULATOR_MODULE=$sim "$B/cli/autosync" train -o "$TMP/site/simulator.bin" \
    "$SRCDIR/tests/fixtures/feedback-lab-slice.jsonl" 2>/dev/null
  ok $? "a simulator trained on the committed slice, in the site config's directory"
  simline="simulator: /etc/autosync/simulator.bin
simulator_module: /usr/lib/autosync/autosync-simulator.so"
fi
cat > "$TMP/site/autosync.yaml" <<EOF
version: 2
catalog_dir: /catalog
$simline
topology_xml: /etc/autosync/topo.xml
nccl_plugins: true
nccl_plugin_dir: /usr/lib/autosync
network:
  nic_bandwidth: 200Gbit/s
  latency: 2us
EOF

# --- the real webhook patches the pod ----------------------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=wh -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$TMP/k" -out "$TMP/c" 2>/dev/null
port=$((40000 + $$ % 20000))
"$B/webhook/autosync-webhook" --cert "$TMP/c" --key "$TMP/k" --listen 127.0.0.1 --port $port \
  --image $IMG --pull-policy Never > "$TMP/wh.log" 2>&1 &
wpid=$!
for i in $(seq 50); do curl -s --cacert "$TMP/c" "https://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
for r in 0 1; do
  $PY - "$SRCDIR/tests/k8s/pod.yaml" $r "$TMP" "https://127.0.0.1:$port/mutate" "$TMP/c" > "$TMP/pod$r.yaml" <<'EOF'
import base64, json, ssl, sys, urllib.request, yaml, jsonpatch
pod = yaml.safe_load(open(sys.argv[1]))
rank, tmp = sys.argv[2], sys.argv[3]
pod["metadata"]["name"] += rank
for e in pod["spec"]["containers"][0]["env"]:
    if e["name"] == "PET_NODE_RANK":
        e["value"] = rank
review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
          "request": {"uid": "podman-" + rank, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                      "namespace": "default", "name": pod["metadata"]["name"],
                      "operation": "CREATE", "object": pod}}
ctx = ssl.create_default_context(cafile=sys.argv[5])
req = urllib.request.Request(sys.argv[4], json.dumps(review).encode(), {"Content-Type": "application/json"})
resp = json.load(urllib.request.urlopen(req, context=ctx))["response"]
assert resp["allowed"] and resp.get("patchType") == "JSONPatch", resp
pod = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(pod)
# what kubelet would provide: the downward-API files and the ConfigMap
info = tmp + "/podinfo" + rank
import os
os.makedirs(info, exist_ok=True)
ann = pod["metadata"].get("annotations", {})
for f in ("model", "mode", "framework", "compression"):
    open(info + "/" + f, "w").write(ann.get("autosync.dev/" + f, ""))
# the ConfigMap stays where the webhook mounts it: the init container's
# AUTOSYNC_SITE_CONFIG names it, whatever this build's sysconfdir
for v in pod["spec"]["volumes"]:
    if v["name"] == "autosync-podinfo":
        del v["downwardAPI"]; v["hostPath"] = {"path": info, "type": "Directory"}
    if v["name"] == "autosync-site":
        del v["configMap"]; v["hostPath"] = {"path": tmp + "/site", "type": "Directory"}
yaml.safe_dump(pod, sys.stdout, sort_keys=False)
EOF
  ok $? "node $r: the webhook's patch applied to the pod"
done
kill $wpid; wpid=

# --- play both pods, read what the app container saw -------------------------
podman pod rm -f autosync-node0 autosync-node1 >/dev/null 2>&1   # a run killed before its cleanup
for r in 0 1; do
  podman kube play "$TMP/pod$r.yaml" >"$TMP/play$r.log" 2>&1; rc=$?
  ok $rc "node $r: podman kube play"
  [ $rc = 0 ] || sed 's/^/# /' "$TMP/play$r.log"
done
for r in 0 1; do
  for i in $(seq 120); do
    [ "$(podman inspect -f '{{.State.Status}}' autosync-node$r-app 2>/dev/null)" = exited ] && break
    sleep 0.5
  done
  podman logs autosync-node$r-app > "$TMP/app$r.log" 2>&1
done
h0=$(sed -n 's/^plan hash: //p' "$TMP/app0.log")
h1=$(sed -n 's/^plan hash: //p' "$TMP/app1.log")
like "$(cat "$TMP/app0.log")" "^status: planned [0-9a-f]{16}" "node 0: the app container sees the init container's status"
grep -q "^status: planned" "$TMP/app0.log" || sed 's/^/# /' "$TMP/app0.log"
like "$h0" '^[0-9a-f]{16}$' "node 0: the plan hash from the env file"
is "$(sed -n 's/^plan file: //p' "$TMP/app0.log")" readable "node 0: the plan file in the shared volume"
like "$(sed -n 's/^nccl.conf: //p' "$TMP/app0.log")" "^NCCL_TOPO_FILE=/autosync/nccl-topo.xml NCCL_TUNER_PLUGIN=/autosync/lib/libnccl-tuner-autosync.so NCCL_PROFILER_PLUGIN=/autosync/lib/libnccl-profiler-autosync.so" \
  "node 0: nccl.conf points NCCL at the volume"
is "$(sed -n 's/^plugins: //p' "$TMP/app0.log")" "libnccl-profiler-autosync.so libnccl-tuner-autosync.so " "node 0: the NCCL plugins copied for an image without them"
is "${h1:-none}" "${h0:-missing}" "node 1 (PET_NODE_RANK=1): the same plan hash"
if [ -f "$sim" ]; then
  s0=$(sed -n 's/^simulator: //p' "$TMP/app0.log")
  like "$s0" '^[0-9a-f]{16}$' "node 0: the plan was made with the site's learned simulator"
  is "$(sed -n 's/^simulator: //p' "$TMP/app1.log")" "${s0:-missing}" "node 1: the same simulator hash"
fi
done_testing
