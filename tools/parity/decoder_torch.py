"""Reference torch implementations of today's decoder families (issue "Today's models"): Llama (2, 3, 3.1,
3.2, TinyLlama, SmolLM), Mistral, Qwen2, Qwen3, Gemma 2 and 3 (text) and Phi-3, written from the
architectures as Hugging Face transformers implements them, with Hugging Face's parameter names, so that a
state_dict of these modules is a Hugging Face checkpoint and a Hugging Face checkpoint loads into them.
The transformers package is not available here: nothing is imported from it.

One module, DecoderForCausalLM, with the switches each family sets (DecoderConfig.from_hf reads them from a
config.json the way each family's configuration class does):

  norm           RMSNorm x / sqrt(mean(x^2) + eps) * w; Gemma: * (1 + w)
  embedding      Gemma: scaled by sqrt(hidden_size)
  attention      q, k, v projections (Phi-3: one fused qkv_proj, rows q then k then v), grouped-query
                 (num_key_value_heads), explicit head_dim, biases on q, k, v (Qwen2, Llama attention_bias),
                 per-head RMSNorm on q and k before RoPE (Qwen3, Gemma 3), scaling head_dim^-0.5 or
                 query_pre_attn_scalar^-0.5 (Gemma), logit soft-capping tanh(s / c) c (Gemma 2),
                 causal; sliding window (visible: i - window < j <= i) on every layer (Mistral, Qwen2
                 with use_sliding_window) or on a pattern of layers (Gemma 2: even layers; Gemma 3: all but
                 every sliding_window_pattern-th)
  RoPE           rotate-half layout; partial_rotary_factor (the first head_dim * factor dimensions);
                 rope_scaling types default, linear, dynamic, llama3 and yarn (others refused by name);
                 Gemma 3's sliding layers use rope_local_base_freq without scaling
  MLP            down(act(gate(x)) * up(x)), act silu (SwiGLU) or gelu with the tanh approximation
                 (Gemma's GeGLU); Phi-3: one fused gate_up_proj, gate rows first
  blocks         pre-norm residual blocks; Gemma 2 and 3 also normalise the attention output
                 (post_attention_layernorm) and put the MLP between pre_feedforward_layernorm and
                 post_feedforward_layernorm
  head           final norm, lm_head or the tied embedding, final logit soft-capping (Gemma 2)

Dynamic RoPE follows transformers: each forward computes its inverse frequencies from the largest position
it sees (seq_len = last position + 1; no change up to max_position_embeddings), and keys already in the cache
keep the rotation they were computed with.

Forward: forward(ids, past=None) -> dict(logits [n, vocab], attentions: per layer [heads, n, past + n],
hidden: the residual stream after every layer [layers][n, d] (the logit lens reads these), past: the
key/value cache). One sequence at a time (no batch axis): what the engine and its fixtures need.

Hooks (interventions, TransformerLens style): forward(ids, hook=hook) calls hook(site, layer, tensor), which may
return a replacement of the same shape (None keeps the value). Sites, for each layer l: "resid_pre" [n, d], the
residual stream entering the layer (layer 0: the embeddings, Gemma's after the sqrt(d) scaling); "z"
[n, heads, head_dim], each query head's softmax(scores) V (grouped-query: the V of its group) before o_proj;
"attn_out" [n, d], o_proj(z) plus its bias (Gemma: after post_attention_layernorm), what the attention adds to
the residual stream; "mlp_out" [n, d], what the MLP adds (Gemma: after post_feedforward_layernorm). Without a
hook the computation is unchanged.
"""

import math

import torch
from torch import nn
import torch.nn.functional as F

SUPPORTED_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "phi3")
ROPE_TYPES = ("default", "linear", "dynamic", "llama3", "yarn")


