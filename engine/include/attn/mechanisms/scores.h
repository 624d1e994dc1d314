// Score functions score(q_i, k_j) -> n x m matrix (rows = queries, columns = keys).
// Luong et al. 2015 eq. 8 (dot, general, concat), Bahdanau et al. 2015 (additive), Vaswani et al. 2017
// (scaled dot), Graves et al. 2014 (cosine), Luong et al. 2015 (location: a_t = softmax(W_a h_t)).
#pragma once

#include "attn/core.h"

#include <string_view>

namespace attn {

enum class ScoreKind {
  Dot,        // q . k
  ScaledDot,  // q . k / sqrt(d)
  General,    // q^T W k                          W: dq x dk
  Concat,     // v^T tanh(W [q; k])               W: da x (dq + dk), v: da
  Additive,   // v^T tanh(W q + U k)  (Bahdanau)  W: da x dq, U: da x dk, v: da
  Cosine,     // q . k / (|q| |k|)
};
std::string_view to_string(ScoreKind kind);

// Learned parameters of the parameterised scores; unused fields stay empty.
struct ScoreWeights {
  Matrix W;
  Matrix U;
  Vector v;
};

Matrix dot_score(const MatrixCRef& q, const MatrixCRef& k);
Matrix scaled_dot_score(const MatrixCRef& q, const MatrixCRef& k);
Matrix general_score(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& W);
Matrix concat_score(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& W, const VectorCRef& v);
Matrix additive_score(const MatrixCRef& q, const MatrixCRef& k, const MatrixCRef& W, const MatrixCRef& U,
                      const VectorCRef& v);
Matrix cosine_score(const MatrixCRef& q, const MatrixCRef& k);
// Location-based: scores depend on the query only. W: m x d (one row per source position).
Matrix location_score(const MatrixCRef& q, const MatrixCRef& W);

// Dispatch on kind; weights must hold what that kind needs (shapes are checked with asserts in debug).
Matrix score(ScoreKind kind, const MatrixCRef& q, const MatrixCRef& k, const ScoreWeights& weights);

// Seeded weights of the right shapes for `kind` (attention size da), for the lab's model-free runs.
ScoreWeights random_score_weights(ScoreKind kind, Index dq, Index dk, Index da, std::uint64_t seed);

}  // namespace attn
