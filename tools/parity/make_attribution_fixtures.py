#!/usr/bin/python3
"""Writes the attribution fixtures (issue 44): tests/data/attribution/<case>.json, from torch autograd over the
float64 reference models (transformer_torch.py, decoder_torch.py, loaded as interventions_torch.Model loads
them), on the inputs of the intervention fixtures (tests/data/interventions/<case>.json: the clean input, its
measured position, its answer and wrong tokens).

The scalar F explained, per case (cycling over the cases so that each kind is tested on several families):
logit (logits[answer]), logprob (log_softmax(logits)[answer]) or logit_diff (logits[answer] - logits[wrong]), at
the measured position (ViT: the class logits).

Each JSON ("format": "attnscope-attribution-fixture-1"):
  case, model, family, tokens (n), position, token (answer), other (wrong), kind
  ids                       [n] the input as run_ids takes it (ViT: image, the clean PNG instead)
  gradient, attnlrp         one backward pass each, rule "gradient" (autograd) or "attnlrp" (below):
      value                 F
      resid_grad            [layers][n][d]  dF/d resid_pre of each layer (intervention_torch's site)
      z_grad                [layers][n][heads x head_dim]  dF/dz (head h in columns [h hd, (h + 1) hd))
      attention_grad        [layers][heads][n][n]  dF/dA, A each head's softmax weights
      scores                [n] sum_d resid_pre[0] * resid_grad[0] (gradient x input; AttnLRP's relevance)
  attn_grad_scores          [n] row `position` of R, R = I then R += mean_h (dF/dA * A)^+ R per layer from the
                            first (Chefer et al. 2021's generic rule), with the autograd gradients
  integrated_gradients      steps (8), baseline "zero": scores [n] = x0 * mean over alpha = k / steps (k = 1 ..
                            steps) of dF/dx0 at alpha x0, value F(x0), baseline_value F(0)

AttnLRP here is the rule set of the authors' LXT package ("efficient" mode: gradient x input with modified
gradients), applied to the same reference models by patching, without LXT (not in Debian): LayerNorm and RMSNorm
(q/k norms included) with their 1 / std held constant; every element-wise nonlinearity (the MLP's activation, the
soft-caps' tanh) with the local gradient f(x) / x (f'(0) = 1/2 where |x| < 1e-6); the gated MLP's product with
its gradient halved; the gradient of q and k divided by 4 and of v by 2 (put on the projections' outputs: the
maps after them, RoPE and the held-constant norms, are linear, so the factor commutes).

    /usr/bin/python3 -m tools.parity.make_attribution_fixtures
"""

import contextlib
import json
import math
import os

import torch
import torch.nn as nn

from tools.parity import decoder_torch as dt
from tools.parity import interventions_torch as it

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
IN = os.path.join(ROOT, "tests", "data", "interventions")
OUT = os.path.join(ROOT, "tests", "data", "attribution")

CASES = ("gpt2", "bert", "distilbert", "vit", "induction-gpt2", "llama", "llama-dynamic", "llama-tied-linear-bf16",
         "llama-yarn-bias-bf16", "llama3-rope-f16", "mistral-window", "phi3-fused-partial", "qwen2-bias",
         "qwen3-head-dim", "gemma2-softcap", "gemma3-local-global")
KINDS = ("logit", "logprob", "logit_diff")
IG_STEPS = 8


def f9(x):
    x = float(x)
    assert math.isfinite(x), x
    return float(f"{x:.9g}")


def rounded(t):
    if isinstance(t, torch.Tensor):
        t = t.tolist()
    if isinstance(t, (list, tuple)):
        return [rounded(v) for v in t]
    return f9(t)


# ---------------------------------------------------------------- AttnLRP's rules, by patching

class IdentityRule(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, fn):
        y = fn(x)
        ratio = torch.where(x.abs() < 1e-6, torch.full_like(x, 0.5), y / x)
        ctx.save_for_backward(ratio)
        return y

    @staticmethod
    def backward(ctx, g):
        (ratio,) = ctx.saved_tensors
        return g * ratio, None


