// The query/key embedding (issue 46, AttentionViz's view): one head's queries and keys over three inputs of the bundled
// induction-gpt2, projected as attn/analysis/qk_embedding.h says, against the same projection computed independently
// here (the translation and scale, then Eigen's JacobiSVD of the centred vectors instead of the covariance's
// eigenvectors), and the refusals.
#include "attn/analysis/qk_embedding.h"
#include "attn/models/transformer.h"

#include <gtest/gtest.h>

#include <Eigen/SVD>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace attn::analysis {
namespace qk_embedding_tests {

using Rows = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

TEST(QkEmbedding, IsThePrincipalPlaneOfTheMovedQueriesAndKeys) {
  auto model = models::TransformerModel::load(ATTN_SOURCE_DIR "/resources/models/induction-gpt2");
  ASSERT_TRUE(model.has_value()) << model.error().message();
  models::TransformerRunner runner(*model);
  models::RunOptions options;
  options.keep = models::RunOptions::Keep::Both;
  std::vector<models::TransformerRun> runs;
  for (const char* text : {"abcdefabcdef", "qwertyuiqwertyui", "thequickbrownfox"}) {
    auto run = runner.run_text(text, {}, options);
    ASSERT_TRUE(run.has_value()) << run.error().message();
    runs.push_back(std::move(*run));
  }
  constexpr int kLayer = 1, kHead = 2;
  std::vector<const OnDemandLayer*> layers;
  for (const auto& r : runs) layers.push_back(&r.on_demand[kLayer]);
  const auto e = qk_embedding(layers, kHead);
  ASSERT_TRUE(e.has_value()) << e.error().message();
  const Index tokens = 12 + 16 + 16, dim = layers.front()->head_dim();
  ASSERT_EQ(e->points.size(), static_cast<std::size_t>(2 * tokens));
  EXPECT_FALSE(e->points.front().key);
  EXPECT_TRUE(e->points.back().key);
  EXPECT_EQ(e->points.back().input, 2);
  EXPECT_EQ(e->points.back().position, 15);
  EXPECT_GT(e->explained[0], e->explained[1]);
  EXPECT_GT(e->explained[1], 0.0);
  EXPECT_LT(e->explained[0] + e->explained[1], 1.0 + 1e-12);

  // The same vectors, moved and scaled as documented, centred, and their SVD's two leading right singular vectors.
  Rows v(2 * tokens, dim);
  Index row = 0;
  for (const OnDemandLayer* l : layers) {
    for (Index t = 0; t < l->tokens(); ++t, ++row) {
      for (Index d = 0; d < dim; ++d) {
        v(row, d) = l->query(kHead, t)[d];
        v(tokens + row, d) = l->key(kHead, t)[d];  // GPT-2: a key group per head
      }
    }
  }
  Rows q = v.topRows(tokens), k = v.bottomRows(tokens);
  k.rowwise() += q.colwise().mean() - k.colwise().mean();
  const double a = std::sqrt(k.rowwise().norm().mean() / q.rowwise().norm().mean());
  EXPECT_NEAR(e->scale, a, 1e-12);
  v << q * a, k / a;
  v.rowwise() -= v.colwise().mean();
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(v, Eigen::ComputeThinV);
  const Eigen::MatrixXd expected = v * svd.matrixV().leftCols(2);
  const double total = svd.singularValues().squaredNorm();
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(e->explained[c], svd.singularValues()(c) * svd.singularValues()(c) / total, 1e-9);
    // Up to the axis's sign.
    const double sign = expected(0, c) * (c ? e->points[0].y : e->points[0].x) >= 0 ? 1.0 : -1.0;
    double worst = 0;
    for (Index i = 0; i < 2 * tokens; ++i) {
      const QkPoint& p = e->points[static_cast<std::size_t>(i)];
      worst = std::max(worst, std::abs((c ? p.y : p.x) - sign * expected(i, c)));
    }
    EXPECT_LT(worst, 1e-4 * std::max(1.0, expected.col(c).cwiseAbs().maxCoeff())) << "component " << c;
  }

  EXPECT_FALSE(qk_embedding({}, 0).has_value());
  EXPECT_EQ(qk_embedding(layers, 4).error().kind, ErrorKind::OutOfRange);
  const OnDemandLayer empty;
  EXPECT_EQ(qk_embedding({&empty}, 0).error().kind, ErrorKind::Unsupported);
}

}  // namespace qk_embedding_tests
}  // namespace attn::analysis
