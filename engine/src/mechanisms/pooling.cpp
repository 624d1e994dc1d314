#include "attn/mechanisms/pooling.h"

#include "attn/mechanisms/blocks.h"
#include "attn/random.h"

#include <cassert>

namespace attn {

PoolingWeights random_pooling_weights(Index d, Index da, int heads, Index max_len, std::uint64_t seed) {
  PoolingWeights w;
  w.W = xavier_uniform(da, d, mix_seed(seed, 31)) * 2.0f;
  w.b = Vector::Zero(da);
  w.w = xavier_uniform(heads, da, mix_seed(seed, 32)) * 4.0f;
  w.positions = random_normal(max_len, d, mix_seed(seed, 33), 0.1f);
  return w;
}

PoolingResult attention_pooling(const MatrixCRef& x_in, const PoolingWeights& w, const PoolingParams& params,
                                const TraceTag& tag) {
  const Index n = x_in.rows();
  const Index d = x_in.cols();
  assert(w.W.cols() == d && w.b.size() == w.W.rows() && w.w.cols() == w.W.rows());
  Matrix x = x_in;
  if (params.positions == PositionKind::Sinusoidal) {
    x += sinusoidal_positions(n, d);
  } else if (params.positions == PositionKind::Learned) {
    assert(w.positions.rows() >= n && w.positions.cols() == d);
    x += w.positions.topRows(n);
  }
  // u = tanh(W x_i + b): n x da; scores = w u^T: heads x n.
  const Matrix u = linear(x, w.W, w.b).array().tanh().matrix();
  Matrix s(w.w.rows(), n);
  s.noalias() = w.w * u.transpose();

  PoolingResult r;
  r.weights = normalise_rows(params.normaliser, s, params.temperature);
  r.context.resize(w.w.rows(), d);
  r.context.noalias() = r.weights * x;
  r.pooled = Eigen::Map<const RowVector>(r.context.data(), r.context.size());
  tag.record(r.weights);
  return r;
}

}  // namespace attn
