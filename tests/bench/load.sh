#!/usr/bin/env bash
# load.sh [STEPS] [ROUNDS] [OTHER.so] - a benchmark, not a test: STEPS (default 200)
# job steps submitted at once on the test cluster, each planning
# bert-large on 3 nodes and reporting two step times, then every feedback
# record checked (none lost, none torn); and the step-start overhead as a
# ratio, measured interleaved (plugin not registered / registered but not
# asked / planning, and planning with OTHER.so, another build of the
# plugin, when given) over ROUNDS (default 20) rounds, with spreads.
# Needs the test cluster (tests/run-integration.sh BUILDDIR started it).
# Each step takes one CPU per node: for all STEPS at once, restart the
# cluster with that many CPUs per node (tests/bench/load-cluster.sh), and
# keep every task HOLD seconds after its report (default 0) so that the
# steps overlap although they are submitted STAGGER seconds apart (default
# 0): Slurm 22.05's slurmd has aborted (a double free in its hostlist
# code) when 200 step launches arrive in the same second.
set -euo pipefail
steps=${1:-200}
rounds=${2:-20}
other=${3:-}
lib=/var/lib/autosync-test
dropin=/etc/slurm/plugstack.conf.d/autosync-test.conf
log=$lib/feedback/feedback.jsonl
[ -f "$dropin" ] || { echo "no $dropin: start the test cluster first (tests/run-integration.sh)" >&2; exit 1; }
saved=$(cat "$dropin")
trap 'printf "%s\n" "$saved" > "$dropin"' EXIT
clean=$(compgen -e | { grep -E '^(SLURM_|AUTOSYNC_)' || true; } | sed 's/^/-u /' | tr '\n' ' ')
work=$(mktemp -d /tmp/autosync-load.XXXXXX)
cd "$work"

echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) CPUs; slurmd: $(sinfo -h -N -o %N | paste -sd,)"
if [ "$steps" -gt 0 ]; then
echo "# 1. $steps steps at once: srun -N3 -n3 --autosync-model=bert-large, each task reports 0.25 s and 0.5 s"
before=$(wc -l < "$log" 2>/dev/null || echo 0)
# how many steps really run at once: Slurm's running jobs, sampled
( while :; do squeue -h -t R -o %i 2>/dev/null | wc -l; sleep 0.2; done ) > running.txt &
sampler=$!
t0=$(date +%s.%N)
pids=()
hold=${HOLD:-0} stagger=${STAGGER:-0}
echo "# each task stays ${hold} s after its report; submissions ${stagger} s apart"
for i in $(seq "$steps"); do
  env $clean srun -N3 -n3 --autosync-model=bert-large \
    bash -c 'printf "0.25\n0.5\n" > "$AUTOSYNC_REPORT"; echo "$SLURM_JOB_ID ${AUTOSYNC_PLAN_HASH-none}"; sleep '"$hold" \
    > "out.$i" 2>&1 &
  pids+=($!)
  sleep "$stagger"
done
for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
t1=$(date +%s.%N)
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
echo "steps running at once: at most $(sort -n running.txt | tail -1) (Slurm's running jobs, sampled every 0.2 s; $(sinfo -h -N -o %c | head -1) CPUs per node)"
jobs=$(cat out.* | awk '/^[0-9]+ [0-9a-f]+$/ {print $1}' | sort -u)
unplanned=$(cat out.* | awk '/^[0-9]+ none$/' | wc -l)
diag=$(cat out.* | grep -Ev '^[0-9]+ ([0-9a-f]+|none)$' | grep -Ev 'queued and waiting|has been allocated' | sort | uniq -c | head -5 || true)
[ -z "$diag" ] || { echo "other output of the steps:"; echo "$diag"; }
sleep 1
tail -n +"$((before + 1))" "$log" > records.jsonl
python3 - "$jobs" records.jsonl <<'PY'
import json, sys
jobs = set(int(j) for j in sys.argv[1].split())
whole = torn = mine = good = 0
for line in open(sys.argv[2]):
    try:
        r = json.loads(line)
    except ValueError:
        torn += 1
        continue
    whole += 1
    if r.get("job") in jobs:
        mine += 1
        good += r.get("measured_count") == 2 and abs(r.get("measured_mean_s", 0) - 0.375) < 1e-9
