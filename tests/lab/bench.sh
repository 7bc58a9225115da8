#!/bin/sh
# bench.sh - the lab benchmark (not a CI test: tens of minutes on 2 cores).
#
# For every network setting and model: autosync's plan and every baseline,
# interleaved A B A B ... over ROUNDS rounds in one mpirun, then (first
# setting only) RANDOM random valid strategies with the simulator's
# prediction next to each measurement, and PyTorch DDP (gloo, CPU) training
# the same synthetic model with its defaults and with the autosync plan for
# pytorch-ddp applied by contrib/pytorch/autosync_ddp.py.
# Then summarize.py writes OUTDIR/summary.md.
#
# usage: bench.sh OUTDIR [AUTOSYNC_BINARY]
# env:   MODELS  "NAME:SCALE ..." (default vgg16:32 bert-large:64 gpt2:32 ncf:8 resnet50:8)
#        RATES   tbf rates (default "1gbit 400mbit"); HOSTS (4) PPN (2)
#        ROUNDS STEPS WARMUP (5 5 1) for the first rate, ROUNDS2 STEPS2 (3 3) after
#        NRANDOM (50) RSTEPS (2) SEED (1); DDP (1) DDP_ROUNDS (3) DDP_STEPS (5)
#        HIER (rails) EXTRA (more bench args)
#        KNOBS "scaled" (default) or "scaled absolute": with absolute, every
#          model is also run with the size knobs NOT divided by the scale
#          (the comparison before 2026-12-03), files *-absolute.jsonl
#        CLUSTER_BASE: the lab as a cluster, without the NIC (default
#          "intra=host_bridge:2.5GB/s:20us,lat=100us"); ",nics=1xRATE" is added
#          per setting, so the planner plans for the rate the lab really has
# Needs root. Tears the lab down on exit.
set -u
OUT=${1:?usage: bench.sh OUTDIR [AUTOSYNC_BINARY]}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN=${2:-${AUTOSYNC_BUILDDIR:-$SRC/build}/cli/autosync}
# 'autosync bench' execs autosync-bench: a build tree's, beside its autosync
if [ -z "${AUTOSYNC_LIBEXECDIR:-}" ] && [ -x "${BIN%/*}/../launcher/runtime/autosync-bench" ]; then
	AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR
fi
MODELS=${MODELS:-"vgg16:32 bert-large:64 gpt2:32 ncf:8 resnet50:8"}
RATES=${RATES:-"1gbit 400mbit"}
HOSTS=${HOSTS:-4}; PPN=${PPN:-2}; NP=$((HOSTS * PPN))
ROUNDS=${ROUNDS:-5}; STEPS=${STEPS:-5}; WARMUP=${WARMUP:-1}
ROUNDS2=${ROUNDS2:-3}; STEPS2=${STEPS2:-3}
RANDOM_N=${NRANDOM:-50}; RSTEPS=${RSTEPS:-2}; SEED=${SEED:-1}
DDP=${DDP:-1}; DDP_ROUNDS=${DDP_ROUNDS:-3}; DDP_STEPS=${DDP_STEPS:-5}
HIER=${HIER:-rails}
KNOBS=${KNOBS:-scaled}
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0} LAB_PPN=$PPN
export LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$SRC/planner/catalog}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0   # MPI leaks at exit (sanitizer builds)
LAB="$HERE/lab.sh"
BASELINES="autosync,ddp-default,horovod-default,ps-loadbalanced,parallax,allreduce-per-tensor"
mkdir -p "$OUT/raw" "$OUT/plans"
cleanup() { "$LAB" down "$HOSTS" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 1' INT TERM
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/runs.log"; }

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "open mpi: $(mpirun --version 2>&1 | head -1)"
	echo "torch: $(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
	echo "autosync: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) ($BIN)"
	echo "layout: $HOSTS hosts x $PPN ranks; rates: $RATES; models: $MODELS; hier: $HIER; knobs: $KNOBS"
	echo "cluster: ${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us},nics=1x<rate>"
	echo "first rate: rounds $ROUNDS, steps $STEPS, warmup $WARMUP, random $RANDOM_N x $RSTEPS steps; later rates: rounds $ROUNDS2, steps $STEPS2"
} > "$OUT/setup.txt"

