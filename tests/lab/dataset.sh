#!/bin/sh
# dataset.sh OUTDIR [AUTOSYNC_BINARY] - measured pairs for learning the
# simulator (docs/dataset.md; not a CI test: hours on 2 cores, resumable).
#
# Cells: RATES x LAYOUTS x MODELS. Per cell one mpirun of `autosync bench`
# with autosync's plan, every named baseline (ddp-default and
# horovod-default are the frameworks' defaults) and NRANDOM random valid
# strategies (seeded per cell), each STEPS timed steps after WARMUP, every
# strategy's feedback record appended to OUTDIR/feedback.jsonl. A cell
# already in OUTDIR/cells.done is skipped, so a later session appends (same
# OUTDIR, or copy it first). REPEAT=1 times the cell's strategies a second
# time into OUTDIR/repeat/ (the lab's repeatability: tests/lab/repeat.py).
# DEADLINE (epoch seconds): no cell starts after it.
#
# env: RATES (1gbit 400mbit 200mbit) LAYOUTS (4x2 2x4 4x1)
#      MODELS "NAME:SCALE ..." (vgg16:64 bert-large:128 gpt2:64 gpt2-xl:256
#        ncf:8 resnet50:8 resnet101:16) - the dataset's models; others are
#        kept out to check the result
#      MODEL_DIR: a model NAME with MODEL_DIR/NAME.yaml is that file (models
#        exported with contrib/pytorch/autosync_export.py), else the catalog's
#      NRANDOM (24) STEPS (3) WARMUP (1) REPEAT (0) DEADLINE (none)
#      ROUNDS (1): interleaved rounds of the named strategies, pooled in
#        each one's record (random strategies run once)
#      RANDOM_SPACE (narrow: the committed dataset's; wide: the planner's
#        range, autosync bench --random-space)
#      STRATEGIES: the named strategies (default autosync and every
#        baseline; autosync-learned is added with SIMULATOR)
#      CLUSTER_BASE (intra=host_bridge:2.5GB/s:20us,lat=100us)
#      SIMULATOR: a learned simulator file; bench adds autosync-learned,
#        its plan (for checking a file on cells it was not trained on)
#      HIER (rails): the hierarchical all-reduce's variant (bench --hier;
#        rails is what the simulator models; records before 6 Dec 2026
#        ran leader)
#      MEASURE_CPU (1): bench --measure-cpu, each cell's plans and
#        predictions with the runtime's CPU casts and 16-bit additions
#        measured at its start (0: the cost model's GPU defaults, as the
#        records before 6 Dec 2026)
# Needs root. Tears the lab down on exit.
set -u
OUT=${1:?usage: dataset.sh OUTDIR [AUTOSYNC_BINARY]}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN=${2:-${AUTOSYNC_BUILDDIR:-$SRC/build}/cli/autosync}
if [ -z "${AUTOSYNC_LIBEXECDIR:-}" ] && [ -x "${BIN%/*}/../launcher/runtime/autosync-bench" ]; then
	AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR
fi
if [ -z "${AUTOSYNC_SIMULATOR_MODULE:-}" ] && [ -f "${BIN%/*}/../learn/.libs/autosync-simulator.so" ]; then
	AUTOSYNC_SIMULATOR_MODULE=$(cd "${BIN%/*}/../learn/.libs" && pwd)/autosync-simulator.so
	export AUTOSYNC_SIMULATOR_MODULE
