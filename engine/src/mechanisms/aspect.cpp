#include "attn/mechanisms/aspect.h"

#include "attn/mechanisms/normalise.h"
#include "attn/random.h"

#include <cassert>
#include <cmath>
#include <string>

namespace attn {

BilinearWeights random_bilinear_weights(Index d_h, Index d_q, std::uint64_t seed) {
  // Scaled so that h^T W q stays within tanh's slope for unit-scale inputs.
  return {random_normal(d_h, d_q, seed, 1.0f / static_cast<float>(std::max<Index>(1, d_h))), 0.0f};
}

BilinearResult bilinear_attention(const MatrixCRef& h, const RowVector& q, const BilinearWeights& w) {
  assert(w.W.rows() == h.cols() && w.W.cols() == q.size());
  BilinearResult r;
  r.representation = RowVector::Zero(h.cols());
  if (h.rows() == 0) return r;
  const Vector Wq = w.W * q.transpose();  // d_h
  Matrix scores = (h * Wq).transpose();   // 1 x n
  for (Index i = 0; i < scores.cols(); ++i) scores(0, i) = std::tanh(scores(0, i) + w.b);
  r.weights = softmax_rows(scores).row(0);
  r.representation.noalias() = r.weights * h;
  return r;
}

IanWeights random_ian_weights(Index d, std::uint64_t seed) {
  return {random_bilinear_weights(d, d, mix_seed(seed, 61)), random_bilinear_weights(d, d, mix_seed(seed, 62))};
}

IanResult interactive_attention(const MatrixCRef& context, const MatrixCRef& target, const IanWeights& w,
                                const TraceTag& tag) {
  assert(context.rows() > 0 && target.rows() > 0 && context.cols() == target.cols());
  const RowVector context_mean = context.colwise().mean();
  const RowVector target_mean = target.colwise().mean();
  IanResult r;
  r.context = bilinear_attention(context, target_mean, w.context);
  r.target = bilinear_attention(target, context_mean, w.target);
  r.output.resize(context.cols() + target.cols());
  r.output << r.context.representation, r.target.representation;
  if (tag.enabled()) {
    tag.named("context").record(Matrix(r.context.weights));
    tag.named("target").record(Matrix(r.target.weights));
  }
  return r;
}

std::vector<RotatoryHopWeights> random_rotatory_weights(Index d, int hops, std::uint64_t seed) {
  std::vector<RotatoryHopWeights> out;
  for (int s = 0; s < hops; ++s) {
    const std::uint64_t hop = mix_seed(seed, 70 + static_cast<std::uint64_t>(s));
    out.push_back({random_bilinear_weights(d, d, mix_seed(hop, 1)), random_bilinear_weights(d, d, mix_seed(hop, 2)),
                   random_bilinear_weights(d, d, mix_seed(hop, 3)), random_bilinear_weights(d, d, mix_seed(hop, 4))});
  }
  return out;
}

RotatoryResult rotatory_attention(const MatrixCRef& left, const MatrixCRef& target, const MatrixCRef& right,
                                  const std::vector<RotatoryHopWeights>& weights, const TraceTag& tag) {
  assert(target.rows() > 0 && !weights.empty());
  RotatoryResult r;
  r.target_mean = target.colwise().mean();
  RowVector query_left = r.target_mean, query_right = r.target_mean;
  for (std::size_t s = 0; s < weights.size(); ++s) {
    const RotatoryHopWeights& w = weights[s];
    RotatoryHop hop;
    hop.left = bilinear_attention(left, query_left, w.left);
    hop.right = bilinear_attention(right, query_right, w.right);
    hop.target_left = bilinear_attention(target, hop.left.representation, w.target_left);
    hop.target_right = bilinear_attention(target, hop.right.representation, w.target_right);
    query_left = hop.target_left.representation;
    query_right = hop.target_right.representation;
    r.hops.push_back(std::move(hop));
  }
  if (tag.enabled()) {
    // One map per distribution, a row per hop: how each one moves from hop to hop reads down the columns.
    const auto stacked = [&](auto part) {
      Matrix m(static_cast<Index>(r.hops.size()), (r.hops.front().*part).weights.size());
      for (std::size_t s = 0; s < r.hops.size(); ++s) m.row(static_cast<Index>(s)) = (r.hops[s].*part).weights;
      return m;
    };
    if (left.rows() > 0) tag.named("left context").record(stacked(&RotatoryHop::left));
    if (right.rows() > 0) tag.named("right context").record(stacked(&RotatoryHop::right));
    tag.named("target (left query)").record(stacked(&RotatoryHop::target_left));
    tag.named("target (right query)").record(stacked(&RotatoryHop::target_right));
  }
  const RotatoryHop& last = r.hops.back();
  const Index d = target.cols();
  r.output.resize(4 * d);
  r.output << last.left.representation, last.target_left.representation, last.target_right.representation,
      last.right.representation;
  return r;
}

}  // namespace attn
