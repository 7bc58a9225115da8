#!/bin/sh
# knobs.sh - autosync bench on a scaled model under mpirun: with the default
# --knobs scaled every baseline keeps the bucket count of the full-size job
# (the planner divides its size knobs by the scale); --knobs absolute gives
# the old comparison, few huge buckets. Exact bucket counts, from the JSON
# lines bench writes, and the sums checked by the runtime.
B=${AUTOSYNC_BUILDDIR:-.}
AUTOSYNC=$B/cli/autosync
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_SRCDIR:-..}/planner/catalog
MPIRUN="mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
if ! command -v mpirun >/dev/null 2>&1; then echo "1..0 # SKIP mpirun not found"; exit 0; fi
if ! "$AUTOSYNC" bench --help 2>&1 | grep -q -- --knobs; then echo "1..0 # SKIP autosync built without MPI"; exit 0; fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0 failed=0
check() { # WANT GOT NAME
	n=$((n + 1))
	if [ "$1" = "$2" ]; then echo "ok $n - $3"; else echo "not ok $n - $3"; echo "#   got '$2', want '$1'"; failed=1; fi
}
# "strategy:nbuckets:knobs:ok" per line of the bench output
summary() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s:%d:%s:%s" % (r["strategy"], r["nbuckets"], r["knobs"], r["ok"]))' "$1" | tr '\n' ' '
}
for k in scaled absolute; do
	timeout 300 $MPIRUN -np 2 "$AUTOSYNC" bench -m vgg16 --scale 32 --knobs $k \
		--network intra=host_bridge:2.5GB/s:20us,nics=1x1Gbit/s,lat=100us \
		--strategies ddp-default,horovod-default --steps 1 --warmup 0 \
		-o "$TMP/$k.jsonl" > "$TMP/$k.txt" 2>&1
	check 0 $? "bench --knobs $k on vgg16/32, 2 ranks: exit 0"
	sed 's/^/# /' "$TMP/$k.txt"
done
# full-size vgg16 under DDP's defaults: 6 buckets (fc6 alone, fc7 alone, ...);
# Horovod's 1 ms cycles cut its fusions further: 14 at full size
check "ddp-default:6:scaled:True horovod-default:14:scaled:True " "$(summary "$TMP/scaled.jsonl")" \
	"scaled knobs: DDP 6 buckets and Horovod 14, as at full size"
check "ddp-default:2:absolute:True horovod-default:12:absolute:True " "$(summary "$TMP/absolute.jsonl")" \
	"absolute knobs: DDP 2 buckets and Horovod 12 on the scaled gradients"
out=$("$AUTOSYNC" bench -m vgg16 --knobs x 2>&1); rc=$?
check "2:autosync bench: --knobs: unknown value 'x'; one of scaled or absolute" "$rc:$out" "--knobs x: refused"
echo "1..$n"
exit $failed
