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
