# lib.sh - TAP helpers for autosync's integration tests (sourced).
#
# Every test file runs as root (it may rewrite the test cluster's plugstack
# drop-in and site config) and submits its jobs as $IT_USER through `as_user`
# (root or an unprivileged user). srun exits 0 even when a remote callback
# fails, so tests assert on what the tasks print, not on srun's exit code.
set -uo pipefail

IT_USER=${IT_USER:-root}
IT_SITE=${IT_SITE:-/var/lib/autosync-test/etc/autosync.yaml}
IT_DROPIN=/etc/slurm/plugstack.conf.d/autosync-test.conf
_n=0 _failed=0

ok() {      # ok STATUS NAME  (STATUS 0 = pass)
  _n=$((_n + 1))
  if [ "$1" = 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; _failed=$((_failed + 1)); fi
}
check() {   # check NAME CMD... : pass if CMD succeeds
  local name=$1; shift
  "$@"; ok $? "$name"
}
is() {      # is GOT WANT NAME
  if [ "$1" = "$2" ]; then ok 0 "$3"; else
    ok 1 "$3"
    printf '#      got: %s\n#     want: %s\n' "$1" "$2" | sed '1!s/^\([^#]\)/#           \1/'
  fi
}
like() {    # like GOT EREGEX NAME
  if grep -Eq -- "$2" <<<"$1"; then ok 0 "$3"; else
    ok 1 "$3"; printf '#      got: %s\n#     want: /%s/\n' "$1" "$2"
  fi
}
unlike() {  # unlike GOT EREGEX NAME
  if grep -Eq -- "$2" <<<"$1"; then ok 1 "$3"; printf '#      got: %s\n#  but not: /%s/\n' "$1" "$2"; else ok 0 "$3"; fi
}
diag() { printf '# %s\n' "$*"; }
done_testing() { echo "1..$_n"; [ "$_failed" = 0 ]; }

# Run a command as the test user, with a clean Slurm environment (srun and
# sbatch read SLURM_* variables as options) and in a directory they own.
_quiet() {  # drop Slurm's queueing chatter from stderr (it depends on timing)
  grep -Ev '^(srun|salloc): job [0-9]+ (queued and waiting for resources|has been allocated resources)$' || true
}
as_user() {
  { _as_user "$@" 2>&1 1>&3 3>&- | _quiet >&2 3>&-; return "${PIPESTATUS[0]}"; } 3>&1
}
_as_user() {
  local clean
  clean=$(compgen -e | grep -E '^(SLURM_|AUTOSYNC_)' | sed 's/^/-u /' | tr '\n' ' ')
  if [ "$IT_USER" = root ]; then
    (cd "$IT_WORK" && env $clean "$@")
  else
    (cd "$IT_WORK" && env $clean runuser -u "$IT_USER" -- "$@")
  fi
}
# as_user with extra environment: as_user_env VAR=VAL... -- CMD...
as_user_env() {
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done; shift
  as_user env "${vars[@]}" "$@"
}

IT_WORK=$(mktemp -d /tmp/autosync-it.XXXXXX)
chmod 0755 "$IT_WORK"
[ "$IT_USER" = root ] || chown "$IT_USER" "$IT_WORK"
trap 'rm -rf "$IT_WORK"' EXIT

# Rewrite the plugin's plugstack arguments (takes effect at the next step).
set_plugin_args() {
  local so
  so=$(awk '{print $2; exit}' "$IT_DROPIN")
  echo "required $so $*" > "$IT_DROPIN.new" && mv "$IT_DROPIN.new" "$IT_DROPIN"
}
# Restore the default arguments the runner started the cluster with.
reset_plugin_args() { set_plugin_args "config=$IT_SITE"; }

IT_LIB=${IT_LIB:-/var/lib/autosync-test}
# the CLI under test: the build's copy, or the installed package's
AUTOSYNC=${IT_AUTOSYNC:-$IT_LIB/bin/autosync}
FEEDBACK=$IT_LIB/feedback/feedback.jsonl
# use_site NAME 'yaml lines…': a variant of the test site config (the
# defaults, with the given top-level keys replaced), and point the plugin
# at it for the next steps.
use_site() {
  local f=$IT_LIB/etc/$1.yaml keys
  keys=$(printf '%s\n' "$2" | sed -n 's/^\([a-z_]*\):.*/\1/p' | paste -sd'|')
  { awk -v k="^(${keys:-none}):" '
      /^[a-z_]+:/ { skip = ($0 ~ k) } skip && /^  / { next } !($0 ~ k) || !/^[a-z_]+:/ { if (!skip) print }' "$IT_SITE"
    printf '%s\n' "$2"; } > "$f"
  chmod 0644 "$f"
  set_plugin_args "config=$f"
}
