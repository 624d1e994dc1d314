"""Reference torch implementations of the transformer families AttnScope loads: BERT, DistilBERT, GPT-2
and ViT, written from Hugging Face transformers' modeling_*.py so that every parameter (and state_dict()
key) has the Hugging Face name: a state_dict of these modules is a Hugging Face checkpoint.

No `transformers` package is needed (Debian's python3-torch is enough). Used by
make_transformer_fixtures.py (parity fixtures) and by the benchmarks, e.g.

    import transformer_torch as tt
    model = tt.build("bert", hidden=768, heads=12, layers=12, intermediate=3072, vocab=30522,
                     positions=512).eval()
    with torch.no_grad():
        out = model(torch.randint(0, 30522, (1, 512)), output_attentions=True)
    out["attentions"]  # one [batch, heads, n, n] tensor per layer

Every forward returns a dict: "attentions" (list of [B, H, n, n]), "hidden_states" (list of [B, n, d]
when asked, with the conventions of transformers: GPT-2's last entry is after ln_f, ViT's is before the
final layernorm), "logits" (MLM: [B, n, vocab]; GPT-2: [B, n, vocab] or only the last position with
last_only=True; ViT: [B, labels]).

Hooks (interventions, TransformerLens style): every forward takes hook=None, a function
hook(site, layer, tensor) called for one sequence (batch 1) that may return a replacement tensor of the same
shape (None keeps the value). Sites, for each layer l: "resid_pre" [n, d], the residual stream entering the
layer (layer 0: the embeddings as the first layer receives them: BERT/DistilBERT after the embedding
LayerNorm, ViT the patch + class + position embeddings); "z" [n, heads, head_dim], each head's softmax(scores)
V before the output projection; "attn_out" [n, d], the output projection of z plus its bias (BERT/DistilBERT:
before the add-and-LayerNorm); "mlp_out" [n, d], the MLP's output (BERT/DistilBERT: before the
add-and-LayerNorm). Without a hook the computation is unchanged.
"""

import math

import torch
from torch import nn
import torch.nn.functional as F

__all__ = ["BertForMaskedLM", "BertModel", "DistilBertForMaskedLM", "GPT2LMHeadModel",
           "ViTForImageClassification", "build", "gelu_new"]


def bytes_to_unicode():
    """GPT-2's byte -> printable character map (its byte-level BPE's alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def gelu_new(x):
    """GPT-2's tanh approximation (transformers' NewGELUActivation)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def activation(name):
    if name in ("gelu", "gelu_python"):
        return F.gelu
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return gelu_new
    if name == "relu":
        return F.relu
    raise ValueError(f"unknown activation {name}")


def extended_mask(attention_mask, dtype):
    """[B, n] 1/0 -> additive [B, 1, 1, n] with finfo.min on padding (transformers' get_extended_attention_mask)."""
    if attention_mask is None:
        return None
    m = attention_mask[:, None, None, :].to(dtype)
    return (1.0 - m) * torch.finfo(dtype).min


class Config(dict):
    __getattr__ = dict.__getitem__


def call_hook(hook, site, layer, t):
    """t [1, n, ...]: hook(site, layer, t[0]); its result (if any) replaces t."""
    if hook is None:
        return t
    assert t.shape[0] == 1, "hooks take one sequence (batch 1)"
    r = hook(site, layer, t[0])
    if r is None:
        return t
    assert r.shape == t.shape[1:], (site, layer, tuple(r.shape), tuple(t.shape[1:]))
    return r.to(t.dtype)[None].contiguous()


# ---------------------------------------------------------------- BERT
class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, ids, token_type_ids):
        pos = torch.arange(ids.shape[1], device=ids.device)[None]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(ids)
        e = self.word_embeddings(ids) + self.token_type_embeddings(token_type_ids) + self.position_embeddings(pos)
        return self.LayerNorm(e)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c.num_attention_heads
        self.head_dim = c.hidden_size // c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)

    def split(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask, hook=None, layer=0):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = call_hook(hook, "z", layer, ctx)
        return ctx.view(x.shape), probs


class BertSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, h, x, hook=None, layer=0):
        return self.LayerNorm(call_hook(hook, "attn_out", layer, self.dense(h)) + x)


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, x, mask, hook=None, layer=0):
        h, probs = self.self(x, mask, hook, layer)
        return self.output(h, x, hook, layer), probs


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.intermediate_size)
        self.act = activation(c.hidden_act)

    def forward(self, x):
        return self.act(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, h, x, hook=None, layer=0):
        return self.LayerNorm(call_hook(hook, "mlp_out", layer, self.dense(h)) + x)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, x, mask, hook=None, layer=0):
        x = call_hook(hook, "resid_pre", layer, x)
        a, probs = self.attention(x, mask, hook, layer)
        return self.output(self.intermediate(a), a, hook, layer), probs


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c.num_hidden_layers)])


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


