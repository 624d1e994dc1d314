#!/usr/bin/python3
"""Parity fixtures for the engine's mechanisms, written from Debian's python3-torch.

Regenerate (from the repository root; the fixtures are committed, so only after changing this script):

    /usr/bin/python3 tools/parity/make_fixtures.py

Use /usr/bin/python3 explicitly: that is the interpreter Debian's python3-torch is installed for.
The script writes one JSON file per case under tests/data/parity/ and is idempotent: every input comes
from a fixed seed, and the same torch/numpy give the same bytes on every run (check with `git diff`).
tests/parity/ reads the files (engine_parity_tests) and compares the engine within 1e-5 absolute.

Conventions
- Inputs are drawn in float64, rounded to float32 and stored as float32; references are computed in
  float64 from those float32 inputs and rounded to float32 once, when written.
- Numbers are written as numpy's shortest repr of the float32 value; every one is checked to come back
  bit-exact through strtod + a cast to float, which is how nlohmann::json and the C++ loader read them.
- A tensor is {"shape": [...], "data": nested lists}; a boolean tensor (mask "keep" patterns) holds
  true/false. Matrices are row-major, rows = queries, columns = keys, weights in [out, in] layout.
- Where two references exist they are checked against each other here (torch op vs formula), with an
  assertion, so a wrong reference cannot be written.
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT_DIR = os.path.join(ROOT, "tests", "data", "parity")
FORMAT_VERSION = 1
F64 = torch.float64

torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------------
# Deterministic inputs


def rng(seed):
    return np.random.default_rng(seed)


def normal(seed, shape, scale=1.0, offset=0.0):
    """float32-representable values, returned as a float64 tensor (the exact float32 values)."""
    x = rng(seed).standard_normal(shape) * scale + offset
    return torch.from_numpy(x.astype(np.float32).astype(np.float64))


def uniform(seed, shape, low, high):
    x = rng(seed).uniform(low, high, shape)
    return torch.from_numpy(x.astype(np.float32).astype(np.float64))


def as_f32(t):
    """Rounds a float64 tensor to float32 values (kept as float64 so references stay in float64)."""
    return t.to(torch.float32).to(F64)


# ---------------------------------------------------------------------------------------------------
# Writing


def fmt(x):
    f = np.float32(x)
    if not np.isfinite(f):
        raise ValueError(f"non-finite value {x!r} cannot be written to a fixture")
    s = str(f)
    # The C++ side parses with strtod (to double) and casts to float: make sure that is bit-exact.
    back = np.float32(float(s))
    assert back.tobytes() == f.tobytes(), (s, x)
    return s


def emit_data(a, indent):
    if a.ndim == 0:
        return fmt(a) if a.dtype != np.bool_ else ("true" if a else "false")
    if a.ndim == 1:
        if a.dtype == np.bool_:
            return "[" + ", ".join("true" if v else "false" for v in a) + "]"
        return "[" + ", ".join(fmt(v) for v in a) + "]"
    pad = " " * (indent + 1)
    inner = (",\n" + pad).join(emit_data(sub, indent + 1) for sub in a)
    return "[" + inner + "]"


def emit_tensor(t, indent):
    a = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    if a.dtype != np.bool_:
        a = a.astype(np.float64)
    pad = " " * indent
    shape = json.dumps(list(a.shape))
    return "{\n" + pad + '  "shape": ' + shape + ",\n" + pad + '  "data": ' + emit_data(a, indent + 10) + "\n" + pad + "}"


def write_case(name, kind, description, params, inputs, expected):
    """inputs / expected: dict name -> tensor (order kept)."""
    parts = [
        "{",
        f'  "format": {FORMAT_VERSION},',
        f'  "case": {json.dumps(name)},',
        f'  "kind": {json.dumps(kind)},',
        f'  "description": {json.dumps(description)},',
        '  "generator": "tools/parity/make_fixtures.py",',
        f'  "params": {json.dumps(params, sort_keys=True)},',
    ]
    for section, tensors in (("inputs", inputs), ("expected", expected)):
        items = []
        for key, t in tensors.items():
            items.append(f'    {json.dumps(key)}: ' + emit_tensor(t, 4))
        parts.append(f'  "{section}": {{\n' + ",\n".join(items) + "\n  }" + ("," if section == "inputs" else ""))
    parts.append("}")
    text = "\n".join(parts) + "\n"
    json.loads(text)  # must be valid JSON
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return path, len(text)


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def close(a, b, tol=1e-10, what=""):
    err = (a - b).abs().max().item() if a.numel() else 0.0
    assert err <= tol, f"references disagree ({what}): max |diff| = {err}"


# ---------------------------------------------------------------------------------------------------
# Masks (additive convention of engine/include/attn/mechanisms/normalise.h: 0 keeps, -inf removes)


def causal_keep(n, m):
    # query i sees keys j <= i + (m - n): aligned at the end when m > n.
    i = torch.arange(n).unsqueeze(1)
    j = torch.arange(m).unsqueeze(0)
    return j <= i + (m - n)


def padding_keep(n, m, valid):
    return (torch.arange(m) < valid).unsqueeze(0).expand(n, m).clone()


def additive(keep):
    return torch.where(keep, torch.zeros((), dtype=F64), torch.full((), -math.inf, dtype=F64))


# ---------------------------------------------------------------------------------------------------
# Normalisers


def softmax_ref(scores, temperature, keep):
    """torch.softmax over float64, fully masked rows -> zeros (the engine's documented convention)."""
    z = scores / temperature
    if keep is not None:
        z = z + additive(keep)
    p = torch.softmax(z, dim=-1)
    dead = ~torch.isfinite(z).any(dim=-1, keepdim=True)
    p = torch.where(dead, torch.zeros((), dtype=F64), p)
    # Second reference: exp / sum over the kept entries only.
    manual = torch.zeros_like(scores)
    for r in range(scores.shape[0]):
        idx = [c for c in range(scores.shape[1]) if keep is None or bool(keep[r, c])]
        if idx:
            row = z[r, idx]
            e = torch.exp(row - row.max())
            manual[r, idx] = e / e.sum()
    close(p, manual, 1e-14, "softmax torch vs exp/sum")
    assert torch.isfinite(p).all()
    return p


def sparsemax_sort(z):
    """Martins & Astudillo 2016, Algorithm 1, for one row of finite scores (float64 torch)."""
    zs, _ = torch.sort(z, descending=True)
    k = torch.arange(1, z.numel() + 1, dtype=F64)
    cs = torch.cumsum(zs, 0)
    support = 1 + k * zs > cs
    kz = int(support.nonzero().max().item()) + 1
    tau = (cs[kz - 1] - 1) / kz
    return torch.clamp(z - tau, min=0)


def sparsemax_bisect(z):
    """Independent reference: tau solving sum(max(z - tau, 0)) = 1 by bisection."""
    lo, hi = z.max().item() - 1.0, z.max().item()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if torch.clamp(z - mid, min=0).sum().item() > 1.0:
            lo = mid
        else:
            hi = mid
    return torch.clamp(z - 0.5 * (lo + hi), min=0)


def sparsemax_ref(scores, temperature, keep):
    z = scores / temperature
    out = torch.zeros_like(z)
    for r in range(z.shape[0]):
        idx = [c for c in range(z.shape[1]) if keep is None or bool(keep[r, c])]
        if not idx:
            continue
        row = z[r, idx]
        p = sparsemax_sort(row)
        close(p, sparsemax_bisect(row), 1e-12, "sparsemax sort vs bisection")
        assert abs(p.sum().item() - 1.0) < 1e-12
        out[r, idx] = p
    return out


def normaliser_case(name, normaliser, description, scores, temperature, mask_kind, keep, extra=None):
    n, m = scores.shape
    params = {"normaliser": normaliser, "temperature": temperature, "mask": mask_kind}
    if extra:
        params.update(extra)
    ref = (softmax_ref if normaliser == "softmax" else sparsemax_ref)(scores, temperature, keep)
    inputs = {"scores": scores}
    if keep is not None:
        inputs["keep"] = keep
    return write_case(name, "normalise", description, params, inputs, {"weights": ref})


@case
def softmax_plain():
    s = normal(101, (4, 6), 2.0)
    return normaliser_case("softmax_plain", "softmax", "row softmax, no mask", s, 1.0, "none", None)


@case
def softmax_temperature_low():
    s = normal(102, (5, 7), 1.5)
    return normaliser_case("softmax_temperature_low", "softmax", "softmax(scores / 0.5)", s, 0.5, "none", None)


@case
def softmax_temperature_high():
    s = normal(103, (5, 7), 3.0)
    return normaliser_case("softmax_temperature_high", "softmax", "softmax(scores / 4)", s, 4.0, "none", None)


@case
def softmax_causal_square():
    s = normal(104, (6, 6), 2.0)
    keep = causal_keep(6, 6)
    square = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1).logical_not()
    assert torch.equal(keep, square)
    return normaliser_case("softmax_causal_square", "softmax", "causal mask, n = m", s, 1.0, "causal", keep)


