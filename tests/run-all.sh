#!/usr/bin/env bash
# run-all.sh - the whole autosync test suite on a Debian 12 machine, from a
# clean checkout, as root: installs what is missing, builds, then runs
#   1. the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer,
#   2. `make distcheck`, `make install DESTDIR=…` layout checks, and
#      builds at -O1, -Os and -Og (warnings are errors at every level),
#   3. the Debian packages (dpkg-buildpackage with nocheck: the unit tests
#      ran in step 1; lintian) and the RPMs (rpmbuild --nodeps, rpm -qlp),
#      the Debian packages installed with dpkg -i; the integration tests
#      against a real Slurm cluster on this host that loads the INSTALLED
#      plugin and runs the installed CLI, submitting as root and as an
#      unprivileged user; then the packages are purged again,
#   4. a small run of the emulated multi-host lab (tests/lab/ci.sh) and
#      the Kubernetes pod pattern played with podman (tests/k8s/podman.sh),
#   5. the formatting check (clang-format, tests/format.sh),
#   6. the libFuzzer targets for FUZZ_SECONDS (default 20) each.
# Ends with the line "N passed, N failed".
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
[ "$(id -u)" = 0 ] || { echo "run-all.sh: run as root (installs packages, starts Slurm daemons)" >&2; exit 2; }
export MAKEFLAGS="${MAKEFLAGS:--j$(nproc)}"
pass=0 fail=0
add() { pass=$((pass + $1)); fail=$((fail + $2)); }
step() { printf '\n=== %s\n' "$*"; }
# count TAP lines of a log: add the numbers to the totals
count_tap() {   # count_tap FILE NAME (a regular file: it is read twice)
  local p f
  p=$(sed 's/^ *//' "$1" | grep -c '^ok ' || true)
  f=$(sed 's/^ *//' "$1" | grep -c '^not ok ' || true)
  add "$p" "$f"; echo "--- $2: $p passed, $f failed"
}

step "dependencies"
tests/slurm/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

step "autogen"
./autogen.sh >_autogen.log 2>&1 || { cat _autogen.log; echo "0 passed, 1 failed"; exit 1; }

step "unit tests (ASan + UBSan)"
mkdir -p _build/asan
if (cd _build/asan && ../../configure --enable-sanitizers >configure.log 2>&1 && make >make.log 2>&1); then
  (cd _build/asan && make check >check.log 2>&1)
  sum=_build/asan/test-suite.log
  p=$(sed -n 's/^# PASS: *//p' $sum 2>/dev/null | head -1)
  f1=$(sed -n 's/^# FAIL: *//p' $sum 2>/dev/null | head -1)
  f2=$(sed -n 's/^# ERROR: *//p' $sum 2>/dev/null | head -1)
  f=$(( ${f1:-0} + ${f2:-0} ))
  [ -n "$p" ] || { p=0; f=1; tail -60 _build/asan/check.log; }
  grep -E '^(PASS|FAIL|ERROR|SKIP|XFAIL|XPASS):' _build/asan/check.log | sed 's/^/  /'
  [ "$f" = 0 ] || cat _build/asan/test-suite.log
  add "$p" "$f"; echo "--- unit: $p passed, $f failed"
else
  tail -40 _build/asan/configure.log _build/asan/make.log; add 0 1
fi

step "build (plain), distcheck, install layout"
mkdir -p _build/plain
if (cd _build/plain && ../../configure >configure.log 2>&1 && make >make.log 2>&1); then
  add 1 0; echo "ok - build with -Wall -Wextra -Werror"
  if (cd _build/plain && make distcheck >distcheck.log 2>&1); then
    add 1 0; echo "ok - make distcheck"
  else
    tail -60 _build/plain/distcheck.log; add 0 1; echo "not ok - make distcheck"
  fi
  tests/install-layout.sh _build/plain >_build/install.log 2>&1
  sed 's/^/  /' _build/install.log; count_tap _build/install.log "install layout"
else
  tail -60 _build/plain/configure.log _build/plain/make.log; add 0 1; echo "not ok - build"
fi

