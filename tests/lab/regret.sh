#!/bin/sh
# regret.sh OUTDIR PICKS FEEDBACK [AUTOSYNC_BINARY] - top-1 regret with the
# picks timed again (not a CI test: about half an hour on 2 cores).
#
# PICKS: `autosync eval --cv model --picks PICKS FEEDBACK`. For every group
# (model x cluster) where the analytic or the learned pick is not the
# dataset's measured best, one mpirun of `autosync bench` times the best
# and both picks side by side, ROUNDS interleaved rounds of WARMUP + STEPS
# steps (random strategies are re-made from their seeds first: a 1-step run
# with --write-plans; OUTDIR/raw/TAG.made has the hash each file was written
# with). tests/lab/regret.py summary > OUTDIR/summary.md.
#
# env: ROUNDS (4) STEPS (3) WARMUP (1) MODEL_DIR (exported models, as for
#      dataset.sh) CLUSTER_BASE (as dataset.sh's) ONLY (tags or shell
#      patterns, e.g. "*-ncf": those groups) SKIP (the same: not those)
#      TOPK (0; K: every group, with the K strategies the dataset measured
#      fastest timed beside the picks; regret.py says how it is scored)
# Needs root. Tears the lab down on exit.
set -u
OUT=${1:?usage: regret.sh OUTDIR PICKS FEEDBACK [AUTOSYNC_BINARY]}
PICKS=${2:?usage: regret.sh OUTDIR PICKS FEEDBACK [AUTOSYNC_BINARY]}
FEEDBACK=${3:?usage: regret.sh OUTDIR PICKS FEEDBACK [AUTOSYNC_BINARY]}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN=${4:-${AUTOSYNC_BUILDDIR:-$SRC/build}/cli/autosync}
if [ -z "${AUTOSYNC_LIBEXECDIR:-}" ] && [ -x "${BIN%/*}/../launcher/runtime/autosync-bench" ]; then
	AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR
fi
ROUNDS=${ROUNDS:-4}; STEPS=${STEPS:-3}; WARMUP=${WARMUP:-1}
MODEL_DIR=${MODEL_DIR:-}; ONLY=${ONLY:-}; SKIP=${SKIP:-}
BASE=${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us}
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0}
export LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$SRC/planner/catalog}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
LAB="$HERE/lab.sh"
mkdir -p "$OUT/raw" "$OUT/plans"
up=0
cleanup() { [ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 1' INT TERM
# tag $1 matches one of the patterns $2
matches() {
	set -f # the patterns are for tags, not file names
	for pat in $2; do
		# shellcheck disable=SC2254
		case $1 in $pat) set +f; return 0 ;; esac
	done
	set +f
	return 1
}
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/runs.log"; }
python3 "$HERE/regret.py" jobs "$PICKS" "$FEEDBACK" > "$OUT/jobs.txt" || exit 1
{
	echo "session: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "autosync: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) ($BIN)"
	echo "picks: $PICKS; records: $FEEDBACK; $(wc -l < "$OUT/jobs.txt") groups"
	echo "per group: $ROUNDS rounds x ($WARMUP warm-up + $STEPS timed steps), interleaved; cluster $BASE,nics=1x<rate>; TOPK=${TOPK:-0}"
} >> "$OUT/setup.txt"

cur=
# sorted by cluster: the lab comes up once per cluster
sort -k1,2 "$OUT/jobs.txt" > "$OUT/jobs.sorted"
while read -r rate lay m sc tag plans; do
	[ -n "$ONLY" ] && ! matches "$tag" "$ONLY" && continue
	[ -n "$SKIP" ] && matches "$tag" "$SKIP" && continue
	hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	mf=$m
	[ -n "$MODEL_DIR" ] && [ -f "$MODEL_DIR/$m.yaml" ] && mf="$MODEL_DIR/$m.yaml"
	if [ "$cur" != "$rate $lay" ]; then
		[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1
		LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
		up=$hosts cur="$rate $lay"
	fi
	# (mpirun reads stdin: not the job list's)
	bench() {
		LAB_PPN=$ppn timeout 1800 "$LAB" mpirun -np $np --map-by slot "$BIN" bench --model "$mf" \
			--scale "$sc" --network "$BASE,nics=1x$nic" "$@" < /dev/null
	}
	list=
	: > "$OUT/raw/$tag.made"
	for p in $plans; do
		h=${p%%=*} s=${p#*=}
		case $s in
		random-*)
			# the strategy from its seed, as the dataset made it; the
			# file's hash line says whether it is the recorded plan.
			# Loaded without that line: random plans made before the
			# fix of PS buckets' all-reduce algorithm (which nothing
			# uses) do not hash the same once read back.
			f=$OUT/plans/$tag/$s.yaml
			bench --strategies ddp-default --random 1 --seed "${s#random-}" --random-steps 1 \
				--steps 1 --warmup 0 --write-plans "$OUT/plans/$tag" > /dev/null 2>&1 ||
				log "  $tag: $s could not be made"
			echo "$h $s $(sed -n 's/^hash: "\(.*\)"$/\1/p' "$f" 2>/dev/null)" >> "$OUT/raw/$tag.made"
			sed -i '/^hash: /d' "$f" 2>/dev/null
			s="plan:$f" ;;
		esac
		list=${list:+$list,}$s
	done
	log "group $tag: $np ranks, $plans"
	rm -f "$OUT/raw/$tag.jsonl" "$OUT/raw/$tag.feedback.jsonl"
	bench --strategies "$list" --rounds "$ROUNDS" --steps "$STEPS" --warmup "$WARMUP" \
		--output "$OUT/raw/$tag.jsonl" --feedback "$OUT/raw/$tag.feedback.jsonl" \
		> "$OUT/raw/$tag.txt" 2>&1
	log "  rc $?"
done < "$OUT/jobs.sorted"
rm -f "$OUT/jobs.sorted"
python3 "$HERE/regret.py" summary "$PICKS" "$OUT" > "$OUT/summary.md"
log "done"
