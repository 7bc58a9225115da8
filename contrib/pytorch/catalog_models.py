#!/usr/bin/env python3
"""catalog_models.py - the models of autosync's built-in catalog, and the
script that regenerates planner/catalog/*.yaml with autosync_export.py.

Run by hand (CI does not install torch):
    /usr/bin/python3 contrib/pytorch/catalog_models.py planner/catalog

torchvision provides ResNet-50/101, VGG-16, Inception-v3 and DenseNet-121.
BERT, GPT-2, Transformer-big and NCF are written here in plain torch.nn from
the published architectures, with the parameter names and shapes of the
reference implementations (HuggingFace bert-base-uncased / gpt2, fairseq
transformer_vaswani_wmt_en_de_big, MLPerf NeuMF), so that their parameter
totals equal the published counts:
    bert-base 109,482,240   bert-large 335,141,888
    gpt2 124,439,808        gpt2-xl 1,557,611,200   (tied LM head)
    transformer-big 214,245,376 (vocab 37,000 shared; the paper says "213M")
    ncf 31,832,577          (MLPerf NCF on ml-20m: 138,493 users, 26,744 items)
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autosync_export  # noqa: E402


class AttnLinear(nn.Linear):
    """The query (or fused qkv) projection; also counts the attention score
    and context matmuls 4*L*L*d of its block (per sample)."""

    def __init__(self, nin, nout, d_model):
        super().__init__(nin, nout)
        self.d_model = d_model

    def autosync_flops(self, inputs, out):
        L = out.shape[-2]
        return 2 * out.numel() * self.in_features + 4 * L * L * self.d_model


class CrossAttnLinear(AttnLinear):
    def __init__(self, nin, nout, d_model, kv_len):
        super().__init__(nin, nout, d_model)
        self.kv_len = kv_len

    def autosync_flops(self, inputs, out):
        L = out.shape[-2]
        return 2 * out.numel() * self.in_features + 4 * L * self.kv_len * self.d_model


# ------------------------------------------------------------------ BERT
class BertEmbeddings(nn.Module):
    def __init__(self, vocab, hidden, maxpos, types):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(maxpos, hidden)
        self.token_type_embeddings = nn.Embedding(types, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.word_embeddings(ids) + self.position_embeddings(pos) + \
            self.token_type_embeddings(torch.zeros_like(ids))
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.query = AttnLinear(h, h, h)
        self.key = nn.Linear(h, h)
        self.value = nn.Linear(h, h)

    def forward(self, x):
        B, L, H = x.shape
        q = self.query(x).view(B, L, self.heads, -1).transpose(1, 2)
        k = self.key(x).view(B, L, self.heads, -1).transpose(1, 2)
        v = self.value(x).view(B, L, self.heads, -1).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)
        return (a @ v).transpose(1, 2).reshape(B, L, H)


class BertSelfOutput(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.dense = nn.Linear(h, h)
        self.LayerNorm = nn.LayerNorm(h, eps=1e-12)

    def forward(self, x, res):
        return self.LayerNorm(self.dense(x) + res)


class BertAttention(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.self = BertSelfAttention(h, heads)
        self.output = BertSelfOutput(h)

    def forward(self, x):
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    def __init__(self, h, ff):
        super().__init__()
        self.dense = nn.Linear(h, ff)

    def forward(self, x):
        return F.gelu(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, h, ff):
        super().__init__()
        self.dense = nn.Linear(ff, h)
        self.LayerNorm = nn.LayerNorm(h, eps=1e-12)

    def forward(self, x, res):
        return self.LayerNorm(self.dense(x) + res)


class BertLayer(nn.Module):
    def __init__(self, h, heads, ff):
        super().__init__()
        self.attention = BertAttention(h, heads)
        self.intermediate = BertIntermediate(h, ff)
        self.output = BertOutput(h, ff)

    def forward(self, x):
        a = self.attention(x)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, n, h, heads, ff):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(h, heads, ff) for _ in range(n)])

    def forward(self, x):
        for layer in self.layer:
            x = layer(x)
        return x


class BertPooler(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.dense = nn.Linear(h, h)

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class Bert(nn.Module):
    """BertModel (with pooler) as in HuggingFace transformers."""

    def __init__(self, layers=12, hidden=768, heads=12, ff=3072, vocab=30522,
                 maxpos=512, types=2):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab, hidden, maxpos, types)
        self.encoder = BertEncoder(layers, hidden, heads, ff)
        self.pooler = BertPooler(hidden)

    def forward(self, ids):
        return self.pooler(self.encoder(self.embeddings(ids)))


# ------------------------------------------------------------------ GPT-2
class Conv1D(nn.Module):
    """GPT-2's Conv1D: weight [nx, nf] (transposed Linear)."""

    def __init__(self, nf, nx, attn_d=0):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))
        self.nx = nx
        self.attn_d = attn_d

    def forward(self, x):
        return x @ self.weight + self.bias

    def autosync_flops(self, inputs, out):
        L = out.shape[-2]
        return 2 * out.numel() * self.nx + 4 * L * L * self.attn_d


