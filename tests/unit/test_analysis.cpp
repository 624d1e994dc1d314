#include "attn/analysis/attention_analysis.h"

#include <gtest/gtest.h>

#include <cmath>

namespace attn::analysis {
namespace {

Matrix mat2(float a, float b, float c, float d) {
  Matrix m(2, 2);
  m << a, b, c, d;
  return m;
}

LayeredTrace trace_of(const std::vector<std::vector<Matrix>>& layers) {
  LayeredTrace t;
  const Index n = layers.front().front().rows();
  for (Index i = 0; i < n; ++i) t.tokens.push_back("t" + std::to_string(i));
  for (std::size_t l = 0; l < layers.size(); ++l) {
    HeadStack s(static_cast<int>(layers[l].size()), n, layers[l].front().cols());
    for (std::size_t h = 0; h < layers[l].size(); ++h) s.set_head(static_cast<int>(h), layers[l][h]);
    t.layers.push_back({Stage::Encoder, static_cast<int>(l), std::move(s)});
  }
  return t;
}

void expect_matrix(const Matrix& got, const Matrix& want) {
  ASSERT_EQ(got.rows(), want.rows());
  ASSERT_EQ(got.cols(), want.cols());
  for (Index i = 0; i < got.size(); ++i) EXPECT_NEAR(got.data()[i], want.data()[i], 1e-6f) << "entry " << i;
}

// Two heads whose mean is uniform: A' = 0.5 A + 0.5 I = [[.75,.25],[.25,.75]] per layer, and two layers
// multiply to [[.625,.375],[.375,.625]] (worked by hand).
TEST(Rollout, MeanFusionWithTheResidualMultipliesLayers) {
  const std::vector<Matrix> heads{mat2(1, 0, 0.5f, 0.5f), mat2(0, 1, 0.5f, 0.5f)};
  const auto t = trace_of({heads, heads});
  auto one = rollout(t, {.last_layer = 0});
  ASSERT_TRUE(one) << one.error().message();
  expect_matrix(*one, mat2(0.75f, 0.25f, 0.25f, 0.75f));
  auto two = rollout(t);
  ASSERT_TRUE(two);
  expect_matrix(*two, mat2(0.625f, 0.375f, 0.375f, 0.625f));
}

// Max fusion [[1,1],[.5,.5]] -> 0.5 A + 0.5 I = [[1,.5],[.25,.75]]: row 0 sums to 1.5 and is renormalised
// per row (vit-explain's a / a.sum(dim=-1) would divide column j by row j's sum instead).
TEST(Rollout, MaxFusionRenormalisesRows) {
  const auto t = trace_of({{mat2(1, 0, 0.5f, 0.5f), mat2(0, 1, 0.5f, 0.5f)}});
  auto r = rollout(t, {.fusion = HeadFusion::Max});
  ASSERT_TRUE(r);
  expect_matrix(*r, mat2(2.0f / 3, 1.0f / 3, 0.25f, 0.75f));
  auto min = rollout(t, {.fusion = HeadFusion::Min, .residual = 0.0f});
  ASSERT_TRUE(min);
  // Min fusion [[0,0],[.5,.5]] with no residual: row 0 has no weight left and keeps the token on itself.
  expect_matrix(*min, mat2(1, 0, 0.5f, 0.5f));
}

// Discard ratio 0.5 of a 2 x 2 map zeroes the two smallest weights, 0.1 (entry 0, the class token on
// itself, which is kept) and 0.4: [[.1,.9],[.6,0]] -> 0.5 A + 0.5 I = [[.55,.45],[.3,.5]] -> rows to 1.
TEST(Rollout, DiscardRatioKeepsTheClassTokensOwnWeight) {
  const auto t = trace_of({{mat2(0.1f, 0.9f, 0.6f, 0.4f)}});
  auto r = rollout(t, {.discard_ratio = 0.5f});
  ASSERT_TRUE(r);
  expect_matrix(*r, mat2(0.55f, 0.45f, 0.375f, 0.625f));
}

TEST(Rollout, RowsOfEveryResultSumToOne) {
  Matrix a = Matrix::Random(5, 5).cwiseAbs();
  for (Index i = 0; i < 5; ++i) a.row(i) /= a.row(i).sum();
  const auto t = trace_of({{a, a.transpose()}, {a}, {a}});
  for (auto fusion : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min}) {
    auto r = rollout(t, {.fusion = fusion, .discard_ratio = 0.3f, .residual = 0.2f});
    ASSERT_TRUE(r);
    for (Index i = 0; i < 5; ++i) EXPECT_NEAR(r->row(i).sum(), 1.0f, 1e-5f);
  }
}

TEST(Rollout, RefusesBadOptionsAndMissingLayers) {
  const auto t = trace_of({{mat2(1, 0, 0, 1)}});
  EXPECT_FALSE(rollout(t, {.discard_ratio = 1.0f}));
  EXPECT_FALSE(rollout(t, {.residual = -0.1f}));
  EXPECT_FALSE(rollout(t, {.last_layer = 1}));
  auto none = rollout(t, {.stage = Stage::Decoder});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().reason, "rollout: the trace has no decoder layers");
}

