#!/bin/sh
# The module graph (tests/layers.py): a new back-arrow between modules, an
# internal header used outside its folder or an include cycle fails.
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not installed"
	exit 0
fi
exec python3 "${AUTOSYNC_SRCDIR:-.}/tests/layers.py" "${AUTOSYNC_SRCDIR:-.}"
