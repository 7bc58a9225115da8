#!/bin/sh
# tree-oldnew.sh OUT OLD_LIBEXEC NEW_LIBEXEC - the tree all-reduce of the
# runtime before (a binary tree over the ranks in order) and after (a tree
# over the nodes, a chain inside each node), interleaved old new new old in
# each cell; each run times ddp-default's buckets with every bucket's
# algorithm set to tree, to ring, and as planned (auto), 2 rounds of
# 1 warm-up + 3 steps. env CELLS "RATE:LAYOUT ..." MODELS "NAME:SCALE ..."
set -u
OUT=$1; OLD=$2; NEW=$3
SRC=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$SRC/_build/plain/cli/autosync; LAB=$SRC/tests/lab/lab.sh
export LAB_PREFIX=as- LAB_NET=10.77.0 LAB_DIR=/tmp/autosync-lab AUTOSYNC_CATALOG_DIR=$SRC/planner/catalog ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
BASE=intra=host_bridge:2.5GB/s:20us,lat=100us
mkdir -p "$OUT/raw" "$OUT/plans"
echo "session $(date -u +%FT%TZ); $(uname -srm), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); autosync $(git -C "$SRC" rev-parse --short HEAD) + working tree" >> "$OUT/setup.txt"
for cell in $CELLS; do
	rate=${cell%%:*}; lay=${cell#*:}; hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
	for ms in $MODELS; do
		m=${ms%%:*}; sc=${ms##*:}; tag=$rate-$lay-$m; P=$OUT/plans/$tag
		net="$BASE,nics=1x$nic"
		AUTOSYNC_LIBEXECDIR=$NEW LAB_PPN=$ppn timeout 600 "$LAB" mpirun -np $np --map-by slot "$BIN" bench \
			--model "$m" --scale "$sc" --network "$net" --strategies ddp-default --steps 1 --warmup 0 \
			--write-plans "$P" > /dev/null 2>&1 || { echo "$tag: plan failed"; continue; }
		for a in tree ring; do
			sed -e '/^hash:/d' -e "s/^  algorithm: .*/  algorithm: $a/" "$P/ddp-default.yaml" > "$P/$a.yaml"
		done
		for v in old new new old; do
			[ $v = old ] && L=$OLD || L=$NEW
			AUTOSYNC_LIBEXECDIR=$L LAB_PPN=$ppn timeout 600 "$LAB" mpirun -np $np --map-by slot "$BIN" bench \
				--model "$m" --scale "$sc" --network "$net" \
				--strategies "plan:$P/tree.yaml,plan:$P/ring.yaml,ddp-default" --rounds 2 --steps 3 --warmup 1 \
				--output "$OUT/raw/$tag-$v.jsonl" --feedback "$OUT/raw/$tag-$v.feedback.jsonl" >> "$OUT/raw/$tag-$v.txt" 2>&1
			echo "$tag $v rc $?"
		done
	done
	"$LAB" down "$hosts" >/dev/null 2>&1
done
