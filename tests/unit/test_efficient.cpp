// Linformer, Synthesizer and the Reformer's LSH attention: what each must be, from its definition.
#include "attn/lab/lab.h"
#include "attn/mechanisms/efficient.h"
#include "attn/random.h"

#include <gtest/gtest.h>

#include <Eigen/LU>

namespace attn {
namespace {

// With k = n and E = F = I nothing is projected away: Linformer is full attention, P E = A exactly.
TEST(Linformer, IdentityProjectionsGiveFullAttention) {
  const Matrix x = random_normal(6, 4, 1);
  LinformerWeights w = random_linformer_weights(4, 6, 6, 2);
  w.E = w.F = Matrix::Identity(6, 6);
  const LinformerResult r = linformer_attention(x, w);
  EXPECT_LT((r.P - r.full).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT(r.error, 1e-6f);
}

TEST(Linformer, ProjectedMapIsADistributionOverKAndImpliesAnNByNMap) {
  const Matrix x = random_normal(12, 8, 3);
  AttentionTrace trace;
  const LinformerResult r = linformer_attention(x, random_linformer_weights(8, 12, 3, 4), {.trace = &trace});
  ASSERT_EQ(r.P.rows(), 12);
  ASSERT_EQ(r.P.cols(), 3);
  for (Index i = 0; i < 12; ++i) EXPECT_NEAR(r.P.row(i).sum(), 1.0f, 1e-5f);
  EXPECT_EQ(r.implied.rows(), 12);
  EXPECT_EQ(r.implied.cols(), 12);
  EXPECT_GT(r.error, 0.0f);
  ASSERT_EQ(trace.size(), 3u);
  EXPECT_EQ(trace.maps()[1].name, "implied (P E)");
  const auto curve = linformer_error_curve(x, {1, 3, 12}, 4);
  ASSERT_EQ(curve.size(), 3u);
  EXPECT_EQ(curve[1], r.error);  // the same seed draws the same projections for k = 3
}

TEST(Synthesizer, EachFormDependsOnlyOnWhatItShould) {
  const Index n = 7, d = 5;
  const Matrix x = random_normal(n, d, 5);
  Matrix other = x;
  other.row(6) = random_normal(1, d, 6);  // another last word
  const SynthesizerWeights w = random_synthesizer_weights(d, n, 2, 7);
  // Random: the words do not matter at all.
  EXPECT_EQ(synthesizer_attention(x, w, SynthesizerKind::Random).weights,
            synthesizer_attention(other, w, SynthesizerKind::Random).weights);
  // Dense: token i's row depends on token i alone.
  const Matrix dense = synthesizer_attention(x, w, SynthesizerKind::Dense).weights;
  const Matrix dense_other = synthesizer_attention(other, w, SynthesizerKind::Dense).weights;
  EXPECT_EQ(dense.topRows(6), dense_other.topRows(6));
  EXPECT_NE(dense.row(6), dense_other.row(6));
  // Factorised random: logits of rank k.
  const Matrix logits = synthesizer_attention(x, w, SynthesizerKind::FactorizedRandom).logits;
  EXPECT_EQ(Eigen::FullPivLU<Matrix>(logits).rank(), 2);
  // Factorised dense: C_i[p] = A_i[p mod a] B_i[p div a].
  const Matrix fd = synthesizer_attention(x, w, SynthesizerKind::FactorizedDense).logits;
  const Matrix A = x * w.Wa, B = x * w.Wb;
  EXPECT_FLOAT_EQ(fd(3, 5), A(3, 5 % A.cols()) * B(3, 5 / A.cols()));
  // Mixture: the mean of the dense, random and dot-product logits; the synthesised map first, then its parts.
  AttentionTrace trace;
  const SynthesizerResult mix = synthesizer_attention(x, w, SynthesizerKind::Mixture, {.trace = &trace});
  const Matrix dot = (x * w.Wq) * (x * w.Wk).transpose() / std::sqrt(5.0f);
  const Matrix want = (synthesizer_attention(x, w, SynthesizerKind::Dense).logits + w.R + dot) / 3.0f;
  EXPECT_LT((mix.logits - want).cwiseAbs().maxCoeff(), 1e-5f);
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(trace.maps()[0].name, "synthesised");
  EXPECT_EQ(trace.maps()[3].name, "dot product");
}

TEST(Linformer, LabRefusesKAboveTheTokenCountAndLabelsTheProjectedMap) {
  lab::LabRequest request{"", "the cat sat on the mat", {}};
  request.params.mechanism = lab::Mechanism::Linformer;
  request.params.rank = 7;
  const auto refused = lab::run_lab(request);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().reason,
            "k = 7 is more than the source's 6 tokens: Linformer projects the n keys to k <= n");
  request.params.rank = 3;
  const auto r = lab::run_lab(request);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->trace.size(), 3u);
  EXPECT_EQ(r->trace.maps()[0].col_labels, (Labels{"k0", "k1", "k2"}));
  EXPECT_EQ(r->trace.maps()[0].row_labels.size(), 6u);
  EXPECT_EQ(r->trace.maps()[1].col_labels.size(), 6u);
  EXPECT_TRUE(r->notes.front().starts_with("|P E - A| / |A| at k = 3: ")) << r->notes.front();
  request.params.rank = 0;
  EXPECT_EQ(lab::run_lab(request).error().reason, "k must be between 1 and 2,048 (got 0)");
  request.params.mechanism = lab::Mechanism::CapsuleRouting;
  request.params.rank = 8;
  request.params.iterations = 0;
  EXPECT_EQ(lab::run_lab(request).error().reason, "routing iterations r must be between 1 and 20 (got 0)");
  // A W_ij per word and capsule: 32 capsules x 2,048 words at dimension 1,024 would be a billion draws.
  request.params.iterations = 3;
  request.params.classes = 32;
  request.params.dim = 1024;
  request.source.clear();
  for (int i = 0; i < 2048; ++i) request.source += "w" + std::to_string(i) + " ";
  const auto big = lab::run_lab(request);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().kind, ErrorKind::TooLarge);
  EXPECT_EQ(big.error().reason,
            "capsule routing draws a 16 x 1024 W_ij for each of 32 capsules and 2048 words: 1,073,741,824 weights, "
            "over the 67,108,864 the Lab draws; fewer classes, a smaller dimension or a shorter source");
}

