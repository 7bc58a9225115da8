#!/bin/sh
# autosync launch: the plugin's environment without Slurm's plugin, per
# local rank, the NCCL plugin variables, users' settings, failures, and
# under mpirun.
. "${AUTOSYNC_SRCDIR:-.}/tests/cli/tap.sh"
FIX=${AUTOSYNC_FIXTURES:-$SRCDIR/tests/fixtures/topologies}
LIBS=${AUTOSYNC_BUILDDIR:-.}/launcher/nccl/.libs
# (make check's AUTOSYNC_LIBEXECDIR is for bench, not a launched task's)
unset AUTOSYNC_LIBEXECDIR
unset CUDA_VISIBLE_DEVICES SLURM_LOCALID OMPI_COMM_WORLD_LOCAL_RANK LOCAL_RANK \
  MPI_LOCALRANKID PMIX_RANK PMIX_LOCAL_RANK AUTOSYNC_INJECTED NCCL_TUNER_PLUGIN NCCL_PROFILER_PLUGIN \
  NCCL_IB_HCA NCCL_TOPO_FILE SLURM_JOB_ID SLURM_NNODES AUTOSYNC_NCCL_PLUGIN_DIR
export TMPDIR=$TMP

cat > "$TMP/site.yaml" <<YAML
version: 1
catalog_dir: $SRCDIR/planner/catalog
topology_xml: $FIX/hwloc-juwels-booster-4xA100-4xHDR.xml
plan_budget_ms: 5000
YAML
"$AUTOSYNC" plan --config none --model resnet50 --catalog "$SRCDIR/planner/catalog" \
  --topology "$FIX/hwloc-juwels-booster-4xA100-4xHDR.xml" --nodes 2 -o "$TMP/plan.yaml" >/dev/null 2>&1
hash=$(sed -n 's/^hash: "\(.*\)"$/\1/p' "$TMP/plan.yaml")
like "$hash" '^[0-9a-f]{16}$' "a plan to launch with"

show='echo "$AUTOSYNC_PLAN_HASH|$NCCL_IB_HCA|$(test -r "$NCCL_TOPO_FILE" && echo topo)|$(test -r "$AUTOSYNC_PLAN" && echo plan)|${NCCL_TUNER_PLUGIN##*/}|${NCCL_PROFILER_PLUGIN##*/}|$AUTOSYNC_LOCAL_RANK"'
L() { "$AUTOSYNC" launch --config "$TMP/site.yaml" --plugin-dir "$LIBS" "$@"; }

out=$(L --plan "$TMP/plan.yaml" --local-rank 2 -- sh -c "$show" 2>"$TMP/err"); rc=$?
is "$rc" 0 "the command's exit status"
is "$out" "$hash|=mlx5_2:1|topo|plan|libnccl-tuner-autosync.so|libnccl-profiler-autosync.so|2" \
  "--plan: the plan, the NCCL topology, local rank 2's nearest NIC, both NCCL plugins"
is "$(cat "$TMP/err")" "" "nothing on stderr"

out=$(OMPI_COMM_WORLD_LOCAL_RANK=1 L --plan "$TMP/plan.yaml" -- sh -c 'echo "$NCCL_IB_HCA $AUTOSYNC_LOCAL_RANK"' 2>&1)
is "$out" "=mlx5_1:1 1" "the local rank from OMPI_COMM_WORLD_LOCAL_RANK"
out=$(LOCAL_RANK=3 L --plan "$TMP/plan.yaml" -- sh -c 'echo "$NCCL_IB_HCA"' 2>&1)
is "$out" "=mlx5_3:1" "... from LOCAL_RANK (torchrun)"
out=$(SLURM_LOCALID=0 LOCAL_RANK=3 L --plan "$TMP/plan.yaml" -- sh -c 'echo "$NCCL_IB_HCA"' 2>&1)
is "$out" "=mlx5_3:1" "torchrun's LOCAL_RANK before the task's SLURM_LOCALID (its workers all inherit it)"
out=$(PMIX_LOCAL_RANK=1 PMIX_RANK=6 L --plan "$TMP/plan.yaml" -- sh -c 'echo "$NCCL_IB_HCA"' 2>&1)
is "$out" "=mlx5_1:1" "... PMIX_LOCAL_RANK last (PMIX_RANK is the rank in the whole job, not on the node)"

# no local rank anywhere: a per-node launcher (torchrun) wrapped whole, whose
# workers all inherit what it gets: no rank's NIC for all of them
out=$(L --plan "$TMP/plan.yaml" -- sh -c "$show" 2>"$TMP/err")
is "$out" "$hash||topo|plan|libnccl-tuner-autosync.so|libnccl-profiler-autosync.so|" \
  "no local rank (torchrun wrapped whole): the plan and the plugins, no per-rank NIC, no AUTOSYNC_LOCAL_RANK"