@case
def softmax_causal_rect():
    s = normal(105, (4, 7), 2.0)
    keep = causal_keep(4, 7)
    # Aligned at the end: the last query sees every key, the first sees m - n + 1 keys.
    assert bool(keep[-1].all()) and int(keep[0].sum()) == 4
    return normaliser_case("softmax_causal_rect", "softmax", "causal mask aligned at the end, n=4 < m=7",
                           s, 1.0, "causal", keep)


@case
def softmax_padding():
    s = normal(106, (5, 8), 2.0)
    keep = padding_keep(5, 8, 5)
    return normaliser_case("softmax_padding", "softmax", "padding mask, 5 of 8 keys valid, T = 2",
                           s, 2.0, "padding", keep, {"valid_keys": 5})


@case
def softmax_boolean():
    s = normal(107, (6, 7), 2.0)
    keep = torch.from_numpy(rng(1107).random((6, 7)) < 0.55)
    keep[2, :] = False  # fully masked row -> zeros
    keep[4, :] = False
    keep[4, 3] = True   # a single kept key -> weight exactly 1
    keep[0, :] = True   # a row with nothing masked
    return normaliser_case("softmax_boolean", "softmax",
                           "arbitrary boolean mask; row 2 fully masked (zeros), row 4 keeps one key",
                           s, 1.0, "boolean", keep)


@case
def softmax_large_scores():
    # Max subtraction matters: exp(90) overflows float32.
    s = normal(108, (3, 5), 1.0, 90.0)
    s[1, 2] = 120.0
    return normaliser_case("softmax_large_scores", "softmax", "scores near 90..120: needs max subtraction",
                           s, 1.0, "none", None)


@case
def sparsemax_plain():
    s = normal(111, (6, 8), 1.0)
    return normaliser_case("sparsemax_plain", "sparsemax", "row sparsemax, no mask", s, 1.0, "none", None)


@case
def sparsemax_temperature():
    s = normal(112, (5, 6), 1.0)
    return normaliser_case("sparsemax_temperature", "sparsemax", "sparsemax(scores / 0.25): sparser", s, 0.25,
                           "none", None)


@case
def sparsemax_boolean():
    s = normal(113, (5, 7), 1.0)
    keep = torch.from_numpy(rng(1113).random((5, 7)) < 0.6)
    keep[1, :] = False  # fully masked row -> zeros
    keep[3, :] = True
    return normaliser_case("sparsemax_boolean", "sparsemax", "sparsemax with a boolean mask; row 1 fully masked",
                           s, 1.0, "boolean", keep)


@case
def sparsemax_causal():
    s = normal(114, (5, 5), 0.7)
    return normaliser_case("sparsemax_causal", "sparsemax", "sparsemax with a causal mask, T = 2", s, 2.0,
                           "causal", causal_keep(5, 5))


# ---------------------------------------------------------------------------------------------------
# Scores


def additive_ref(q, k, W, U, v):
    # v^T tanh(W q_i + U k_j): (n, 1, da) + (1, m, da)
    return torch.tanh((q @ W.T).unsqueeze(1) + (k @ U.T).unsqueeze(0)) @ v


def concat_ref(q, k, W, v):
    n, m = q.shape[0], k.shape[0]
    qk = torch.cat([q.unsqueeze(1).expand(n, m, -1), k.unsqueeze(0).expand(n, m, -1)], dim=-1)
    out = torch.tanh(qk @ W.T) @ v
    # Concat with W = [Wq | Wk] is additive with W = Wq, U = Wk.
    dq = q.shape[1]
    close(out, additive_ref(q, k, W[:, :dq], W[:, dq:], v), 1e-12, "concat vs additive split")
    return out


