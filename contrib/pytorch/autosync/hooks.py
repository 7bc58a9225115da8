"""autosync.hooks - DDP communication hooks for the strategies an autosync
plan may choose, built only on DDP's public comm-hook API
(DistributedDataParallel.register_comm_hook, GradBucket, torch.futures) and
torch.distributed's public collectives.

  compress_hook      fp16/bf16: cast, all-reduce, cast back (torch's own
                     fp16/bf16 hooks do the same but fail on a sparse bucket)
  powersgd           torch's PowerSGD hook (PowerSGDState: the plan's rank,
                     error feedback and warm start on)
  hierarchical_hook  2-level all-reduce over process subgroups: reduce each
                     1/g shard of the bucket to one rank of the node, all-reduce
                     that shard across nodes among the ranks of the same local
                     rank (one "rail" per local rank, so every NIC carries
                     1/g of the bytes), broadcast the shards back inside the
                     node. Optionally in fp16/bf16. CPU (gloo) buckets
                     go through one worker thread in the order they come,
                     so the backward pass goes on while they are reduced.

Every hook hands a sparse bucket (nn.Embedding(sparse=True); DDP gives such a
parameter a bucket of its own) to the plain sparse all-reduce, which is what
DDP does without a hook: the rows of every rank gathered and summed, divided
by the world size. Node layout: Layout.detect() (LOCAL_WORLD_SIZE, else the
host names of the ranks).
"""
import os
import queue
import socket
import threading
import weakref

import torch
import torch.distributed as dist

__all__ = ["Layout", "allreduce_hook", "compress_hook", "hierarchical_hook", "HierarchicalState",
           "powersgd_state", "powersgd_hook"]


def _div_allreduce(group, tensor):
    """Sum 'tensor' over 'group' and divide by its size (the average DDP
    wants), as a future holding the result."""
    n = dist.get_world_size(group)
    tensor.div_(n)
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(lambda f: f.value()[0])


def allreduce_hook(group, bucket):
    """What DDP does without a hook, dense or sparse."""
    return _div_allreduce(group, bucket.buffer())


def _sparse_first(hook):
    def wrapped(state, bucket):
        if bucket.buffer().is_sparse:
            if hasattr(state, "maybe_increase_iter"):  # PowerSGD counts steps at the last bucket
                state.maybe_increase_iter(bucket)
            group = state.process_group if hasattr(state, "process_group") else state.group
            return _div_allreduce(group, bucket.buffer())
        return hook(state, bucket)
    wrapped.__name__ = getattr(hook, "__name__", "hook")
    return wrapped


class CompressState:
    def __init__(self, dtype, group=None):
        self.dtype = dtype
        self.group = group


def _compress_hook(state, bucket):
    buf = bucket.buffer()
    small = buf.to(state.dtype)

    def back(fut):
        buf.copy_(fut.value())
        return buf
    return _div_allreduce(state.group, small).then(back)


compress_hook = _sparse_first(_compress_hook)


class Layout:
    """Which ranks share a node: 'local_size' ranks per node, node-contiguous
    (rank = node * local_size + local_rank), as torchrun and Slurm's block
    distribution place them."""

    def __init__(self, world, local_size):
        if local_size < 1 or world % local_size:
            raise ValueError("autosync: %d ranks cannot be %d per node" % (world, local_size))
        self.world, self.g, self.nodes = world, local_size, world // local_size

    @classmethod
    def detect(cls, group=None):
        """LOCAL_WORLD_SIZE when set (torchrun sets it; a test may set it to
        fake several nodes on one machine), else the ranks' host names, which
        must be node-contiguous with the same count on every node."""
        world = dist.get_world_size(group)
        if os.environ.get("LOCAL_WORLD_SIZE"):
            return cls(world, int(os.environ["LOCAL_WORLD_SIZE"]))
        hosts = [None] * world
        dist.all_gather_object(hosts, socket.gethostname(), group=group)
        g = hosts.count(hosts[0])
        for r in range(world):
            if hosts[r] != hosts[r - r % g] or hosts.count(hosts[r]) != g:
                raise ValueError("autosync: ranks are not %d per node in node order: %r" % (g, hosts))
        return cls(world, g)

    def node(self, rank):
        return rank // self.g

    def intra(self, node):
        return list(range(node * self.g, (node + 1) * self.g))

    def rail(self, local):
        return list(range(local, self.world, self.g))


