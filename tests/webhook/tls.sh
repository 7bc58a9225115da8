#!/bin/sh
# autosync-webhook over real TLS on loopback: real AdmissionReview bodies of
# every kind posted with curl, the returned JSON Patch applied with a real
# JSON Patch implementation (python3-jsonpatch) and the patched objects
# checked; idempotence; bad input (not JSON, no uid, over the size limit,
# wrong version); /healthz; one JSON log line per decision; a certificate
# rotated under a running webhook.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
WH=${AUTOSYNC_BUILDDIR:-.}/webhook/autosync-webhook
FIX=$SRCDIR/tests/fixtures/k8s
PY=/usr/bin/python3
for t in openssl curl; do
  command -v $t >/dev/null || { echo "1..0 # SKIP $t not installed"; exit 0; }
done
$PY -c 'import jsonpatch' 2>/dev/null || { echo "1..0 # SKIP python3-jsonpatch not installed"; exit 0; }

cert() { # cert NAME CN: a self-signed certificate for 127.0.0.1
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$2" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$TMP/$1.key" -out "$TMP/$1.crt" 2>/dev/null
}
cert a autosync-webhook-a
cp "$TMP/a.crt" "$TMP/tls.crt"; cp "$TMP/a.key" "$TMP/tls.key"
port=$((20000 + $$ % 20000))
"$WH" --cert "$TMP/tls.crt" --key "$TMP/tls.key" --listen 127.0.0.1 --port $port \
  --image registry.example.org/autosync:1 --max-body 65536 > "$TMP/log" 2>"$TMP/err" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT
url=https://127.0.0.1:$port
for i in $(seq 50); do
  curl -s --cacert "$TMP/a.crt" "$url/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
is "$(curl -s --cacert "$TMP/a.crt" "$url/healthz")" "ok" "/healthz over TLS, verified against its certificate"

