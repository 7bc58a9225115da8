#!/bin/sh
# run.sh - build and run the libFuzzer targets (clang + libFuzzer, e.g.
# Debian's clang-14 which ships libclang_rt.fuzzer in libclang-common-14-dev).
# Every parser of an input autosync does not control has one: cluster
# descriptions, NCCL topology XML, model files, plan files, calibration
# files, site configs, feedback records, job reports, simulator file
# headers and models, the tuner's rules file, what a planning child sends
# back to slurmstepd, the lines of the nodes' agreement on one plan and the
# webhook's AdmissionReviews. Each target (DIR/fuzz/NAME.c) is linked with every
# source of the library's modules (common, topology, planner, site, job)
# built with the fuzzer's instrumentation, plus its own extra sources
# (table at the end).
# usage: tests/fuzz/run.sh [BUILDDIR] [TARGET...]
#        BUILDDIR holds config.h (default: the first of ./build-topo,
#        ./build, . that has one); TARGETs default to all of them.
# env:   FUZZ_SECONDS per target (default 60), or FUZZ_RUNS (executions per
#        target: the benchmark run, e.g. 1000000), CLANG (default clang),
#        FUZZ_WORKDIR, FUZZ_TIMEOUT seconds one input may take (default 5:
#        super-linear parsing shows up as a timeout).
# Inputs up to 1 MiB. Exit status: 0 no crash, 1 crash, leak or timeout
# found, 2 cannot build.
set -eu

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-}
[ $# -gt 0 ] && shift
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
runs=${FUZZ_RUNS:-}
tmo=${FUZZ_TIMEOUT:-5}
only="$*"
work=${FUZZ_WORKDIR:-$(mktemp -d "${TMPDIR:-/tmp}/autosync-fuzz.XXXXXX")}
mkdir -p "$work"

if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "run.sh: $CLANG not found: install clang (Debian: apt-get install clang)" >&2
	exit 2
fi

libs=$(pkg-config --cflags --libs hwloc yaml-0.1 jansson 2>/dev/null || echo -lhwloc -lyaml -ljansson)
libsrcs=
for m in common topology planner site job; do
	for f in "$srcdir/$m"/*.c; do
		# programs beside the library (planner/bench.c) are not it
		[ -f "$f" ] && ! grep -q '^int main(' "$f" && libsrcs="$libsrcs $f"
	done
done
status=0
ran=
FLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
yamlflags=$(pkg-config --cflags hwloc yaml-0.1 jansson 2>/dev/null || true)

# the library, instrumented, once for every target
mkdir -p "$work/obj"
objs=
for f in $libsrcs; do
	o=$work/obj/$(echo "${f#$srcdir/}" | tr / _ | sed 's/\.c$/.o/')
	objs="$objs $o"
	[ -f "$o" ] && [ "$o" -nt "$f" ] && continue
	# shellcheck disable=SC2086
	if ! "$CLANG" $FLAGS -I"$srcdir/include" -I"$srcdir" -I"$builddir" $yamlflags \
		-DAUTOSYNC_DATADIR='"/nonexistent"' -DAUTOSYNC_SYSCONFDIR='"/nonexistent"' \
		-DAUTOSYNC_LIBDIR='"/nonexistent"' -c -o "$o" "$f" 2>"$work/build-lib.log"; then
		cat "$work/build-lib.log" >&2
		exit 2
	fi
done

# run_target NAME FUZZER-SOURCE "EXTRA SOURCES" "SEED DIRS" [EXTRA CFLAGS]
run_target() {
	name=$1 main=$2 extra=$3 seeds=$4 cflags=${5:-}
	if [ -n "$only" ] && ! echo " $only " | grep -q " $name "; then
		return 0
	fi
	exe=$work/$name
	mkdir -p "$work/corpus-$name"
	# shellcheck disable=SC2086
	if ! "$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-I"$srcdir/include" -I"$srcdir" -I"$builddir" $cflags \
		-DAUTOSYNC_DATADIR='"/nonexistent"' -DAUTOSYNC_SYSCONFDIR='"/nonexistent"' \
		-DAUTOSYNC_LIBDIR='"/nonexistent"' -o "$exe" \
		"$main" $extra $objs -lm -ldl $libs 2>"$work/build-$name.log"; then
		cat "$work/build-$name.log" >&2
		if grep -q -e 'fuzzer' "$work/build-$name.log"; then
			echo "run.sh: $CLANG cannot link libFuzzer: install the clang runtime (Debian 12: libclang-rt-14-dev or libclang-common-14-dev)" >&2
		fi
		exit 2
	fi
	if [ -n "$runs" ]; then limit="-runs=$runs"; else limit="-max_total_time=$seconds"; fi
	# the seed corpora stay read-only: new inputs go to the work directory
	set +e
	# shellcheck disable=SC2086
	"$exe" $limit -max_len=1048576 -timeout="$tmo" -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$work/$name-" \
		"$work/corpus-$name" $seeds >"$work/$name.log" 2>&1
	rc=$?
	set -e
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -1)
	if [ $rc -ne 0 ]; then
		tail -40 "$work/$name.log" >&2
		echo "run.sh: $name failed (exit $rc); reproducer(s) in $work/" >&2
		ls "$work"/$name-crash-* "$work"/$name-leak-* "$work"/$name-timeout-* 2>/dev/null >&2 || true
		status=1
	else
		echo "run.sh: $name: no crash, leak or timeout in ${execs:-?} executions"
	fi
	ran="$ran $name"
}

s=$srcdir
mkdir -p "$work/seeds-nccl"
for f in "$s"/tests/fixtures/topologies/nccl-*.xml; do
	[ -f "$f" ] && cp "$f" "$work/seeds-nccl/"
done
run_target cluster_spec "$s/common/fuzz/cluster_spec.c" "" "$s/common/fuzz/corpus"
run_target nccl_xml "$s/topology/fuzz/nccl_xml.c" "" "$s/topology/fuzz/corpus-nccl $work/seeds-nccl"
run_target model "$s/planner/fuzz/model.c" "" "$s/planner/fuzz/corpus-model"
run_target plan "$s/planner/fuzz/plan.c" "" "$s/planner/fuzz/corpus"
run_target costs "$s/planner/fuzz/costs.c" "" "$s/planner/fuzz/corpus-costs"
run_target siteconf "$s/site/fuzz/siteconf.c" "" "$s/site/fuzz/corpus-siteconf"
run_target feedback "$s/site/fuzz/feedback.c" "" "$s/site/fuzz/corpus-feedback"
run_target report "$s/site/fuzz/report.c" "" "$s/site/fuzz/corpus-report"
run_target rules "$s/launcher/nccl/fuzz/rules.c" "$s/launcher/nccl/tunerules.c" \
	"$s/launcher/nccl/fuzz/corpus" "-I$s/launcher/nccl"
run_target envelope "$s/learn/fuzz/envelope.c" "$s/learn/envelope.c" "$s/learn/fuzz/corpus"
run_target nesting "$s/learn/fuzz/nesting.c" "$s/learn/nesting.c" "$s/learn/fuzz/corpus-nesting"
run_target agree "$s/job/fuzz/agree.c" "" "$s/job/fuzz/corpus-agree"
run_target child "$s/plugin/fuzz/child.c" "$s/plugin/child.c" "$s/plugin/fuzz/corpus" "-I$s/plugin"
if pkg-config --exists libmicrohttpd gnutls libcjson 2>/dev/null; then
	run_target webhook "$s/webhook/fuzz/review.c" "$s/webhook/mutate.c" \
		"$s/tests/fixtures/k8s" "$(pkg-config --cflags gnutls libcjson) $(pkg-config --libs gnutls libcjson)"
fi

if [ $status -eq 0 ]; then
	echo "run.sh:$ran: no crash in ${runs:+$runs runs}${runs:-${seconds}s} each (work dir $work)"
	[ -n "${FUZZ_WORKDIR:-}" ] || rm -rf "$work"
fi
exit $status
