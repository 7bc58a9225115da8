#!/bin/sh
# cell-hier.sh OUT - whole dataset cells (the same command and seed as
# tests/lab/dataset.sh: autosync, every named baseline and 24 random
# strategies) timed with the runtime's two hierarchical variants,
# interleaved leader rails rails leader in each cell: the same plans, every
# plan measured twice with each variant in one session.
# env CELLS "RATE:LAYOUT:NAME:SCALE ..."
set -u
OUT=$1
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$SRC/_build/plain/cli/autosync; LAB=$SRC/tests/lab/lab.sh
export LAB_PREFIX=as- LAB_NET=10.77.0 LAB_DIR=/tmp/autosync-lab AUTOSYNC_CATALOG_DIR=$SRC/planner/catalog ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export AUTOSYNC_LIBEXECDIR=$SRC/_build/plain/launcher/runtime
BASE=intra=host_bridge:2.5GB/s:20us,lat=100us
STRATS=autosync,ddp-default,horovod-default,ps-loadbalanced,parallax,allreduce-per-tensor
mkdir -p "$OUT/raw"
echo "session $(date -u +%FT%TZ); $(uname -srm), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); autosync $(git -C "$SRC" rev-parse --short HEAD)" >> "$OUT/setup.txt"
up=0
for c in $CELLS; do
	rate=${c%%:*}; r=${c#*:}; lay=${r%%:*}; r=${r#*:}; m=${r%%:*}; sc=${r#*:}
	hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	if [ "$up" != "$rate-$lay" ]; then
		[ "$up" = 0 ] || "$LAB" down 4 >/dev/null 2>&1
		LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
		up=$rate-$lay
	fi
	seed=$(printf '%s' "$rate $lay $m:$sc" | cksum | cut -d' ' -f1)
	tag=$rate-$lay-$m
	for v in leader rails rails leader; do
		echo "[$(date -u +%T)] $tag $v start" >> "$OUT/runs.log"
		LAB_PPN=$ppn timeout 900 "$LAB" mpirun -np $np --map-by slot "$BIN" bench \
			--model "$m" --scale "$sc" --network "$BASE,nics=1x$nic" --strategies "$STRATS" \
			--random 24 --random-space narrow --seed "$seed" --random-steps 3 --steps 3 --warmup 1 --hier $v \
			--output "$OUT/raw/$tag-$v.jsonl" --feedback "$OUT/raw/$tag-$v.feedback.jsonl" >> "$OUT/raw/$tag-$v.txt" 2>&1
		echo "[$(date -u +%T)] $tag $v rc $?" >> "$OUT/runs.log"
	done
done
[ "$up" = 0 ] || "$LAB" down 4 >/dev/null 2>&1
