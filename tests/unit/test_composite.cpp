#include "attn/mechanisms/composite.h"

#include "test_util.h"

#include <cmath>

using namespace attn;
using attn::test::expect_near;
using attn::test::expect_rows_sum_to_one;
using attn::test::mat;

TEST(MultiHop, KeepsEveryHopAndAddsContextToTheQuery) {
  const Matrix q = Matrix::Random(2, 4);
  const Matrix mem = Matrix::Random(6, 4);
  MultiHopParams p;
  p.hops = 3;
  p.attention.score = ScoreKind::Dot;
  AttentionTrace trace;
  const MultiHopResult r = multi_hop_attention(q, mem, {}, {}, p, {.trace = &trace});
  ASSERT_EQ(r.hop_weights.size(), 3u);
  ASSERT_EQ(r.queries.size(), 4u);
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace.maps()[2].name, "hop 2");  // 0-based, as every index
  for (int s = 0; s < 3; ++s) {
    expect_rows_sum_to_one(r.hop_weights[s]);
    const Matrix c = r.hop_weights[s] * mem;
    expect_near(r.queries[s + 1], r.queries[s] + c);
  }
  // Hops see different queries, so their maps differ.
  EXPECT_GT((r.hop_weights[0] - r.hop_weights[2]).cwiseAbs().maxCoeff(), 1e-4f);
}

TEST(MultiHop, LinearUpdateUsesTanhOfConcatenation) {
  const Matrix q = mat({{1, 0}});
  const Matrix mem = mat({{0, 1}, {1, 0}});
  Matrix W = Matrix::Zero(2, 4);
  W(0, 0) = 1;  // next_0 = tanh(q_0), next_1 = tanh(c_1)
  W(1, 3) = 1;
  MultiHopParams p;
  p.hops = 1;
  p.update = HopUpdate::Linear;
  p.attention.score = ScoreKind::Dot;
  const MultiHopResult r = multi_hop_attention(q, mem, {}, W, p);
  EXPECT_NEAR(r.queries[1](0, 0), std::tanh(1.0f), 1e-6f);
  EXPECT_NEAR(r.queries[1](0, 1), std::tanh(r.context(0, 1)), 1e-6f);
}

TEST(Hierarchical, WordAndSentenceWeightsAreDistributions) {
  const HierarchicalWeights w = random_hierarchical_weights(5, 4, 3);
  std::vector<Matrix> doc{Matrix::Random(3, 5), Matrix(0, 5), Matrix::Random(4, 5)};
  AttentionTrace trace;
  const HierarchicalResult r = hierarchical_attention(doc, w, {}, {.trace = &trace});
  ASSERT_EQ(r.word_weights.size(), 3u);
  EXPECT_NEAR(r.word_weights[0].sum(), 1.0f, 1e-6f);
  EXPECT_EQ(r.word_weights[1].size(), 0);
  EXPECT_NEAR(r.word_weights[2].sum(), 1.0f, 1e-6f);
  EXPECT_EQ(r.sentence_weights(1), 0.0f);  // the empty sentence gets nothing
  EXPECT_NEAR(r.sentence_weights.sum(), 1.0f, 1e-6f);
  // Document = sentence-weighted sum of sentence vectors, each a word-weighted sum.
  expect_near(Matrix(r.sentence_vectors.row(2)), Matrix(r.word_weights[2] * doc[2]));
  expect_near(Matrix(r.document), Matrix(r.sentence_weights * r.sentence_vectors));
  EXPECT_EQ(trace.size(), 3u);  // two non-empty sentences, then the sentence map
}

TEST(AttentionOverAttention, MatchesTheDefinitions) {
  const Matrix D = Matrix::Random(6, 4);
  const Matrix Q = Matrix::Random(3, 4);
  const AoAResult r = attention_over_attention(D, Q);
  const Matrix M = D * Q.transpose();
  expect_near(r.M, M);
  for (Index j = 0; j < 3; ++j) EXPECT_NEAR(r.alpha.col(j).sum(), 1.0f, 1e-6f);
  expect_rows_sum_to_one(r.beta);
  // alpha(i, j) by hand.
  const float a00 = std::exp(M(0, 0)) / M.col(0).array().exp().sum();
  EXPECT_NEAR(r.alpha(0, 0), a00, 1e-6f);
  expect_near(Matrix(r.beta_avg), Matrix(r.beta.colwise().mean()));
  expect_near(Matrix(r.s), Matrix(r.alpha * r.beta_avg.transpose()));
  EXPECT_NEAR(r.s.sum(), 1.0f, 1e-5f);
}

TEST(Capsule, ProbabilitiesGateTheCapsules) {
  CapsuleWeights w{mat({{1, 0}, {0, 1}}), mat({{0, 0}, {100, 100}}), attn::test::vec({0, 0})};
  const Matrix x = mat({{5, 0}, {0, 5}, {1, 1}});
  const CapsuleResult r = capsule_attention(x, w, {ScoreKind::Dot});
  expect_rows_sum_to_one(r.weights);
  EXPECT_NEAR(r.probabilities(0), 0.5f, 1e-6f);  // w_0 = 0: sigmoid(0)
  EXPECT_NEAR(r.probabilities(1), 1.0f, 1e-6f);
  expect_near(Matrix(r.capsules.row(0)), Matrix(0.5f * r.contexts.row(0)));
  EXPECT_GT(r.weights(0, 0), r.weights(0, 1));  // class 0's query looks along x
  EXPECT_GT(r.weights(1, 1), r.weights(1, 0));
}

