"""ddp_hooks.py - every strategy autosync.torch applies, against plain DDP on
the same data, on 1-8 CPU ranks (gloo), one process per rank (fork). TAP.

Several nodes are faked on one machine through the node layout: each rank
gets LOCAL_WORLD_SIZE=g, so ranks 0..g-1 are "node 0", g..2g-1 "node 1", ...
(autosync.hooks.Layout.detect), and the hierarchical all-reduce builds its
intra-node and per-rail subgroups from that.

Checks, per layout:
  * fp32 strategies (small buckets with a first bucket, hierarchical, both)
    give the averaged gradients of the first step and the parameters after
    3 steps of plain DDP within 1e-6 relative (max-norm per tensor);
  * fp16 (flat and hierarchical): the first step's gradients within
    (world + 1) * 2^-11 * max |local gradient| (one rounding per cast and
    per addition at fp16's unit roundoff); bf16 needs a backend that
    all-reduces bfloat16 (gloo in torch 1.x does not: skipped there);
  * PowerSGD (rank 4, error feedback, compression from step 2) reaches the
    loss of plain DDP within 2 % after 300 SGD steps of a fixed regression;
  * nn.Embedding(sparse=True): the sparse gradient under each hook equals
    plain DDP's within 1e-6 relative.
Usage: ddp_hooks.py [WORLD:LOCAL ...]   (default 1:1 2:1 4:2 8:2 8:4)
"""
import datetime
import gc
import os
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from autosync.torch import wrap  # noqa: E402

FP32_TOL = 1e-6
U16 = {"fp16": 2.0 ** -11, "bf16": 2.0 ** -8}


def plan(**env):
    return {"job": {}, "env": {k: str(v) for k, v in env.items()}, "strategy": "test", "framework": "pytorch-ddp"}


def dense_model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                               torch.nn.ReLU(), torch.nn.Linear(64, 4))


def batch(rank, step, n=8, dim=16, outd=4):
    g = torch.Generator().manual_seed(1000 * rank + step)
    return torch.randn(n, dim, generator=g), torch.randn(n, outd, generator=g)


