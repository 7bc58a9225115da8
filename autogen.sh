#!/bin/sh
# Regenerate the build system (configure, Makefile.in, libtool, aux files).
set -e
cd "$(dirname "$0")"
mkdir -p config m4
exec autoreconf --install --force --warnings=all