step "builds at other optimisation levels (-Werror must hold at each)"
# -Wformat-truncation and friends depend on the optimiser's view
for o in -O1 -Os -Og; do
  d=_build/opt${o#-}
  mkdir -p "$d"
  if (cd "$d" && ../../configure CFLAGS="$o -g" >configure.log 2>&1 && make >make.log 2>&1); then
    add 1 0; echo "ok - build with CFLAGS=$o"
  else
    grep -E 'error' "$d/make.log" | head -10; add 0 1; echo "not ok - build with CFLAGS=$o"
  fi
done

step "Debian packages and RPMs"
debs=()
if DEB_BUILD_OPTIONS=nocheck packaging/build-deb.sh _build/deb >_build/deb.log 2>&1; then
  add 1 0; echo "ok - dpkg-buildpackage, lintian without errors"
  grep -E '^[EW]: ' _build/deb.log | sed 's/^/  # lintian /'
  debs=($(ls _build/deb/*.deb | grep -v -- '-dbgsym_'))
else
  tail -40 _build/deb.log; add 0 1; echo "not ok - Debian packages (_build/deb.log)"
fi
tarball=$(ls _build/plain/autosync-*.tar.gz 2>/dev/null | head -1)
if [ -n "$tarball" ]; then
  packaging/build-rpm.sh "$tarball" _build/rpm >_build/rpm.log 2>&1
  grep -Ev '^#   ' _build/rpm.log | sed 's/^/  /'; count_tap _build/rpm.log "rpm"
else
  add 0 1; echo "not ok - no release tarball for rpmbuild (distcheck failed)"
fi
installed=0
if ((${#debs[@]})) && dpkg -i "${debs[@]}" >_build/dpkg.log 2>&1; then
  installed=1; add 1 0; echo "ok - dpkg -i ${debs[*]##*/}"
elif ((${#debs[@]})); then
  tail -20 _build/dpkg.log; add 0 1; echo "not ok - dpkg -i"
fi

step "integration tests on a real Slurm (the installed packages)"
# without installed packages, the build tree's plugin (and a failure above)
target=_build/plain
[ "$installed" = 1 ] && target=--installed
so=_build/plain/plugin/.libs/spank_autosync.so
if [ "$installed" = 1 ] || [ -f "$so" ]; then
  tests/run-integration.sh $target >_build/integration.log 2>&1
  cat _build/integration.log | grep -E '^(#|    (ok|not ok|#)|\[|integration)' | sed 's/^    /  /'
  count_tap _build/integration.log "integration"
  # a test file that died without a plan is counted by the runner's summary
  grep -q '^integration: [0-9]* passed, 0 failed$' _build/integration.log || \
    { grep -q 'not ok' _build/integration.log || { add 0 1; echo "not ok - integration runner"; }; }
  if [ "$installed" = 1 ]; then
    tests/installed.sh >_build/installed.log 2>&1
    sed 's/^/  /' _build/installed.log; count_tap _build/installed.log "installed packages"
  fi
else
  add 0 1; echo "not ok - no plugin was built"
fi
if [ "$installed" = 1 ]; then
  # leave the machine as before: no test drop-in naming a removed plugin
  rm -f /etc/slurm/plugstack.conf.d/autosync-test.conf
  dpkg -P $(printf '%s\n' "${debs[@]##*/}" | sed 's/_.*//') >>_build/dpkg.log 2>&1 ||
    { add 0 1; echo "not ok - dpkg -P the packages"; }
fi

step "the emulated multi-host lab (network namespaces + Open MPI)"
if [ -x _build/plain/cli/autosync ]; then
  timeout 600 tests/lab/ci.sh _build/plain/cli/autosync >_build/lab.log 2>&1
  sed 's/^/  /' _build/lab.log | grep -E '^  (ok|not ok|#|1\.\.)'
  if grep -q '^1\.\.0 # SKIP' _build/lab.log; then
    echo "--- lab: skipped ($(grep -m1 SKIP _build/lab.log))"
  else
    if ! grep -q '^1\.\.' _build/lab.log; then echo "not ok - lab test printed no plan"; add 0 1; fi
    count_tap _build/lab.log "lab"
  fi
else
  add 0 1; echo "not ok - no CLI was built for the lab"
fi

step "Kubernetes pods for real: the webhook's patch played with podman (tests/k8s/podman.sh)"
if [ -x _build/plain/cli/autosync ]; then
  timeout 600 sh tests/k8s/podman.sh _build/plain >_build/podman.log 2>&1
  sed 's/^/  /' _build/podman.log | grep -E '^  (ok|not ok|#|1\.\.)'
  if grep -q '^1\.\.0 # SKIP' _build/podman.log; then
    echo "--- podman: skipped ($(grep -m1 SKIP _build/podman.log))"
  else
    grep -q '^1\.\.' _build/podman.log || { echo "not ok - podman test printed no plan"; add 0 1; }
    count_tap _build/podman.log "podman"
  fi
fi

step "formatting (.clang-format on every C file; tests/format.sh)"
sh tests/format.sh . >_build/format.log 2>&1
sed 's/^/  /' _build/format.log
if grep -q '^1\.\.0 # SKIP' _build/format.log; then
  add 0 1; echo "not ok - clang-format is missing (install-deps installs it)"
else
  count_tap _build/format.log "format"
fi

step "fuzzing (${FUZZ_SECONDS:-20}s per target; tests/fuzz/run.sh)"
for t in cluster_spec nccl_xml model plan costs siteconf feedback report envelope nesting rules agree child webhook; do
  # a target that did not run (a name run.sh does not know, libraries it
  # skips without) prints no line of its own: that is a failure too
  if FUZZ_SECONDS=${FUZZ_SECONDS:-20} FUZZ_WORKDIR=_build/fuzz sh tests/fuzz/run.sh _build/asan "$t" >_build/fuzz-$t.log 2>&1 &&
     grep -q "^run.sh: $t: " _build/fuzz-$t.log; then
    add 1 0; echo "ok - fuzz $(grep "^run.sh: $t:" _build/fuzz-$t.log | head -1 | sed 's/^run.sh: //')"
  else
    tail -30 _build/fuzz-$t.log; add 0 1; echo "not ok - fuzz $t"
  fi
done

echo
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
