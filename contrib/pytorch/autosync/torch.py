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
                                  process subgroups of the default group (node
                                  layout agreed from every rank's LOCAL_WORLD_SIZE,
                                  else host names; flat where neither holds)
  * sparse gradients              DDP's own sparse all-reduce (every hook
                                  passes a sparse bucket through unchanged)
Without a plan and without the variables, wrap() is DDP with its defaults.
A plan this rank or another cannot use is a warning and DDP's defaults on
every rank (wrap() gathers once and decides alike everywhere), unless
AUTOSYNC_MODE=required: then every rank raises.
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


DDP_DEFAULT_CAP_MB = 25.0


def _cap_sets_first_bucket():
    """1 when this torch's DDP takes an explicit bucket cap as its first
    bucket too (torch 2: the private first-bucket size is read only while
    the cap is DDP's own default); 1 as well when its source cannot be read"""
    import inspect
    from torch.nn.parallel import DistributedDataParallel as DDP
    try:
        return "bucket_bytes_cap_default" in inspect.getsource(DDP)
    except (OSError, TypeError):
        return True


def _gather(group=None, extra=()):
    """every rank's (host, plan hash, topology hash, *extra), in rank order"""
    import socket
    import torch.distributed as dist
    mine = (socket.gethostname(), os.environ.get("AUTOSYNC_PLAN_HASH", ""),
            os.environ.get("AUTOSYNC_TOPO_HASH", "")) + tuple(extra)
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
    if "bucket_cap_mb" in kw and _cap_sets_first_bucket():
        import torch
        _warn("torch %s: DDP makes the first bucket as large as an explicit bucket cap; the plan's "
              "first bucket (%d bytes) is not applied" % (torch.__version__, s["first_bucket_bytes"]))
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


def _local_settings(plan):
    """(settings, why not): this rank's reading of the plan, or {} and the
    reason it cannot be used (a missing, unreadable or bad plan file, a bad
    AUTOSYNC_DDP_* value)"""
    try:
        return settings(plan if plan is not None else load_plan()), ""
    except Exception as e:  # noqa: BLE001 -- any planning problem fails open
        text = str(e)
        text = text[len("autosync: "):] if text.startswith("autosync: ") else text
        return {}, _quote("%s%s" % ("" if isinstance(e, ValueError) else type(e).__name__ + ": ", text))


def _required():
    return os.environ.get("AUTOSYNC_MODE", "") == "required"


def _layout_of(allr):
    """The node layout from every rank's (..., LOCAL_WORLD_SIZE) and host:
    a LOCAL_WORLD_SIZE all ranks agree on (a test may fake nodes with it),
    else the hosts, node-contiguous with as many ranks on each; None when
    neither holds. The same list on every rank, so the same answer."""
    from autosync import hooks
    world = len(allr)
    sizes = set(r[5] for r in allr)
    if sizes != {""}:
        g = sizes.pop() if len(sizes) == 1 else ""
        if not g.isdigit() or int(g) < 1 or world % int(g):
            return None
        return hooks.Layout(world, int(g))
    hosts = [r[0] for r in allr]
    g = hosts.count(hosts[0])
    for r in range(world):
        if hosts[r] != hosts[r - r % g] or hosts.count(hosts[r]) != g:
            return None
    return hooks.Layout(world, g)