class HierarchicalState:
    """The subgroups of a hierarchical all-reduce. Every rank must create it
    (dist.new_group is collective: all ranks make every group, in order)."""

    def __init__(self, layout, dtype=None):
        self.layout, self.dtype, self.group = layout, dtype, None
        self._queue = None  # CPU buckets: one worker thread, started on first use
        rank = dist.get_rank()
        self.node, self.local = layout.node(rank), rank % layout.g
        self.intra = self.rail = None
        for n in range(layout.nodes):
            grp = dist.new_group(layout.intra(n))
            if n == self.node:
                self.intra = grp
        for l in range(layout.g):
            grp = dist.new_group(layout.rail(l))
            if l == self.local:
                self.rail = grp


def _hierarchical_phases(state, buf):
    """All three phases of one bucket, each waited for; returns the
    futures of the broadcasts (the last phase) and the reduced tensor."""
    lay = state.layout
    t = buf.to(state.dtype) if state.dtype is not None else buf
    t.div_(lay.world)
    shards = list(torch.tensor_split(t, lay.g))  # contiguous views of t
    owners = lay.intra(state.node)  # shard i belongs to local rank i
    if lay.g > 1:
        for w in [dist.reduce(shards[i], dst=owners[i], group=state.intra, async_op=True) for i in range(lay.g)]:
            w.wait()
    if lay.nodes > 1:
        dist.all_reduce(shards[state.local], group=state.rail, async_op=True).wait()
    futs = []
    if lay.g > 1:
        futs = [dist.broadcast(shards[i], src=owners[i], group=state.intra, async_op=True).get_future()
                for i in range(lay.g)]
    return futs, t


def _hierarchical_bucket(state, buf):
    futs, t = _hierarchical_phases(state, buf)
    for f in futs:
        f.wait()
    if t is not buf:
        buf.copy_(t)
    return buf


def _hierarchical_worker(ref, q):
    """Holds the state weakly: when DDP and its hook state go, the
    finalizer's None ends the thread."""
    while True:
        item = q.get()
        if item is None:
            return
        buf, fut = item
        state = ref()
        try:
            if state is None:
                raise RuntimeError("autosync: the hierarchical hook's state is gone")
            fut.set_result(_hierarchical_bucket(state, buf))
        except Exception as e:  # noqa: BLE001 - DDP raises it from its wait
            fut.set_exception(e)
        del state


def _hierarchical_hook(state, bucket):
    buf = bucket.buffer()
    if not buf.is_cuda:
        # gloo's wait() blocks the calling thread: waiting here would stop
        # the backward pass until the bucket's reduce and all-reduce are
        # done (no overlap, and no two buckets in flight). One worker
        # thread runs the buckets in the order they come, so every rank
        # issues the subgroup collectives in the same order.
        if state._queue is None:
            state._queue = queue.SimpleQueue()
            weakref.finalize(state, state._queue.put, None)
            threading.Thread(target=_hierarchical_worker, args=(weakref.ref(state), state._queue),
                             name="autosync-hierarchical", daemon=True).start()
        fut = torch.futures.Future()
        state._queue.put((buf, fut))
        return fut
    # NCCL: wait() makes the current stream wait, the CPU goes on
    futs, t = _hierarchical_phases(state, buf)
    if futs:
        done = torch.futures.collect_all(futs)
    else:
        done = torch.futures.Future()
        done.set_result(None)

    def finish(_):
        if t is not buf:
            buf.copy_(t)
        return buf
    return done.then(finish)


hierarchical_hook = _sparse_first(_hierarchical_hook)


def powersgd_state(rank, start_iter=None, group=None):
    """torch's PowerSGDState with the plan's rank, error feedback and warm
    start (torch's defaults for both); plain all-reduce before step
    'start_iter' (torch's default 1000 when None)."""
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as P
    kw = {"matrix_approximation_rank": rank, "use_error_feedback": True, "warm_start": True,
          "random_seed": 0}
    if start_iter is not None:
        kw["start_powerSGD_iter"] = start_iter
    return P.PowerSGDState(process_group=group, **kw)


def _powersgd(state, bucket):
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as P
    return P.powerSGD_hook(state, bucket)


powersgd_hook = _sparse_first(_powersgd)