// A long dump's rollout would be a 4097^3 product per layer: refused with the figures, not left to run.
TEST(Rollout, RefusesMoreThanItsTokenLimit) {
  LayeredTrace t;
  const Index n = kRolloutMaxTokens + 1;
  t.tokens.assign(static_cast<std::size_t>(n), "t");
  t.layers.push_back({Stage::Encoder, 0, HeadStack(1, n, n, Precision::F16)});
  const auto refused = rollout(t);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(refused.error().reason,
            "rollout: 4,097 tokens; the whole rollout is a 4,097 x 4,097 matrix (64 MiB) costing 4,097^3 "
            "multiply-adds for each of 1 layer; it is computed up to 4,096 tokens");
}

TEST(HeadStatistics, IdentityAndUniformHeads) {
  const Matrix uniform = Matrix::Constant(4, 4, 0.25f);
  const auto t = trace_of({{Matrix::Identity(4, 4), uniform}});
  const auto stats = head_statistics(t, {.special_positions = {0, 3, 3}, .query_row = {}});
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].head, 0);
  EXPECT_FLOAT_EQ(stats[0].entropy, 0.0f);
  EXPECT_FLOAT_EQ(stats[0].mean_distance, 0.0f);
  EXPECT_FLOAT_EQ(stats[0].max_weight, 1.0f);
  EXPECT_FLOAT_EQ(stats[0].first_mass, 0.25f);    // only row 0 puts weight on token 0
  EXPECT_FLOAT_EQ(stats[0].special_mass, 0.25f);  // only row 3 on token 3 (listed twice, counted once)
  EXPECT_NEAR(stats[1].entropy, std::log(4.0f), 1e-6f);
  EXPECT_FLOAT_EQ(stats[1].max_entropy, std::log(4.0f));
  // Rows 0..3 of a uniform map: (0+1+2+3)/4, (1+0+1+2)/4, ... = 1.5, 1, 1, 1.5.
  EXPECT_FLOAT_EQ(stats[1].mean_distance, 1.25f);
  EXPECT_FLOAT_EQ(stats[1].first_mass, 0.25f);
}

// A generation step's statistics: only its query row (here row 2 of a causal map), not the mean over rows.
TEST(HeadStatistics, OneQueryRowForAGenerationStep) {
  Matrix causal = Matrix::Zero(3, 3);
  causal << 1.0f, 0.0f, 0.0f, 0.5f, 0.5f, 0.0f, 0.25f, 0.25f, 0.5f;
  const auto t = trace_of({{causal}});
  const auto row = head_statistics(t, {.special_positions = {1}, .query_row = 2});
  ASSERT_EQ(row.size(), 1u);
  EXPECT_NEAR(row[0].entropy, -(0.5f * std::log(0.25f) + 0.5f * std::log(0.5f)), 1e-6f);
  EXPECT_FLOAT_EQ(row[0].mean_distance, 0.25f * 2 + 0.25f * 1);
  EXPECT_FLOAT_EQ(row[0].first_mass, 0.25f);
  EXPECT_FLOAT_EQ(row[0].special_mass, 0.25f);
  EXPECT_FLOAT_EQ(row[0].max_weight, 0.5f);  // row 0's 1.0 is not this step's
  const auto all = head_statistics(t, {.special_positions = {1}, .query_row = {}});
  EXPECT_FLOAT_EQ(all[0].max_weight, 1.0f);
  EXPECT_FLOAT_EQ(all[0].first_mass, (1.0f + 0.5f + 0.25f) / 3);
  const auto outside = head_statistics(t, {.special_positions = {}, .query_row = 3});
  EXPECT_FLOAT_EQ(outside[0].first_mass, 0.0f);
}

// A dump of scores (weights outside [0, 1]) has no entropy or mean distance: NaN, not a huge negative number
// (the dump of tests/data/bad/dumps/weights-outside-unit gave "entropy -3.45e30"). Rounding past 1 is fine.
TEST(HeadStatistics, NotDefinedForWeightsOutsideTheUnitInterval) {
  const auto t = trace_of({{mat2(-0.5f, 1.5f, 1e30f, 0.0f), mat2(1.0f + 1e-6f, 0.0f, 0.5f, 0.5f)}});
  const auto stats = head_statistics(t);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_TRUE(std::isnan(stats[0].entropy));
  EXPECT_TRUE(std::isnan(stats[0].mean_distance));
  EXPECT_FLOAT_EQ(stats[0].max_weight, 1e30f);  // what the map holds is still reported
  EXPECT_FALSE(std::isnan(stats[1].entropy));
  EXPECT_NEAR(stats[1].entropy, std::log(2.0f) / 2, 1e-5f);
}

// A class token and a 2 x 2 patch grid, uniform: from every patch the others lie at 0, 1, 1 and sqrt 2
// patches, each with a fifth of the weight, out of the 0.8 that lands on patches.
TEST(HeadStatistics, PatchGridDistance) {
  const auto t = trace_of({{Matrix::Constant(5, 5, 0.2f)}});
  const auto stats = head_statistics(
      t, {.stage = Stage::Encoder, .special_positions = {}, .grid_rows = 2, .grid_cols = 2, .query_row = {}});
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_NEAR(stats[0].mean_distance, (2.0f + std::sqrt(2.0f)) / 4.0f, 1e-6f);
}

}  // namespace
}  // namespace attn::analysis
