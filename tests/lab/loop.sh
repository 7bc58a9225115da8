#!/bin/sh
# loop.sh OUTDIR DATASET.jsonl [AUTOSYNC_BINARY] - the loop closed in the lab
# (not a CI test). Round 1 is the dataset (plans of the
# analytic model, measured): a simulator is trained on it without the
# held-out models (HELDOUT), then round 2 plans those models with it and
# times, interleaved in one mpirun per cell, the analytic plan (autosync),
# the learned one (autosync-learned) and the framework's default
# (ddp-default), ROUNDS rounds of STEPS steps. Also scores the simulator on
# the held-out models' dataset records (autosync eval --simulator).
#
# env: HELDOUT "NAME:SCALE ..." (resnet101:16 gpt2-xl:256), CELLS
#      "RATE:HOSTSxPPN ..." (1gbit:4x2 400mbit:4x2), ROUNDS (4) STEPS (3)
#      MODEL_DIR: a model NAME with MODEL_DIR/NAME.yaml is that file
#      SIMULATOR: plan round 2 with this file instead of training one
#        (then DATA is not read: models, rates or layouts it never saw)
# Each cell plans with the lab's CPU constants measured at its start
# (bench --measure-cpu, as tests/lab/dataset.sh since 6 Dec 2026).
set -u
OUT=${1:?usage: loop.sh OUTDIR DATASET.jsonl [AUTOSYNC_BINARY]}
DATA=${2:?usage: loop.sh OUTDIR DATASET.jsonl [AUTOSYNC_BINARY]}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN=${3:-${AUTOSYNC_BUILDDIR:-$SRC/build}/cli/autosync}
if [ -z "${AUTOSYNC_LIBEXECDIR:-}" ] && [ -x "${BIN%/*}/../launcher/runtime/autosync-bench" ]; then
	AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR
fi
if [ -z "${AUTOSYNC_SIMULATOR_MODULE:-}" ] && [ -f "${BIN%/*}/../learn/.libs/autosync-simulator.so" ]; then
	AUTOSYNC_SIMULATOR_MODULE=$(cd "${BIN%/*}/../learn/.libs" && pwd)/autosync-simulator.so
	export AUTOSYNC_SIMULATOR_MODULE
fi
HELDOUT=${HELDOUT:-"resnet101:16 gpt2-xl:256"}
CELLS=${CELLS:-"1gbit:4x2 400mbit:4x2"}
ROUNDS=${ROUNDS:-4}; STEPS=${STEPS:-3}
MODEL_DIR=${MODEL_DIR:-}
BASE=${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us}
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0}
export LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$SRC/planner/catalog}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
LAB="$HERE/lab.sh"
mkdir -p "$OUT/raw"
up=0
T=$(mktemp -d /tmp/autosync-loop.XXXXXX)   # the split (the dataset, again)
trap '[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/runs.log"; }

if [ -n "${SIMULATOR:-}" ]; then
	SIM=$SIMULATOR
	log "round 2 with $SIM (not trained here)"
else
	# train without the held-out models (their records stay for scoring)
	SIM=$OUT/simulator.bin
	pat=$(for ms in $HELDOUT; do printf '"model": "%s"|' "${ms%%:*}"; done | sed 's/|$//')
	grep -Ev "$pat" "$DATA" > "$T/train.jsonl"
	grep -E "$pat" "$DATA" > "$T/heldout.jsonl"
	"$BIN" train -o "$SIM" "$T/train.jsonl" 2> "$OUT/train.txt" || exit 1
	log "trained on $(wc -l < "$T/train.jsonl") records, $(wc -l < "$T/heldout.jsonl") held out"
	"$BIN" eval --simulator "$SIM" "$T/heldout.jsonl" > "$OUT/heldout-eval.txt" 2>&1
fi

for cell in $CELLS; do
	rate=${cell%%:*}; lay=${cell#*:}; hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1
	LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
	up=$hosts
	for ms in $HELDOUT; do
		m=${ms%%:*}; sc=${ms##*:}; tag="$rate-$lay-$m"
		mf=$m
		[ -n "$MODEL_DIR" ] && [ -f "$MODEL_DIR/$m.yaml" ] && mf="$MODEL_DIR/$m.yaml"
		log "round 2: $m/$sc on $lay at $rate"
		LAB_PPN=$ppn timeout 3600 "$LAB" mpirun -np $np --map-by slot "$BIN" bench --model "$mf" \
			--scale "$sc" --network "$BASE,nics=1x$nic" --simulator "$SIM" --measure-cpu \
			--strategies autosync,autosync-learned,ddp-default --rounds "$ROUNDS" --steps "$STEPS" \
			--output "$OUT/raw/$tag.jsonl" --feedback "$OUT/feedback.jsonl" \
			--write-plans "$OUT/plans/$tag" > "$OUT/raw/$tag.txt" 2>&1
		log "  rc $?"
	done
done
log "done"
