#!/bin/sh
# run.sh - build and run the libFuzzer targets (clang + libFuzzer, e.g.
# Debian's clang-14 which ships libclang_rt.fuzzer in libclang-common-14-dev).
# Targets: topology/fuzz/cluster_spec.c (cluster description, unit
# parsers), topology/fuzz/nccl_xml.c (NCCL topology XML reader, writers)
# and planner/fuzz/plan.c (plan files: reader, writer, NCCL table).
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
		-I"$srcdir/include" -I"$builddir" -DAUTOSYNC_DATADIR=\"/nonexistent\" -o "$exe" \
		"$5" $srcs "$srcdir/common/error.c" -lm -ldl $hwloc_flags \
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

top=$srcdir/topology
run_target cluster_spec "$top/cluster.c" "$top/fuzz/corpus" 256 "$top/fuzz/cluster_spec.c"
# NCCL XML: the hand-written seeds, plus the real NCCL files when ../shared is there
nccl_seeds="$top/fuzz/corpus-nccl"
mkdir -p "$work/seeds-nccl"
for f in "$srcdir"/../shared/fixtures/topologies/nccl-*.xml; do
	[ -f "$f" ] && cp "$f" "$work/seeds-nccl/"
done
run_target nccl_xml "$top/cluster.c $top/topo.c $top/topo_hwloc.c $top/topo_nccl.c $top/topo_write.c $top/xml.c $top/topo_nvml.c" \
	"$nccl_seeds $work/seeds-nccl" 8192 "$top/fuzz/nccl_xml.c"
pl=$srcdir/planner
run_target plan "$pl/plan.c $pl/yaml.c $pl/nccl.c $pl/costs.c $pl/sim.c $pl/model.c $pl/baselines.c $pl/search.c $top/cluster.c $srcdir/common/readfile.c" \
	"$pl/fuzz/corpus" 65536 "$pl/fuzz/plan.c"

if [ $status -eq 0 ]; then
	echo "run.sh: cluster_spec, nccl_xml, plan: no crash in ${seconds}s each (work dir $work)"
	[ -n "${FUZZ_WORKDIR:-}" ] || rm -rf "$work"
fi
exit $status
