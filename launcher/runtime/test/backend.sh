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
echo "1..3"
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
# libcudart and libnccl are dlopened: where they cannot be found (their
# directories hidden in a private mount namespace), 'nccl' fails cleanly
# naming the library and the MPI backend stays
n=$((n + 1))
hide=$( (ldconfig -p | sed -n 's|.*lib\(cudart\|nccl\)\.so.* => \(.*\)/[^/]*$|\2|p'
	readelf -d "$T" | sed -n 's/.*R[UN]*PATH.*\[\(.*\)\]$/\1/p' | tr ':' '\n') | sort -u)
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	empty=$(mktemp -d)
	out=$(unshare -m sh -c 'e=$1; shift; t=$1; shift
		for d in "$@"; do [ -d "$d" ] && mount --bind "$e" "$d"; done
		exec "$t" 0' sh "$empty" "$T" $hide 2>&1)
	rmdir "$empty"
	echo "$out" | sed 's/^/# /'
	if echo "$out" | grep -q "^ok .*cannot load the CUDA runtime and NCCL: libcudart.so.[0-9]*: cannot open shared object file" &&
	   ! echo "$out" | grep -q '^not ok'; then
		echo "ok $n - backend.t without the CUDA libraries: nccl fails cleanly, mpi stays"
	else
		echo "not ok $n - backend.t without the CUDA libraries"
	fi
else
	echo "ok $n # SKIP needs root and mount namespaces to hide the CUDA libraries"
fi