like "$(cat "$TMP/err")" "no per-rank NIC choice" "  and it says why"
out=$(LOCAL_RANK=0 L --plan "$TMP/plan.yaml" -- sh -c 'echo "$AUTOSYNC_INJECTED"' 2>&1)
like "$out" '(^|,)NCCL_TUNER_PLUGIN(,|$)' "AUTOSYNC_INJECTED lists the tuner variable"
like "$out" '(^|,)NCCL_IB_HCA(,|$)' "and the per-rank variables"
like "$out" '(^|,)NCCL_TOPO_FILE(,|$)' "and the plan's"
out=$(LOCAL_RANK=0 L --plan "$TMP/plan.yaml" -- sh -c 'test -d "$(dirname "$AUTOSYNC_REPORT")" && stat -c %a "$(dirname "$AUTOSYNC_REPORT")"; dirname "$AUTOSYNC_PLAN"' 2>&1)
is "$(printf '%s\n' "$out" | head -1)" 700 "a private job directory (0700) per local rank, holding the report path"
like "$(printf '%s\n' "$out" | sed -n 2p)" "^$TMP/autosync-launch-$(id -u)-p[0-9]+-0$" "  under \$TMPDIR"
out=$(LOCAL_RANK=0 L --plan "$TMP/plan.yaml" --dir "$TMP/mine" -- sh -c 'echo "$AUTOSYNC_PLAN"' 2>&1)
is "$out" "$TMP/mine/plan.yaml" "--dir"

# the same function decides as in the plugin: the same variables
out=$(LOCAL_RANK=0 L --plan "$TMP/plan.yaml" --no-tuner --no-profiler -- env 2>&1 | grep -E '^(NCCL|AUTOSYNC)_' | grep -Ev '^AUTOSYNC_(BUILDDIR|SRCDIR|FIXTURES)=' | sed 's/=.*//' | sort | paste -sd' ')
is "$out" "AUTOSYNC_DDP_BUCKET_CAP_MB AUTOSYNC_DDP_COMM_HOOK AUTOSYNC_DDP_FIRST_BUCKET_MB AUTOSYNC_INJECTED AUTOSYNC_LOCAL_RANK AUTOSYNC_PLAN AUTOSYNC_PLAN_HASH AUTOSYNC_REPORT AUTOSYNC_TOPO_HASH NCCL_IB_HCA NCCL_NET_GDR_LEVEL NCCL_TOPO_FILE" \
  "--no-tuner --no-profiler: exactly the plugin's variables (+ AUTOSYNC_LOCAL_RANK)"

# users' settings survive; inherited autosync settings do not count as theirs
out=$(LOCAL_RANK=0 NCCL_IB_HCA==mlx5_9:1 NCCL_TUNER_PLUGIN=mine L --plan "$TMP/plan.yaml" -- sh -c "$show" 2>"$TMP/err")
is "$out" "$hash|=mlx5_9:1|topo|plan|mine|libnccl-profiler-autosync.so|0" "the user's NCCL_IB_HCA and NCCL_TUNER_PLUGIN are kept"
is "$(cat "$TMP/err")" "autosync: kept the user's NCCL_TUNER_PLUGIN=mine" "and the wrapper says so"
out=$(L --plan "$TMP/plan.yaml" --local-rank 1 -- "$AUTOSYNC" launch --config "$TMP/site.yaml" --plugin-dir "$LIBS" --plan "$TMP/plan.yaml" --local-rank 3 -- sh -c "$show" 2>&1)
is "$out" "$hash|=mlx5_3:1|topo|plan|libnccl-tuner-autosync.so|libnccl-profiler-autosync.so|3" \
  "nested: variables an outer autosync injected are replaced"

# plugins missing: said, not set
out=$(L --plan "$TMP/plan.yaml" --plugin-dir "$TMP/none" -- sh -c 'echo "${NCCL_TUNER_PLUGIN-unset}"' 2>"$TMP/err")
is "$out" "unset" "no plugin file: NCCL_TUNER_PLUGIN not set"
like "$(cat "$TMP/err")" "^autosync: $TMP/none/libnccl-tuner-autosync.so: No such file or directory; NCCL runs without it$" "and why"
out=$(LOCAL_RANK=0 AUTOSYNC_NCCL_PLUGIN_DIR=$LIBS "$AUTOSYNC" launch --config "$TMP/site.yaml" --plan "$TMP/plan.yaml" -- sh -c 'echo "$NCCL_PROFILER_PLUGIN"' 2>&1)
is "$out" "$LIBS/libnccl-profiler-autosync.so" "AUTOSYNC_NCCL_PLUGIN_DIR"