post() { curl -s -o "$TMP/out" -w '%{http_code}' --cacert "$TMP/a.crt" -H 'Content-Type: application/json' --data-binary @"$1" "$url/mutate"; }
# apply FIXTURE: the object after the webhook's patch (JSON), on stdout
apply() {
  $PY - "$1" "$TMP/out" <<'EOF'
import base64, json, sys, jsonpatch
review = json.load(open(sys.argv[1])); resp = json.load(open(sys.argv[2]))["response"]
obj = review["request"]["object"]
if "patch" in resp:
    obj = jsonpatch.JsonPatch(json.loads(base64.b64decode(resp["patch"]))).apply(obj)
json.dump(obj, sys.stdout, sort_keys=True)
EOF
}
# check FILE PYEXPR...: every Python expression over the patched object 'o' is true
check() {
  f=$1; shift
  $PY - "$f" "$@" <<'EOF'
import json, sys
o = json.load(open(sys.argv[1]))
def pod(t): return t["spec"]
def ic(spec): return spec["initContainers"][0]
def env(c): return {e["name"]: e.get("value", "valueFrom") for e in c.get("env", [])}
def mounts(c): return {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
bad = [e for e in sys.argv[2:] if not eval(e)]
[print("# false: " + e) for e in bad]
sys.exit(1 if bad else 0)
EOF
}

# --- every kind, patched for real -------------------------------------------
for k in pod job pytorchjob mpijob jobset; do
  code=$(post "$FIX/$k.json")
  is "$code" 200 "$k: HTTP 200"
  apply "$FIX/$k.json" > "$TMP/$k.patched"; ok $? "$k: the patch applies (RFC 6902)"
done
check "$TMP/pod.patched" \
  'ic(o["spec"])["name"] == "autosync-init"' \
  'ic(o["spec"])["image"] == "registry.example.org/autosync:1"' \
  'ic(o["spec"])["resources"]["limits"] == {"nvidia.com/gpu": "8", "rdma/hca_shared_devices_a": "1"}' \
  'env(ic(o["spec"])) == {"PET_NNODES": "4", "PET_NPROC_PER_NODE": "8", "PET_NODE_RANK": "valueFrom", "AUTOSYNC_SITE_CONFIG": "/etc/autosync/autosync.yaml"}' \
  '[v["name"] for v in o["spec"]["volumes"]] == ["data", "autosync-run", "autosync-podinfo", "autosync-site"]' \
  'o["spec"]["volumes"][3]["configMap"] == {"name": "autosync-site", "optional": True}' \
  '{i["path"]: i["fieldRef"]["fieldPath"] for i in o["spec"]["volumes"][2]["downwardAPI"]["items"]}["model"] == "metadata.annotations['"'"'autosync.dev/model'"'"']"' \
  'env(o["spec"]["containers"][0]) == {"PET_NNODES": "4", "PET_NPROC_PER_NODE": "8", "PET_NODE_RANK": "valueFrom", "NCCL_DEBUG": "WARN", "NCCL_CONF_FILE": "/autosync/nccl.conf", "AUTOSYNC_ENV_FILE": "/autosync/env"}' \
  'mounts(o["spec"]["containers"][0]) == {"data": "/data", "autosync-run": "/autosync"}' \
  'env(o["spec"]["containers"][1])["NCCL_CONF_FILE"] == "/etc/my-nccl.conf"'
ok $? "Pod: init container first, same devices, rank variables, volumes, app env and mounts; a container's own NCCL_CONF_FILE kept"
check "$TMP/job.patched" \
  '[c["name"] for c in o["spec"]["template"]["spec"]["initContainers"]] == ["autosync-init", "fetch"]' \
  'env(ic(o["spec"]["template"]["spec"]))["AUTOSYNC_NNODES"] == "2"' \
  'o["spec"]["template"]["metadata"]["annotations"]["autosync.dev/model"] == "resnet50"'
ok $? "Job: before its own init containers, 2 nodes, the annotations on the pod template"
check "$TMP/pytorchjob.patched" \
  'all(env(ic(o["spec"]["pytorchReplicaSpecs"][r]["template"]["spec"]))["AUTOSYNC_NNODES"] == "4" for r in ("Master", "Worker"))' \
  'env(ic(o["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]))["AUTOSYNC_NPROC_PER_NODE"] == "8"'
ok $? "PyTorchJob: master and workers, 4 nodes x 8"
check "$TMP/mpijob.patched" \
  'env(ic(o["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"])) == {"OMPI_COMM_WORLD_SIZE": "8", "AUTOSYNC_NNODES": "2", "AUTOSYNC_NPROC_PER_NODE": "4", "AUTOSYNC_SITE_CONFIG": "/etc/autosync/autosync.yaml"}' \
  '"initContainers" not in o["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]' \
  'o["metadata"]["annotations"]["autosync.dev/framework"] == "horovod"' \
  'o["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"]["autosync.dev/model"] == "vgg16"'
ok $? "MPIJob: the workers only, 2 x 4 slots, annotations copied to their template"
check "$TMP/jobset.patched" \
  'env(ic(o["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]))["AUTOSYNC_NNODES"] == "4"'
ok $? "JobSet: replicas x parallelism"

# --- idempotent: the patched object again gives no patch --------------------
$PY - "$FIX/pod.json" "$TMP/pod.patched" > "$TMP/again.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); r["request"]["object"] = json.load(open(sys.argv[2]))
json.dump(r, sys.stdout)
EOF
code=$(post "$TMP/again.json")
is "$code|$(grep -c '"patch"' "$TMP/out")" "200|0" "an object already mutated is not mutated twice"

# --- bad input: the pod always goes through ---------------------------------
printf '{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionRev' > "$TMP/trunc.json"
is "$(post "$TMP/trunc.json")" 400 "not JSON: 400 (failurePolicy Ignore admits the pod)"
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}}' > "$TMP/nouid.json"
is "$(post "$TMP/nouid.json")" 400 "no uid to echo: 400"
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r["request"]["object"]["metadata"]["annotations"]["x"]="y"*70000; json.dump(r, sys.stdout)' "$FIX/pod.json" > "$TMP/big.json"
# answered before the body is read: a client that waits for it (Expect:
# 100-continue) always reads the 413; one that sends the body regardless
# may see the connection close first, which admits the pod just the same
is "$(curl -s -o "$TMP/out" -w '%{http_code}' --cacert "$TMP/a.crt" -H 'Content-Type: application/json' \
  -H 'Expect: 100-continue' --data-binary @"$TMP/big.json" "$url/mutate")" 413 "a body over the limit (here 64 KiB): 413"
# under the limit but past libmicrohttpd's 16 KiB connection pool: the body
# reaches the review in pieces, whole
$PY -c 'import json,sys; r=json.load(open(sys.argv[1])); r["request"]["object"]["metadata"]["annotations"]["x"]="y"*60000; json.dump(r, sys.stdout)' "$FIX/pod.json" > "$TMP/large.json"
code=$(post "$TMP/large.json")
is "$code|$(grep -c '"patch"' "$TMP/out")" "200|1" "a 60 KiB body (the pool is 16 KiB): mutated"
# bodies that come slowly or announce too much hold neither the connection
# nor memory: answered before the body, or the connection closed
slow=$($PY - "$port" "$TMP/a.crt" <<'EOF'
import socket, ssl, sys, time
ctx = ssl.create_default_context(cafile=sys.argv[2])
def conn():
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1]))), server_hostname="127.0.0.1")
    s.settimeout(10)
    return s