def score_ref(kind, q, k, w):
    d = q.shape[1]
    if kind == "dot":
        return q @ k.T
    if kind == "scaled_dot":
        out = q @ k.T / math.sqrt(d)
        # torch's own scaled dot product (F._scaled_dot_product_attention is private in 1.13): compare
        # against bmm over a batch of one.
        close(out, torch.bmm(q.unsqueeze(0) / math.sqrt(d), k.T.unsqueeze(0))[0], 1e-12, "scaled dot")
        return out
    if kind == "general":
        out = q @ w["W"] @ k.T
        close(out, torch.einsum("id,de,je->ij", q, w["W"], k), 1e-12, "general einsum")
        close(out, F.bilinear(q.unsqueeze(1).expand(-1, k.shape[0], -1).reshape(-1, d),
                              k.unsqueeze(0).expand(q.shape[0], -1, -1).reshape(-1, k.shape[1]),
                              w["W"].unsqueeze(0)).reshape(q.shape[0], k.shape[0]), 1e-12, "general vs F.bilinear")
        return out
    if kind == "cosine":
        out = (q / q.norm(dim=1, keepdim=True)) @ (k / k.norm(dim=1, keepdim=True)).T
        close(out, F.cosine_similarity(q.unsqueeze(1), k.unsqueeze(0), dim=-1), 1e-12, "cosine vs F")
        return out
    if kind == "additive":
        return additive_ref(q, k, w["W"], w["U"], w["v"])
    if kind == "concat":
        return concat_ref(q, k, w["W"], w["v"])
    if kind == "location":
        return q @ w["W"].T
    raise ValueError(kind)


def score_weights(kind, dq, dk, da, m, seed):
    w = {}
    if kind == "general":
        w["W"] = normal(seed + 1, (dq, dk), 1.0 / math.sqrt(dq))
    elif kind == "additive":
        w["W"] = normal(seed + 1, (da, dq), 1.0 / math.sqrt(dq))
        w["U"] = normal(seed + 2, (da, dk), 1.0 / math.sqrt(dk))
        w["v"] = normal(seed + 3, (da,), 1.0 / math.sqrt(da))
    elif kind == "concat":
        w["W"] = normal(seed + 1, (da, dq + dk), 1.0 / math.sqrt(dq + dk))
        w["v"] = normal(seed + 3, (da,), 1.0 / math.sqrt(da))
    elif kind == "location":
        w["W"] = normal(seed + 1, (m, dq), 1.0 / math.sqrt(dq))
    return w


def score_case(kind, n, m, dq, dk, da, seed):
    name = f"score_{kind}"
    q = normal(seed, (n, dq))
    k = normal(seed + 10, (m, dk))
    if kind == "cosine":
        k[2] = q[1] * 2.5  # parallel vectors of different length: cosine exactly 1 up to rounding
        k[2] = as_f32(k[2])
    w = score_weights(kind, dq, dk, da, m, seed + 20)
    ref = score_ref(kind, q, k, w)
    inputs = {"q": q, "k": k}
    assert not set(w) & set(inputs)
    inputs.update(w)
    formulas = {
        "dot": "q . k", "scaled_dot": "q . k / sqrt(d)", "general": "q^T W k",
        "additive": "v^T tanh(W q + U k) (Bahdanau)", "concat": "v^T tanh(W [q; k])",
        "cosine": "q . k / (|q| |k|)", "location": "W q (scores depend on the query only)",
    }
    return write_case(name, "score", f"{kind} score: {formulas[kind]}", {"score": kind, "da": da},
                      inputs, {"scores": ref})


@case
def score_dot():
    return score_case("dot", 4, 6, 8, 8, 0, 201)


@case
def score_scaled_dot():
    return score_case("scaled_dot", 5, 7, 16, 16, 0, 211)


@case
def score_general():
    return score_case("general", 4, 6, 8, 6, 0, 221)


@case
def score_additive():
    return score_case("additive", 4, 6, 8, 6, 10, 231)


@case
def score_concat():
    return score_case("concat", 4, 6, 8, 6, 10, 241)


@case
def score_cosine():
    return score_case("cosine", 5, 6, 8, 8, 0, 251)


@case
def score_location():
    return score_case("location", 4, 6, 8, 8, 0, 261)


# ---------------------------------------------------------------------------------------------------
# Global attention: weights = normalise(score(Q, K) / T + mask), context = weights V


def attention_case(name, kind, normaliser, temperature, n, m, d, dv, da, seed, mask_kind="none", description=""):
    q = normal(seed, (n, d))
    k = normal(seed + 10, (m, d))
    v = normal(seed + 30, (m, dv))
    w = score_weights(kind, d, d, da, m, seed + 20)
    scores = score_ref(kind, q, k, w)
    keep = causal_keep(n, m) if mask_kind == "causal" else None
    norm = softmax_ref if normaliser == "softmax" else sparsemax_ref
    weights = norm(scores, temperature, keep)
    context = weights @ v
    close(context, torch.einsum("ij,jd->id", weights, v), 1e-12, "context")
    # "values", not "v": "v" is the additive / concat score vector.
    inputs = {"q": q, "k": k, "values": v}
    assert not set(w) & set(inputs), "a score weight would overwrite an input"
    inputs.update(w)
    if keep is not None:
        inputs["keep"] = keep
    params = {"score": kind, "normaliser": normaliser, "temperature": temperature, "mask": mask_kind, "da": da}
    return write_case(name, "global_attention", description, params, inputs,
                      {"scores": scores, "weights": weights, "context": context})


@case
def attention_additive():
    return attention_case("attention_additive", "additive", "softmax", 1.0, 4, 6, 8, 5, 10, 301,
                          description="Bahdanau attention: softmax(v^T tanh(W q + U k)) V")


@case
def attention_concat():
    return attention_case("attention_concat", "concat", "softmax", 1.0, 5, 6, 8, 4, 12, 311,
                          description="Luong concat attention: softmax(v^T tanh(W [q; k])) V")


@case
def attention_general_temperature():
    return attention_case("attention_general_temperature", "general", "softmax", 0.5, 4, 5, 6, 6, 0, 321,
                          description="Luong general attention, softmax(q^T W k / 0.5) V")


@case
def attention_scaled_dot_causal():
    return attention_case("attention_scaled_dot_causal", "scaled_dot", "softmax", 1.0, 6, 6, 8, 8, 0, 331, "causal",
                          description="scaled dot attention with a causal mask")


@case
def attention_scaled_dot_sparsemax():
    return attention_case("attention_scaled_dot_sparsemax", "scaled_dot", "sparsemax", 1.0, 5, 7, 8, 3, 0, 341,
                          description="scaled dot attention normalised by sparsemax")


# ---------------------------------------------------------------------------------------------------
# Multi-head attention against torch.nn.functional.multi_head_attention_forward


