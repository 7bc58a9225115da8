#!/bin/sh
# find.sh OUT AUTOSYNC - where do the new no-harm margins (tree 5 %, small
# buckets 5 %, compression 20 %) let the analytic planner choose another
# plan than the old ones (50 %, 35 %, 40 %)? Plans only (bench with one
# untimed-for-the-purpose step): for every cell of the dataset (rates x
# layouts) and model, autosync's plan under each margin set, with and
# without --allow-compression, both planned with the same CPU constants
# (measured once per cell with --measure-cpu, then passed as calibration).
# Writes OUT/plans/CELL-MODEL-{new,old}[-c]/ and OUT/plans.tsv.
set -u
OUT=${1:?usage: find.sh OUT AUTOSYNC}; BIN=${2:?usage: find.sh OUT AUTOSYNC}
HERE=$(cd "$(dirname "$0")" && pwd); SRC=$(cd "$HERE/../../.." && pwd)
LAB=$SRC/tests/lab/lab.sh
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0} LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=$SRC/planner/catalog
[ -n "${AUTOSYNC_LIBEXECDIR:-}" ] || { AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR; }
MODELS=${MODELS:-"vgg16:64 bert-large:128 gpt2:64 gpt2-xl:256 ncf:8 resnet50:8 resnet101:16 resnet18:4 alexnet:16 mobilenet_v2:1"}
MODEL_DIR=$SRC/results/2026-12-03-dataset/models
RATES=${RATES:-"1gbit 400mbit 200mbit"}; LAYOUTS=${LAYOUTS:-"4x2 2x4 4x1"}
BASE=intra=host_bridge:2.5GB/s:20us,lat=100us
mkdir -p "$OUT/plans" "$OUT/cal"
up=0
trap '[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1' EXIT
printf 'cell\tmodel\tvariant\tplan\tstrategy\treason\n' > "$OUT/plans.tsv"
for rate in $RATES; do for lay in $LAYOUTS; do
	hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1
	LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
	up=$hosts
	run() { LAB_PPN=$ppn timeout 600 "$LAB" mpirun -np $np --map-by slot "$BIN" bench \
		--network "$BASE,nics=1x$nic" --strategies autosync --rounds 1 --steps 1 --warmup 0 "$@"; }
	# the cell's CPU constants, once
	run --model vgg16 --scale 64 --measure-cpu > "$OUT/cal/$rate-$lay.txt" 2>&1
	cpu=$(sed -n 's/^# cpu, measured on these ranks: cast_bw \([^ ]*\) B\/s, gamma_half \([^ ]*\) s\/B$/cast_bw: \1\ngamma_half: \2/p' "$OUT/cal/$rate-$lay.txt")
	[ -n "$cpu" ] || { echo "find.sh: no cpu constants in $rate-$lay" >&2; exit 1; }
	printf '%s\n' "$cpu" > "$OUT/cal/$rate-$lay-new.yaml"
	{ printf '%s\n' "$cpu"; grep -v '^#' "$HERE/old-margins.yaml"; } > "$OUT/cal/$rate-$lay-old.yaml"
	for ms in $MODELS; do
		m=${ms%%:*}; sc=${ms##*:}; mf=$m
		[ -f "$MODEL_DIR/$m.yaml" ] && mf=$MODEL_DIR/$m.yaml
		for v in new old new-c old-c; do
			d=$OUT/plans/$rate-$lay-$m-$v
			c=--allow-compression; case $v in *-c) ;; *) c= ;; esac
			run --model "$mf" --scale "$sc" --calibration "$OUT/cal/$rate-$lay-${v%-c}.yaml" \
				$c --write-plans "$d" > "$d.txt" 2>&1 || echo "find.sh: $d failed" >&2
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$rate-$lay" "$m" "$v" \
				"$(sed -n 's/^hash: "\(.*\)"$/\1/p' "$d/autosync.yaml")" \
				"$(sed -n 's/^strategy: "\(.*\)"$/\1/p' "$d/autosync.yaml")" \
				"$(sed -n 's/^reason: "\(.*\)"$/\1/p' "$d/autosync.yaml")" >> "$OUT/plans.tsv"
		done
	done
done; done
