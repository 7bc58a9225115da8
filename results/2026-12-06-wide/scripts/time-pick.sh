#!/bin/sh
# time W's pick (plan file) against ddp-default, 8 interleaved rounds, per pair "rate:layout:model:scale"
set -u
P=/tmp/wide/plans; O=/work/main/results/2026-12-06-wide/timed
BIN=/work/main/_build/plain/cli/autosync; HERE=/work/main/tests/lab
export AUTOSYNC_LIBEXECDIR=/work/main/_build/plain/launcher/runtime
export LAB_PREFIX=as- LAB_NET=10.77.0 LAB_DIR=/tmp/autosync-lab AUTOSYNC_CATALOG_DIR=/work/main/planner/catalog ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
mkdir -p $O
for pr in $PAIRS; do
  rate=${pr%%:*}; rest=${pr#*:}; lay=${rest%%:*}; rest=${rest#*:}; m=${rest%%:*}; sc=${rest#*:}
  hosts=${lay%x*}; ppn=${lay#*x}; np=$((hosts*ppn))
  nic=$(echo "$rate" | sed 's/gbit$/Gbit\/s/; s/mbit$/Mbit\/s/')
  tag=$rate-$lay-$m
  LAB_PPN=$ppn "$HERE/lab.sh" up $hosts $rate >/dev/null || exit 1
  LAB_PPN=$ppn timeout 1200 "$HERE/lab.sh" mpirun -np $np --map-by slot "$BIN" bench --model $m --scale $sc \
    --network intra=host_bridge:2.5GB/s:20us,lat=100us,nics=1x$nic \
    --strategies plan:$P/$tag/autosync-learned.yaml,ddp-default --rounds 8 --steps 3 \
    --output $O/$tag.jsonl > $O/$tag.txt 2>&1
  echo "$tag rc $?"
  "$HERE/lab.sh" down $hosts >/dev/null 2>&1
done
