#!/usr/bin/env bash
# install-layout.sh BUILDDIR - `make install DESTDIR=…` puts every file where
# a packager expects it. Prints TAP.
set -uo pipefail
build=$(cd "${1:?usage: install-layout.sh BUILDDIR}" && pwd)
dest=$(mktemp -d /tmp/autosync-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
n=0 failed=0
t() { n=$((n+1)); if eval "$1"; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed+1)); fi; }

make -C "$build" install DESTDIR="$dest" >"$dest.log" 2>&1; rc=$?
t '[ $rc = 0 ]' "make install DESTDIR=… succeeds"
prefix=$(sed -n 's/^prefix = //p' "$build/Makefile")
libdir=$(sed -n 's/^libdir = //p' "$build/Makefile" | sed "s|\${exec_prefix}|$prefix|;s|\$(exec_prefix)|$prefix|")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$build/Makefile" | sed "s|\${prefix}|$prefix|;s|\$(prefix)|$prefix|")
plugindir=$(sed -n 's/^slurmplugindir = //p' "$build/Makefile" | sed "s|\${libdir}|$libdir|;s|\$(libdir)|$libdir|")
t '[ -x "$dest$plugindir/spank_autosync.so" ]' "plugin in \$(slurmplugindir) ($plugindir)"
t '[ -f "$dest$libdir/autosync/libnccl-tuner-autosync.so" ] && [ -f "$dest$libdir/autosync/libnccl-profiler-autosync.so" ] && ! ls "$dest$libdir"/libnccl-* >/dev/null 2>&1' \
  "NCCL plugins in \$(libdir)/autosync, not on the loader path"
t '[ -f "$dest$prefix/share/bash-completion/completions/autosync" ]' "bash completion, named after the command"
t '[ -x "$dest$prefix/bin/autosync" ]' "CLI in \$(bindir)"
pkglibexecdir=$(sed -n 's/^libexecdir = //p' "$build/Makefile" | sed "s|\${exec_prefix}|$prefix|;s|\$(exec_prefix)|$prefix|")/autosync
if [ -x "$build/launcher/runtime/autosync-bench" ]; then   # built with Open MPI
  t '[ -x "$dest$pkglibexecdir/autosync-bench" ]' "the trial runs (MPI) in \$(pkglibexecdir): autosync-bench"
fi
if [ -x "$build/webhook/autosync-webhook" ]; then   # built with libmicrohttpd
  t '[ -x "$dest$prefix/bin/autosync-webhook" ] && [ -f "$dest$prefix/share/man/man8/autosync-webhook.8" ]' "the Kubernetes webhook in \$(bindir), its man page"
fi
# the admin's command, the plugin and the library load no MPI/NCCL/CUDA/NVML
sh "$(dirname "$0")/needed.sh" "$dest$prefix/bin/autosync" "$dest$plugindir/spank_autosync.so" \
  "$dest$libdir"/libautosync.so.*.*.* >"$dest/needed.log" 2>&1
needed_rc=$?   # t() runs other commands before its test: $? is gone there
t '[ $needed_rc = 0 ] && ! grep -q "^not ok" "$dest/needed.log"' "installed autosync, plugin and library need no MPI, NCCL, CUDA or NVML library (tests/needed.sh)"
sed 's/^/# /' "$dest/needed.log"
t '[ -f "$dest$prefix/include/autosync/common.h" ] && [ -f "$dest$prefix/include/autosync/siteconf.h" ]' "public headers in \$(includedir)/autosync"
t 'ls "$dest$libdir"/libautosync.so.* >/dev/null 2>&1' "libautosync shared library"
f="$dest$sysconfdir/slurm/plugstack.conf.d/autosync.conf"
t '[ -f "$f" ] && grep -q "^#required $plugindir/spank_autosync.so config=$sysconfdir/autosync/autosync.yaml$" "$f"' \
  "reference plugstack drop-in with the plugin line commented out"
t '! grep -q "^required" "$f"' "the drop-in enables nothing by itself"
t '[ -f "$dest$prefix/share/autosync/examples/autosync.yaml.example" ]' "example site config"
t '[ -f "$dest$prefix/share/man/man8/autosync-spank.8" ] && [ -f "$dest$prefix/share/man/man1/autosync.1" ] && [ -f "$dest$prefix/share/man/man5/autosync.yaml.5" ] && [ -f "$dest$prefix/share/man/man5/autosync-plan.5" ]' "man pages"
# only the public prefix leaks from the shared library
bad=$(nm -D --defined-only "$dest$libdir"/libautosync.so.*.*.* 2>/dev/null | awk '{print $3}' | grep -v '^autosync_' | grep -v '^AUTOSYNC_1$' | head -5)
t '[ -z "$bad" ]' "libautosync exports only autosync_* ($bad)"
bad=$(nm -D --defined-only "$dest$plugindir/spank_autosync.so" | awk '{print $3}' | grep -Ev '^(plugin_name|plugin_type|plugin_version|spank_plugin_version|slurm_spank_.*)$' | head -5)
t '[ -z "$bad" ]' "the plugin exports only plugin_* and slurm_spank_* ($bad)"
# the exported functions are exactly those the installed headers declare
declared=$(cat "$dest$prefix"/include/autosync/*.h | sed -e ':a' -e 's|/\*.*\*/||g;/\/\*/{N;ba' -e '}' |
  grep -oE '\bautosync_[a-z0-9_]+[[:space:]]*\(' | sed 's/[[:space:](]*$//' | sort -u)
exported=$(nm -D --defined-only "$dest$libdir"/libautosync.so.*.*.* | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$declared") <(echo "$exported") | paste -sd' ')
missing=$(comm -23 <(echo "$declared") <(echo "$exported") | paste -sd' ')
t '[ -z "$extra" ]' "every exported function is declared in an installed header (${extra:-none undeclared})"
t '[ -z "$missing" ]' "every declared function is exported (${missing:-none missing})"
pc="$dest$libdir/pkgconfig/autosync.pc"
t '[ -f "$pc" ] && grep -q "^Libs: -L\${libdir} -lautosync$" "$pc"' "autosync.pc in \$(libdir)/pkgconfig"
# a program built against the installed headers and library alone
cat > "$dest/use.c" <<'C'
#include <autosync/job.h>
#include <stdio.h>
int main(void) { autosync_cluster_t c; autosync_cluster_default(&c); printf("%s %u\n", autosync_version(), c.nodes); return 0; }
C
t 'PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" cc -o "$dest/use" "$dest/use.c" $(PKG_CONFIG_PATH="$dest$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" pkg-config --cflags --libs autosync) 2>"$dest/use.log" && LD_LIBRARY_PATH="$dest$libdir" "$dest/use" | grep -q " 4$"' \
  "a program builds and runs with pkg-config --cflags --libs autosync"
echo "1..$n"
[ "$failed" = 0 ]