def mha_manual(xq, xkv, w, heads, temperature, mask):
    """Per-head formula, independent of torch's MHA code."""
    n, E = xq.shape
    dh = E // heads

    def lin(x, W, b):
        return x @ W.T + (b if b is not None else 0)

    Q, K, V = lin(xq, w["Wq"], w.get("bq")), lin(xkv, w["Wk"], w.get("bk")), lin(xkv, w["Wv"], w.get("bv"))
    weights, ctx = [], []
    for h in range(heads):
        sl = slice(h * dh, (h + 1) * dh)
        s = Q[:, sl] @ K[:, sl].T / math.sqrt(dh) / temperature
        if mask is not None:
            s = s + mask
        p = torch.softmax(s, dim=-1)
        weights.append(p)
        ctx.append(p @ V[:, sl])
    context = torch.cat(ctx, dim=1)
    return torch.stack(weights), context, lin(context, w["Wo"], w.get("bo"))


def mha_case(name, description, n, m, E, heads, seed, *, cross, causal=False, valid_keys=None, temperature=1.0,
             bias=True, packed=True):
    xq = normal(seed, (n, E))
    xkv = normal(seed + 1, (m, E)) if cross else xq
    s = 1.0 / math.sqrt(E)
    w = {"Wq": normal(seed + 2, (E, E), s), "Wk": normal(seed + 3, (E, E), s), "Wv": normal(seed + 4, (E, E), s)}
    if bias:
        w.update({"bq": normal(seed + 5, (E,), 0.1), "bk": normal(seed + 6, (E,), 0.1),
                  "bv": normal(seed + 7, (E,), 0.1)})
    w["Wo"] = normal(seed + 8, (E, E), s)
    if bias:
        w["bo"] = normal(seed + 9, (E,), 0.1)

    keep = None
    if causal:
        keep = causal_keep(n, m)
    if valid_keys is not None:
        pk = padding_keep(n, m, valid_keys)
        keep = pk if keep is None else keep & pk
    mask = additive(keep) if keep is not None else None

    # torch: temperature folded into the query projection, (x Wq^T + bq) / T, which is exactly dividing
    # the scaled scores by T.
    Wq_t = w["Wq"] / temperature
    bq_t = w["bq"] / temperature if bias else None
    attn_mask = additive(causal_keep(n, m)) if causal else None
    key_padding_mask = (torch.arange(m) >= valid_keys).unsqueeze(0) if valid_keys is not None else None
    q3, kv3 = xq.unsqueeze(1), xkv.unsqueeze(1)  # (L, N=1, E)
    common = dict(embed_dim_to_check=E, num_heads=heads, bias_k=None, bias_v=None, add_zero_attn=False,
                  dropout_p=0.0, out_proj_weight=w["Wo"], out_proj_bias=w.get("bo"), training=False,
                  key_padding_mask=key_padding_mask, need_weights=True, attn_mask=attn_mask,
                  average_attn_weights=False)
    in_bias = torch.cat([bq_t, w["bk"], w["bv"]]) if bias else None
    if packed:
        out, attw = F.multi_head_attention_forward(q3, kv3, kv3, in_proj_weight=torch.cat([Wq_t, w["Wk"], w["Wv"]]),
                                                   in_proj_bias=in_bias, **common)
    else:
        out, attw = F.multi_head_attention_forward(q3, kv3, kv3, in_proj_weight=None, in_proj_bias=in_bias,
                                                   use_separate_proj_weight=True, q_proj_weight=Wq_t,
                                                   k_proj_weight=w["Wk"], v_proj_weight=w["Wv"], **common)
    out = out[:, 0, :]
    attw = attw[0]  # (heads, n, m)
    assert attw.shape == (heads, n, m) and out.shape == (n, E)

    m_weights, m_context, m_out = mha_manual(xq, xkv, w, heads, temperature, mask)
    close(attw, m_weights, 1e-12, f"{name}: torch MHA weights vs per-head formula")
    close(out, m_out, 1e-12, f"{name}: torch MHA output vs per-head formula")

    inputs = {"xq": xq}
    if cross:
        inputs["xkv"] = xkv
    assert not set(w) & set(inputs)
    inputs.update(w)
    params = {"heads": heads, "model_dim": E, "causal": causal, "temperature": temperature, "cross": cross,
              "valid_keys": valid_keys if valid_keys is not None else -1, "bias": bias,
              "torch_projection": "packed in_proj_weight" if packed else "use_separate_proj_weight"}
    return write_case(name, "multi_head", description, params, inputs,
                      {"head_weights": attw, "context": m_context, "output": out})


@case
def mha_self():
    return mha_case("mha_self", "self-attention, 4 heads, packed in_proj", 7, 7, 16, 4, 401, cross=False)


@case
def mha_self_causal():
    return mha_case("mha_self_causal", "self-attention with a causal attn_mask, 4 heads", 7, 7, 16, 4, 411,
                    cross=False, causal=True)


@case
def mha_cross():
    return mha_case("mha_cross", "cross-attention n=5 != m=9, 3 heads, use_separate_proj_weight", 5, 9, 24, 3, 421,
                    cross=True, packed=False)


@case
def mha_cross_causal():
    return mha_case("mha_cross_causal", "cross-attention n=4 < m=7 with a causal mask aligned at the end", 4, 7, 16, 2,
                    431, cross=True, causal=True, packed=False)


@case
def mha_self_padding():
    return mha_case("mha_self_padding", "self-attention, key_padding_mask: 4 of 6 keys valid (engine: padding_mask)",
                    6, 6, 16, 4, 441, cross=False, valid_keys=4)


@case
def mha_self_temperature():
    return mha_case("mha_self_temperature", "self-attention, temperature 2 (torch: query projection / 2)", 6, 6, 16,
                    4, 451, cross=False, temperature=2.0)


@case
def mha_cross_nobias():
    return mha_case("mha_cross_nobias", "cross-attention without biases (bq..bo empty), 8 heads of 4", 3, 6, 32, 8,
                    461, cross=True, bias=False)


# ---------------------------------------------------------------------------------------------------
# Blocks: layer norm, GELU, sinusoidal positions, feed-forward


def layer_norm_case(name, description, n, d, eps, seed, offset):
    x = normal(seed, (n, d), 2.0, offset)
    gamma = normal(seed + 1, (d,), 0.5, 1.0)
    beta = normal(seed + 2, (d,), 0.2)
    ref = F.layer_norm(x, (d,), gamma, beta, eps)
    mu = x.mean(dim=1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=1, keepdim=True)
    close(ref, (x - mu) / torch.sqrt(var + eps) * gamma + beta, 1e-12, "layer_norm vs formula")
    return write_case(name, "layer_norm", description, {"eps": eps}, {"x": x, "gamma": gamma, "beta": beta},
                      {"y": ref})


