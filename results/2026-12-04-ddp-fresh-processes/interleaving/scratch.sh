#!/bin/sh
# scratch: BERT-large 2x4 1gbit, run3's hierarchical fp32 plan vs default, in-process then fresh
set -u
cd "$(dirname "$0")/../../.."
export LAB_PREFIX=sc- LAB_NET=10.78.0 LAB_DIR=/tmp/sc-lab LAB_PPN=4
LAB=tests/lab/lab.sh
PD=results/2026-12-04-ddp-lab-calibration/run3/plans/2x4/1gbit/bert-large
O=${1:-/tmp/scratch-out}; mkdir -p $O
$LAB up 2 1gbit >/dev/null || exit 1
for mode in inproc fresh; do
  f=""; [ $mode = fresh ] && f=--fresh
  i=7
  while [ $i -ge 0 ]; do
    GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 timeout 900 $LAB exec $((i / 4 + 1)) /usr/bin/python3 tests/lab/ddp_peer.py \
      --replay $PD/replay.json --world 8 --master 10.78.0.1:29511 --configs default,plan:$PD/autosync.yaml \
      --rounds 4 --steps 5 --warmup 2 $f --rank $i > $O/$mode-rank$i.log 2>&1 &
    i=$((i - 1))
  done
  wait
  echo "== $mode"; grep '^{' $O/$mode-rank0.log | python3 -c "
import sys,json,statistics
for l in sys.stdin:
  r=json.loads(l); print(r['config'][:7], r['round'], '%.3f'%statistics.median(r['steps']), r['ok'], ' '.join('%.3f'%t for t in r['steps']))"
done
$LAB down 2