def _agree(s, why, group, device_ids, layout):
    """One gather over the DDP group, then the same decision on every rank:
    (settings, layout, fell back). Every rank falls back to DDP's defaults
    together when the nodes planned differently, read the plan differently
    or one could not read it; a hierarchical all-reduce the ranks' layout
    does not allow runs flat on every rank."""
    import torch.distributed as dist
    sig = repr(sorted(s.items()))
    extra = (sig, why, os.environ.get("LOCAL_WORLD_SIZE", ""), os.environ.get("AUTOSYNC_MODE", ""))
    if dist.get_backend(group) == "nccl" and device_ids:
        import torch  # the gather's tensors go to the DDP device, not cuda:0
        with torch.cuda.device(device_ids[0]):
            allr = _gather(group, extra)
    else:
        allr = _gather(group, extra)
    me = dist.get_rank(group)
    for m in compare([r[:3] for r in allr]):
        if me == 0:
            sys.stderr.write(_quote(m) + "\n")
    bad = [(i, r[4]) for i, r in enumerate(allr) if r[4]]
    if bad and any(r[6] == "required" for r in allr):
        raise RuntimeError("autosync: rank %d cannot use the plan (%s) and the job asked for "
                           "--autosync=required" % bad[0])
    if bad:
        _warn("rank %d cannot use the plan (%s): every rank runs DDP's defaults" % bad[0])
        return {}, None, True
    if len(set(r[1] for r in allr)) > 1 or len(set(r[3] for r in allr)) > 1:
        # nodes that planned differently (another simulator file, another
        # topology) would bucket and hook differently
        _warn("the nodes planned differently (plan hashes above): every rank runs "
              "DDP's defaults instead of the plan")
        return {}, None, True
    if s.get("allreduce") == "hierarchical" and layout is None:
        if group is not None and group != dist.group.WORLD:
            why = "it runs on the default process group only, not the DDP group given"
        else:
            layout = _layout_of(allr)
            why = "the ranks are not as many on every node in node order (hosts %s, LOCAL_WORLD_SIZE %s)" % (
                ",".join(sorted(set(r[0] for r in allr))), ",".join(sorted(set(r[5] or "-" for r in allr))))
        if layout is None:
            _warn("hierarchical all-reduce not applied (%s): flat on every rank" % _quote(why))
            s = dict(s)
            del s["allreduce"]
    return s, layout, False


def _cap_kwargs(s, kw):
    """The plan's bucket cap into DDP's arguments. torch 2's DDP makes the
    first bucket as large as the cap whenever a cap is passed: a cap equal
    to DDP's default (25 MiB) is then left out, so that its first bucket
    stays the plan's (a plan of DDP's defaults stays DDP's defaults)."""
    if "bucket_cap_mb" not in s or "bucket_cap_mb" in kw:
        return
    if s["bucket_cap_mb"] == DDP_DEFAULT_CAP_MB and _cap_sets_first_bucket():
        return
    kw["bucket_cap_mb"] = s["bucket_cap_mb"]


def wrap(module, plan=None, layout=None, **ddp_kwargs):
    """DistributedDataParallel(module, **ddp_kwargs) with the plan's bucket
    cap, first bucket and communication hook. Explicit ddp_kwargs win over
    the plan's bucket_cap_mb. 'layout' (autosync.hooks.Layout) overrides the
    node layout a hierarchical all-reduce detects. The settings applied are
    in model.autosync_settings, the hook registered in model.autosync_hook.

    A plan that cannot be used (missing, unreadable, a bad value) is a
    one-line warning and DDP's defaults, unless AUTOSYNC_MODE=required.
    When torch.distributed is initialized, the ranks first agree (one
    gather): all apply the same plan, or all run DDP's defaults."""
    import torch.distributed as dist

    s, why = _local_settings(plan)
    differ = False
    group = ddp_kwargs.get("process_group")
    if dist.is_initialized():
        s, layout, differ = _agree(s, why, group, ddp_kwargs.get("device_ids"), layout)
    elif why:
        if _required():
            raise RuntimeError("autosync: %s (the job asked for --autosync=required)" % why)
        _warn("%s: DDP's defaults" % why)
        differ = True
    kw = dict(ddp_kwargs)
    _cap_kwargs(s, kw)
    model = _construct(module, s, kw)
    model.autosync_hook = _register(model, s, group, layout)
    model.autosync_timer = None if differ else _attach_timer(model, s, group)
    model.autosync_settings = s
    model.autosync_fallback = differ  # the plan was not applied
    model._autosync_settings = s  # the name older callers used
    return model
