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
  * every parameter with requires_grad and at least one element; shared
    (tied) parameters appear once, under their first name, exactly like
    parameters(); frozen ones (no gradient) not at all;
  * layer = the module path that owns the parameter;
  * dtype, shape;
  * sparse: true and rows_touched for the tensors named in 'sparse' and for
    every trainable nn.Embedding / nn.EmbeddingBag with sparse=True (DDP
    all-gathers their rows; rows touched = expected distinct ids in a
    batch; sparse_embeddings=False writes them dense);
  * with example_input (batch 1): the layers in the order one forward
    calls them (backward readies their gradients in reverse, as DDP's
    rebuilt buckets follow), the tensors grouped by layer in that order;
    and per-layer forward FLOPs for ONE sample, measured with forward hooks
    (the model's mode and hooks are restored afterwards):
    Conv: 2 * out.numel() * in_channels/groups * prod(kernel);
    ConvTranspose: 2 * in.numel() * out_channels/groups * prod(kernel);
    Linear: 2 * out.numel() * in_features; Bilinear likewise;
    normalisation layers: 4 * out.numel(); RNN/GRU/LSTM:
    2 * gates * hidden * (input + hidden) per step, layer and direction;
    MultiheadAttention: its q, k, v projections and the score and context
    products (out_proj, called as a function, is its own layer);
    embeddings: 0 (a gather); modules with a method
    autosync_flops(inputs, output) report their own count. The FLOPs of a
    module that owns no exported tensor count for the layer owning its
    (tied) weight, or, frozen, for the exported layer called before it.
    A layer this exporter cannot count, or one the forward never calls (a
    training-only branch), gets no fwd_flops: the loader estimates it
    (2 x parameters x tokens), and the file says compute: flops only when
    every layer was counted. FLOPs of parameter-free operations are
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
    """a YAML double-quoted scalar: backslash and quote escaped, and every
    character YAML would fold, refuse or drop (line breaks, other control
    characters) as an escape"""
    out = []
    for ch in str(s):
        o = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif o < 0x20 or o == 0x7f or 0x80 <= o < 0xa0:
            out.append("\\x%02x" % o)
        elif o in (0x2028, 0x2029, 0xfeff):
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _tensor(x):
    """the first tensor of a module's input or output (a tuple for RNNs and
    attention), or None"""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (tuple, list)) and x and isinstance(x[0], torch.Tensor):
        return x[0]
    return None


def _rnn_flops(mod, inp):
    gates = {"LSTM": 4, "GRU": 3}.get(mod.mode, 1)
    d = 2 if mod.bidirectional else 1
    steps = inp.numel() // mod.input_size  # every time step of every sample
    f = 0
    for layer in range(mod.num_layers):
        isz = mod.input_size if layer == 0 else mod.hidden_size * d
        f += 2 * gates * mod.hidden_size * (isz + mod.hidden_size) * steps * d
    return f


def _mha_flops(mod, inputs):
    """the q, k, v projections and the score and context products; the
    output projection is its own layer (out_proj, which MHA calls as a
    function: the loader estimates it)"""
    q, k = inputs[0], inputs[1]
    e = mod.embed_dim
    if q.dim() == 3:
        n, lq = (q.shape[0], q.shape[1]) if mod.batch_first else (q.shape[1], q.shape[0])
        lk = k.shape[1] if mod.batch_first else k.shape[0]
    else:
        n, lq, lk = 1, q.shape[0], k.shape[0]
    return 2 * n * lq * e * e + 2 * 2 * n * lk * e * e + 2 * 2 * n * lq * lk * e