print(f"steps planned: {len(jobs)}; records: {whole} whole, {torn} torn; of these steps: {mine} "
      f"(want {3 * len(jobs)}), {good} with both step times")
PY
printf 'tasks without a plan: %d; wall time for all: %.1f s\n' "$unplanned" "$(echo "$t1 - $t0" | bc -l)"
is_down=$(sinfo -h -N -o '%T' | grep -Ecv '^(idle|mixed|allocated)$' || true)
echo "nodes down or drained afterwards: $is_down"
fi

echo "# 2. step-start overhead, $rounds interleaved rounds of srun -N3 -n3 true"
t() { local s e; s=$(date +%s.%N); env $clean "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc -l; }
stats() {  # median min q1 q3 max
  sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2;
    printf "%.3f %.3f %.3f %.3f %.3f\n", m, a[1], a[int(NR/4)+1], a[int(3*NR/4)+1], a[NR]}'; }
: > off.txt; : > on.txt; : > plan.txt; : > other.txt
if [ -n "$other" ]; then
  install -m 0755 "$other" "$lib/other-spank_autosync.so"
  other_line=$(sed "s|^required [^ ]*|required $lib/other-spank_autosync.so|" <<<"$saved")
fi
for i in $(seq "$rounds"); do
  printf '#%s\n' "plugin disabled" > "$dropin"; sleep 0.2; t srun -N3 -n3 true >> off.txt
  printf '%s\n' "$saved" > "$dropin"; sleep 0.2; t srun -N3 -n3 true >> on.txt
  t srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large true >> plan.txt
  if [ -n "$other" ]; then
    printf '%s\n' "$other_line" > "$dropin"; sleep 0.2
    t srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large true >> other.txt
    printf '%s\n' "$saved" > "$dropin"
  fi
done
read -r m_off lo_off q1_off q3_off hi_off < <(stats < off.txt)
read -r m_on lo_on q1_on q3_on hi_on < <(stats < on.txt)
read -r m_plan lo_plan q1_plan q3_plan hi_plan < <(stats < plan.txt)
printf '%-40s median %.3f s (min %.3f, IQR %.3f-%.3f, max %.3f)\n' "plugin not registered" $m_off $lo_off $q1_off $q3_off $hi_off
printf '%-40s median %.3f s (min %.3f, IQR %.3f-%.3f, max %.3f)  ratio %.3f\n' "registered, autosync not asked" $m_on $lo_on $q1_on $q3_on $hi_on "$(echo "$m_on / $m_off" | bc -l)"
printf '%-40s median %.3f s (min %.3f, IQR %.3f-%.3f, max %.3f)  ratio %.3f\n' "planning bert-large on every node" $m_plan $lo_plan $q1_plan $q3_plan $hi_plan "$(echo "$m_plan / $m_off" | bc -l)"
if [ -n "$other" ]; then
  read -r m_o lo_o q1_o q3_o hi_o < <(stats < other.txt)
  printf '%-40s median %.3f s (min %.3f, IQR %.3f-%.3f, max %.3f)  ratio %.3f\n' "planning, $(basename "$other")" $m_o $lo_o $q1_o $q3_o $hi_o "$(echo "$m_o / $m_off" | bc -l)"
  printf 'this build / the other, planning: %.3f\n' "$(echo "$m_plan / $m_o" | bc -l)"
fi
echo "# raw per-round seconds (off on plan${other:+ other}):"
paste off.txt on.txt plan.txt ${other:+other.txt} | sed 's/^/# /'
cd /; rm -rf "$work"
