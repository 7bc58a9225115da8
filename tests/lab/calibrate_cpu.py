#!/usr/bin/python3
"""calibrate_cpu.py - the lab's CPU constants for autosync's cost model.

The lab runs DDP with gloo on CPUs, where what a GPU does for free costs
time: casting buckets to fp16/bf16 and back, and reducing 16-bit data (gloo
converts every element). This measures both on this host with NP processes
at once (as many as the lab puts on it, so they share the cores as the
ranks do) and prints a calibration file (planner/costs.example.yaml) with

  cast_bw     bytes/s such that the model's 2 x fp32 bytes / cast_bw is the
              measured time of one fp32 -> fp16 -> fp32 round trip, done
              as the DDP compress hook does it (fp16 copy, back in place)
  gamma_half  s per 16-bit byte reduced: the time of an fp16 all-reduce
              beyond half of an fp32 all-reduce of the same elements,
              over the (NP - 1)/NP share each rank reduces
  hier_bucket s per bucket the DDP hierarchical hook (contrib/pytorch,
              its own code, PPN ranks per "node") takes beyond the flat
              all-reduce hook: the slope of each over the bucket count
              (one 16 MiB model in 4 and in 48 buckets); its 2 PPN extra
              subgroup collectives cost gloo on shared cores far more than
              a GPU's launch (printed when 1 < PPN < NP)

Microbenchmarks only: nothing here is fitted to a benchmark's results.
usage: calibrate_cpu.py NP [PPN [ELEMENTS]] > calib.yaml   (needs Debian's torch)
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
    """Per-bucket cost of the flat all-reduce hook and of the hierarchical
    hook: one model of 'total' fp32 bytes cut into counts[0] and counts[1]
    buckets, every bucket's hook called as DDP calls it (all in flight,
    then waited for), the slope between the two counts. Every rank builds
    the subgroups, in order."""
    if not 1 < ppn < world or world % ppn:
        return None, None
    state = hooks.HierarchicalState(hooks.Layout(world, ppn))
    flat = lambda b: hooks.allreduce_hook(None, b)  # noqa: E731
    hier = lambda b: hooks.hierarchical_hook(state, b)  # noqa: E731
    t = {}
    for _ in range(reps):
        for nb in counts:
            bufs = [torch.ones(total // 4 // nb) for _ in range(nb)]
            for name, hook in (("flat", flat), ("hier", hier)):
                t.setdefault((name, nb), []).append(
                    timed(lambda: [f.wait() for f in [hook(_Bucket(b)) for b in bufs]], 1))
    slope = {name: (statistics.median(t[(name, counts[1])]) - statistics.median(t[(name, counts[0])]))
             / (counts[1] - counts[0]) for name in ("flat", "hier")}
    return slope["flat"], slope["hier"]


def worker(rank, world, ppn, n, port, q):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
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
    flat, hier = hook_times(world, ppn)
    q.put((rank, cast, ar32, ar16, flat, hier))
    dist.destroy_process_group()


def main():
    import torch.multiprocessing as mp

    if len(sys.argv) < 2:
        sys.exit(__doc__)
    world = int(sys.argv[1])
    ppn = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 4 << 20
    port = 29000 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, ppn, n, port, q))
             for r in range(world)]
    for p in procs:
        p.start()
    res = sorted(q.get() for _ in procs)
    for p in procs:
        p.join()
    cast = statistics.median(r[1] for r in res)
    ar32 = statistics.median(r[2] for r in res)
    ar16 = statistics.median(r[3] for r in res)
    cast_bw = 2 * 4 * n / cast
    reduced = (world - 1) / world * 2 * n if world > 1 else 2 * n
    gamma_half = max(0.0, ar16 - ar32 / 2) / reduced
    print("# calibrate_cpu.py %d %d on %s, %d cores: round-trip cast %.4f s,"
          " all-reduce fp32 %.4f s, fp16 %.4f s (medians over ranks of"
          " medians of 7)" % (world, n, os.uname().nodename,
                              os.cpu_count(), cast, ar32, ar16))
    print("autosync_costs: 1")
    print("cast_bw: %.4g" % cast_bw)
    print("gamma_half: %.4g" % gamma_half)
    if res[0][4] is not None:
        flat = statistics.median(r[4] for r in res)
        hier = statistics.median(r[5] for r in res)
        print("# per bucket (16 MiB in 4 and 48 buckets), %d ranks per node:"
              " flat all-reduce hook %.6f s, hierarchical hook %.6f s" % (ppn, flat, hier))
        print("hier_bucket: %.4g" % max(0.0, hier - flat))


if __name__ == "__main__":
    main()
