#!/usr/bin/env bash
# A plain PyTorch DDP job under srun: the adapter (autosync.torch.wrap)
# times its steps into AUTOSYNC_REPORT with the plan's hash, and the step's
# feedback record holds both the prediction and the measurement.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
  echo "1..0 # SKIP $PY has no torch (python3-torch)"
  exit 0
fi
diag "running as $IT_USER"
reset_plugin_args
# the installed package, else the source tree's copy where the user can read it
pyp=
if ! (cd / && "$PY" -c 'import autosync.torch') 2>/dev/null; then
  mkdir -p "$IT_WORK/py"
  cp -r "$(dirname "$0")/../../contrib/pytorch/autosync" "$IT_WORK/py/"
  chmod -R a+rX "$IT_WORK/py"
  pyp=$IT_WORK/py
fi
cat > "$IT_WORK/train.py" <<'EOF'
import os
import torch
import torch.distributed as dist
from autosync.torch import wrap

torch.set_num_threads(1)
rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
os.environ["LOCAL_RANK"] = os.environ["SLURM_LOCALID"]
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + os.environ["PORT"],
                        rank=rank, world_size=world)
model = wrap(torch.nn.Linear(64, 64))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(8):
    opt.zero_grad()
    model(torch.randn(16, 64)).sum().backward()
    opt.step()
dist.destroy_process_group()
print("rank", rank, "timer" if model.autosync_timer else "no-timer",
      os.path.dirname(os.environ["AUTOSYNC_PLAN"]))
EOF
chmod 0644 "$IT_WORK/train.py"
port=$((20000 + RANDOM % 20000))
out=$(as_user srun -N1 -n2 -w node1 --autosync-model=resnet50 \
  env PYTHONPATH="$pyp" PORT=$port GLOO_SOCKET_IFNAME=lo "$PY" "$IT_WORK/train.py" 2>&1 | grep '^rank' | sort)
diag "$out"
is "$(awk '{print $1, $2, $3}' <<<"$out")" "rank 0 timer
rank 1 no-timer" "2 DDP ranks on one node: local rank 0 times the steps"
dir=$(awk '{print $4; exit}' <<<"$out")
sleep 0.5
rec=$(as_user cat "$dir/feedback.json" 2>&1)
# 8 forward calls: 7 intervals, the first one warm-up
like "$rec" '"measured_count": 6[,}]' "the step's record holds the 6 steps after warm-up"
like "$rec" '"predicted_step_s": [0-9.e-]+, .*"measured_median_s": [0-9.e-]+' "  beside the prediction, with the median"
like "$rec" '"plan_hash": "[0-9a-f]{16}"' "  and the plan hash the report named"
done_testing
