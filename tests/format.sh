#!/bin/sh
# format.sh - every tracked C source and header is as clang-format
# (.clang-format at the top of the tree) would write it. TAP, one line per
# file that differs and one summary line; skips without clang-format.
# usage: tests/format.sh [SRCDIR]
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 2
CF=${CLANG_FORMAT:-clang-format}
if ! command -v "$CF" >/dev/null 2>&1; then
	echo "1..0 # SKIP $CF not found"
	exit 0
fi
# the tracked files in a clone; in a release tarball (even one unpacked
# inside another clone), every C file but the build's own
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
	files=$(git ls-files '*.c' '*.h')
else
	files=$(find . -name '*.[ch]' ! -path './_build/*' ! -path './config.h' \
		! -path './autom4te.cache/*' | sed 's|^\./||' | sort)
fi
n=0 bad=0
for f in $files; do
	n=$((n + 1))
	if ! "$CF" --dry-run -Werror "$f" >/dev/null 2>&1; then
		bad=$((bad + 1))
		echo "not ok $bad - $f is not clang-formatted (clang-format -i $f)"
	fi
done
if [ "$bad" = 0 ]; then
	echo "ok 1 - $n C files as clang-format writes them"
	echo "1..1"
else
	echo "1..$bad"
fi
