#include "attn/mechanisms/attention.h"

#include "test_util.h"

#include <cmath>

using namespace attn;
using attn::test::expect_near;
using attn::test::expect_rows_sum_to_one;
using attn::test::mat;

namespace {
struct Fixture {
  Matrix q = Matrix::Random(4, 8);
  Matrix k = Matrix::Random(9, 8);
  Matrix v = Matrix::Random(9, 5);
};
}  // namespace

TEST(Global, WeightsAreSoftmaxOfScoresAndContextIsWeightedValues) {
  const Matrix q = mat({{1, 0}});
  const Matrix k = mat({{1, 0}, {0, 1}});
  const Matrix v = mat({{10, 0}, {0, 10}});
  const AttentionResult r = global_attention(q, k, v, {}, {ScoreKind::Dot, Normaliser::Softmax, 1.0f});
  const float e = std::exp(1.0f);
  expect_near(r.weights, mat({{e / (e + 1), 1 / (e + 1)}}));
  expect_near(r.context, mat({{10 * e / (e + 1), 10 / (e + 1)}}), 1e-4f);
}

TEST(Global, RecordsItsWeightsWithLabels) {
  Fixture f;
  AttentionTrace trace;
  Labels rows{"a", "b", "c", "d"};
  Labels cols(9, "x");
  const AttentionResult r =
      global_attention(f.q, f.k, f.v, {}, {}, {}, {.trace = &trace, .name = "w", .rows = &rows, .cols = &cols});
  ASSERT_EQ(trace.size(), 1u);
  expect_near(trace.maps()[0].weights, r.weights);
  EXPECT_EQ(trace.maps()[0].row_labels, rows);
  EXPECT_EQ(trace.maps()[0].name, "w");
}

TEST(Global, EveryScoreGivesRowsThatSumToOne) {
  Fixture f;
  for (ScoreKind kind : {ScoreKind::Dot, ScoreKind::ScaledDot, ScoreKind::General, ScoreKind::Concat,
                         ScoreKind::Additive, ScoreKind::Cosine}) {
    const AttentionResult r = global_attention(f.q, f.k, f.v, random_score_weights(kind, 8, 8, 6, 3), {kind});
    expect_rows_sum_to_one(r.weights);
    EXPECT_EQ(r.context.rows(), 4);
    EXPECT_EQ(r.context.cols(), 5);
  }
}

TEST(Location, IgnoresTheSourceContent) {
  const Matrix q = mat({{1, 0}, {0, 1}});
  const Matrix W = mat({{1, 0}, {0, 1}, {0, 0}});
  const Matrix v1 = Matrix::Random(3, 2);
  const Matrix v2 = Matrix::Random(3, 2);
  const auto a = location_attention(q, v1, W, {});
  const auto b = location_attention(q, v2, W, {});
  expect_near(a.weights, b.weights);
  expect_rows_sum_to_one(a.weights);
  EXPECT_GT(a.weights(0, 0), a.weights(0, 1));
}

TEST(Local, MonotonicIsZeroOutsideTheWindowAndSumsToOneInside) {
  Fixture f;
  LocalParams p = local_defaults(LocalKind::Monotonic);
  p.score = ScoreKind::Dot;
  p.window = 1;
  const LocalResult r = local_attention(f.q, f.k, f.v, {}, {}, p);
  EXPECT_FALSE(p.gaussian);
  for (Index t = 0; t < 4; ++t) {
    EXPECT_FLOAT_EQ(r.positions(t), static_cast<float>(t));
    for (Index s = 0; s < 9; ++s) {
      if (std::abs(s - t) > 1) {
        EXPECT_EQ(r.weights(t, s), 0.0f) << t << "," << s;
      }
    }
  }
  expect_rows_sum_to_one(r.weights);
}

