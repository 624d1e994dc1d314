// Mechanisms built from attention steps: multi-hop (Sukhbaatar et al. 2015), hierarchical
// (Yang et al. 2016), attention-over-attention (Cui et al. 2017), capsule attention (one query per class).
#pragma once

#include "attn/core.h"
#include "attn/mechanisms/attention.h"
#include "attn/mechanisms/pooling.h"
#include "attn/trace.h"

#include <vector>

namespace attn {

// ---- Multi-hop: q(s+1) = transform(q(s), c(s)), S hops, every hop's weights kept.
enum class HopUpdate {
  Add,     // q + c                      (end-to-end memory networks, adjacent weight tying)
  Linear,  // tanh(W [q; c])             W: d x 2d
};
struct MultiHopParams {
  int hops = 3;
  HopUpdate update = HopUpdate::Add;
  GlobalParams attention;
};
struct MultiHopResult {
  std::vector<Matrix> hop_weights;  // hops x (n x m)
  std::vector<Matrix> queries;      // hops + 1 queries: q(0) .. q(S)
  Matrix context;                   // c(S-1), n x d
};
MultiHopResult multi_hop_attention(const MatrixCRef& q, const MatrixCRef& memory, const ScoreWeights& score_weights,
                                   const Matrix& update_W, const MultiHopParams& params, const TraceTag& tag = {});

// ---- Hierarchical attention: word attention inside each sentence, then sentence attention.
struct HierarchicalWeights {
  PoolingWeights word;      // single head
  PoolingWeights sentence;  // single head
};
HierarchicalWeights random_hierarchical_weights(Index d, Index da, std::uint64_t seed);
struct HierarchicalResult {
  std::vector<RowVector> word_weights;  // one per sentence, length = its words
  RowVector sentence_weights;           // one per sentence
  Matrix sentence_vectors;              // sentences x d
  RowVector document;                   // d
};
// `sentences` holds each sentence's word vectors (words x d); empty sentences are skipped with weight 0.
HierarchicalResult hierarchical_attention(const std::vector<Matrix>& sentences, const HierarchicalWeights& w,
                                          const PoolingParams& params, const TraceTag& tag = {});

// ---- Attention-over-attention: M = D Q^T, alpha = column softmax, beta = row softmax,
// beta_avg = mean of beta over document positions, s = alpha beta_avg^T.
struct AoAResult {
  Matrix M;            // |D| x |Q|
  Matrix alpha;        // |D| x |Q|, each column sums to 1 (query-to-document)
  Matrix beta;         // |D| x |Q|, each row sums to 1 (document-to-query)
  RowVector beta_avg;  // |Q|
  Vector s;            // |D|, sums to 1
};
AoAResult attention_over_attention(const MatrixCRef& doc, const MatrixCRef& query, const TraceTag& tag = {});

// ---- Capsule attention: one query per class; c_c = sum_i a_ci x_i; p_c = sigmoid(w_c . c_c + b_c);
// r_c = p_c c_c.
struct CapsuleWeights {
  Matrix queries;  // C x d
  Matrix w;        // C x d
  Vector b;        // C
};
CapsuleWeights random_capsule_weights(Index classes, Index d, std::uint64_t seed);
struct CapsuleResult {
  Matrix weights;        // C x n
  Matrix contexts;       // C x d
  Vector probabilities;  // C
  Matrix capsules;       // C x d
};
// params.score must be parameter-free (dot, scaled dot, cosine): the class queries are the only weights.
CapsuleResult capsule_attention(const MatrixCRef& x, const CapsuleWeights& w, const GlobalParams& params,
                                const TraceTag& tag = {});

// Multi-head capsule attention: the embedding split into H slices of d / H, each class attending with its
// query's slice on each slice of the words (one map per head), r_c = concat_h c_c^h, p_c = sigmoid(w_c . r_c
// + b_c), capsule p_c r_c. One head is capsule_attention. Requires heads to divide d. Records "class
// attention" per head (the map's head); `weights` is their mean.
struct MultiHeadCapsuleResult : CapsuleResult {
  std::vector<Matrix> heads;  // H maps of C x n
};
MultiHeadCapsuleResult multi_head_capsule_attention(const MatrixCRef& x, const CapsuleWeights& w, int heads,
                                                    const GlobalParams& params, const TraceTag& tag = {});

// ---- Capsule dynamic routing (Sabour et al. 2017, "Dynamic Routing Between Capsules", procedure 1):
// predictions u_hat(j|i) = W_ij u_i; logits b = 0; r iterations of
//   c_i = softmax_j(b_i),  s_j = sum_i c_ij u_hat(j|i),  v_j = squash(s_j) = |s_j|^2 / (1 + |s_j|^2) s_j / |s_j|,
//   b_ij += u_hat(j|i) . v_j.
// The coupling coefficients of every iteration are kept. The Lab's inputs are words, so W_ij is drawn per
// (word position i, output capsule j) from the seed: position-specific, as in the paper's primary capsules.
struct RoutingResult {
  std::vector<Matrix> coupling;  // iterations x (J x n): column i of iteration t is c_i, summing to 1 over j
  std::vector<Matrix> logits;    // iterations x (J x n): b before the iteration's softmax
  Matrix outputs;                // J x d_out: v_j after the last iteration
  Vector lengths;                // J: |v_j|, the capsules' "probabilities"
};
// Every u_hat(j|i) = W_ij u_i, as a (J * n) x d_out matrix: row j * n + i. W_ij is d_out x d_in, drawn from
// the seed uniformly with variance 1 / d_in.
Matrix capsule_predictions(const MatrixCRef& u, Index out_capsules, Index out_dim, std::uint64_t seed);
// `predictions` from capsule_predictions (n = predictions.rows() / J); iterations >= 1. Records "iteration t"
// (t from 1), J x n each.
RoutingResult dynamic_routing(const MatrixCRef& predictions, Index out_capsules, int iterations,
                              const TraceTag& tag = {});
RowVector squash(const RowVector& s);

}  // namespace attn
