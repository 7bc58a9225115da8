#!/bin/sh
# mpi.sh - run the sync runtime's correctness test (syncrt.t) on 1..8 ranks
# with 1..4 emulated ranks per node; one TAP line per layout, the inner TAP
# as comments. MPI tests only: Open MPI leaks at exit under LeakSanitizer,
# so leak detection is off here (ASan's other checks stay on).
B=${AUTOSYNC_BUILDDIR:-.}
T=$B/launcher/runtime/test/syncrt.t
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
MPIRUN="mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
if ! command -v mpirun >/dev/null 2>&1; then echo "1..0 # SKIP mpirun not found"; exit 0; fi
n=0
# layouts: ranks:ranks-per-node
LAYOUTS=${SYNCRT_LAYOUTS:-"1:0 2:1 3:1 4:2 5:2 6:3 8:2 8:4"}
echo "1..$(echo $LAYOUTS | wc -w)"
for l in $LAYOUTS; do
	np=${l%%:*}; ppn=${l##*:}; n=$((n + 1))
	out=$(timeout 300 $MPIRUN -np $np "$T" $ppn 2>&1); rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ] && ! echo "$out" | grep -q '^not ok' && echo "$out" | grep -q '^1\.\.[1-9]'; then
		echo "ok $n - syncrt.t on $np ranks, $ppn per node"
	else
		echo "not ok $n - syncrt.t on $np ranks, $ppn per node (rc $rc)"
	fi
done
