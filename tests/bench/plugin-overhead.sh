#!/usr/bin/env bash
# plugin-overhead.sh [ROUNDS] - what the SPANK plugin costs at job start.
# Not a test: prints the ratio of `srun -N3 true` wall time with the plugin
# registered vs not registered, measured interleaved (A B A B ...) in one
# run on the test cluster (tests/run-integration.sh must have started it),
# for a step that does not ask for autosync and for one that plans
# (bert-large on the fixture topology). Target: <= 1.05 for the first.
set -euo pipefail
rounds=${1:-20}
dropin=/etc/slurm/plugstack.conf.d/autosync-test.conf
[ -f "$dropin" ] || { echo "no $dropin: start the test cluster first (tests/run-integration.sh)" >&2; exit 1; }
saved=$(cat "$dropin")
trap 'printf "%s\n" "$saved" > "$dropin"' EXIT
clean=$(compgen -e | { grep -E '^(SLURM_|AUTOSYNC_)' || true; } | sed 's/^/-u /' | tr '\n' ' ')

t() {   # wall seconds of one command
  local s e
  s=$(date +%s.%N); env $clean "$@" >/dev/null 2>&1; e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

cd /tmp
declare -a off on plan
for i in $(seq "$rounds"); do
  printf '#%s\n' "plugin disabled" > "$dropin"
  off+=("$(t srun -N3 -n3 true)")
  printf '%s\n' "$saved" > "$dropin"
  on+=("$(t srun -N3 -n3 true)")
  plan+=("$(t srun -N3 -n3 --gpus-per-node=2 --autosync-model=bert-large true)")
done
m_off=$(printf '%s\n' "${off[@]}" | median)
m_on=$(printf '%s\n' "${on[@]}" | median)
m_plan=$(printf '%s\n' "${plan[@]}" | median)
printf 'rounds: %d (interleaved), srun -N3 -n3 true\n' "$rounds"
printf '%-44s %8.3f s\n' "median, plugin not registered" "$m_off"
printf '%-44s %8.3f s   ratio %.3f (target <= 1.05)\n' "median, plugin registered, autosync not asked" "$m_on" "$(echo "$m_on / $m_off" | bc -l)"
printf '%-44s %8.3f s   ratio %.3f\n' "median, planning bert-large on every node" "$m_plan" "$(echo "$m_plan / $m_off" | bc -l)"
