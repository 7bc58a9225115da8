"""export.py - autosync.export on small models, each file read back by the
planner (autosync plan): FLOPs of modules beyond Conv and Linear, tied and
frozen modules' work, forward order, sparse embeddings, the model's mode
and hooks left as they were, names YAML would fold. TAP.
Usage: export.py AUTOSYNC TMPDIR"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from autosync.export import export  # noqa: E402

AUTOSYNC, TMP = sys.argv[1], sys.argv[2]
results = []


def ok(cond, what):
    results.append((bool(cond), what))


def write(model, name, example, **kw):
    path = os.path.join(TMP, name + ".yaml")
    export(model, path, name, example, batch_size=8, **kw)
    return path, open(path).read()


def planned(path):
    r = subprocess.run([AUTOSYNC, "plan", "-m", path, "-c", "none", "--network",
                        "nodes=2,gpus=1,intra=host_bridge,nics=1x10Gbit/s,lat=10us",
                        "-o", os.devnull], capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def layer_line(text, layer):
    for line in text.splitlines():
        if line.startswith('  - {name: "%s"' % layer) and "layer:" not in line:
            return line
    return None


def flops_of(text, layer):
    line = layer_line(text, layer)
    if line is None or "fwd_flops" not in line:
        return None
    return int(line.split("fwd_flops: ")[1].rstrip("}"))


# 1. RNN, attention, transposed convolution: counted, not written as 0
class Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.lstm = nn.LSTM(32, 32)
        self.attn = nn.MultiheadAttention(32, 4)
        self.up = nn.ConvTranspose1d(32, 16, 3)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        h = self.emb(x)                    # (L, 32)
        h, _ = self.lstm(h.unsqueeze(1))   # (L, 1, 32)
        h, _ = self.attn(h, h, h)
        h = self.up(h.permute(1, 2, 0))    # (1, 16, L + 2)
        return self.fc(h.permute(0, 2, 1))


m = Seq()
m.train()
path, text = write(m, "seq", torch.randint(0, 100, (16,)))
good, err = planned(path)
ok(good, "LSTM, attention, transposed conv: the planner reads the file (%s)" % err)
ok(flops_of(text, "lstm") == 2 * 4 * 32 * 64 * 16 and flops_of(text, "up") == 2 * 16 * 32 * 16 * 3 and
   flops_of(text, "attn") > 0,
   "their FLOPs counted (lstm %s, attn %s, up %s), never 0" % (
       flops_of(text, "lstm"), flops_of(text, "attn"), flops_of(text, "up")))
ok(layer_line(text, "attn.out_proj") == '  - {name: "attn.out_proj"}' and "compute: flops" not in text,
   "out_proj (called as a function) without fwd_flops: the loader estimates it; no 'compute: flops'")
ok(m.training and not m._forward_hooks and all(not c._forward_hooks for c in m.modules()),
   "the model is left in training mode, without hooks")

# 2. a tied head and a frozen base: their work is counted
class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(1000, 64)
        self.body = nn.Linear(64, 64)
        self.head = nn.Linear(64, 1000, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, x):
        return self.head(self.body(self.wte(x)))


path, text = write(Tied(), "tied", torch.randint(0, 1000, (4,)))
ok(flops_of(text, "wte") == 2 * 4 * 1000 * 64 and layer_line(text, "head") is None,
   "a tied head's FLOPs count for the layer owning the weight (wte %s)" % flops_of(text, "wte"))


class Lora(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(256, 256)
        self.a = nn.Linear(256, 4, bias=False)
        self.b = nn.Linear(4, 256, bias=False)
        for p in self.base.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.base(x) + self.b(self.a(x))


path, text = write(Lora(), "lora", torch.randn(1, 256))
ok(flops_of(text, "a") == 2 * 4 * 256 + 2 * 256 * 256 and "base" not in text,
   "a frozen base's FLOPs count for the exported layer called next (a %s)" % flops_of(text, "a"))

# 3. forward order, not registration order
class Late(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 2)
        self.body = nn.Linear(8, 8)

    def forward(self, x):
        return self.head(self.body(x))


path, text = write(Late(), "late", torch.randn(1, 8))
names = [l.split('"')[1] for l in text.splitlines() if l.startswith("  - {name:") and "layer:" in l]
ok(names == ["body.weight", "body.bias", "head.weight", "head.bias"],
   "tensors in forward order, registration order inside a layer: %s" % names)

# 4. sparse embeddings, frozen ones and empty parameters
class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(10000, 16, sparse=True)
        self.frozen = nn.Embedding(100, 16, sparse=True)
        self.frozen.weight.requires_grad = False
        self.marker = nn.Parameter(torch.empty(0))
        self.fc = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc(self.bag(x) + self.frozen(x[:, 0]))


path, text = write(Emb(), "emb", torch.randint(0, 100, (1, 3)))
good, err = planned(path)
ok(good, "a frozen sparse embedding and an empty parameter: exported, read (%s)" % err)
ok('"bag.weight"' in text and "sparse: true" in text.split('"bag.weight"')[1].split("\n")[0] and
   "marker" not in text and '"frozen.weight"' not in text,
   "EmbeddingBag(sparse=True) marked sparse; the empty and the frozen parameter left out")

# 5. names YAML would fold or refuse
class Names(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"x y": nn.Linear(2, 2), "x\ny": nn.Linear(2, 2),
                                    "c\x01": nn.Linear(2, 2)})

    def forward(self, x):
        return sum(h(x) for h in self.heads.values())


path, text = write(Names(), "names", torch.randn(1, 2))
good, err = planned(path)
ok(good, "module names with a space, a newline and a control character: distinct, read (%s)" % err)

print("1..%d" % len(results))
for i, (c, what) in enumerate(results, 1):
    print("%s %d - %s" % ("ok" if c else "not ok", i, what))
