#!/usr/bin/env bash
# installed.sh - the installed Debian packages (packaging/build-deb.sh,
# dpkg -i) put everything where Debian's Slurm, NCCL, bash and Python look.
# Run as root with the test cluster up (tests/run-integration.sh
# --installed): Slurm's PluginDir comes from `scontrol show config`. TAP.
set -uo pipefail
n=0 failed=0
t() { n=$((n+1)); if (set +o pipefail; eval "$1"); then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed+1)); fi; }
user=${AUTOSYNC_TEST_USER:-astest}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)

dropin=/etc/slurm/plugstack.conf.d/autosync.conf
so=$(sed -n 's/^#required \([^ ]*\) .*/\1/p' $dropin 2>/dev/null)
plugindir=$(scontrol show config 2>/dev/null | awk '$1 == "PluginDir" {print $3}')
t '[ -n "$plugindir" ] && [ "$so" = "$plugindir/spank_autosync.so" ] && [ -f "$so" ]' \
  "the drop-in's plugin is in Slurm's PluginDir (${plugindir:-?})"
t '[ "$so" = "/usr/lib/$ma/slurm-wlm/spank_autosync.so" ]' "at the documented Debian path"
t '! grep -q "^required" $dropin && dpkg-query -W -f="\${Conffiles}" slurm-spank-autosync | grep -q " $dropin "' \
  "the drop-in is a conffile and enables nothing"
t '[ "$(runuser -u "$user" -- /usr/bin/autosync --version)" = "autosync $(dpkg-query -W -f="\${Version}" autosync)" ]' \
  "autosync --version, as a user, is the package's version"
t 'runuser -u "$user" -- /usr/bin/autosync plan --list | grep -q "^resnet50 "' "the packaged model catalog is found"
t '/usr/bin/autosync launch --help | tr -s " \n" "  " | grep -q "or /usr/lib/$ma/autosync)" && [ -f /usr/lib/$ma/autosync/libnccl-tuner-autosync.so ] && [ -f /usr/lib/$ma/autosync/libnccl-profiler-autosync.so ]' \
  "the NCCL plugins are where autosync launch looks by default"
t '[ "$(bash -c ". /usr/share/bash-completion/completions/autosync; COMP_WORDS=(autosync pl); COMP_CWORD=1; _autosync; echo \${COMPREPLY[*]}")" = plan ]' \
  "bash completion"
t 'zcat /usr/share/man/man5/autosync-plan.5.gz | grep -q "^\.TH AUTOSYNC-PLAN 5" && zcat /usr/share/man/man5/autosync-feedback.5.gz | grep -q "^\.TH AUTOSYNC-FEEDBACK 5" && [ -f /usr/share/man/man8/autosync-spank.8.gz ]' \
  "man pages autosync-plan(5), autosync-feedback(5), autosync-spank(8)"
t '[ "$(cd / && /usr/bin/python3 -c "import autosync.plan as p; print(p.__file__)")" = /usr/lib/python3/dist-packages/autosync/plan.py ]' \
  "python3 imports the packaged adapter (autosync.plan; autosync.torch needs torch)"
t '/usr/bin/autosync-webhook --help | grep -q "^usage: autosync-webhook --cert FILE --key FILE" && [ -f /usr/share/man/man8/autosync-webhook.8.gz ] && ! ldd /usr/bin/autosync-webhook | grep -Eq "libhwloc|libyaml|libautosync"' \
  "autosync-webhook (package autosync-webhook): runs, its man page, no planner libraries loaded"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
printf '#include <autosync/common.h>\n#include <stdio.h>\nint main(void) { puts(autosync_version()); return 0; }\n' >"$work/v.c"
t 'cc -o "$work/v" "$work/v.c" $(pkg-config --cflags --libs autosync) && [ "$("$work/v")" = "$(dpkg-query -W -f="\${Version}" libautosync0)" ]' \
  "a program builds against libautosync-dev and runs with libautosync0"
echo "1..$n"
[ "$failed" = 0 ]
