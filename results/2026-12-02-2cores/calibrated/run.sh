#!/bin/sh
# run.sh OUTDIR BIN: held-out check of a hand-fitted calibration (seeds 51-100)
# A: measure with the calibrated simulator (predictions calibrated)
# B: the same strategies planned with the default constants (1 step each,
#    only for their predictions, read back from the written plans)
C=$1; BIN=$2; L=$(dirname "$0")/../../../tests/lab/lab.sh
export AUTOSYNC_CATALOG_DIR=${AUTOSYNC_CATALOG_DIR:-$(dirname "$0")/../../../planner/catalog} ASAN_OPTIONS=detect_leaks=0
CL=intra=host_bridge:2.5GB/s:20us,lat=100us,nics=1x1Gbit/s
"$L" up 4 1gbit
for ms in vgg16:32 bert-large:64 gpt2:32; do
	m=${ms%%:*}; sc=${ms##*:}
	"$L" mpirun -np 8 --map-by slot "$BIN" bench --model $m --scale $sc --network $CL --hier rails \
		--calibration "$C/lab-calibration.yaml" \
		--strategies autosync,ddp-default,horovod-default,ps-loadbalanced,parallax,allreduce-per-tensor \
		--rounds 1 --steps 3 --random 50 --seed 51 --random-steps 2 \
		--output "$C/raw/$m-calibrated.jsonl" --write-plans "$C/plans/$m-calibrated" > "$C/raw/$m-calibrated.txt" 2>&1
	"$L" mpirun -np 8 --map-by slot "$BIN" bench --model $m --scale $sc --network $CL --hier rails \
		--strategies autosync,ddp-default,horovod-default,ps-loadbalanced,parallax,allreduce-per-tensor \
		--rounds 1 --steps 0 --warmup 0 --random 50 --seed 51 --random-steps 1 \
		--write-plans "$C/plans/$m-default" > "$C/raw/$m-default.txt" 2>&1
done
"$L" down 4
