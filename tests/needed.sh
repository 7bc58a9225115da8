#!/bin/sh
# needed.sh [FILE...] - the admin's programs load no GPU or MPI library:
# the dynamic section (NEEDED) of each FILE, and every library the loader
# would bring in with it (ldd), names none of libmpi, libnccl, libcudart,
# libcuda or libnvidia-ml. Those are reached only by autosync-bench (MPI,
# NCCL and CUDA at run time) and by dlopen (NVML). Default FILEs: the
# build tree's autosync, spank_autosync.so and libautosync.so. Prints TAP.
# tests/install-layout.sh runs it on the installed files.
B=${AUTOSYNC_BUILDDIR:-.}
BAD='lib(mpi|nccl|cudart|cuda|nvidia-ml)[.-]'
n=0 failed=0
t() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
command -v readelf >/dev/null 2>&1 || { echo "1..0 # SKIP readelf not found (binutils)"; exit 0; }
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
if [ $# = 0 ]; then
	set -- "$B/cli/autosync"
	for f in "$B/plugin/.libs/spank_autosync.so" "$B"/.libs/libautosync.so.*.*.*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
fi
for f in "$@"; do
	name=${f##*/}
	nd=$(needed "$f")
	[ -n "$nd" ]; t $? "$name has a dynamic section"
	bad=$(echo "$nd" | grep -E "^$BAD" | tr '\n' ' ')
	[ -z "$bad" ]; t $? "$name: NEEDED names no MPI/NCCL/CUDA/NVML library ${bad:+($bad)}"
	bad=$(ldd "$f" 2>/dev/null | awk '{print $1}' | grep -E "^$BAD" | tr '\n' ' ')
	[ -z "$bad" ]; t $? "$name: nor does any library it loads ${bad:+($bad)}"
done
# the learning libraries (XGBoost with its OpenMP and C++ runtimes, GSL)
# are the autosync command's only: never in slurmstepd or a library
for f in "$@"; do
	case ${f##*/} in autosync) continue ;; esac
	bad=$(ldd "$f" 2>/dev/null | awk '{print $1}' | grep -E '^lib(xgboost|gsl|gomp)[.]' | tr '\n' ' ')
	[ -z "$bad" ]; t $? "${f##*/}: no learning library (XGBoost, GSL, OpenMP) ${bad:+($bad)}"
done
# the check sees such a library where one is linked: autosync-bench's MPI
h=$B/launcher/runtime/autosync-bench
if [ $# -gt 0 ] && [ -x "$h" ] && [ "${1%/cli/autosync}" != "$1" ]; then
	needed "$h" | grep -Eq '^libmpi[.]'; t $? "autosync-bench (built with MPI) does name libmpi"
fi
echo "1..$n"
[ "$failed" = 0 ]
