#!/bin/sh
# etc/autosync-retrain (what the timer runs): trains on the records before
# WINDOW, promotes on the records after it; a site without a log is left
# alone; with BASE, the site's records adapt a file trained elsewhere. On
# the committed slice: vgg16's records train, bert-large's judge.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
SCRIPT=${AUTOSYNC_BUILDDIR:-.}/etc/autosync-retrain
SLICE=$SRCDIR/tests/fixtures/feedback-lab-slice.jsonl
mkdir -p "$TMP/lib"
cp "$SLICE" "$TMP/lib/feedback.jsonl"
run() { AUTOSYNC=$AUTOSYNC FEEDBACK=$TMP/lib/feedback.jsonl SIMULATOR=$TMP/lib/simulator.bin WINDOW=2026-12-03T09:10:00Z sh "$SCRIPT" 2>"$TMP/err"; }
run > "$TMP/out"; rc=$?
out=$(sed 's|/\.candidate\.[A-Za-z0-9]*\.bin|/.candidate.X.bin|' "$TMP/out")
is "$rc:$out" "0:candidate $TMP/lib/.candidate.X.bin: pairwise 0.867, top-1 regret 1.000, mean abs. error 39.4 % on 6 points; the analytic simulator: pairwise 0.867, regret 1.000, 56.3 %
promoted: $TMP/lib/simulator.bin is the candidate now" "trained on the older records, judged on the newer ones: promoted" || cat "$TMP/err"
like "$(cat "$TMP/err")" "autosync train: 12 records: 8 points" "  it trained on the 12 records before the window"
[ -s "$TMP/lib/simulator.bin" ]; is "$?" 0 "  the site's simulator file exists"
is "$(ls -A "$TMP/lib" | grep -c candidate)" 0 "  no candidate left behind"
# BASE: the same run adapts a file trained elsewhere (here: on the same
# older records, so cross-validation keeps none of the 50 trees)
"$AUTOSYNC" train --until 2026-12-03T09:10:00Z -o "$TMP/base.bin" "$SLICE" 2>/dev/null
rm -f "$TMP/lib/simulator.bin"
BASE=$TMP/base.bin run > "$TMP/out"; rc=$?
out=$(sed 's|/\.candidate\.[A-Za-z0-9]*\.bin|/.candidate.X.bin|' "$TMP/out")
is "$rc:$out" "0:candidate $TMP/lib/.candidate.X.bin: pairwise 0.867, top-1 regret 1.000, mean abs. error 39.4 % on 6 points; the analytic simulator: pairwise 0.867, regret 1.000, 56.3 %
promoted: $TMP/lib/simulator.bin is the candidate now" "BASE: adapted, judged, promoted" || cat "$TMP/err"
like "$(cat "$TMP/err")" "autosync train: 0 of at most 50 trees on top of $TMP/base.bin \\(5-fold cross-validation on these records\\)" "  train --base was given the base"
before=$(cksum < "$TMP/lib/simulator.bin")
out=$(BASE=$TMP/missing.bin run); rc=$?
is "$rc:$out" "1:" "a BASE that does not exist: an error, nothing promoted"
like "$(cat "$TMP/err")" "autosync train: $TMP/missing.bin: cannot open: No such file or directory" "  the error names the file"
is "$(cksum < "$TMP/lib/simulator.bin")" "$before" "  the site's file is left as it was"
is "$(ls -A "$TMP/lib" | grep -c candidate)" 0 "  no candidate left behind"
out=$(AUTOSYNC=$AUTOSYNC FEEDBACK=$TMP/none.jsonl SIMULATOR=$TMP/lib/simulator.bin sh "$SCRIPT" 2>&1); rc=$?
is "$rc:$out" "0:autosync-retrain: no feedback log at $TMP/none.jsonl; nothing to do" "no log yet: nothing done"
done_testing