class ScaleGradient(torch.autograd.Function):
    """Identity forward; the gradient times `scale` ([width] per last-dimension column, or a number)."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None


def identity_rule(fn):
    return lambda x: IdentityRule.apply(x, fn)


def layer_norm_lrp(self, x):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    y = (x - mean) / (var + self.eps).sqrt().detach()
    return y * self.weight + self.bias


def rms_norm_lrp(self, x):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps).detach()
    return y * (1.0 + self.weight) if self.gemma else y * self.weight


def gated_mlp_lrp(self, x):
    if self.fused:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
    else:
        gate, up = self.gate_proj(x), self.up_proj(x)
    return self.down_proj(ScaleGradient.apply(IdentityRule.apply(gate, self.act) * up, 0.5))


def qkv_scales(module, out_width):
    """The gradient factors of a fused [q | k | v] projection's output columns."""
    if isinstance(module, dt.Attention):
        c = module.cfg
        q, kv = c.heads * c.head_dim, c.kv_heads * c.head_dim
    else:
        q = kv = out_width // 3
    return torch.cat([torch.full((q,), 0.25), torch.full((kv,), 0.25), torch.full((kv,), 0.5)]).double()


@contextlib.contextmanager
def attnlrp(model):
    """The model's modules patched with AttnLRP's rules while inside."""
    handles, saved = [], []

    def scaled(factor):
        return lambda mod, inp, out: ScaleGradient.apply(out, factor)

    for name, mod in model.module.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in ("q_proj", "k_proj", "query", "key", "q_lin", "k_lin"):
            handles.append(mod.register_forward_hook(scaled(0.25)))
        elif leaf in ("v_proj", "value", "v_lin"):
            handles.append(mod.register_forward_hook(scaled(0.5)))
        elif leaf in ("qkv_proj", "c_attn"):
            parent = model.module.get_submodule(name.rsplit(".", 1)[0])
            handles.append(mod.register_forward_hook(
                lambda m, i, o, p=parent: ScaleGradient.apply(o, qkv_scales(p, o.shape[-1]))))
        for attr in ("act", "activation"):
            fn = getattr(mod, attr, None)
            if callable(fn) and not isinstance(fn, nn.Module):
                saved.append((mod, attr, fn))
                setattr(mod, attr, identity_rule(fn))
    patched = [(nn.LayerNorm, "forward", layer_norm_lrp), (dt.RMSNorm, "forward", rms_norm_lrp),
               (dt.MLP, "forward", gated_mlp_lrp)]
    originals = [(cls, attr, getattr(cls, attr)) for cls, attr, _ in patched]
    for cls, attr, fn in patched:
        setattr(cls, attr, fn)
    tanh = torch.tanh
    torch.tanh = identity_rule(tanh)
    # the MLP patch calls self.act itself: undo the attribute wrapping for gated MLPs (the rule is applied once)
    for mod, attr, fn in saved:
        if isinstance(mod, dt.MLP):
            setattr(mod, attr, fn)
    try:
        yield
    finally:
        torch.tanh = tanh
        for cls, attr, fn in originals:
            setattr(cls, attr, fn)
        for mod, attr, fn in saved:
            setattr(mod, attr, fn)
        for h in handles:
            h.remove()


# ---------------------------------------------------------------- one backward pass

def run_with_grad(model, inputs, x0_scale=None):
    """Forward with autograd: (logits row source, attentions, store of resid_pre / z tensors). x0_scale: resid_pre
    of layer 0 replaced by that multiple of itself (integrated gradients)."""
    store = {}

    def hook(site, layer, t):
        if site == "resid_pre" and layer == 0:
            x = t.detach().clone()
            store["x0"] = x.clone()
            if x0_scale is not None:
                x = x * x0_scale
            x.requires_grad_(True)
            store[(site, layer)] = x
            return x
        if site in ("resid_pre", "z"):
            # a copy returned in its place, so that it is on the path (the transformer references pass a view)
            x = t.clone()
            x.retain_grad()
            store[(site, layer)] = x
            return x
        return None

    if model.family == "decoder":
        out = model.module(torch.tensor(inputs, dtype=torch.long), hook=hook)
        attentions = out["attentions"]
    elif model.family == "vit":
        out = model.module(inputs, output_attentions=True, hook=hook)
        attentions = out["attentions"]
    else:
        out = model.module(input_ids=torch.tensor([inputs], dtype=torch.long), output_attentions=True, hook=hook)
        attentions = out["attentions"]
    logits = out["logits"] if model.family == "decoder" else out["logits"][0]
    for a in attentions:
        a.retain_grad()
    return logits, attentions, store


