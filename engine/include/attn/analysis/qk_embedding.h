// One head's queries and keys over many inputs in one picture (issue 46; AttentionViz, Yeh et al., IEEE VIS 2023):
// every query vector and every key vector of the head, from runs that kept their attention on demand (their queries
// and keys as the forward used them: after the norms and RoPE), projected together onto their two leading principal
// components.
//
// As AttentionViz does, before the projection the keys are moved and the two sets scaled so that the picture's
// distances mean what the dot products mean, without changing any attention weight:
//   - translation: every key k becomes k + (mean(q) - mean(k)); a query's scores q.k all shift by the same q.c, which
//     the softmax removes, so the weights are the same;
//   - scale: queries times a, keys times 1/a, a = sqrt(mean |k| / mean |q|) (after the translation); q.k unchanged.
// Then all the vectors (queries and keys together) are centred and projected onto the two eigenvectors of their
// covariance with the largest eigenvalues (Eigen's SelfAdjointEigenSolver on the head_dim x head_dim covariance).
#pragma once

#include "attn/error.h"
#include "attn/on_demand_attention.h"

#include <vector>

namespace attn::analysis {

struct QkPoint {
  int input = 0;     // which of the layers given
  int position = 0;  // the token's position in it, from 0
  bool key = false;  // a key (else a query)
  float x = 0, y = 0;
};

struct QkEmbedding {
  std::vector<QkPoint> points;   // the queries of every input in input order, then their keys
  double explained[2] = {0, 0};  // each component's share of the total variance
  double scale = 1;              // a
};

// layers[i]: input i's on-demand layer (TransformerRun::on_demand[layer]). Refused: no layer, a head out of range,
// layers of different shapes (heads, head_dim), fewer than 3 vectors in all.
Result<QkEmbedding> qk_embedding(const std::vector<const OnDemandLayer*>& layers, int head);

}  // namespace attn::analysis
