#!/usr/bin/env bash
# The plugin's shell on a real 3-node Slurm: options, env fallbacks,
# injection, refusal of bad values, and fail-open on a broken setup.
. "$(dirname "$0")/lib.sh"
diag "running as $IT_USER"
reset_plugin_args

MSG_TAIL="(expected auto, off, required or a path to a plan file)"
vars='echo "$SLURMD_NODENAME ${AUTOSYNC_MODE-unset} ${AUTOSYNC_MODEL-unset}"'

# --- help ---------------------------------------------------------------
for cmd in srun sbatch salloc; do
  h=$(as_user $cmd --help 2>&1)
  like "$h" '--autosync\[=auto\|off\|required\|PLAN\]|--autosync=auto\|off\|required\|PLAN' "$cmd --help lists --autosync"
  like "$h" '--autosync-model=NAME\|PATH' "$cmd --help lists --autosync-model"
done

# --- injection on all three nodes --------------------------------------
out=$(as_user srun -N3 -n3 --autosync=auto --autosync-model=resnet50 bash -c "$vars" 2>/dev/null | sort)
is "$out" "node1 auto resnet50
node2 auto resnet50
node3 auto resnet50" "srun -N3 --autosync=auto --autosync-model=resnet50: every node's task sees both"

out=$(as_user srun -N3 --ntasks-per-node=2 --autosync-model=bert-large bash -c "$vars" 2>/dev/null | sort | uniq -c | awk '{print $1, $2, $3, $4}')
is "$out" "2 node1 auto bert-large
2 node2 auto bert-large
2 node3 auto bert-large" "a model alone implies auto, in every task (6 tasks)"

out=$(as_user srun -n1 -w node1 --autosync bash -c "$vars" 2>/dev/null)
is "$out" "node1 auto unset" "--autosync without a value means auto; no model: AUTOSYNC_MODEL unset"

out=$(as_user srun -n1 -w node1 --autosync=required --autosync-model=vgg16 bash -c "$vars" 2>/dev/null)
is "$out" "node1 required vgg16" "--autosync=required is passed on"

out=$(as_user srun -n1 -w node1 --autosync=/tmp/plan.yaml bash -c "$vars" 2>/dev/null)
is "$out" "node1 /tmp/plan.yaml unset" "--autosync=PATH is passed on"

# --- nothing asked, or off: nothing injected ----------------------------
out=$(as_user srun -N3 -n3 bash -c 'env | grep -c "^AUTOSYNC_" || true' 2>&1 | sort -u)
is "$out" "0" "no option: nothing injected on any node"
out=$(as_user srun -n2 --autosync=off --autosync-model=resnet50 bash -c 'env | grep -c "^AUTOSYNC_" || true' 2>&1 | sort -u)
is "$out" "0" "--autosync=off: nothing injected"

# --- refusal ------------------------------------------------------------
for v in bogus "" AUTO; do
  err=$(as_user srun -n1 "--autosync=$v" true 2>&1); rc=$?
  is "$rc" 255 "srun --autosync='$v' refused (rc)"
  like "$err" "^srun: error: autosync: invalid --autosync value '$v' \\(expected auto, off, required or a path to a plan file\\)" \
    "srun --autosync='$v': the plugin's message"
done
err=$(as_user sbatch --autosync=bogus --wrap true 2>&1); rc=$?
is "$rc" 255 "sbatch --autosync=bogus refused (rc)"
like "$err" "^sbatch: error: autosync: invalid --autosync value 'bogus' " "sbatch message"
err=$(as_user salloc --autosync=bogus true 2>&1); rc=$?
like "$err" "^salloc: error: autosync: invalid --autosync value 'bogus' " "salloc refuses too (rc $rc)"
garbage=$(head -c 4096 /dev/urandom | tr -d '\0' | head -c 2048)
err=$(as_user srun -n1 "--autosync-model=$garbage" true 2>&1); rc=$?
is "$rc" 255 "2 KiB garbage model refused"
like "$err" "autosync: invalid --autosync-model value '.{20,}\\.\\.\\.' \\(expected a catalog model name" "garbage is cut in the message"
err=$(as_user srun -n1 "--autosync-model=" true 2>&1); rc=$?
is "$rc" 255 "empty model refused"