def scalar(kind, row, answer, wrong):
    if kind == "logit":
        return row[answer]
    if kind == "logprob":
        return torch.log_softmax(row, -1)[answer]
    return row[answer] - row[wrong]


def backward_pass(model, inputs, case, lrp):
    ctx = attnlrp(model) if lrp else contextlib.nullcontext()
    with ctx:
        logits, attentions, store = run_with_grad(model, inputs)
        row = logits if model.family == "vit" else logits[case["position"]]
        f = scalar(case["kind"], row, case["answer"], case["wrong"])
        f.backward()
    n = store[("resid_pre", 0)].shape[0]
    resid = [store[("resid_pre", l)].grad.reshape(n, -1) for l in range(model.layers)]
    z = [store[("z", l)].grad.reshape(n, -1) for l in range(model.layers)]
    x0 = store[("resid_pre", 0)].detach()
    return {
        "value": float(f), "resid_grad": resid, "z_grad": z,
        "attention_grad": [a.grad.reshape(a.shape[-3:]) for a in attentions],
        "attention": [a.detach().reshape(a.shape[-3:]) for a in attentions],
        "scores": (x0 * resid[0]).sum(-1),
    }


def chefer(grad, position):
    n = grad["attention"][0].shape[-1]
    r = torch.eye(n, dtype=torch.float64)
    for a, g in zip(grad["attention"], grad["attention_grad"]):
        bar = (g * a).clamp(min=0).mean(0)
        r = r + bar @ r
    return r[position]


def integrated_gradients(model, inputs, case):
    total, x0 = None, None
    for k in range(0, IG_STEPS + 1):
        logits, _, store = run_with_grad(model, inputs, x0_scale=k / IG_STEPS)
        row = logits if model.family == "vit" else logits[case["position"]]
        f = scalar(case["kind"], row, case["answer"], case["wrong"])
        f.backward()
        if k == 0:
            base = float(f)
            continue
        if k == IG_STEPS:
            value = float(f)
        x0 = store["x0"]
        g = store[("resid_pre", 0)].grad
        total = g if total is None else total + g
    scores = (x0 * total / IG_STEPS).sum(-1)
    return {"steps": IG_STEPS, "baseline": "zero", "scores": rounded(scores), "value": f9(value),
            "baseline_value": f9(base)}


def write_case(name, index):
    with open(os.path.join(IN, name + ".json")) as f:
        src = json.load(f)
    model = it.Model(os.path.join(ROOT, src["model"]))
    if model.family == "vit":
        inputs = it.vit_pixels(it.read_png(os.path.join(ROOT, src["clean_image"])), model.preprocessor)
    else:
        inputs = src["clean_ids"]
    case = {"position": src["position"], "answer": src["answer"], "wrong": src["wrong"],
            "kind": KINDS[index % len(KINDS)]}
    out = {"format": "attnscope-attribution-fixture-1", "case": name, "model": src["model"],
           "family": model.family, "tokens": src["tokens"], "position": src["position"], "token": src["answer"],
           "other": src["wrong"], "kind": case["kind"]}
    if model.family == "vit":
        out["image"] = src["clean_image"]
    else:
        out["ids"] = inputs
    for rule, lrp in (("gradient", False), ("attnlrp", True)):
        g = backward_pass(model, inputs, case, lrp)
        out[rule] = {"value": f9(g["value"]), "resid_grad": rounded(g["resid_grad"]), "z_grad": rounded(g["z_grad"]),
                     "attention_grad": rounded(g["attention_grad"]), "scores": rounded(g["scores"])}
        if rule == "gradient":
            out["attn_grad_scores"] = rounded(chefer(g, 0 if model.family == "vit" else case["position"]))
    out["integrated_gradients"] = integrated_gradients(model, inputs, case)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {os.path.getsize(path)} bytes, {case['kind']}, F = {out['gradient']['value']:.6g}")


def main():
    torch.set_default_dtype(torch.float64)
    for i, name in enumerate(CASES):
        write_case(name, i)


if __name__ == "__main__":
    main()
