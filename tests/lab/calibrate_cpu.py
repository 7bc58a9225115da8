#!/usr/bin/python3
"""calibrate_cpu.py - the lab's CPU constants for autosync's cost model.

The lab runs DDP with gloo on CPUs, where what a GPU does for free costs
time: casting buckets to fp16/bf16 and back, and reducing 16-bit data (gloo
converts every element). This measures both with NP processes at once (as
many as the lab runs, so they share the cores as the ranks do) and prints a
calibration file (planner/costs.example.yaml) with

  cast_bw     bytes/s such that the model's 2 x fp32 bytes / cast_bw is the
              measured time of one fp32 -> fp16 -> fp32 round trip, done
              as the DDP compress hook does it (fp16 copy, back in place)
  gamma_half  s per 16-bit byte reduced: the time of an fp16 all-reduce
              beyond half of an fp32 all-reduce of the same elements,
              over the (NP - 1)/NP share each rank reduces. The model
              adds it to the transfer: measured across the lab's shaped
              links it is what the reduction adds where it runs (a slow
              link hides part of it, CPU-bound links little)
  cast_launch s per cast the DDP compress hook (contrib/pytorch, fp16)
              takes beyond the flat all-reduce hook, per bucket, over 2
              (the model charges two casts a bucket): the slope of each
              over the bucket count, as for hier_bucket
  intra_bw    (a comment: a property of the cluster, not a cost) the
              bandwidth the ranks of a node get from each other, every
              node at once: 16 MiB all-reduced in each node's subgroup,
              2 (PPN - 1)/PPN x bytes / time (when 1 < PPN < NP)
  hier_bucket s per bucket the DDP hierarchical hook (contrib/pytorch,
              its own code, PPN ranks per "node") takes beyond the flat
              all-reduce hook: the slope of each over the bucket count
              (one 16 MiB model in 4 and in 48 buckets); its 2 PPN extra
              subgroup collectives cost gloo on shared cores far more than
              a GPU's launch (printed when 1 < PPN < NP)

Microbenchmarks only: nothing here is fitted to a benchmark's results.
usage: calibrate_cpu.py NP [PPN [ELEMENTS]] > calib.yaml   (needs Debian's torch)
       NP processes on this host, over loopback
  or:  calibrate_cpu.py --rank R --world NP --ppn PPN --master ADDR:PORT
       one rank, started on every lab host as tests/lab/ddp_bench.sh does
       (CALIBRATION=lab), across the lab's links; rank 0 prints the file
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "pytorch"))
from autosync import hooks  # noqa: E402


def timed(fn, reps=7):
    out = []
    for _ in range(reps):
        dist.barrier()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


class _Bucket:
    """what the hooks read of DDP's GradBucket"""

    def __init__(self, t):
        self.t = t

    def buffer(self):
        return self.t


