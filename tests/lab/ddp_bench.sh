#!/bin/sh
# ddp_bench.sh - the headline benchmark (not a CI test): PyTorch DDP (gloo,
# CPU) with its defaults against DDP configured by autosync's plan for
# pytorch-ddp (contrib/pytorch, applied by tests/lab/ddp_peer.py), on the
# same synthetic models as `autosync bench`, interleaved rounds in one launch
# per model, for every layout and rate. Baselines are honest: the peer's
# `default` is DDP's defaults divided by the gradient scale (docs/lab.md).
# Before the runs of each setting the link's bandwidth is measured (TCP
# between two hosts, 3 times) for the alpha-beta/overlap bound that
# ddp_summary.py reports beside every measurement.
#
# usage: ddp_bench.sh OUTDIR [AUTOSYNC_BINARY]
# env:   MODELS  "NAME:SCALE ..." (default vgg16:32 bert-large:64 gpt2:32 ncf:8 resnet50:8)
#        RATES   tbf rates (default "1gbit 400mbit")
#        LAYOUTS "HOSTSxRANKS ..." (default "4x2 2x4")
#        ROUNDS (4: even, so each order A B and B A runs as often) STEPS (5)
#        WARMUP (2); PLAN_ARGS (extra `autosync bench`
#        planning arguments, e.g. --allow-compression)
#        CLUSTER_BASE as in bench.sh
#        FRESH (1): each configuration of each round in its own processes
#        (ddp_peer.py --fresh); 0: all in one process per rank, as in
#        results/2026-12-04-ddp-lab-calibration, which flattered DDP's
#        default after a hierarchical plan
#        CALIBRATION: a calibration file for the planner, or "cpu": measure
#        the lab's CPU constants (calibrate_cpu.py: cast, 16-bit
#        reduction and the hierarchical hook's per-bucket costs) with as
#        many processes and ranks per host as each layout runs, before
#        its runs, into OUTDIR/raw/LAYOUT/calibration.yaml; or "lab": the
#        same measured across the lab's shaped links, one rank per lab
#        process as the runs place them, after each `lab up`, into
#        OUTDIR/raw/LAYOUT/RATE/calibration.yaml, and the intra-node
#        bandwidth into the network description; then the no-harm margins
#        of compression and of the hierarchical hook from held-out models
#        (ddp_margins.py): MARGIN_MODELS (default "bert-base:32
#        resnet101:16", none of MODELS; "" skips it) planned without the
#        margin of one family, then of the other, then of both, and run
#        like the rest (MARGIN_ROUNDS, 2), in
#        raw/LAYOUT/RATE/margin/{compression,ddp_hier,both}
# Needs root. Tears the lab down on exit. Then ddp_summary.py writes
# OUTDIR/summary.md.
set -u
OUT=${1:?usage: ddp_bench.sh OUTDIR [AUTOSYNC_BINARY]}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
BIN=${2:-${AUTOSYNC_BUILDDIR:-$SRC/build}/cli/autosync}
# 'autosync bench' execs autosync-bench: a build tree's, beside its autosync
if [ -z "${AUTOSYNC_LIBEXECDIR:-}" ] && [ -x "${BIN%/*}/../launcher/runtime/autosync-bench" ]; then
	AUTOSYNC_LIBEXECDIR=$(cd "${BIN%/*}/../launcher/runtime" && pwd); export AUTOSYNC_LIBEXECDIR
