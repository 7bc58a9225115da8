#!/bin/sh
# time.sh OUT AUTOSYNC - time, interleaved in one mpirun per case, the plan
# the new margins chose (new), the one the old margins chose (old) and the
# framework's default (ddp-default), ROUNDS rounds (4) of STEPS steps (3),
# for every case of OUT/differ.txt (find.sh + differ.py). Raw JSON lines
# and bench's table in OUT/time/.
set -u
OUT=${1:?usage: time.sh OUT AUTOSYNC}; BIN=${2:?usage: time.sh OUT AUTOSYNC}
HERE=$(cd "$(dirname "$0")" && pwd); SRC=$(cd "$HERE/../../.." && pwd)
LAB=$SRC/tests/lab/lab.sh
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0} LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=$SRC/planner/catalog
[ -n "${AUTOSYNC_LIBEXECDIR:-}" ] || { AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR; }
ROUNDS=${ROUNDS:-4}; STEPS=${STEPS:-3}
MODEL_DIR=$SRC/results/2026-12-03-dataset/models
BASE=intra=host_bridge:2.5GB/s:20us,lat=100us
scale() { case $1 in vgg16) echo 64;; bert-large) echo 128;; gpt2) echo 64;; gpt2-xl) echo 256;;
	ncf) echo 8;; resnet50) echo 8;; resnet101) echo 16;; resnet18) echo 4;; alexnet) echo 16;; *) echo 1;; esac; }
mkdir -p "$OUT/time"
up=0 cur=
trap '[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1' EXIT
sort "$OUT/differ.txt" | while read -r cell m v rest; do
	rate=${cell%%-*}; lay=${cell#*-}; hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts * ppn))
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	if [ "$cell" != "$cur" ]; then
		[ "$up" = 0 ] || "$LAB" down "$up" >/dev/null 2>&1
		LAB_PPN=$ppn "$LAB" up "$hosts" "$rate" >/dev/null || exit 1
		up=$hosts cur=$cell
	fi
	mf=$m; [ -f "$MODEL_DIR/$m.yaml" ] && mf=$MODEL_DIR/$m.yaml
	p=$OUT/plans/$cell-$m; tag=$cell-$m-$v
	echo "[$(date -u +%H:%M:%S)] $tag"
	LAB_PPN=$ppn timeout 1800 "$LAB" mpirun -np $np --map-by slot "$BIN" bench --model "$mf" \
		--scale "$(scale "$m")" --network "$BASE,nics=1x$nic" --allow-compression \
		--strategies "plan:$p-$v/autosync.yaml,plan:$p-old-c/autosync.yaml,ddp-default" \
		--rounds "$ROUNDS" --steps "$STEPS" --output "$OUT/time/$tag.jsonl" \
		< /dev/null > "$OUT/time/$tag.txt" 2>&1 || echo "  failed: $?"
done