first=1
for rate in $RATES; do
	"$LAB" up "$HOSTS" "$rate" || exit 1
	nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
	CLUSTER="${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us},nics=1x$nic"
	log "lab up: $HOSTS hosts, $rate"
	if [ $first = 1 ]; then R=$ROUNDS; S=$STEPS; RND="--random $RANDOM_N --random-steps $RSTEPS --seed $SEED"
	else R=$ROUNDS2; S=$STEPS2; RND=""; fi
	for ms in $MODELS; do
		m=${ms%%:*}; sc=${ms##*:}
		d="$OUT/raw/$rate"; mkdir -p "$d"
		rnd=$RND
		for k in $KNOBS; do
			x=; [ "$k" = scaled ] || x="-$k"
			log "bench $m scale 1/$sc, $k knobs ($rate, cluster $CLUSTER)"
			timeout 3000 "$LAB" mpirun -np $NP --map-by slot "$BIN" bench --model "$m" --scale "$sc" \
				${CLUSTER:+--network "$CLUSTER"} --hier "$HIER" --strategies "$BASELINES" \
				--knobs "$k" --rounds "$R" --steps "$S" --warmup "$WARMUP" $rnd ${EXTRA:-} \
				--output "$d/$m$x.jsonl" --feedback "$OUT/feedback.jsonl" \
				--write-plans "$OUT/plans/$rate/$m$x" > "$d/$m$x.txt" 2>&1
			log "  rc $? ($(grep -c ' ok$' "$d/$m$x.txt") ok lines, $(grep -c WRONG "$d/$m$x.txt") wrong)"
			rnd=""   # random strategies once per model
		done
		if [ "$DDP" = 1 ] && [ $first = 1 ]; then
			p="$OUT/plans/$rate/$m-ddp"
			configs="default,plan:$p/autosync.yaml"
			for k in $KNOBS; do
				x=; [ "$k" = scaled ] || x="-$k"
				timeout 300 "$LAB" mpirun -np $NP --map-by slot "$BIN" bench --model "$m" --scale "$sc" \
					${CLUSTER:+--network "$CLUSTER"} --framework pytorch-ddp --knobs "$k" \
					--strategies autosync,ddp-default --steps 0 --warmup 0 \
					--write-plans "$p$x" > "$d/$m-ddp-plan$x.txt" 2>&1
				[ -z "$x" ] || configs="$configs,default$x,plan:$p$x/autosync.yaml"
			done
			log "  ddp peer $m ($configs)"
			i=$((NP - 1))
			while [ $i -ge 0 ]; do
				h=$((i / PPN + 1))
				GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 timeout 900 "$LAB" exec $h \
					/usr/bin/python3 "$HERE/ddp_peer.py" --replay "$p/replay.json" \
					--rank $i --world $NP --master "$LAB_NET.1:29511" \
					--configs "$configs" --rounds "$DDP_ROUNDS" \
					--steps "$DDP_STEPS" --warmup 2 --tag "$rate" > "$d/$m-ddp-rank$i.log" 2>&1 &
				i=$((i - 1))
			done
			wait
			grep '^{' "$d/$m-ddp-rank0.log" > "$d/$m-ddp.jsonl"
			log "  ddp rc: $(wc -l < "$d/$m-ddp.jsonl") result lines"
		fi
	done
	if [ $first = 1 ] && [ "${SIDE:-1}" = 1 ]; then
		# side experiment: the two hierarchical variants on one model
		m=${MODELS%%:*}; sc=${MODELS#*:}; sc=${sc%% *}
		for h in leader rails; do
			log "side: hier $h, $m"
			"$LAB" mpirun -np $NP --map-by slot "$BIN" bench --model "$m" --scale "$sc" --hier $h \
				--network "$CLUSTER" \
				--strategies autosync,ddp-default --rounds 3 --steps 3 \
				--output "$OUT/raw/$rate/side-hier-$h.jsonl" > "$OUT/raw/$rate/side-hier-$h.txt" 2>&1
		done
	fi
	"$LAB" down "$HOSTS"
	first=0
done
log "summarize"
python3 "$HERE/summarize.py" "$OUT" > "$OUT/summary.md"
log "done"
