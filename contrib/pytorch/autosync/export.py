"""autosync.export - write a PyTorch module's parameter tensors as an
autosync model file (docs/model-format.md, format version 1).

Usage as a library (or as a command: python3 -m autosync.export --help):

    import torch
    from autosync import export
    model = MyNet()
    export.export(model, "mynet.yaml", name="mynet",
                           example_input=torch.randn(1, 3, 224, 224),
                           batch_size=32,
                           sparse={"emb.weight": 4096})

What is written:
  * every parameter with requires_grad, in model.parameters() order (the
    order DDP registers them; gradients become ready roughly in reverse);
    shared (tied) parameters appear once, under their first name, exactly
    like parameters();
  * layer = the module path that owns the parameter;
  * dtype, shape;
  * sparse: true and rows_touched for the tensors named in 'sparse' (and,
    with sparse_embeddings=True, for every nn.Embedding(sparse=True));
  * per-layer forward FLOPs for ONE sample, measured with forward hooks on
    the modules that own parameters when example_input is given (batch 1):
    Conv: 2 * out.numel() * in_channels/groups * prod(kernel);
    Linear: 2 * out.numel() * in_features; normalisation layers:
    4 * out.numel(); embeddings: 0 (a gather); modules with a method
    autosync_flops(inputs, output) report their own count (e.g. attention
    score / context matmuls).  FLOPs of parameter-free operations are
    attributed to nothing (they are small for the catalog models).
  * params: the exact total, which the C loader checks.
"""
import argparse
import math
import sys

import torch
import torch.nn as nn

DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.float64: "float64",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int8: "int8",
    torch.uint8: "uint8",
}


def distinct_rows(vocab, draws):
    """Expected number of distinct rows when 'draws' ids are drawn uniformly
    from 'vocab' rows: V * (1 - (1 - 1/V)^b)."""
    if vocab <= 0 or draws <= 0:
        return 0
    return max(1, min(vocab, int(round(vocab * -math.expm1(draws * math.log1p(-1.0 / vocab))))))


def _quote(s):
    s = str(s)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _module_flops(mod, inputs, output):
    if hasattr(mod, "autosync_flops"):
        return int(mod.autosync_flops(inputs, output))
    if not isinstance(output, torch.Tensor):
        return 0
    if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        k = 1
        for d in mod.kernel_size:
            k *= d
        return 2 * output.numel() * (mod.in_channels // mod.groups) * k
    if isinstance(mod, nn.Linear):
        return 2 * output.numel() * mod.in_features
    if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
                        nn.LayerNorm, nn.GroupNorm)):
        return 4 * output.numel()
    return 0


def measure_flops(model, example_input):
    """Forward FLOPs per module path for one forward of example_input."""
    flops = {}
    hooks = []
    for mname, mod in model.named_modules():
        if not any(True for _ in mod.parameters(recurse=False)) and \
                not hasattr(mod, "autosync_flops"):
            continue

        def hook(m, inp, out, _name=mname):
            flops[_name] = flops.get(_name, 0) + _module_flops(m, inp, out)
        hooks.append(mod.register_forward_hook(hook))
    model.eval()
    with torch.no_grad():
        if isinstance(example_input, (tuple, list)):
            model(*example_input)
        else:
            model(example_input)
    for h in hooks:
        h.remove()
    return flops


def export(model, path, name, example_input=None, batch_size=32,
           framework="pytorch", sparse=None, sparse_embeddings=False,
           source="", tokens_per_sample=None, out=None, rows_per_sample=1):
    sparse = dict(sparse or {})
    owner = {}
    for mname, mod in model.named_modules():
        for pname, p in mod.named_parameters(recurse=False):
            owner.setdefault(id(p), (mname, mod, pname))
    if sparse_embeddings:
        for mname, mod in model.named_modules():
            if isinstance(mod, nn.Embedding) and mod.sparse:
                key = (mname + "." if mname else "") + "weight"
                sparse.setdefault(key, distinct_rows(mod.num_embeddings,
                                                     batch_size * rows_per_sample))
    flops = measure_flops(model, example_input) if example_input is not None else None

    tensors = []
    layers = []
    seen_layers = set()
    total = 0
    for pname, p in model.named_parameters():
        if not p.requires_grad:
            continue
        mname, mod, _ = owner[id(p)]
        layer = mname if mname else "(root)"
        if layer not in seen_layers:
            seen_layers.add(layer)
            layers.append(layer)
        if p.dtype not in DTYPES:
            raise ValueError("%s: unsupported dtype %s" % (pname, p.dtype))
        total += p.numel()
        tensors.append((pname, layer, DTYPES[p.dtype], list(p.shape),
                        sparse.get(pname)))
    for k in sparse:
        if k not in [t[0] for t in tensors]:
            raise ValueError("sparse tensor %s is not a parameter" % k)

    lines = []
    w = lines.append
    w("# autosync model file, format 1 (docs/model-format.md).")
    w("# Generated by contrib/pytorch/autosync_export.py; do not edit by hand.")
    w("autosync_model: 1")
    w("name: %s" % _quote(name))
    w("framework: %s" % _quote(framework))
    w("batch_size: %d" % batch_size)
    if tokens_per_sample:
        w("tokens_per_sample: %d" % tokens_per_sample)
    if source:
        w("source: %s" % _quote(source))
    w("params: %d" % total)
    if flops is not None:
        w("compute: flops")
        w("layers:")
        for layer in layers:
            key = "" if layer == "(root)" else layer
            w("  - {name: %s, fwd_flops: %d}" % (_quote(layer), flops.get(key, 0)))
    w("tensors:")
    for (pname, layer, dt, shape, rows) in tensors:
        extra = ""
        if rows is not None:
            extra = ", sparse: true, rows_touched: %d" % rows
        w("  - {name: %s, layer: %s, dtype: %s, shape: [%s]%s}" % (
            _quote(pname), _quote(layer), dt, ", ".join(str(d) for d in shape), extra))
    text = "\n".join(lines) + "\n"
    if out is not None:
        out.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("factory", help="python expression building the module, "
                    "e.g. 'torchvision.models.resnet50()'")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--input", help="python expression for a batch-1 example input, "
                    "e.g. 'torch.randn(1,3,224,224)'")
    ap.add_argument("--sparse", action="append", default=[],
                    help="NAME=ROWS: a sparse gradient with ROWS rows touched per step")
    ap.add_argument("--sparse-embeddings", action="store_true",
                    help="every nn.Embedding(sparse=True) is sparse, rows touched = "
                    "expected distinct ids in a batch (--rows-per-sample ids per sample)")
    ap.add_argument("--rows-per-sample", type=int, default=1)
    ap.add_argument("--framework", default="pytorch")
    ap.add_argument("--import", dest="imports", action="append", default=[])
    a = ap.parse_args()
    env = {"torch": torch, "nn": nn}
    for m in a.imports + ["torchvision"]:
        try:
            env[m.split(".")[0]] = __import__(m)
        except ImportError:
            pass
    model = eval(a.factory, env)
    example = eval(a.input, env) if a.input else None
    sparse = {}
    for s in a.sparse:
        k, _, v = s.partition("=")
        sparse[k] = int(v)
    n = export(model, a.output, a.name, example, a.batch_size, sparse=sparse,
               source=a.factory, framework=a.framework,
               sparse_embeddings=a.sparse_embeddings,
               rows_per_sample=a.rows_per_sample)
    print("%s: %d parameters" % (a.output, n), file=sys.stderr)


if __name__ == "__main__":
    main()
