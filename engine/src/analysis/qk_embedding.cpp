// One head's queries and keys projected together (attn/analysis/qk_embedding.h).
#include "attn/analysis/qk_embedding.h"

#include <Eigen/Eigenvalues>

#include <cmath>
#include <string>

namespace attn::analysis {

namespace {

using Rows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Result<void> check(const std::vector<const OnDemandLayer*>& layers, int head) {
  if (layers.empty()) return fail(ErrorKind::OutOfRange, "query/key embedding: no input to draw");
  const OnDemandLayer* first = layers.front();
  for (const OnDemandLayer* l : layers) {
    if (!l || l->heads() == 0) {
      return fail(ErrorKind::Unsupported,
                  "query/key embedding: an input was run without its queries and keys (run it with attention kept "
                  "on demand)");
    }
    if (l->heads() != first->heads() || l->kv_heads() != first->kv_heads() || l->head_dim() != first->head_dim()) {
      return fail(ErrorKind::Mismatch, "query/key embedding: the inputs' layers have different shapes");
    }
  }
  if (head < 0 || head >= first->heads()) {
    return fail(ErrorKind::OutOfRange, "query/key embedding: head " + std::to_string(head) + " of a layer of " +
                                           std::to_string(first->heads()) + " heads (0 to " +
                                           std::to_string(first->heads() - 1) + ")");
  }
  return {};
}

}  // namespace

Result<QkEmbedding> qk_embedding(const std::vector<const OnDemandLayer*>& layers, int head) {
  if (auto ok = check(layers, head); !ok) return std::unexpected(ok.error());
  const Index dim = layers.front()->head_dim();
  const int group = head / (layers.front()->heads() / layers.front()->kv_heads());
  Index tokens = 0;
  for (const OnDemandLayer* l : layers) tokens += l->tokens();
  if (2 * tokens < 3) return fail(ErrorKind::OutOfRange, "query/key embedding: fewer than 3 vectors to project");
  // Queries in rows [0, tokens), keys in [tokens, 2 tokens), input by input.
  Rows v(2 * tokens, dim);
  QkEmbedding out;
  out.points.reserve(static_cast<std::size_t>(2 * tokens));
  Index row = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (Index t = 0; t < layers[i]->tokens(); ++t, ++row) {
      const float* q = layers[i]->query(head, t);
      const float* k = layers[i]->key(group, t);
      for (Index d = 0; d < dim; ++d) {
        v(row, d) = q[d];
        v(tokens + row, d) = k[d];
      }
    }
  }
  auto queries = v.topRows(tokens);
  auto keys = v.bottomRows(tokens);
  const Eigen::RowVectorXd shift = queries.colwise().mean() - keys.colwise().mean();
  keys.rowwise() += shift;
  const double q_norm = queries.rowwise().norm().mean(), k_norm = keys.rowwise().norm().mean();
  out.scale = q_norm > 0 && k_norm > 0 ? std::sqrt(k_norm / q_norm) : 1.0;
  queries *= out.scale;
  keys /= out.scale;
  v.rowwise() -= v.colwise().mean();
  const Eigen::MatrixXd covariance = (v.transpose() * v) / static_cast<double>(v.rows());
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(covariance);
  const Index n = dim;
  const double total = eigen.eigenvalues().sum();
  const Eigen::MatrixXd axes = eigen.eigenvectors().rightCols(2).rowwise().reverse();  // largest first
  const Eigen::MatrixXd projected = v * axes;
  for (int c = 0; c < 2; ++c) out.explained[c] = total > 0 ? eigen.eigenvalues()(n - 1 - c) / total : 0.0;
  row = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      for (Index t = 0; t < layers[i]->tokens(); ++t) {
        const Index r = (pass ? tokens : 0) + row + t;
        out.points.push_back({static_cast<int>(i), static_cast<int>(t), pass == 1, static_cast<float>(projected(r, 0)),
                              static_cast<float>(projected(r, 1))});
      }
      row += layers[i]->tokens();
    }
    row = 0;
  }
  return out;
}

}  // namespace attn::analysis
