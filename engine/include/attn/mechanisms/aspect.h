// Attention for a target phrase in its sentence (aspect-based sentiment: "the [battery life] is great"), the
// survey's special queries:
//   - interactive co-attention (IAN, Ma et al. 2017, "Interactive Attention Networks for Aspect-Level
//     Sentiment Classification"): the context attended with the target's average as query, the target attended
//     with the context's average;
//   - rotatory attention (LCR-Rot-hop, Wallaart & Frasincar 2019, "A Hybrid Approach for Aspect-Based
//     Sentiment Analysis Using a Lexicalized Domain Ontology and Attentional Neural Models", after LCR-Rot,
//     Zheng & Xia 2018): left context, target and right context; the target's mean is the first query, the
//     two contexts are attended with it, then the target twice, once with each context's representation as
//     query; every further hop attends the contexts with the target representations of the hop before.
// Every score is bilinear, f(h_i, q) = tanh(h_i^T W q + b) (both papers), normalised by a softmax over the
// sequence. In the papers h are the hidden states of (Bi-)LSTMs over the words; the Lab gives embeddings.
#pragma once

#include "attn/core.h"
#include "attn/trace.h"

#include <cstdint>
#include <vector>

namespace attn {

// One attention of a query over a sequence: f_i = tanh(h_i^T W q + b), a = softmax(f), r = sum_i a_i h_i.
struct BilinearWeights {
  Matrix W;  // d_h x d_q
  float b = 0.0f;
};
BilinearWeights random_bilinear_weights(Index d_h, Index d_q, std::uint64_t seed);
struct BilinearResult {
  RowVector weights;         // one per row of h; empty when h has no rows
  RowVector representation;  // d_h; zero when h has no rows (an empty context contributes nothing)
};
BilinearResult bilinear_attention(const MatrixCRef& h, const RowVector& q, const BilinearWeights& w);

// ---- IAN: context weights alpha from tanh(c_i W_a t_avg + b_a), target weights beta from
// tanh(t_i W_b c_avg + b_b); the output is [c_r; t_r].
struct IanWeights {
  BilinearWeights context;  // W_a, b_a: the context's attention, query = the target's average
  BilinearWeights target;   // W_b, b_b: the target's attention, query = the context's average
};
IanWeights random_ian_weights(Index d, std::uint64_t seed);
struct IanResult {
  BilinearResult context;  // alpha and c_r
  BilinearResult target;   // beta and t_r
  RowVector output;        // [c_r, t_r]
};
// Records "context" (1 x n) then "target" (1 x m). The context must not be empty.
IanResult interactive_attention(const MatrixCRef& context, const MatrixCRef& target, const IanWeights& w,
                                const TraceTag& tag = {});

// ---- LCR-Rot-hop: four bilinear attentions a hop, each hop with its own weights.
struct RotatoryHopWeights {
  BilinearWeights left;          // left context, query: the target (its mean, then r_t^l of the hop before)
  BilinearWeights right;         // right context, query: the target (its mean, then r_t^r of the hop before)
  BilinearWeights target_left;   // target, query: this hop's left context representation r^l
  BilinearWeights target_right;  // target, query: this hop's right context representation r^r
};
std::vector<RotatoryHopWeights> random_rotatory_weights(Index d, int hops, std::uint64_t seed);
struct RotatoryHop {
  BilinearResult left, right, target_left, target_right;
};
struct RotatoryResult {
  RowVector target_mean;          // r_t, the first query
  std::vector<RotatoryHop> hops;  // one per hop, every weight kept
  RowVector output;               // the last hop's [r^l, r_t^l, r_t^r, r^r]
};
// Hops = weights.size() >= 1. A context may be empty (the target starts or ends the sentence): its weights are
// empty and its representation zero. The target must not be empty. Records "left context", "right context",
// "target (left query)" and "target (right query)", each hops x the part's length (row s = hop s + 1); an empty
// context's map is not recorded.
RotatoryResult rotatory_attention(const MatrixCRef& left, const MatrixCRef& target, const MatrixCRef& right,
                                  const std::vector<RotatoryHopWeights>& weights, const TraceTag& tag = {});

}  // namespace attn
