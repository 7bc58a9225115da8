#!/bin/sh
# run.sh - build and run the libFuzzer targets (clang + libFuzzer, e.g.
# Debian's clang-14 which ships libclang_rt.fuzzer in libclang-common-14-dev).
# Each target (MODULE/fuzz/NAME.c) is linked with every source of the
# library's modules (common, topology, planner, site, job) built with the
# fuzzer's instrumentation; the table at the end names them.
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

hwloc_flags=$(pkg-config --cflags --libs hwloc yaml-0.1 2>/dev/null || echo -lhwloc -lyaml)
status=0
# target: name, extra sources, seed corpus directories, max input length, fuzzer source
run_target() {
	target=$1 srcs=$2 corpora=$3
	exe=$work/$target
	mkdir -p "$work/corpus-$target"
	# shellcheck disable=SC2086
	if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-I"$srcdir/include" -I"$srcdir" -I"$builddir" -DAUTOSYNC_DATADIR=\"/nonexistent\" \
		-DAUTOSYNC_SYSCONFDIR=\"/nonexistent\" -DAUTOSYNC_LIBDIR=\"/nonexistent\" -o "$exe" \
		"$5" $libsrcs $srcs -lm -ldl $hwloc_flags \
		2>"$work/build-$target.log"; then
		cat "$work/build-$target.log" >&2
		if grep -q -e 'fuzzer' "$work/build-$target.log"; then
			echo "run.sh: $CLANG cannot link libFuzzer: install the clang runtime (Debian 12: libclang-rt-14-dev or libclang-common-14-dev)" >&2
		fi
		exit 2
	fi
	# the seed corpora stay read-only: new inputs go to the work directory
	set +e
	# shellcheck disable=SC2086
	"$exe" -max_total_time="$seconds" -max_len="$4" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$work/$target-" "$work/corpus-$target" $corpora
	rc=$?
	set -e
	if [ $rc -ne 0 ]; then
		echo "run.sh: $target failed (exit $rc); reproducer(s) in $work/" >&2
		ls "$work"/$target-crash-* "$work"/$target-leak-* "$work"/$target-timeout-* 2>/dev/null >&2 || true
		status=1
	else
		echo "run.sh: $target: no crash in ${seconds}s"
	fi
}

# every library source (not the tests, not the fuzz targets)
libsrcs=
for m in common topology planner site job; do
	for f in "$srcdir/$m"/*.c; do
		[ -f "$f" ] && libsrcs="$libsrcs $f"
	done
done

run_target cluster_spec "" "$srcdir/common/fuzz/corpus" 256 "$srcdir/common/fuzz/cluster_spec.c"
# NCCL XML: the hand-written seeds, plus the real machines' NCCL files
top=$srcdir/topology
mkdir -p "$work/seeds-nccl"
for f in "$srcdir"/tests/fixtures/topologies/nccl-*.xml; do
	[ -f "$f" ] && cp "$f" "$work/seeds-nccl/"
done
run_target nccl_xml "" "$top/fuzz/corpus-nccl $work/seeds-nccl" 8192 "$top/fuzz/nccl_xml.c"
run_target plan "" "$srcdir/planner/fuzz/corpus" 65536 "$srcdir/planner/fuzz/plan.c"

if [ $status -eq 0 ]; then
	echo "run.sh: cluster_spec, nccl_xml, plan: no crash in ${seconds}s each (work dir $work)"
	[ -n "${FUZZ_WORKDIR:-}" ] || rm -rf "$work"
fi
exit $status
