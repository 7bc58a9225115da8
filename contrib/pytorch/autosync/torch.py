"""autosync.torch - apply an autosync plan to PyTorch DistributedDataParallel.

    from autosync.torch import wrap
    model = wrap(model, device_ids=[local_rank])   # instead of DDP(model, ...)

The plan comes from AUTOSYNC_PLAN (set by the SPANK plugin or `autosync
launch`) and the AUTOSYNC_DDP_* variables (autosync.plan has the table).
wrap() applies:
  * the bucket cap                DDP(bucket_cap_mb=...)
  * the first bucket              no public knob in torch 1.x/2.x: the private
                                  dist._DEFAULT_FIRST_BUCKET_BYTES is set while
                                  DDP is constructed and restored at once, only
                                  on the torch versions checked (FIRST_BUCKET_TORCH);
                                  elsewhere it is left alone with a warning
  * fp16 / bf16 compression       autosync.hooks.compress_hook
  * PowerSGD (the plan's rank)    torch's powerSGD_hook, error feedback on
  * hierarchical all-reduce       autosync.hooks.hierarchical_hook over
                                  process subgroups (node layout: LOCAL_WORLD_SIZE,
                                  else the ranks' host names)
  * sparse gradients              DDP's own sparse all-reduce (every hook
                                  passes a sparse bucket through unchanged)
Without a plan and without the variables, wrap() is DDP with its defaults.
NCCL variables (NCCL_ALGO, the tuner plugin) are set by autosync in the
environment; this module does not touch NCCL.

Step times: when AUTOSYNC_REPORT is set (the SPANK plugin sets it), wrap()
also times the steps -- the interval between one forward call and the next
-- and appends them to that file with the plan's hash ("plan_hash HEX16",
then one step time in seconds per line; autosync-feedback(5)), so that a
plain DDP job leaves a feedback record with both the prediction and the
measurement. Like the NCCL profiler plugin: only local rank 0 writes
(AUTOSYNC_REPORT_ALL_RANKS=1: every rank), the first AUTOSYNC_REPORT_SKIP (1)
intervals are warm-up, and it writes every AUTOSYNC_REPORT_EVERY (100) steps
and at exit, in one write under flock. On the NCCL backend the profiler
plugin is the measurement and the adapter stays quiet, unless
AUTOSYNC_ADAPTER_REPORT=1 (=0: never).
"""
import atexit
import fcntl
import os
import sys
import time
import unicodedata

from autosync.plan import MiB, compare, load_plan, settings  # noqa: F401

__all__ = ["wrap", "load_plan", "settings", "compare", "check_consistency", "first_bucket_supported"]

# torch versions whose DDP reads dist._DEFAULT_FIRST_BUCKET_BYTES when it is
# constructed (checked in torch/nn/parallel/distributed.py of each)
FIRST_BUCKET_TORCH = ((1, 8), (2, 99))


def _version(v):
    """(major, minor) of a version string such as '1.13.0a0+git'."""
    out = []
    for part in v.split("+")[0].split(".")[:2]:
        digits = ""
        for c in part:
            if not c.isdigit():
                break
            digits += c
        out.append(int(digits or 0))
    return tuple(out)


def first_bucket_supported(torch_version=None):
    """1 when this torch's DDP takes its first bucket size from the private
    dist._DEFAULT_FIRST_BUCKET_BYTES (no public knob exists)."""
    import torch
    import torch.distributed as dist
    v = _version(torch_version or torch.__version__)
    lo, hi = FIRST_BUCKET_TORCH
    return lo <= v <= hi and hasattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES")


def _gather(group=None):
    import socket
    import torch.distributed as dist
    mine = (socket.gethostname(), os.environ.get("AUTOSYNC_PLAN_HASH", ""),
            os.environ.get("AUTOSYNC_TOPO_HASH", ""))
    allr = [None] * dist.get_world_size(group)
    dist.all_gather_object(allr, mine, group=group)
    return allr