def head(n):
    return ("POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % n).encode()
def answer(s):
    try:
        d = s.recv(4096)
    except (ConnectionError, ssl.SSLError):
        d = b""
    return d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "closed"
out = []
t0 = time.monotonic()
s = conn(); s.sendall(head(10 << 20))            # 10 MiB announced, none sent
code = answer(s); out.append("%s %s" % (code, "at-once" if time.monotonic() - t0 < 0.9 else "late"))
t0 = time.monotonic()
s = conn(); s.sendall(head(100) + b"{" * 10)     # then a byte each 0.6 s
try:
    for i in range(10):
        time.sleep(0.6); s.sendall(b" ")
except (ConnectionError, ssl.SSLError):
    pass
code = answer(s); out.append("%s %s" % (code, "by-2.5s" if time.monotonic() - t0 < 2.5 else "late"))
t0 = time.monotonic()
s = conn(); s.sendall(head(100) + b"{")          # then nothing
code = answer(s); out.append("%s %s" % (code, "by-2.5s" if time.monotonic() - t0 < 2.5 else "late"))
print(" | ".join(out))
EOF
)
is "$slow" "413 at-once | closed by-2.5s | closed by-2.5s" "10 MiB announced: 413 before the body; a body trickled past the 1 s limit, or stalled: the connection closed"
sed 's#admission.k8s.io/v1#admission.k8s.io/v9#' "$FIX/pod.json" > "$TMP/v9.json"
code=$(post "$TMP/v9.json")
like "$code $(cat "$TMP/out")" '^200 .*"allowed":true.*"warnings":\["autosync: not an admission.k8s.io/v1 AdmissionReview; the pod runs without it"\]' \
  "another version: allowed, a warning, no patch"
sed 's#"autosync.dev/model": "bert-large"#"autosync.dev/model": "bert-large", "autosync.dev/mode": "fast"#' "$FIX/pod.json" > "$TMP/mode.json"
post "$TMP/mode.json" >/dev/null
like "$(cat "$TMP/out")" '"allowed":true,"warnings":\["autosync: autosync.dev/mode: unknown value' "an unknown annotation value: allowed with a warning"
is "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$TMP/a.crt" "$url/other")" 404 "another path: 404"

# --- one JSON log line per decision ----------------------------------------
sleep 0.2
out=$($PY - "$TMP/log" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
d = [l["decision"] for l in lines if "decision" in l]
print(len(d), d.count("mutated"), d.count("skipped"), d.count("declined"), d.count("bad-request"),
      all("time" in l for l in lines))
EOF
)
is "$out" "15 6 1 2 6 True" "the log: every decision one parsable JSON line (6 mutated, 1 skipped, 2 declined, 6 refused) with its time"
is "$(grep -c '"reason":"the body is over the limit"' "$TMP/log") $(grep -c '"reason":"the request took over the time limit; connection closed"' "$TMP/log")" "2 2" "the oversize bodies are logged too, and the connections closed for time"

# --- a rotated certificate is served without a restart ---------------------
subject() { echo | openssl s_client -connect 127.0.0.1:$port 2>/dev/null | openssl x509 -noout -subject 2>/dev/null; }
like "$(subject)" "CN ?= ?autosync-webhook-a" "serving certificate a"
cert b autosync-webhook-b
sleep 1.1
cp "$TMP/b.key" "$TMP/tls.key.new" && cp "$TMP/b.crt" "$TMP/tls.crt.new" &&
  mv "$TMP/tls.key.new" "$TMP/tls.key" && mv "$TMP/tls.crt.new" "$TMP/tls.crt"
sleep 1.1
like "$(subject)" "CN ?= ?autosync-webhook-b" "the rotated certificate b on the next handshake"
is "$(curl -s --cacert "$TMP/b.crt" "$url/healthz")" "ok" "verified against b"
cp "$TMP/a.key" "$TMP/tls.key"; sleep 1.1
is "$(curl -s --cacert "$TMP/b.crt" "$url/healthz")" "ok" "only the key replaced (a's key, b's certificate): b keeps serving"
is "$(grep -c '"event":"tls-reload-failed".*the key is not the certificate' "$TMP/log")" 1 "... the mismatch logged once, not every second"
cp "$TMP/b.key" "$TMP/tls.key"
printf 'garbage\n' > "$TMP/tls.crt"; sleep 1.1
is "$(curl -s --cacert "$TMP/b.crt" "$url/healthz")" "ok" "a broken certificate file: b keeps serving"
like "$(grep -c '"event":"tls-reload-failed"' "$TMP/log")" '^[1-9]' "... and the failed reload is logged"
kill $pid; wait $pid 2>/dev/null
is "$(cat "$TMP/err")" "" "nothing on stderr"
"$WH" --cert "$TMP/a.crt" --key "$TMP/b.key" --listen 127.0.0.1 --port $port > /dev/null 2>"$TMP/err2"
is "$? $(cat "$TMP/err2")" "1 autosync-webhook: $TMP/a.crt, $TMP/b.key: the key is not the certificate's" "a key that is not the certificate's: refused at start"
done_testing