@case
def layer_norm_default():
    return layer_norm_case("layer_norm_default", "F.layer_norm, eps 1e-5", 6, 16, 1e-5, 501, 0.0)


@case
def layer_norm_offset():
    return layer_norm_case("layer_norm_offset", "F.layer_norm, eps 1e-3, inputs centred at 10 (two-pass variance)",
                           5, 32, 1e-3, 511, 10.0)


def gelu_case(name, approximate):
    x = torch.cat([torch.linspace(-6.0, 6.0, 61, dtype=F64), normal(601, (35,), 2.0),
                   torch.tensor([0.0, -0.0, 1e-3, -1e-3, 10.0, -10.0, 20.0, -20.0], dtype=F64)])
    x = as_f32(x).reshape(8, 13)
    ref = F.gelu(x, approximate=approximate)
    if approximate == "none":
        manual = x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
        formula = "x Phi(x) = x/2 (1 + erf(x / sqrt 2))"
    else:
        manual = 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
        formula = "x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
    close(ref, manual, 1e-12, f"gelu {approximate}")
    return write_case(name, "gelu", f"F.gelu(approximate='{approximate}'): {formula}",
                      {"form": "erf" if approximate == "none" else "tanh"}, {"x": x}, {"y": ref})


@case
def gelu_erf():
    return gelu_case("gelu_erf", "none")


@case
def gelu_tanh():
    return gelu_case("gelu_tanh", "tanh")