def _quote(text):
    """text for a terminal: control and format characters (C0, C1, DEL,
    bidi overrides and isolates, zero-width ones) as \\xNN or \\u{XXXX},
    as the C side's asi_quote() does"""
    out = []
    for ch in str(text):
        if unicodedata.category(ch) in ("Cc", "Cf"):
            o = ord(ch)
            out.append("\\x%02x" % o if o < 0x100 else "\\u{%04x}" % o)
        else:
            out.append(ch)
    return "".join(out)


def _consistency(group=None):
    """(warnings, 1 when the ranks' plan hashes differ): the same on every
    rank, from the same gathered records."""
    import torch.distributed as dist
    allr = _gather(group)
    msgs = compare(allr)
    if dist.get_rank(group) == 0:
        for m in msgs:
            sys.stderr.write(_quote(m) + "\n")
    return msgs, len(set(r[1] for r in allr)) > 1


def check_consistency(group=None):
    """Gather every rank's AUTOSYNC_PLAN_HASH and AUTOSYNC_TOPO_HASH (set by
    the SPANK plugin or 'autosync launch') and, on rank 0, print a warning
    for each node that planned differently or has different hardware.
    Returns the warnings (on every rank)."""
    return _consistency(group)[0]


def _warn(msg):
    import torch.distributed as dist
    if not dist.is_initialized() or dist.get_rank() == 0:
        sys.stderr.write("autosync: " + _quote(msg) + "\n")


def _construct(module, s, kw):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    if "first_bucket_bytes" not in s:
        return DDP(module, **kw)
    if not first_bucket_supported():
        import torch
        _warn("torch %s: the first bucket size is not applied (no public knob; the private one is "
              "used only on torch %s..%s)" % (torch.__version__, FIRST_BUCKET_TORCH[0], FIRST_BUCKET_TORCH[1]))
        return DDP(module, **kw)
    saved = dist._DEFAULT_FIRST_BUCKET_BYTES
    try:
        dist._DEFAULT_FIRST_BUCKET_BYTES = s["first_bucket_bytes"]
        return DDP(module, **kw)
    finally:
        dist._DEFAULT_FIRST_BUCKET_BYTES = saved


def _register(model, s, group, layout):
    import torch
    import torch.distributed as dist
    from autosync import hooks
    hook = s.get("hook", "none")
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(hook)
    if dtype is torch.bfloat16 and dist.get_backend(group) == "gloo" and _version(torch.__version__) < (2, 0):
        _warn("gloo in torch %s cannot all-reduce bfloat16: bf16 compression not applied" % torch.__version__)
        dtype, hook = None, "none"
    if s.get("allreduce") == "hierarchical":
        state = hooks.HierarchicalState(layout or hooks.Layout.detect(group), dtype)
        model.register_comm_hook(state, hooks.hierarchical_hook)
        return "hierarchical" + ("+" + hook if dtype is not None else "")
    if hook == "powersgd":
        state = hooks.powersgd_state(s["powersgd_rank"], s.get("powersgd_start_iter"), group)
        model.register_comm_hook(state, hooks.powersgd_hook)
    elif dtype is not None:
        model.register_comm_hook(hooks.CompressState(dtype, group), hooks.compress_hook)
    return hook


def _local_rank():
    for k in ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMIX_LOCAL_RANK"):
        v = os.environ.get(k, "")
        if v.isdigit():
            return int(v)
    return 0


def _training(module):
    """a forward that is a training step: the module in training mode and
    autograd on (torch, when loaded, says; evaluation runs in no_grad)"""
    if not getattr(module, "training", True):
        return False
    torch = sys.modules.get("torch")
    return torch is None or not hasattr(torch, "is_grad_enabled") or torch.is_grad_enabled()


