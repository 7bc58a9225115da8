"""autosync_ddp - apply an autosync plan to PyTorch DistributedDataParallel.

The autosync SPANK plugin (or `autosync plan --framework pytorch-ddp -o FILE`)
produces a plan; in the job, the plugin exports AUTOSYNC_PLAN=<plan file> and
the variables AUTOSYNC_DDP_BUCKET_CAP_MB, AUTOSYNC_DDP_FIRST_BUCKET_MB and
AUTOSYNC_DDP_COMM_HOOK (none|fp16|bf16). Use:

    import autosync_ddp
    model = autosync_ddp.wrap(model, device_ids=[local_rank])   # instead of DDP(...)

What is applied (a DDP job can express only these; a plan made for another
framework is refused unless it carries a bucket cap):
  * bucket_cap_mb        <- AUTOSYNC_DDP_BUCKET_CAP_MB, else job.bucket_cap_bytes
  * first bucket         <- AUTOSYNC_DDP_FIRST_BUCKET_MB, else job.first_bucket_bytes
                            (torch 1.x-2.x: dist._DEFAULT_FIRST_BUCKET_BYTES, set
                            only while DDP is constructed, then restored)
  * communication hook   <- AUTOSYNC_DDP_COMM_HOOK, else job.compression
                            (fp16_compress_hook / bf16_compress_hook)
Precedence: the process environment, then the plan's env section, then its
job section. Without AUTOSYNC_PLAN and without the variables, wrap() is plain
DDP with its defaults. NCCL_ALGO (when the plan sets one) is exported by the
plugin itself; the adapter does not touch NCCL.
"""
import os
import sys

__all__ = ["load_plan", "settings", "wrap"]

MiB = 1024 * 1024


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f",
            "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\",
            "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}


