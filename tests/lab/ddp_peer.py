"""ddp_peer.py - the real peer: PyTorch DDP (gloo, CPU) training the same
synthetic model that `autosync bench` replays (replay.json written by
`autosync bench --write-plans DIR`): one parameter per model tensor (1-D,
the scaled size), every layer an autograd function whose forward and
backward wait until a deadline advanced by the layer's simulated time (so
Python overhead counts as compute, as in the C bench), gradients of ones.
DDP's reducer hooks fire as each layer's gradients are produced, so the
buckets overlap with the emulated backward exactly as in real training.
The optimizer is emulated by waiting its simulated time.

Configurations (comma list, one launch, interleaved over --rounds, the
order reversed every other round):
  default        DDP as it runs at full size: torch's defaults (bucket_cap_mb
                 25, first bucket 1 MiB) divided by the replay's gradient
                 scale S, so it keeps the bucket count of the full-size job
  default-absolute  DistributedDataParallel(model) with torch's absolute
                 defaults on the scaled gradients (few huge buckets; the
                 comparison before 2026-12-03, kept to state both)
  plan:PATH      autosync_ddp.wrap(model, plan=load_plan(PATH)) (the adapter)
  bucket:MB      DDP(bucket_cap_mb=MB)

With --fresh each configuration of each round runs in its own process
(forked after torch is imported, with its own process group on master
port + 100 + its index), as a real job runs one configuration: in one
process DDP's default ran up to 1.5x faster after a hierarchical plan
had run (2026-12-04 lab, BERT-large), which flattered the default.

Launch one process per rank (tests/lab/bench.sh does it in the lab):
  /usr/bin/python3 ddp_peer.py --replay replay.json --rank R --world W \\
      --master 10.77.0.1:29500 --configs default,plan:p.yaml
Rank 0 prints one JSON line per configuration and round.
"""
import argparse
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "pytorch"))
import autosync_ddp  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--replay", required=True)
ap.add_argument("--rank", type=int, required=True)
ap.add_argument("--world", type=int, required=True)
ap.add_argument("--master", default="10.77.0.1:29500")
ap.add_argument("--configs", default="default")
ap.add_argument("--steps", type=int, default=5)
ap.add_argument("--warmup", type=int, default=2)
ap.add_argument("--rounds", type=int, default=1)
ap.add_argument("--tag", default="")
ap.add_argument("--fresh", action="store_true")
a = ap.parse_args()

torch.set_num_threads(1)
R = json.load(open(a.replay))


def init(port_offset=0):
    host, port = a.master.rsplit(":", 1)
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (host, int(port) + port_offset),
                            rank=a.rank, world_size=a.world)

clock = {"t": 0.0}


def advance(dt):
    """wait until the deadline moved by dt (deadline-based, like the C bench)"""
    clock["t"] += dt
    d = clock["t"] - time.perf_counter()
    if d > 0:
        time.sleep(d)


class Layer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, fwd, bwd, *params):
        ctx.bwd = bwd
        ctx.shapes = [p.shape for p in params]
        advance(fwd)
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        advance(ctx.bwd)
        return (g, None, None) + tuple(torch.ones(s) for s in ctx.shapes)


class Replay(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = R["layers"]
        self.params = torch.nn.ParameterList()
        self.by_layer = [[] for _ in self.layers]
        for t in R["tensors"]:
            n = t["rows"] * t["row"] if t["sparse"] else t["numel"]  # touched rows (as the bench)
            p = torch.nn.Parameter(torch.zeros(max(1, n)))
            self.params.append(p)
            self.by_layer[t["layer"]].append(p)

    def forward(self, x):
        for L, ps in zip(self.layers, self.by_layer):
            if ps:
                x = Layer.apply(x, L["fwd"], L["bwd"], *ps)
            else:
                advance(L["fwd"])
        return x.sum()


def scaled_default(m, scale):
    """DDP's defaults divided by the gradient scale. The first bucket has
    no public knob in torch 1.13 (DistributedDataParallel reads the private
    dist._DEFAULT_FIRST_BUCKET_BYTES when it is built), so it is set for the
    construction only, and only where that attribute exists."""
    first = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", None)
    if first is not None:
        dist._DEFAULT_FIRST_BUCKET_BYTES = max(1, int(first / scale))
    try:
        return DDP(m, bucket_cap_mb=25.0 / scale)
    finally:
        if first is not None:
            dist._DEFAULT_FIRST_BUCKET_BYTES = first


def run(cfg):
    torch.manual_seed(0)
    m = Replay()
    if cfg == "default":
        d = scaled_default(m, float(R.get("grad_scale", 1)))
    elif cfg == "default-absolute":
        d = DDP(m)
    elif cfg.startswith("bucket:"):
        d = DDP(m, bucket_cap_mb=float(cfg[7:]))
    elif cfg.startswith("plan:"):
        d = autosync_ddp.wrap(m, plan=autosync_ddp.load_plan(cfg[5:]))
    else:
        raise SystemExit("unknown config " + cfg)
    x = torch.zeros(1, requires_grad=True)
    ts = []
    for i in range(a.warmup + a.steps):
        for p in m.parameters():
            p.grad = None
        dist.barrier()
        t0 = time.perf_counter()
        clock["t"] = t0
        loss = d(x)
        loss.backward()          # returns when DDP's all-reduces are done
        clock["t"] = max(clock["t"], time.perf_counter())
        advance(R["optimizer"])  # the optimizer, after the last all-reduce
        t = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if i >= a.warmup:
            ts.append(t.item())
    # correctness: every gradient = world (ones summed, averaged by DDP -> 1)
    good = all(bool(torch.all(p.grad == 1.0)) for p in m.parameters())
    ok = torch.tensor([1 if good else 0])
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    s = getattr(d, "_autosync_settings", {})
    del d, m
    return ts, bool(ok.item()), s


def forked(cfg, k):
    """run(cfg) in a child process with its own process group; its result
    comes back through a pipe"""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        code = 1
        try:
            init(100 + k)
            out = run(cfg)
            dist.destroy_process_group()
            with os.fdopen(wfd, "w") as w:
                w.write(json.dumps(out))
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd) as r:
        data = r.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise SystemExit("configuration %s: its process failed (wait status %d)" % (cfg, status))
    return tuple(json.loads(data))


if not a.fresh:
    init()
k = 0
for rnd in range(a.rounds):
    # A B, then B A: a configuration that always ran second measured up to
    # 6 % slower than the same settings run first (2026-12-03 lab, NCF)
    cfgs = a.configs.split(",")
    for cfg in (cfgs if rnd % 2 == 0 else cfgs[::-1]):
        ts, ok, s = forked(cfg, k) if a.fresh else run(cfg)
        k += 1
        if a.rank == 0:
            print(json.dumps({"tag": a.tag, "model": R["model"], "config": cfg, "round": rnd,
                              "world": a.world, "steps": ts, "ok": ok, "settings": s,
                              "fresh": a.fresh, "torch": torch.__version__}), flush=True)
if not a.fresh:
    dist.destroy_process_group()