# --- environment fallbacks ----------------------------------------------
out=$(as_user_env AUTOSYNC_MODE=auto AUTOSYNC_MODEL=inception_v3 -- srun -n1 -w node1 bash -c "$vars" 2>/dev/null)
is "$out" "node1 auto inception_v3" "AUTOSYNC_MODE/AUTOSYNC_MODEL from the environment"
out=$(as_user_env AUTOSYNC_MODE=off -- srun -n1 -w node1 --autosync=auto bash -c "$vars" 2>/dev/null)
is "$out" "node1 auto unset" "the command line beats AUTOSYNC_MODE"
out=$(as_user_env AUTOSYNC_MODE=auto AUTOSYNC_MODEL=resnet50 -- srun -n1 --autosync=off bash -c 'env | grep "^AUTOSYNC_" | sort' 2>&1)
is "$out" "AUTOSYNC_MODE=auto
AUTOSYNC_MODEL=resnet50" "--autosync=off beats AUTOSYNC_MODE=auto: the user's own variables are left as they were, nothing added"
out=$(as_user_env AUTOSYNC_MODE=sometimes -- srun -n1 bash -c 'echo ran' 2>&1); rc=$?
like "$out" "autosync: invalid AUTOSYNC_MODE value 'sometimes' $(sed 's/[()]/\\&/g' <<<"$MSG_TAIL") \\(ignored\\)" "a bad AUTOSYNC_MODE is named in a warning"
like "$out" "^ran$" "and the job runs (a stray variable never refuses a job; rc $rc)"
out=$(as_user_env AUTOSYNC_MODEL='bad name' -- sbatch --wait -o "$IT_WORK/bm.out" --wrap 'echo batch-ran' 2>&1; cat "$IT_WORK/bm.out")
like "$out" "invalid AUTOSYNC_MODEL value 'bad name'.*\\(ignored\\)" "a bad AUTOSYNC_MODEL: sbatch warns"
like "$out" "batch-ran" "and the batch job runs"
out=$(as_user_env SLURM_SPANK__SLURM_SPANK_OPTION_autosync_autosync_model=densenet121 -- srun -n1 -w node1 bash -c "$vars" 2>/dev/null)
is "$out" "node1 auto densenet121" "SPANK's own environment form of the option"

# --- batch jobs ---------------------------------------------------------
cat > "$IT_WORK/job.sh" <<JOB
#!/bin/bash
#SBATCH --autosync-model=resnet50
#SBATCH -N 3
#SBATCH -n 3
#SBATCH -o $IT_WORK/job.out
echo "batch \${AUTOSYNC_MODE-unset} \${AUTOSYNC_MODEL-unset}"
srun bash -c '$vars'
JOB
chmod 0755 "$IT_WORK/job.sh"
[ "$IT_USER" = root ] || chown "$IT_USER" "$IT_WORK/job.sh"
as_user sbatch --wait "$IT_WORK/job.sh" >/dev/null 2>&1
out=$(sort "$IT_WORK/job.out" 2>&1)
is "$out" "batch auto resnet50
node1 auto resnet50
node2 auto resnet50
node3 auto resnet50" "#SBATCH --autosync-model reaches the batch step and every srun step"

# --- a broken setup never breaks a job ----------------------------------
broken=/var/lib/autosync-test/etc/broken.yaml
printf 'default_mode: [off\n' > "$broken"; chmod 0644 "$broken"
set_plugin_args "config=$broken"
out=$(as_user srun -N3 -n3 --autosync=auto bash -c 'echo "task ${AUTOSYNC_MODE-unset}"' 2>&1 | sort)
is "$out" "task unset
task unset
task unset" "broken site config, --autosync=auto but no model: nothing to plan, not warned"
out=$(as_user srun -N3 -n3 --autosync-model=resnet50 bash -c 'echo "task ${AUTOSYNC_MODE-unset}"' 2>&1 | sort)
like "$out" "^autosync: site config: $broken:2:[0-9]+: not valid YAML: .*; running without autosync$" "broken site config: a one-line warning"
is "$(grep -c '^task unset$' <<<"$out")" 3 "broken site config: all 3 tasks run, nothing injected"
is "$(grep -c '^autosync:' <<<"$out")" 1 "broken site config: warned once per step"
out=$(as_user srun -n1 --autosync=required bash -c 'echo ran' 2>&1)
like "$out" "autosync: site config: $broken:2:[0-9]+: not valid YAML" "required + broken config: the reason is shown"
unlike "$out" "^ran$" "required + broken config: the task does not run"
out=$(as_user srun -n1 bash -c 'echo ran' 2>&1)
is "$out" "ran" "broken site config, autosync not asked: silent, job runs"

set_plugin_args "config=/nonexistent/autosync.yaml"
out=$(as_user srun -n2 --autosync-model=resnet50 bash -c 'echo "task ${AUTOSYNC_MODE-unset}"' 2>&1 | sort)
is "$out" "autosync: site config: /nonexistent/autosync.yaml: cannot open: No such file or directory; running without autosync
task unset
task unset" "missing site config: warning, job runs without autosync"

set_plugin_args "config=$IT_SITE" "colour=blue"
out=$(as_user srun -n2 --autosync=auto bash -c 'echo "task ${AUTOSYNC_MODE-unset}"' 2>&1 | sort)
is "$out" "task unset
task unset" "unknown plugstack argument, no model: not warned"
out=$(as_user srun -n2 --autosync-model=resnet50 bash -c 'echo "task ${AUTOSYNC_MODE-unset}"' 2>&1 | sort)
is "$out" "autosync: unknown plugstack argument 'colour=blue' (known: config=PATH, strict=BOOL, agree=BOOL, agree_ports=LO-HI); running without autosync
task unset
task unset" "unknown plugstack argument: plugin disabled, job runs"
h=$(as_user srun --help 2>&1)
like "$h" "--autosync-model" "disabled plugin still registers its options"
out=$(as_user sbatch --wait -o "$IT_WORK/b2.out" --autosync-model=resnet50 --wrap 'echo batch-ran' 2>&1; cat "$IT_WORK/b2.out" 2>&1)
like "$out" "batch-ran" "disabled plugin: batch jobs with autosync options still run"
reset_plugin_args

# no node was drained by any of this
is "$(sinfo -h -N -o '%T' | grep -Ecv '^(idle|mixed|allocated)$')" 0 "no node drained or down"

done_testing