class GPT2Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = Conv1D(3 * d, d, attn_d=d)
        self.c_proj = Conv1D(d, d)

    def forward(self, x):
        B, L, D = x.shape
        q, k, v = self.c_attn(x).split(D, dim=2)
        q, k, v = [t.view(B, L, self.heads, -1).transpose(1, 2) for t in (q, k, v)]
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)
        return self.c_proj((a @ v).transpose(1, 2).reshape(B, L, D))


class GPT2MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = Conv1D(4 * d, d)
        self.c_proj = Conv1D(d, 4 * d)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.attn = GPT2Attention(d, heads)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.mlp = GPT2MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TiedEmbedding(nn.Embedding):
    """Token embedding that is also the (tied) LM head: counts the head's
    2*L*d*V FLOPs, whose gradient accumulates into this weight."""

    def autosync_flops(self, inputs, out):
        return 2 * out.numel() * self.num_embeddings


class GPT2(nn.Module):
    """GPT2LMHeadModel with the LM head tied to wte (HuggingFace names)."""

    def __init__(self, layers=12, d=768, heads=12, vocab=50257, ctx=1024):
        super().__init__()
        self.wte = TiedEmbedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.h = nn.ModuleList([GPT2Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d, eps=1e-5)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        for b in self.h:
            x = b(x)
        return self.ln_f(x) @ self.wte.weight.t()


# ------------------------------------------------------------------ Transformer-big
class MHA(nn.Module):
    def __init__(self, d, heads, kv_len=None):
        super().__init__()
        self.heads = heads
        self.k_proj = nn.Linear(d, d)
        self.v_proj = nn.Linear(d, d)
        self.q_proj = CrossAttnLinear(d, d, d, kv_len) if kv_len else AttnLinear(d, d, d)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x, mem=None):
        mem = x if mem is None else mem
        B, L, D = x.shape
        S = mem.shape[1]
        q = self.q_proj(x).view(B, L, self.heads, -1).transpose(1, 2)
        k = self.k_proj(mem).view(B, S, self.heads, -1).transpose(1, 2)
        v = self.v_proj(mem).view(B, S, self.heads, -1).transpose(1, 2)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), -1)
        return self.out_proj((a @ v).transpose(1, 2).reshape(B, L, D))


class EncLayer(nn.Module):
    def __init__(self, d, heads, ff):
        super().__init__()
        self.self_attn = MHA(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, x):
        x = self.self_attn_layer_norm(x + self.self_attn(x))
        return self.final_layer_norm(x + self.fc2(F.relu(self.fc1(x))))


class DecLayer(nn.Module):
    def __init__(self, d, heads, ff, src_len):
        super().__init__()
        self.self_attn = MHA(d, heads)
        self.self_attn_layer_norm = nn.LayerNorm(d)
        self.encoder_attn = MHA(d, heads, kv_len=src_len)
        self.encoder_attn_layer_norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ff)
        self.fc2 = nn.Linear(ff, d)
        self.final_layer_norm = nn.LayerNorm(d)

    def forward(self, x, mem):
        x = self.self_attn_layer_norm(x + self.self_attn(x))
        x = self.encoder_attn_layer_norm(x + self.encoder_attn(x, mem))
        return self.final_layer_norm(x + self.fc2(F.relu(self.fc1(x))))


class Encoder(nn.Module):
    def __init__(self, emb, n, d, heads, ff):
        super().__init__()
        self.embed_tokens = emb
        self.layers = nn.ModuleList([EncLayer(d, heads, ff) for _ in range(n)])

    def forward(self, src):
        x = self.embed_tokens(src)
        for layer in self.layers:
            x = layer(x)
        return x


class Decoder(nn.Module):
    def __init__(self, emb, n, d, heads, ff, src_len):
        super().__init__()
        self.embed_tokens = emb
        self.layers = nn.ModuleList([DecLayer(d, heads, ff, src_len) for _ in range(n)])

    def forward(self, tgt, mem):
        x = self.embed_tokens(tgt)
        for layer in self.layers:
            x = layer(x, mem)
        return x @ self.embed_tokens.weight.t()


class TransformerBig(nn.Module):
    """Vaswani et al. 2017 "big": 6+6 layers, d 1024, ff 4096, 16 heads,
    post-norm, sinusoidal positions, one embedding matrix shared by encoder,
    decoder and the pre-softmax projection (fairseq names)."""

    def __init__(self, vocab=37000, d=1024, ff=4096, heads=16, n=6, src_len=128):
        super().__init__()
        emb = TiedEmbedding(vocab, d)
        self.encoder = Encoder(emb, n, d, heads, ff)
        self.decoder = Decoder(emb, n, d, heads, ff, src_len)

    def forward(self, src, tgt):
        return self.decoder(tgt, self.encoder(src))


