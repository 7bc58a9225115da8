#!/bin/sh
# export.sh - autosync.export on small models, each file read back by the
# planner (contrib/pytorch/test/export.py). TAP. Needs torch in
# $AUTOSYNC_TORCH_PYTHON (default /usr/bin/python3); skips without it.
SRC=${AUTOSYNC_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
PY=${AUTOSYNC_TORCH_PYTHON:-/usr/bin/python3}
AUTOSYNC=${AUTOSYNC:-${AUTOSYNC_BUILDDIR:-.}/cli/autosync}
if ! [ -x "$PY" ] || ! "$PY" -c 'import torch' 2>/dev/null; then
	echo "1..0 # SKIP $PY has no torch (apt-get install python3-torch)"
	exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/autosync-export.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$PY" "$SRC/contrib/pytorch/test/export.py" "$AUTOSYNC" "$TMP" 2>&1 | grep -v -e 'Warning' -e 'warnings.warn'
