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

Microbenchmarks only: nothing here is fitted to a benchmark's results.
usage: calibrate_cpu.py NP [ELEMENTS] > calib.yaml   (needs Debian's torch)
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist


def timed(fn, reps=7):
    out = []
    for _ in range(reps):
        dist.barrier()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def worker(rank, world, n, port, q):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world)
    x = torch.randn(n)
    # as contrib/pytorch's compress hook does it: a new 16-bit tensor from
    # the bucket, then back into the bucket in place. x.half().float() also
    # allocated a fresh fp32 tensor each time, and on this VM the page
    # faults of that allocation cost 5-8 times the conversion itself.
    cast = timed(lambda: x.copy_(x.to(torch.float16)))
    a32 = torch.ones(n)
    a16 = torch.ones(n, dtype=torch.float16)
    ar32 = timed(lambda: dist.all_reduce(a32))
    ar16 = timed(lambda: dist.all_reduce(a16))
    q.put((rank, cast, ar32, ar16))
    dist.destroy_process_group()


def main():
    import torch.multiprocessing as mp

    if len(sys.argv) < 2:
        sys.exit(__doc__)
    world = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 4 << 20
    port = 29000 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, n, port, q))
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


if __name__ == "__main__":
    main()