def train(model, rank, steps, lr=0.05, data=batch):
    """SGD steps on this rank's data; the averaged gradients of the first
    step and the losses."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    first, losses = None, []
    for s in range(steps):
        x, y = data(rank, s)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if first is None:
            first = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
        losses.append(loss.item())
    return first, losses


def maxrel(a, b):
    """max over tensors of max|a - b| / max|b|"""
    worst = 0.0
    for x, y in zip(a, b):
        x = x.to_dense() if x.is_sparse else x
        y = y.to_dense() if y.is_sparse else y
        d = (x - y).abs().max().item()
        worst = max(worst, d / max(y.abs().max().item(), 1e-30))
    return worst


def fp32_cases(rank, out):
    ref = DDP(dense_model())
    g0, _ = train(ref, rank, 3)
    p0 = [p.detach().clone() for p in ref.parameters()]
    for name, p in (("small buckets + first bucket", plan(AUTOSYNC_DDP_BUCKET_CAP_MB=0.004,
                                                            AUTOSYNC_DDP_FIRST_BUCKET_MB=0.001)),
                    ("hierarchical", plan(AUTOSYNC_DDP_ALLREDUCE="hierarchical")),
                    ("hierarchical, small buckets", plan(AUTOSYNC_DDP_ALLREDUCE="hierarchical",
                                                         AUTOSYNC_DDP_BUCKET_CAP_MB=0.004))):
        m = wrap(dense_model(), plan=p)
        g, _ = train(m, rank, 3)
        e = max(maxrel(g, g0), maxrel([q.detach() for q in m.parameters()], p0))
        out.append((e <= FP32_TOL, "fp32 %s (%s) = plain DDP: max relative difference %.3g <= %g"
                    % (name, m.autosync_hook, e, FP32_TOL)))
    started = len(hier_threads())
    del m
    gc.collect()
    for _ in range(50):
        if not hier_threads():
            break
        time.sleep(0.1)
    out.append((started >= 1 and not hier_threads(),
                "hierarchical hook: %d worker thread(s) running, %d left once the DDP models are gone"
                % (started, len(hier_threads()))))


def hier_threads():
    return [t for t in threading.enumerate() if t.name == "autosync-hierarchical" and t.is_alive()]


def local_max(rank):
    """max |local gradient| per tensor, over every rank"""
    m = dense_model()
    x, y = batch(rank, 0)
    torch.nn.functional.mse_loss(m(x), y).backward()
    mx = torch.tensor([p.grad.abs().max().item() for p in m.parameters()])
    dist.all_reduce(mx, op=dist.ReduceOp.MAX)
    return mx


def compressed_cases(rank, world, out):
    g0, _ = train(DDP(dense_model()), rank, 1)
    mx = local_max(rank)
    for fmt in ("fp16", "bf16"):
        for ar in ("flat", "hierarchical"):
            m = wrap(dense_model(), plan=plan(AUTOSYNC_DDP_COMM_HOOK=fmt, AUTOSYNC_DDP_ALLREDUCE=ar))
            if m.autosync_hook in ("none", "hierarchical"):
                out.append((None, "%s %s: not applied on backend %s (torch %s)"
                            % (fmt, ar, dist.get_backend(), torch.__version__)))
                continue
            g, _ = train(m, rank, 1)
            bound = (world + 1) * U16[fmt] * mx
            err = torch.tensor([(a - b).abs().max().item() for a, b in zip(g, g0)])
            out.append((bool((err <= bound).all()), "%s %s (%s): |error| <= (world+1) * %g * max|local grad| "
                        "per tensor (worst ratio %.3g)" % (fmt, ar, m.autosync_hook, U16[fmt],
                                                           (err / bound).max().item())))


def regression(rank, step, n=32):
    g = torch.Generator().manual_seed(7)
    teacher = torch.randn(32, 8, generator=g) / 4
    g.manual_seed(100 * rank + step % 8)  # 8 batches per rank, repeated
    x = torch.randn(n, 32, generator=g)
    return x, torch.tanh(x @ teacher)


def mlp():
    torch.manual_seed(2)
    return torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                               torch.nn.ReLU(), torch.nn.Linear(128, 8))


def final_loss(model, rank):
    """mean loss over every rank's 8 batches"""
    with torch.no_grad():
        t = torch.tensor([sum(torch.nn.functional.mse_loss(model(x), y).item()
                              for x, y in (regression(rank, s) for s in range(8))) / 8])
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def powersgd_case(rank, out, steps=300, prank=4):
    ref = DDP(mlp())
    train(ref, rank, steps, lr=0.1, data=regression)
    os.environ["AUTOSYNC_DDP_POWERSGD_START_ITER"] = "2"
    try:
        m = wrap(mlp(), plan=plan(AUTOSYNC_DDP_COMM_HOOK="powersgd", AUTOSYNC_DDP_POWERSGD_RANK=prank))
    finally:
        del os.environ["AUTOSYNC_DDP_POWERSGD_START_ITER"]
    train(m, rank, steps, lr=0.1, data=regression)
    a, b = final_loss(ref, rank), final_loss(m, rank)
    start = final_loss(mlp(), rank)
    out.append((abs(b - a) <= 0.02 * a and a < start / 2,
                "PowerSGD rank %d (%s): loss after %d steps %.5g, plain DDP %.5g (%.2f %% apart, <= 2 %%; "
                "from %.5g)" % (prank, m.autosync_hook, steps, b, a, 100 * abs(b - a) / a, start)))