// One head is capsule attention; with two, each head attends on its half of the embedding with its half of
// the query, and r_c is the two contexts side by side. Here x's first half points one way and its second half
// another: the heads disagree, the mean of their maps is what `weights` holds.
TEST(Capsule, MultiHeadSplitsTheEmbeddingAndConcatenates) {
  CapsuleWeights w{mat({{1, 0, 0, 1}}), mat({{1, 1, 1, 1}}), attn::test::vec({0})};
  const Matrix x = mat({{4, 0, 0, 0}, {0, 0, 0, 4}, {1, 1, 1, 1}});
  const GlobalParams params{ScoreKind::ScaledDot};
  const CapsuleResult single = capsule_attention(x, w, params);
  const MultiHeadCapsuleResult one = multi_head_capsule_attention(x, w, 1, params);
  expect_near(one.weights, single.weights);
  expect_near(one.capsules, single.capsules);
  AttentionTrace trace;
  const MultiHeadCapsuleResult two = multi_head_capsule_attention(x, w, 2, params, {.trace = &trace});
  ASSERT_EQ(two.heads.size(), 2u);
  for (const Matrix& h : two.heads) expect_rows_sum_to_one(h);
  EXPECT_GT(two.heads[0](0, 0), two.heads[0](0, 1));  // head 0 sees dims 0-1: word 0 points along its query
  EXPECT_GT(two.heads[1](0, 1), two.heads[1](0, 0));  // head 1 sees dims 2-3: word 1 does
  expect_near(two.weights, Matrix((two.heads[0] + two.heads[1]) / 2.0f));
  expect_near(Matrix(two.contexts.leftCols(2)), Matrix(two.heads[0] * x.leftCols(2)));
  expect_near(Matrix(two.contexts.rightCols(2)), Matrix(two.heads[1] * x.rightCols(2)));
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace.maps()[1].head, 1);
}

// Routing by agreement, worked by hand for two inputs and two output capsules in 2-D: the first iteration
// couples uniformly; the agreement u_hat . v then moves each input's coupling towards the capsule its
// prediction agrees with.
TEST(CapsuleRouting, TwoIterationsByHand) {
  // Rows j * n + i: u_hat(0|0), u_hat(0|1), u_hat(1|0), u_hat(1|1).
  const Matrix predictions = mat({{1.0f, 0.0f}, {1.0f, 0.0f}, {0.0f, 1.0f}, {0.0f, -1.0f}});
  AttentionTrace trace;
  const RoutingResult r = dynamic_routing(predictions, 2, 2, {.trace = &trace});
  ASSERT_EQ(r.coupling.size(), 2u);
  expect_near(r.coupling[0], Matrix::Constant(2, 2, 0.5f), 1e-7f);
  // Iteration 1: s_0 = (1, 0), squash -> (0.5, 0); s_1 = (0, 0): v_1 = 0. b_00 = b_01 = 0.5, b_1i = 0.
  EXPECT_NEAR(r.logits[1](0, 0), 0.5f, 1e-6f);
  EXPECT_NEAR(r.logits[1](1, 1), 0.0f, 1e-6f);
  const float c00 = 1.0f / (1.0f + std::exp(-0.5f));  // softmax over j of (0.5, 0)
  EXPECT_NEAR(r.coupling[1](0, 0), c00, 1e-6f);
  EXPECT_NEAR(r.coupling[1](1, 0), 1.0f - c00, 1e-6f);
  // Iteration 2: s_0 = (2 c00, 0), squashed to length |s|^2 / (1 + |s|^2).
  const float s0 = 2.0f * c00;
  EXPECT_NEAR(r.outputs(0, 0), s0 * s0 / (1.0f + s0 * s0), 1e-6f);
  EXPECT_NEAR(r.lengths(0), s0 * s0 / (1.0f + s0 * s0), 1e-6f);
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace.maps()[1].name, "iteration 1");  // indices count from 0
  for (const Matrix& c : r.coupling) {
    for (Index i = 0; i < c.cols(); ++i) EXPECT_NEAR(c.col(i).sum(), 1.0f, 1e-6f);
  }
}

TEST(CapsuleRouting, SquashKeepsDirectionAndBoundsLength) {
  RowVector s(3);
  s << 3.0f, 0.0f, 4.0f;  // |s| = 5
  const RowVector v = squash(s);
  EXPECT_NEAR(v.norm(), 25.0f / 26.0f, 1e-6f);
  EXPECT_NEAR(v(0) / v(2), 0.75f, 1e-6f);
  EXPECT_EQ(squash(RowVector::Zero(3)), RowVector::Zero(3));
  // Predictions are W_ij u_i with a W per (position, capsule): two equal words predict differently.
  const Matrix u = Matrix::Ones(2, 4);
  const Matrix p = capsule_predictions(u, 3, 5, 7);
  ASSERT_EQ(p.rows(), 6);
  ASSERT_EQ(p.cols(), 5);
  EXPECT_GT((p.row(0) - p.row(1)).norm(), 1e-3f);
  EXPECT_EQ(capsule_predictions(u, 3, 5, 7), p);  // seeded
}