def sinusoidal_case(name, n, d):
    pos = torch.arange(n, dtype=F64).unsqueeze(1)
    col = torch.arange(d)
    # PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
    rate = torch.pow(torch.tensor(10000.0, dtype=F64), -(2 * (col // 2)).to(F64) / d)
    angle = pos * rate
    pe = torch.where(col % 2 == 0, torch.sin(angle), torch.cos(angle))
    manual = np.zeros((n, d))
    for p in range(n):
        for c in range(d):
            a = p / 10000 ** ((c - c % 2) / d)
            manual[p, c] = math.sin(a) if c % 2 == 0 else math.cos(a)
    close(pe, torch.from_numpy(manual), 1e-12, "sinusoidal")
    return write_case(name, "sinusoidal", f"sinusoidal positions, n={n}, d={d}", {"n": n, "d": d}, {},
                      {"positions": pe})


@case
def sinusoidal_even():
    return sinusoidal_case("sinusoidal_even", 40, 16)


@case
def sinusoidal_odd():
    return sinusoidal_case("sinusoidal_odd", 12, 7)


def ffn_case(name, activation, seed):
    n, d, h = 5, 12, 24
    x = normal(seed, (n, d))
    W1, b1 = normal(seed + 1, (h, d), 1 / math.sqrt(d)), normal(seed + 2, (h,), 0.1)
    W2, b2 = normal(seed + 3, (d, h), 1 / math.sqrt(h)), normal(seed + 4, (d,), 0.1)
    act = {"relu": F.relu, "gelu_erf": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh")}[activation]
    ref = F.linear(act(F.linear(x, W1, b1)), W2, b2)
    close(ref, act(x @ W1.T + b1) @ W2.T + b2, 1e-12, "ffn")
    return write_case(name, "feed_forward", f"F.linear({activation}(F.linear(x, W1, b1)), W2, b2)",
                      {"activation": activation}, {"x": x, "W1": W1, "b1": b1, "W2": W2, "b2": b2}, {"y": ref})


@case
def ffn_relu():
    return ffn_case("ffn_relu", "relu", 701)


@case
def ffn_gelu_erf():
    return ffn_case("ffn_gelu_erf", "gelu_erf", 711)


@case
def ffn_gelu_tanh():
    return ffn_case("ffn_gelu_tanh", "gelu_tanh", 721)


# ---------------------------------------------------------------------------------------------------
# Attention around a target phrase, from the papers: IAN (Ma et al. 2017, eq. 5-8) and LCR-Rot-hop (Wallaart &
# Frasincar 2019, after Zheng & Xia 2018): every attention is f(h_i, q) = tanh(h_i^T W q + b), a = softmax(f),
# r = sum_i a_i h_i.


def bilinear_ref(h, q, W, b):
    f = torch.tanh(h @ W @ q + b)
    a = torch.softmax(f, dim=0)
    # The same weights from the formula written out with exp, to check the reference itself.
    e = torch.exp(f - f.max())
    close(a, e / e.sum(), 1e-12, "bilinear softmax")
    return a, a @ h


def ian_case(name, n, m, d, seed):
    context, target = normal(seed, (n, d)), normal(seed + 1, (m, d))
    Wa, Wb = normal(seed + 2, (d, d), 1 / d), normal(seed + 3, (d, d), 1 / d)
    ba, bb = normal(seed + 4, (1,), 0.1), normal(seed + 5, (1,), 0.1)
    alpha, c_r = bilinear_ref(context, target.mean(0), Wa, ba[0])
    beta, t_r = bilinear_ref(target, context.mean(0), Wb, bb[0])
    return write_case(name, "ian", f"IAN co-attention, context {n} x {d}, target {m} x {d}", {},
                      {"context": context, "target": target, "W_a": Wa, "b_a": ba, "W_b": Wb, "b_b": bb},
                      {"alpha": alpha.unsqueeze(0), "beta": beta.unsqueeze(0),
                       "output": torch.cat([c_r, t_r]).unsqueeze(0)})


@case
def aspect_ian():
    return ian_case("aspect_ian", 7, 2, 6, 801)


def rotatory_case(name, nl, nt, nr, d, hops, seed):
    left, target, right = normal(seed, (nl, d)), normal(seed + 1, (nt, d)), normal(seed + 2, (nr, d))
    parts = ("left", "right", "target_left", "target_right")
    W = {p: normal(seed + 10 + i, (hops, d, d), 1 / d) for i, p in enumerate(parts)}
    b = {p: normal(seed + 20 + i, (hops,), 0.1) for i, p in enumerate(parts)}
    weights = {p: [] for p in parts}
    reprs = {p: [] for p in parts}
    q_left = q_right = target.mean(0)
    for s in range(hops):
        a_l, r_l = bilinear_ref(left, q_left, W["left"][s], b["left"][s])
        a_r, r_r = bilinear_ref(right, q_right, W["right"][s], b["right"][s])
        a_tl, r_tl = bilinear_ref(target, r_l, W["target_left"][s], b["target_left"][s])
        a_tr, r_tr = bilinear_ref(target, r_r, W["target_right"][s], b["target_right"][s])
        for p, a, r in zip(parts, (a_l, a_r, a_tl, a_tr), (r_l, r_r, r_tl, r_tr)):
            weights[p].append(a)
            reprs[p].append(r)
        q_left, q_right = r_tl, r_tr
    inputs = {"left": left, "target": target, "right": right}
    for p in parts:
        inputs["W_" + p] = W[p]
        inputs["b_" + p] = b[p]
    expected = {}
    for p in parts:
        expected[p + "_weights"] = torch.stack(weights[p])
        expected[p + "_repr"] = torch.stack(reprs[p])
    expected["output"] = torch.cat([reprs["left"][-1], reprs["target_left"][-1], reprs["target_right"][-1],
                                    reprs["right"][-1]]).unsqueeze(0)
    return write_case(name, "rotatory", f"LCR-Rot-hop, {hops} hops, left {nl}, target {nt}, right {nr}, d {d}",
                      {"hops": hops}, inputs, expected)


@case
def aspect_rotatory():
    return rotatory_case("aspect_rotatory", 5, 2, 4, 6, 3, 811)


@case
def aspect_rotatory_one_word():
    return rotatory_case("aspect_rotatory_one_word", 1, 1, 6, 8, 2, 831)


# ---------------------------------------------------------------------------------------------------
# Capsule dynamic routing, Sabour et al. 2017, procedure 1, from the predictions u_hat(j|i).


def squash_ref(s):
    n2 = (s * s).sum(-1, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2)


def routing_case(name, J, n, d, iterations, seed):
    u_hat = normal(seed, (J, n, d))
    b = torch.zeros(J, n, dtype=F64)
    couplings, logits = [], []
    for _ in range(iterations):
        logits.append(b.clone())
        c = torch.softmax(b, dim=0)  # over the output capsules j, for each input i
        s = torch.einsum("ji,jid->jd", c, u_hat)
        v = squash_ref(s)
        close(v.norm(dim=-1), (s.norm(dim=-1) ** 2) / (1 + s.norm(dim=-1) ** 2), 1e-12, "squash length")
        b = b + torch.einsum("jid,jd->ji", u_hat, v)
        couplings.append(c)
    return write_case(name, "capsule_routing", f"dynamic routing, {J} capsules, {n} inputs, d {d}, r = {iterations}",
                      {"iterations": iterations, "capsules": J},
                      {"predictions": u_hat.reshape(J * n, d)},
                      {"coupling": torch.stack(couplings), "logits": torch.stack(logits), "outputs": v})


@case
def capsule_routing():
    return routing_case("capsule_routing", 3, 7, 4, 3, 901)


@case
def capsule_routing_one_iteration():
    return routing_case("capsule_routing_one_iteration", 2, 5, 3, 1, 911)


# ---------------------------------------------------------------------------------------------------
# Linformer (Wang et al. 2020, eq. 7) and Synthesizer (Tay et al. 2021, sec. 3), from the papers.


def linformer_case(name, n, d, k, seed):
    x = normal(seed, (n, d))
    Wq, Wk, Wv = (normal(seed + i, (d, d), 1 / math.sqrt(d)) for i in (1, 2, 3))
    E, F_ = normal(seed + 4, (k, n), 1 / math.sqrt(k)), normal(seed + 5, (k, n), 1 / math.sqrt(k))
    Q, K, V = x @ Wq, x @ Wk, x @ Wv
    P = torch.softmax(Q @ (E @ K).T / math.sqrt(d), dim=-1)
    full = torch.softmax(Q @ K.T / math.sqrt(d), dim=-1)
    out = P @ (F_ @ V)
    # The same projected map written out with exp.
    scores = Q @ K.T @ E.T / math.sqrt(d)
    e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    close(P, e / e.sum(dim=-1, keepdim=True), 1e-12, "linformer softmax")
    return write_case(name, "linformer", f"Linformer, n={n}, d={d}, k={k}", {},
                      {"x": x, "Wq": Wq, "Wk": Wk, "Wv": Wv, "E": E, "F": F_},
                      {"P": P, "implied": P @ E, "full": full, "output": out})


@case
def linformer_k4():
    return linformer_case("linformer_k4", 9, 6, 4, 1001)


@case
def linformer_k_equals_n():
    return linformer_case("linformer_k_equals_n", 5, 4, 5, 1011)


SYNTH_KINDS = ("dense", "random", "factorized_dense", "factorized_random", "mixture")


def synthesizer_case(name, kind, n, d, k, seed):
    x = normal(seed, (n, d))
    a = math.ceil(math.sqrt(n))
    b = (n + a - 1) // a
    w = {
        "W1": normal(seed + 1, (d, d), 1 / math.sqrt(d)), "b1": normal(seed + 2, (d,), 0.1),
        "W2": normal(seed + 3, (d, n), 1 / math.sqrt(d)), "b2": normal(seed + 4, (n,), 0.1),
        "R": normal(seed + 5, (n, n)), "R1": normal(seed + 6, (n, k)), "R2": normal(seed + 7, (n, k)),
        "Wa": normal(seed + 8, (d, a), 1 / math.sqrt(d)), "Wb": normal(seed + 9, (d, b), 1 / math.sqrt(d)),
        "Wq": normal(seed + 10, (d, d), 1 / math.sqrt(d)), "Wk": normal(seed + 11, (d, d), 1 / math.sqrt(d)),
        "Wv": normal(seed + 12, (d, d), 1 / math.sqrt(d)),
    }
    dense = F.relu(x @ w["W1"] + w["b1"]) @ w["W2"] + w["b2"]
    if kind == "dense":
        logits = dense
    elif kind == "random":
        logits = w["R"]
    elif kind == "factorized_dense":
        A, B = x @ w["Wa"], x @ w["Wb"]
        # H_A tiles A b times, H_B repeats each element of B a times; their product, cut to n.
        logits = (A.repeat(1, b) * B.repeat_interleave(a, dim=1))[:, :n]
        close(logits[2, 5], A[2, 5 % a] * B[2, 5 // a], 1e-12, "tiling")
    elif kind == "factorized_random":
        logits = w["R1"] @ w["R2"].T
    else:
        logits = (dense + w["R"] + (x @ w["Wq"]) @ (x @ w["Wk"]).T / math.sqrt(d)) / 3
    weights = torch.softmax(logits, dim=-1)
    return write_case(name, "synthesizer", f"Synthesizer {kind}, n={n}, d={d}, k={k}", {"kind": kind}, dict(x=x, **w),
                      {"logits": logits, "weights": weights, "output": weights @ (x @ w["Wv"])})


@case
def synthesizer_dense():
    return synthesizer_case("synthesizer_dense", "dense", 7, 5, 2, 1101)


@case
def synthesizer_random():
    return synthesizer_case("synthesizer_random", "random", 7, 5, 2, 1121)


@case
def synthesizer_factorized_dense():
    return synthesizer_case("synthesizer_factorized_dense", "factorized_dense", 7, 5, 2, 1141)


@case
def synthesizer_factorized_random():
    return synthesizer_case("synthesizer_factorized_random", "factorized_random", 7, 5, 2, 1161)


@case
def synthesizer_mixture():
    return synthesizer_case("synthesizer_mixture", "mixture", 7, 5, 2, 1181)


# Reformer LSH attention (Kitaev et al. 2020, sec. 2-3), from the paper, as masks over the whole n x n map
# (the engine walks chunks of the sorted order instead).
def reformer_case(name, n, d, buckets, chunk, hashes, seed):
    x = normal(seed, (n, d))
    Wqk, Wv = normal(seed + 1, (d, d), 1 / math.sqrt(d)), normal(seed + 2, (d, d), 1 / math.sqrt(d))
    rotations = [normal(seed + 10 + r, (d, buckets // 2)) for r in range(hashes)]
    Q = x @ Wqk
    K = Q / Q.norm(dim=-1, keepdim=True)  # shared QK: keys are the queries at unit length
    logits = Q @ K.T / math.sqrt(d)
    eye = torch.eye(n, dtype=torch.bool)
    logits = logits.masked_fill(eye, -1e5)  # no attention to self unless nothing else
    all_buckets, orders, lses, maps, seen = [], [], [], [], torch.zeros(n, n, dtype=torch.bool)
    for R in rotations:
        proj = K @ R
        b = torch.argmax(torch.cat([proj, -proj], dim=-1), dim=-1)  # h(x) = argmax([xR; -xR])
        order = torch.argsort(b * n + torch.arange(n))  # by bucket, then position
        pos = torch.empty(n, dtype=torch.long)
        pos[order] = torch.arange(n)  # each token's sorted position
        c = pos // chunk
        allowed = ((c[:, None] - c[None, :]) == 0) | ((c[:, None] - c[None, :]) == 1)  # own chunk, one back
        masked = logits.masked_fill(~allowed, float("-inf"))
        lse = torch.logsumexp(masked, dim=-1)
        all_buckets.append(b.double())
        orders.append(order.double())
        lses.append(lse)
        maps.append(torch.exp(masked - lse[:, None]))
        seen |= allowed
    L = torch.stack(lses)  # hashes x n
    share = torch.exp(L - torch.logsumexp(L, dim=0))  # each round's weight, per query
    weights = sum(share[r][:, None] * maps[r] for r in range(hashes))
    full = torch.softmax(logits, dim=-1)
    missed = (full * (~seen).double()).sum(dim=-1)
    close(weights.sum(dim=-1), torch.ones(n, dtype=torch.float64), 1e-12, "reformer rows")
    inputs = {"x": x, "Wqk": Wqk, "Wv": Wv}
    for r, R in enumerate(rotations):
        inputs[f"R{r}"] = R
    return write_case(name, "reformer", f"Reformer LSH, n={n}, d={d}, buckets={buckets}, m={chunk}, rounds={hashes}",
                      {"buckets": buckets, "chunk": chunk, "hashes": hashes}, inputs,
                      {"buckets": torch.stack(all_buckets), "order": torch.stack(orders), "lse": L,
                       "weights": weights, "full": full, "missed": missed[None, :], "output": weights @ (x @ Wv)})


@case
def reformer_two_rounds():
    return reformer_case("reformer_two_rounds", 11, 6, 4, 3, 2, 1201)


@case
def reformer_short_last_chunk():
    return reformer_case("reformer_short_last_chunk", 10, 4, 6, 4, 1, 1221)


@case
def reformer_chunks_of_one():
    return reformer_case("reformer_chunks_of_one", 7, 5, 2, 1, 3, 1241)


# Transformer-XL (Dai et al. 2019, sec. 3.2-3.3), as the authors' code computes it
# (RelPartialLearnableMultiHeadAttn, one head): positions from klen - 1 down to 0, (q + u) k^T and
# (q + v) r^T, the second moved into place by _rel_shift; memory = the previous segment's input to the layer.
def rel_shift(x):
    padded = torch.cat([torch.zeros(x.size(0), 1, dtype=x.dtype), x], dim=1)
    return padded.view(x.size(1) + 1, x.size(0))[1:].view_as(x)


def xl_positions(klen, d):
    inv_freq = 1 / (10000 ** (torch.arange(0.0, d, 2.0, dtype=torch.float64) / d))
    pos_seq = torch.arange(klen - 1, -1, -1.0, dtype=torch.float64)
    sinusoid = torch.outer(pos_seq, inv_freq)
    return torch.cat([sinusoid.sin(), sinusoid.cos()], dim=-1)


def transformer_xl_case(name, n, d, L, layers, seed):
    x = normal(seed, (n, d))
    inputs = {"x": x}
    ws = []
    for l in range(layers):
        b = seed + 10 * (l + 1)
        w = {k: normal(b + i, (d, d), 1 / math.sqrt(d)) for i, k in enumerate(("Wq", "Wk", "Wr", "Wv", "Wo"))}
        w["u"], w["v"] = normal(b + 5, (d,)), normal(b + 6, (d,))
        ws.append(w)
        inputs.update({f"l{l}_{k}": t for k, t in w.items()})
    expected = {}
    mems = [torch.zeros(0, d, dtype=torch.float64) for _ in range(layers)]
    outputs = []
    for s, begin in enumerate(range(0, n, L)):
        h = x[begin:begin + L]
        qlen = h.size(0)
        for l, w in enumerate(ws):
            cat = torch.cat([mems[l], h], dim=0)
            klen, mlen = cat.size(0), mems[l].size(0)
            q, k, v = h @ w["Wq"], cat @ w["Wk"], cat @ w["Wv"]
            r = xl_positions(klen, d) @ w["Wr"]
            scale = 1 / math.sqrt(d)
            ac = (q + w["u"]) @ k.T
            bd = rel_shift((q + w["v"]) @ r.T)
            terms = [q @ k.T, rel_shift(q @ r.T), (w["u"] @ k.T).expand(qlen, klen),
                     rel_shift(w["v"].expand(qlen, d) @ r.T)]
            terms = [t * scale for t in terms]
            mask = torch.triu(torch.ones(qlen, klen, dtype=torch.bool), diagonal=1 + mlen)  # key after query
            score = ((ac + bd) * scale).masked_fill(mask, float("-inf"))
            close(score.masked_fill(mask, 0), sum(terms).masked_fill(mask, 0), 1e-10, "xl terms")
            prob = torch.softmax(score, dim=-1)
            out = F.layer_norm(h + (prob @ v) @ w["Wo"], (d,), eps=1e-5)
            expected[f"s{s}_l{l}_weights"] = prob
            for t, key in zip(terms, "abcd"):
                expected[f"s{s}_l{l}_{key}"] = t.masked_fill(mask, 0)
            mems[l] = h
            h = out
        outputs.append(h)
    expected["output"] = torch.cat(outputs, dim=0)
    return write_case(name, "transformer_xl", f"Transformer-XL, n={n}, d={d}, L={L}, layers={layers}",
                      {"segment": L, "layers": layers}, inputs, expected)


@case
def transformer_xl_two_layers():
    return transformer_xl_case("transformer_xl_two_layers", 10, 6, 4, 2, 1301)


@case
def transformer_xl_one_segment():
    return transformer_xl_case("transformer_xl_one_segment", 5, 4, 8, 1, 1321)


# Multi-head capsule attention: per head, the class queries' slice attends on the words' slice (scaled dot),
# r_c = concat over heads, p_c = sigmoid(w_c . r_c + b_c).
def capsule_multi_head_case(name, classes, n, d, heads, seed):
    x = normal(seed, (n, d))
    Q, W, b = normal(seed + 1, (classes, d)), normal(seed + 2, (classes, d)), normal(seed + 3, (classes,), 0.1)
    dh = d // heads
    maps, contexts = [], []
    for h in range(heads):
        xs, qs = x[:, h * dh:(h + 1) * dh], Q[:, h * dh:(h + 1) * dh]
        a = torch.softmax(qs @ xs.T / math.sqrt(dh), dim=-1)
        maps.append(a)
        contexts.append(a @ xs)
    r = torch.cat(contexts, dim=-1)
    p = torch.sigmoid((W * r).sum(dim=-1) + b)
    return write_case(name, "capsule_multi_head", f"multi-head capsule attention, C={classes}, n={n}, d={d}, H={heads}",
                      {"heads": heads}, {"x": x, "queries": Q, "w": W, "b": b},
                      {"heads": torch.stack(maps), "contexts": r, "probabilities": p[None, :],
                       "capsules": p[:, None] * r})


@case
def capsule_multi_head():
    return capsule_multi_head_case("capsule_multi_head", 3, 7, 8, 4, 1401)


# ConvS2S multi-step attention (Gehring et al. 2017, sec. 3.3) with torch's conv1d and glu: encoder
# z = e + GLU(conv(e)) centred; decoder layers o = GLU(conv(h)) causal (k - 1 zeros on the left),
# a = softmax((o W_d + b_d + g) z^T), h += o + a (z + e).
def convs2s_case(name, m, n, d, layers, k, seed):
    g, e = normal(seed, (m, d)), normal(seed + 1, (n, d))

    def taps(s):  # k taps of d x 2d, as the engine reads them (tap t: position i - t causal, i + t - k//2 centred)
        return [normal(s + t, (d, 2 * d), 1 / math.sqrt(d * k)) for t in range(k)]

    def conv(x, W, b, causal):
        # conv1d weight [2d, d, k]: kernel index j multiplies x[i + j - pad]; causal pad k - 1 on the left means
        # j = k - 1 - t reads i - t; centred pad k // 2 means j = t reads i + t - k // 2.
        weight = torch.stack([W[k - 1 - j] if causal else W[j] for j in range(k)], dim=-1).permute(1, 0, 2)
        xt = x.T[None]
        xt = F.pad(xt, (k - 1, 0)) if causal else F.pad(xt, (k // 2, k - 1 - k // 2))
        y = F.conv1d(xt, weight, b)[0].T
        return F.glu(y, dim=-1)

    inputs = {"g": g, "e": e}
    enc_W, enc_b = taps(seed + 10), normal(seed + 20, (2 * d,), 0.1)
    inputs.update({f"enc_W{t}": w for t, w in enumerate(enc_W)})
    inputs["enc_b"] = enc_b
    z = e + conv(e, enc_W, enc_b, False)
    h, expected = g, {"z": z}
    for l in range(layers):
        W, b = taps(seed + 100 * (l + 1)), normal(seed + 100 * (l + 1) + 50, (2 * d,), 0.1)
        Wd, bd = normal(seed + 100 * (l + 1) + 60, (d, d), 1 / math.sqrt(d)), normal(seed + 100 * (l + 1) + 61, (d,), 0.1)
        inputs.update({f"l{l}_W{t}": w for t, w in enumerate(W)})
        inputs.update({f"l{l}_b": b, f"l{l}_Wd": Wd, f"l{l}_bd": bd})
        o = conv(h, W, b, True)
        a = torch.softmax((o @ Wd + bd + g) @ z.T, dim=-1)
        h = h + o + a @ (z + e)
        expected[f"l{l}_weights"] = a
    expected["output"] = h
    return write_case(name, "convs2s", f"ConvS2S multi-step attention, m={m}, n={n}, d={d}, layers={layers}, k={k}",
                      {"layers": layers, "kernel": k}, inputs, expected)


@case
def convs2s_two_layers():
    return convs2s_case("convs2s_two_layers", 5, 7, 6, 2, 3, 1501)


@case
def convs2s_wide_kernel():
    return convs2s_case("convs2s_wide_kernel", 4, 3, 4, 1, 5, 1521)


# ---------------------------------------------------------------------------------------------------


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    written = []
    total = 0
    for fn in CASES:
        path, size = fn()
        assert os.path.basename(path) == fn.__name__ + ".json", (path, fn.__name__)
        written.append(os.path.basename(path))
        total += size
    # glimpse_*.json belong to make_glimpse_fixtures.py.
    ours = set(f for f in os.listdir(OUT_DIR) if f.endswith(".json") and not f.startswith("glimpse_"))
    stale = sorted(ours - set(written))
    for f in stale:
        print(f"warning: {f} is not written by this script (remove it if the case was dropped)", file=sys.stderr)
    print(f"wrote {len(written)} fixtures, {total} bytes, to {os.path.relpath(OUT_DIR, ROOT)}")
    assert total < 2_000_000, "fixtures exceed the 2 MB budget"


if __name__ == "__main__":
    main()
