#!/bin/sh
# plan (not time) each cell's autosync-learned with SIM into OUT/TAG
set -u
OUT=$1; SIM=$2; BIN=/work/main/_build/plain/cli/autosync
HERE=/work/main/tests/lab
export AUTOSYNC_LIBEXECDIR=/work/main/_build/plain/launcher/runtime
export AUTOSYNC_SIMULATOR_MODULE=/work/main/_build/plain/learn/.libs/autosync-simulator.so
export LAB_PREFIX=as- LAB_NET=10.77.0 LAB_DIR=/tmp/autosync-lab AUTOSYNC_CATALOG_DIR=/work/main/planner/catalog ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
BASE=intra=host_bridge:2.5GB/s:20us,lat=100us
up=0
for cell in $CELLS; do
	rate=${cell%%:*}; lay=${cell#*:}; hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	[ "$up" = 0 ] || "$HERE/lab.sh" down "$up" >/dev/null 2>&1
	LAB_PPN=$ppn "$HERE/lab.sh" up "$hosts" "$rate" >/dev/null || exit 1
	up=$hosts
	for ms in $HELDOUT; do
		m=${ms%%:*}; sc=${ms##*:}; tag="$rate-$lay-$m"
		LAB_PPN=$ppn timeout 600 "$HERE/lab.sh" mpirun -np $np --map-by slot "$BIN" bench --model "$m" \
			--scale "$sc" --network "$BASE,nics=1x$nic" --simulator "$SIM" \
			--strategies autosync-learned --rounds 1 --steps 1 --warmup 0 \
			--write-plans "$OUT/$tag" > "$OUT/$tag.txt" 2>&1
		echo "$tag rc $?"
	done
done
"$HERE/lab.sh" down "$up" >/dev/null 2>&1
