#!/bin/sh
# run.sh - build and run the libFuzzer targets (clang + libFuzzer, e.g.
# Debian's clang-14 which ships libclang_rt.fuzzer in libclang-common-14-dev).
# usage: tests/fuzz/run.sh [BUILDDIR]     BUILDDIR holds config.h (default:
#        the first of ./build-topo, ./build, . that has one)
# env:   FUZZ_SECONDS (default 60), CLANG (default clang), FUZZ_WORKDIR
# Exit status: 0 no crash, 1 crash or leak found, 2 cannot build.
set -eu

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-}
if [ -z "$builddir" ]; then
	for d in "$srcdir/build-topo" "$srcdir/build" "$srcdir" .; do
		if [ -f "$d/config.h" ]; then builddir=$d; break; fi
	done
fi
if [ -z "$builddir" ] || [ ! -f "$builddir/config.h" ]; then
	echo "run.sh: no config.h found: run configure first, or pass the build directory" >&2
	exit 2
fi
CLANG=${CLANG:-clang}
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/autosync-fuzz.XXXXXX")}
mkdir -p "$work/corpus"

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "run.sh: $CLANG not found: install clang (Debian: apt-get install clang)" >&2
	exit 2
fi

target=cluster_spec
exe=$work/$target
if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$srcdir/include" -I"$builddir" -o "$exe" \
	"$srcdir/topology/fuzz/$target.c" "$srcdir/topology/cluster.c" \
	"$srcdir/common/error.c" -lm 2>"$work/build.log"; then
	cat "$work/build.log" >&2
	if grep -q -e 'fuzzer' "$work/build.log"; then
		echo "run.sh: $CLANG cannot link libFuzzer: install the clang runtime (Debian 12: libclang-rt-14-dev or libclang-common-14-dev)" >&2
	fi
	exit 2
fi

# the seed corpus stays read-only: new inputs go to the work directory
set +e
"$exe" -max_total_time="$seconds" -max_len=256 -timeout=10 \
	-artifact_prefix="$work/" "$work/corpus" "$srcdir/topology/fuzz/corpus"
rc=$?
set -e
if [ $rc -ne 0 ]; then
	echo "run.sh: $target failed (exit $rc); reproducer(s) in $work/" >&2
	ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null >&2 || true
	exit 1
fi
echo "run.sh: $target: no crash in ${seconds}s (work dir $work)"
[ -n "${FUZZ_WORKDIR:-}" ] || rm -rf "$work"
exit 0
