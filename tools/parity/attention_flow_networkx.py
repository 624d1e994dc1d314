#!/usr/bin/python3
"""Attention flow's reference scores from networkx (Debian's python3-networkx), the library Abnar and Zuidema's own
code (samiraabnar/attention_flow) computes them with.

Regenerate (from the repository root; the fixture is committed, so only after changing this script):

    /usr/bin/python3 tools/parity/attention_flow_networkx.py

It writes tests/data/attribution/attention_flow_networkx.json; engine_unit_tests (test_attention_flow.cpp) reads it and compares
the engine's push-relabel scores within 1e-5. networkx is a tool here only, never needed at run time.

The graph is the paper's: a node (l, i) per layer input l = 0..L and token i, an edge (l, j) -> (l + 1, i) of
capacity A'_l[i][j] with A' = (1 - r) A + r I, rows renormalised to sum 1 (the engine's with_residual), and the
score of input token j the maximum flow from (0, j) to (L, t). The whole graph is given to networkx (no pruning),
and every score is computed twice, by preflow-push and by Edmonds-Karp, which must agree.

Inputs are seeded softmax rows drawn in float64 and rounded to float32 (stored as the float32 values' exact
doubles); the references are computed in float64 from those float32 values. The causal case (keys <= query) and a
case with a key column zeroed in one layer have edges that are not there, so the engine's pruning is exercised.
"""

import json
import os

import networkx as nx
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "data", "attribution", "attention_flow_networkx.json")
RESIDUAL = 0.5


def softmax_layers(rng, layers, tokens, causal, scale):
    out = np.zeros((layers, tokens, tokens), dtype=np.float64)
    for l in range(layers):
        for i in range(tokens):
            keys = i + 1 if causal else tokens
            z = rng.normal(0.0, scale, keys)
            e = np.exp(z - z.max())
            out[l, i, :keys] = e / e.sum()
    return out.astype(np.float32)


def with_residual(a):
    a = (1.0 - RESIDUAL) * a.astype(np.float64) + RESIDUAL * np.eye(a.shape[0])
    return a / a.sum(axis=1, keepdims=True)


def flow_scores(layers, target, flow_func):
    count, tokens = layers.shape[0], layers.shape[1]
    g = nx.DiGraph()
    for l in range(count):
        a = with_residual(layers[l])
        for i in range(tokens):
            for j in range(tokens):
                if a[i, j] > 0.0:
                    g.add_edge((l, j), (l + 1, i), capacity=float(a[i, j]))
    sink = (count, target)
    scores = []
    for j in range(tokens):
        source = (0, j)
        if source not in g or sink not in g:
            scores.append(0.0)
        else:
            scores.append(nx.maximum_flow_value(g, source, sink, flow_func=flow_func))
    return scores


def case(name, layers, causal, targets):
    refs = []
    for t in targets:
        a = flow_scores(layers, t, nx.algorithms.flow.preflow_push)
        b = flow_scores(layers, t, nx.algorithms.flow.edmonds_karp)
        assert np.allclose(a, b, atol=1e-9, rtol=0), (name, t, a, b)
        refs.append(a)
    return {
        "name": name,
        "causal": causal,
        "residual": RESIDUAL,
        "layers": {"shape": list(layers.shape), "data": layers.tolist()},
        "targets": targets,
        "scores": refs,
    }


def main():
    rng = np.random.default_rng(20200705)  # ACL 2020
    cases = [
        case("non_causal", softmax_layers(rng, 3, 7, False, 2.0), False, [6, 3, 0]),
        case("causal", softmax_layers(rng, 3, 7, True, 2.0), True, [6, 4, 0]),
        case("one_layer", softmax_layers(rng, 1, 7, False, 1.5), False, [2, 5]),
        case("non_causal_deep", softmax_layers(rng, 6, 5, False, 3.0), False, [4, 1]),
    ]
    zeroed = softmax_layers(rng, 3, 7, False, 2.0)
    zeroed[1, :, 2] = 0.0  # no token reads key 2 in layer 2: its node there only keeps its residual
    zeroed[1] /= zeroed[1].sum(axis=1, keepdims=True)
    cases.append(case("zeroed_key", zeroed.astype(np.float32), False, [6, 2]))
    doc = {"format": 1, "source": "tools/parity/attention_flow_networkx.py", "networkx": nx.__version__,
           "cases": cases}
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {os.path.relpath(OUT, ROOT)}: {len(cases)} cases")


if __name__ == "__main__":
    main()