# ------------------------------------------------------------------ NCF
class NeuMF(nn.Module):
    """MLPerf NCF (NeuMF): mf_dim 64, MLP layers 256-256-128-64 on ml-20m."""

    def __init__(self, users=138493, items=26744, mf_dim=64, mlp=(256, 256, 128, 64)):
        super().__init__()
        self.mf_user_embed = nn.Embedding(users, mf_dim, sparse=True)
        self.mf_item_embed = nn.Embedding(items, mf_dim, sparse=True)
        self.mlp_user_embed = nn.Embedding(users, mlp[0] // 2, sparse=True)
        self.mlp_item_embed = nn.Embedding(items, mlp[0] // 2, sparse=True)
        self.mlp = nn.ModuleList([nn.Linear(mlp[i], mlp[i + 1]) for i in range(len(mlp) - 1)])
        self.final = nn.Linear(mlp[-1] + mf_dim, 1)

    def forward(self, u, i):
        xmf = self.mf_user_embed(u) * self.mf_item_embed(i)
        x = torch.cat([self.mlp_user_embed(u), self.mlp_item_embed(i)], -1)
        for layer in self.mlp:
            x = F.relu(layer(x))
        return self.final(torch.cat([xmf, x], -1))


# ------------------------------------------------------------------ generation
def catalog():
    import torchvision.models as tvm
    img = torch.randn(1, 3, 224, 224)
    ids128 = torch.zeros(1, 128, dtype=torch.long)
    ids1024 = torch.zeros(1, 1024, dtype=torch.long)
    ncf_batch = 65536
    return [
        ("resnet50", lambda: tvm.resnet50(), img, 32, {}, None,
         "torchvision 0.14.1 resnet50()", 25557032),
        ("resnet101", lambda: tvm.resnet101(), img, 32, {}, None,
         "torchvision 0.14.1 resnet101()", 44549160),
        ("vgg16", lambda: tvm.vgg16(), img, 32, {}, None,
         "torchvision 0.14.1 vgg16()", 138357544),
        ("inception_v3", lambda: tvm.inception_v3(aux_logits=True, init_weights=False),
         torch.randn(1, 3, 299, 299), 32, {}, None,
         "torchvision 0.14.1 inception_v3(aux_logits=True)", 27161264),
        ("densenet121", lambda: tvm.densenet121(), img, 32, {}, None,
         "torchvision 0.14.1 densenet121()", 7978856),
        ("bert-base", lambda: Bert(), ids128, 32, {}, 128,
         "BertModel bert-base-uncased (with pooler), seq 128", 109482240),
        ("bert-large", lambda: Bert(layers=24, hidden=1024, heads=16, ff=4096), ids128, 32,
         {}, 128, "BertModel bert-large-uncased (with pooler), seq 128", 335141888),
        ("gpt2", lambda: GPT2(), ids1024, 8, {}, 1024,
         "GPT2LMHeadModel gpt2 (124M, tied head), seq 1024", 124439808),
        ("gpt2-xl", lambda: GPT2(layers=48, d=1600, heads=25), ids1024, 2, {}, 1024,
         "GPT2LMHeadModel gpt2-xl (tied head), seq 1024", 1557611200),
        ("transformer-big", lambda: TransformerBig(),
         (ids128, ids128), 32, {}, 128,
         "Transformer big (Vaswani 2017), vocab 37000 shared, seq 128", 214245376),
        ("ncf", lambda: NeuMF(),
         (torch.zeros(1, dtype=torch.long), torch.zeros(1, dtype=torch.long)), ncf_batch,
         {"mf_user_embed.weight": autosync_export.distinct_rows(138493, ncf_batch),
          "mlp_user_embed.weight": autosync_export.distinct_rows(138493, ncf_batch),
          "mf_item_embed.weight": autosync_export.distinct_rows(26744, ncf_batch),
          "mlp_item_embed.weight": autosync_export.distinct_rows(26744, ncf_batch)},
         None, "MLPerf NCF NeuMF ml-20m, sparse embeddings, batch 65536", 31832577),
    ]


def to_meta(x):
    if isinstance(x, (tuple, list)):
        return type(x)(to_meta(t) for t in x)
    return x.to("meta")


def main():
    """catalog_models.py OUTDIR [--meta] [NAME...]: --meta runs the FLOP-counting
    forward pass on the meta device (shapes only, seconds instead of many
    minutes on a CPU; the FLOP counts depend on shapes only, so the output is
    identical)."""
    args = sys.argv[1:]
    meta = "--meta" in args
    args = [a for a in args if a != "--meta"]
    outdir = args[0] if args else "planner/catalog"
    only = set(args[1:])
    torch.manual_seed(0)
    for (name, make, example, batch, sparse, tokens, source, want) in catalog():
        if only and name not in only:
            continue
        model = make()
        if meta:
            model = model.to("meta")
            example = to_meta(example)
        path = os.path.join(outdir, name + ".yaml")
        n = autosync_export.export(model, path, name, example, batch, sparse=sparse,
                                   source=source, tokens_per_sample=tokens)
        status = "ok" if n == want else "MISMATCH (want %d)" % want
        print("%-16s %14d %s" % (name, n, status))


if __name__ == "__main__":
    main()
