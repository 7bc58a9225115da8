#!/bin/sh
# ddp_hooks.sh - autosync.torch's strategies against plain DDP on 1-8 CPU
# ranks (contrib/pytorch/test/ddp_hooks.py, gloo). TAP. Needs torch in
# $AUTOSYNC_TORCH_PYTHON (default /usr/bin/python3, Debian's python3-torch);
# skips without it. About a minute on 2 CPUs.
SRC=${AUTOSYNC_SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
PY=${AUTOSYNC_TORCH_PYTHON:-/usr/bin/python3}
if ! [ -x "$PY" ] || ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
	echo "1..0 # SKIP $PY has no torch (apt-get install python3-torch)"
	exit 0
fi
if ! "$PY" -c 'import torch.distributed as d; assert d.is_available() and d.is_gloo_available()' 2>/dev/null; then
	echo "1..0 # SKIP $PY's torch has no gloo backend"
	exit 0
fi
"$PY" "$SRC/contrib/pytorch/test/ddp_hooks.py" "$@" 2>&1 | grep -v -e 'Warning' -e 'warnings.warn' -e 'cannot all-reduce bfloat16'