# planning at start-up
out=$(LOCAL_RANK=0 L --model resnet50 --nodes 2 -- sh -c 'echo "$AUTOSYNC_PLAN_HASH"' 2>&1)
is "$out" "$hash" "--model with --nodes 2: the same plan as 'autosync plan' made"
out=$(LOCAL_RANK=0 OMPI_COMM_WORLD_SIZE=8 OMPI_COMM_WORLD_LOCAL_SIZE=4 L --model resnet50 -- sh -c 'echo "$AUTOSYNC_PLAN_HASH"' 2>&1)
is "$out" "$hash" "--model: 2 nodes from OMPI_COMM_WORLD_SIZE / _LOCAL_SIZE"
out=$(L --model resnet50 --explain -- true 2>&1)
like "$out" "^autosync: plan for resnet50 on 1 node\\(s\\) x 4 GPU\\(s\\)" "--explain prints the plugin's summary"

# failures: fail open, or --strict
echo "autosync_plan: 1" > "$TMP/bad.yaml"
out=$(L --plan "$TMP/bad.yaml" -- sh -c 'echo "task ${AUTOSYNC_PLAN-unset} ${NCCL_TUNER_PLUGIN-unset}"' 2>&1)
like "$out" "^autosync: plan file: $TMP/bad.yaml:.*; running without autosync$" "a bad plan: one-line warning"
like "$out" "task unset unset" "and the command runs without autosync"
out=$(L --strict --plan "$TMP/bad.yaml" -- echo ran 2>&1); rc=$?
is "$rc" 1 "--strict: exit 1"
unlike_ran=$(printf '%s\n' "$out" | grep -c '^ran$')
is "$unlike_ran" 0 "--strict: the command does not run"
out=$("$AUTOSYNC" launch -- sh -c 'echo "${AUTOSYNC_PLAN-unset}"' 2>&1)
is "$out" "autosync: launch: no --plan or --model; running the command unchanged
unset" "no plan or model: the command runs unchanged"
out=$("$AUTOSYNC" launch --plan "$TMP/plan.yaml" 2>&1); rc=$?
is "$rc" 2 "no command: usage error"
out=$("$AUTOSYNC" launch --plan a --model b -- true 2>&1); rc=$?
is "$rc" 2 "--plan and --model together: usage error"
out=$("$AUTOSYNC" launch --local-rank x -- true 2>&1); rc=$?
is "$rc" 2 "a bad --local-rank: usage error"
out=$("$AUTOSYNC" launch -q --plan "$TMP/plan.yaml" --plugin-dir "$LIBS" --config "$TMP/site.yaml" -- /nonexistent/cmd 2>&1); rc=$?
is "$rc" 127 "a command that cannot run: 127"
like "$out" "autosync: launch: /nonexistent/cmd: No such file or directory" "and why"
like "$("$AUTOSYNC" launch --help)" "^usage: autosync launch" "--help"

# launch execs, so its directories outlive it: the next launch removes the
# user's own older than keep_job_files (at least a day), nothing else
mkdir -p "$TMP/autosync-launch-$(id -u)-old-0" "$TMP/autosync-launch-$(id -u)-new-0" "$TMP/autosync-other"
touch -d '3 days ago' "$TMP/autosync-launch-$(id -u)-old-0" "$TMP/autosync-other"
L --plan "$TMP/plan.yaml" -q -- true
is "$(cd "$TMP" && ls -d autosync-launch-*-old-0 autosync-launch-*-new-0 autosync-other 2>/dev/null | paste -sd' ')" \
  "autosync-launch-$(id -u)-new-0 autosync-other" "a later launch removes the user's launch directories older than a day, nothing else"

# under mpirun (Open MPI): each rank gets its own local rank's settings
if command -v mpirun >/dev/null 2>&1; then
  out=$(mpirun --allow-run-as-root --oversubscribe -np 2 \
    -x TMPDIR -x ASAN_OPTIONS -x UBSAN_OPTIONS \
    "$AUTOSYNC" launch --config "$TMP/site.yaml" --plugin-dir "$LIBS" --plan "$TMP/plan.yaml" -- \
    sh -c "$show" 2>&1 | sort)
  is "$out" "$hash|=mlx5_0:1|topo|plan|libnccl-tuner-autosync.so|libnccl-profiler-autosync.so|0
$hash|=mlx5_1:1|topo|plan|libnccl-tuner-autosync.so|libnccl-profiler-autosync.so|1" \
    "mpirun -np 2: local ranks 0 and 1, their NICs, one plan, both plugins"
else
  echo "ok $((_n + 1)) # SKIP mpirun not installed"; _n=$((_n + 1))
fi
done_testing
