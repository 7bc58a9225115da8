#!/bin/sh
# autosync config check FILE
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"

out=$("$AUTOSYNC" config check "$SRCDIR/etc/autosync.yaml.example" 2>&1); rc=$?
is "$rc" 0 "the shipped example is valid"
is "$out" "$SRCDIR/etc/autosync.yaml.example: valid" "and says so"

cat > "$TMP/bad.yaml" <<'YAML'
version: 3
default_mode: maybe
network:
  latency: 5 parsecs
  fabric_nics: [mlx5_0, "bad name"]
YAML
out=$("$AUTOSYNC" config check "$TMP/bad.yaml" 2>&1); rc=$?
is "$rc" 1 "an invalid file exits 1"
is "$out" "$TMP/bad.yaml:1: version: version '3' is not supported (this autosync reads versions 1 and 2)
$TMP/bad.yaml:2: default_mode: bad value 'maybe' (expected off or auto)
$TMP/bad.yaml:4: network.latency: bad duration '5 parsecs': want a number and a unit s, ms, us, µs or ns (e.g. 2us)
$TMP/bad.yaml:5: network.fabric_nics: bad NIC name 'bad name'
$TMP/bad.yaml: 4 problems" "every problem, with file and line"

cat > "$TMP/v1.yaml" <<'YAML'
version: 1
plan_budget_ms: 500
YAML
out=$("$AUTOSYNC" config check "$TMP/v1.yaml" 2>&1); rc=$?
is "$rc:$out" "0:autosync config: $TMP/v1.yaml: site config version 1, read as version 2: plan_budget_ms now defaults to 1000 and covers loading the model and topology; plan_memory (default 4GiB) and keep_job_files (default 1d) are new; set 'version: 2' once checked
$TMP/v1.yaml: valid" "a version 1 file is valid, with a one-line note"

cat > "$TMP/colour.yaml" <<'YAML'
default_mod: auto
YAML
out=$("$AUTOSYNC" config check "$TMP/colour.yaml" 2>&1); rc=$?
like "$out" "^$TMP/colour.yaml:1: unknown key 'default_mod' \\(did you mean 'default_mode'\\? known: version, default_mode, " "an unknown key suggests the closest"

out=$("$AUTOSYNC" config check "$TMP/none.yaml" 2>&1); rc=$?
is "$rc" 1 "a missing file exits 1"
is "$out" "autosync: $TMP/none.yaml: cannot open: No such file or directory" "missing file message"

out=$("$AUTOSYNC" config 2>&1); rc=$?
is "$rc" 2 "usage error exits 2"
out=$("$AUTOSYNC" frobnicate 2>&1); rc=$?
is "$rc" 2 "unknown command exits 2"
like "$out" "^autosync: unknown command 'frobnicate'" "unknown command named"
out=$("$AUTOSYNC" --version); rc=$?
like "$out" "^autosync [0-9]+\.[0-9]+\.[0-9]+$" "--version"
done_testing