TEST(Local, PredictivePositionIsSTimesSigmoid) {
  // W_p = 0 gives tanh(0) = 0, sigmoid(0) = 1/2: p_t = S / 2 for every t.
  Fixture f;
  LocalWeights lw{Matrix::Zero(3, 8), Eigen::VectorXf::Ones(3)};
  LocalParams p = local_defaults(LocalKind::Predictive);
  p.score = ScoreKind::Dot;
  p.window = 2;
  const LocalResult r = local_attention(f.q, f.k, f.v, {}, lw, p);
  for (Index t = 0; t < 4; ++t) EXPECT_FLOAT_EQ(r.positions(t), 4.5f);
  // Keys 3..6 are within D = 2 of 4.5; the rest are zero.
  for (Index s : {0, 1, 2, 7, 8}) EXPECT_EQ(r.weights(0, s), 0.0f);
}

TEST(Local, PredictiveWeightsAreWindowSoftmaxTimesGaussian) {
  const Matrix q = mat({{0, 0}});
  const Matrix k = Matrix::Zero(5, 2);  // equal scores: the windowed softmax is uniform
  const Matrix v = Matrix::Identity(5, 5);
  LocalWeights lw{Matrix::Zero(1, 2), Eigen::VectorXf::Ones(1)};  // p_t = 2.5
  LocalParams p = local_defaults(LocalKind::Predictive);
  p.score = ScoreKind::Dot;
  p.window = 2;  // sigma = 1, keys 1..4 visible
  const LocalResult r = local_attention(q, k, v, {}, lw, p);
  for (Index s = 1; s <= 4; ++s) {
    const float d = static_cast<float>(s) - 2.5f;
    EXPECT_NEAR(r.weights(0, s), 0.25f * std::exp(-d * d / 2.0f), 1e-6f);
  }
  EXPECT_EQ(r.weights(0, 0), 0.0f);
}

TEST(Hard, ArgmaxIsOneHotOnTheLargest) {
  const Matrix h = hard_argmax(mat({{0.1f, 0.7f, 0.2f}, {0.5f, 0.2f, 0.3f}, {0, 0, 0}}));
  expect_near(h, mat({{0, 1, 0}, {1, 0, 0}, {0, 0, 0}}));
}

TEST(Hard, SamplingIsOneHotSeededAndFollowsTheWeights) {
  const Matrix w = Matrix::Constant(2000, 4, 0.0f).rowwise() + mat({{0.1f, 0.2f, 0.0f, 0.7f}}).row(0);
  const Matrix a = hard_sample(w, 7);
  const Matrix b = hard_sample(w, 7);
  const Matrix c = hard_sample(w, 8);
  expect_near(a, b, 0.0f);
  EXPECT_NE((a - c).cwiseAbs().sum(), 0.0f);
  for (Index i = 0; i < a.rows(); ++i) EXPECT_EQ(a.row(i).sum(), 1.0f);
  EXPECT_EQ(a.col(2).sum(), 0.0f);  // zero-probability key never drawn
  const RowVector freq = a.colwise().sum() / 2000.0f;
  EXPECT_NEAR(freq(0), 0.1f, 0.03f);
  EXPECT_NEAR(freq(3), 0.7f, 0.04f);
}

TEST(Hard, AttentionContextIsTheChosenValue) {
  Fixture f;
  const HardResult r = hard_attention(f.q, f.k, f.v, {}, {}, HardMode::Argmax, 0);
  for (Index t = 0; t < 4; ++t) {
    Index j = 0;
    r.soft_weights.row(t).maxCoeff(&j);
    expect_near(r.context.row(t), f.v.row(j));
  }
}

TEST(Gated, ContextIsBetaTimesSoftContext) {
  Fixture f;
  GateWeights gate{Eigen::VectorXf::Zero(8), std::log(3.0f)};  // beta = sigmoid(ln 3) = 0.75
  const GatedResult g = gated_attention(f.q, f.k, f.v, {}, {}, gate);
  const AttentionResult soft = global_attention(f.q, f.k, f.v, {}, {});
  for (Index t = 0; t < 4; ++t) EXPECT_NEAR(g.beta(t), 0.75f, 1e-6f);
  expect_near(g.context, 0.75f * soft.context);
  expect_near(g.weights, soft.weights);
}
