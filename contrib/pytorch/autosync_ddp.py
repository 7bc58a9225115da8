"""autosync_ddp - compatibility module: the PyTorch adapter is the package
'autosync' (contrib/pytorch/autosync/, installed by `make install`):

    from autosync.torch import wrap

This module keeps `import autosync_ddp; autosync_ddp.wrap(...)` working for
scripts that put contrib/pytorch on sys.path (tests/lab/ddp_peer.py).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autosync.plan import MiB, compare, load_plan, settings  # noqa: E402,F401


def check_consistency(group=None):
    from autosync.torch import check_consistency as c
    return c(group)


def wrap(module, plan=None, **ddp_kwargs):
    from autosync.torch import wrap as w
    return w(module, plan=plan, **ddp_kwargs)


__all__ = ["load_plan", "settings", "compare", "check_consistency", "wrap"]