def hook_times(world, ppn, total=16 << 20, counts=(4, 48), reps=3):
    """Per-bucket cost of DDP's hooks as contrib/pytorch runs them: one
    model of 'total' fp32 bytes cut into counts[0] and counts[1] buckets,
    every bucket's hook called as DDP calls it (all in flight, then waited
    for), the slope between the two counts, for the flat all-reduce hook,
    the fp16 compress hook and (when 1 < ppn < world) the hierarchical
    hook. Every rank builds the subgroups, in order."""
    cstate = hooks.CompressState(torch.float16)
    fns = {"flat": lambda b: hooks.allreduce_hook(None, b),
           "fp16": lambda b: hooks.compress_hook(cstate, b)}
    t = {}
    if 1 < ppn < world and not world % ppn:
        hstate = hooks.HierarchicalState(hooks.Layout(world, ppn))
        fns["hier"] = lambda b: hooks.hierarchical_hook(hstate, b)
        # the hook's intra-node phases run at what the node's ranks get
        # from each other, every node at once: the cluster's intra link
        x = torch.ones(total // 4)
        t["intra"] = timed(lambda: dist.all_reduce(x, group=hstate.intra), 5)
    for _ in range(reps):
        for nb in counts:
            bufs = [torch.ones(total // 4 // nb) for _ in range(nb)]
            for name, hook in fns.items():
                t.setdefault((name, nb), []).append(
                    timed(lambda: [f.wait() for f in [hook(_Bucket(b)) for b in bufs]], 1))
    out = {name: (statistics.median(t[(name, counts[1])]) - statistics.median(t[(name, counts[0])]))
           / (counts[1] - counts[0]) for name in fns}
    if "intra" in t:
        out["intra_bw"] = 2.0 * (ppn - 1) / ppn * total / t["intra"]
    return out


def measure(ppn, n):
    """this rank's medians: round-trip cast, fp32 and fp16 all-reduce of n
    elements, and the hooks' per-bucket slopes"""
    world = dist.get_world_size()
    x = torch.randn(n)
    # as contrib/pytorch's compress hook does it: a new 16-bit tensor from
    # the bucket, then back into the bucket in place. x.half().float() also
    # allocated a fresh fp32 tensor each time, and on this VM the page
    # faults of that allocation cost 5-8 times the conversion itself.
    # untimed first: glibc maps each fresh 16-bit copy anew (page faults on
    # every byte) until its dynamic mmap threshold has grown past the size,
    # a few casts into a job; timing those made this vary 3-5x between runs
    for _ in range(20):
        x.copy_(x.to(torch.float16))
    cast = timed(lambda: x.copy_(x.to(torch.float16)))
    a32 = torch.ones(n)
    a16 = torch.ones(n, dtype=torch.float16)
    ar32 = timed(lambda: dist.all_reduce(a32))
    ar16 = timed(lambda: dist.all_reduce(a16))
    return cast, ar32, ar16, hook_times(world, ppn) if world > 1 else {}


def worker(rank, world, ppn, n, init, q=None):
    """one rank; rank 0 gets every rank's measure() (and puts it on q)"""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    mine = measure(ppn, n)
    res = [None] * world
    dist.all_gather_object(res, mine)
    dist.destroy_process_group()
    if rank == 0 and q is not None:
        q.put(res)
    return res


def report(res, world, ppn, n, where):
    """the calibration file from every rank's measure(): medians over ranks"""
    med = lambda i: statistics.median(r[i] for r in res)  # noqa: E731
    cast, ar32, ar16 = med(0), med(1), med(2)
    cast_bw = 2 * 4 * n / cast
    reduced = (world - 1) / world * 2 * n if world > 1 else 2 * n
    gamma_half = max(0.0, ar16 - ar32 / 2) / reduced
    print("# calibrate_cpu.py %d %d on %s, %d cores, %s: round-trip cast %.4f s,"
          " all-reduce fp32 %.4f s, fp16 %.4f s (medians over ranks of"
          " medians of 7)" % (world, n, os.uname().nodename,
                              os.cpu_count(), where, cast, ar32, ar16))
    print("autosync_costs: 1")
    print("cast_bw: %.4g" % cast_bw)
    print("gamma_half: %.4g" % gamma_half)
    slope = {k: statistics.median(r[3][k] for r in res) for k in res[0][3]}
    if not slope:
        return
    bw = slope.pop("intra_bw", None)
    if bw:
        # a cluster property, not a cost constant: ddp_bench.sh puts it in
        # the network description (intra=host_bridge:BW)
        print("# intra_bw: %.0fMB/s (16 MiB all-reduced by the %d ranks of each node,"
              " every node at once; ring bus bandwidth)" % (bw / 1e6, ppn))
    print("# per bucket (16 MiB in 4 and 48 buckets), %d ranks per node: %s"
          % (ppn, ", ".join("%s hook %.6f s" % kv for kv in sorted(slope.items()))))
    print("cast_launch: %.4g" % max(0.0, (slope["fp16"] - slope["flat"]) / 2))
    if "hier" in slope:
        print("hier_bucket: %.4g" % max(0.0, slope["hier"] - slope["flat"]))


def main():
    import argparse
    import torch.multiprocessing as mp

    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("np", type=int, nargs="?")
    ap.add_argument("ppn", type=int, nargs="?", default=1)
    ap.add_argument("elements", type=int, nargs="?", default=4 << 20)
    ap.add_argument("--rank", type=int)
    ap.add_argument("--world", type=int)
    ap.add_argument("--ppn", type=int, dest="lab_ppn")
    ap.add_argument("--master")
    a = ap.parse_args()
    n = a.elements
    if a.master:
        if a.rank is None or not a.world or not a.lab_ppn:
            sys.exit("calibrate_cpu.py: --master needs --rank, --world and --ppn")
        res = worker(a.rank, a.world, a.lab_ppn, n, "tcp://" + a.master)
        if a.rank == 0:
            report(res, a.world, a.lab_ppn, n, "across the lab's links")
        return
    if not a.np:
        sys.exit(__doc__)
    port = 29000 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, a.np, a.ppn, n, "tcp://127.0.0.1:%d" % port, q))
             for r in range(a.np)]
    for p in procs:
        p.start()
    res = q.get()
    for p in procs:
        p.join()
    report(res, a.np, a.ppn, n, "loopback")


if __name__ == "__main__":
    main()
