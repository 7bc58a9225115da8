#!/usr/bin/env python3
"""layers.py - the module graph, checked from the #include lines.

Reads every #include "..." of the C sources and headers, names the module
of each file and of each included header, and prints TAP:
  - every edge between modules is in ALLOWED below (a new back-arrow fails);
  - no file includes another module's internal header (internal.h,
    *_internal.h);
  - installed headers include only installed headers;
  - no include cycle between modules, nor between files.
usage: tests/layers.py [SRCDIR]
"""
import os
import re
import sys

# The layers, bottom up (docs/architecture.md draws them). A module may
# include the headers of the modules listed for it, and its own.
ALLOWED = {
    "common": set(),
    "topology": {"common"},
    "planner": {"common"},
    "site": {"common", "topology", "planner"},
    "job": {"common", "topology", "planner", "site"},
    "plugin": {"common", "topology", "planner", "site", "job"},
    "learn": {"common", "planner", "site"},
    "cli": {"common", "topology", "planner", "site", "job", "learn"},
    "launcher": {"common", "topology", "planner", "site"},
    "webhook": {"common"},
    "tests": set(),
}
# Installed headers and the module each belongs to.
PUBLIC = {
    "autosync/common.h": "common",
    "autosync/cluster.h": "common",
    "autosync/topology.h": "topology",
    "autosync/planner.h": "planner",
    "autosync/siteconf.h": "site",
    "autosync/feedback.h": "site",
    "autosync/job.h": "job",
}
SKIP_DIRS = {".git", "_build", "build", "results", "autom4te.cache", "config", "m4"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(rel):
    """The module a file of the tree belongs to (None: not a module)."""
    parts = rel.split("/")
    if parts[0] == "include":
        return PUBLIC.get("/".join(parts[1:]))
    if parts[0] == "tests" and len(parts) > 1 and parts[1] == "tap":
        return "tests"
    return parts[0] if parts[0] in ALLOWED else None


def is_test(rel):
    parts = rel.split("/")
    return "test" in parts[:-1] or "fuzz" in parts[:-1]


def sources(src):
    for d, dirs, files in os.walk(src):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("."))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(d, f), src)


def resolve(src, rel, inc):
    """The file an #include "inc" in 'rel' names, relative to the tree."""
    here = os.path.dirname(rel)
    for cand in (os.path.join(here, inc), inc, os.path.join("include", inc)):
        path = os.path.normpath(cand)
        if os.path.isfile(os.path.join(src, path)):
            return path
    return None  # config.h (generated), system-like headers


def cycles(graph):
    """Strongly connected components with more than one node, or a self loop."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), ".."))
    bad_edge, bad_internal, bad_public = [], [], []
    files, mods = {}, {}
    for rel in sources(src):
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as fp:
            text = fp.read()
        mine = module_of(rel)
        files.setdefault(rel, set())
        for inc in INCLUDE.findall(text):
            target = resolve(src, rel, inc)
            if not target:
                continue
            files[rel].add(target)
            theirs = module_of(target)
            base = os.path.basename(target)
            # an internal header belongs to its folder (and the folder's
            # test/ and fuzz/ programs)
            if (base == "internal.h" or base.endswith("_internal.h")) and \
                    not rel.startswith(os.path.dirname(target) + "/"):
                bad_internal.append(f"{rel}: {inc}")
            if rel.startswith("include/") and not target.startswith("include/"):
                bad_public.append(f"{rel}: {inc}")
            if mine is None or theirs is None or mine == theirs:
                continue
            if theirs == "tests" and is_test(rel):
                continue
            mods.setdefault(mine, set()).add(theirs)
            if theirs not in ALLOWED.get(mine, set()):
                bad_edge.append(f"{rel}: {inc} ({mine} -> {theirs})")
    checks = [
        ("every include follows an allowed edge between modules", bad_edge),
        ("no file includes another module's internal header", bad_internal),
        ("installed headers include only installed headers", bad_public),
        ("no include cycle between modules",
         [" <-> ".join(c) for c in cycles(mods)]),
        ("no include cycle between files",
         [" <-> ".join(c) for c in cycles(files)]),
    ]
    print(f"1..{len(checks)}")
    failed = 0
    for i, (name, problems) in enumerate(checks, 1):
        if problems:
            failed += 1
            print(f"not ok {i} - {name}")
            for p in problems:
                print(f"#   {p}")
        else:
            print(f"ok {i} - {name}")
    edges = sorted(f"{a} -> {b}" for a in mods for b in mods[a])
    print("# module edges: " + ", ".join(edges))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
