#!/bin/sh
# The shipped manifests: `kubectl kustomize deploy/kustomize` renders (offline)
# and the objects say what docs/kubernetes.md promises; the examples parse.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
PY=/usr/bin/python3
$PY -c 'import yaml' 2>/dev/null || { echo "1..0 # SKIP python3-yaml not installed"; exit 0; }
if ! command -v kubectl >/dev/null 2>&1; then
  echo "1..0 # SKIP kubectl not installed (Debian: kubernetes-client)"; exit 0
fi
kubectl kustomize "$SRCDIR/deploy/kustomize" > "$TMP/all.yaml" 2>"$TMP/err"
ok $? "kubectl kustomize deploy/kustomize"
out=$($PY - "$TMP/all.yaml" "$SRCDIR/deploy/examples" <<'PYEOF'
import glob, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
kinds = sorted(d["kind"] for d in docs)
by = {d["kind"]: d for d in docs}
w = by["MutatingWebhookConfiguration"]["webhooks"][0]
dep = by["Deployment"]["spec"]["template"]["spec"]
res = sorted((r["apiGroups"][0], r["resources"][0]) for r in w["rules"])
site = yaml.safe_load(by["ConfigMap"]["data"]["autosync.yaml"])
checks = [
    kinds == ["Certificate", "ConfigMap", "Deployment", "Issuer", "MutatingWebhookConfiguration", "Namespace", "Service", "ServiceAccount"],
    w["failurePolicy"] == "Ignore" and w["sideEffects"] == "None" and w["admissionReviewVersions"] == ["v1"],
    w["objectSelector"] == {"matchExpressions": [{"key": "autosync.dev/enabled", "operator": "In",
        "values": [v for b in ("true", "yes", "on", "y", "1") for v in dict.fromkeys((b, b.capitalize(), b.upper()))]}]},
    w["clientConfig"]["service"] == {"name": "autosync-webhook", "namespace": "autosync-system", "path": "/mutate", "port": 443},
    res == [("", "pods"), ("batch", "jobs"), ("jobset.x-k8s.io", "jobsets"), ("kubeflow.org", "mpijobs"), ("kubeflow.org", "pytorchjobs")],
    all(r["operations"] == ["CREATE"] for r in w["rules"]),
    by["ConfigMap"]["metadata"]["name"] == "autosync-site" and site["version"] == 2,
    dep["containers"][0]["command"][0] == "autosync-webhook",
    all(d["metadata"].get("namespace", "autosync-system") == "autosync-system" for d in docs if d["kind"] != "Namespace"),
    [d["kind"] for f in sorted(glob.glob(sys.argv[2] + "/*job.yaml")) for d in yaml.safe_load_all(open(f))] == ["MPIJob", "PyTorchJob"],
]
print(" ".join("1" if c else "0" for c in checks))
PYEOF
)
is "$out" "1 1 1 1 1 1 1 1 1 1" "the objects: 8 kinds, failurePolicy Ignore, sideEffects None, v1 reviews, the opt-in label, the service path, CREATE of pods, jobs, jobsets, mpijobs, pytorchjobs, the site config, one namespace; the examples parse"
if [ -x "${AUTOSYNC_BUILDDIR:-.}/cli/autosync" ]; then
  "${AUTOSYNC_BUILDDIR:-.}/cli/autosync" config check "$SRCDIR/deploy/kustomize/autosync.yaml" >/dev/null 2>&1
  ok $? "the ConfigMap's site config passes autosync config check"
fi
done_testing