fi
MODELS=${MODELS:-"vgg16:32 bert-large:64 gpt2:32 ncf:8 resnet50:8"}
RATES=${RATES:-"1gbit 400mbit"}
LAYOUTS=${LAYOUTS:-"4x2 2x4"}
ROUNDS=${ROUNDS:-4}; STEPS=${STEPS:-5}; WARMUP=${WARMUP:-2}; FRESH=${FRESH:-1}
MARGIN_MODELS=${MARGIN_MODELS-"bert-base:32 resnet101:16"}; MARGIN_ROUNDS=${MARGIN_ROUNDS:-2}
export LAB_PREFIX=${LAB_PREFIX:-as-} LAB_NET=${LAB_NET:-10.77.0}
export LAB_DIR=${LAB_DIR:-/tmp/autosync-lab}
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$SRC/planner/catalog}
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
LAB="$HERE/lab.sh"
mkdir -p "$OUT/raw" "$OUT/plans"
cleanup() { "$LAB" down 8 >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 1' INT TERM
fresh=""; [ "$FRESH" = 1 ] && fresh=--fresh
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/runs.log"; }

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -srm), $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB"
	echo "open mpi: $(mpirun --version 2>&1 | head -1)"
	echo "torch: $(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
	echo "autosync: $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null) ($BIN)"
	echo "layouts: $LAYOUTS; rates: $RATES; models: $MODELS"
	echo "rounds $ROUNDS, steps $STEPS, warmup $WARMUP, fresh processes per configuration: $FRESH; plan args: ${PLAN_ARGS:-none}; calibration: ${CALIBRATION:-none}"
	[ "${CALIBRATION:-}" = lab ] && echo "margin models: ${MARGIN_MODELS:-none}, $MARGIN_ROUNDS rounds"
	echo "cluster: ${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us},nics=1x<rate>"
} > "$OUT/setup.txt"

# TCP goodput host 2 -> host 1 through the shaped uplinks, bytes/s
measure_link() {
	port=29599
	"$LAB" exec 1 /usr/bin/python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1)
for _ in range(3):
    c, _ = s.accept()
    while c.recv(1 << 20):
        pass
    c.close()' $port &
	srv=$!
	sleep 1
	"$LAB" exec 2 /usr/bin/python3 -c '
import socket, sys, time
buf = b"\0" * (1 << 20); n = int(sys.argv[3]); out = []
for _ in range(3):
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
    t = time.perf_counter()
    for _ in range(n):
        c.sendall(buf)
    c.shutdown(socket.SHUT_WR); c.recv(1); c.close()
    out.append(n * len(buf) / (time.perf_counter() - t))
print(" ".join("%.0f" % v for v in out))' "$LAB_NET.1" $port "$1"
	wait $srv 2>/dev/null
}

# lab_ranks NP PPN LOGPREFIX CMD...: CMD --rank I on the lab host of rank I
# for every rank (PPN per host, rank 0 started last), its output in
# LOGPREFIX-rankI.log; waits for all
lab_ranks() {
	n=$1; ppn=$2; lp=$3; shift 3
	i=$((n - 1))
	while [ $i -ge 0 ]; do
		GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 timeout 900 "$LAB" exec $((i / ppn + 1)) \
			"$@" --rank $i > "$lp-rank$i.log" 2>&1 &
		i=$((i - 1))
	done
	wait
}