class Sparse(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.emb = torch.nn.Embedding(50, 8, sparse=True)
        self.out = torch.nn.Linear(8, 1)

    def forward(self, ids):
        return self.out(self.emb(ids)).sum()


def sparse_grad(model, rank):
    opt = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: the dense hooks' rounding cannot reach
    grads = []
    for s in range(3):  # the third step runs PowerSGD (start 2)
        g = torch.Generator().manual_seed(10 * rank + s)
        opt.zero_grad()
        model(torch.randint(0, 50, (6,), generator=g)).backward()
        grads.append(model.module.emb.weight.grad.detach().clone())
        opt.step()
    return grads


def sparse_cases(rank, out):
    g0 = sparse_grad(DDP(Sparse()), rank)
    os.environ["AUTOSYNC_DDP_POWERSGD_START_ITER"] = "2"
    try:
        for name, p in (("fp16", plan(AUTOSYNC_DDP_COMM_HOOK="fp16")),
                        ("hierarchical", plan(AUTOSYNC_DDP_ALLREDUCE="hierarchical")),
                        ("powersgd", plan(AUTOSYNC_DDP_COMM_HOOK="powersgd", AUTOSYNC_DDP_POWERSGD_RANK=1))):
            g = sparse_grad(wrap(Sparse(), plan=p), rank)
            e = maxrel(g, g0)
            out.append((e <= FP32_TOL and all(x.is_sparse for x in g),
                        "sparse embedding gradient under the %s hook = plain DDP's (sparse, relative %.3g)"
                        % (name, e)))
    finally:
        del os.environ["AUTOSYNC_DDP_POWERSGD_START_ITER"]


def report_case(rank, world, local, out, steps=6):
    """the step timer: local rank 0 of each node appends its steps after
    warm-up, with the plan's hash, in the format the plugin reads"""
    path = "/tmp/autosync-report-test-%d" % os.getppid()
    os.environ.update({"AUTOSYNC_REPORT": path, "AUTOSYNC_PLAN_HASH": "0123456789abcdef",
                       "LOCAL_RANK": str(rank % local)})
    try:
        model = wrap(dense_model(), plan=plan())
        train(model, rank, steps)
        if model.autosync_timer:
            model.autosync_timer.flush()
        dist.barrier()
        if rank == 0:
            lines = open(path).read().split("\n")[:-1]
            hashes = [ln for ln in lines if ln.startswith("plan_hash ")]
            times = [float(ln) for ln in lines if not ln.startswith("plan_hash ")]
            nodes = world // local
            out.append((len(times) == nodes * (steps - 2) and all(t > 0 for t in times) and
                        hashes == ["plan_hash 0123456789abcdef"] * nodes,
                        "step report: %d steps from %d local rank 0s (%d forward calls, 1 warm-up), "
                        "each with the plan hash" % (len(times), nodes, steps)))
        dist.barrier()
    finally:
        for k in ("AUTOSYNC_REPORT", "AUTOSYNC_PLAN_HASH", "LOCAL_RANK"):
            os.environ.pop(k, None)
        if rank == 0 and os.path.exists(path):
            os.unlink(path)


def mismatch_case(rank, world, local, out, steps=4):
    """nodes that planned differently (here: the last node's plan hash is
    another): every rank runs DDP's defaults and reports no step for the
    plan; with equal hashes the plan is applied"""
    path = "/tmp/autosync-report-mismatch-%d" % os.getppid()
    node = rank // local
    odd = world > 1 and node == (world - 1) // local
    os.environ.update({"AUTOSYNC_REPORT": path, "LOCAL_RANK": str(rank % local),
                       "AUTOSYNC_PLAN_HASH": "fedcba9876543210" if odd else "0123456789abcdef"})
    try:
        p = plan(AUTOSYNC_DDP_BUCKET_CAP_MB="2", AUTOSYNC_DDP_COMM_HOOK="fp16")
        model = wrap(dense_model(), plan=p)
        train(model, rank, steps)
        if model.autosync_timer:
            model.autosync_timer.flush()
        dist.barrier()
        if world > 1:
            out.append((model.autosync_fallback and model.autosync_settings == {} and
                        model.autosync_hook == "none" and model.autosync_timer is None and
                        not os.path.exists(path),
                        "plan hashes differ across nodes: rank %d runs DDP's defaults "
                        "(settings %r), no step report" % (rank, model.autosync_settings)))
        os.environ["AUTOSYNC_PLAN_HASH"] = "0123456789abcdef"
        model = wrap(dense_model(), plan=p)
        out.append((not model.autosync_fallback and model.autosync_settings.get("bucket_cap_mb") == 2.0,
                    "equal plan hashes: rank %d applies the plan" % rank))
        dist.barrier()
    finally:
        for k in ("AUTOSYNC_REPORT", "AUTOSYNC_PLAN_HASH", "LOCAL_RANK"):
            os.environ.pop(k, None)
        if rank == 0 and os.path.exists(path):
            os.unlink(path)


def failopen_cases(rank, world, local, out):
    """what one rank cannot use, no rank uses: a plan hash on some nodes
    only, a plan file missing on one node, a bad AUTOSYNC_DDP_* value on
    one rank -- every rank runs DDP's defaults, nobody raises or hangs;
    with AUTOSYNC_MODE=required every rank raises. A hierarchical
    all-reduce the ranks' layout does not allow, or on a DDP group that is
    not the default one, runs flat on every rank."""
    import tempfile
    node, last = rank // local, (world - 1) // local
    odd = world > 1 and node == last
    good = plan(AUTOSYNC_DDP_BUCKET_CAP_MB="2")
    fd, path = tempfile.mkstemp(prefix="autosync-plan-")
    os.close(fd)
    with open(path, "w") as f:
        f.write("autosync_plan: 2\nstrategy: x\nenv:\n  AUTOSYNC_DDP_BUCKET_CAP_MB: \"2\"\n")
    cases = [
        ("a plan hash on some nodes only", {"AUTOSYNC_PLAN_HASH": "" if odd else "0123456789abcdef"}, good),
        ("the plan file missing on the last node",
         {"AUTOSYNC_PLAN_HASH": "0123456789abcdef", "AUTOSYNC_PLAN": path + ".gone" if odd else path}, None),
        ("AUTOSYNC_DDP_BUCKET_CAP_MB=-1 on the last node", {"AUTOSYNC_DDP_BUCKET_CAP_MB": "-1" if odd else "2"}, good),
    ]
    try:
        for what, env, p in cases:
            os.environ.update(env)
            try:
                model = wrap(dense_model(), plan=p)
                train(model, rank, 2)
                if world > 1:
                    out.append((model.autosync_fallback and model.autosync_settings == {},
                                "%s: rank %d runs DDP's defaults, no exception, no hang" % (what, rank)))
            finally:
                for k in env:
                    os.environ.pop(k, None)
            dist.barrier()
        if world > 1:
            os.environ.update({"AUTOSYNC_PLAN_HASH": "0123456789abcdef", "AUTOSYNC_MODE": "required",
                               "AUTOSYNC_PLAN": path + ".gone" if odd else path})
            try:
                wrap(dense_model())
                raised = ""
            except RuntimeError as e:
                raised = str(e)
            finally:
                for k in ("AUTOSYNC_PLAN_HASH", "AUTOSYNC_MODE", "AUTOSYNC_PLAN"):
                    os.environ.pop(k, None)
            out.append(("cannot use the plan" in raised and "required" in raised,
                        "required, the plan missing on the last node: rank %d raises too (%s)" % (rank, raised)))
            dist.barrier()
            saved = os.environ.get("LOCAL_WORLD_SIZE")
            os.environ["LOCAL_WORLD_SIZE"] = str(local + 1) if odd else str(local)
            try:
                model = wrap(dense_model(), plan=plan(AUTOSYNC_DDP_ALLREDUCE="hierarchical"))
                train(model, rank, 2)
            finally:
                os.environ["LOCAL_WORLD_SIZE"] = saved
            out.append((model.autosync_hook == "none" and "allreduce" not in model.autosync_settings,
                        "hierarchical, the ranks disagreeing on LOCAL_WORLD_SIZE: rank %d runs flat" % rank))
            dist.barrier()
            pg = dist.new_group(list(range(world)))
            model = wrap(dense_model(), plan=plan(AUTOSYNC_DDP_ALLREDUCE="hierarchical"), process_group=pg)
            train(model, rank, 2)
            out.append((model.autosync_hook == "none",
                        "hierarchical on a DDP group that is not the default one: rank %d runs flat" % rank))
            dist.barrier()
    finally:
        if os.path.exists(path):
            os.unlink(path)


def worker(rank, world, local, port, q):
    out = []
    try:
        torch.set_num_threads(1)
        os.environ["LOCAL_WORLD_SIZE"] = str(local)
        for k in list(os.environ):
            if k.startswith("AUTOSYNC_"):
                del os.environ[k]
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=120))
        fp32_cases(rank, out)
        compressed_cases(rank, world, out)
        powersgd_case(rank, out)
        sparse_cases(rank, out)
        report_case(rank, world, local, out)
        mismatch_case(rank, world, local, out)
        failopen_cases(rank, world, local, out)
        dist.barrier()
        dist.destroy_process_group()
    except Exception:
        out.append((False, "rank %d: %s" % (rank, traceback.format_exc().replace("\n", " | "))))
    q.put((rank, out))


