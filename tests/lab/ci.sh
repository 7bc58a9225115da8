#!/bin/sh
# ci.sh - the lab end to end, CI-sized (TAP): 2 emulated hosts x 2 ranks at
# 1 Gbit/s, 'autosync bench' of ResNet-50 (gradients / 64) with autosync's
# plan and the DDP default, a few steps. Asserts correctness (sums, records),
# not speed. Needs root (network namespaces, tc, unshare); prints
# "1..0 # SKIP" only when namespaces cannot be made. About 10-20 s.
# usage: ci.sh [AUTOSYNC_BINARY]     (default $AUTOSYNC_BUILDDIR/cli/autosync)
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${AUTOSYNC_SRCDIR:-$HERE/../..}
BIN=${1:-${AUTOSYNC_BUILDDIR:-.}/cli/autosync}
# 'autosync bench' execs autosync-bench: a build tree's, beside its autosync
if [ -z "${AUTOSYNC_LIBEXECDIR:-}" ] && [ -x "${BIN%/*}/../launcher/runtime/autosync-bench" ]; then
	AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR
fi
# its own names and subnet, so it can run beside a benchmark lab
export LAB_PREFIX=asci- LAB_NET=10.78.0 LAB_DIR=${TMPDIR:-/tmp}/autosync-lab-ci.$$ LAB_PPN=2
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$SRC/planner/catalog}
# Open MPI leaks at exit under LeakSanitizer (sanitizer builds): leak
# detection off for this MPI test only.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
LAB="$HERE/lab.sh"

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
for c in ip tc unshare mpirun; do command -v $c >/dev/null 2>&1 || skip "$c not found"; done
[ -x "$BIN" ] || { echo "1..1"; echo "not ok 1 - $BIN not built"; exit 1; }
"$BIN" bench --help 2>&1 | grep -q "which is not installed" && skip "autosync-bench not built (no Open MPI)"
ip netns add asci-probe 2>/dev/null || skip "cannot create network namespaces (CAP_SYS_ADMIN/CAP_NET_ADMIN)"
ip netns del asci-probe

cleanup() { "$LAB" down 2 >/dev/null 2>&1; rm -rf "$LAB_DIR"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
n=0
t() { # t COND_RC DESCRIPTION
	n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

echo "1..9"
"$LAB" up 2 1gbit; t $? "lab up: 2 hosts, 1 Gbit/s tbf both ways"
[ "$(ip netns list | grep -c '^asci-')" = 3 ]; t $? "3 namespaces (2 hosts + switch)"
ip netns exec asci-h1 tc qdisc show dev eth0 | grep -q tbf; t $? "uplink shaped with tbf"
out=$(timeout 120 "$LAB" mpirun -np 4 --map-by slot "$BIN" bench --model resnet50 --scale 64 \
	--strategies autosync,ddp-default --steps 3 --warmup 1 \
	--feedback "$LAB_DIR/feedback.jsonl" --output "$LAB_DIR/out.jsonl" 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
t $rc "autosync bench under mpirun across 2 namespaces (rc $rc)"
echo "$out" | grep -q "4 ranks on 2 nodes"; t $? "MPI sees 2 nodes x 2 ranks"
[ "$(echo "$out" | grep -cE '^  0 +(autosync|ddp-default) .* ok$')" = 2 ]; t $? "both strategies: synchronized sums exact"
[ "$(grep -c '"source": "bench"' "$LAB_DIR/feedback.jsonl" 2>/dev/null)" = 2 ]; t $? "2 feedback records (source bench)"
out=$(timeout 120 "$LAB" mpirun -np 3 --map-by slot "$BIN" bench --model resnet50 --scale 64 \
	--strategies ddp-default --steps 1 --warmup 0 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ $rc != 0 ] && echo "$out" | grep -q "autosync bench: the nodes run 1 to 2 ranks: run the same number on every node"
t $? "3 ranks on 2 nodes: refused with a message, no hang (rc $rc)"
"$LAB" down 2; [ -z "$(ip netns list | grep '^asci-')" ]; t $? "lab down: namespaces removed"
