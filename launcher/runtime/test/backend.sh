#!/bin/sh
# backend.sh - the backend test (backend.t, built only with NCCL) on 1 rank
# and on 2 ranks as 2 nodes (PS placement on two servers). Leak detection
# is off, as in mpi.sh (Open MPI and the CUDA runtime leak at exit).
B=${AUTOSYNC_BUILDDIR:-.}
T=$B/launcher/runtime/test/backend.t
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
MPIRUN="mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"
if ! command -v mpirun >/dev/null 2>&1; then echo "1..0 # SKIP mpirun not found"; exit 0; fi
n=0
echo "1..2"
for l in 1:0 2:1; do
	np=${l%%:*}; ppn=${l##*:}; n=$((n + 1))
	out=$(timeout 120 $MPIRUN -np $np "$T" $ppn 2>&1); rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ] && ! echo "$out" | grep -q '^not ok' && echo "$out" | grep -q '^1\.\.[1-9]'; then
		echo "ok $n - backend.t on $np ranks, $ppn per node"
	else
		echo "not ok $n - backend.t on $np ranks, $ppn per node (rc $rc)"
	fi
done
