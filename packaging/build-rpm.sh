#!/usr/bin/env bash
# build-rpm.sh TARBALL OUTDIR - build the RPMs of packaging/autosync.spec
# from a release tarball (make dist) with rpmbuild, then check what they hold
# with rpm -qlp. Prints TAP. On Debian (CI) the build dependencies are the
# Debian ones, so rpmbuild runs with --nodeps; --nocheck because CI runs the
# unit tests in its sanitizer build.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tarball=$(cd "$(dirname "${1:?usage: build-rpm.sh TARBALL OUTDIR}")" && pwd)/$(basename "$1")
out=$(mkdir -p "${2:?usage: build-rpm.sh TARBALL OUTDIR}" && cd "$2" && pwd)
n=0 failed=0
# (checks run without pipefail: grep -q may end a pipe before rpm is done)
t() { n=$((n+1)); if (set +o pipefail; eval "$1"); then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed+1)); fi; }

missing=()
for p in rpm cpio; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  [ "$(id -u)" = 0 ] || { echo "build-rpm.sh: missing: ${missing[*]}" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

rm -rf "$out/rpmbuild"
mkdir -p "$out/rpmbuild/SOURCES"
cp "$tarball" "$out/rpmbuild/SOURCES/"
rpmbuild --nodeps --nocheck -bb --define "_topdir $out/rpmbuild" "$here/autosync.spec" \
  >"$out/rpmbuild.log" 2>&1; rc=$?
t '[ $rc = 0 ]' "rpmbuild --nodeps -bb packaging/autosync.spec"
[ "$rc" = 0 ] || tail -40 "$out/rpmbuild.log" | sed 's/^/# /'
rpms=$out/rpmbuild/RPMS
files() { rpm -qlp "$rpms"/*/"$1"-[0-9]*.rpm 2>/dev/null; }
for r in "$rpms"/*/*.rpm; do
  [ -e "$r" ] || continue
  echo "# $(basename "$r"):"; rpm -qlp "$r" | sed 's/^/#   /'
done

libdir=$(rpm --eval %_libdir)
t 'files slurm-spank-autosync | grep -qx "$libdir/slurm/spank_autosync.so"' \
  "slurm-spank-autosync: the plugin in SchedMD's PluginDir, $libdir/slurm"
t 'files slurm-spank-autosync | grep -qx /etc/slurm/plugstack.conf.d/autosync.conf' \
  "slurm-spank-autosync: the plugstack drop-in"
dropin=$(cd "$out" && rpm2cpio "$rpms"/*/slurm-spank-autosync-[0-9]*.rpm | cpio -i --quiet --to-stdout ./etc/slurm/plugstack.conf.d/autosync.conf 2>/dev/null)
t 'grep -qx "#required $libdir/slurm/spank_autosync.so config=/etc/autosync/autosync.yaml" <<<"$dropin" && ! grep -q "^required" <<<"$dropin"' \
  "the drop-in names that path, commented out"
t 'rpm -qp --configfiles "$rpms"/*/slurm-spank-autosync-[0-9]*.rpm | grep -qx /etc/slurm/plugstack.conf.d/autosync.conf' \
  "the drop-in is a config file"
v=$(sed -n 's/^#define SLURM_VERSION_NUMBER //p' /usr/include/slurm/slurm_version.h)
series=$(printf '%d.%02d' $((v >> 16)) $(((v >> 8) & 255)))
t 'rpm -qp --requires "$rpms"/*/slurm-spank-autosync-[0-9]*.rpm | grep -qx "slurm >= $series" && rpm -qp --queryformat "%{RELEASE}" "$rpms"/*/slurm-spank-autosync-[0-9]*.rpm | grep -q "^1\.sl${series/./}"' \
  "pinned to the Slurm series it was built for ($series)"
t 'files autosync-nccl-plugins | grep -qx "$libdir/autosync/libnccl-tuner-autosync.so" && files autosync-nccl-plugins | grep -qx "$libdir/autosync/libnccl-profiler-autosync.so"' \
  "autosync-nccl-plugins: both plugins in $libdir/autosync"
t 'files autosync | grep -qx /usr/bin/autosync && files autosync | grep -qx /usr/share/bash-completion/completions/autosync && files autosync | grep -q "^/usr/share/man/man5/autosync-plan.5"' \
  "autosync: the command, its completion, autosync-plan(5)"
t 'files autosync-libs | grep -q "^$libdir/libautosync.so.0" && files autosync-devel | grep -qx "$libdir/pkgconfig/autosync.pc"' \
  "autosync-libs and autosync-devel"
t 'files python3-autosync | grep -q "/autosync/torch.py$"' "python3-autosync: the PyTorch adapter (autosync.torch)"
echo "1..$n"
[ "$failed" = 0 ]