def _scalar(v):
    """A plain or double-quoted scalar of one line, as autosync writes them
    (libyaml's emitter: YAML escapes in double quotes)."""
    v = v.strip()
    if not (len(v) >= 2 and v[0] == v[-1] == '"'):
        return v
    out, i, s = [], 0, v[1:-1]
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 == len(s):
            out.append(c)
            i += 1
            continue
        e = s[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(e)
        if width:
            out.append(chr(int(s[i + 2:i + 2 + width], 16)))
            i += 2 + width
        else:
            out.append(_ESCAPES.get(e, e))
            i += 2
    return "".join(out)


def _once(seen, key, path, line):
    """A repeated key is an error, as in autosync's own reader."""
    if key in seen:
        raise ValueError("%s:%d: key '%s' given twice (first on line %d)" % (path, line, key[1], seen[key]))
    seen[key] = line


def _loader(yaml, path):
    """PyYAML's safe loader, refusing a key given twice in any mapping."""
    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = {}
            for k, _ in node.value:
                key = self.construct_object(k, deep=deep)
                try:
                    _once(seen, ("", key), path, k.start_mark.line + 1)
                except TypeError:
                    pass  # an unhashable key: PyYAML says so itself
            return super().construct_mapping(node, deep=deep)
    return Loader


def load_plan(path=None):
    """Read the job and env sections of a plan file (docs/plan-format.md).
    Returns {"job": {...}, "env": {...}, "strategy": str, "framework": str}
    or None when there is no plan (path None and AUTOSYNC_PLAN unset)."""
    path = path or os.environ.get("AUTOSYNC_PLAN")
    if not path:
        return None
    with open(path) as f:
        text = f.read()
    try:  # PyYAML when present
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        d = yaml.load(text, Loader=_loader(yaml, path))
        return {"job": d.get("job") or {}, "env": {k: str(v) for k, v in (d.get("env") or {}).items()},
                "strategy": d.get("strategy", ""), "framework": (d.get("inputs") or {}).get("framework", "")}
    out = {"job": {}, "env": {}, "strategy": "", "framework": ""}
    section = None
    seen = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith("-"):
            continue  # an item of a top-level list (libyaml does not indent them)
        if not line.startswith(" "):
            key, _, val = line.partition(":")
            section = key.strip()
            _once(seen, ("", section), path, n)
            if section == "strategy":
                out["strategy"] = _scalar(val)
            continue
        if section in ("job", "env") and line.startswith("  ") and not line.startswith("   "):
            key, _, val = line.strip().partition(":")
            _once(seen, (section, _scalar(key)), path, n)
            out[section][_scalar(key)] = _scalar(val)
        elif section == "inputs" and line.strip().startswith("framework:"):
            out["framework"] = _scalar(line.split(":", 1)[1])
    return out


def settings(plan=None, environ=None):
    """The DDP settings the plan asks for: dict with bucket_cap_mb,
    first_bucket_bytes and hook ("none", "fp16", "bf16"); a key is absent
    when neither the environment nor the plan says anything."""
    env = os.environ if environ is None else environ
    if plan is None:
        plan = load_plan()
    penv = plan["env"] if plan else {}
    job = plan["job"] if plan else {}

    def pick(name):
        if name in env:
            return env[name]
        return penv.get(name)

    s = {}
    v = pick("AUTOSYNC_DDP_BUCKET_CAP_MB")
    if v is not None:
        s["bucket_cap_mb"] = float(v)
    elif job.get("bucket_cap_bytes") not in (None, "", "0", 0):
        s["bucket_cap_mb"] = float(job["bucket_cap_bytes"]) / MiB
    v = pick("AUTOSYNC_DDP_FIRST_BUCKET_MB")
    if v is not None:
        s["first_bucket_bytes"] = int(round(float(v) * MiB))
    elif plan and job.get("first_bucket_bytes") not in (None, ""):
        s["first_bucket_bytes"] = int(float(job["first_bucket_bytes"]))
    v = pick("AUTOSYNC_DDP_COMM_HOOK")
    if v is None and plan:
        v = job.get("compression")
    if v is not None:
        if v not in ("none", "fp16", "bf16"):
            raise ValueError("autosync: unknown compression hook %r" % v)
        s["hook"] = v
    if plan and "bucket_cap_mb" not in s and job.get("bucket_cap_bytes") in ("0", 0) \
            and plan.get("framework") not in ("pytorch-ddp",):
        raise ValueError("autosync: plan %r (framework %r) uses custom buckets that DDP cannot express; "
                         "plan with --framework pytorch-ddp" % (plan.get("strategy"), plan.get("framework")))
    return s


def compare(records):
    """records: one (host, plan_hash, topo_hash) per rank, in rank order.
    Returns the warnings to print: every node should have planned the same
    plan (the planner is deterministic), and a node whose hardware differs
    from the majority is named."""
    msgs = []
    def majority(i):
        counts = {}
        for r in records:
            counts[r[i]] = counts.get(r[i], 0) + 1
        return max(sorted(counts), key=lambda k: counts[k])
    if not records:
        return msgs
    plan, topo = majority(1), majority(2)
    for what, i, want in (("plan", 1, plan), ("topology", 2, topo)):
        odd = sorted(set(r[0] for r in records if r[i] != want))
        for host in odd:
            got = sorted(set(r[i] for r in records if r[0] == host and r[i] != want))
            msgs.append("autosync: node %s has %s hash %s, the others %s%s" % (
                host, what, ",".join(got), want,
                " (its hardware differs)" if what == "topology" else ""))
    return msgs


def check_consistency(group=None):
    """Gather every rank's AUTOSYNC_PLAN_HASH and AUTOSYNC_TOPO_HASH (set by
    the SPANK plugin or 'autosync launch') and, on rank 0, print a warning
    for each node that planned differently or has different hardware.
    Returns the warnings (on every rank)."""
    import socket
    import torch.distributed as dist
    mine = (socket.gethostname(), os.environ.get("AUTOSYNC_PLAN_HASH", ""),
            os.environ.get("AUTOSYNC_TOPO_HASH", ""))
    allr = [None] * dist.get_world_size(group)
    dist.all_gather_object(allr, mine, group=group)
    msgs = compare(allr)
    if dist.get_rank(group) == 0:
        for m in msgs:
            sys.stderr.write(m + "\n")
    return msgs


def wrap(module, plan=None, **ddp_kwargs):
    """DistributedDataParallel(module, **ddp_kwargs) with the plan's bucket
    cap, first bucket and compression hook. Explicit ddp_kwargs win over
    the plan's bucket_cap_mb."""
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    s = settings(plan if plan is not None else load_plan())
    if dist.is_initialized() and os.environ.get("AUTOSYNC_PLAN_HASH"):
        check_consistency()
    kw = dict(ddp_kwargs)
    if "bucket_cap_mb" in s and "bucket_cap_mb" not in kw:
        kw["bucket_cap_mb"] = s["bucket_cap_mb"]
    saved = getattr(dist, "_DEFAULT_FIRST_BUCKET_BYTES", None)
    try:
        if "first_bucket_bytes" in s and saved is not None:
            dist._DEFAULT_FIRST_BUCKET_BYTES = s["first_bucket_bytes"]
        model = DDP(module, **kw)
    finally:
        if saved is not None:
            dist._DEFAULT_FIRST_BUCKET_BYTES = saved
    hook = s.get("hook", "none")
    if hook == "fp16":
        model.register_comm_hook(state=None, hook=default_hooks.fp16_compress_hook)
    elif hook == "bf16":
        model.register_comm_hook(state=None, hook=default_hooks.bf16_compress_hook)
    model._autosync_settings = s
    return model
