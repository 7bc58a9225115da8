#!/usr/bin/env bash
# build-deb.sh OUTDIR - build autosync's Debian packages from this checkout
# with dpkg-buildpackage, then check them with lintian.
#
# The checkout's files (git's tracked and untracked-but-not-ignored ones, or
# everything but _build/ outside git) are copied to OUTDIR/autosync-VERSION,
# so the build neither touches the checkout nor writes beside it; the .deb
# files land in OUTDIR. DEB_BUILD_OPTIONS is passed through (CI sets
# nocheck: it runs the unit tests in its own sanitizer build). Installs the
# build dependencies when run as root and they are missing.
# Exit status: 1 when the build fails or lintian reports an error.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: build-deb.sh OUTDIR}" && cd "$1" && pwd)
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
tree=$out/autosync-$version

# debian/control's Build-Depends (the first of each alternative), and the
# tools this script runs: one list, so that neither falls behind the other
mapfile -t deps < <(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$src/debian/control" |
  sed '1s/^Build-Depends://; /^[A-Z]/d' | tr ',' '\n' |
  sed 's/|.*//; s/(.*)//; s/^ *//; s/ *$//; /^$/d; s/^debhelper-compat$/debhelper/')
deps+=(dpkg-dev fakeroot lintian)
missing=()
for p in "${deps[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  [ "$(id -u)" = 0 ] || { echo "build-deb.sh: missing: ${missing[*]}" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

rm -rf "$tree" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$tree"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # a file deleted in the work tree but still in the index is skipped
  (cd "$src" && git ls-files -z -co --exclude-standard |
     while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
     tar --null -T - -cf -) | tar -C "$tree" -xf -
else
  (cd "$src" && tar --exclude=./_build --exclude=./.git -cf - .) | tar -C "$tree" -xf -
fi

echo "build-deb.sh: dpkg-buildpackage in $tree (DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-})"
(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 ||
  { tail -60 "$out/build.log"; echo "build-deb.sh: dpkg-buildpackage failed ($out/build.log)" >&2; exit 1; }
ls "$out"/*.deb

# lintian: errors fail; warnings are printed. Root may run lintian only
# with --allow-root.
root=()
[ "$(id -u)" = 0 ] && root=(--allow-root)
lintian "${root[@]}" --fail-on error "$out"/*.changes >"$out/lintian.log" 2>&1; rc=$?
cat "$out/lintian.log"
[ "$rc" = 0 ] || { echo "build-deb.sh: lintian reports errors" >&2; exit 1; }
echo "build-deb.sh: packages in $out, lintian: no errors"