def main():
    layouts = [tuple(int(v) for v in a.split(":")) for a in sys.argv[1:]] or [(1, 1), (2, 1), (4, 2), (8, 2), (8, 4)]
    ctx = mp.get_context("fork")
    n, results = 0, []
    for i, (world, local) in enumerate(layouts):
        q = ctx.Queue()
        port = 29400 + (os.getpid() * 7 + i * 13) % 20000
        procs = [ctx.Process(target=worker, args=(r, world, local, port, q)) for r in range(world)]
        for p in procs:
            p.start()
        got = {}
        try:
            for _ in range(world):
                r, out = q.get(timeout=600)
                got[r] = out
        except Exception:
            pass
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()
        nodes = "%d node%s x %d rank%s" % (world // local, "s" * (world // local > 1), local, "s" * (local > 1))
        out = got.get(0, [(False, "rank 0 gave no result")])
        for r in sorted(got):  # another rank's own error (the checks' results are rank 0's)
            out += [o for o in got[r] if r != 0 and o[1].startswith("rank ")]
        results += [(ok, "%s: %s" % (nodes, msg)) for ok, msg in out]
    print("1..%d" % len(results))
    for ok, msg in results:
        n += 1
        if ok is None:
            print("ok %d # SKIP %s" % (n, msg))
        else:
            print("%s %d - %s" % ("ok" if ok else "not ok", n, msg))


if __name__ == "__main__":
    main()
