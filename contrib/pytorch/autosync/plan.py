"""autosync.plan - what an autosync plan asks of PyTorch DDP, without torch.

Reads the plan file named by AUTOSYNC_PLAN (docs/plan-format.md) with PyYAML
or, without it, a small reader of the layout autosync writes, and turns the
plan's env and job sections into DDP settings (settings()). autosync.torch
applies them. Precedence: the process environment, then the plan's env
section, then its job section.

  AUTOSYNC_DDP_BUCKET_CAP_MB     job.bucket_cap_bytes   DDP's bucket_cap_mb
  AUTOSYNC_DDP_FIRST_BUCKET_MB   job.first_bucket_bytes the first bucket
  AUTOSYNC_DDP_COMM_HOOK         job.compression        none|fp16|bf16|powersgd
  AUTOSYNC_DDP_POWERSGD_RANK     job.powersgd_rank      PowerSGD's rank
  AUTOSYNC_DDP_ALLREDUCE         job.nccl_algo          flat|hierarchical
  AUTOSYNC_DDP_POWERSGD_START_ITER (environment only)   plain all-reduce
                                  before this step (torch's default 1000)
"""
import math
import os
import re
import sys

__all__ = ["load_plan", "load_env_file", "settings", "compare", "HOOKS", "ALLREDUCES"]

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


def load_env_file(path=None, environ=None):
    """The AUTOSYNC_* variables of the env file `autosync init` wrote
    (AUTOSYNC_ENV_FILE: lines export NAME='value', ' written as '\\''),
    added to 'environ' (os.environ) where not set already: a pod's app
    container then sees what the SPANK plugin would have set. A missing or
    empty file is no plan (the init container failed open). Returns the
    names added."""
    env = os.environ if environ is None else environ
    path = path or env.get("AUTOSYNC_ENV_FILE")
    added = []
    if not path:
        return added
    try:
        with open(path) as f:
            text = f.read(1 << 20)
    except OSError:
        return added
    for line in text.splitlines():
        if not line.startswith("export AUTOSYNC_") or "=" not in line:
            continue
        name, _, value = line[len("export "):].partition("=")
        if not (len(value) >= 2 and value[0] == value[-1] == "'"):
            continue
        value = value[1:-1].replace("'\\''", "'")
        if name.replace("_", "").isalnum() and name not in env:
            env[name] = value
            added.append(name)
    return added


def load_plan(path=None):
    """Read the job and env sections of a plan file (docs/plan-format.md).
    Returns {"job": {...}, "env": {...}, "strategy": str, "framework": str}
    or None when there is no plan (path None and AUTOSYNC_PLAN unset, after
    the env file of AUTOSYNC_ENV_FILE, if any, was read)."""
    if not path and not os.environ.get("AUTOSYNC_PLAN"):
        load_env_file()
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
        if not isinstance(d, dict):
            raise ValueError("autosync: %s: not a plan (a YAML mapping expected)" % path)
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


# a plain decimal number (no sign, no '_', no inf or nan: what float() and
# int() would also take is refused)
_DECIMAL = re.compile(r"^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def _number(name, v, lo, integer=False):
    """v (a string of the environment or plan, or a YAML number) as a
    number >= lo; ValueError naming the variable otherwise"""
    text = repr(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
    ok = _DECIMAL.match(text) if not integer else re.match(r"^[0-9]+$", text)
    x = float(text) if ok else float("nan")
    if not ok or not math.isfinite(x) or x < lo:
        raise ValueError("autosync: %s: bad value %r (expected %s >= %g)" % (
            name, str(v), "an integer" if integer else "a number", lo))
    return int(text) if integer else x


HOOKS = ("none", "fp16", "bf16", "powersgd")
ALLREDUCES = ("flat", "hierarchical")


def _pick(env, penv, name):
    if name in env:
        return env[name]
    return penv.get(name)


def _hook(s, env, penv, job, plan):
    v = _pick(env, penv, "AUTOSYNC_DDP_COMM_HOOK")
    if v is None and plan:
        v = job.get("compression")
    if v is None:
        return
    if v not in HOOKS:
        raise ValueError("autosync: unknown compression hook %r (known: %s)" % (v, ", ".join(HOOKS)))
    s["hook"] = v
    if v != "powersgd":
        return
    r = _pick(env, penv, "AUTOSYNC_DDP_POWERSGD_RANK")
    if r is None:
        r = job.get("powersgd_rank")
    if r is None:
        raise ValueError("autosync: a PowerSGD plan without a rank (AUTOSYNC_DDP_POWERSGD_RANK or job.powersgd_rank)")
    s["powersgd_rank"] = _number("AUTOSYNC_DDP_POWERSGD_RANK", r, 1, integer=True)
    it = env.get("AUTOSYNC_DDP_POWERSGD_START_ITER")
    if it is not None:  # torch's PowerSGD starts at iteration 2 at the earliest
        s["powersgd_start_iter"] = _number("AUTOSYNC_DDP_POWERSGD_START_ITER", it, 2, integer=True)


def _allreduce(s, env, penv, job, plan):
    v = _pick(env, penv, "AUTOSYNC_DDP_ALLREDUCE")
    if v is None and plan and job.get("nccl_algo") in ("hierarchical", "hier"):
        v = "hierarchical"
    if v is None:
        return
    if v not in ALLREDUCES:
        raise ValueError("autosync: unknown all-reduce %r (known: %s)" % (v, ", ".join(ALLREDUCES)))
    s["allreduce"] = v
    if v == "hierarchical" and s.get("hook") == "powersgd":
        raise ValueError("autosync: PowerSGD runs its own all-reduces; it does not combine with a hierarchical one")


def settings(plan=None, environ=None):
    """The DDP settings the plan asks for: a dict with bucket_cap_mb,
    first_bucket_bytes, hook (one of HOOKS), powersgd_rank,
    powersgd_start_iter and allreduce (one of ALLREDUCES); a key is absent
    when neither the environment nor the plan says anything."""
    env = os.environ if environ is None else environ
    if plan is None:
        plan = load_plan()
    penv = plan["env"] if plan else {}
    job = plan["job"] if plan else {}

    s = {}
    v = _pick(env, penv, "AUTOSYNC_DDP_BUCKET_CAP_MB")
    if v is not None:
        s["bucket_cap_mb"] = _number("AUTOSYNC_DDP_BUCKET_CAP_MB", v, 0)
    elif job.get("bucket_cap_bytes") not in (None, "", "0", 0):
        s["bucket_cap_mb"] = _number("job.bucket_cap_bytes", job["bucket_cap_bytes"], 0) / MiB
    v = _pick(env, penv, "AUTOSYNC_DDP_FIRST_BUCKET_MB")
    if v is not None:
        s["first_bucket_bytes"] = int(round(_number("AUTOSYNC_DDP_FIRST_BUCKET_MB", v, 0) * MiB))
    elif plan and job.get("first_bucket_bytes") not in (None, ""):
        s["first_bucket_bytes"] = int(_number("job.first_bucket_bytes", job["first_bucket_bytes"], 0))
    _hook(s, env, penv, job, plan)
    _allreduce(s, env, penv, job, plan)
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
                host, what, ",".join(g or "(none)" for g in got), want or "(none)",
                " (its hardware differs)" if what == "topology" else ""))
    return msgs