class BertModel(nn.Module):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.config = c
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c) if add_pooling_layer else None

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, output_attentions=True,
                output_hidden_states=False, hook=None):
        x = self.embeddings(input_ids, token_type_ids)
        mask = extended_mask(attention_mask, x.dtype)
        attentions, hidden = [], [x]
        for i, layer in enumerate(self.encoder.layer):
            x, probs = layer(x, mask, hook, i)
            if output_attentions:
                attentions.append(probs)
            hidden.append(x)
        return {"last_hidden_state": x, "attentions": attentions,
                "hidden_states": hidden if output_hidden_states else None}


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)
        self.act = activation(c.hidden_act)
        self.LayerNorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x):
        return self.LayerNorm(self.act(self.dense(x)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c.hidden_size, c.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(c.vocab_size))
        self.decoder.bias = self.bias

    def forward(self, x):
        return self.decoder(self.transform(x))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.predictions = BertLMPredictionHead(c)


class BertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.bert = BertModel(c, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(c)
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight  # tied

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, output_attentions=True,
                output_hidden_states=False, logits=True, hook=None):
        out = self.bert(input_ids, token_type_ids, attention_mask, output_attentions, output_hidden_states, hook)
        if logits:
            out["logits"] = self.cls.predictions(out["last_hidden_state"])
        return out


# ---------------------------------------------------------------- DistilBERT
def sinusoidal_table(n_pos, dim):
    """transformers' create_sinusoidal_embeddings."""
    pe = torch.tensor([[pos / (10000 ** (2 * (j // 2) / dim)) for j in range(dim)] for pos in range(n_pos)],
                      dtype=torch.float64)
    out = torch.zeros(n_pos, dim)
    out[:, 0::2] = torch.sin(pe[:, 0::2]).float()
    out[:, 1::2] = torch.cos(pe[:, 1::2]).float()
    return out


class DistilEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.dim)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.dim)
        if c.get("sinusoidal_pos_embds"):
            with torch.no_grad():
                self.position_embeddings.weight.copy_(sinusoidal_table(c.max_position_embeddings, c.dim))
        self.LayerNorm = nn.LayerNorm(c.dim, eps=1e-12)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)[None]
        return self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_heads = c.n_heads
        self.dim = c.dim
        self.q_lin = nn.Linear(c.dim, c.dim)
        self.k_lin = nn.Linear(c.dim, c.dim)
        self.v_lin = nn.Linear(c.dim, c.dim)
        self.out_lin = nn.Linear(c.dim, c.dim)

    def forward(self, x, mask, hook=None, layer=0):
        b, n, _ = x.shape
        dh = self.dim // self.n_heads

        def shape(t):
            return t.view(b, -1, self.n_heads, dh).transpose(1, 2)

        q = shape(self.q_lin(x)) / math.sqrt(dh)
        k, v = shape(self.k_lin(x)), shape(self.v_lin(x))
        scores = torch.matmul(q, k.transpose(2, 3))
        if mask is not None:
            keep = (mask == 0).view(b, 1, 1, n).expand_as(scores)
            scores = scores.masked_fill(keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(w, v).transpose(1, 2).contiguous()
        ctx = call_hook(hook, "z", layer, ctx).view(b, -1, self.dim)
        return call_hook(hook, "attn_out", layer, self.out_lin(ctx)), w


class FFN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.lin1 = nn.Linear(c.dim, c.hidden_dim)
        self.lin2 = nn.Linear(c.hidden_dim, c.dim)
        self.act = activation(c.activation)

    def forward(self, x):
        return self.lin2(self.act(self.lin1(x)))


class TransformerBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = MultiHeadSelfAttention(c)
        self.sa_layer_norm = nn.LayerNorm(c.dim, eps=1e-12)
        self.ffn = FFN(c)
        self.output_layer_norm = nn.LayerNorm(c.dim, eps=1e-12)

    def forward(self, x, mask, hook=None, layer=0):
        x = call_hook(hook, "resid_pre", layer, x)
        a, w = self.attention(x, mask, hook, layer)
        a = self.sa_layer_norm(a + x)
        return self.output_layer_norm(call_hook(hook, "mlp_out", layer, self.ffn(a)) + a), w


class DistilTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([TransformerBlock(c) for _ in range(c.n_layers)])


class DistilBertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = DistilEmbeddings(c)
        self.transformer = DistilTransformer(c)

    def forward(self, input_ids, attention_mask=None, output_attentions=True, output_hidden_states=False,
                hook=None):
        x = self.embeddings(input_ids)
        attentions, hidden = [], [x]
        for i, layer in enumerate(self.transformer.layer):
            x, w = layer(x, attention_mask, hook, i)
            if output_attentions:
                attentions.append(w)
            hidden.append(x)
        return {"last_hidden_state": x, "attentions": attentions,
                "hidden_states": hidden if output_hidden_states else None}


class DistilBertForMaskedLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.activation = activation(c.activation)
        self.distilbert = DistilBertModel(c)
        self.vocab_transform = nn.Linear(c.dim, c.dim)
        self.vocab_layer_norm = nn.LayerNorm(c.dim, eps=1e-12)
        self.vocab_projector = nn.Linear(c.dim, c.vocab_size)
        self.vocab_projector.weight = self.distilbert.embeddings.word_embeddings.weight  # tied

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, output_attentions=True,
                output_hidden_states=False, logits=True, hook=None):
        out = self.distilbert(input_ids, attention_mask, output_attentions, output_hidden_states, hook)
        if logits:
            h = self.vocab_layer_norm(self.activation(self.vocab_transform(out["last_hidden_state"])))
            out["logits"] = self.vocab_projector(h)
        return out


# ---------------------------------------------------------------- GPT-2
class Conv1D(nn.Module):
    """transformers' Conv1D: a linear map with the weight stored [in, out]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).view(*x.shape[:-1], -1)


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        n = c.n_positions
        # Saved by older transformers versions; AttnScope ignores them.
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))
        self.register_buffer("masked_bias", torch.tensor(-1e4))
        self.n_head = c.n_head
        self.embed_dim = c.n_embd
        self.c_attn = Conv1D(3 * c.n_embd, c.n_embd)
        self.c_proj = Conv1D(c.n_embd, c.n_embd)

    def forward(self, x, hook=None, layer=0):
        b, n, d = x.shape
        dh = d // self.n_head
        q, k, v = self.c_attn(x).split(d, dim=2)

        def split(t):
            return t.view(b, n, self.n_head, dh).permute(0, 2, 1, 3)

        q, k, v = split(q), split(k), split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / (float(dh) ** 0.5)
        causal = self.bias[:, :, :n, :n].bool()
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        w = torch.softmax(w, dim=-1)
        ctx = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
        ctx = call_hook(hook, "z", layer, ctx).view(b, n, d)
        return call_hook(hook, "attn_out", layer, self.c_proj(ctx)), w


class GPT2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        inner = c.get("n_inner") or 4 * c.n_embd
        self.c_fc = Conv1D(inner, c.n_embd)
        self.c_proj = Conv1D(c.n_embd, inner)
        self.act = activation(c.get("activation_function", "gelu_new"))

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon)
        self.mlp = GPT2MLP(c)

    def forward(self, x, hook=None, layer=0):
        x = call_hook(hook, "resid_pre", layer, x)
        a, w = self.attn(self.ln_1(x), hook, layer)
        x = x + a
        return x + call_hook(hook, "mlp_out", layer, self.mlp(self.ln_2(x))), w


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c.vocab_size, c.n_embd)
        self.wpe = nn.Embedding(c.n_positions, c.n_embd)
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c.n_layer)])
        self.ln_f = nn.LayerNorm(c.n_embd, eps=c.layer_norm_epsilon)

    def forward(self, input_ids, output_attentions=True, output_hidden_states=False, hook=None):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)[None]
        x = self.wte(input_ids) + self.wpe(pos)
        attentions, hidden = [], []
        for i, block in enumerate(self.h):
            hidden.append(x)
            x, w = block(x, hook, i)
            if output_attentions:
                attentions.append(w)
        x = self.ln_f(x)
        hidden.append(x)
        return {"last_hidden_state": x, "attentions": attentions,
                "hidden_states": hidden if output_hidden_states else None}


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = GPT2Model(c)
        self.lm_head = nn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, output_attentions=True,
                output_hidden_states=False, logits=True, last_only=False, hook=None):
        out = self.transformer(input_ids, output_attentions, output_hidden_states, hook)
        if logits:
            h = out["last_hidden_state"]
            out["logits"] = self.lm_head(h[:, -1:] if last_only else h)
        return out


# ---------------------------------------------------------------- ViT
class ViTPatchEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.projection = nn.Conv2d(c.num_channels, c.hidden_size, kernel_size=c.patch_size, stride=c.patch_size)

    def forward(self, pixels):
        return self.projection(pixels).flatten(2).transpose(1, 2)


class ViTEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        patches = (c.image_size // c.patch_size) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, c.hidden_size) * 0.02)
        self.position_embeddings = nn.Parameter(torch.randn(1, patches + 1, c.hidden_size) * 0.02)
        self.patch_embeddings = ViTPatchEmbeddings(c)

    def forward(self, pixels):
        x = self.patch_embeddings(pixels)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        return x + self.position_embeddings


class ViTSelfAttention(BertSelfAttention):
    def __init__(self, c):
        super().__init__(c)
        if not c.get("qkv_bias", True):
            self.query = nn.Linear(c.hidden_size, c.hidden_size, bias=False)
            self.key = nn.Linear(c.hidden_size, c.hidden_size, bias=False)
            self.value = nn.Linear(c.hidden_size, c.hidden_size, bias=False)


class ViTSelfOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden_size, c.hidden_size)


class ViTAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = ViTSelfAttention(c)
        self.output = ViTSelfOutput(c)

    def forward(self, x, hook=None, layer=0):
        h, probs = self.attention(x, None, hook, layer)
        return call_hook(hook, "attn_out", layer, self.output.dense(h)), probs


class ViTOutput(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.intermediate_size, c.hidden_size)


class ViTLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = ViTAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = ViTOutput(c)
        self.layernorm_before = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)
        self.layernorm_after = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, x, hook=None, layer=0):
        x = call_hook(hook, "resid_pre", layer, x)
        a, probs = self.attention(self.layernorm_before(x), hook, layer)
        x = x + a
        mlp = self.output.dense(self.intermediate(self.layernorm_after(x)))
        return x + call_hook(hook, "mlp_out", layer, mlp), probs


class ViTEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([ViTLayer(c) for _ in range(c.num_hidden_layers)])


class ViTModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = ViTEmbeddings(c)
        self.encoder = ViTEncoder(c)
        self.layernorm = nn.LayerNorm(c.hidden_size, eps=c.layer_norm_eps)

    def forward(self, pixel_values, output_attentions=True, output_hidden_states=False, hook=None):
        x = self.embeddings(pixel_values)
        attentions, hidden = [], [x]
        for i, layer in enumerate(self.encoder.layer):
            x, probs = layer(x, hook, i)
            if output_attentions:
                attentions.append(probs)
            hidden.append(x)
        return {"last_hidden_state": self.layernorm(x), "attentions": attentions,
                "hidden_states": hidden if output_hidden_states else None}


class ViTForImageClassification(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.vit = ViTModel(c)
        self.classifier = nn.Linear(c.hidden_size, c.num_labels)

    def forward(self, pixel_values, output_attentions=True, output_hidden_states=False, logits=True, hook=None):
        out = self.vit(pixel_values, output_attentions, output_hidden_states, hook)
        if logits:
            out["logits"] = self.classifier(out["last_hidden_state"][:, 0])
        return out


# ---------------------------------------------------------------- construction
def config(family, hidden=768, heads=12, layers=12, intermediate=3072, vocab=30522, positions=512, **extra):
    """A config dict in the family's own config.json keys (what transformers writes)."""
    if family == "bert":
        c = dict(model_type="bert", architectures=["BertForMaskedLM"], hidden_size=hidden,
                 num_attention_heads=heads, num_hidden_layers=layers, intermediate_size=intermediate,
                 vocab_size=vocab, max_position_embeddings=positions, type_vocab_size=2, hidden_act="gelu",
                 layer_norm_eps=1e-12, pad_token_id=0)
    elif family == "distilbert":
        c = dict(model_type="distilbert", architectures=["DistilBertForMaskedLM"], dim=hidden, n_heads=heads,
                 n_layers=layers, hidden_dim=intermediate, vocab_size=vocab, max_position_embeddings=positions,
                 activation="gelu", sinusoidal_pos_embds=False, pad_token_id=0)
    elif family == "gpt2":
        c = dict(model_type="gpt2", architectures=["GPT2LMHeadModel"], n_embd=hidden, n_head=heads,
                 n_layer=layers, n_inner=intermediate, vocab_size=vocab, n_positions=positions, n_ctx=positions,
                 activation_function="gelu_new", layer_norm_epsilon=1e-5, bos_token_id=vocab - 1,
                 eos_token_id=vocab - 1)
    elif family == "vit":
        c = dict(model_type="vit", architectures=["ViTForImageClassification"], hidden_size=hidden,
                 num_attention_heads=heads, num_hidden_layers=layers, intermediate_size=intermediate,
                 hidden_act="gelu", layer_norm_eps=1e-12, image_size=224, patch_size=16, num_channels=3,
                 qkv_bias=True)
    else:
        raise ValueError(family)
    c.update(extra)
    return c


def build(family, **kwargs):
    """The family's model with the head (BertForMaskedLM, DistilBertForMaskedLM, GPT2LMHeadModel,
    ViTForImageClassification); kwargs as config(); ViT takes num_labels/id2label in kwargs."""
    c = Config(config(family, **kwargs))
    if family == "bert":
        return BertForMaskedLM(c)
    if family == "distilbert":
        return DistilBertForMaskedLM(c)
    if family == "gpt2":
        return GPT2LMHeadModel(c)
    if family == "vit":
        if "num_labels" not in c:
            c["num_labels"] = len(c.get("id2label", {})) or 2
        return ViTForImageClassification(c)
    raise ValueError(family)