fi
RATES=${RATES:-"1gbit 400mbit 200mbit"}
LAYOUTS=${LAYOUTS:-"4x2 2x4 4x1"}
MODELS=${MODELS:-"vgg16:64 bert-large:128 gpt2:64 gpt2-xl:256 ncf:8 resnet50:8 resnet101:16"}
NRANDOM=${NRANDOM:-24}; STEPS=${STEPS:-3}; WARMUP=${WARMUP:-1}; REPEAT=${REPEAT:-0}
ROUNDS=${ROUNDS:-1}
DEADLINE=${DEADLINE:-0}
SIMULATOR=${SIMULATOR:-}
MODEL_DIR=${MODEL_DIR:-}
BASE=${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us}
STRATS=${STRATEGIES:-"autosync,ddp-default,horovod-default,ps-loadbalanced,parallax,allreduce-per-tensor"}
SPACE=${RANDOM_SPACE:-narrow}
HIER=${HIER:-rails}
MEASURE_CPU=${MEASURE_CPU:-1}
CPU=; [ "$MEASURE_CPU" = 1 ] && CPU=--measure-cpu
[ -z "$SIMULATOR" ] || STRATS="$STRATS,autosync-learned"
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0}
export LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$SRC/planner/catalog}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
LAB="$HERE/lab.sh"
mkdir -p "$OUT/raw" "$OUT/repeat"
touch "$OUT/cells.done"
up=0
cleanup() { [ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 1' INT TERM
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/runs.log"; }
{
	echo "session: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "autosync: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) ($BIN)"
	echo "cells: rates $RATES; layouts $LAYOUTS; models $MODELS"
	echo "per cell: $STRATS + $NRANDOM random ($SPACE), $ROUNDS round(s), $WARMUP warm-up + $STEPS timed steps each; cluster $BASE,nics=1x<rate>; repeat $REPEAT; hier $HIER; measure cpu $MEASURE_CPU${SIMULATOR:+; simulator $SIMULATOR}"
} >> "$OUT/setup.txt"

for rate in $RATES; do
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	for lay in $LAYOUTS; do
		hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
		labup=0
		for ms in $MODELS; do
			m=${ms%%:*}; sc=${ms##*:}
			mf=$m
			[ -n "$MODEL_DIR" ] && [ -f "$MODEL_DIR/$m.yaml" ] && mf="$MODEL_DIR/$m.yaml"
			cell="$rate $lay $m:$sc"
			grep -qxF "$cell" "$OUT/cells.done" && continue
			if [ "$DEADLINE" != 0 ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then
				log "deadline: stopping before $cell"; exit 0
			fi
			if [ $labup = 0 ]; then
				[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1
				LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
				up=$hosts labup=1
			fi
			# a seed per cell: the cells' random strategies differ
			seed=$(printf '%s' "$cell" | cksum | cut -d' ' -f1)
			tag="$rate-$lay-$m"
			log "cell $cell: $np ranks, seed $seed"
			LAB_PPN=$ppn timeout 3600 "$LAB" mpirun -np $np --map-by slot "$BIN" bench --model "$mf" \
				--scale "$sc" --network "$BASE,nics=1x$nic" --strategies "$STRATS" \
				--random "$NRANDOM" --random-space "$SPACE" --seed "$seed" --random-steps "$STEPS" --steps "$STEPS" \
				--rounds "$ROUNDS" --warmup "$WARMUP" --hier "$HIER" $CPU --output "$OUT/raw/$tag.jsonl" ${SIMULATOR:+--simulator "$SIMULATOR"} \
				--feedback "$OUT/feedback.jsonl" > "$OUT/raw/$tag.txt" 2>&1
			rc=$?
			log "  rc $rc, $(wc -l < "$OUT/raw/$tag.jsonl" 2>/dev/null || echo 0) results"
			if [ "$REPEAT" = 1 ] && [ $rc = 0 ]; then
				LAB_PPN=$ppn timeout 3600 "$LAB" mpirun -np $np --map-by slot "$BIN" bench --model "$mf" \
					--scale "$sc" --network "$BASE,nics=1x$nic" --strategies "$STRATS" \
					--random "$NRANDOM" --random-space "$SPACE" --seed "$seed" --random-steps "$STEPS" --steps "$STEPS" \
					--warmup "$WARMUP" --hier "$HIER" $CPU --output "$OUT/repeat/$tag.jsonl" > "$OUT/repeat/$tag.txt" 2>&1
				log "  repeat rc $?"
			fi
			[ $rc = 0 ] && echo "$cell" >> "$OUT/cells.done"
		done
	done
done
log "done"