# run_model NAME:SCALE CALIB PLANDIR RAWDIR ROUNDS: autosync's plan for the
# model (into PLANDIR/NAME), then the DDP peer, default against the plan,
# in the lab as it is (RAWDIR/NAME.jsonl)
run_model() {
	m=${1%%:*}; sc=${1##*:}; pd="$3/$m"; rd=$4
	timeout 300 "$LAB" mpirun -np $NP --map-by slot "$BIN" bench --model "$m" --scale "$sc" \
		--network "$CLUSTER" --framework pytorch-ddp ${PLAN_ARGS:-} \
		${2:+--calibration "$2"} \
		--strategies autosync,ddp-default --steps 0 --warmup 0 \
		--write-plans "$pd" > "$rd/$m-plan.txt" 2>&1
	log "  $m/$sc: plan rc $? ($(grep -m1 '^strategy:' "$pd/autosync.yaml" 2>/dev/null))"
	lab_ranks "$NP" "$PPN" "$rd/$m" /usr/bin/python3 "$HERE/ddp_peer.py" --replay "$pd/replay.json" \
		--world $NP --master "$LAB_NET.1:29511" \
		--configs "default,plan:$pd/autosync.yaml" --rounds "$5" \
		--steps "$STEPS" --warmup "$WARMUP" --tag "$lay/$rate" $fresh
	grep '^{' "$rd/$m-rank0.log" > "$rd/$m.jsonl"
	log "  $m: $(wc -l < "$rd/$m.jsonl") result lines"
}

for lay in $LAYOUTS; do
	H=${lay%x*}; PPN=${lay#*x}; NP=$((H * PPN))
	export LAB_PPN=$PPN
	calib=""
	case ${CALIBRATION:-} in
	"") ;;
	lab)	;;
	cpu)	mkdir -p "$OUT/raw/$lay"
		calib="$OUT/raw/$lay/calibration.yaml"
		/usr/bin/python3 "$HERE/calibrate_cpu.py" "$NP" "$PPN" > "$calib" || exit 1
		log "calibration for $lay: $(grep -v '^#' "$calib" | tr '\n' ' ')" ;;
	*)	calib=$CALIBRATION ;;
	esac
	for rate in $RATES; do
		"$LAB" up "$H" "$rate" || exit 1
		nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
		CLUSTER="${CLUSTER_BASE:-intra=host_bridge:2.5GB/s:20us,lat=100us},nics=1x$nic"
		d="$OUT/raw/$lay/$rate"; mkdir -p "$d"
		mb=$(echo "$rate" | awk '/gbit$/ {print int($0) * 100} /mbit$/ {print int(int($0) / 10)}')   # ~1 s per transfer
		measure_link "$mb" > "$d/link.txt" 2>&1
		log "lab up: $lay, $rate; link $(cat "$d/link.txt") B/s"
		if [ "${CALIBRATION:-}" = lab ]; then
			calib="$d/calibration.yaml"
			lab_ranks "$NP" "$PPN" "$d/calibration" /usr/bin/python3 "$HERE/calibrate_cpu.py" \
				--world "$NP" --ppn "$PPN" --master "$LAB_NET.1:29512"
			cp "$d/calibration-rank0.log" "$calib"
			grep -q '^cast_bw' "$calib" || { log "calibration failed: $d/calibration-rank*.log"; exit 1; }
			log "calibration for $lay, $rate: $(grep -v '^#' "$calib" | tr '\n' ' ')"
			# the intra-node bandwidth measured with it replaces the
			# description's guess (2.5 GB/s)
			bw=$(sed -n 's/^# intra_bw: \([0-9.]*MB\/s\).*/\1/p' "$calib")
			[ -n "$bw" ] && CLUSTER=$(echo "$CLUSTER" | sed "s|intra=host_bridge:[^:,]*|intra=host_bridge:$bw|")
			log "network for $lay, $rate: $CLUSTER"
		fi
		if [ "${CALIBRATION:-}" = lab ] && [ -n "$MARGIN_MODELS" ]; then
			# the held-out models' plans, each planned once with no
			# margin for compression, once with none for the
			# hierarchical hook (the other family keeping its margin)
			# and once with neither, against DDP's default: how
			# optimistic the model is for each family here sets its
			# margin for the headline models
			for fam in compression ddp_hier both; do
				case $fam in
				both) printf 'margin_compression: 0\nmargin_ddp_hier: 0\n' ;;
				*) printf 'margin_%s: 0\n' $fam ;;
				esac | cat "$calib" - > "$d/calibration-no-$fam.yaml"
				mkdir -p "$d/margin/$fam"
				for ms in $MARGIN_MODELS; do
					run_model "$ms" "$d/calibration-no-$fam.yaml" "$OUT/plans/$lay/$rate/margin/$fam" \
						"$d/margin/$fam" "$MARGIN_ROUNDS"
				done
			done
			/usr/bin/python3 "$HERE/ddp_margins.py" "$d/margin" "$OUT/plans/$lay/$rate/margin" >> "$calib" || exit 1
			log "margins for $lay, $rate: $(grep -E '^(margin|uncertainty)' "$calib" | tr '\n' ' ')"
		fi
		for ms in $MODELS; do
			run_model "$ms" "$calib" "$OUT/plans/$lay/$rate" "$d" "$ROUNDS"
		done
		"$LAB" down "$H"
	done
done
log "summarize"
/usr/bin/python3 "$HERE/ddp_summary.py" "$OUT" > "$OUT/summary.md"
log "done"