def _module_flops(mod, inputs, output):
    """FLOPs of one call of 'mod', or None when this exporter does not know
    the module (its layer's compute is then left to the loader's estimate)"""
    if hasattr(mod, "autosync_flops"):
        return int(mod.autosync_flops(inputs, output))
    if isinstance(mod, (nn.Embedding, nn.EmbeddingBag)):
        return 0  # a gather
    out, inp = _tensor(output), _tensor(inputs)
    if out is None:
        return None
    if isinstance(mod, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
        return 2 * out.numel() * (mod.in_channels // mod.groups) * math.prod(mod.kernel_size)
    if isinstance(mod, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)) and inp is not None:
        return 2 * inp.numel() * (mod.out_channels // mod.groups) * math.prod(mod.kernel_size)
    if isinstance(mod, nn.Linear):
        return 2 * out.numel() * mod.in_features
    if isinstance(mod, nn.Bilinear):
        return 2 * out.numel() * mod.in1_features * mod.in2_features
    if isinstance(mod, (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm,
                        nn.modules.instancenorm._InstanceNorm)):
        return 4 * out.numel()
    if isinstance(mod, nn.RNNBase) and inp is not None:
        return _rnn_flops(mod, inp)
    if isinstance(mod, nn.MultiheadAttention) and len(inputs) >= 2:
        return _mha_flops(mod, inputs)
    return None


def _calls(model, example_input):
    """[(module path, FLOPs or None)] of every module that owns parameters
    (or reports its own FLOPs), in the order of their first call in one
    forward of example_input; the model's mode and hooks are left as they
    were, whatever happens"""
    order, flops = [], {}
    hooks = []
    for mname, mod in model.named_modules():
        if not any(True for _ in mod.parameters(recurse=False)) and \
                not hasattr(mod, "autosync_flops"):
            continue

        def hook(m, inp, out, _name=mname):
            f = _module_flops(m, inp, out)
            if _name not in flops:
                order.append(_name)
                flops[_name] = f
            elif flops[_name] is not None:
                flops[_name] = None if f is None else flops[_name] + f
        hooks.append(mod.register_forward_hook(hook))
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            if isinstance(example_input, (tuple, list)):
                model(*example_input)
            else:
                model(example_input)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    return [(n, flops[n]) for n in order]


def measure_flops(model, example_input):
    """Forward FLOPs per module path for one forward of example_input (None:
    a module this exporter does not count)."""
    return dict(_calls(model, example_input))


def _sparse_modules(model, batch_size, rows_per_sample):
    """{parameter: rows touched} of every trainable Embedding or EmbeddingBag
    whose gradient is sparse (DDP all-gathers their rows)"""
    out = {}
    for mname, mod in model.named_modules():
        if isinstance(mod, (nn.Embedding, nn.EmbeddingBag)) and mod.sparse and \
                mod.weight.requires_grad:
            key = (mname + "." if mname else "") + "weight"
            out[key] = distinct_rows(mod.num_embeddings, batch_size * rows_per_sample)
    return out


def _layer_flops(calls, mod_of, owner, exported, reg_layers):
    """(layers in forward order: first call, then those never called in
    registration order; {layer: FLOPs, or None: not known}). FLOPs of a
    module that owns no exported tensor go where DDP sees that work: a
    module using a tied weight to the layer owning it, a frozen module to
    the exported layer called before it (or after, when none was)."""
    def layer_of(mname):
        for p in mod_of[mname].parameters(recurse=False):
            if id(p) in exported:  # its own, or a tied one's owner
                return owner[id(p)][0] or "(root)"
        return None

    flops, order, pending, last = {}, [], 0, None
    for mname, f in calls:
        layer = layer_of(mname)
        if layer is None:  # frozen: its work, not its gradient, counts
            if f is None:
                continue
            if last is not None:
                if flops[last] is not None:
                    flops[last] += f
            else:
                pending += f
            continue
        if layer not in flops:
            order.append(layer)
            flops[layer] = f
        elif flops[layer] is not None:
            flops[layer] = None if f is None else flops[layer] + f
        if pending and flops[layer] is not None:
            flops[layer] += pending
            pending = 0
        last = layer
    for layer in reg_layers:
        if layer not in flops:
            order.append(layer)
            flops[layer] = None  # not called here (a training-only branch)
    return order, flops


def export(model, path, name, example_input=None, batch_size=32,
           framework="pytorch", sparse=None, sparse_embeddings=True,
           source="", tokens_per_sample=None, out=None, rows_per_sample=1):
    sparse = dict(sparse or {})
    owner, mod_of = {}, {}
    for mname, mod in model.named_modules():
        mod_of[mname] = mod
        for pname, p in mod.named_parameters(recurse=False):
            owner.setdefault(id(p), (mname, mod, pname))
    if sparse_embeddings:
        for k, v in _sparse_modules(model, batch_size, rows_per_sample).items():
            sparse.setdefault(k, v)

    tensors = []
    reg_layers = []
    exported = set()
    total = 0
    for pname, p in model.named_parameters():
        # a frozen parameter has no gradient; an empty one carries none
        if not p.requires_grad or p.numel() == 0:
            continue
        mname, mod, _ = owner[id(p)]
        layer = mname if mname else "(root)"
        if layer not in reg_layers:
            reg_layers.append(layer)
        if p.dtype not in DTYPES:
            raise ValueError("%s: unsupported dtype %s" % (pname, p.dtype))
        exported.add(id(p))
        total += p.numel()
        tensors.append((pname, layer, DTYPES[p.dtype], list(p.shape),
                        sparse.get(pname)))
    for k in sparse:
        if k not in [t[0] for t in tensors]:
            raise ValueError("sparse tensor %s is not a trainable parameter" % k)

    layers, lflops = reg_layers, None
    if example_input is not None:
        layers, lflops = _layer_flops(_calls(model, example_input), mod_of,
                                      owner, exported, reg_layers)
        rank = {l: i for i, l in enumerate(layers)}
        # grouped by layer in forward order, registration order inside one
        tensors.sort(key=lambda t: rank[t[1]])

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
    if lflops is not None:
        if all(lflops[l] is not None for l in layers):
            w("compute: flops")
        w("layers:")
        for layer in layers:
            if lflops[layer] is None:  # the loader estimates it
                w("  - {name: %s}" % _quote(layer))
            else:
                w("  - {name: %s, fwd_flops: %d}" % (_quote(layer), lflops[layer]))
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
                    help="(the default) every trainable nn.Embedding or EmbeddingBag with "
                    "sparse=True is sparse, rows touched = expected distinct ids in a "
                    "batch (--rows-per-sample ids per sample)")
    ap.add_argument("--dense-embeddings", action="store_true",
                    help="write sparse=True embeddings as dense tensors")
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
               sparse_embeddings=not a.dense_embeddings,
               rows_per_sample=a.rows_per_sample)
    print("%s: %d parameters" % (a.output, n), file=sys.stderr)


if __name__ == "__main__":
    main()
