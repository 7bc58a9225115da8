#!/bin/sh
# doc-paths.sh - one set of install paths: the README, the man pages, the
# guides and the example config name the SPANK plugin, the plugstack drop-in,
# the site config and the NCCL plugins only where the packages put them
# (Debian's and the RPM's, checked against debian/ and packaging/autosync.spec
# here), and the main documents name the paths of both. Prints TAP.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
src=${AUTOSYNC_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 1
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }

# The documented paths, per distribution (packaging/README.md's table)
deb_plugin=/usr/lib/x86_64-linux-gnu/slurm-wlm/spank_autosync.so
rpm_plugin=/usr/lib64/slurm/spank_autosync.so
deb_nccl=/usr/lib/x86_64-linux-gnu/autosync
rpm_nccl=/usr/lib64/autosync
dropin=/etc/slurm/plugstack.conf.d/autosync.conf
testdropin=/etc/slurm/plugstack.conf.d/autosync-test.conf
site=/etc/autosync/autosync.yaml
example=/usr/share/autosync/examples/autosync.yaml.example

# ... are the packages' paths
grep -q '^SLURM_PLUGINDIR ?= /usr/lib/$(DEB_HOST_MULTIARCH)/slurm-wlm$' debian/rules &&
	grep -q 'dh_install -pslurm-spank-autosync $(SLURM_PLUGINDIR:/%=%)/spank_autosync.so' debian/rules &&
	! grep -q 'spank_autosync.so' debian/slurm-spank-autosync.install
ok $? "debian/ installs the plugin at $deb_plugin"
grep -qx '%global slurm_plugindir %{_libdir}/slurm' packaging/autosync.spec
ok $? "the spec installs the plugin at $rpm_plugin"
grep -qx "usr/lib/\${DEB_HOST_MULTIARCH}/autosync/libnccl-tuner-autosync.so" debian/autosync-nccl-plugins.install &&
	grep -qx '%{_libdir}/autosync/libnccl-tuner-autosync.so' packaging/autosync.spec
ok $? "both install the NCCL plugins in \$(libdir)/autosync"
grep -qx "#required @slurmplugindir@/spank_autosync.so config=@sysconfdir@/autosync/autosync.yaml" etc/autosync.conf.in
ok $? "the drop-in names the plugin's install path and $site"

# Every path of these kinds in the documents must be one of the above.
docs=$(ls README.md docs/*.md docs/*.[158] etc/*.example etc/*.in packaging/README.md \
	contrib/README.md launcher/README.md 2>/dev/null)
allowed=" $deb_plugin $rpm_plugin $deb_nccl/libnccl-tuner-autosync.so $deb_nccl/libnccl-profiler-autosync.so \
$rpm_nccl/libnccl-tuner-autosync.so $rpm_nccl/libnccl-profiler-autosync.so $deb_nccl $rpm_nccl \
$dropin $testdropin $site $example ${example%/*} /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib64/slurm \
\$(slurmplugindir)/spank_autosync.so \$(libdir)/slurm \$(libdir)/autosync \$(pkglibdir) \
\$(libdir)/autosync/libnccl-tuner-autosync.so \$(libdir)/autosync/libnccl-profiler-autosync.so "
# a path starts at a blank, quote or bracket with / or $(dir)
pattern='(^|[][ 	"`(=:])(/|\$\([a-z]+\)/?)[A-Za-z0-9_./@${}()-]*(spank_autosync\.so|slurm-wlm|lib64/slurm|/slurm/|libnccl-(tuner|profiler)-autosync\.so|plugstack\.conf\.d/[a-z0-9.-]+|slurm-llnl[a-z/.]*|etc/autosync/[a-z0-9.-]+\.yaml|share/autosync/examples/[a-z.]+)'
for f in $docs; do
	bad=
	for p in $(sed 's/\\-/-/g; s/\\fR//g; s/\\fI//g; s/\\fB//g' "$f" | grep -oE "$pattern" |
		sed -E 's/^[][ 	"`(=:]//; s/[.,/]*$//; s/^([^(]*)\)$/\1/' | sort -u); do
		case $allowed in *" $p "*) continue ;; esac
		case $p in
		/*/autosync/*.yaml) case $p in /etc/autosync/*) continue ;; esac ;;
		esac
		bad="$bad $p"
	done
	# the NCCL plugin directory given as a value
	for p in $(sed -n 's/.*nccl_plugin_dir: *\(\/[^ ]*\).*/\1/p' "$f"); do
		case " $deb_nccl $rpm_nccl " in *" $p "*) ;; *) bad="$bad $p" ;; esac
	done
	[ -z "$bad" ]
	ok $? "$f names only the documented paths${bad:+ (not:$bad)}"
done

# The admin's documents name each distribution's plugin path.
for f in README.md packaging/README.md docs/autosync-spank.8; do
	t=$(sed 's/\\-/-/g; s/\\fR//g; s/\\fI//g; s/\\fB//g' "$f")
	case $t in *"$deb_plugin"*"$rpm_plugin"* | *"$rpm_plugin"*"$deb_plugin"*) r=0 ;; *) r=1 ;; esac
	ok $r "$f gives the Debian and the RPM plugin path"
done
echo "1..$n"
[ "$failed" = 0 ]
