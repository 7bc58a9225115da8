# tap.sh - TAP helpers for the CLI's shell tests (sourced).
AUTOSYNC=${AUTOSYNC_BUILDDIR:-.}/cli/autosync
SRCDIR=${AUTOSYNC_SRCDIR:-.}
_n=0 _failed=0
ok() { _n=$((_n + 1)); if [ "$1" = 0 ]; then echo "ok $_n - $2"; else echo "not ok $_n - $2"; _failed=$((_failed + 1)); fi; }
is() {
  if [ "$1" = "$2" ]; then ok 0 "$3"; else ok 1 "$3"; printf '#      got: %s\n#     want: %s\n' "$1" "$2"; fi
}
# like GOT REGEX WHAT: a line of GOT matches. grep takes a pattern of
# several lines as several patterns, any one enough: such a pattern fails.
like() {
  case $2 in *'
'*) ok 1 "$3"; printf '#     like: a pattern of several lines matches any one of them: /%s/\n' "$2"; return ;; esac
  if printf '%s\n' "$1" | grep -Eq -- "$2"; then ok 0 "$3"; else ok 1 "$3"; printf '#      got: %s\n#     want: /%s/\n' "$1" "$2"; fi
}
done_testing() { echo "1..$_n"; [ "$_failed" = 0 ]; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/autosync-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
