// Score functions and global attention (Luong / Bahdanau / Vaswani scores) against torch formulas.
#include "cases.h"
#include "fixture.h"

#include "attn/mechanisms/attention.h"
#include "attn/mechanisms/normalise.h"
#include "attn/mechanisms/scores.h"

#include <gtest/gtest.h>

#include <optional>

namespace attn::parity {
namespace {

// nullopt for "location", which has no ScoreKind (it takes no keys).
std::optional<ScoreKind> score_kind(const Fixture& fx) {
  const std::string s = fx.text("score");
  if (s == "dot") return ScoreKind::Dot;
  if (s == "scaled_dot") return ScoreKind::ScaledDot;
  if (s == "general") return ScoreKind::General;
  if (s == "concat") return ScoreKind::Concat;
  if (s == "additive") return ScoreKind::Additive;
  if (s == "cosine") return ScoreKind::Cosine;
  if (s == "location") return std::nullopt;
  throw FixtureError(fx.path().string() + ": unknown score " + s);
}

ScoreWeights score_weights(const Fixture& fx, std::optional<ScoreKind> kind, Index dq, Index dk) {
  ScoreWeights w;
  const Index da = fx.integer("da");
  if (!kind) {
    return w;
  }
  switch (*kind) {
    case ScoreKind::General: w.W = fx.input("W", dq, dk); break;
    case ScoreKind::Additive:
      w.W = fx.input("W", da, dq);
      w.U = fx.input("U", da, dk);
      w.v = fx.input_vector("v", da);
      break;
    case ScoreKind::Concat:
      w.W = fx.input("W", da, dq + dk);
      w.v = fx.input_vector("v", da);
      break;
    case ScoreKind::Dot:
    case ScoreKind::ScaledDot:
    case ScoreKind::Cosine: break;
  }
  return w;
}

class ScoreParity : public ::testing::TestWithParam<std::string> {};

TEST_P(ScoreParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "score");
  const Matrix q = fx.input("q");
  const Matrix k = fx.input("k");
  const Matrix expected = fx.expected("scores", q.rows(), k.rows());
  const std::optional<ScoreKind> kind = score_kind(fx);
  if (!kind) {
    const Matrix W = fx.input("W", k.rows(), q.cols());
    EXPECT_TRUE(all_near(expected, location_score(q, W))) << "location_score";
    return;
  }
  const ScoreWeights w = score_weights(fx, kind, q.cols(), k.cols());
  Matrix direct;
  switch (*kind) {
    case ScoreKind::Dot: direct = dot_score(q, k); break;
    case ScoreKind::ScaledDot: direct = scaled_dot_score(q, k); break;
    case ScoreKind::General: direct = general_score(q, k, w.W); break;
    case ScoreKind::Concat: direct = concat_score(q, k, w.W, w.v); break;
    case ScoreKind::Additive: direct = additive_score(q, k, w.W, w.U, w.v); break;
    case ScoreKind::Cosine: direct = cosine_score(q, k); break;
  }
  EXPECT_TRUE(all_near(expected, direct)) << to_string(*kind) << " (direct call)";
  EXPECT_TRUE(all_near(expected, score(*kind, q, k, w))) << to_string(*kind) << " (score dispatch)";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ScoreParity, ::testing::ValuesIn(kScoreCases), CaseName());

class GlobalAttentionParity : public ::testing::TestWithParam<std::string> {};

TEST_P(GlobalAttentionParity, MatchesTorch) {
  const Fixture fx = Fixture::load(GetParam());
  ASSERT_EQ(fx.kind(), "global_attention");
  const Matrix q = fx.input("q");
  const Matrix k = fx.input("k", kAny, q.cols());
  const Matrix v = fx.input("values", k.rows(), kAny);
  const std::optional<ScoreKind> kind = score_kind(fx);
  ASSERT_TRUE(kind.has_value());
  const ScoreWeights w = score_weights(fx, kind, q.cols(), k.cols());

  GlobalParams params;
  params.score = *kind;
  params.temperature = static_cast<float>(fx.number("temperature"));
  const std::string normaliser = fx.text("normaliser");
  ASSERT_TRUE(normaliser == "softmax" || normaliser == "sparsemax") << normaliser;
  params.normaliser = normaliser == "softmax" ? Normaliser::Softmax : Normaliser::Sparsemax;
  const std::string mask_kind = fx.text("mask");
  ASSERT_TRUE(mask_kind == "none" || mask_kind == "causal") << mask_kind;
  const Matrix mask = mask_kind == "causal" ? causal_mask(q.rows(), k.rows()) : Matrix{};

  EXPECT_TRUE(all_near(fx.expected("scores", q.rows(), k.rows()), score(*kind, q, k, w))) << "scores";

  AttentionTrace trace;
  TraceTag tag;
  tag.trace = &trace;
  const AttentionResult r = global_attention(q, k, v, w, params, mask, tag);
  const Matrix expected_weights = fx.expected("weights", q.rows(), k.rows());
  EXPECT_TRUE(all_near(expected_weights, r.weights)) << "weights";
  EXPECT_TRUE(all_near(fx.expected("context", q.rows(), v.cols()), r.context)) << "context";
  // The weights the trace shows are the weights the mechanism used.
  ASSERT_FALSE(trace.empty()) << "global_attention recorded nothing into the trace";
  EXPECT_TRUE(all_near(expected_weights, trace.maps().front().weights)) << "trace";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GlobalAttentionParity, ::testing::ValuesIn(kGlobalAttentionCases), CaseName());

}  // namespace
}  // namespace attn::parity