// ---- Reformer

// Two buckets from one column of R: h = 0 where x R > 0 (argmax of [x R; -x R]), 1 where it is negative; the
// order is by bucket, then by position.
TEST(Reformer, BucketsAreTheArgmaxOfTheRotationAndTheOrderIsStable) {
  Matrix x(5, 2);
  x << 1, 0.1f, -1, 0.2f, 2, -0.3f, -0.5f, 1, 0.7f, 0.4f;
  ReformerWeights w{Matrix::Identity(2, 2), Matrix::Identity(2, 2), {Matrix(2, 1)}};
  w.rotations[0] << 1, 0;
  const ReformerResult r = reformer_attention(x, w, {.buckets = 2, .chunk = 2, .hashes = 1});
  ASSERT_EQ(r.rounds.size(), 1u);
  EXPECT_EQ(r.rounds[0].buckets, (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(r.rounds[0].order, (std::vector<Index>{0, 2, 4, 1, 3}));
}

// One chunk as long as the input and one round: every query sees every key, LSH is full attention and
// misses nothing. Self-attention is masked in both (-1e5), so the diagonal is zero.
TEST(Reformer, OneChunkOverEverythingIsFullAttention) {
  const Matrix x = random_normal(9, 6, 11);
  const ReformerWeights w = random_reformer_weights(6, 4, 1, 12);
  const ReformerResult r = reformer_attention(x, w, {.buckets = 4, .chunk = 9, .hashes = 1});
  EXPECT_LT((r.weights - r.full).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT(r.missed.cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_LT(r.weights.diagonal().cwiseAbs().maxCoeff(), 1e-30f);
}

TEST(Reformer, QueriesSeeOnlyTheirChunkAndTheOneBefore) {
  const Index n = 23;
  const int m = 3;
  const Matrix x = random_normal(n, 8, 21);
  AttentionTrace trace;
  const ReformerResult r = reformer_attention(x, random_reformer_weights(8, 6, 2, 22),
                                              {.buckets = 6, .chunk = m, .hashes = 2}, {.trace = &trace});
  Matrix allowed = Matrix::Zero(n, n);
  for (const LshRound& round : r.rounds) {
    ASSERT_EQ(round.order.size(), static_cast<std::size_t>(n));
    for (Index s = 0; s < n; ++s) {
      for (Index t = 0; t < n; ++t) {
        if (t / m == s / m || t / m == s / m - 1) allowed(round.order[s], round.order[t]) = 1;
      }
    }
  }
  Matrix seen_full = Matrix::Zero(n, 1);
  for (Index i = 0; i < n; ++i) {
    EXPECT_NEAR(r.weights.row(i).sum(), 1.0f, 1e-5f);
    EXPECT_EQ(r.weights(i, i), 0.0f) << "self, query " << i;
    float missed = 0;
    for (Index j = 0; j < n; ++j) {
      if (allowed(i, j) == 0) {
        EXPECT_EQ(r.weights(i, j), 0.0f) << i << " -> " << j;
        missed += r.full(i, j);
      }
    }
    EXPECT_NEAR(r.missed(i), missed, 1e-6f);
  }
  EXPECT_GT(r.missed.maxCoeff(), 0.0f);  // 23 tokens in chunks of 3: some keys are out of sight
  // LSH attention, full attention, then one sorted map per round with the chunk band on its diagonal.
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(trace.maps()[2].name, "sorted by bucket \u00b7 round 0");
  const Matrix& sorted = trace.maps()[3].weights;
  for (Index s = 0; s < n; ++s) {
    for (Index t = 0; t < n; ++t) {
      if (t / m > s / m || t / m < s / m - 1) {
        EXPECT_EQ(sorted(s, t), 0.0f);
      }
    }
    EXPECT_NEAR(sorted.row(s).sum(), 1.0f, 1e-5f);
  }
}

// A query alone in the first chunk (m = 1) sees only itself: that round gives it all its weight on itself
// with log-sum-exp -1e5, so the other round decides.
TEST(Reformer, SelfOnlyWhenNothingElseIsInSight) {
  const Matrix x = random_normal(4, 4, 31);
  const ReformerWeights w = random_reformer_weights(4, 2, 1, 32);
  const ReformerResult r = reformer_attention(x, w, {.buckets = 2, .chunk = 1, .hashes = 1});
  const Index first = r.rounds[0].order[0];
  EXPECT_FLOAT_EQ(r.weights(first, first), 1.0f);
  EXPECT_FLOAT_EQ(r.rounds[0].lse(first), kReformerSelfLogit);
}

TEST(Reformer, LabRefusesBadCountsAndReadsLongSources) {
  lab::LabRequest request;
  request.params.mechanism = lab::Mechanism::Reformer;
  request.source = "one two three four five six seven eight nine ten";
  request.params.buckets = 0;
  EXPECT_EQ(lab::run_lab(request).error().reason, "LSH buckets must be between 2 and 1,024 (got 0)");
  request.params.buckets = 5;
  EXPECT_EQ(lab::run_lab(request).error().reason,
            "LSH buckets must be even: h(x) = argmax([x R; -x R]) has two buckets per column of R (buckets = 5)");
  request.params.buckets = 4;
  request.params.chunk = 0;
  EXPECT_EQ(lab::run_lab(request).error().reason, "the LSH chunk width m must be between 1 and 8,192 (got 0)");
  request.params.chunk = 4;
  const auto r = lab::run_lab(request);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->trace.size(), 4u);
  EXPECT_TRUE(r->notes.front().starts_with("attention mass LSH misses")) << r->notes.front();
  EXPECT_EQ(r->trace.maps()[2].row_labels.size(), 10u);
  EXPECT_NE(r->trace.maps()[2].row_labels[0].find(" \u00b7 b"), std::string::npos);
  // 3,000 words: past the 2,048 of the other mechanisms, within the 8,192 of the efficient ones.
  request.source.clear();
  for (int i = 0; i < 3000; ++i) request.source += "w" + std::to_string(i % 97) + " ";
  const auto longer = lab::run_lab(request);
  ASSERT_TRUE(longer) << longer.error().message();
  EXPECT_TRUE(longer->warnings.empty());
  EXPECT_EQ(longer->source_tokens.size(), 3000u);
  EXPECT_EQ(lab::max_tokens(lab::Mechanism::Global), lab::kMaxTokens);
}

}  // namespace
}  // namespace attn

// Issue 41: a view opens on a map that shows the mechanism. Routing's first iteration is uniform (every coupling
// 1/classes) by definition: the run opens on its last, which is not; Transformer-XL's first segment has no memory:
// the run opens on the second segment's first layer, whose columns begin with the memory.
TEST(LabOpeningMap, RoutingOpensOnItsLastIterationAndXLOnASegmentWithMemory) {
  lab::LabRequest request;
  request.query = std::string(lab::kDefaultQuery);
  request.source = std::string(lab::kDefaultSource);
  request.params.mechanism = lab::Mechanism::CapsuleRouting;
  request.params.iterations = 3;
  const auto routing = lab::run_lab(request);
  ASSERT_TRUE(routing) << routing.error().message();
  ASSERT_EQ(routing->trace.size(), 3u);
  EXPECT_EQ(routing->opening_map, 2u);
  EXPECT_EQ(routing->trace.maps()[routing->opening_map].name, "iteration 2");
  const Matrix& first = routing->trace.maps()[0].weights;
  const Matrix& last = routing->trace.maps()[routing->opening_map].weights;
  EXPECT_LT((first.array() - first(0, 0)).abs().maxCoeff(), 1e-12);  // uniform
  EXPECT_GT((last.array() - last(0, 0)).abs().maxCoeff(), 1e-3);     // routed

  request.params.mechanism = lab::Mechanism::TransformerXL;
  request.params.segment = 3;
  request.params.layers = 2;
  const auto xl = lab::run_lab(request);
  ASSERT_TRUE(xl) << xl.error().message();
  ASSERT_GT(xl->trace.size(), 10u);
  EXPECT_EQ(xl->opening_map, 10u);  // five maps (the attention and its four terms) per layer and segment
  const auto& opened = xl->trace.maps()[xl->opening_map];
  EXPECT_EQ(opened.name, "attention \u00b7 layer 0 \u00b7 segment 1");
  EXPECT_TRUE(opened.col_labels.front().starts_with("[m] ")) << opened.col_labels.front();
  EXPECT_FALSE(xl->trace.maps()[0].col_labels.front().starts_with("[m] "));

  request.params.mechanism = lab::Mechanism::MultiHead;
  const auto heads = lab::run_lab(request);
  ASSERT_TRUE(heads);
  EXPECT_EQ(heads->opening_map, 0u);
}