class StepTimer:
    """The interval between successive training forwards of a model,
    written to a report file (the format site/report.c reads). Evaluation
    forwards are not steps, and the interval across an evaluation loop is
    not one either: timing starts again at the next training forward."""

    def __init__(self, path, plan_hash="", skip=1, every=100):
        self.path, self.plan_hash, self.skip, self.every = path, plan_hash, skip, every
        self.last, self.seen, self.pending = None, 0, []

    def __call__(self, module, inputs):  # a forward pre-hook
        now = time.perf_counter()
        if not _training(module):
            self.last = None
            return
        if self.last is not None:
            self.seen += 1
            if self.seen > self.skip:
                self.pending.append(now - self.last)
                if len(self.pending) >= self.every:
                    self.flush()
        self.last = now

    def flush(self):
        if not self.pending:
            return
        text = ("plan_hash %s\n" % self.plan_hash if self.plan_hash else "") + \
            "".join("%.9g\n" % t for t in self.pending)
        self.pending = []
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                os.write(fd, text.encode())
            finally:
                os.close(fd)
        except OSError as e:
            _warn("cannot write the step report %s: %s" % (self.path, e))


def _plan_hash(s):
    h = os.environ.get("AUTOSYNC_PLAN_HASH", "") or s.get("hash", "")
    return h if len(h) == 16 and all(c in "0123456789abcdef" for c in h) else ""


def _attach_timer(model, s, group):
    """Time the steps for AUTOSYNC_REPORT (see the module's doc)."""
    import torch.distributed as dist
    path = os.environ.get("AUTOSYNC_REPORT", "")
    want = os.environ.get("AUTOSYNC_ADAPTER_REPORT", "")
    if not path or want == "0":
        return None
    if want != "1" and dist.is_initialized() and dist.get_backend(group) == "nccl":
        return None  # the NCCL profiler plugin measures GPU jobs
    if _local_rank() != 0 and os.environ.get("AUTOSYNC_REPORT_ALL_RANKS") != "1":
        return None
    skip = os.environ.get("AUTOSYNC_REPORT_SKIP", "1")
    every = os.environ.get("AUTOSYNC_REPORT_EVERY", "100")
    t = StepTimer(path, _plan_hash(s), int(skip) if skip.isdigit() else 1,
                  max(1, int(every)) if every.isdigit() else 100)
    model.register_forward_pre_hook(t)
    atexit.register(t.flush)
    return t


def wrap(module, plan=None, layout=None, **ddp_kwargs):
    """DistributedDataParallel(module, **ddp_kwargs) with the plan's bucket
    cap, first bucket and communication hook. Explicit ddp_kwargs win over
    the plan's bucket_cap_mb. 'layout' (autosync.hooks.Layout) overrides the
    node layout a hierarchical all-reduce detects. The settings applied are
    in model.autosync_settings, the hook registered in model.autosync_hook."""
    import torch.distributed as dist

    s = settings(plan if plan is not None else load_plan())
    differ = False
    if dist.is_initialized() and os.environ.get("AUTOSYNC_PLAN_HASH"):
        differ = _consistency(ddp_kwargs.get("process_group"))[1]
    if differ:
        # nodes that planned differently (another simulator file, another
        # topology) would bucket and hook differently: every rank falls
        # back to DDP's defaults together, and measures nothing for a plan
        _warn("the nodes planned differently (plan hashes above): every rank runs "
              "DDP's defaults instead of the plan")
        s = settings({}, environ={})
    kw = dict(ddp_kwargs)
    if "bucket_cap_mb" in s and "bucket_cap_mb" not in kw:
        kw["bucket_cap_mb"] = s["bucket_cap_mb"]
    model = _construct(module, s, kw)
    model.autosync_hook = _register(model, s, kw.get("process_group"), layout)
    model.autosync_timer = None if differ else _attach_timer(model, s, kw.get("process_group"))
    model.autosync_settings = s
    model.autosync_fallback = differ  # the plan was not applied
    model._autosync_settings = s  # the name older callers used
    return model
