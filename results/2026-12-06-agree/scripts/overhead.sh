#!/usr/bin/env bash
# overhead.sh ROUNDS OUT - what the nodes' agreement through srun costs at
# step start: `srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large
# true` wall time with the plugin's agree=yes (default) and agree=no,
# interleaved (yes no yes no ...), on the test cluster that
# tests/run-integration.sh starts (3 slurmd on this machine). Raw times to
# OUT; the medians, their ratio and the spreads on stdout.
set -euo pipefail
rounds=${1:-20} out=${2:-raw.txt}
dropin=/etc/slurm/plugstack.conf.d/autosync-test.conf
saved=$(cat "$dropin")
trap 'printf "%s\n" "$saved" > "$dropin"' EXIT
t() {
  local s e
  s=$(date +%s.%N); env -u SLURM_JOB_ID "$@" >/dev/null 2>&1; e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}
cd /tmp
: > "$out.tmp"
for i in $(seq "$rounds"); do
  printf '%s\n' "$saved" > "$dropin"
  echo "agree $(t srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large true)" >> "$out.tmp"
  printf '%s agree=no\n' "$saved" > "$dropin"
  echo "noagree $(t srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large true)" >> "$out.tmp"
done
mv "$out.tmp" "$out"
python3 - "$out" <<'PY'
import sys, statistics as st
v = {}
for l in open(sys.argv[1]):
    k, x = l.split(); v.setdefault(k, []).append(float(x))
for k in ('agree', 'noagree'):
    a = sorted(v[k]); n = len(a)
    print(f"{k:8s} n={n} median {st.median(a)*1e3:.1f} ms, p10 {a[n//10]*1e3:.1f}, p90 {a[(9*n)//10-1]*1e3:.1f}")
r = [a / b for a, b in zip(v['agree'], v['noagree'])]
r.sort()
print(f"ratio agree/noagree per round: median {st.median(r):.3f}, p10 {r[len(r)//10]:.3f}, p90 {r[(9*len(r))//10-1]:.3f}")
PY