class DecoderConfig:
    """The switches of one family, read from a Hugging Face config.json dict."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    @staticmethod
    def from_hf(c):
        t = c.get("model_type")
        if t == "gemma3":  # a multimodal Gemma 3's text part
            c = dict(c["text_config"], model_type="gemma3_text")
            t = "gemma3_text"
        if t not in SUPPORTED_TYPES:
            raise ValueError(f"model_type {t!r} is not one of {', '.join(SUPPORTED_TYPES)}")
        heads = c["num_attention_heads"]
        d = c["hidden_size"]
        gemma = t in ("gemma2", "gemma3_text")
        head_dim = c.get("head_dim") or d // heads
        layers = c["num_hidden_layers"]
        window = c.get("sliding_window")
        if t == "qwen2" and not c.get("use_sliding_window", False):
            window = None
        if t == "gemma2":
            sliding = [i % 2 == 0 for i in range(layers)]
        elif t == "gemma3_text":
            if "layer_types" in c:
                sliding = [k == "sliding_attention" for k in c["layer_types"]]
            else:
                pattern = c.get("sliding_window_pattern", 6)
                sliding = [(i + 1) % pattern != 0 for i in range(layers)]
        else:
            sliding = [window is not None] * layers
        scaling = c.get("rope_scaling")
        if scaling is not None:
            kind = scaling.get("rope_type", scaling.get("type"))
            if kind not in ROPE_TYPES:
                raise ValueError(f"rope_scaling type {kind!r} is not one of {', '.join(ROPE_TYPES)}")
        act = c.get("hidden_activation") or c.get("hidden_act", "silu")
        return DecoderConfig(
            model_type=t, vocab_size=c["vocab_size"], hidden_size=d, intermediate_size=c["intermediate_size"],
            layers=layers, heads=heads, kv_heads=c.get("num_key_value_heads", heads), head_dim=head_dim,
            eps=c.get("rms_norm_eps", 1e-6), rope_theta=c.get("rope_theta", 10000.0), rope_scaling=scaling,
            partial_rotary_factor=c.get("partial_rotary_factor", 1.0),
            max_position_embeddings=c.get("max_position_embeddings", 2048),
            tie=c.get("tie_word_embeddings", gemma), qkv_bias=t == "qwen2" or c.get("attention_bias", False),
            o_bias=c.get("attention_bias", False) and t != "qwen2", mlp_bias=c.get("mlp_bias", False),
            qk_norm=t in ("qwen3", "gemma3_text"), gemma=gemma,
            scaling=(c.get("query_pre_attn_scalar", head_dim) if gemma else head_dim) ** -0.5,
            attn_softcap=c.get("attn_logit_softcapping") if gemma else None,
            final_softcap=c.get("final_logit_softcapping") if gemma else None,
            window=window, sliding=sliding,
            local_rope_theta=c.get("rope_local_base_freq", 10000.0) if t == "gemma3_text" else None,
            act=act, fused=t == "phi3")


def call_hook(hook, site, layer, t):
    if hook is None:
        return t
    r = hook(site, layer, t)
    if r is None:
        return t
    assert r.shape == t.shape, (site, layer, tuple(r.shape), tuple(t.shape))
    return r.to(t.dtype).contiguous()


class RMSNorm(nn.Module):
    def __init__(self, dim, eps, gemma):
        super().__init__()
        self.eps, self.gemma = eps, gemma
        self.weight = nn.Parameter(torch.zeros(dim) if gemma else torch.ones(dim))

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * (1.0 + self.weight) if self.gemma else y * self.weight


def rope_inv_freq(cfg, seq_len, local=False):
    """(inverse frequencies [rotary_dim / 2], the factor cos and sin are multiplied by)."""
    dim = int(cfg.head_dim * cfg.partial_rotary_factor)
    base = cfg.local_rope_theta if local else cfg.rope_theta
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    inv = 1.0 / (base ** exponents)
    s = None if local else cfg.rope_scaling
    if s is None:
        return inv, 1.0
    kind = s.get("rope_type", s.get("type"))
    factor = s.get("factor", 1.0)
    if kind == "default":
        return inv, 1.0
    if kind == "linear":
        return inv / factor, 1.0
    if kind == "dynamic":
        m = cfg.max_position_embeddings
        if seq_len <= m:
            return inv, 1.0
        b = base * ((factor * seq_len / m) - (factor - 1)) ** (dim / (dim - 2))
        return 1.0 / (b ** exponents), 1.0
    if kind == "llama3":
        low, high = s["low_freq_factor"], s["high_freq_factor"]
        old = s["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, scaled), 1.0
    if kind == "yarn":
        m = s.get("original_max_position_embeddings") or cfg.max_position_embeddings

        def mscale(scale, k=1.0):
            return 1.0 if scale <= 1 else 0.1 * k * math.log(scale) + 1.0

        attention = s.get("attention_factor")
        if attention is None:
            if s.get("mscale") and s.get("mscale_all_dim"):
                attention = mscale(factor, s["mscale"]) / mscale(factor, s["mscale_all_dim"])
            else:
                attention = mscale(factor)
        fast, slow = s.get("beta_fast") or 32, s.get("beta_slow") or 1

        def correction_dim(rotations):
            return (dim * math.log(m / (rotations * 2 * math.pi))) / (2 * math.log(base))

        lo = max(math.floor(correction_dim(fast)), 0)
        hi = min(math.ceil(correction_dim(slow)), dim - 1)
        if lo == hi:
            hi += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float64) - lo) / (hi - lo)).clamp(0, 1)
        extrapolation = 1 - ramp
        inv_interp = inv / factor
        return inv_interp * (1 - extrapolation) + inv * extrapolation, attention
    raise ValueError(f"rope_scaling type {kind!r} is not one of {', '.join(ROPE_TYPES)}")


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def apply_rope(x, positions, inv, factor):
    """x [heads, n, head_dim]: the first 2 len(inv) dimensions rotated (rotate-half), the rest unchanged."""
    r = 2 * inv.shape[0]
    freqs = positions[:, None].to(torch.float64) * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * factor).to(x.dtype), (emb.sin() * factor).to(x.dtype)
    rot, rest = x[..., :r], x[..., r:]
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg, layer):
        super().__init__()
        self.cfg, self.layer = cfg, layer
        d, hd, h, kv = cfg.hidden_size, cfg.head_dim, cfg.heads, cfg.kv_heads
        if cfg.fused:
            self.qkv_proj = nn.Linear(d, (h + 2 * kv) * hd, bias=False)
        else:
            self.q_proj = nn.Linear(d, h * hd, bias=cfg.qkv_bias)
            self.k_proj = nn.Linear(d, kv * hd, bias=cfg.qkv_bias)
            self.v_proj = nn.Linear(d, kv * hd, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(h * hd, d, bias=cfg.o_bias)
        if cfg.qk_norm:
            self.q_norm = RMSNorm(hd, cfg.eps, cfg.gemma)
            self.k_norm = RMSNorm(hd, cfg.eps, cfg.gemma)

    def forward(self, x, positions, past, hook=None):
        cfg = self.cfg
        n, h, kv, hd = x.shape[0], cfg.heads, cfg.kv_heads, cfg.head_dim
        if cfg.fused:
            qkv = self.qkv_proj(x)
            q, k, v = qkv.split([h * hd, kv * hd, kv * hd], dim=-1)
        else:
            q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        q = q.view(n, h, hd).transpose(0, 1)
        k = k.view(n, kv, hd).transpose(0, 1)
        v = v.view(n, kv, hd).transpose(0, 1)
        if cfg.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        local = cfg.local_rope_theta is not None and cfg.sliding[self.layer]
        inv, factor = rope_inv_freq(cfg, int(positions[-1]) + 1, local)
        q, k = apply_rope(q, positions, inv, factor), apply_rope(k, positions, inv, factor)
        if past is not None:
            k, v = torch.cat((past[0], k), dim=1), torch.cat((past[1], v), dim=1)
        present = (k, v)
        group = h // kv
        kk, vv = k.repeat_interleave(group, dim=0), v.repeat_interleave(group, dim=0)
        scores = (q @ kk.transpose(1, 2)) * cfg.scaling
        if cfg.attn_softcap:
            scores = torch.tanh(scores / cfg.attn_softcap) * cfg.attn_softcap
        total = k.shape[1]
        i = positions[:, None]
        j = torch.arange(total)[None, :]
        visible = j <= i
        if cfg.sliding[self.layer] and cfg.window is not None:
            visible = visible & (i - j < cfg.window)
        scores = scores.masked_fill(~visible[None], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        out = (probs @ vv).transpose(0, 1)
        out = call_hook(hook, "z", self.layer, out).reshape(n, h * hd)
        return self.o_proj(out), probs, present


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, m = cfg.hidden_size, cfg.intermediate_size
        self.fused = cfg.fused
        if cfg.fused:
            self.gate_up_proj = nn.Linear(d, 2 * m, bias=False)
        else:
            self.gate_proj = nn.Linear(d, m, bias=cfg.mlp_bias)
            self.up_proj = nn.Linear(d, m, bias=cfg.mlp_bias)
        self.down_proj = nn.Linear(m, d, bias=cfg.mlp_bias)
        if cfg.act in ("silu", "swish"):
            self.act = F.silu
        elif cfg.act in ("gelu_pytorch_tanh", "gelu_new", "gelu_fast"):
            self.act = lambda t: F.gelu(t, approximate="tanh")
        elif cfg.act == "gelu":
            self.act = F.gelu
        else:
            raise ValueError(f"activation {cfg.act!r} is not one of silu, gelu, gelu_pytorch_tanh")

    def forward(self, x):
        if self.fused:
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        else:
            gate, up = self.gate_proj(x), self.up_proj(x)
        return self.down_proj(self.act(gate) * up)


class DecoderLayer(nn.Module):
    def __init__(self, cfg, layer):
        super().__init__()
        self.gemma = cfg.gemma
        self.self_attn = Attention(cfg, layer)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.eps, cfg.gemma)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.eps, cfg.gemma)
        if cfg.gemma:
            self.pre_feedforward_layernorm = RMSNorm(cfg.hidden_size, cfg.eps, True)
            self.post_feedforward_layernorm = RMSNorm(cfg.hidden_size, cfg.eps, True)

    def forward(self, x, positions, past, hook=None):
        layer = self.self_attn.layer
        x = call_hook(hook, "resid_pre", layer, x)
        a, probs, present = self.self_attn(self.input_layernorm(x), positions, past, hook)
        if self.gemma:
            x = x + call_hook(hook, "attn_out", layer, self.post_attention_layernorm(a))
            mlp = self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))
            x = x + call_hook(hook, "mlp_out", layer, mlp)
        else:
            x = x + call_hook(hook, "attn_out", layer, a)
            x = x + call_hook(hook, "mlp_out", layer, self.mlp(self.post_attention_layernorm(x)))
        return x, probs, present


class DecoderModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.eps, cfg.gemma)


class DecoderForCausalLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.model = DecoderModel(cfg)
        if not cfg.tie:
            self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def unembed(self, h):
        """The final norm, the output matrix and the final soft-capping: the logit lens applies this to any
        layer's residual stream."""
        h = self.model.norm(h)
        w = self.model.embed_tokens.weight if self.cfg.tie else self.lm_head.weight
        logits = h @ w.T
        if self.cfg.final_softcap:
            logits = torch.tanh(logits / self.cfg.final_softcap) * self.cfg.final_softcap
        return logits

    def forward(self, ids, past=None, hook=None):
        start = 0 if past is None else past[0][0].shape[1]
        positions = torch.arange(start, start + ids.shape[0])
        x = self.model.embed_tokens(ids)
        if self.cfg.gemma:
            x = x * torch.tensor(self.cfg.hidden_size ** 0.5, dtype=x.dtype)
        attentions, hidden, presents = [], [], []
        for i, layer in enumerate(self.model.layers):
            x, probs, present = layer(x, positions, None if past is None else past[i], hook)
            attentions.append(probs)
            hidden.append(x)
            presents.append(present)
        return {"logits": self.unembed(x), "attentions": attentions, "hidden": hidden, "past": presents}

    @torch.no_grad()
    def generate_greedy(self, ids, steps, eos=None):
        """Greedy continuation with the key/value cache: the new ids, and each step's attentions
        (per layer [heads, 1, total])."""
        out = self(ids)
        past, new, step_maps = out["past"], [], []
        nxt = int(out["logits"][-1].argmax())
        for _ in range(steps):
            new.append(nxt)
            if eos is not None and nxt == eos:
                break
            out = self(torch.tensor([nxt]), past)
            past = out["past"]
            step_maps.append(out["attentions"])
            nxt = int(out["logits"][-1].argmax())
        return new, step_maps


def build(config_json):
    return DecoderForCausalLM(DecoderConfig.from_hf(config_json))
